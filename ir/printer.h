// Printers for DEBUG output and test failures.
#pragma once
#include <string>

#include "ir/uop.h"

namespace doorbell {

// One line per node in toposort order, shared nodes printed once:
//   %2 = ADD int32 (%0, %1)
std::string print_graph(const UOp& u);
// One node without its sources: ADD int32 (2 srcs), CONST int32 arg=3
std::string print_node(const UOp& u);
// An infix expression for scalar math (index expressions, test failures): ((x*4)+(y//2))
// Non-ALU nodes fall back to OP(...).
std::string render_expr(const UOp& u);

}  // namespace doorbell
