#include "hcq/devices.h"

#include <cstdlib>
#include <stdexcept>

#include "hcq/cpu/cpu_device.h"
#include "hcq/nv/nv_device.h"

namespace doorbell {

Device& device(const std::string& name) {
  if (name == "CPU") {
    static CpuDevice* cpu = new CpuDevice();  // lives until the process ends: kernels may run until then
    return *cpu;
  }
  if (name == "NV") {
    // On the "nvidia" driver's seam: the kernel's, or with MOCKGPU=1 the emulator the program installed.
    static nv::NvDevice* nv = nv::NvDevice::open().release();  // lives until exit
    return *nv;
  }
  throw std::invalid_argument("device: no device named '" + name + "'; expected CPU or NV (AMD arrives with its issue)");
}

}  // namespace doorbell
