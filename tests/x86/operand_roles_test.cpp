// operand_roles (compiler/x86/x86_inst.h): what the register allocator believes each operand is. A wrong DEF makes a
// value look dead before its read; a wrong USE keeps it alive for nothing.
#include <gtest/gtest.h>

#include <initializer_list>

#include "compiler/x86/x86_inst.h"

namespace doorbell::x86 {
namespace {

Inst make(Mn op, std::initializer_list<Operand> ops) { return make_inst(op, ops); }

std::vector<Role> roles(const Inst& i) {
  Role r[4];
  operand_roles(i, r);
  return std::vector<Role>(r, r + i.n);
}

using enum Role;
const Operand kRax = op_reg(gpr(RAX)), kRcx = op_reg(gpr(RCX)), kRdx = op_reg(gpr(RDX));
const Operand kX0 = op_reg(vec(0, 256)), kX1 = op_reg(vec(1, 256)), kX2 = op_reg(vec(2, 256));

TEST(OperandRoles, TwoAddressIntegerOpsReadTheirDestination) {
  EXPECT_EQ(roles(make(Mn::add, {kRax, kRcx})), (std::vector<Role>{USE_DEF, USE}));
  EXPECT_EQ(roles(make(Mn::cmovl, {kRax, kRcx})), (std::vector<Role>{USE_DEF, USE}));
  EXPECT_EQ(roles(make(Mn::imul, {kRax, kRcx})), (std::vector<Role>{USE_DEF, USE}));
  EXPECT_EQ(roles(make(Mn::imul, {kRax, kRcx, op_imm(9)})), (std::vector<Role>{DEF, USE, USE})) << "imul r, r/m, imm only writes";
}

TEST(OperandRoles, OneOperandMultiplyAndDivideOnlyReadTheirOperand) {
  EXPECT_EQ(roles(make(Mn::imul, {kRcx})), (std::vector<Role>{USE})) << "imul rcx: rdx:rax = rax * rcx";
  EXPECT_EQ(roles(make(Mn::idiv, {kRcx})), (std::vector<Role>{USE}));
  EXPECT_EQ(roles(make(Mn::div, {kRcx})), (std::vector<Role>{USE}));
}

TEST(OperandRoles, TiedFormsDefineTheirDestinationAndReadTheTiedSource) {
  Inst i = make(Mn::sub, {kRax, kRcx, kRdx});
  i.tied = true;
  EXPECT_EQ(roles(i), (std::vector<Role>{DEF, USE, USE}));
}

TEST(OperandRoles, FmaAndMergeMaskingReadTheDestinationZeroingDoesNot) {
  EXPECT_EQ(roles(make(Mn::vfmadd231ps, {kX0, kX1, kX2})), (std::vector<Role>{USE_DEF, USE, USE}));
  EXPECT_EQ(roles(make(Mn::vaddps, {kX0, kX1, kX2})), (std::vector<Role>{DEF, USE, USE}));
  Inst merge = make(Mn::vaddps, {kX0, kX1, kX2});
  merge.masked = true;
  merge.mask = kreg(1);
  EXPECT_EQ(roles(merge), (std::vector<Role>{USE_DEF, USE, USE})) << "unselected lanes keep the destination's";
  merge.zeroing = true;
  EXPECT_EQ(roles(merge), (std::vector<Role>{DEF, USE, USE})) << "{z}: unselected lanes are zeroed";
}

TEST(OperandRoles, ComparesAndJumpsWriteNoOperandACallDefinesItsResult) {
  EXPECT_EQ(roles(make(Mn::cmp, {kRax, kRcx})), (std::vector<Role>{USE, USE}));
  EXPECT_EQ(roles(make(Mn::jl, {op_label(3)})), (std::vector<Role>{USE}));
  EXPECT_EQ(roles(make(Mn::CALL_EXTERN, {op_symbol(0), kX0, kX1})), (std::vector<Role>{NONE, DEF, USE}));
  Mem m;
  m.base = gpr(RDI);
  m.bits = 256;
  EXPECT_EQ(roles(make(Mn::vmovups, {op_mem(m), kX0})), (std::vector<Role>{DEF, USE})) << "a store: the memory operand";
}

}  // namespace
}  // namespace doorbell::x86
