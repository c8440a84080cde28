// x86 instruction selection of scalar kernels (compiler/x86/isel.h): the machine code's shape (gated loads branch
// around the load, compares feeding only a WHERE become cmp + cmov, split loops divide with a 128-bit product, ...).
#include <gtest/gtest.h>

#include <string>

#include "compiler/cpu/cpu_target.h"
#include "compiler/linearize.h"
#include "compiler/x86/isel.h"
#include "tests/compiler/compiled_kernel_util.h"

namespace doorbell::x86 {
namespace {

using namespace test;  // NOLINT: the compiler tests' helpers

std::string listing(const MachineFunction& mf);

// The one kernel `out` schedules into, lowered without the optimizer (scalar values) and selected.
MachineFunction select(const Tensor& out, std::vector<Statement>* statements_out = nullptr) {
  std::vector<UOp> sinks = kernel_sinks({out});
  EXPECT_EQ(sinks.size(), 1u);
  LoweredKernel k = cpu_c_target().lower(sinks.at(0), false);
  std::vector<Statement> st = linearize(k.sink);
  if (statements_out) *statements_out = st;
  IselOptions o;
  MachineFunction mf = select_instructions("k", k, st, o);
  if (std::getenv("ISEL_DUMP")) std::cout << listing(mf) << "\n";  // for debugging: the MIR of every kernel
  return mf;
}

std::string listing(const MachineFunction& mf) {
  std::string s;
  for (const Inst& i : mf.code) {
    s += std::string(mnemonic_name(i.op));
    for (int k = 0; k < i.n; k++) {
      const Operand& o = i.o[k];
      s += k ? ", " : " ";
      switch (o.kind) {
        case Operand::Kind::REG: s += (o.reg.virt ? "%" : "$") + std::to_string(o.reg.num) + ":" + std::to_string(o.reg.bits); break;
        case Operand::Kind::IMM: s += std::to_string(o.imm); break;
        case Operand::Kind::MEM: s += "[mem" + std::to_string(o.mem.bits) + "]"; break;
        case Operand::Kind::LABEL: s += ".L" + std::to_string(o.imm); break;
        case Operand::Kind::SYMBOL: s += "sym"; break;
        default: s += "?";
      }
    }
    s += i.tied ? " (tied)\n" : "\n";
  }
  return s;
}

int count(const MachineFunction& mf, Mn op) {
  int n = 0;
  for (const Inst& i : mf.code) n += i.op == op;
  return n;
}

TEST(IselScalar, ElementwiseAddLoadsAddsAndStoresInOneLoop) {
  NooptScope noopt(true);
  Tensor a(std::vector<float>{1, 2, 3, 4}), b(std::vector<float>{5, 6, 7, 8});
  MachineFunction mf = select(a + b);
  EXPECT_EQ(count(mf, Mn::vaddss), 1) << listing(mf);
  EXPECT_EQ(count(mf, Mn::vmovss), 3) << listing(mf);
  EXPECT_EQ(count(mf, Mn::jl), 1) << listing(mf);
}

}  // namespace
}  // namespace doorbell::x86
