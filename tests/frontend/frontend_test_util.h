// Helpers shared by the frontend tests.
#pragma once
#include <gtest/gtest.h>

#include <ostream>
#include <string>

#include "frontend/tensor.h"
#include "ir/printer.h"

namespace doorbell {

inline void PrintTo(const DType& d, std::ostream* os) { *os << d.name(); }

}  // namespace doorbell

namespace doorbell::testing {

// The message of the std::invalid_argument that f throws; a test failure (and "") when it throws nothing.
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected std::invalid_argument, none was thrown";
  return "";
}

inline IntTuple shape_of(const Tensor& t) { return t.shape(); }

}  // namespace doorbell::testing
