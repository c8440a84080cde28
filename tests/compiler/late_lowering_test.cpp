// compiler/late_lowering.h: the form each rule leaves (shift, mask, truncating division with and without the sign
// correction, guarded divisors, 16-bit float ops in float32, bool bytes, decomposed transcendentals), options set to
// native leaving ops alone, and the values: original and lowered expressions evaluated node by node with exec_alu
// over integers of every dtype (negatives, zero divisors, INT_MIN / -1) and over 16-bit floats (NaN payloads and
// infinities included), compared bit for bit.
#include "compiler/late_lowering.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <limits>
#include <random>
#include <unordered_map>
#include <vector>

#include "frontend/tensor.h"
#include "ir/exec_alu.h"
#include "ir/printer.h"

namespace doorbell {
namespace {

UOp lowered(const UOp& u, const LateLoweringOptions& o = ptx_lowering_options()) { return lower_late(UOp::sink({u}), o).src(0); }

int count(const UOp& root, Ops op) {
  int n = 0;
  for (const UOp& u : root.toposort()) n += u.op() == op;
  return n;
}

// A leaf whose value is anything its dtype holds: a LOAD of element 0 of a buffer (its bounds are the dtype's).
UOp any_value(DType dt, int slot) {
  UOp buf = UOp::make(Ops::PARAM, dt, {}, ParamArg{slot, AddrSpace::GLOBAL, "", 0, 0});
  return UOp::make(Ops::LOAD, dt, {UOp::make(Ops::INDEX, dt, {buf, UOp::const_(dtypes::weakint, int64_t{0})})});
}

// Evaluates a graph of elementwise ops over leaves given values in `env`, each op with exec_alu; nullopt where an op
// is undefined (division by zero, a shift out of range). Leaves are the LOADs and variables in env.
class Evaluator {
 public:
  explicit Evaluator(const UOp& root) : order_(root.toposort()) {
    for (const UOp& u : order_)
      if (u.op() != Ops::CONST && u.op() != Ops::LOAD && u.op() != Ops::PARAM && u.op() != Ops::INDEX && !group::Elementwise.contains(u.op()))
        throw std::invalid_argument("Evaluator: cannot evaluate " + print_node(u));
  }

  std::optional<ConstValue> operator()(const std::unordered_map<const UOpNode*, ConstValue>& env) {
    std::unordered_map<const UOpNode*, ConstValue> v;
    for (const UOp& u : order_) {
      if (auto it = env.find(u.get()); it != env.end()) { v[u.get()] = it->second; continue; }
      if (u.op() == Ops::CONST) { v[u.get()] = u.const_value(); continue; }
      if (!group::Elementwise.contains(u.op())) continue;  // a buffer or its INDEX
      std::vector<ConstValue> args;
      std::vector<DType> in;
      for (const UOp& s : u.src()) args.push_back(v.at(s.get())), in.push_back(s.dtype());
      std::optional<ConstValue> r = exec_alu(u.op(), u.dtype(), args, in);
      if (!r) return std::nullopt;
      v[u.get()] = *r;
    }
    return v.at(order_.back().get());
  }

 private:
  std::vector<UOp> order_;
};

// ---- the form each rule leaves ---------------------------------------------------------------------------------

TEST(LateLoweringForm, FloorDivOfNonNegativeByFourIsAShift) {
  UOp x = UOp::variable("x", 0, 1000);
  UOp out = lowered(x.floordiv(4));
  EXPECT_EQ(out.op(), Ops::SHR) << print_node(out);
  EXPECT_TRUE(out.src(1).is_const_value(2));
}

TEST(LateLoweringForm, FloorDivOfPossiblyNegativeByFourIsStillAShiftWhichFloors) {
  UOp x = UOp::variable("x", -1000, 1000);
  UOp out = lowered(x.floordiv(4));
  EXPECT_EQ(out.op(), Ops::SHR) << print_node(out);
  EXPECT_EQ(count(out, Ops::WHERE), 0);
}

TEST(LateLoweringForm, FloorModByEightIsAMask) {
  UOp out = lowered(UOp::variable("x", -1000, 1000).floormod(8));
  EXPECT_EQ(out.op(), Ops::AND) << print_node(out);
  EXPECT_TRUE(out.src(1).is_const_value(7));
}

TEST(LateLoweringForm, FloorDivOfNonNegativesByThreeIsPlainTruncatingDivision) {
  UOp out = lowered(UOp::variable("x", 0, 1000).floordiv(3));
  EXPECT_EQ(out.op(), Ops::CDIV) << print_node(out);
  EXPECT_EQ(count(out, Ops::WHERE), 0);
  EXPECT_EQ(lowered(UOp::variable("x", 0, 1000).floormod(3)).op(), Ops::CMOD);
}

TEST(LateLoweringForm, FloorDivOfPossiblyNegativeByThreeGetsTheSignCorrection) {
  UOp out = lowered(UOp::variable("x", -1000, 1000).floordiv(3));
  EXPECT_EQ(out.op(), Ops::WHERE) << print_node(out);
  EXPECT_EQ(count(out, Ops::CDIV), 1);
  EXPECT_EQ(count(out, Ops::CMOD), 1);
  EXPECT_EQ(count(out, Ops::FLOORDIV), 0);
  // a positive divisor: the correction is just "remainder < 0", no test of the divisor's sign
  EXPECT_EQ(count(out, Ops::CMPLT), 1);
}

TEST(LateLoweringForm, ConstantDivisorNeedsNoGuardButOneThatMayBeZeroOrMinusOneGetsOne) {
  UOp x = UOp::variable("x", -100, 100);
  EXPECT_EQ(count(lowered(x.alu(Ops::CDIV, x.const_like(int64_t{7}))), Ops::WHERE), 0);
  UOp y = UOp::variable("y", -5, 5);
  UOp out = lowered(x.alu(Ops::CDIV, y));
  UOp div;  // a copy: toposort's vector is a temporary
  for (const UOp& u : out.toposort())
    if (u.op() == Ops::CDIV) div = u;
  ASSERT_TRUE(div);
  EXPECT_EQ(div.src(1).op(), Ops::WHERE) << "the divisor is replaced where it is 0 or -1: " << print_node(out);
  EXPECT_EQ(count(out, Ops::CDIV), 1) << "lowering a guarded division again must not guard it twice";
  UOp positive = UOp::variable("p", 1, 5);
  EXPECT_EQ(lowered(x.alu(Ops::CDIV, positive)), x.alu(Ops::CDIV, positive));
}

TEST(LateLoweringForm, NativeFloorDivisionAndEdgeCasesLeaveTheOpsAlone) {
  LateLoweringOptions o;
  o.floor_division = true;
  o.division_edge_cases = true;
  UOp x = UOp::variable("x", -100, 100), y = UOp::variable("y", -5, 5);
  EXPECT_EQ(lowered(x.floordiv(y), o), x.floordiv(y));
  EXPECT_EQ(lowered(x.floordiv(4), o), x.floordiv(4));
  EXPECT_EQ(lowered(x.alu(Ops::CDIV, y), o), x.alu(Ops::CDIV, y));
}

TEST(LateLoweringForm, Float16AddBecomesCastAddCast) {
  UOp a = any_value(dtypes::float16, 0), b = any_value(dtypes::float16, 1);
  UOp out = lowered(a + b);
  ASSERT_EQ(out.op(), Ops::CAST);
  EXPECT_EQ(out.dtype(), dtypes::float16);
  const UOp& add = out.src(0);
  ASSERT_EQ(add.op(), Ops::ADD);
  EXPECT_EQ(add.dtype(), dtypes::float32);
  EXPECT_EQ(add.src(0), a.cast(dtypes::float32));
  EXPECT_EQ(add.src(1), b.cast(dtypes::float32));
}

TEST(LateLoweringForm, BFloat16ComparisonComparesFloat32WithoutACastBack) {
  UOp a = any_value(dtypes::bfloat16, 0), b = any_value(dtypes::bfloat16, 1);
  UOp out = lowered(a.lt(b));
  EXPECT_EQ(out, a.cast(dtypes::float32).lt(b.cast(dtypes::float32)));
}

TEST(LateLoweringForm, Float16NegMaxAndWhereStayBecauseTheyAreExact) {
  UOp a = any_value(dtypes::float16, 0), b = any_value(dtypes::float16, 1), c = any_value(dtypes::bool_, 2);
  for (const UOp& e : {a.neg(), a.maximum(b), c.where(a, b), a.alu(Ops::TRUNC)}) {
    UOp out = lowered(e, []{ LateLoweringOptions o; o.bool_memory = true; return o; }());
    EXPECT_EQ(out, e) << print_node(e);
  }
}

TEST(LateLoweringForm, CastBetweenFloat16AndAnythingButFloat32GoesThroughFloat32) {
  UOp h = any_value(dtypes::float16, 0), i = any_value(dtypes::int32, 1);
  EXPECT_EQ(lowered(h.cast(dtypes::int32)), h.cast(dtypes::float32).cast(dtypes::int32));
  EXPECT_EQ(lowered(i.cast(dtypes::bfloat16)), i.cast(dtypes::float32).cast(dtypes::bfloat16));
  EXPECT_EQ(lowered(h.cast(dtypes::bfloat16)), h.cast(dtypes::float32).cast(dtypes::bfloat16));
  EXPECT_EQ(lowered(h.cast(dtypes::float32)), h.cast(dtypes::float32));
}

TEST(LateLoweringForm, NativeHalfArithmeticLeavesFloat16OpsAlone) {
  LateLoweringOptions o;
  o.half_arithmetic = true;
  o.float_to_int_saturates = true;
  UOp a = any_value(dtypes::float16, 0), b = any_value(dtypes::float16, 1);
  EXPECT_EQ(lowered(a * b, o), a * b);
  EXPECT_EQ(lowered(a.cast(dtypes::int8), o), a.cast(dtypes::int8));
}

// The kernel a Tensor program schedules to (one kernel).
UOp only_kernel(const Tensor& t) {
  UOp linear = t.schedule_linear();
  EXPECT_EQ(linear.src().size(), 1u);
  return linear.src(0).src(0);
}

TEST(LateLoweringForm, BoolLoadReadsAByteComparedWithZeroAndBoolStoreWritesAByte) {
  UOp k = lower_late(only_kernel(Tensor::empty({8}, dtypes::bool_).logical_not()), ptx_lowering_options());
  int loads = 0, stores = 0;
  for (const UOp& u : k.toposort()) {
    if (u.op() == Ops::PARAM) {
      EXPECT_NE(u.dtype(), dtypes::bool_) << "no buffer stays bool: " << print_node(u);
    }
    if (u.op() == Ops::LOAD) {
      loads++;
      EXPECT_EQ(u.dtype(), dtypes::uint8);
    }
    if (u.op() == Ops::STORE) {
      stores++;
      EXPECT_EQ(u.src(1).op(), Ops::CAST);
      EXPECT_EQ(u.src(1).dtype(), dtypes::uint8);
    }
    if (u.op() == Ops::CMPNE && u.src(0).op() == Ops::LOAD) {
      EXPECT_TRUE(u.src(1).is_const_value(0));
    }
  }
  EXPECT_EQ(loads, 1);
  EXPECT_EQ(stores, 1);
}

TEST(LateLoweringForm, NativeBoolMemoryLeavesBoolLoadsAndStoresAlone) {
  LateLoweringOptions o;
  o.bool_memory = true;
  UOp k = only_kernel(Tensor::empty({8}, dtypes::bool_).logical_not());
  EXPECT_EQ(lower_late(k, o), k);
}

TEST(LateLoweringForm, Float32TranscendentalsAreDecomposedWhereNotNativeAndFloat64ArePassedOn) {
  UOp x = any_value(dtypes::float32, 0), d = any_value(dtypes::float64, 1);
  for (Ops op : {Ops::EXP2, Ops::LOG2, Ops::SIN}) {
    EXPECT_EQ(count(lowered(x.alu(op)), op), 0) << op_name(op);
    EXPECT_EQ(count(lowered(x.alu(op), c_lowering_options()), op), 0) << op_name(op);
    EXPECT_EQ(lowered(d.alu(op)), d.alu(op)) << "float64 has no decomposition: the renderer decides";
  }
  UOp h = any_value(dtypes::float16, 2);
  UOp exp_h = lowered(h.alu(Ops::EXP2));
  EXPECT_EQ(count(exp_h, Ops::EXP2), 0);
  EXPECT_EQ(exp_h.op(), Ops::CAST);
}

TEST(LateLoweringForm, PowIsDecomposedForTheGpusAndKeptForC) {
  UOp x = any_value(dtypes::float32, 0), y = any_value(dtypes::float32, 1);
  EXPECT_EQ(count(lowered(x.alu(Ops::POW, y)), Ops::POW), 0);
  EXPECT_EQ(lowered(x.alu(Ops::POW, y), c_lowering_options()), x.alu(Ops::POW, y));
  UOp h = any_value(dtypes::float16, 2);
  EXPECT_EQ(lowered(h.alu(Ops::POW, h), c_lowering_options()),
            h.cast(dtypes::float32).alu(Ops::POW, h.cast(dtypes::float32)).cast(dtypes::float16));
}

TEST(LateLoweringForm, LoweringIsIdempotent) {
  UOp x = UOp::variable("x", -100, 100), y = UOp::variable("y", -5, 5);
  UOp h = any_value(dtypes::float16, 0);
  UOp sink = UOp::sink({x.floordiv(y), x.floormod(3), (h * h).cast(dtypes::int32), h.lt(h * h)});
  UOp once = lower_late(sink, ptx_lowering_options());
  EXPECT_EQ(lower_late(once, ptx_lowering_options()), once);
}

TEST(LateLoweringForm, NullRootThrows) { EXPECT_THROW(lower_late(UOp(), c_lowering_options()), std::invalid_argument); }

// ---- values -----------------------------------------------------------------------------------------------------

const DType kIntTypes[] = {dtypes::int8, dtypes::int16, dtypes::int32, dtypes::int64, dtypes::uint8,
                           dtypes::uint16, dtypes::uint32, dtypes::uint64, dtypes::weakint};

// Values of `dt` for division tests: around zero, the extremes, powers of two and their neighbours.
std::vector<__int128> int_samples(DType dt) {
  std::vector<__int128> raw;
  for (int v = -9; v <= 9; v++) raw.push_back(v);
  for (int k = 2; k < 64; k += 5) for (int d : {-1, 0, 1}) raw.push_back((__int128{1} << k) + d), raw.push_back(-(__int128{1} << k) + d);
  for (__int128 e : {int_min(dt), int_min(dt) + 1, int_min(dt) + 7, int_max(dt), int_max(dt) - 1, int_max(dt) - 6, int_max(dt) / 3})
    raw.push_back(e);
  std::vector<__int128> out;
  for (__int128 v : raw)
    if (v >= int_min(dt) && v <= int_max(dt) && std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
  return out;
}

ConstValue int_const_value(DType dt, __int128 v) { return wrap_int(dt, v); }

// The IR's integer division (exec_alu: a / 0 = 0, a % 0 = a, INT_MIN / -1 wraps).
ConstValue target_division(Ops op, DType dt, __int128 a, __int128 b) {
  ConstValue vals[2] = {int_const_value(dt, a), int_const_value(dt, b)};
  DType in[2] = {dt, dt};
  return *exec_alu(op, dt, vals, in);
}

std::string show(__int128 v) { return std::to_string(static_cast<long double>(v)); }

TEST(LateLoweringValues, DivisionAndModuloOfEveryIntegerDtypeMatchExecAluByZeroAndMinusOneToo) {
  for (DType dt : kIntTypes) {
    std::vector<__int128> vals = int_samples(dt);
    UOp a = any_value(dt, 0), b = any_value(dt, 1);
    for (Ops op : {Ops::FLOORDIV, Ops::FLOORMOD, Ops::CDIV, Ops::CMOD}) {
      // a divisor of any value
      UOp low = lowered(a.alu(op, b));
      ASSERT_EQ(count(low, Ops::FLOORDIV) + count(low, Ops::FLOORMOD), 0);
      Evaluator eval(low);
      for (__int128 x : vals)
        for (__int128 y : vals) {
          std::optional<ConstValue> got = eval({{a.get(), int_const_value(dt, x)}, {b.get(), int_const_value(dt, y)}});
          ASSERT_TRUE(got) << op_name(op) << " " << dt.name() << ": the lowered graph is undefined for " << show(x) << ", " << show(y);
          ASSERT_EQ(*got, target_division(op, dt, x, y)) << op_name(op) << " " << dt.name() << " of " << show(x) << " and " << show(y);
        }
      // every sample as a constant divisor (shifts and masks for powers of two)
      for (__int128 y : vals) {
        UOp c = UOp::const_(dt, int_const_value(dt, y));
        Evaluator by_const(lowered(a.alu(op, c)));
        for (__int128 x : vals) {
          std::optional<ConstValue> got = by_const({{a.get(), int_const_value(dt, x)}});
          ASSERT_TRUE(got) << op_name(op) << " " << dt.name() << " by constant " << show(y);
          ASSERT_EQ(*got, target_division(op, dt, x, y)) << op_name(op) << " " << dt.name() << " of " << show(x) << " by constant " << show(y);
        }
      }
    }
  }
}

TEST(LateLoweringValues, DivisionOfBoundedOperandsUsesTheBoundsAndStillMatchesExecAlu) {
  // non-negative dividends, divisors of either sign: the "non-negatives" and one-sided correction rules
  for (DType dt : {dtypes::int32, dtypes::weakint, dtypes::int8}) {
    int64_t hi = static_cast<int64_t>(std::min<__int128>(int_max(dt), 100000));
    UOp x = UOp::variable("x", 0, hi, dt), n = UOp::variable("n", -hi, -1, dt);
    UOp p = UOp::variable("p", 1, hi, dt), m = UOp::variable("m", -hi, -1, dt);
    for (Ops op : {Ops::FLOORDIV, Ops::FLOORMOD}) {
      for (const auto& [num, den] : std::vector<std::pair<UOp, UOp>>{{x, p}, {x, m}, {n, p}, {n, m}}) {
        Evaluator eval(lowered(num.alu(op, den)));
        for (__int128 a : int_samples(dt))
          for (__int128 b : int_samples(dt)) {
            if (a < num.vmin() || a > num.vmax() || b < den.vmin() || b > den.vmax()) continue;
            std::optional<ConstValue> got = eval({{num.get(), int_const_value(dt, a)}, {den.get(), int_const_value(dt, b)}});
            ASSERT_TRUE(got);
            ASSERT_EQ(*got, target_division(op, dt, a, b)) << op_name(op) << " " << dt.name() << " of " << show(a) << " and " << show(b);
          }
      }
    }
  }
}

TEST(LateLoweringForm, ShiftByABoundedAmountIsLeftAloneAndByAnyAmountIsGuardedForC) {
  UOp a = any_value(dtypes::int32, 0), s = any_value(dtypes::int32, 1);
  UOp small = UOp::variable("k", 0, 31, dtypes::int32);
  EXPECT_EQ(lowered(a << small, c_lowering_options()), a << small) << "the common case costs nothing";
  EXPECT_EQ(lowered(a << 3, c_lowering_options()), a << 3);
  EXPECT_EQ(lowered(a << s), a << s) << "PTX shifts clamp the amount natively";
  UOp out = lowered(a << s, c_lowering_options());
  EXPECT_EQ(out.op(), Ops::WHERE) << print_node(out);
  EXPECT_EQ(count(out, Ops::SHL), 1);
}

TEST(LateLoweringForm, FloatToIntCastIsNativeOnPtxAndClampedBeforeTheCastForC) {
  UOp f = any_value(dtypes::float32, 0), h = any_value(dtypes::float16, 1);
  EXPECT_EQ(lowered(f.cast(dtypes::int32)), f.cast(dtypes::int32)) << "PTX cvt.rzi saturates natively";
  UOp out = lowered(f.cast(dtypes::int32), c_lowering_options());
  EXPECT_EQ(out.op(), Ops::WHERE) << print_node(out);
  EXPECT_EQ(count(out, Ops::CAST), 1);
  EXPECT_EQ(count(lowered(h.cast(dtypes::int16), c_lowering_options()), Ops::WHERE), 3) << "a float16 source too";
}

// Shift amounts of every kind: in range, the width, past it, negative, the extremes of the amount's dtype.
std::vector<__int128> shift_amounts(DType dt) {
  std::vector<__int128> out;
  for (__int128 v : {__int128{0}, __int128{1}, __int128{5}, __int128{7}, __int128{8}, __int128{9}, __int128{15}, __int128{16},
                     __int128{31}, __int128{32}, __int128{33}, __int128{63}, __int128{64}, __int128{65}, __int128{100},
                     __int128{-1}, __int128{-8}, __int128{-33}, int_min(dt), int_max(dt), (__int128{1} << 32) + 1})
    if (v >= int_min(dt) && v <= int_max(dt)) out.push_back(v);
  return out;
}

TEST(LateLoweringValues, ShiftsByAnyAmountMatchExecAluOnEveryIntegerDtype) {
  for (const LateLoweringOptions& o : {c_lowering_options(), amdgpu_lowering_options()})
    for (DType dt : kIntTypes) {
      UOp a = any_value(dt, 0), s = any_value(dt, 1);
      for (Ops op : {Ops::SHL, Ops::SHR}) {
        Evaluator eval(lowered(a.alu(op, s), o));
        for (__int128 x : int_samples(dt))
          for (__int128 k : shift_amounts(dt)) {
            std::optional<ConstValue> got = eval({{a.get(), int_const_value(dt, x)}, {s.get(), int_const_value(dt, k)}});
            ConstValue vals[2] = {int_const_value(dt, x), int_const_value(dt, k)};
            DType in[2] = {dt, dt};
            ASSERT_TRUE(got);
            ASSERT_EQ(*got, *exec_alu(op, dt, vals, in)) << op_name(op) << " " << dt.name() << " of " << show(x) << " by " << show(k);
          }
      }
    }
}

// The lowered graph's raw CAST only sees values in range: checked by evaluating it with convert_value (nullopt out
// of range) in place of CAST.
TEST(LateLoweringValues, FloatToIntCastsMatchExecAluAndTheRawCastOnlySeesValuesInRange) {
  const double inf = INFINITY;
  for (DType from : {dtypes::float32, dtypes::float64, dtypes::float16, dtypes::bfloat16})
    for (DType to : kIntTypes) {
      UOp f = any_value(from, 0);
      UOp low = lowered(f.cast(to), c_lowering_options());
      std::vector<UOp> order = low.toposort();
      for (double v : {0.0, -0.0, 0.5, -0.5, -1.0, 1.9, -2.9, 127.9, -128.9, 255.5, 256.0, 32767.5, -32768.9, 65535.9, 65536.0,
                       2147483520.0, 2147483647.9, 2147483648.0, -2147483648.9, 4294967295.5, 4294967296.0, 9.2e18, 9.3e18,
                       1.8e19, 1.9e19, -9.3e18, 1e30, -1e30, inf, -inf, std::nan("")}) {
        double x = round_to_float_dtype(from, v);
        std::unordered_map<const UOpNode*, ConstValue> vals{{f.get(), x}};
        for (const UOp& u : order) {
          if (vals.count(u.get())) continue;
          if (u.op() == Ops::CONST) { vals[u.get()] = u.const_value(); continue; }
          if (!group::Elementwise.contains(u.op())) continue;
          std::vector<ConstValue> args;
          std::vector<DType> in;
          for (const UOp& s : u.src()) args.push_back(vals.at(s.get())), in.push_back(s.dtype());
          std::optional<ConstValue> r;
          if (u.op() == Ops::CAST && u.dtype().is_int() && u.src(0).dtype().is_float()) {
            r = convert_value(u.dtype(), args[0]);
            ASSERT_TRUE(r) << "the raw CAST of " << from.name() << " " << x << " to " << to.name() << " is out of range";
          } else {
            r = exec_alu(u.op(), u.dtype(), args, in);
          }
          vals[u.get()] = *r;
        }
        ConstValue arg[1] = {x};
        DType in[1] = {from};
        EXPECT_EQ(vals.at(low.get()), *exec_alu(Ops::CAST, to, arg, in)) << from.name() << " " << x << " to " << to.name();
      }
    }
}

TEST(LateLoweringValues, MinIntDividedByMinusOneWrapsAndItsRemainderIsZero) {
  for (DType dt : {dtypes::int8, dtypes::int16, dtypes::int32, dtypes::int64, dtypes::weakint}) {
    UOp a = any_value(dt, 0), b = any_value(dt, 1);
    ConstValue min = int_const_value(dt, int_min(dt)), m1 = int_const_value(dt, -1);
    EXPECT_EQ(*Evaluator(lowered(a.floordiv(b)))({{a.get(), min}, {b.get(), m1}}), min) << dt.name();
    EXPECT_EQ(*Evaluator(lowered(a.alu(Ops::CDIV, b)))({{a.get(), min}, {b.get(), m1}}), min) << dt.name();
    EXPECT_EQ(*Evaluator(lowered(a.floormod(b)))({{a.get(), min}, {b.get(), m1}}), ConstValue(int64_t{0})) << dt.name();
  }
}

// float16 / bfloat16 values as bits, through the doubles exec_alu computes with.
uint16_t bits_of(DType dt, const ConstValue& v) {
  float f = static_cast<float>(std::get<double>(v));
  return dt == dtypes::float16 ? float_to_half_bits(f) : float_to_bfloat16_bits(f);
}
ConstValue value_of(DType dt, uint16_t bits) {
  return static_cast<double>(dt == dtypes::float16 ? half_bits_to_float(bits) : bfloat16_bits_to_float(bits));
}

// Every bit pattern for unary ops; for binary ones the specials (zeros, infinities, NaNs with payloads, the largest
// and smallest values) against each other and random pairs.
std::vector<uint16_t> special_bits(DType dt) {
  if (dt == dtypes::float16) return {0x0000, 0x8000, 0x0001, 0x8001, 0x03ff, 0x0400, 0x3c00, 0xbc00, 0x3555, 0x7bff, 0xfbff, 0x7c00, 0xfc00, 0x7e00, 0x7c01, 0xfe3f, 0x7fff, 0x4248};
  return {0x0000, 0x8000, 0x0001, 0x8001, 0x007f, 0x0080, 0x3f80, 0xbf80, 0x3eaa, 0x7f7f, 0xff7f, 0x7f80, 0xff80, 0x7fc0, 0x7f81, 0xffc3, 0x7fff, 0x4049};
}

// Checks that lowered(e) has no 16-bit float op but CAST left and gives e's value, bit for bit, for each input of
// the leaves.
void expect_same_values(const UOp& e, const std::vector<UOp>& leaves, const std::vector<std::vector<ConstValue>>& inputs) {
  UOp low = lowered(e);
  for (const UOp& u : low.toposort()) {
    if (u.op() == Ops::CAST || u.op() == Ops::LOAD || u.op() == Ops::INDEX || u.op() == Ops::PARAM || u.op() == Ops::CONST) continue;
    bool half = u.dtype() == dtypes::float16 || u.dtype() == dtypes::bfloat16;
    for (const UOp& s : u.src()) half |= s.dtype() == dtypes::float16 || s.dtype() == dtypes::bfloat16;
    ASSERT_FALSE(half) << "a 16-bit float op is left: " << print_node(u);
  }
  Evaluator want(e), got(low);
  for (const std::vector<ConstValue>& in : inputs) {
    std::unordered_map<const UOpNode*, ConstValue> env;
    for (size_t i = 0; i < leaves.size(); i++) env[leaves[i].get()] = in[i];
    std::optional<ConstValue> w = want(env), g = got(env);
    ASSERT_TRUE(w && g) << print_node(e);
    if (const double* gd = std::get_if<double>(&*g)) {
      DType dt = e.dtype();
      // 16-bit results compare as their bits (a NaN's payload included); wider ones as the double's bits
      if (dt == dtypes::float16 || dt == dtypes::bfloat16) ASSERT_EQ(bits_of(dt, *g), bits_of(dt, *w)) << print_node(e);
      else ASSERT_EQ(std::bit_cast<uint64_t>(*gd), std::bit_cast<uint64_t>(std::get<double>(*w))) << print_node(e);
    } else {
      ASSERT_EQ(*g, *w) << print_node(e);
    }
  }
}

TEST(LateLoweringValues, SixteenBitFloatOpsInFloat32MatchExecAluBitForBit) {
  std::mt19937 rng(13);
  for (DType dt : {dtypes::float16, dtypes::bfloat16}) {
    UOp a = any_value(dt, 0), b = any_value(dt, 1), c = any_value(dt, 2);
    std::vector<std::vector<ConstValue>> every, in_int32_range, triples;
    for (uint32_t x = 0; x < 65536; x++) {
      ConstValue v = value_of(dt, static_cast<uint16_t>(x));
      every.push_back({v});
      if (std::fabs(std::get<double>(v)) < 2147483648.0) in_int32_range.push_back({v});  // NaN is not: undefined
    }
    for (uint16_t x : special_bits(dt))
      for (uint16_t y : special_bits(dt))
        for (uint16_t z : special_bits(dt)) triples.push_back({value_of(dt, x), value_of(dt, y), value_of(dt, z)});
    for (int i = 0; i < 20000; i++)
      triples.push_back({value_of(dt, static_cast<uint16_t>(rng())), value_of(dt, static_cast<uint16_t>(rng())), value_of(dt, static_cast<uint16_t>(rng()))});
    for (Ops op : {Ops::SQRT, Ops::RECIPROCAL}) expect_same_values(a.alu(op), {a}, every);
    for (Ops op : {Ops::ADD, Ops::SUB, Ops::MUL, Ops::FDIV, Ops::CMPLT, Ops::CMPNE, Ops::CMPEQ}) expect_same_values(a.alu(op, b), {a, b}, triples);
    expect_same_values(UOp::make(Ops::MULACC, dt, {a, b, c}), {a, b, c}, triples);
    expect_same_values(a.cast(dtypes::float64), {a}, every);
    expect_same_values(a.cast(dt == dtypes::float16 ? dtypes::bfloat16 : dtypes::float16), {a}, every);
    expect_same_values(a.cast(dtypes::int32), {a}, in_int32_range);
    UOp i = any_value(dtypes::int64, 3);
    std::vector<std::vector<ConstValue>> ints;
    for (__int128 v : int_samples(dtypes::int64)) ints.push_back({int_const_value(dtypes::int64, v)});
    expect_same_values(i.cast(dt), {i}, ints);
  }
}

}  // namespace
}  // namespace doorbell
