// The variables a kernel takes (PARAM with AddrSpace::ALU, UOp::variable), each once, ordered by name: the one order
// of its scalar parameters after its buffers, shared by the scheduler (a CALL's arguments after its buffers), the
// compiler (ProgramInfo::vars) and every renderer (its parameter list).
#pragma once
#include <vector>

#include "ir/uop.h"

namespace doorbell {

// Throws std::invalid_argument when two different variables of one kernel share a name.
std::vector<UOp> kernel_variables(const UOp& sink);

}  // namespace doorbell
