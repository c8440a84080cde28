// The loops instruction selection makes for the optimizer's matmul kernels (compiler/x86/isel.cpp, hoist_addresses):
// the innermost loop's addresses are strength-reduced in its preheader, so the loop body does no address arithmetic
// beyond one add per induction register. Run against clang's bits: x86_vs_clang_test.cpp, isel_vector_test.cpp.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "compiler/cpu/cpu_target.h"
#include "compiler/linearize.h"
#include "compiler/x86/isel.h"
#include "compiler/x86/x86_features.h"
#include "compiler/x86/x86_target.h"
#include "tests/compiler/compiled_kernel_util.h"

namespace doorbell::x86 {
namespace {

using test::kernel_sinks;
using test::random_floats;

// The instructions of the first innermost loop: from the label a backward jump targets to that jump, which
// contains no other backward jump.
std::vector<Inst> innermost_loop(const MachineFunction& mf) {
  std::vector<std::pair<size_t, size_t>> loops;  // [top, jump]
  std::vector<std::pair<int64_t, size_t>> labels;
  for (size_t k = 0; k < mf.code.size(); k++) {
    const Inst& i = mf.code[k];
    if (i.op == Mn::LABEL) labels.emplace_back(i.o[0].imm, k);
    if (i.op == Mn::jl)
      for (const auto& [l, at] : labels)
        if (l == i.o[0].imm) loops.emplace_back(at, k);
  }
  for (const auto& [top, jump] : loops) {
    bool inner = true;
    for (const auto& [t2, j2] : loops) inner &= !(t2 > top && j2 < jump);
    if (inner) return std::vector<Inst>(mf.code.begin() + static_cast<long>(top), mf.code.begin() + static_cast<long>(jump) + 1);
  }
  return {};
}

// Matmuls the x86 target's pipeline tiles (1040 is not a multiple of the tile, 1024 is; the mlp's first layer).
TEST(IselLoop, AMatmulTilesInnermostLoopDoesNoImulLeaOrIndexSumAndOneAddPerInduction) {
  test::NooptScope on(false);
  const Target& target = cpu_x86_target();
  IselOptions o;
  o.vector_lanes = target.options().vector_lanes;
  o.features = host_x86_features();
  for (auto [m, k, n] : {std::tuple{1040, 1040, 1040}, std::tuple{256, 784, 512}, std::tuple{64, 64, 64}}) {
    Tensor a(random_floats(size_t(m) * k, 1), {m, k}), b(random_floats(size_t(k) * n, 2), {k, n});
    int kernels_with_fma = 0;
    for (const UOp& sink : kernel_sinks({a.matmul(b)})) {
      LoweredKernel lk = target.lower(sink, true);
      MachineFunction mf = select_instructions("kernel_loop", lk, linearize(lk.sink), o);
      std::vector<Inst> body = innermost_loop(mf);
      ASSERT_FALSE(body.empty()) << m << "x" << k << "x" << n;
      int fmas = 0, adds = 0;
      for (const Inst& i : body) {
        EXPECT_NE(i.op, Mn::imul) << m << "x" << k << "x" << n << ": a row address multiplied in the loop";
        EXPECT_NE(i.op, Mn::lea) << m << "x" << k << "x" << n << ": an index sum made in the loop";
        EXPECT_NE(i.op, Mn::movsxd) << m << "x" << k << "x" << n;
        fmas += i.op == Mn::vfmadd231ps;
        adds += i.op == Mn::add;
      }
      if (fmas == 0) continue;
      kernels_with_fma++;
      // the counter's add and the right operand's row induction (k * n, stepped by n); the left operand's row
      // address is [preheader base + size * counter + row displacement]
      EXPECT_EQ(adds, 2) << m << "x" << k << "x" << n;
    }
    EXPECT_GE(kernels_with_fma, 1) << m << "x" << k << "x" << n;
  }
}

}  // namespace
}  // namespace doorbell::x86

namespace doorbell::x86 {
namespace {

// The mlp's last layer (512 -> 10 outputs): scalar products whose right operand's row is ((c * 4 + j) * 10): the
// nested products and sums with constants are one induction (stride 40) and displacements, made in the preheader.
TEST(IselLoop, ANarrowMatmulsNestedRowProductsAreOneInductionAndDisplacements) {
  test::NooptScope on(false);
  const Target& target = cpu_x86_target();
  IselOptions o;
  o.vector_lanes = target.options().vector_lanes;
  o.features = host_x86_features();
  Tensor a(random_floats(256 * 512, 1), {256, 512}), b(random_floats(512 * 10, 2), {512, 10}), bias(random_floats(10, 3));
  int loops = 0;
  for (const UOp& sink : kernel_sinks({a.matmul(b) + bias})) {
    LoweredKernel lk = target.lower(sink, true);
    MachineFunction mf = select_instructions("kernel_loop", lk, linearize(lk.sink), o);
    std::vector<Inst> body = innermost_loop(mf);
    if (body.empty()) continue;
    loops++;
    int loads = 0;
    for (const Inst& i : body) {
      EXPECT_NE(i.op, Mn::imul) << "a row address multiplied in the loop";
      EXPECT_NE(i.op, Mn::lea) << "an index sum made in the loop";
      EXPECT_NE(i.op, Mn::movsxd);
      for (int k = 0; k < i.n; k++) loads += i.o[k].kind == Operand::Kind::MEM;
    }
    EXPECT_GE(loads, 2) << "the loop reads both operands";
  }
  EXPECT_GE(loops, 1);
}

}  // namespace
}  // namespace doorbell::x86
