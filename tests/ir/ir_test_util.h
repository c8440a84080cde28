// Helpers shared by the IR unit tests.
#pragma once
#include <gtest/gtest.h>

#include <ostream>
#include <string>

#include "ir/printer.h"

namespace doorbell {

// Readable failure messages: gtest finds these by argument-dependent lookup.
inline void PrintTo(const DType& d, std::ostream* os) { *os << d.name(); }
inline void PrintTo(const UOp& u, std::ostream* os) { *os << (u ? render_expr(u) : std::string("null UOp")); }

}  // namespace doorbell

#include "tests/common/error_of.h"
