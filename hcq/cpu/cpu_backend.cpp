// The CPU backend's registration (hcq/backend.h): the CPU HCQ device (hcq/cpu/cpu_device.h) with a worker per core,
// compiling with the C target (compiler/cpu/cpu_target.h) and loading ELF objects.
#include <stdexcept>

#include "hcq/backend.h"
#include "hcq/cpu/cpu_device.h"

namespace doorbell {
namespace {

[[maybe_unused]] const bool kRegistered = register_backend({
    .prefix = "CPU",
    .description = "this machine's cores: C kernels compiled by clang, a worker thread per core",
    .renderers = {"C"},
    .open = [](const DeviceName& name) -> std::unique_ptr<Device> {
      if (name.index != 0)
        throw std::invalid_argument("device " + name.canonical() + ": the CPU backend has one device, CPU; expected no index");
      return std::make_unique<CpuDevice>(CpuDeviceOptions{}, name.canonical());
    },
});

}  // namespace
}  // namespace doorbell
