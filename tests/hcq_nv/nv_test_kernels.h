// Small elementwise kernels compiled for an NV device and loaded on it, with their launch dims, for the NV queue
// tests (bound queues, submission order).
#pragma once

#include <array>
#include <cstring>
#include <vector>

#include "compiler/program.h"
#include "frontend/tensor.h"
#include "hcq/nv/nv_device.h"

namespace doorbell::nv::test {

struct NvKernel {
  const LoadedProgram* program;
  std::array<uint32_t, 3> grid, block;
};

// `t`'s one kernel (out, in) compiled for d's target and loaded on d.
inline NvKernel load_kernel(NvDevice& d, const Tensor& t) {
  UOp call = t.schedule_linear().src(0);
  UOp program = compile_program(call, d.target()).program;
  const ProgramInfo& info = program_info(program);
  auto u32 = [](const std::array<int64_t, 3>& v) {
    return std::array<uint32_t, 3>{static_cast<uint32_t>(v[0]), static_cast<uint32_t>(v[1]), static_cast<uint32_t>(v[2])};
  };
  return {&d.program(program), u32(info.global_size), u32(info.local_size)};
}

// Video memory holding `values`.
inline NvMemory floats(NvDevice& d, const std::vector<float>& values) {
  NvMemory m = d.alloc(values.size() * 4);
  std::memcpy(m.cpu, values.data(), values.size() * 4);
  return m;
}

inline float float_at(const NvMemory& m, size_t i) { return reinterpret_cast<const float*>(m.cpu)[i]; }

}  // namespace doorbell::nv::test
