// Seed 002: a schedule becomes commands on a device; synchronize delimits when its work is done.
//   x = Tensor([2, 4, 6]).realize(); y = (x + 3).realize(); Device[y.device].synchronize(); y.tolist() == [5, 7, 9]
// Here realize runs the compiled kernels on the CPU HCQ device (compile_linear + run_linear).
#include <cstdio>
#include <stdexcept>

#include "frontend/tensor.h"
#include "hcq/compile_linear.h"
#include "hcq/devices.h"
#include "hcq/run_linear.h"

using namespace doorbell;

int main() {
  Tensor x = Tensor({2.f, 4.f, 6.f}).realize();
  Tensor y = x + 3;
  run_linear(compile_linear(y.schedule_linear()));
  device(y.device()).synchronize();
  std::vector<float> got = y.tolist<float>();
  if (got != std::vector<float>{5, 7, 9}) throw std::runtime_error("seed 002: y.tolist() is not [5, 7, 9]");
  std::printf("[%g, %g, %g]\n", got[0], got[1], got[2]);
}
