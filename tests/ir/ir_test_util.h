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

namespace doorbell::testing {

// The message of the exception of type E that f throws; a test failure (and "") when it throws nothing.
template <class E, class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected an exception, none was thrown";
  return "";
}

}  // namespace doorbell::testing
