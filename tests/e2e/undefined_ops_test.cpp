// What C leaves undefined, defined once (ir/exec_alu.h, README "Defined semantics") and computed alike everywhere:
// shifts by amounts outside [0, width), negative ones too; float -> int casts of NaN, +-inf and out-of-range values
// for every integer dtype; integer division and modulo by zero; INT_MIN / -1 and INT_MIN % -1; signed overflow of
// add, sub, mul and neg; int -> narrower int; float -> narrower float overflow. Each case runs
//  - on the test's device (CPU; with ctest's prefixes also NOOPT=1, 8 CPU lanes, and the NV GPU on the mock) with 7
//    elements (the scalar loop) and with 256 (the vector loop of the CPU's optimizer),
//  - on the REF interpreter (the scheduler's kernel run by exec_alu), where the buffers are host memory,
//  - through constant folding (symbolic's fold_constants on CONST operands),
// and each answer must be the defined value written in the case (not computed by the code under test).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <ostream>
#include <limits>
#include <string>
#include <vector>

#include "frontend/tensor.h"
#include "ir/environment.h"
#include "hcq/run_linear.h"
#include "ir/symbolic.h"

namespace doorbell::e2e {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// One op over element pairs; `a` and `b` are values of `in` (b: the second operand, empty for unary ops), `want`
// the defined results in `out`. Integer values are int64_t (uint64 as its bit pattern), float values double.
struct Case {
  std::string name;
  Ops op;
  DType in, out;
  std::vector<ConstValue> a, b, want;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }  // ctest lists the case's name, not its bytes

std::vector<ConstValue> ints(std::initializer_list<int64_t> v) { return {v.begin(), v.end()}; }
std::vector<ConstValue> floats(std::initializer_list<double> v) { return {v.begin(), v.end()}; }

// float -> `to` for the values below: NaN, +inf, -inf, 1e20, -1e20, 300.75, -300.75, -1.5, 65535.9, 2.5.
Case float_to_int(DType from, DType to, int64_t min, int64_t max) {
  auto sat = [&](double t) { return static_cast<int64_t>(t < static_cast<double>(min) ? min : t > static_cast<double>(max) ? max : t); };
  std::vector<ConstValue> want = ints({0, max, min, max, min});
  for (double t : {300.0, -300.0, -1.0, 65535.0, 2.0}) want.push_back(sat(t));
  if (to == dtypes::uint64) want[1] = want[3] = int64_t{-1};  // UINT64_MAX's bit pattern
  return {from.name() + "_to_" + to.name(), Ops::CAST, from, to,
          floats({kNaN, kInf, -kInf, 1e20, -1e20, 300.75, -300.75, -1.5, 65535.9, 2.5}), {}, want};
}

std::vector<Case> cases() {
  std::vector<Case> c = {
      // shifts: amounts at and past the width, negative ones (read as unsigned: past the width)
      {"shl_int32", Ops::SHL, dtypes::int32, dtypes::int32, ints({1, 1, 1, 1, 1, 3, -1}), ints({33, 32, 31, -1, 100, 4, 31}),
       ints({0, 0, INT32_MIN, 0, 0, 48, INT32_MIN})},
      {"shr_int32", Ops::SHR, dtypes::int32, dtypes::int32, ints({-8, 8, -8, 8, -8, INT32_MIN, 1024}), ints({1, 32, 33, -1, -1, 31, 40}),
       ints({-4, 0, -1, 0, -1, -1, 0})},
      {"shl_uint32", Ops::SHL, dtypes::uint32, dtypes::uint32, ints({1, 1, 1, 5}), ints({31, 32, 4294967295, 0}),
       ints({2147483648, 0, 0, 5})},
      {"shr_uint32", Ops::SHR, dtypes::uint32, dtypes::uint32, ints({4294967295, 4294967295, 4294967295, 96}), ints({31, 32, 4294967295, 5}),
       ints({1, 0, 0, 3})},
      {"shl_int8", Ops::SHL, dtypes::int8, dtypes::int8, ints({1, 1, 1, 3, 1}), ints({7, 8, 9, 2, -1}), ints({-128, 0, 0, 12, 0})},
      {"shr_int8", Ops::SHR, dtypes::int8, dtypes::int8, ints({-128, -128, 127, -1, 64}), ints({7, 8, 8, 100, -3}), ints({-1, -1, 0, -1, 0})},
      {"shl_uint8", Ops::SHL, dtypes::uint8, dtypes::uint8, ints({255, 1, 1}), ints({1, 8, 255}), ints({254, 0, 0})},
      {"shl_int16", Ops::SHL, dtypes::int16, dtypes::int16, ints({1, 1, -1, 255}), ints({15, 16, 40, 8}), ints({INT16_MIN, 0, 0, -256})},
      {"shr_uint16", Ops::SHR, dtypes::uint16, dtypes::uint16, ints({65535, 65535, 65535}), ints({15, 16, 65535}), ints({1, 0, 0})},
      {"shl_int64", Ops::SHL, dtypes::int64, dtypes::int64, ints({1, 1, 1, 1, 1}), ints({63, 64, 65, -1, int64_t{1} << 32}),
       ints({INT64_MIN, 0, 0, 0, 0})},
      {"shr_int64", Ops::SHR, dtypes::int64, dtypes::int64, ints({INT64_MIN, INT64_MIN, INT64_MAX, -5, -5}), ints({63, 64, 64, -1, (int64_t{1} << 32) + 1}),
       ints({-1, -1, 0, -1, -1})},
      {"shr_uint64", Ops::SHR, dtypes::uint64, dtypes::uint64, ints({-1, -1, -1}), ints({63, 64, -1}), ints({1, 0, 0})},
      // integer division and modulo by zero (tinygrad's cdiv / cmod), INT_MIN / -1 and INT_MIN % -1
      {"floordiv_int32", Ops::FLOORDIV, dtypes::int32, dtypes::int32, ints({7, -7, 0, INT32_MIN, INT32_MIN, -7}), ints({0, 0, 0, -1, 0, 2}),
       ints({0, 0, 0, INT32_MIN, 0, -4})},
      {"floormod_int32", Ops::FLOORMOD, dtypes::int32, dtypes::int32, ints({7, -7, 0, INT32_MIN, INT32_MIN, -7}), ints({0, 0, 0, -1, 0, 2}),
       ints({7, -7, 0, 0, INT32_MIN, 1})},
      {"floordiv_int64", Ops::FLOORDIV, dtypes::int64, dtypes::int64, ints({INT64_MIN, 5, -5}), ints({-1, 0, 0}), ints({INT64_MIN, 0, 0})},
      {"floormod_int64", Ops::FLOORMOD, dtypes::int64, dtypes::int64, ints({INT64_MIN, 5, -5}), ints({-1, 0, 0}), ints({0, 5, -5})},
      {"floordiv_int8", Ops::FLOORDIV, dtypes::int8, dtypes::int8, ints({-128, 100, -100}), ints({-1, 0, 0}), ints({-128, 0, 0})},
      {"floordiv_uint32", Ops::FLOORDIV, dtypes::uint32, dtypes::uint32, ints({4294967295, 7}), ints({0, 0}), ints({0, 0})},
      {"floormod_uint32", Ops::FLOORMOD, dtypes::uint32, dtypes::uint32, ints({4294967295, 7}), ints({0, 0}), ints({4294967295, 7})},
      // signed overflow wraps (two's complement)
      {"add_int32", Ops::ADD, dtypes::int32, dtypes::int32, ints({INT32_MAX, INT32_MIN}), ints({1, -1}), ints({INT32_MIN, INT32_MAX})},
      {"sub_int32", Ops::SUB, dtypes::int32, dtypes::int32, ints({INT32_MIN, INT32_MAX}), ints({1, -1}), ints({INT32_MAX, INT32_MIN})},
      {"mul_int32", Ops::MUL, dtypes::int32, dtypes::int32, ints({INT32_MAX, 65536, INT32_MIN}), ints({2, 65536, -1}), ints({-2, 0, INT32_MIN})},
      {"neg_int32", Ops::NEG, dtypes::int32, dtypes::int32, ints({INT32_MIN, 5}), {}, ints({INT32_MIN, -5})},
      {"add_int64", Ops::ADD, dtypes::int64, dtypes::int64, ints({INT64_MAX}), ints({1}), ints({INT64_MIN})},
      {"mul_int64", Ops::MUL, dtypes::int64, dtypes::int64, ints({INT64_MAX, INT64_MIN}), ints({2, -1}), ints({-2, INT64_MIN})},
      {"neg_int64", Ops::NEG, dtypes::int64, dtypes::int64, ints({INT64_MIN}), {}, ints({INT64_MIN})},
      {"mul_uint16", Ops::MUL, dtypes::uint16, dtypes::uint16, ints({65535}), ints({65535}), ints({1})},
      {"add_int8", Ops::ADD, dtypes::int8, dtypes::int8, ints({127, -128}), ints({1, -1}), ints({-128, 127})},
      // int -> narrower int wraps
      {"int32_to_int8", Ops::CAST, dtypes::int32, dtypes::int8, ints({300, -129, 128}), {}, ints({44, 127, -128})},
      {"int64_to_int32", Ops::CAST, dtypes::int64, dtypes::int32, ints({(int64_t{1} << 40) + 7, int64_t{1} << 31}), {}, ints({7, INT32_MIN})},
      {"int32_to_uint16", Ops::CAST, dtypes::int32, dtypes::uint16, ints({-1, 65536 + 5}), {}, ints({65535, 5})},
      // float -> narrower float overflows to +-inf
      {"float32_to_float16", Ops::CAST, dtypes::float32, dtypes::float16, floats({70000, -1e10, 65504, kInf}), {}, floats({kInf, -kInf, 65504, kInf})},
      {"float64_to_float32", Ops::CAST, dtypes::float64, dtypes::float32, floats({1e300, -1e300}), {}, floats({kInf, -kInf})},
      {"float32_to_bfloat16", Ops::CAST, dtypes::float32, dtypes::bfloat16, floats({3.4e38, -3.4e38}), {}, floats({kInf, -kInf})},
  };
  // float -> int: truncated, saturated to the destination range, NaN to 0 (PTX cvt.rzi)
  const std::pair<DType, std::pair<int64_t, int64_t>> ranges[] = {
      {dtypes::int8, {INT8_MIN, INT8_MAX}},    {dtypes::uint8, {0, UINT8_MAX}},        {dtypes::int16, {INT16_MIN, INT16_MAX}},
      {dtypes::uint16, {0, UINT16_MAX}},       {dtypes::int32, {INT32_MIN, INT32_MAX}}, {dtypes::uint32, {0, UINT32_MAX}},
      {dtypes::int64, {INT64_MIN, INT64_MAX}}, {dtypes::uint64, {0, INT64_MAX}}};
  for (DType from : {dtypes::float32, dtypes::float64})
    for (const auto& [to, r] : ranges) c.push_back(float_to_int(from, to, r.first, r.second));
  // 16-bit float sources: 65535.9 is not one of their values; the rest are (or round to +-inf)
  for (DType from : {dtypes::float16, dtypes::bfloat16}) {
    c.push_back({from.name() + "_to_int16", Ops::CAST, from, dtypes::int16, floats({kNaN, kInf, -kInf, 60000, -60000, 300, -1.5}), {},
                 ints({0, INT16_MAX, INT16_MIN, INT16_MAX, INT16_MIN, 300, -1})});
    c.push_back({from.name() + "_to_uint8", Ops::CAST, from, dtypes::uint8, floats({kNaN, kInf, -kInf, 256, -2, 3.5}), {},
                 ints({0, 255, 0, 255, 0, 3})});
    c.push_back({from.name() + "_to_int32", Ops::CAST, from, dtypes::int32, floats({kNaN, kInf, -kInf, -7.5}), {},
                 ints({0, INT32_MAX, INT32_MIN, -7})});
  }
  return c;
}

// `v` repeated to n elements.
std::vector<ConstValue> cycle(const std::vector<ConstValue>& v, size_t n) {
  std::vector<ConstValue> out;
  for (size_t i = 0; i < n; i++) out.push_back(v[i % v.size()]);
  return out;
}

Tensor tensor_of(const std::vector<ConstValue>& v, DType dt) {
  if (dt.is_float()) {
    std::vector<double> d;
    for (const ConstValue& x : v) d.push_back(std::get<double>(x));
    return Tensor(d, {static_cast<int64_t>(d.size())}, dt);
  }
  std::vector<int64_t> i;
  for (const ConstValue& x : v) i.push_back(std::get<int64_t>(x));
  return Tensor(i, {static_cast<int64_t>(i.size())}, dt);
}

Tensor apply(const Case& c, const Tensor& a, const Tensor& b) {
  switch (c.op) {
    case Ops::SHL: return a.lshift(b);
    case Ops::SHR: return a.rshift(b);
    case Ops::FLOORDIV: return a.floordiv(b);
    case Ops::FLOORMOD: return a.mod(b);
    case Ops::ADD: return a + b;
    case Ops::SUB: return a - b;
    case Ops::MUL: return a * b;
    case Ops::NEG: return -a;
    case Ops::CAST: return a.cast(c.out);
    default: throw std::invalid_argument("undefined_ops_test: no frontend op for " + std::string(op_name(c.op)));
  }
}

// The case's expression over n elements (inputs repeated), unrealized.
Tensor expression(const Case& c, size_t n) {
  Tensor a = tensor_of(cycle(c.a, n), c.in);
  Tensor b = c.b.empty() ? a : tensor_of(cycle(c.b, n), c.in);
  return apply(c, a, b);
}

// Element i as text: ints exactly, floats with inf / nan spelled out.
std::string show(const ConstValue& v) {
  if (const double* d = std::get_if<double>(&v)) return std::to_string(*d);
  if (const bool* b = std::get_if<bool>(&v)) return *b ? "true" : "false";
  return std::to_string(std::get<int64_t>(v));
}

std::string inputs(const Case& c, size_t i) {
  size_t k = i % c.a.size();
  return c.name + " of " + show(c.a[k]) + (c.b.empty() ? "" : ", " + show(c.b[k]));
}

void expect_values(const Case& c, const Tensor& r, size_t n, const std::string& where) {
  std::vector<ConstValue> want = cycle(c.want, n);
  if (c.out.is_float()) {
    std::vector<double> got = r.tolist<double>();
    ASSERT_EQ(got.size(), n);
    for (size_t i = 0; i < n; i++) EXPECT_EQ(got[i], std::get<double>(want[i])) << where << ": " << inputs(c, i) << " at element " << i;
  } else {
    std::vector<int64_t> got = r.tolist<int64_t>();
    ASSERT_EQ(got.size(), n);
    for (size_t i = 0; i < n; i++) EXPECT_EQ(got[i], std::get<int64_t>(want[i])) << where << ": " << inputs(c, i) << " at element " << i;
  }
}

class UndefinedOps : public ::testing::TestWithParam<Case> {};

TEST_P(UndefinedOps, DeviceGivesTheDefinedValueWithSevenAndWith256Elements) {
  const Case& c = GetParam();
  for (size_t n : {size_t{7}, size_t{256}}) {
    SCOPED_TRACE(std::to_string(n) + " elements");
    Tensor r = expression(c, n);
    expect_values(c, r, n, r.device() + " with " + std::to_string(n) + " elements");
  }
}

TEST_P(UndefinedOps, ReferenceInterpreterGivesTheDefinedValue) {
  const Case& c = GetParam();
  // REF runs kernels of host buffers: the inputs are made on the CPU whatever DEV this run has.
  std::string dev = default_device_name();
  set_default_device_name("CPU");
  Tensor r;
  try {
    r = expression(c, 7);
  } catch (...) {
    set_default_device_name(dev);
    throw;
  }
  set_default_device_name(dev);
  run_linear(r.schedule_linear(), on_device("REF"));
  expect_values(c, r, 7, "REF");
}

TEST_P(UndefinedOps, ConstantFoldingGivesTheDefinedValue) {
  const Case& c = GetParam();
  for (size_t i = 0; i < c.a.size(); i++) {
    UOp a = UOp::const_(c.in, c.a[i]);
    UOp node = c.b.empty() ? UOp::make(c.op, c.out, {a}) : UOp::make(c.op, c.out, {a, UOp::const_(c.in, c.b[i])});
    UOp folded = simplify(node);
    ASSERT_EQ(folded.op(), Ops::CONST) << inputs(c, i) << " was not folded: " << op_name(folded.op());
    if (c.out.is_float()) EXPECT_EQ(std::get<double>(folded.const_value()), std::get<double>(c.want[i])) << inputs(c, i);
    else EXPECT_EQ(std::get<int64_t>(folded.const_value()), std::get<int64_t>(c.want[i])) << inputs(c, i);
  }
}

INSTANTIATE_TEST_SUITE_P(Defined, UndefinedOps, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case>& info) { return info.param.name; });

}  // namespace
}  // namespace doorbell::e2e
