// x86 instruction selection of scalar kernels (compiler/x86/isel.h): the machine code's shape (gated loads branch
// around the load, compares feeding only a WHERE become cmp + cmov, split loops divide with a 128-bit product, ...).
#include <set>
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

namespace doorbell::x86 {
namespace {

// Whether some instruction of `mf` lies between a jump to `label`'s target and the target (the branch skips it).
bool skipped_by_a_forward_branch(const MachineFunction& mf, Mn what) {
  for (size_t i = 0; i < mf.code.size(); i++) {
    const Inst& j = mf.code[i];
    if (j.op == Mn::jmp || j.op == Mn::LABEL || j.op == Mn::CALL_EXTERN || j.n != 1 || j.o[0].kind != Operand::Kind::LABEL) continue;
    for (size_t k = i + 1; k < mf.code.size(); k++) {
      if (mf.code[k].op == Mn::LABEL && mf.code[k].o[0].imm == j.o[0].imm) break;
      if (mf.code[k].op == what) return true;
    }
  }
  return false;
}

TEST(IselScalar, AGatedLoadBranchesAroundTheLoadAndStartsFromZero) {
  NooptScope noopt(true);
  Tensor a(std::vector<float>{1, 2, 3});
  MachineFunction mf = select(a.pad({{2, 1}}));
  EXPECT_TRUE(skipped_by_a_forward_branch(mf, Mn::vmovss)) << listing(mf);
}

TEST(IselScalar, AGateThatIsOneCompareIsReEmittedAtTheBranchAndTheSelect) {
  NooptScope noopt(true);
  Tensor a(std::vector<int32_t>{1, 2, 3});
  MachineFunction mf = select(a.pad({{0, 2}}));  // i < 3 gates the load and selects it
  EXPECT_TRUE(skipped_by_a_forward_branch(mf, Mn::mov)) << listing(mf);
  EXPECT_EQ(count(mf, Mn::setl), 0) << "the gate is never a 0/1 value\n" << listing(mf);
  EXPECT_EQ(count(mf, Mn::cmovl), 1) << listing(mf);
}

TEST(IselScalar, AnIntegerCompareReadOnlyByAWhereBecomesCmpAndCmov) {
  NooptScope noopt(true);
  Tensor a(std::vector<int32_t>{1, -2, 3}), b(std::vector<int32_t>{0, 5, 3});
  MachineFunction mf = select((a < b).where(a, b));
  EXPECT_EQ(count(mf, Mn::cmovl), 1) << listing(mf);
  EXPECT_EQ(count(mf, Mn::setl), 0) << listing(mf);
}

TEST(IselScalar, AFloatCompareReadOnlyByAWhereBecomesAMaskAndABlend) {
  NooptScope noopt(true);
  Tensor a(std::vector<float>{1, -2, 3}), b(std::vector<float>{0, 5, 3}), c(std::vector<float>{7, 8, 9});
  MachineFunction mf = select((a < b).where(a, c));
  EXPECT_EQ(count(mf, Mn::vcmpss), 1) << listing(mf);
  EXPECT_EQ(count(mf, Mn::vblendvps), 1) << listing(mf);
  EXPECT_EQ(count(mf, Mn::seta), 0) << listing(mf);
}

// MAXSS / MINSS give the ternary's answer (firmware-notes/x86-isel.md): no compare, no blend.
TEST(IselScalar, AWhereOfACompareOfItsOwnOperandsIsOneVmaxssOrVminss) {
  NooptScope noopt(true);
  Tensor a(std::vector<float>{1, -2, 3}), b(std::vector<float>{0, 5, 3});
  for (bool max : {true, false}) {
    MachineFunction mf = select(max ? (a < b).where(b, a) : (a < b).where(a, b));
    EXPECT_EQ(count(mf, Mn::vmaxss), max ? 1 : 0) << listing(mf);
    EXPECT_EQ(count(mf, Mn::vminss), max ? 0 : 1) << listing(mf);
    EXPECT_EQ(count(mf, Mn::vcmpss) + count(mf, Mn::vblendvps) + count(mf, Mn::vucomiss), 0) << listing(mf);
  }
  MachineFunction relu = select(a.relu());
  EXPECT_EQ(count(relu, Mn::vmaxss), 1) << listing(relu);
  EXPECT_EQ(count(relu, Mn::vcmpss) + count(relu, Mn::vblendvps), 0) << listing(relu);
}

TEST(IselScalar, ASplitLoopDividesItsRangeWithA128BitProduct) {
  NooptScope noopt(true);
  Tensor a(std::vector<float>{1, 2, 3, 4});
  MachineFunction mf = select(a * 2);
  EXPECT_EQ(count(mf, Mn::imul), 2) << "lo and hi: one-operand imul each\n" << listing(mf);
  EXPECT_EQ(count(mf, Mn::idiv), 2) << listing(mf);
  int one_operand = 0;
  for (const Inst& i : mf.code) one_operand += i.op == Mn::imul && i.n == 1 && !i.o[0].reg.virt;
  EXPECT_EQ(one_operand, 2);
  EXPECT_EQ(count(mf, Mn::vmulss), 1) << listing(mf);
}

TEST(IselScalar, AKernelWithoutASplitLoopReturnsOnEveryCoreButTheFirst) {
  NooptScope noopt(true);
  Tensor a(std::vector<float>{1, 2, 3, 4});
  MachineFunction mf = select(a.sum());
  ASSERT_GE(mf.code.size(), 2u);
  bool guard = false;
  for (size_t i = 0; i + 1 < mf.code.size(); i++) {
    const Inst &c = mf.code[i], &j = mf.code[i + 1];
    guard |= c.op == Mn::cmp && c.o[0].kind == Operand::Kind::MEM && c.o[0].mem.kind == MemBase::ARG && c.o[0].mem.slot == 2 &&
             c.o[1].kind == Operand::Kind::IMM && c.o[1].imm == 0 && j.op == Mn::jne;
  }
  EXPECT_TRUE(guard) << listing(mf);
  EXPECT_EQ(count(mf, Mn::idiv), 0) << listing(mf);
  EXPECT_EQ(count(mf, Mn::vaddss), 1) << "the accumulator's update\n" << listing(mf);
}

TEST(IselScalar, AConstantOffsetBecomesTheDisplacement) {
  NooptScope noopt(true);
  Tensor a(std::vector<float>{1, 2, 3, 4, 5, 6});
  MachineFunction mf = select(a.shrink({{2, 5}}) + 1);
  bool disp8 = false;
  for (const Inst& i : mf.code)
    if (i.op == Mn::vmovss && i.o[1].kind == Operand::Kind::MEM && i.o[1].mem.kind == MemBase::REG)
      disp8 |= i.o[1].mem.disp == 8 && i.o[1].mem.has_index && i.o[1].mem.scale == 4;
  EXPECT_TRUE(disp8) << "a[i + 2]: [base + 4*i + 8]\n" << listing(mf);
  int adds = 0;
  for (const Inst& i : mf.code) adds += i.op == Mn::add && i.o[0].reg.virt;
  EXPECT_EQ(adds, 1) << "only the loop counter's increment: the + 2 is folded\n" << listing(mf);
}

TEST(IselScalar, TheRowsOfAMatmulTileShareOneIndexRegisterWithRowStrideDisplacements) {
  NooptScope noopt(false);  // the CPU optimizer's matmul tile reads rows (r * t + c) * 64 of a for c = 0..t-1
  Tensor a(std::vector<float>(64 * 64, 1.0f), {64, 64}), b(std::vector<float>(64 * 64, 2.0f), {64, 64});
  std::vector<UOp> sinks = kernel_sinks({a.matmul(b)});
  ASSERT_EQ(sinks.size(), 1u);
  LoweredKernel k = cpu_c_target().lower(sinks.at(0), true);
  IselOptions o;
  o.vector_lanes = cpu_c_target().options().vector_lanes;
  MachineFunction mf = select_instructions("k", k, linearize(k.sink), o);
  std::set<int32_t> disps;
  for (const Inst& i : mf.code)
    if (i.op == Mn::vbroadcastss && i.o[1].kind == Operand::Kind::MEM && i.o[1].mem.has_index) disps.insert(i.o[1].mem.disp);
  std::string seen;
  for (int32_t d : disps) seen += " " + std::to_string(d);
  // one register for the tile's rows: row c of it at c * 64 floats (256 bytes) from row 0
  ASSERT_GE(disps.size(), 2u) << "displacements:" << seen << "\n" << listing(mf);
  int32_t c = 0;
  for (int32_t d : disps) EXPECT_EQ(d, 256 * c++) << "displacements:" << seen;
}

TEST(IselScalar, SignedDivisionUsesIdivOnRaxAndTheRemainderFromRdx) {
  NooptScope noopt(true);
  Tensor a(std::vector<int32_t>{7, -7, 9}), b(std::vector<int32_t>{2, 3, -4});
  MachineFunction mf = select(a.mod(b));
  EXPECT_GE(count(mf, Mn::cdq), 1) << listing(mf);
  EXPECT_GE(count(mf, Mn::idiv), 3) << "two for the split bounds, one or more for the op\n" << listing(mf);
}

TEST(IselScalar, ABarrierIsRejectedNamingTheNode) {
  NooptScope noopt(true);
  Tensor a(std::vector<float>{1, 2});
  std::vector<UOp> sinks = kernel_sinks({a + 1});
  LoweredKernel k = cpu_c_target().lower(sinks.at(0), false);
  std::vector<Statement> st = linearize(k.sink);
  st.insert(st.begin(), Statement{StatementKind::BARRIER, UOp::make(Ops::BARRIER, dtypes::void_, {})});
  try {
    select_instructions("k", k, st, IselOptions{});
    FAIL() << "a BARRIER was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("x86 isel: a BARRIER needs a GPU thread block: "), std::string::npos) << e.what();
  }
}

TEST(IselScalar, AnOpWithoutASelectionIsRejectedNamingItAndTheNextKernelStillSelects) {
  UOp out = UOp::make(Ops::PARAM, dtypes::int32, {}, ParamArg{0, AddrSpace::GLOBAL, "", 0, 3});
  UOp r = UOp::range(4, 0);
  UOp ri = r.cast(dtypes::int32);
  UOp fd = UOp::make(Ops::FLOORDIV, dtypes::int32, {ri, UOp::const_(dtypes::int32, int64_t{3})});  // lower_late's to rewrite
  UOp store = UOp::make(Ops::STORE, dtypes::void_, {UOp::make(Ops::INDEX, dtypes::int32, {out, r}), fd});
  UOp sink = UOp::sink({UOp::make(Ops::END, dtypes::void_, {store, r})});
  LoweredKernel k{sink};
  std::vector<Statement> st = linearize(sink);
  try {
    select_instructions("k", k, st, IselOptions{});
    FAIL() << "FLOORDIV was selected";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("x86 isel: no x86 selection for this integer op: "), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("FLOORDIV"), std::string::npos) << e.what();
  }
  NooptScope noopt(true);
  MachineFunction mf = select(Tensor(std::vector<int32_t>{1, 2}) + 1);
  EXPECT_EQ(count(mf, Mn::ret), 1);
}

TEST(IselScalar, MalformedStatementsAreRejectedNotCrashedOn) {
  UOp r = UOp::range(4, 0);
  LoweredKernel k{UOp::sink({})};
  auto rejects = [&](const std::vector<Statement>& st, const std::string& what) {
    try {
      select_instructions("k", k, st, IselOptions{});
      ADD_FAILURE() << "accepted: " << what;
    } catch (const std::invalid_argument& e) {
      EXPECT_EQ(std::string(e.what()).rfind("x86 isel: " + what, 0), 0u) << e.what();
    }
  };
  rejects({{StatementKind::END_LOOP, r}}, "END_LOOP of a loop that is not the innermost open one");
  rejects({{StatementKind::BEGIN_LOOP, r}}, "a loop is not closed");
  rejects({{StatementKind::ACC_UPDATE, r}}, "ACC_UPDATE of a node that is not a REDUCE");
  rejects({{StatementKind::VALUE, r + 1}}, "a value is used before it is defined");
  IselOptions three;
  three.vector_lanes = 3;
  try {
    select_instructions("k", k, {}, three);
    ADD_FAILURE() << "3 lanes accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("expected 4, 8 or 16"), std::string::npos) << e.what();
  }
}

TEST(IselScalar, Float16NeedsF16C) {
  NooptScope noopt(true);
  Tensor a = Tensor(std::vector<float>{1.5f, -2}).cast(dtypes::float16);
  std::vector<UOp> sinks = kernel_sinks({a * 3});
  ASSERT_EQ(sinks.size(), 1u);
  LoweredKernel k = cpu_c_target().lower(sinks[0], false);
  std::vector<Statement> st = linearize(k.sink);
  IselOptions o;
  try {
    select_instructions("k", k, st, o);
    ADD_FAILURE() << "float16 selected without F16C";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("x86 isel: float16 needs F16C"), std::string::npos) << e.what();
  }
  o.features.f16c = true;
  MachineFunction mf = select_instructions("k", k, st, o);
  // float32 loaded; CAST to float16 rounds (ps2ph + ph2ps); the product's CAST back rounds (ps2ph + ph2ps); the store
  // narrows (ps2ph)
  EXPECT_EQ(count(mf, Mn::vcvtph2ps), 2) << listing(mf);
  EXPECT_EQ(count(mf, Mn::vcvtps2ph), 3) << listing(mf);
}

}  // namespace
}  // namespace doorbell::x86
