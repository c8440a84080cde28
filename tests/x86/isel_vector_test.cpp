// Vector instruction selection (compiler/x86/isel_vector.cpp): the machine instructions it chooses (a fused product
// is one vfmadd231ps, 16-lane compares go through k registers, 8-lane kernels use no EVEX form), then kernels built
// with 4, 8 and 16 lanes in one process (a hand-made kernel with a VECTOR range, vectorize_kernel) run through
// instruction selection, register allocation and the assembler, compared bit for bit with the C renderer's code
// compiled by clang (compiler/c_renderer.cpp defines the bits) on lanes holding NaN, infinities, -0, the extremes.
#include <gtest/gtest.h>

#include <bit>
#include <cfloat>
#include <climits>
#include <cstring>
#include <functional>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "compiler/c_renderer.h"
#include "compiler/cpu/clang_compiler.h"
#include "compiler/cpu/cpu_optimizer.h"
#include "compiler/cpu/cpu_target.h"
#include "compiler/cpu/elf_loader.h"
#include "compiler/cpu/vectorize.h"
#include "compiler/late_lowering.h"
#include "compiler/linearize.h"
#include "compiler/x86/isel.h"
#include "compiler/x86/regalloc.h"
#include "compiler/x86/x86_encoder.h"
#include "compiler/x86/x86_features.h"
#include "tests/compiler/compiled_kernel_util.h"

namespace doorbell::x86 {
namespace {

using test::kernel_sinks;
using test::random_floats;

constexpr int kElements = 256;  // a multiple of every lane count: 16 or 32 vector iterations

bool has_lanes(int lanes) {
  const X86Features& f = host_x86_features();
  if (lanes == 16) return f.avx512f && f.avx512vl && f.avx512dq;
  return f.avx2 && f.fma;
}

IselOptions options_for(int lanes) {
  IselOptions o;
  o.vector_lanes = lanes;
  o.features = host_x86_features();
  if (lanes < 16) o.features.avx512f = o.features.avx512vl = o.features.avx512dq = o.features.avx512bw = false;
  return o;
}

// out[i] = f(in_0[i], in_1[i], ...) over kElements elements, walked in vectors of `lanes`: a LOOP over the vectors and
// a VECTOR range over the lanes, turned into vector values by vectorize_kernel. `late`: the C target's late lowering
// first, as the CPU pipeline does (it defines what C leaves undefined: float -> int out of range, big shifts).
UOp vector_kernel(int lanes, DType out_dt, const std::vector<DType>& in_dts,
                  const std::function<UOp(const std::vector<UOp>&)>& f, bool late = false) {
  UOp out = UOp::make(Ops::PARAM, out_dt, {}, ParamArg{0, AddrSpace::GLOBAL, "out", 0, kElements - 1});
  UOp r = UOp::range(kElements / lanes, 0);
  UOp v = UOp::range(lanes, 1, AxisType::VECTOR);
  UOp i = r * lanes + v;
  std::vector<UOp> loads;
  for (size_t k = 0; k < in_dts.size(); k++) {
    ParamArg arg{static_cast<int64_t>(k + 1), AddrSpace::GLOBAL, "in", 0, kElements - 1};
    UOp p = UOp::make(Ops::PARAM, in_dts[k], {}, arg);
    loads.push_back(UOp::make(Ops::LOAD, in_dts[k], {UOp::make(Ops::INDEX, in_dts[k], {p, i})}));
  }
  UOp store = UOp::make(Ops::STORE, dtypes::void_, {UOp::make(Ops::INDEX, out_dt, {out, i}), f(loads)});
  UOp sink = UOp::make(Ops::SINK, dtypes::void_, {UOp::make(Ops::END, dtypes::void_, {store, r, v})});
  if (late) sink = lower_late(sink, c_lowering_options());
  std::string why;
  std::optional<UOp> vec = vectorize_kernel(sink, &why);
  if (!vec) throw std::runtime_error("the test kernel is not a vector kernel: " + why);
  return *vec;
}

// out[n] = sum_k a[k, n] * b[k, n] + max_k a[k, n] * b[k, n] over 8 rows, walked in vectors of `lanes`: one product
// read by two vector accumulators (the sum fuses it, whatever its other readers).
UOp product_read_by_two_sums_kernel(int lanes) {
  constexpr int kRows = 8, kCols = 64;
  DType f = dtypes::float32;
  UOp out = UOp::make(Ops::PARAM, f, {}, ParamArg{0, AddrSpace::GLOBAL, "out", 0, kCols - 1});
  UOp pa = UOp::make(Ops::PARAM, f, {}, ParamArg{1, AddrSpace::GLOBAL, "a", 0, kRows * kCols - 1});
  UOp pb = UOp::make(Ops::PARAM, f, {}, ParamArg{2, AddrSpace::GLOBAL, "b", 0, kRows * kCols - 1});
  UOp n = UOp::range(kCols / lanes, 0);
  UOp v = UOp::range(lanes, 1, AxisType::VECTOR);
  UOp k = UOp::range(kRows, 2, AxisType::REDUCE);
  UOp i = k * kCols + n * lanes + v;
  UOp p = UOp::make(Ops::LOAD, f, {UOp::make(Ops::INDEX, f, {pa, i})}) *
          UOp::make(Ops::LOAD, f, {UOp::make(Ops::INDEX, f, {pb, i})});
  UOp sum = UOp::make(Ops::REDUCE, f, {p, k}, ReduceArg{Ops::ADD, {}});
  UOp max = UOp::make(Ops::REDUCE, f, {p, k}, ReduceArg{Ops::MAX, {}});
  UOp store = UOp::make(Ops::STORE, dtypes::void_, {UOp::make(Ops::INDEX, f, {out, n * lanes + v}), sum + max});
  UOp sink = UOp::make(Ops::SINK, dtypes::void_, {UOp::make(Ops::END, dtypes::void_, {store, n, v})});
  std::string why;
  std::optional<UOp> vec = vectorize_kernel(sink, &why);
  if (!vec) throw std::runtime_error("the test kernel is not a vector kernel: " + why);
  return *vec;
}

MachineFunction select(const UOp& sink, int lanes) {
  return select_instructions("kernel_vsel", LoweredKernel{sink}, linearize(sink), options_for(lanes));
}

int count(const MachineFunction& mf, Mn op) {
  int n = 0;
  for (const Inst& i : mf.code) n += i.op == op;
  return n;
}

// Mnemonics only AVX-512 has (EVEX-encoded whatever the width).
bool evex_only(Mn op) {
  using enum Mn;
  for (Mn m : {vmovdqu32, vmovdqa32, vrndscaleps, vblendmps, vpblendmd, vpandd, vpandnd, vpord, vpxord, vpternlogd,
               vpcmpd, vpcmpud, vpmovm2d, vpmovd2m, vptestmd, vcvtudq2ps, vcvttps2udq, vextractf32x4, vextractf32x8,
               vextracti32x8, kmovw, kmovb, knotw, kortestw, vcvtusi2ss, vcvtusi2sd, vcvttss2usi, vcvttsd2usi})
    if (m == op) return true;
  return false;
}

// What needs EVEX in an instruction: an AVX-512-only mnemonic, a write mask, a k register or a zmm operand.
std::string evex_use(const Inst& i, const MachineFunction& mf) {
  std::string why;
  if (evex_only(i.op)) why = "an AVX-512 mnemonic";
  if (i.masked) why = "a write mask";
  for (int k = 0; k < i.n; k++) {
    const Operand& o = i.o[k];
    if (o.kind == Operand::Kind::REG && o.reg.cls == RegClass::MASK) why = "a k register";
    if (o.kind == Operand::Kind::REG && o.reg.cls == RegClass::VEC && o.reg.bits == 512) why = "a zmm register";
    if (o.kind == Operand::Kind::MEM && o.mem.bits == 512) why = "a 512-bit memory operand";
  }
  return why.empty() ? why : why + " in " + print_inst(i, mf);
}

// ------------------------------------------------------------------------------------------------ structure

TEST(IselVector, AFloatProductReadOnlyByASumIsOneVfmaddAndNoVmul) {
  for (int lanes : {8, 16}) {
    UOp k = vector_kernel(lanes, dtypes::float32, {dtypes::float32, dtypes::float32, dtypes::float32},
                          [](const std::vector<UOp>& x) { return x[0] * x[1] + x[2]; });
    MachineFunction mf = select(k, lanes);
    EXPECT_EQ(count(mf, Mn::vfmadd231ps), 1) << lanes << " lanes";
    EXPECT_EQ(count(mf, Mn::vmulps), 0) << lanes << " lanes: the product is fused, not computed on its own";
    EXPECT_EQ(count(mf, Mn::vaddps), 0) << lanes << " lanes";
  }
}

TEST(IselVector, AProductReadTwiceIsComputedOnceAndNotFused) {
  // p + p with p = a * b: the sum reads the product twice, so C keeps the product's own rounding (uses 2, no fma)
  UOp k = vector_kernel(8, dtypes::float32, {dtypes::float32, dtypes::float32},
                        [](const std::vector<UOp>& x) { UOp p = x[0] * x[1]; return p + p; });
  MachineFunction mf = select(k, 8);
  EXPECT_EQ(count(mf, Mn::vmulps), 1);
  EXPECT_EQ(count(mf, Mn::vfmadd231ps), 0) << "a product read twice keeps its own rounding";
  EXPECT_EQ(count(mf, Mn::vaddps), 1);
}

int k_compares(const MachineFunction& mf) {
  int n = 0;
  for (const Inst& i : mf.code)
    if (i.op == Mn::vcmpps && i.o[0].kind == Operand::Kind::REG && i.o[0].reg.cls == RegClass::MASK) n++;
  return n;
}

TEST(IselVector, SixteenLaneComparesReadByAWhereSelectUnderTheirKRegister) {
  UOp k = vector_kernel(16, dtypes::float32, {dtypes::float32, dtypes::float32},
                        [](const std::vector<UOp>& x) { return x[0].lt(x[1]).where(x[0], -x[1]); });
  MachineFunction mf = select(k, 16);
  EXPECT_EQ(k_compares(mf), 1);
  EXPECT_EQ(count(mf, Mn::vpmovm2d), 0) << "no 0 / -1 vector: the WHERE reads the k register";
  EXPECT_EQ(count(mf, Mn::vpmovd2m), 0);
  EXPECT_EQ(count(mf, Mn::vpblendmd), 1) << "WHERE selects under a k register";
  EXPECT_EQ(count(mf, Mn::vblendvps), 0) << "vblendvps has no zmm form";
}

TEST(IselVector, SixteenLaneComparesReadAsValuesGiveKRegistersThenMasks) {
  UOp k = vector_kernel(16, dtypes::int32, {dtypes::float32, dtypes::float32},
                        [](const std::vector<UOp>& x) { return x[0].lt(x[1]).cast(dtypes::int32); });
  MachineFunction mf = select(k, 16);
  EXPECT_EQ(k_compares(mf), 1);
  EXPECT_EQ(count(mf, Mn::vpmovm2d), 1) << "the compare's mask as 0 / -1 lanes";
}

TEST(IselVector, SixteenLaneWhereOfAnOrOfComparesSelectsTwiceUnderKRegisters) {
  UOp k = vector_kernel(16, dtypes::float32, {dtypes::float32, dtypes::float32},
                        [](const std::vector<UOp>& x) { return (x[0].lt(x[1]) | x[0].ne(x[0])).where(x[1], -x[0]); });
  MachineFunction mf = select(k, 16);
  EXPECT_EQ(k_compares(mf), 2);
  EXPECT_EQ(count(mf, Mn::vpblendmd), 2);
  EXPECT_EQ(count(mf, Mn::vpmovm2d) + count(mf, Mn::vpmovd2m) + count(mf, Mn::vpord), 0) << "no 0 / -1 vectors";
}

TEST(IselVector, WhereOfACompareOfItsOwnOperandsIsAMinOrAMax) {
  for (int lanes : {8, 16}) {
    UOp mn = vector_kernel(lanes, dtypes::float32, {dtypes::float32, dtypes::float32},
                           [](const std::vector<UOp>& x) { return x[0].lt(x[1]).where(x[0], x[1]); });
    UOp mx = vector_kernel(lanes, dtypes::int32, {dtypes::int32, dtypes::int32},
                           [](const std::vector<UOp>& x) { return x[0].lt(x[1]).where(x[1], x[0]); });
    MachineFunction a = select(mn, lanes), b = select(mx, lanes);
    EXPECT_EQ(count(a, Mn::vminps), 1) << lanes;
    EXPECT_EQ(count(b, Mn::vpmaxsd), 1) << lanes;
    for (const MachineFunction* mf : {&a, &b}) {
      EXPECT_EQ(count(*mf, Mn::vcmpps) + count(*mf, Mn::vpcmpd) + count(*mf, Mn::vpcmpgtd), 0) << "no compare left";
      EXPECT_EQ(count(*mf, Mn::vpblendmd) + count(*mf, Mn::vblendvps), 0) << "no blend";
    }
  }
}

TEST(IselVector, EightLaneKernelsUseNoEvexForm) {
  const std::vector<std::function<UOp(const std::vector<UOp>&)>> bodies = {
      [](const std::vector<UOp>& x) { return x[0].lt(x[1]).where(x[0].maximum(x[1]), -x[1]).cast(dtypes::uint32); },
      [](const std::vector<UOp>& x) {
        UOp t = (x[0].cast(dtypes::uint32) + 3).cast(dtypes::float32).alu(Ops::TRUNC);
        return t.ne(x[1]).cast(dtypes::uint32);
      },
  };
  for (const auto& body : bodies) {
    UOp k = vector_kernel(8, dtypes::uint32, {dtypes::float32, dtypes::float32}, body);
    MachineFunction mf = select(k, 8);
    for (const Inst& i : mf.code) EXPECT_EQ(evex_use(i, mf), "");
  }
}

TEST(IselVector, ALoadReadByOneOpIsItsMemoryOperand) {
  for (int lanes : {8, 16}) {
    UOp k = vector_kernel(lanes, dtypes::float32, {dtypes::float32, dtypes::float32},
                          [](const std::vector<UOp>& x) { return x[0] + x[1]; });
    MachineFunction mf = select(k, lanes);
    int loads = 0, stores = 0, add_from_memory = 0;
    for (const Inst& i : mf.code) {
      if (i.op == Mn::vmovups) (i.o[0].kind == Operand::Kind::MEM ? stores : loads)++;
      if (i.op == Mn::vaddps && i.o[2].kind == Operand::Kind::MEM && i.o[2].mem.bits == lanes * 32) add_from_memory++;
    }
    EXPECT_EQ(loads, 1) << lanes << " lanes: the first operand is loaded, the second read by vaddps itself";
    EXPECT_EQ(add_from_memory, 1) << lanes << " lanes";
    EXPECT_EQ(stores, 1) << lanes << " lanes";
  }
}

// A kernel of the CPU pipeline at this process's lanes (DOORBELL_CPU_VECTOR_LANES): sums, max and a matmul.
std::vector<UOp> pipeline_kernels(const std::vector<Tensor>& outputs) {
  std::vector<UOp> out;
  for (const UOp& sink : kernel_sinks(outputs)) out.push_back(cpu_c_target().lower(sink, true).sink);
  return out;
}

TEST(IselVector, AMatmulsProductsAreFusedIntoItsAccumulatorsAndItsScalarsBroadcastFromMemory) {
  test::NooptScope on(false);
  const int lanes = cpu_vector_lanes();
  Tensor a(random_floats(64 * 64, 1), {64, 64}), b(random_floats(64 * 64, 2), {64, 64});
  int fmas = 0, muls = 0, broadcasts_from_memory = 0, scalar_float_loads = 0;
  for (const UOp& k : pipeline_kernels({a.matmul(b)})) {
    MachineFunction mf = select(k, lanes);
    fmas += count(mf, Mn::vfmadd231ps);
    muls += count(mf, Mn::vmulps);
    scalar_float_loads += count(mf, Mn::vmovss);
    for (const Inst& i : mf.code)
      broadcasts_from_memory += i.op == Mn::vbroadcastss && i.o[1].kind == Operand::Kind::MEM;
  }
  EXPECT_GE(fmas, 4) << "a register tile: one FMA per accumulator";
  EXPECT_EQ(muls, 0);
  EXPECT_GE(broadcasts_from_memory, 1) << "the left operand's element broadcast straight from memory";
  EXPECT_EQ(scalar_float_loads, 0) << "no scalar load left behind by those broadcasts";
}

TEST(IselVector, ALaneFoldReadsEveryLaneInOrder) {
  test::NooptScope on(false);
  const int lanes = cpu_vector_lanes();
  Tensor c(random_floats(8 * 256, 3), {8, 256});
  std::vector<UOp> ks = pipeline_kernels({c.sum(1)});
  ASSERT_EQ(ks.size(), 1u);
  MachineFunction mf = select(ks[0], lanes);
  // lane j of each 128-bit chunk moves to lane 0 by vpermilps imm j (j = 1..3), chunks 1.. by an extract
  std::vector<int64_t> order;
  for (const Inst& i : mf.code)
    if (i.op == Mn::vpermilps) order.push_back(i.o[2].imm);
  ASSERT_EQ(order.size(), static_cast<size_t>(lanes / 4 * 3));
  for (size_t k = 0; k < order.size(); k++) EXPECT_EQ(order[k], static_cast<int64_t>(k % 3 + 1));
  EXPECT_EQ(count(mf, lanes == 16 ? Mn::vextractf32x4 : Mn::vextractf128), lanes / 4 - 1);
}

TEST(IselVector, AProductWithTwoReadersIsComputedAndStillFusedIntoASum) {
  for (int lanes : {8, 16}) {
    MachineFunction mf = select(product_read_by_two_sums_kernel(lanes), lanes);
    EXPECT_EQ(count(mf, Mn::vmulps), 1) << lanes << " lanes: for the max";
    EXPECT_EQ(count(mf, Mn::vfmadd231ps), 1) << lanes << " lanes: the sum fuses the product (vector_accumulate)";
  }
}

TEST(IselVector, ALaneCountOtherThanTheOptionsIsAnErrorNamingTheNode) {
  UOp k = vector_kernel(4, dtypes::float32, {dtypes::float32},
                        [](const std::vector<UOp>& x) { return x[0] + 1.0; });
  try {
    select(k, 8);
    FAIL() << "a 4-lane kernel selected with 8-lane registers";
  } catch (const std::invalid_argument& e) {
    std::string m = e.what();
    EXPECT_EQ(m.rfind("x86 isel: ", 0), 0u) << m;
    EXPECT_NE(m.find("4 lanes of float32"), std::string::npos) << m;
  }
  // the selector is still usable
  UOp ok = vector_kernel(8, dtypes::float32, {dtypes::float32}, [](const std::vector<UOp>& x) { return x[0] + 1.0; });
  EXPECT_EQ(count(select(ok, 8), Mn::vaddps), 1);
}

// ------------------------------------------------------------------------------------- against clang's code

struct Loaded {
  std::shared_ptr<LoadedObject> object;
  CpuKernelFn fn = nullptr;
};

Loaded load(const std::string& elf, const std::string& name) {
  Loaded l;
  l.object = LoadedObject::load(elf);
  l.fn = reinterpret_cast<CpuKernelFn>(l.object->symbol(name));
  return l;
}

Loaded compile_x86(const UOp& sink, int lanes, std::string* listing) {
  MachineFunction mf = select(sink, lanes);
  if (lanes < 16) {  // whatever the kernel, AVX2 machines must run it
    for (const Inst& i : mf.code) EXPECT_EQ(evex_use(i, mf), "");
  }
  AllocationOptions ao;
  ao.vec_registers = lanes == 16 ? 32 : 16;
  allocate_registers(mf, ao);
  *listing = print_listing(mf);
  return load(write_elf_object(assemble(*listing)), "kernel_vsel");
}

Loaded compile_clang(const UOp& sink) {
  std::string source = render_c("kernel_vsel", sink, linearize(sink));
  return load(cpu_c_target().compile(source, "kernel_vsel").bytes, "kernel_vsel");
}

// 32-bit lanes with the values that tell implementations apart: one NaN pattern (x86 keeps the first NaN operand's
// payload, and an op on two different NaNs could legally pick either), infinities, zeros of both signs, the extremes,
// subnormals, halves (rounding), then random values.
std::vector<uint32_t> lanes_of(DType d, uint32_t seed, bool in_int_range = false, bool non_negative = false,
                               size_t n = kElements) {
  std::vector<uint32_t> v;
  std::mt19937 g(seed);
  if (d == dtypes::float32) {
    std::vector<float> special = {0.0f, -0.0f, 1.0f, -1.0f, 0.5f, -0.5f, 1.5f, 2.5f, -2.5f, 3.7f, -3.7f, 1e-45f,
                                  -1e-45f, FLT_MIN, 2147483520.0f, -2147483648.0f, 16777217.0f, 1e9f};
    if (in_int_range && non_negative) special = {0.0f, -0.0f, 0.5f, 0.9f, -0.5f, 1.0f, 2.5f, 2147483520.0f,
                                                 2147483648.0f, 3e9f, 4294967040.0f, 16777217.0f, 65536.5f};
    if (!in_int_range) {
      special.insert(special.end(), {INFINITY, -INFINITY, FLT_MAX, -FLT_MAX, 3e9f, -3e9f});
      v.push_back(0x7FC00000u);  // the one NaN
    }
    for (float f : special) v.push_back(std::bit_cast<uint32_t>(f));
    std::uniform_real_distribution<float> u(non_negative ? 0.0f : -100.0f, 100.0f);
    while (v.size() < n) v.push_back(std::bit_cast<uint32_t>(u(g)));
  } else {
    for (uint32_t x : {0u, 1u, 0xFFFFFFFFu, 2u, 0x80000000u, 0x7FFFFFFFu, 7u, 0xFFFFFFF9u, 31u, 32u, 0xFFFFu,
                       0x10000u, 0x80000001u, 0xFFFF0000u})
      v.push_back(x);
    std::uniform_int_distribution<uint32_t> u;
    while (v.size() < n) v.push_back(g() % 3 == 0 ? u(g) % 64 : u(g));
  }
  std::shuffle(v.begin() + 4, v.end(), g);  // specials meet each other in different lane positions
  return v;
}

struct Case {
  std::string name;
  DType out;
  std::vector<DType> in;
  std::function<UOp(const std::vector<UOp>&)> body;
  // float inputs that a conversion to integers defines (C leaves the rest undefined)
  bool in_int_range = false, non_negative = false;
};

// Every case's C function of one lane count in one translation unit: one clang run instead of one per case (the
// functions share the prelude and the vector typedefs, which render_c writes before the function).
std::vector<CpuKernelFn> compile_clang_all(const std::vector<UOp>& sinks, std::shared_ptr<LoadedObject>* keep) {
  std::string source;
  for (size_t k = 0; k < sinks.size(); k++) {
    std::string name = "kernel_case" + std::to_string(k);
    std::string one = render_c(name, sinks[k], linearize(sinks[k]));
    source += k == 0 ? one : one.substr(one.find("void " + name + "("));
  }
  *keep = LoadedObject::load(cpu_c_target().compile(source, "kernel_case0").bytes);
  std::vector<CpuKernelFn> fns;
  for (size_t k = 0; k < sinks.size(); k++)
    fns.push_back(reinterpret_cast<CpuKernelFn>((*keep)->symbol("kernel_case" + std::to_string(k))));
  return fns;
}

void expect_same_bits(const Case& c, const UOp& sink, int lanes, CpuKernelFn clang_fn) {
  SCOPED_TRACE(c.name + ", " + std::to_string(lanes) + " lanes");
  std::string listing;
  Loaded x86 = compile_x86(sink, lanes, &listing);
  std::vector<std::vector<uint32_t>> in;
  for (size_t k = 0; k < c.in.size(); k++) in.push_back(lanes_of(c.in[k], 17 + 31 * k, c.in_int_range, c.non_negative));
  std::vector<uint32_t> want(kElements, 0xDEADBEEF), got(kElements, 0xDEADBEEF);
  std::vector<void*> bufs(1 + in.size());
  for (size_t k = 0; k < in.size(); k++) bufs[k + 1] = in[k].data();
  bufs[0] = want.data();
  clang_fn(bufs.data(), nullptr, 0, 1);
  bufs[0] = got.data();
  x86.fn(bufs.data(), nullptr, 0, 1);
  ASSERT_NE(want, std::vector<uint32_t>(kElements, 0xDEADBEEF)) << "clang's kernel wrote its output";
  for (int i = 0; i < kElements; i++) {
    if (got[i] == want[i]) continue;
    std::string ins;
    for (size_t k = 0; k < in.size(); k++) ins += " 0x" + (std::ostringstream() << std::hex << in[k][i]).str();
    ADD_FAILURE() << "element " << i << ": x86 0x" << std::hex << got[i] << ", clang 0x" << want[i] << " from" << ins
                  << "\n" << listing;
    return;
  }
}

std::vector<Case> cases() {
  const DType f = dtypes::float32, i = dtypes::int32, u = dtypes::uint32;
  using X = const std::vector<UOp>&;
  auto as_int = [](const UOp& b) {
    return b.where(UOp::const_(dtypes::int32, int64_t{-7}), UOp::const_(dtypes::int32, int64_t{5}));
  };
  std::vector<Case> out = {
      {"float add", f, {f, f}, [](X x) { return x[0] + x[1]; }},
      {"float sub", f, {f, f}, [](X x) { return x[0] - x[1]; }},
      {"float mul", f, {f, f}, [](X x) { return x[0] * x[1]; }},
      {"float fdiv", f, {f, f}, [](X x) { return x[0] / x[1]; }},
      {"float max", f, {f, f}, [](X x) { return x[0].maximum(x[1]); }},
      {"float max of a constant", f, {f}, [](X x) { return x[0].maximum(x[0].const_like(-0.0)); }},
      {"float neg", f, {f}, [](X x) { return -x[0]; }},
      {"float reciprocal", f, {f}, [](X x) { return x[0].alu(Ops::RECIPROCAL); }},
      {"float trunc", f, {f}, [](X x) { return x[0].alu(Ops::TRUNC); }},
      {"float sqrt", f, {f}, [](X x) { return x[0].alu(Ops::SQRT); }},
      {"float fused a*b+c", f, {f, f, f}, [](X x) { return x[0] * x[1] + x[2]; }},
      {"float fused c+a*b", f, {f, f, f}, [](X x) { return x[2] + x[0] * x[1]; }},
      {"float fused with a broadcast constant", f, {f, f}, [](X x) { return x[0] * 3.0 + x[1]; }},
      {"float cmplt", i, {f, f}, [&](X x) { return as_int(x[0].lt(x[1])); }},
      {"float cmpne", i, {f, f}, [&](X x) { return as_int(x[0].ne(x[1])); }},
      {"float cmpeq", i, {f, f}, [&](X x) { return as_int(x[0].eq(x[1])); }},
      {"float where", f, {f, f}, [](X x) { return x[0].lt(x[1]).where(x[0], x[1] * 2.0); }},
      // the selects that are vminps / vmaxps (and vpmin / vpmax): NaN and -0/+0 lanes take the second source
      {"float where a < b, a, b (min)", f, {f, f}, [](X x) { return x[0].lt(x[1]).where(x[0], x[1]); }},
      {"float where a < b, b, a (max)", f, {f, f}, [](X x) { return x[0].lt(x[1]).where(x[1], x[0]); }},
      {"float clamp by two constants", f, {f}, [](X x) {
         UOp lo = x[0].lt(x[0].const_like(-152.0)).where(x[0].const_like(-152.0), x[0]);
         return lo.const_like(129.0).lt(lo).where(lo.const_like(129.0), lo);
       }},
      {"float compare read by a WHERE and a cast", i, {f, f}, [&](X x) {
         UOp c = x[0].ne(x[1]);
         return c.where(x[0], x[1]).bitcast(dtypes::int32) + as_int(c);
       }},
      {"float where of an OR and an AND of compares", f, {f, f, f}, [](X x) {
         UOp o = x[0].lt(x[1]) | x[2].ne(x[2]), n = x[1].eq(x[2]) & (x[0].lt(x[2]) | x[0].ne(x[0]));
         return o.where(x[0], x[2]) + n.where(x[1], -x[2]) + (o & n).cast(dtypes::float32);
       }},
      {"int32 where a < b, a, b (min)", i, {i, i}, [](X x) { return x[0].lt(x[1]).where(x[0], x[1]); }},
      {"int32 where a < b, b, a (max)", i, {i, i}, [](X x) { return x[0].lt(x[1]).where(x[1], x[0]); }},
      {"uint32 where a < b, a, b (min)", u, {u, u}, [](X x) { return x[0].lt(x[1]).where(x[0], x[1]); }},
      {"uint32 where a < b, b, a (max)", u, {u, u}, [](X x) { return x[0].lt(x[1]).where(x[1], x[0]); }},
      {"float to bool to float", f, {f}, [](X x) { return x[0].cast(dtypes::bool_).cast(dtypes::float32); }},
      {"float to bool to int", i, {f}, [](X x) { return x[0].cast(dtypes::bool_).cast(dtypes::int32); }},
      {"float to int32", i, {f}, [](X x) { return x[0].cast(dtypes::int32); }, true, false},
      {"float to uint32", u, {f}, [](X x) { return x[0].cast(dtypes::uint32); }, true, true},
      {"int32 to float", f, {i}, [](X x) { return x[0].cast(dtypes::float32); }},
      {"uint32 to float", f, {u}, [](X x) { return x[0].cast(dtypes::float32); }},
      {"int32 to uint32", u, {i}, [](X x) { return x[0].cast(dtypes::uint32); }},
      {"float bitcast to int32", i, {f}, [](X x) { return x[0].bitcast(dtypes::int32) + 1; }},
      {"int32 to bool to int32", i, {i}, [](X x) { return x[0].cast(dtypes::bool_).cast(dtypes::int32); }},
      {"int32 add", i, {i, i}, [](X x) { return x[0] + x[1]; }},
      {"int32 sub", i, {i, i}, [](X x) { return x[0] - x[1]; }},
      {"int32 mul", i, {i, i}, [](X x) { return x[0] * x[1]; }},
      {"int32 max", i, {i, i}, [](X x) { return x[0].maximum(x[1]); }},
      {"int32 neg", i, {i}, [](X x) { return -x[0]; }},
      {"int32 cmplt", i, {i, i}, [&](X x) { return as_int(x[0].lt(x[1])); }},
      {"int32 cmpne", i, {i, i}, [&](X x) { return as_int(x[0].ne(x[1])); }},
      {"int32 cmpeq", i, {i, i}, [&](X x) { return as_int(x[0].eq(x[1])); }},
      {"int32 and or xor", i, {i, i}, [](X x) { return ((x[0] & x[1]) | 12) ^ x[1]; }},
      {"int32 shl", i, {i, i}, [](X x) { return x[0] << (x[1] & 31); }},
      {"int32 shr (arithmetic)", i, {i, i}, [](X x) { return x[0] >> (x[1] & 31); }},
      {"int32 shifts by constants", i, {i}, [](X x) { return (x[0] << 3) + (x[0] >> 5); }},
      {"int32 where", i, {i, i}, [](X x) { return x[0].lt(x[1]).where(x[0] * 3, x[1]); }},
      {"uint32 add mul", u, {u, u}, [](X x) { return x[0] * x[1] + x[0]; }},
      {"uint32 max", u, {u, u}, [](X x) { return x[0].maximum(x[1]); }},
      {"uint32 cmplt", i, {u, u}, [&](X x) { return as_int(x[0].lt(x[1])); }},
      {"uint32 shr (logical)", u, {u, u}, [](X x) { return x[0] >> (x[1] & 31); }},
      {"uint32 shifts by constants", u, {u}, [](X x) { return (x[0] >> 7) ^ (x[0] << 1); }},
      {"bool and or xor", i, {f, f}, [&](X x) {
         UOp a = x[0].lt(x[1]), b = x[1].lt(x[0] * 0.5), c = x[0].ne(x[1]);
         return as_int(((a & b) | c) ^ b);
       }},
      {"bool add mul", i, {i, i}, [&](X x) {
         UOp a = x[0].lt(x[1]), b = x[1].eq(x[0] & 3);
         return as_int(a * b + b);
       }},
      {"bool broadcast in a where", f, {f}, [](X x) {
         UOp flag = UOp::const_(dtypes::bool_, true);
         return (x[0].lt(x[0].const_like(1.0)) & flag).where(x[0], x[0].const_like(-2.0));
       }},
      {"int constant broadcast to float", f, {i}, [](X x) {
         return x[0].cast(dtypes::float32) + UOp::const_(dtypes::int32, int64_t{-3}).cast(dtypes::float32);
       }},
  };
  return out;
}

// Every buffer of a pipeline kernel filled with the same values for both, run on one core, compared bit for bit.
void expect_pipeline_kernel_same_bits(const UOp& sink, const std::string& what, int lanes = cpu_vector_lanes()) {
  SCOPED_TRACE(what);
  std::string listing;
  Loaded x86 = compile_x86(sink, lanes, &listing);
  Loaded cc = compile_clang(sink);
  std::map<int64_t, std::pair<DType, int64_t>> params;  // slot -> element type, elements
  for (const UOp& u : sink.toposort())
    if (u.op() == Ops::PARAM && u.arg_as<ParamArg>().addrspace == AddrSpace::GLOBAL)
      params[u.arg_as<ParamArg>().slot] = {u.dtype(), u.arg_as<ParamArg>().vmax + 1};
  std::vector<std::vector<uint32_t>> want, got;
  std::mt19937 g(5);
  for (const auto& [slot, p] : params) {
    ASSERT_EQ(slot, static_cast<int64_t>(want.size())) << "buffer slots 0..n-1";
    ASSERT_EQ(p.first.itemsize(), 4) << p.first.name();
    std::vector<uint32_t> v(static_cast<size_t>(p.second));
    std::uniform_real_distribution<float> d(-4, 4);
    for (uint32_t& x : v) x = p.first == dtypes::float32 ? std::bit_cast<uint32_t>(d(g)) : static_cast<uint32_t>(g());
    want.push_back(v);
    got.push_back(v);
  }
  std::vector<void*> wb, gb;
  for (size_t k = 0; k < want.size(); k++) wb.push_back(want[k].data()), gb.push_back(got[k].data());
  const std::vector<uint32_t> before = want[0];
  cc.fn(wb.data(), nullptr, 0, 1);
  x86.fn(gb.data(), nullptr, 0, 1);
  ASSERT_NE(want[0], before) << "clang's kernel wrote its output (buffer 0)";
  for (size_t k = 0; k < want.size(); k++)
    for (size_t i = 0; i < want[k].size(); i++)
      if (want[k][i] != got[k][i]) {
        ADD_FAILURE() << "buffer " << k << " element " << i << ": x86 0x" << std::hex << got[k][i] << ", clang 0x"
                      << want[k][i] << "\n" << listing;
        return;
      }
}

TEST(IselVectorAgainstClang, PipelineKernelsGiveClangsBits) {
  if (!find_c_compiler()) GTEST_SKIP() << "no C compiler: nothing to compare with";
  test::NooptScope on(false);
  Tensor a(random_floats(64 * 48, 1), {64, 48}), b(random_floats(48 * 80, 2), {48, 80});
  Tensor c(random_floats(8 * 256, 3), {8, 256});
  Tensor n(std::vector<int32_t>(512, 3), {4, 128});
  Tensor x(random_floats(4 * 32, 15), {4, 32}), e(random_floats(256, 14, 0.1f, 4));
  const std::vector<std::pair<std::string, Tensor>> outputs = {
      {"matmul", a.matmul(b)}, {"relu of a matmul plus 1", (a.matmul(b) + 1).relu()},
      {"sum over the last axis", c.sum(1)}, {"max over the last axis", c.max(1)},
      {"sum over the first axis", c.sum(0)}, {"softmax", c.softmax(-1)}, {"int32 sum", n.sum(1)},
      {"int32 max", n.max(1)}, {"rows gated by a pad", x.pad({{1, 1}, {0, 0}}) * 2},
      {"rows gated by a pad of 7", x.pad({{2, 0}, {0, 0}}, 7) + 1}, {"exp", e.exp()}, {"log", e.log()},
      {"sigmoid", e.sigmoid()}, {"tanh", e.tanh()}, {"floor", e.floor()}, {"reciprocal", e.reciprocal()}};
  for (const auto& [what, t] : outputs)
    for (const UOp& k : pipeline_kernels({t})) expect_pipeline_kernel_same_bits(k, what);
}

TEST(IselVectorAgainstClang, AProductReadByTwoSumsGivesClangsBits) {
  if (!find_c_compiler()) GTEST_SKIP() << "no C compiler: nothing to compare with";
  for (int lanes : {8, 16})
    if (has_lanes(lanes))
      expect_pipeline_kernel_same_bits(product_read_by_two_sums_kernel(lanes), std::to_string(lanes) + " lanes", lanes);
}

TEST(IselVectorAgainstClang, EveryOpAndDtypeGivesClangsBitsWith4And8And16Lanes) {
  if (!find_c_compiler()) GTEST_SKIP() << "no C compiler: nothing to compare with";
  for (int lanes : {4, 8, 16}) {
    if (!has_lanes(lanes)) continue;
    std::vector<Case> all = cases();
    std::vector<UOp> sinks;
    for (const Case& c : all) sinks.push_back(vector_kernel(lanes, c.out, c.in, c.body));
    std::shared_ptr<LoadedObject> object;
    std::vector<CpuKernelFn> clang_fns = compile_clang_all(sinks, &object);
    for (size_t k = 0; k < all.size(); k++) expect_same_bits(all[k], sinks[k], lanes, clang_fns[k]);
  }
}

// Random expression trees over the vector ops (seeded): shared subexpressions (products read once or twice, loads
// read once or twice), compares feeding WHEREs and casts, constants, nested up to depth 6. Inputs: float32 x3, int32
// x2, uint32 x1 (the lanes_of values); the kernels are lowered late as the CPU pipeline does. Lanes where both
// results are NaN count as equal here: a tree combines NaNs of different payloads (an input's 0x7FC00000 with the
// 0xFFC00000 an invalid op makes), and which one x86 returns depends on operand order, which clang may commute.
class RandomTree {
 public:
  explicit RandomTree(uint32_t seed) : g_(seed) {}

  static std::vector<DType> inputs() {
    return {dtypes::float32, dtypes::float32, dtypes::float32, dtypes::int32, dtypes::int32, dtypes::uint32};
  }

  UOp make(DType out, const std::vector<UOp>& loads) {
    loads_ = loads;
    pool_.clear();
    return gen(out, 6);
  }

 private:
  int pick(int n) { return static_cast<int>(g_() % static_cast<uint32_t>(n)); }

  UOp leaf(DType d) {
    if (d.is_bool()) return leaf(dtypes::float32).lt(leaf(dtypes::float32));
    if (pick(5) == 0) {
      if (d == dtypes::float32) return UOp::const_(d, std::vector<double>{0.5, -2.0, 3.0, -0.0, 1e30}[pick(5)]);
      return UOp::const_(d, int64_t{std::vector<int64_t>{1, 3, 7, -1, 255}[pick(5)]});
    }
    if (d == dtypes::float32) return loads_[pick(3)];
    if (d == dtypes::int32) return loads_[3 + pick(2)];
    return loads_[5];
  }

  UOp gen(DType d, int depth) {
    for (const auto& [dt, u] : pool_)  // a shared subexpression now and then
      if (dt == d && pick(16) == 0) return u;
    UOp u = depth == 0 || pick(12) == 0 ? leaf(d) : node(d, depth - 1);
    pool_.emplace_back(d, u);
    return u;
  }

  UOp node(DType d, int depth) {
    const DType f = dtypes::float32, i = dtypes::int32, u = dtypes::uint32, b = dtypes::bool_;
    auto any_num = [&] { return std::vector<DType>{f, i, u}[pick(3)]; };
    if (d.is_bool()) {
      switch (pick(6)) {
        case 0: { DType t = any_num(); return gen(t, depth).lt(gen(t, depth)); }
        case 1: { DType t = any_num(); return gen(t, depth).ne(gen(t, depth)); }
        case 2: { DType t = any_num(); return gen(t, depth).eq(gen(t, depth)); }
        case 3: return gen(b, depth) & gen(b, depth);
        case 4: return gen(b, depth) | gen(b, depth);
        default: return gen(any_num(), depth).cast(b);
      }
    }
    if (d == f) {
      switch (pick(13)) {
        case 0: return gen(f, depth) + gen(f, depth);
        case 1: return gen(f, depth) - gen(f, depth);
        case 2: return gen(f, depth) * gen(f, depth);
        case 3: return gen(f, depth) * gen(f, depth) + gen(f, depth);
        case 4: return gen(f, depth) / gen(f, depth);
        case 5: return gen(f, depth).maximum(gen(f, depth));
        case 6: return -gen(f, depth);
        case 7: return gen(f, depth).alu(Ops::RECIPROCAL);
        case 8: return gen(f, depth).alu(Ops::TRUNC);
        case 9: return gen(f, depth).alu(Ops::SQRT);
        case 10: return gen(b, depth).where(gen(f, depth), gen(f, depth));
        case 11: return gen(std::vector<DType>{i, u, b}[pick(3)], depth).cast(f);
        default: return gen(f, depth);
      }
    }
    switch (pick(13)) {  // int32 or uint32
      case 0: return gen(d, depth) + gen(d, depth);
      case 1: return gen(d, depth) - gen(d, depth);
      case 2: return gen(d, depth) * gen(d, depth);
      case 3: return gen(d, depth).maximum(gen(d, depth));
      case 4: return -gen(d, depth);
      case 5: return gen(d, depth) & gen(d, depth);
      case 6: return gen(d, depth) | gen(d, depth);
      case 7: return gen(d, depth) ^ gen(d, depth);
      case 8: return gen(d, depth) << (gen(d, depth) & 31);
      case 9: return gen(d, depth) >> (gen(d, depth) & 31);
      case 10: return gen(b, depth).where(gen(d, depth), gen(d, depth));
      case 11: return gen(std::vector<DType>{d == i ? u : i, b}[pick(2)], depth).cast(d);
      default: return gen(f, depth).cast(d);
    }
  }

  std::mt19937 g_;
  std::vector<UOp> loads_;
  std::vector<std::pair<DType, UOp>> pool_;
};

TEST(IselVectorAgainstClang, RandomExpressionKernelsGiveClangsBits) {
  if (!find_c_compiler()) GTEST_SKIP() << "no C compiler: nothing to compare with";
  constexpr int kKernels = 80;
  const std::vector<DType> in = RandomTree::inputs();
  for (int lanes : {8, 16}) {
    if (!has_lanes(lanes)) continue;
    RandomTree tree(1234 + lanes);
    std::vector<UOp> sinks;
    std::vector<DType> outs;
    for (int k = 0; k < kKernels; k++) {
      DType out = std::vector<DType>{dtypes::float32, dtypes::int32, dtypes::uint32}[k % 3];
      outs.push_back(out);
      auto body = [&](const std::vector<UOp>& x) { return tree.make(out, x); };
      sinks.push_back(vector_kernel(lanes, out, in, body, true));
    }
    std::shared_ptr<LoadedObject> object;
    std::vector<CpuKernelFn> clang_fns = compile_clang_all(sinks, &object);
    std::vector<std::vector<uint32_t>> inputs;
    for (size_t k = 0; k < in.size(); k++) inputs.push_back(lanes_of(in[k], 101 + 7 * k));
    for (int k = 0; k < kKernels; k++) {
      SCOPED_TRACE("random kernel " + std::to_string(k) + ", " + std::to_string(lanes) + " lanes");
      std::string listing;
      Loaded x86 = compile_x86(sinks[k], lanes, &listing);
      std::vector<uint32_t> want(kElements, 0xDEADBEEF), got(kElements, 0xDEADBEEF);
      std::vector<void*> bufs{want.data()};
      for (auto& v : inputs) bufs.push_back(v.data());
      clang_fns[k](bufs.data(), nullptr, 0, 1);
      bufs[0] = got.data();
      x86.fn(bufs.data(), nullptr, 0, 1);
      for (int i = 0; i < kElements; i++) {
        bool both_nan = outs[k] == dtypes::float32 && std::isnan(std::bit_cast<float>(got[i])) &&
                        std::isnan(std::bit_cast<float>(want[i]));
        if (got[i] == want[i] || both_nan) continue;
        ADD_FAILURE() << "element " << i << ": x86 0x" << std::hex << got[i] << ", clang 0x" << want[i] << "\n"
                      << render_c("kernel_vsel", sinks[k], linearize(sinks[k])) << "\n" << listing;
        break;
      }
    }
  }
}

// Random reductions of 512 elements with random terms (RandomTree), lowered late: either vector accumulators,
// out[c] = R1_k t(k, c) combined with R2_k t'(k, c) (R: ADD, MUL or MAX; a float sum fuses a product term), or lane
// folds, out[r] = R_{k, v} t(r, k, v) (a vector accumulator over k, its lanes folded in order into a scalar).
UOp random_reduce_kernel(int lanes, DType out_dt, RandomTree& tree, std::mt19937& g, bool fold) {
  constexpr int kRows = 8, kCols = 64;
  std::vector<DType> in = RandomTree::inputs();
  const int64_t outs = fold ? kRows * kCols / (kRows * lanes) : kCols;
  UOp out = UOp::make(Ops::PARAM, out_dt, {}, ParamArg{0, AddrSpace::GLOBAL, "out", 0, outs - 1});
  UOp n = UOp::range(fold ? outs : kCols / lanes, 0);
  UOp v = UOp::range(lanes, 1, AxisType::VECTOR);
  UOp k = UOp::range(kRows, 2, AxisType::REDUCE);
  UOp i = fold ? (n * kRows + k) * lanes + v : k * kCols + n * lanes + v;
  std::vector<UOp> loads;
  for (size_t s = 0; s < in.size(); s++) {
    ParamArg arg{static_cast<int64_t>(s + 1), AddrSpace::GLOBAL, "in", 0, kRows * kCols - 1};
    UOp p = UOp::make(Ops::PARAM, in[s], {}, arg);
    loads.push_back(UOp::make(Ops::LOAD, in[s], {UOp::make(Ops::INDEX, in[s], {p, i})}));
  }
  auto reduce_op = [&] { return std::vector<Ops>{Ops::ADD, Ops::MUL, Ops::MAX}[g() % 3]; };
  // a term that varies with the lanes (a tree may be a constant): one load of its type added in
  const UOp& lane_load = out_dt == dtypes::float32 ? loads[0] : out_dt == dtypes::int32 ? loads[3] : loads[5];
  auto term = [&] {
    if (out_dt == dtypes::float32 && g() % 2 == 0)
      return tree.make(out_dt, loads) * (tree.make(out_dt, loads) + lane_load);
    return tree.make(out_dt, loads) + lane_load;
  };
  UOp value, store_index;
  if (fold) {  // a REDUCE over the VECTOR range: a vector accumulator over k, its lanes folded in order
    value = UOp::make(Ops::REDUCE, out_dt, {term(), k, v}, ReduceArg{reduce_op(), {}});
    store_index = n;
  } else {
    UOp a = UOp::make(Ops::REDUCE, out_dt, {term(), k}, ReduceArg{reduce_op(), {}});
    UOp b = UOp::make(Ops::REDUCE, out_dt, {term(), k}, ReduceArg{reduce_op(), {}});
    value = out_dt == dtypes::float32 ? a + b : a ^ b;
    store_index = n * lanes + v;
  }
  UOp store = UOp::make(Ops::STORE, dtypes::void_, {UOp::make(Ops::INDEX, out_dt, {out, store_index}), value});
  UOp end = fold ? UOp::make(Ops::END, dtypes::void_, {store, n}) : UOp::make(Ops::END, dtypes::void_, {store, n, v});
  UOp sink = UOp::make(Ops::SINK, dtypes::void_, {end});
  sink = lower_late(sink, c_lowering_options());
  std::string why;
  std::optional<UOp> vec = vectorize_kernel(sink, &why);
  if (!vec) throw std::runtime_error("the test kernel is not a vector kernel: " + why);
  return *vec;
}

TEST(IselVectorAgainstClang, RandomReductionKernelsGiveClangsBits) {
  if (!find_c_compiler()) GTEST_SKIP() << "no C compiler: nothing to compare with";
  constexpr int kKernels = 40;
  const std::vector<DType> in = RandomTree::inputs();
  for (int lanes : {8, 16}) {
    if (!has_lanes(lanes)) continue;
    RandomTree tree(777 + lanes);
    std::mt19937 g(555 + lanes);
    std::vector<UOp> sinks;
    std::vector<DType> outs;
    for (int k = 0; k < kKernels; k++) {
      DType out = std::vector<DType>{dtypes::float32, dtypes::int32, dtypes::uint32}[k % 3];
      outs.push_back(out);
      sinks.push_back(random_reduce_kernel(lanes, out, tree, g, k % 2 == 1));
    }
    std::shared_ptr<LoadedObject> object;
    std::vector<CpuKernelFn> clang_fns = compile_clang_all(sinks, &object);
    std::vector<std::vector<uint32_t>> inputs;
    for (size_t s = 0; s < in.size(); s++) inputs.push_back(lanes_of(in[s], 303 + 7 * s, false, false, 512));
    for (int k = 0; k < kKernels; k++) {
      SCOPED_TRACE("random reduction kernel " + std::to_string(k) + ", " + std::to_string(lanes) + " lanes");
      std::string listing;
      Loaded x86 = compile_x86(sinks[k], lanes, &listing);
      std::vector<uint32_t> want(64, 0xDEADBEEF), got(64, 0xDEADBEEF);
      std::vector<void*> bufs{want.data()};
      for (auto& v : inputs) bufs.push_back(v.data());
      clang_fns[k](bufs.data(), nullptr, 0, 1);
      bufs[0] = got.data();
      x86.fn(bufs.data(), nullptr, 0, 1);
      ASSERT_NE(want[0], 0xDEADBEEF) << "clang's kernel wrote its output";
      for (size_t i = 0; i < want.size(); i++) {
        bool both_nan = outs[k] == dtypes::float32 && std::isnan(std::bit_cast<float>(got[i])) &&
                        std::isnan(std::bit_cast<float>(want[i]));
        if (got[i] == want[i] || both_nan) continue;
        ADD_FAILURE() << "element " << i << ": x86 0x" << std::hex << got[i] << ", clang 0x" << want[i] << "\n"
                      << render_c("kernel_vsel", sinks[k], linearize(sinks[k])) << "\n" << listing;
        break;
      }
    }
  }
}

}  // namespace
}  // namespace doorbell::x86
