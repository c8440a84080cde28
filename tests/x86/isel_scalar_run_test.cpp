// Scalar kernels selected by compiler/x86/isel.h, allocated (regalloc.h), assembled (x86_encoder.h) and run, against
// the same kernels through the C renderer and clang (compile_kernel): every scalar op for every dtype on edge values
// (0, +-1, min, max, NaN, +-inf, -0.0, denormals), byte for byte, on one core and split over three.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <iostream>

#include "compiler/cpu/cpu_target.h"
#include "compiler/cpu/elf_loader.h"
#include "compiler/linearize.h"
#include "compiler/x86/isel.h"
#include "compiler/x86/regalloc.h"
#include "compiler/x86/x86_encoder.h"
#include "tests/compiler/compiled_kernel_util.h"

namespace doorbell::x86 {
namespace {

using namespace test;  // NOLINT: the compiler tests' helpers

X86Features test_features(bool avx512) {
  X86Features f;
  f.avx2 = f.fma = f.f16c = true;
  f.avx512f = f.avx512vl = f.avx512dq = f.avx512bw = avx512 && __builtin_cpu_supports("avx512f");
  return f;
}

struct X86Kernel {
  std::shared_ptr<LoadedObject> object;
  CpuKernelFn fn = nullptr;
  std::string listing;
};

// The x86 path without the target: the kernel lowered as for C without the optimizer (scalar values), selected,
// allocated, printed, assembled and loaded.
X86Kernel compile_x86(const UOp& sink, bool avx512 = false, bool optimize = false) {
  LoweredKernel k = cpu_c_target().lower(sink, optimize);
  std::vector<Statement> st = linearize(k.sink);
  IselOptions o;
  o.features = test_features(avx512 || optimize);
  // as the x86 target: 16 lanes (and 32 vector registers) only with AVX-512
  o.vector_lanes = optimize ? cpu_c_target().options().vector_lanes : o.features.avx512f ? 16 : 8;
  AllocationOptions alloc;
  alloc.vec_registers = o.vector_lanes == 16 && o.features.avx512f ? 32 : 16;
  MachineFunction mf = select_instructions("x86_kernel", k, st, o);
  allocate_registers(mf, alloc);
  X86Kernel out;
  out.listing = print_listing(mf);
  if (std::getenv("X86_DUMP")) std::cout << out.listing << "\n";  // for debugging: the allocated listing
  out.object = LoadedObject::load(write_elf_object(assemble(out.listing)));
  out.fn = reinterpret_cast<CpuKernelFn>(out.object->symbol("x86_kernel"));
  return out;
}

using Bytes = std::vector<std::byte>;

void run(CpuKernelFn fn, std::vector<Bytes>& bufs, int cores) {
  std::vector<void*> p;
  for (Bytes& b : bufs) p.push_back(b.data());
  for (int c = 0; c < cores; c++) fn(p.data(), nullptr, c, cores);
}

// Runs the kernel through clang and through the x86 path on copies of `bufs` (slot order) and compares every byte.
void expect_same_as_clang(const UOp& sink, const std::vector<Bytes>& bufs, const std::string& what, bool avx512 = false) {
  CompiledKernel c = compile_kernel(sink);
  X86Kernel x;
  try {
    x = compile_x86(sink, avx512);
  } catch (const std::exception& e) {
    ADD_FAILURE() << what << ": " << e.what();
    return;
  }
  for (int cores : {1, 3}) {
    std::vector<Bytes> want = bufs, got = bufs;
    run(c.fn, want, cores);
    run(x.fn, got, cores);
    for (size_t b = 0; b < bufs.size(); b++) {
      if (want[b] == got[b]) continue;
      size_t at = 0;
      while (want[b][at] == got[b][at]) at++;
      ADD_FAILURE() << what << " on " << cores << " core(s): buffer " << b << " differs first at byte " << at << "\n"
                    << c.program.src(2).arg_as<std::string>() << "\n" << x.listing;
      return;
    }
  }
}

// Edge values of a dtype as doubles / integers (stored form).
std::vector<ConstValue> edge_values(DType d) {
  std::vector<ConstValue> v;
  if (d.is_bool()) return {false, true};
  if (d.is_float()) {
    double inf = std::numeric_limits<double>::infinity();
    double big = d.scalar_type == ScalarType::Float16 ? 65504 : d.scalar_type == ScalarType::Float32 || d.scalar_type == ScalarType::BFloat16 ? 3.4028234663852886e38 : 1.7976931348623157e308;
    double tiny = d.scalar_type == ScalarType::Float16 ? 5.960464477539063e-08 : (d.scalar_type == ScalarType::Float64) ? 4.9406564584124654e-324 : 1.401298464324817e-45;
    for (double x : {0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.75, 100.0, -7.0, inf, -inf, std::nan(""), big, -big, tiny, 1e10, -3e9, 2.5e19, 1.9e19})
      v.push_back(round_to_float_dtype(d, x));
    return v;
  }
  __int128 lo = int_min(d), hi = int_max(d);
  for (__int128 x : {__int128{0}, __int128{1}, __int128{-1}, __int128{2}, __int128{7}, __int128{-8}, __int128{100}, lo, hi, lo + 1, hi - 1, __int128{31}, __int128{-3}})
    if (x >= lo && x <= hi) v.push_back(wrap_int(d, x));
  return v;
}

void put(Bytes& b, size_t i, DType d, const ConstValue& v) {
  size_t size = static_cast<size_t>(d.itemsize());
  std::byte* p = b.data() + i * size;
  if (d.is_bool()) { uint8_t x = std::get<bool>(v); std::memcpy(p, &x, 1); return; }
  if (d.is_float()) {
    double x = std::get<double>(v);
    if (d.scalar_type == ScalarType::Float64) std::memcpy(p, &x, 8);
    else if (d.scalar_type == ScalarType::Float32) { float f = static_cast<float>(x); std::memcpy(p, &f, 4); }
    else if (d.scalar_type == ScalarType::Float16) { uint16_t h = float_to_half_bits(static_cast<float>(x)); std::memcpy(p, &h, 2); }
    else { uint16_t h = float_to_bfloat16_bits(static_cast<float>(x)); std::memcpy(p, &h, 2); }
    return;
  }
  int64_t x = std::get<int64_t>(v);
  std::memcpy(p, &x, size);  // little-endian: the low bytes
}

UOp param(int64_t slot, DType d, int64_t n) { return UOp::make(Ops::PARAM, d, {}, ParamArg{slot, AddrSpace::GLOBAL, "", 0, n - 1}); }

// An element of a buffer as exec_alu's value of its dtype.
ConstValue get(const Bytes& b, size_t i, DType d) {
  const std::byte* p = b.data() + i * static_cast<size_t>(d.itemsize());
  if (d.is_bool()) return std::to_integer<uint8_t>(p[0]) != 0;
  if (d.is_float()) return test::element_as_double(d, p);
  uint64_t x = 0;
  std::memcpy(&x, p, static_cast<size_t>(d.itemsize()));
  return wrap_int(d, static_cast<__int128>(x));
}

bool same_value(DType d, const ConstValue& a, const ConstValue& b) {
  if (d.is_float()) {
    double x = std::get<double>(a), y = std::get<double>(b);
    return (std::isnan(x) && std::isnan(y)) || std::bit_cast<uint64_t>(x) == std::bit_cast<uint64_t>(y);
  }
  return a == b;
}

using Builder = std::function<UOp(const std::vector<UOp>& loads, const UOp& range, const std::vector<UOp>& inputs)>;
struct Output {
  DType dtype;
  Builder value;
};

// One kernel over every combination of the inputs' edge values (dtypes `ins`): out_k[i] = outs[k].value(in0[i], ...),
// the outputs in slots 0..K-1 sharing one loop, the inputs after them. `args` holds each element's inputs as stored.
struct GridKernel {
  UOp sink;
  std::vector<Bytes> bufs;
  size_t n = 1;
  std::vector<std::vector<ConstValue>> args;
};
GridKernel grid_kernel(const std::vector<DType>& ins, const std::vector<Output>& outs) {
  GridKernel g;
  std::vector<std::vector<ConstValue>> edges;
  for (DType d : ins) edges.push_back(edge_values(d)), g.n *= edges.back().size();
  const int64_t n = static_cast<int64_t>(g.n);
  UOp r = UOp::range(n, 0);
  for (const Output& o : outs) g.bufs.emplace_back(g.n * static_cast<size_t>(o.dtype.itemsize()), std::byte{0xA5});
  std::vector<UOp> loads, inputs;
  for (size_t k = 0; k < ins.size(); k++) {
    UOp p = param(static_cast<int64_t>(outs.size() + k), ins[k], n);
    inputs.push_back(p);
    loads.push_back(UOp::make(Ops::LOAD, ins[k], {UOp::make(Ops::INDEX, ins[k], {p, r})}));
    g.bufs.emplace_back(g.n * static_cast<size_t>(ins[k].itemsize()));
  }
  g.args.resize(g.n);
  for (size_t i = 0; i < g.n; i++) {
    size_t rest = i;
    g.args[i].resize(ins.size());
    for (size_t k = ins.size(); k-- > 0;) {
      Bytes& b = g.bufs[outs.size() + k];
      put(b, i, ins[k], edges[k][rest % edges[k].size()]);
      g.args[i][k] = get(b, i, ins[k]);  // as stored (16-bit floats rounded)
      rest /= edges[k].size();
    }
  }
  std::vector<UOp> stores;
  for (size_t k = 0; k < outs.size(); k++)
    stores.push_back(UOp::make(Ops::STORE, dtypes::void_, {UOp::make(Ops::INDEX, outs[k].dtype, {param(static_cast<int64_t>(k), outs[k].dtype, n), r}),
                                                           outs[k].value(loads, r, inputs)}));
  UOp body = stores.size() == 1 ? stores[0] : UOp::make(Ops::GROUP, dtypes::void_, stores);
  g.sink = UOp::sink({UOp::make(Ops::END, dtypes::void_, {body, r})});
  return g;
}

void check_values(const std::vector<DType>& ins, const std::vector<Output>& outs, const std::string& what) {
  GridKernel g = grid_kernel(ins, outs);
  expect_same_as_clang(g.sink, g.bufs, what);
  if (__builtin_cpu_supports("avx512f")) expect_same_as_clang(g.sink, g.bufs, what + " (avx512f)", true);
}

// out[i] = value(in0[i], in1[i], ...) over every combination of the inputs' edge values; `value` makes the stored
// node from the loads (and the range and input buffers, for gates).
void check_values(DType out, const std::vector<DType>& ins, const Builder& value, const std::string& what) {
  check_values(ins, {Output{out, value}}, what);
}

std::string show(const ConstValue& v) {
  if (std::holds_alternative<double>(v)) return std::to_string(std::get<double>(v));
  if (std::holds_alternative<bool>(v)) return std::get<bool>(v) ? "true" : "false";
  return std::to_string(std::get<int64_t>(v));
}

// Each (op, result dtype) of `ops` on every combination of edge values of `ins`, all in one kernel: the x86 code's
// results equal clang's byte for byte and exec_alu's values (float32 and narrower EXP2 / LOG2 / SIN are
// compiler/transcendental.h's float32 approximations, not exec_alu's double results: those are compared with clang
// only).
void check_ops(const std::vector<std::pair<Ops, DType>>& ops, const std::vector<DType>& ins) {
  std::string what = "of";
  for (DType d : ins) what += " " + d.name();
  std::vector<Output> outs;
  for (const auto& [op, out] : ops) {
    Ops o = op;
    DType t = out;
    outs.push_back(Output{t, [o, t](const std::vector<UOp>& s, const UOp&, const std::vector<UOp>&) { return UOp::make(o, t, s); }});
    what = std::string(op_name(op)) + "->" + out.name() + " " + what;
  }
  check_values(ins, outs, what);
  GridKernel g = grid_kernel(ins, outs);
  X86Kernel x = compile_x86(g.sink);
  run(x.fn, g.bufs, 1);
  for (size_t k = 0; k < ops.size(); k++) {
    auto [op, out] = ops[k];
    if ((op == Ops::EXP2 || op == Ops::LOG2 || op == Ops::SIN) && !(out == dtypes::float64)) continue;
    int wrong = 0;
    for (size_t i = 0; i < g.n && wrong < 3; i++) {
      std::optional<ConstValue> want = exec_alu(op, out, g.args[i], ins);
      ASSERT_TRUE(want.has_value()) << what;
      ConstValue got = get(g.bufs[k], i, out);
      if (same_value(out, got, *want)) continue;
      wrong++;
      std::string in;
      for (const ConstValue& a : g.args[i]) in += " " + show(a);
      ADD_FAILURE() << op_name(op) << " -> " << out.name() << " of" << in << ": x86 gives " << show(got) << ", exec_alu " << show(*want);
    }
  }
}

void check_op(Ops op, DType out, const std::vector<DType>& ins) { check_ops({{op, out}}, ins); }

const std::vector<DType> kInts = {dtypes::int8, dtypes::int16, dtypes::int32, dtypes::int64,
                                  dtypes::uint8, dtypes::uint16, dtypes::uint32, dtypes::uint64};
const std::vector<DType> kFloats = {dtypes::float16, dtypes::bfloat16, dtypes::float32, dtypes::float64};

TEST(IselScalarRun, IntegerArithmeticOfEveryWidthMatchesClang) {
  SKIP_WITHOUT_C_COMPILER();
  for (DType d : kInts) {
    std::vector<std::pair<Ops, DType>> ops;
    for (Ops op : {Ops::ADD, Ops::SUB, Ops::MUL, Ops::MAX, Ops::AND, Ops::OR, Ops::XOR, Ops::CDIV, Ops::CMOD, Ops::SHL, Ops::SHR}) ops.emplace_back(op, d);
    check_ops(ops, {d, d});
    check_op(Ops::NEG, d, {d});
    check_op(Ops::MULACC, d, {d, d, d});
  }
}

TEST(IselScalarRun, ComparesOfEveryDtypeMatchClang) {
  SKIP_WITHOUT_C_COMPILER();
  std::vector<DType> all = kInts;
  all.insert(all.end(), kFloats.begin(), kFloats.end());
  all.push_back(dtypes::bool_);
  for (DType d : all)
    check_ops({{Ops::CMPLT, dtypes::bool_}, {Ops::CMPNE, dtypes::bool_}, {Ops::CMPEQ, dtypes::bool_}}, {d, d});
}

TEST(IselScalarRun, BoolOpsMatchClang) {
  SKIP_WITHOUT_C_COMPILER();
  std::vector<std::pair<Ops, DType>> ops;
  for (Ops op : {Ops::ADD, Ops::MUL, Ops::MAX, Ops::AND, Ops::OR, Ops::XOR}) ops.emplace_back(op, dtypes::bool_);
  check_ops(ops, {dtypes::bool_, dtypes::bool_});
  check_op(Ops::MULACC, dtypes::bool_, {dtypes::bool_, dtypes::bool_, dtypes::bool_});
}

TEST(IselScalarRun, FloatArithmeticMatchesClang) {
  SKIP_WITHOUT_C_COMPILER();
  for (DType d : kFloats) {
    std::vector<std::pair<Ops, DType>> binary, unary;
    for (Ops op : {Ops::ADD, Ops::SUB, Ops::MUL, Ops::FDIV, Ops::MAX, Ops::POW}) binary.emplace_back(op, d);
    for (Ops op : {Ops::NEG, Ops::TRUNC, Ops::SQRT, Ops::RECIPROCAL, Ops::EXP2, Ops::LOG2, Ops::SIN}) unary.emplace_back(op, d);
    check_ops(binary, {d, d});
    check_ops(unary, {d});
    check_op(Ops::MULACC, d, {d, d, d});
  }
}

// (p < q) ? q : p, (p < q) ? p : q (selected as vmaxss / vminss, vmaxsd / vminsd) and relu's (0 < x) ? x : 0 on
// every pair of edge values (NaN, +-0, +-inf, denormals): clang's bytes.
TEST(IselScalarRun, WhereOfACompareOfItsOwnOperandsMatchesClang) {
  SKIP_WITHOUT_C_COMPILER();
  for (DType d : {dtypes::float32, dtypes::float64}) {
    auto where = [d](bool max) {
      return [d, max](const std::vector<UOp>& s, const UOp&, const std::vector<UOp>&) {
        UOp lt = UOp::make(Ops::CMPLT, dtypes::bool_, {s[0], s[1]});
        return UOp::make(Ops::WHERE, d, {lt, max ? s[1] : s[0], max ? s[0] : s[1]});
      };
    };
    check_values(d, {d, d}, where(true), "(p < q) ? q : p of " + d.name());
    check_values(d, {d, d}, where(false), "(p < q) ? p : q of " + d.name());
    check_values(d, {d}, [d](const std::vector<UOp>& s, const UOp&, const std::vector<UOp>&) {
      UOp zero = UOp::const_(d, ConstValue{0.0});
      return UOp::make(Ops::WHERE, d, {UOp::make(Ops::CMPLT, dtypes::bool_, {zero, s[0]}), s[0], zero});
    }, "relu of " + d.name());
  }
}

TEST(IselScalarRun, WhereOfEveryDtypeMatchesClang) {
  SKIP_WITHOUT_C_COMPILER();
  std::vector<DType> all = kInts;
  all.insert(all.end(), kFloats.begin(), kFloats.end());
  all.push_back(dtypes::bool_);
  for (DType d : all) check_op(Ops::WHERE, d, {dtypes::bool_, d, d});
}

TEST(IselScalarRun, CastsBetweenEveryPairOfDtypesMatchClang) {
  SKIP_WITHOUT_C_COMPILER();
  std::vector<DType> all = kInts;
  all.insert(all.end(), kFloats.begin(), kFloats.end());
  all.push_back(dtypes::bool_);
  for (DType from : all) {
    std::vector<std::pair<Ops, DType>> casts;
    for (DType to : all)
      if (!(from == to)) casts.emplace_back(Ops::CAST, to);
    check_ops(casts, {from});
  }
}

TEST(IselScalarRun, BitcastsBetweenDtypesOfOneSizeMatchClang) {
  SKIP_WITHOUT_C_COMPILER();
  std::vector<DType> all = kInts;
  all.insert(all.end(), kFloats.begin(), kFloats.end());
  for (DType from : all) {
    std::vector<std::pair<Ops, DType>> casts;
    for (DType to : all)
      if (!(from == to) && from.itemsize() == to.itemsize()) casts.emplace_back(Ops::BITCAST, to);
    if (!casts.empty()) check_ops(casts, {from});
  }
}

}  // namespace
}  // namespace doorbell::x86

namespace doorbell::x86 {
namespace {

// Schedules `outputs` and runs every kernel through clang and through the x86 path (scalar: no optimizer) on the same
// initial buffers, on 1 and 3 cores: every byte of every buffer must match.
void expect_schedule_same_as_clang(const std::vector<Tensor>& outputs, const std::string& what, bool optimize = false) {
  NooptScope noopt(!optimize);
  ReferenceRun r = run_reference(outputs);
  for (int cores : {1, 3}) {
    restore(r.buffers, r.initial);
    run_compiled(r.linear, cores);
    Snapshot want = snapshot(r.buffers);
    restore(r.buffers, r.initial);
    std::string listings;
    for (const UOp& call : r.linear.src()) {
      X86Kernel k;
      try {
        k = compile_x86(call.src(0), false, optimize);
      } catch (const std::exception& e) {
        ADD_FAILURE() << what << ": " << e.what();
        return;
      }
      listings += k.listing + "\n";
      std::vector<void*> bufs;
      for (size_t i = 1; i < call.src().size(); i++) bufs.push_back(buffer_bytes(call.src(i)).data());
      for (int c = 0; c < cores; c++) k.fn(bufs.data(), nullptr, c, cores);
    }
    Snapshot got = snapshot(r.buffers);
    for (size_t b = 0; b < got.size(); b++)
      EXPECT_TRUE(got[b] == want[b]) << what << " on " << cores << " core(s): buffer " << b << " differs\n" << listings;
  }
}

TEST(IselScalarRun, ReductionsOfEveryDtypeMatchClang) {
  SKIP_WITHOUT_C_COMPILER();
  Tensor f(random_floats(7 * 13, 3), {7, 13});
  for (DType d : {dtypes::float32, dtypes::float64, dtypes::float16, dtypes::bfloat16}) {
    Tensor x = f.cast(d);
    expect_schedule_same_as_clang({x.sum(1), x.max(0), x.sum(), x.max(), x.prod(1)}, "reductions of " + d.name());
  }
  std::vector<int32_t> iv;
  for (int i = 0; i < 6 * 5; i++) iv.push_back((i * 37) % 23 - 11);
  Tensor i(iv, {6, 5});
  for (DType d : {dtypes::int8, dtypes::int16, dtypes::int32, dtypes::int64, dtypes::uint8, dtypes::uint16, dtypes::uint32, dtypes::uint64}) {
    Tensor x = i.cast(d);
    expect_schedule_same_as_clang({x.sum(1), x.max(0), x.prod(1), x.min(1)}, "reductions of " + d.name());
  }
  expect_schedule_same_as_clang({(i > 0).any(), (i > -5).all(), (i < 0).sum()}, "bool reductions");
}

TEST(IselScalarRun, PaddingMatmulSoftmaxAndIndexingMatchClang) {
  SKIP_WITHOUT_C_COMPILER();
  Tensor a(random_floats(5 * 7, 4), {5, 7}), b(random_floats(7 * 3, 5), {7, 3});
  expect_schedule_same_as_clang({a.matmul(b)}, "matmul");
  expect_schedule_same_as_clang({a.softmax(1), a.log_softmax(0)}, "softmax");
  expect_schedule_same_as_clang({a.pad({{1, 2}, {0, 3}}, 1.5f), a.shrink({{1, 4}, {2, 6}}) * 2}, "pad and shrink");
  expect_schedule_same_as_clang({a.argmax(1), a.cumsum(1), (a < b.sum()).where(a, -a)}, "argmax, cumsum, where");
  Tensor i(std::vector<int32_t>{5, -3, 7, 0, -9, 12}, {2, 3});
  expect_schedule_same_as_clang({i.floordiv(Tensor(std::vector<int32_t>{2, -2, 3}, {3})), i.mod(Tensor(std::vector<int32_t>{4, 5, -3}, {3})),
                                 i.lshift(Tensor(std::vector<int32_t>{1, 31, 3}, {3})), i.rshift(Tensor(std::vector<int32_t>{1, 2, 30}, {3}))},
                                "integer division and shifts");
}

}  // namespace
}  // namespace doorbell::x86

namespace doorbell::x86 {
namespace {

const std::vector<DType> kAll = {dtypes::int8, dtypes::int16, dtypes::int32, dtypes::int64, dtypes::uint8, dtypes::uint16,
                                 dtypes::uint32, dtypes::uint64, dtypes::float16, dtypes::bfloat16, dtypes::float32,
                                 dtypes::float64, dtypes::bool_};

TEST(IselScalarRun, AWhereOfACompareSelectsAsClangForEveryDtype) {
  SKIP_WITHOUT_C_COMPILER();
  for (DType d : kAll) {
    std::vector<Output> outs;
    for (Ops cmp : {Ops::CMPLT, Ops::CMPNE, Ops::CMPEQ}) {
      // the compare is read only by the WHERE: re-emitted as flags at it
      outs.push_back(Output{d, [d, cmp](const std::vector<UOp>& s, const UOp&, const std::vector<UOp>&) {
        return UOp::make(Ops::WHERE, d, {UOp::make(cmp, dtypes::bool_, {s[0], s[1]}), s[0], s[1]});
      }});
      // ... and also combined: kept as a 0/1 value
      outs.push_back(Output{d, [d, cmp](const std::vector<UOp>& s, const UOp&, const std::vector<UOp>&) {
        UOp c = UOp::make(cmp, dtypes::bool_, {s[0], s[1]});
        UOp w = UOp::make(Ops::WHERE, d, {c, s[0], s[1]});
        return UOp::make(Ops::WHERE, d, {UOp::make(Ops::XOR, dtypes::bool_, {c, UOp::const_(dtypes::bool_, true)}), s[1], w});
      }});
    }
    check_values({d, d}, outs, "compares selecting " + d.name() + ", alone and also as values");
  }
  // a float compare selecting integers, an integer compare selecting floats
  check_values(dtypes::int32, {dtypes::float32, dtypes::float32, dtypes::int32}, [](const std::vector<UOp>& s, const UOp&, const std::vector<UOp>&) {
    return UOp::make(Ops::WHERE, dtypes::int32, {UOp::make(Ops::CMPNE, dtypes::bool_, {s[0], s[1]}), s[2], UOp::const_(dtypes::int32, int64_t{-7})});
  }, "float compare selecting int32");
  check_values(dtypes::float64, {dtypes::uint16, dtypes::uint16, dtypes::float64}, [](const std::vector<UOp>& s, const UOp&, const std::vector<UOp>&) {
    return UOp::make(Ops::WHERE, dtypes::float64, {UOp::make(Ops::CMPLT, dtypes::bool_, {s[0], s[1]}), s[2], UOp::const_(dtypes::float64, 2.5)});
  }, "uint16 compare selecting float64");
  check_values(dtypes::float32, {dtypes::float64, dtypes::float64, dtypes::float32}, [](const std::vector<UOp>& s, const UOp&, const std::vector<UOp>&) {
    return UOp::make(Ops::WHERE, dtypes::float32, {UOp::make(Ops::CMPEQ, dtypes::bool_, {s[0], s[1]}), s[2], UOp::const_(dtypes::float32, -1.0)});
  }, "float64 compare selecting float32");
  check_values(dtypes::float64, {dtypes::float32, dtypes::float32, dtypes::float64}, [](const std::vector<UOp>& s, const UOp&, const std::vector<UOp>&) {
    return UOp::make(Ops::WHERE, dtypes::float64, {UOp::make(Ops::CMPLT, dtypes::bool_, {s[0], s[1]}), s[2], UOp::const_(dtypes::float64, -1.0)});
  }, "float32 compare selecting float64");
}

TEST(IselScalarRun, LoadsAndStoresGatedByDataCompareMatchClang) {
  SKIP_WITHOUT_C_COMPILER();
  for (DType d : kAll) {
    // x[i] loaded only where a[i] < b[i] (a float compare gate), 0 elsewhere
    check_values(d, {dtypes::float32, dtypes::float32, d}, [&](const std::vector<UOp>& s, const UOp& r, const std::vector<UOp>& p) {
      UOp gate = UOp::make(Ops::CMPLT, dtypes::bool_, {s[0], s[1]});
      return UOp::make(Ops::LOAD, d, {UOp::make(Ops::INDEX, d, {p[2], r, gate})});
    }, "load of " + d.name() + " gated by a float compare");
    // ... and by an integer compare that a WHERE reads too
    check_values(d, {dtypes::int16, d}, [&](const std::vector<UOp>& s, const UOp& r, const std::vector<UOp>& p) {
      UOp gate = UOp::make(Ops::CMPNE, dtypes::bool_, {s[0], UOp::const_(dtypes::int16, int64_t{7})});
      UOp l = UOp::make(Ops::LOAD, d, {UOp::make(Ops::INDEX, d, {p[1], r, gate})});
      return UOp::make(Ops::WHERE, d, {gate, l, s[1]});
    }, "load of " + d.name() + " gated by an int16 compare");
  }
}

UOp end_of(const UOp& store, const UOp& r) { return UOp::make(Ops::END, dtypes::void_, {store, r}); }

TEST(IselScalarRun, AGatedStoreWritesOnlyWhereItsGateHolds) {
  SKIP_WITHOUT_C_COMPILER();
  for (DType d : {dtypes::float32, dtypes::int8, dtypes::float16, dtypes::uint64}) {
    UOp out = param(0, d, 8), in = param(1, dtypes::int32, 8);
    UOp r = UOp::range(8, 0);
    UOp x = UOp::make(Ops::LOAD, dtypes::int32, {UOp::make(Ops::INDEX, dtypes::int32, {in, r})});
    UOp gate = UOp::make(Ops::CMPLT, dtypes::bool_, {x, UOp::const_(dtypes::int32, int64_t{3})});
    UOp store = UOp::make(Ops::STORE, dtypes::void_, {UOp::make(Ops::INDEX, d, {out, r, gate}), x.cast(d)});
    std::vector<Bytes> bufs{Bytes(8 * static_cast<size_t>(d.itemsize()), std::byte{0x5A}), Bytes(32)};
    int32_t v[8] = {0, 5, -2, 3, 2, 100, -100, 4};
    std::memcpy(bufs[1].data(), v, 32);
    expect_same_as_clang(UOp::sink({end_of(store, r)}), bufs, "gated store of " + d.name());
  }
}

TEST(IselScalarRun, AStoreOutsideTheSplitLoopIsDoneByCoreZeroOnly) {
  SKIP_WITHOUT_C_COMPILER();
  UOp out = param(0, dtypes::int32, 10), count = param(1, dtypes::int32, 1);
  UOp r = UOp::range(10, 0);
  UOp s1 = UOp::make(Ops::STORE, dtypes::void_, {UOp::make(Ops::INDEX, dtypes::int32, {out, r}), r.cast(dtypes::int32)});
  UOp c = UOp::make(Ops::LOAD, dtypes::int32, {UOp::make(Ops::INDEX, dtypes::int32, {count, UOp::const_(dtypes::weakint, int64_t{0})})});
  UOp s2 = UOp::make(Ops::STORE, dtypes::void_, {UOp::make(Ops::INDEX, dtypes::int32, {count, UOp::const_(dtypes::weakint, int64_t{0})}),
                                                 UOp::make(Ops::ADD, dtypes::int32, {c, UOp::const_(dtypes::int32, int64_t{1})})});
  UOp sink = UOp::sink({end_of(s1, r), s2});
  std::vector<Statement> st = linearize(cpu_c_target().lower(sink, false).sink);
  bool split = false;
  for (const Statement& s : st) split |= s.kind == StatementKind::BEGIN_LOOP && s.split;
  ASSERT_TRUE(split);
  std::vector<Bytes> bufs{Bytes(40), Bytes(4)};
  expect_same_as_clang(sink, bufs, "a count incremented outside the split loop");
  X86Kernel k = compile_x86(sink);
  std::vector<Bytes> b = bufs;
  run(k.fn, b, 3);
  int32_t n;
  std::memcpy(&n, b[1].data(), 4);
  EXPECT_EQ(n, 1) << "three cores, one increment\n" << k.listing;
}

TEST(IselScalarRun, AVariableBoundsTheLoopAndEntersTheValue) {
  SKIP_WITHOUT_C_COMPILER();
  UOp n = UOp::variable("n", 0, 16);
  UOp out = param(0, dtypes::int64, 16);
  UOp r = UOp::range(n, 0);
  UOp value = (r * UOp::const_(dtypes::weakint, int64_t{3}) + n).cast(dtypes::int64);
  UOp sink = UOp::sink({end_of(UOp::make(Ops::STORE, dtypes::void_, {UOp::make(Ops::INDEX, dtypes::int64, {out, r}), value}), r)});
  CompiledKernel c = compile_kernel(sink);
  X86Kernel x = compile_x86(sink);
  for (int64_t v : {0, 1, 7, 16})
    for (int cores : {1, 3}) {
      int64_t want[16], got[16];
      std::fill(want, want + 16, -1);
      std::fill(got, got + 16, -1);
      void* pw[1] = {want};
      void* pg[1] = {got};
      for (int core = 0; core < cores; core++) c.fn(pw, &v, core, cores), x.fn(pg, &v, core, cores);
      EXPECT_EQ(std::memcmp(want, got, sizeof want), 0) << "n = " << v << " on " << cores << " core(s)\n" << x.listing;
    }
}

}  // namespace
}  // namespace doorbell::x86


namespace doorbell::x86 {
namespace {

// Ops whose operands are all constants are folded (exec_alu's answer) into immediates, displacements and pool
// constants; the kernel still computes clang's bits.
TEST(IselScalarRun, ConstantSubexpressionsFoldToClangsValues) {
  SKIP_WITHOUT_C_COMPILER();
  for (DType d : kAll) {
    UOp c1 = UOp::const_(d, d.is_float() ? ConstValue(2.75) : d.is_bool() ? ConstValue(true) : ConstValue(int64_t{-3}));
    UOp c2 = UOp::const_(d, d.is_float() ? ConstValue(-0.0) : d.is_bool() ? ConstValue(false) : ConstValue(int64_t{70}));
    Ops mix = d.is_bool() ? Ops::OR : Ops::MUL;
    check_values(d, {d}, [&](const std::vector<UOp>& s, const UOp&, const std::vector<UOp>&) {
      UOp k = UOp::make(mix, d, {c1, c2});                                        // folded
      UOp m = UOp::make(Ops::MAX, d, {UOp::make(Ops::ADD, d, {k, c1}), s[0]});    // a constant operand
      UOp w = UOp::make(Ops::WHERE, d, {UOp::make(Ops::CMPLT, dtypes::bool_, {c2, c1}), m, k});  // a folded condition
      return UOp::make(Ops::CAST, d, {UOp::make(Ops::CAST, dtypes::float32, {w})});
    }, "constant subexpressions of " + d.name());
  }
  // a constant offset: the element at 3 * 2 + 1
  check_values(dtypes::int32, {dtypes::int32}, [](const std::vector<UOp>&, const UOp& r, const std::vector<UOp>& p) {
    UOp off = UOp::make(Ops::ADD, dtypes::weakint, {UOp::make(Ops::MUL, dtypes::weakint, {UOp::const_(dtypes::weakint, int64_t{3}), UOp::const_(dtypes::weakint, int64_t{2})}),
                                                    UOp::const_(dtypes::weakint, int64_t{1})});
    UOp l = UOp::make(Ops::LOAD, dtypes::int32, {UOp::make(Ops::INDEX, dtypes::int32, {p[0], off})});
    return UOp::make(Ops::ADD, dtypes::int32, {l, r.cast(dtypes::int32)});
  }, "a folded offset");
}

}  // namespace
}  // namespace doorbell::x86

namespace doorbell::x86 {
namespace {

// The dispatcher hands vector statements to isel_vector.cpp (the optimizer on: vectors of the machine's width) and
// keeps loops, addresses, scalar folds and accumulators around them.
TEST(IselScalarRun, VectorizedSchedulesMatchClang) {
  SKIP_WITHOUT_C_COMPILER();
  Tensor a(random_floats(5 * 70, 4), {5, 70}), b(random_floats(70 * 33, 5), {70, 33});
  expect_schedule_same_as_clang({a + 1, a * a - a}, "elementwise", true);
  expect_schedule_same_as_clang({a.sum(1), a.max(0), a.sum()}, "reductions", true);
  expect_schedule_same_as_clang({a.matmul(b)}, "matmul", true);
  expect_schedule_same_as_clang({(a < 0.5f).where(a, a * 2), a.pad({{1, 2}, {3, 4}}, 0.5f)}, "where and pad", true);
  Tensor big(random_floats(64 * 256, 6), {64, 256});
  expect_schedule_same_as_clang({big.sum(1), big.max(1), big.softmax(1), big.argmax(1)}, "row reductions", true);
  std::vector<int32_t> iv;
  for (int i = 0; i < 64 * 256; i++) iv.push_back((i * 7919) % 1000 - 500);
  Tensor it(iv, {64, 256});
  expect_schedule_same_as_clang({it.sum(1), it.max(0), (it * 3 + 1).cast(dtypes::float32), (it < 0).where(it, -it)}, "int32 vectors", true);
  expect_schedule_same_as_clang({big.cast(dtypes::int32), big.cast(dtypes::float16).sum(1), big.cumsum(1)}, "casts and scans", true);
}

}  // namespace
}  // namespace doorbell::x86

namespace doorbell::x86 {
namespace {

// Two dozen float values live at once: with AVX-512 the allocator hands out xmm16-31, which VEX cannot encode, so the
// selects, MAX and TRUNC take their EVEX forms (k-register masks, masked vmovss) there.
TEST(IselScalarRun, FloatSelectsMaxAndTruncInTheUpperSixteenRegistersMatchClang) {
  SKIP_WITHOUT_C_COMPILER();
  for (DType d : {dtypes::float32, dtypes::float64}) {
    const int64_t n = 19, k = 24;
    UOp in = param(1, d, n * k), out = param(0, d, n);
    UOp r = UOp::range(n, 0);
    std::vector<UOp> l;
    for (int64_t j = 0; j < k; j++)
      l.push_back(UOp::make(Ops::LOAD, d, {UOp::make(Ops::INDEX, d, {in, r * UOp::const_(dtypes::weakint, k) + UOp::const_(dtypes::weakint, j)})}));
    UOp v = l[k - 1];
    for (int64_t j = k - 2; j >= 0; j--) {
      switch (j % 3) {
        case 0: v = UOp::make(Ops::MAX, d, {l[j], v}); break;
        case 1: v = UOp::make(Ops::WHERE, d, {UOp::make(Ops::CMPLT, dtypes::bool_, {l[j], v}), UOp::make(Ops::TRUNC, d, {l[j]}), v}); break;
        default: v = UOp::make(Ops::WHERE, d, {UOp::make(Ops::CMPNE, dtypes::bool_, {l[j], v}), v, UOp::make(Ops::NEG, d, {l[j]})}); break;
      }
    }
    UOp sink = UOp::sink({UOp::make(Ops::END, dtypes::void_, {UOp::make(Ops::STORE, dtypes::void_, {UOp::make(Ops::INDEX, d, {out, r}), v}), r})});
    std::vector<ConstValue> e = edge_values(d);
    std::vector<Bytes> bufs{Bytes(static_cast<size_t>(n * d.itemsize())), Bytes(static_cast<size_t>(n * k * d.itemsize()))};
    for (size_t i = 0; i < static_cast<size_t>(n * k); i++) put(bufs[1], i, d, e[(i * 7) % e.size()]);
    expect_same_as_clang(sink, bufs, "24 live " + d.name() + " values");
    if (!__builtin_cpu_supports("avx512f")) continue;
    expect_same_as_clang(sink, bufs, "24 live " + d.name() + " values (avx512f)", true);
    std::string listing = compile_x86(sink, true).listing;
    EXPECT_NE(listing.find("xmm2"), std::string::npos) << "the upper registers are in use\n" << listing;
    EXPECT_NE(listing.find("{k"), std::string::npos) << "masked selects\n" << listing;
  }
}

}  // namespace
}  // namespace doorbell::x86
