// The NV backend's registration (hcq/backend.h): an NVIDIA GPU driven through RM and UVM (hcq/nv/nv_device.h), with
// PTX kernels assembled by ptxas (compiler/gpu/ptx_target.h). "NV" is the driver's first GPU, "NV:1" the second.
// MOCKGPU=1 opens the emulated driver and GPU of mockgpu/nv instead.
#include <cstdlib>
#include <string>

#include "hcq/backend.h"
#include "hcq/nv/nv_device.h"

namespace doorbell {
namespace {

[[maybe_unused]] const bool kRegistered = register_backend({
    .prefix = "NV",
    .description = "an NVIDIA GPU through driver 580 (RM + UVM ioctls): PTX kernels assembled by ptxas, QMD launches",
    .renderers = {"PTX"},
    .open = [](const DeviceName& name) -> std::unique_ptr<Device> {
      const char* mock = std::getenv("MOCKGPU");
      return nv::NvDevice::open(mock != nullptr && std::string(mock) == "1", name.index);
    },
});

}  // namespace
}  // namespace doorbell
