// The calling convention of a compiled CPU kernel, shared by the C renderer (compiler/) and the CPU HCQ device
// (hcq/cpu). A kernel is a plain C function:
//   void name(void* const* buffers, const int64_t* scalars, int32_t core_id, int32_t core_count);
// buffers[i] is the base address of the buffer bound to PARAM slot i; scalars holds variable values (none yet);
// the kernel computes the share of its outermost loop that belongs to core_id of core_count workers, so one
// launch runs on every worker in parallel and the results do not depend on core_count.
#pragma once
#include <cstdint>

namespace doorbell {

using CpuKernelFn = void (*)(void* const* buffers, const int64_t* scalars, int32_t core_id, int32_t core_count);

}  // namespace doorbell
