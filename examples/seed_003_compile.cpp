// Seed 003: code generation turns each kernel SINK into a PROGRAM with SINK, LINEAR, SOURCE and BINARY.
//   x = Tensor([1, 2, 3]).realize(); y = x * 3 + 1; linear = y.schedule_linear(); compiled = compile_linear(linear)
//   print each PROGRAM's SOURCE; run_linear(compiled); y.tolist() == [4, 7, 10]
#include <cstdio>
#include <stdexcept>

#include "frontend/tensor.h"
#include "hcq/compile_linear.h"
#include "hcq/run_linear.h"

using namespace doorbell;

int main() {
  Tensor x = Tensor({1.f, 2.f, 3.f}).realize();
  Tensor y = x * 3 + 1;
  UOp linear = y.schedule_linear();
  UOp compiled = compile_linear(linear);
  int programs = 0;
  for (const UOp& u : compiled.toposort()) {
    if (u.op() != Ops::PROGRAM) continue;
    programs++;
    const UOp* source = nullptr;
    for (const UOp& s : u.src())
      if (s.op() == Ops::SOURCE) source = &s;
    if (!source) throw std::runtime_error("seed 003: a PROGRAM has no SOURCE");
    std::printf("%s\n", source->arg_as<std::string>().c_str());
  }
  if (programs == 0) throw std::runtime_error("seed 003: compile_linear produced no PROGRAM");
  run_linear(compiled);
  std::vector<float> got = y.tolist<float>();
  if (got != std::vector<float>{4, 7, 10}) throw std::runtime_error("seed 003: y.tolist() is not [4, 7, 10]");
  std::printf("[%g, %g, %g]\n", got[0], got[1], got[2]);
}
