// The AMD backend's registration (hcq/backend.h): an AMD GPU driven through KFD user-mode queues
// (hcq/amd/amd_device.h), with kernels rendered as LLVM IR and compiled by LLVM 19 (compiler/gpu/amdgpu_target.h).
// "AMD" is the KFD topology's first GPU, "AMD:1" the second. With MOCKGPU=1 the "amd" driver's seam is the emulator
// the program installed (kernel-interface/driver_seams.h).

#include "hcq/amd/amd_device.h"
#include "hcq/backend.h"

namespace doorbell {
namespace {

[[maybe_unused]] const bool kRegistered = register_backend({
    .prefix = "AMD",
    .description = "an AMD GPU through KFD (PM4 compute and SDMA user queues): LLVM IR kernels compiled by LLVM 19",
    .renderers = {"LLVM"},
    .open = [](const DeviceName& name) -> std::unique_ptr<Device> { return amd::AmdDevice::open(name.index); },
});

}  // namespace
}  // namespace doorbell
