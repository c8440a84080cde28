// Helpers shared by the frontend tests.
#pragma once
#include <gtest/gtest.h>

#include <ostream>
#include <string>

#include "frontend/tensor.h"
#include "ir/printer.h"
#include "tests/common/error_of.h"

namespace doorbell {

inline void PrintTo(const DType& d, std::ostream* os) { *os << d.name(); }

}  // namespace doorbell

namespace doorbell::testing {

inline IntTuple shape_of(const Tensor& t) { return t.shape(); }

}  // namespace doorbell::testing
