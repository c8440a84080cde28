// The CPU backend's registration (hcq/backend.h): the CPU HCQ device (hcq/cpu/cpu_device.h) with a worker per core,
// loading ELF objects, compiled by one of its targets by the device name's renderer:
//   X86 (the default): our own instruction selection, register allocation and encoder, in process
//     (compiler/x86/x86_target.h), with clang for any kernel it refuses (DOORBELL_X86_FALLBACK=0: none, an error);
//   CLANG: C source compiled by clang (compiler/cpu/cpu_target.h).
// X86 became the default once its kernels met issue 18's targets (compile >= 100x faster than clang; kernel-only
// time within 1.2x on memory-bound kernels, 2x on matmul: `doorbell bench`'s "x86 backend vs clang" section).
#include <stdexcept>

#include "compiler/cpu/cpu_target.h"
#include "compiler/x86/x86_target.h"
#include "hcq/backend.h"
#include "hcq/cpu/cpu_device.h"

namespace doorbell {
namespace {

[[maybe_unused]] const bool kRegistered = register_backend({
    .prefix = "CPU",
    .description = "this machine's cores, a worker thread per core: x86-64 machine code of our own (CPU, CPU:X86; clang "
                   "for a kernel it cannot express) or C compiled by clang (CPU:CLANG)",
    .renderers = {"X86", "CLANG"},
    .open = [](const DeviceName& name) -> std::unique_ptr<Device> {
      if (name.index != 0)
        throw std::invalid_argument("device " + name.canonical() + ": the CPU backend has one device, CPU; expected no index");
      CpuDeviceOptions options;
      options.target = name.renderer != "X86" ? &cpu_c_target() : x86_fallback_enabled() ? &cpu_x86_with_clang_fallback_target() : &cpu_x86_target();
      return std::make_unique<CpuDevice>(options, name.canonical());
    },
});

}  // namespace
}  // namespace doorbell
