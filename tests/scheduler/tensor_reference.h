// An independent oracle for scheduler tests: evaluates a tensor-level UOp graph directly on dense host arrays
// (movement ops by index mapping, elementwise ops with exec_alu), with no rangeify, kernels or index math.
// Evaluate before running a schedule: assigns in the schedule overwrite the buffers this reads.
#pragma once
#include <vector>

#include "ir/uop.h"

namespace doorbell::testing {

struct Dense {
  IntTuple shape;
  DType dtype;
  std::vector<ConstValue> data;  // row-major
};

Dense reference_eval(const UOp& tensor_value);
std::vector<double> as_doubles(const Dense& d);

}  // namespace doorbell::testing
