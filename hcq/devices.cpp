#include "hcq/devices.h"

#include <stdexcept>

#include "hcq/cpu/cpu_device.h"

namespace doorbell {

Device& device(const std::string& name) {
  if (name == "CPU") {
    static CpuDevice* cpu = new CpuDevice();  // lives until the process ends: kernels may run until then
    return *cpu;
  }
  throw std::invalid_argument("device: no device named '" + name + "'; expected CPU (NV and AMD arrive with their issues)");
}

}  // namespace doorbell
