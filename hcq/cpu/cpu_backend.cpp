// The CPU backend's registration (hcq/backend.h): the CPU HCQ device (hcq/cpu/cpu_device.h) with a worker per core,
// loading ELF objects, compiled by one of its targets by the device name's renderer:
//   C (default) or CLANG: C source compiled by clang (compiler/cpu/cpu_target.h);
//   X86: our own instruction selection, register allocation and encoder, in process (compiler/x86/x86_target.h).
#include <stdexcept>

#include "compiler/cpu/cpu_target.h"
#include "compiler/x86/x86_target.h"
#include "hcq/backend.h"
#include "hcq/cpu/cpu_device.h"

namespace doorbell {
namespace {

[[maybe_unused]] const bool kRegistered = register_backend({
    .prefix = "CPU",
    .description = "this machine's cores, a worker thread per core: C kernels compiled by clang (CPU:C, CPU:CLANG) or "
                   "x86-64 machine code of our own (CPU:X86)",
    .renderers = {"C", "X86", "CLANG"},
    .open = [](const DeviceName& name) -> std::unique_ptr<Device> {
      if (name.index != 0)
        throw std::invalid_argument("device " + name.canonical() + ": the CPU backend has one device, CPU; expected no index");
      CpuDeviceOptions options;
      options.target = name.renderer == "X86" ? &cpu_x86_target() : &cpu_c_target();
      return std::make_unique<CpuDevice>(options, name.canonical());
    },
});

}  // namespace
}  // namespace doorbell
