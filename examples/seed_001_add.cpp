// Seed 001: a Tensor program describes values; tolist() runs it.
//   a = Tensor([1, 2, 3, 4]).realize(); b = Tensor([10, 20, 30, 40]).realize(); c = a + b
//   c.uop.op is Ops.ADD; c.tolist() == [11, 22, 33, 44]
#include <cstdio>
#include <stdexcept>

#include "frontend/tensor.h"

using namespace doorbell;

int main() {
  Tensor a = Tensor({1.f, 2.f, 3.f, 4.f}).realize();
  Tensor b = Tensor({10.f, 20.f, 30.f, 40.f}).realize();
  Tensor c = a + b;
  if (c.uop().op() != Ops::ADD) throw std::runtime_error("seed 001: c's UOp is not an ADD");
  std::vector<float> got = c.tolist<float>();
  if (got != std::vector<float>{11, 22, 33, 44}) throw std::runtime_error("seed 001: c.tolist() is not [11, 22, 33, 44]");
  std::printf("[%g, %g, %g, %g]\n", got[0], got[1], got[2], got[3]);
}
