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
    // MOCKGPU=1: the emulated driver and GPU of mockgpu/nv run the same packets in this process.
    static nv::NvDevice* nv = [] {
      const char* mock = std::getenv("MOCKGPU");
      return nv::NvDevice::open(mock != nullptr && std::string(mock) == "1").release();  // lives until exit
    }();
    return *nv;
  }
  throw std::invalid_argument("device: no device named '" + name + "'; expected CPU or NV (AMD arrives with its issue)");
}

}  // namespace doorbell
