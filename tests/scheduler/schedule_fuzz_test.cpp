// The scheduler fuzzer: random tensor programs (movement chains, elementwise ops, reduces, contiguous, several
// outputs) are scheduled, run on the REF device (the reference interpreter) and compared with an independent evaluation of the
// tensor graph; every memory plan is verified. CI runs SCHEDULE_FUZZ_COUNT=300 programs (the default); a long
// run by hand: SCHEDULE_FUZZ_COUNT=20000 build/release/tests/scheduler/test_schedule_fuzz (SCHEDULE_FUZZ_SEED
// picks another stream). A failure prints the program.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "hcq/host_buffers.h"
#include "hcq/run_linear.h"
#include "ir/printer.h"
#include "scheduler/memory_planner.h"
#include "scheduler/schedule.h"
#include "tensor_reference.h"

namespace doorbell {
namespace {

uint64_t env_or(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  return v ? std::strtoull(v, nullptr, 10) : fallback;
}

int64_t numel(const IntTuple& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

class ProgramGen {
 public:
  explicit ProgramGen(uint64_t seed) : rng_(seed) {}

  std::vector<UOp> next() {
    std::vector<UOp> outs;
    UOp x = input(random_shape());
    int n = static_cast<int>(pick(1, 6));
    for (int i = 0; i < n; i++) {
      x = step(x);
      if (chance(0.15)) outs.push_back(x);
    }
    outs.push_back(x);
    return outs;
  }

 private:
  int64_t pick(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng_); }
  bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }

  IntTuple random_shape() {
    IntTuple s;
    int nd = static_cast<int>(pick(1, 3));
    for (int i = 0; i < nd; i++) s.push_back(pick(1, 5));
    return s;
  }

  UOp input(const IntTuple& shape) {
    int64_t n = numel(shape);
    UOp b = new_buffer(dtypes::float32, n);
    std::vector<float> v(n);
    for (float& f : v) f = static_cast<float>(pick(-20, 20)) / 4;
    std::memcpy(buffer_bytes(b).data(), v.data(), v.size() * 4);
    return UOp::make(Ops::RESHAPE, dtypes::float32, {b}, shape);
  }

  UOp cst(double v, const IntTuple& shape) {
    UOp c = UOp::const_(dtypes::float32, v);
    return UOp::make(Ops::EXPAND, dtypes::float32, {UOp::make(Ops::RESHAPE, dtypes::float32, {c}, IntTuple(shape.size(), 1))}, shape);
  }

  UOp mop(Ops op, const UOp& x, IntTuple arg) { return UOp::make(op, x.dtype(), {x}, std::move(arg)); }

  UOp step(const UOp& x) {
    const IntTuple s = *x.shape();
    size_t nd = s.size();
    switch (pick(0, 11)) {
      case 0: return x + cst(static_cast<double>(pick(-3, 3)), s);
      case 1: return x * input(s);
      case 2: return x.maximum(input(s));
      case 3: {  // permute
        IntTuple p(nd);
        for (size_t i = 0; i < nd; i++) p[i] = static_cast<int64_t>(i);
        std::shuffle(p.begin(), p.end(), rng_);
        return mop(Ops::PERMUTE, x, p);
      }
      case 4: {  // pad
        IntTuple a;
        for (size_t i = 0; i < nd; i++) { a.push_back(pick(0, 2)); a.push_back(pick(0, 2)); }
        return mop(Ops::PAD, x, a);
      }
      case 5: {  // shrink
        IntTuple a;
        for (size_t i = 0; i < nd; i++) { int64_t b = pick(0, s[i] - 1); a.push_back(b); a.push_back(pick(b + 1, s[i])); }
        return mop(Ops::SHRINK, x, a);
      }
      case 6: return mop(Ops::FLIP, x, {pick(0, static_cast<int64_t>(nd) - 1)});
      case 7: {  // reshape: flatten, or split / merge axes
        if (chance(0.5) || nd == 1) {
          int64_t n = numel(s);
          for (int64_t f = 2; f <= n; f++)
            if (n % f == 0 && chance(0.5)) return mop(Ops::RESHAPE, x, {f, n / f});
          return mop(Ops::RESHAPE, x, {n});
        }
        IntTuple r = s;
        r.insert(r.begin() + pick(0, static_cast<int64_t>(nd)), 1);
        return mop(Ops::RESHAPE, x, r);
      }
      case 8: {  // expand a size-1 axis (insert one first)
        IntTuple r = s;
        size_t at = static_cast<size_t>(pick(0, static_cast<int64_t>(nd)));
        r.insert(r.begin() + at, 1);
        IntTuple e = r;
        e[at] = pick(2, 3);
        return mop(Ops::EXPAND, mop(Ops::RESHAPE, x, r), e);
      }
      case 9: {  // reduce one axis
        Ops op = chance(0.6) ? Ops::ADD : Ops::MAX;
        return UOp::make(Ops::REDUCE, x.dtype(), {x}, ReduceArg{op, {pick(0, static_cast<int64_t>(nd) - 1)}});
      }
      case 10: {  // reduce, then broadcast back and combine (softmax-like)
        int64_t ax = pick(0, static_cast<int64_t>(nd) - 1);
        UOp r = UOp::make(Ops::REDUCE, x.dtype(), {x}, ReduceArg{Ops::MAX, {ax}});
        return x - mop(Ops::EXPAND, r, s);
      }
      default: return UOp::make(Ops::CONTIGUOUS, x.dtype(), {x});
    }
  }

  std::mt19937_64 rng_;
};

std::string program_text(const std::vector<UOp>& outs) { return print_graph(UOp::sink(outs)); }

TEST(ScheduleFuzz, RandomTensorProgramsComputeTheReferenceValues) {
  const uint64_t count = env_or("SCHEDULE_FUZZ_COUNT", 300), seed = env_or("SCHEDULE_FUZZ_SEED", 1);
  ProgramGen gen(seed);
  size_t kernels = 0, failures = 0;
  for (uint64_t i = 0; i < count && failures < 3; i++) {
    std::vector<UOp> outs = gen.next();
    std::vector<testing::Dense> want;
    for (const UOp& o : outs) want.push_back(testing::reference_eval(o));
    ScheduleResult r;
    try {
      r = schedule(outs);
      verify_memory_plan(r.linear);
      run_linear(r.linear, on_device("REF"));
    } catch (const std::exception& e) {
      failures++;
      ADD_FAILURE() << "program " << i << " (seed " << seed << ") threw: " << e.what() << "\n" << program_text(outs);
      continue;
    }
    kernels += r.linear.src().size();
    for (size_t k = 0; k < outs.size(); k++) {
      std::vector<double> got = testing::as_doubles(testing::reference_eval(r.becomes[k].second));
      std::vector<double> ref = testing::as_doubles(want[k]);
      bool same = got.size() == ref.size();
      for (size_t e = 0; same && e < got.size(); e++) same = std::abs(got[e] - ref[e]) <= 1e-4 * (1 + std::abs(ref[e]));
      if (!same) {
        failures++;
        ADD_FAILURE() << "program " << i << " (seed " << seed << ") output " << k << " differs from the reference\n" << program_text(outs);
        break;
      }
    }
  }
  std::printf("schedule fuzz: %llu programs, %zu kernels\n", static_cast<unsigned long long>(count), kernels);
  EXPECT_GT(kernels, count) << "the programs must produce kernels";
}

}  // namespace
}  // namespace doorbell
