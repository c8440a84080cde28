// Modules the SPIR-V tests build: each is complete (spirv-val accepts it) and together they use every operand form
// of spirv_module.h (ids, words, 64-bit literals, strings with escapes, enumerants with parameters, masks with
// parameters, extended instructions) and every constant width.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "compiler/spirv/spirv_module.h"

namespace doorbell::testing {

// The kernel of spirv_kernel_abi.h in miniature: the push constant block's uint64 to a PhysicalStorageBuffer
// pointer, a buffer address loaded from it, sqrt(1.5f) stored there; a function variable made mid-function.
spirv::Module minimal_kernel();

// Constants at the edges of every scalar type (int8 -128, uint64 max, float -0, denormals, inf, NaN payloads, ...)
// and `random_floats` random bit patterns per float width from `seed`, in a module with an empty GLCompute kernel.
spirv::Module edge_constants(uint32_t seed = 1, int random_floats = 64);

// Workgroup memory and a barrier, a loop (OpLoopMerge, OpPhi, OpBranchConditional), a selection, subgroup ops,
// built-in inputs, bool, null and composite constants, names with quotes and backslashes.
spirv::Module control_flow_kernel();

// OpSwitch on a 64-bit and a 32-bit signed selector with negative case literals (two words and one word each).
spirv::Module switch_kernel();

// Every module above, with a name for messages.
struct NamedModule {
  std::string name;
  spirv::Module module;
};
std::vector<NamedModule> all_test_modules();

}  // namespace doorbell::testing
