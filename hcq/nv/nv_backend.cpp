// The NV backend's registration (hcq/backend.h): an NVIDIA GPU driven through RM and UVM (hcq/nv/nv_device.h), with
// PTX kernels assembled by ptxas (compiler/gpu/ptx_target.h). "NV" is the driver's first GPU, "NV:1" the second.
// With MOCKGPU=1 the "nvidia" driver's seam is the emulator the program installed (kernel-interface/driver_seams.h).

#include "hcq/backend.h"
#include "hcq/nv/nv_device.h"

namespace doorbell {
namespace {

[[maybe_unused]] const bool kRegistered = register_backend({
    .prefix = "NV",
    .description = "an NVIDIA GPU through driver 580 (RM + UVM ioctls): PTX kernels assembled by ptxas, QMD launches",
    .renderers = {"PTX"},
    .open = [](const DeviceName& name) -> std::unique_ptr<Device> { return nv::NvDevice::open(name.index); },
});

}  // namespace
}  // namespace doorbell
