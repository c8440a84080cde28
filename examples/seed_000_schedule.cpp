// Seed 000: a schedule answers when computations run and which values need storage.
//   x = Tensor([1, 2, 3]).realize(); y = (x + 1) * 2; linear = y.schedule_linear()
//   linear.op is Ops.LINEAR; every source is Ops.CALL; run_linear(linear); y.tolist() == [4, 6, 8]
#include <cstdio>
#include <stdexcept>

#include "frontend/tensor.h"
#include "hcq/run_linear.h"

using namespace doorbell;

int main() {
  Tensor x = Tensor({1.f, 2.f, 3.f}).realize();
  Tensor y = (x + 1) * 2;
  UOp linear = y.schedule_linear();
  if (linear.op() != Ops::LINEAR) throw std::runtime_error("seed 000: schedule_linear did not return a LINEAR");
  if (linear.src().empty()) throw std::runtime_error("seed 000: the LINEAR is empty");
  std::printf("[");
  for (const UOp& call : linear.src()) {
    if (call.op() != Ops::CALL) throw std::runtime_error("seed 000: a LINEAR source is not a CALL");
    std::printf("('%s', '%s') ", std::string(op_name(call.op())).c_str(), std::string(op_name(call.src(0).op())).c_str());
  }
  std::printf("]\n");
  run_linear(linear);
  std::vector<float> got = y.tolist<float>();
  if (got != std::vector<float>{4, 6, 8}) throw std::runtime_error("seed 000: y.tolist() is not [4, 6, 8]");
  std::printf("[%g, %g, %g]\n", got[0], got[1], got[2]);
}
