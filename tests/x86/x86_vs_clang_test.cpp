// The x86 backend against the clang path, bit for bit: random tensor programs over every dtype (elementwise ops,
// where, casts, bitcasts, shifts, division, reductions over shapes that leave vector tails) run once on CPU:CLANG (C
// compiled by clang) and once on CPU:X86 (compiler/x86, the CPU's default), from the same input bytes. Both targets compute what
// ir/exec_alu.h defines and fuse the same products into FMAs (compiler/c_renderer.h), so every output element must
// have the same bits (any NaN matches any NaN: payloads are not part of the IR's semantics).
// CI runs a few dozen programs; a long run by hand:
//   X86_FUZZ_COUNT=3000 X86_FUZZ_SEED=11 build/dev/tests/x86/test_x86 --gtest_filter='X86VsClang.*'
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "frontend/tensor.h"
#include "hcq/backend.h"

namespace doorbell {
namespace {

uint64_t env_or(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::strtoull(v, nullptr, 10) : fallback;
}

const DType kTypes[] = {dtypes::bool_,  dtypes::int8,    dtypes::int16,   dtypes::int32,   dtypes::int64,
                        dtypes::uint8,  dtypes::uint16,  dtypes::uint32,  dtypes::uint64,  dtypes::float16,
                        dtypes::bfloat16, dtypes::float32, dtypes::float32, dtypes::float32, dtypes::int32,
                        dtypes::float64};

// Input bytes with the edge values each type has (0, -1, min, max, NaN, inf, -0, denormals) among random ones.
std::vector<uint8_t> input_bytes(DType d, int64_t n, std::mt19937_64& rng) {
  const size_t size = static_cast<size_t>(d.itemsize());
  std::vector<uint8_t> out(static_cast<size_t>(n) * size);
  for (int64_t i = 0; i < n; i++) {
    uint64_t bits = rng();
    const int pick = static_cast<int>(rng() % 8);
    if (d.is_float()) {
      const double specials[] = {0.0, -0.0, 1.0, -2.5, INFINITY, -INFINITY, NAN, 1e-40};
      double v = pick < 4 ? specials[rng() % 8] : std::ldexp(static_cast<double>(static_cast<int64_t>(bits >> 40)) - 8e6, -int(rng() % 20));
      if (d == dtypes::float64) std::memcpy(&bits, &v, 8);
      else {
        float f = static_cast<float>(v);
        uint32_t u;
        std::memcpy(&u, &f, 4);
        bits = d == dtypes::float32 ? u : d == dtypes::bfloat16 ? (u >> 16) : bits;  // float16: random bits
      }
    } else if (d.is_bool()) {
      bits &= 1;
    } else if (pick < 3) {
      bits = pick == 0 ? 0 : pick == 1 ? ~0ull : (1ull << (size * 8 - 1));  // 0, -1 / max, min / 2^(w-1)
    } else if (pick < 6) {
      bits = rng() % 17;  // small: valid shift amounts and divisors
    }
    std::memcpy(out.data() + i * size, &bits, size);
  }
  return out;
}

// The input tensor on the default device (the clang path's): the edge-value bytes reinterpreted as `d`.
Tensor make_input(DType d, const IntTuple& shape, std::mt19937_64& rng) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  std::vector<uint8_t> bytes = input_bytes(d, n, rng);
  auto typed = [&]<typename U>(U, DType as) {
    std::vector<U> v(static_cast<size_t>(n));
    std::memcpy(v.data(), bytes.data(), bytes.size());
    return Tensor::from_data(v, shape, as);
  };
  switch (d.itemsize()) {
    case 1: return d.is_bool() ? typed(uint8_t{}, dtypes::uint8).cast(dtypes::bool_) : typed(uint8_t{}, dtypes::uint8).bitcast(d);
    case 2: return typed(uint16_t{}, dtypes::uint16).bitcast(d);
    case 4: return typed(uint32_t{}, dtypes::uint32).bitcast(d);
    default: return typed(uint64_t{}, dtypes::uint64).bitcast(d);
  }
}

DType bits_type(DType d) {
  switch (d.itemsize()) {
    case 1: return dtypes::uint8;
    case 2: return dtypes::uint16;
    case 4: return dtypes::uint32;
    default: return dtypes::uint64;
  }
}

std::vector<uint64_t> bits_of(const Tensor& t) {
  Tensor b = t.dtype().is_bool() ? t.cast(dtypes::uint8) : t.bitcast(bits_type(t.dtype()));
  return b.tolist<uint64_t>();
}

bool is_nan_bits(DType d, uint64_t b) {
  if (d == dtypes::float64) return (b & 0x7ff0000000000000ull) == 0x7ff0000000000000ull && (b & 0xfffffffffffffull) != 0;
  if (d == dtypes::float32) return (b & 0x7f800000u) == 0x7f800000u && (b & 0x7fffffu) != 0;
  if (d == dtypes::float16) return (b & 0x7c00u) == 0x7c00u && (b & 0x3ffu) != 0;
  if (d == dtypes::bfloat16) return (b & 0x7f80u) == 0x7f80u && (b & 0x7fu) != 0;
  return false;
}

// One random program over `inputs`, its choices drawn from `seed` alone, so the same seed builds the same program on
// either device (the frontend refuses the same op/dtype pairs on both). Returns the values to compare and a trace.
std::vector<Tensor> build_program(std::vector<Tensor> pool, uint64_t seed, std::string& trace) {
  std::mt19937_64 rng(seed);
  const int steps = 3 + static_cast<int>(rng() % 5);
  auto pick = [&]() -> const Tensor& { return pool[rng() % pool.size()]; };
  for (int step = 0; step < steps; step++) {
    const int what = static_cast<int>(rng() % 24);
    const Tensor a = pick(), b = pick();
    const DType cast_to = kTypes[rng() % std::size(kTypes)];
    const int64_t axis = a.ndim() > 0 ? static_cast<int64_t>(rng() % static_cast<uint64_t>(a.ndim())) : 0;
    std::ostringstream line;
    try {
      Tensor r;
      switch (what) {
        case 0: r = a + b; line << "add"; break;
        case 1: r = a - b; line << "sub"; break;
        case 2: r = a * b; line << "mul"; break;
        case 3: r = a / b; line << "div"; break;
        case 4: r = a.maximum(b); line << "maximum"; break;
        case 5: r = a.minimum(b); line << "minimum"; break;
        case 6: r = a.lt(b); line << "lt"; break;
        case 7: r = a.eq(b); line << "eq"; break;
        case 8: r = a.ne(b); line << "ne"; break;
        case 9: r = a.bitwise_and(b); line << "and"; break;
        case 10: r = a.bitwise_xor(b); line << "xor"; break;
        case 11: r = a.lshift(b); line << "lshift"; break;
        case 12: r = a.rshift(b); line << "rshift"; break;
        case 13: r = a.floordiv(b); line << "floordiv"; break;
        case 14: r = a.mod(b); line << "mod"; break;
        case 15: r = a.cast(cast_to); line << "cast " << cast_to.name(); break;
        case 16: r = a.lt(b).where(a, b); line << "where(lt)"; break;
        case 17: r = a.neg(); line << "neg"; break;
        case 18: r = a.sqrt(); line << "sqrt"; break;
        case 19: r = (rng() % 2) ? a.exp2() : a.sin(); line << "exp2|sin"; break;
        case 20: r = a.sum({axis}); line << "sum " << axis; break;
        case 21: r = a.max({axis}); line << "max " << axis; break;
        case 22: r = a.reciprocal(); line << "reciprocal"; break;
        default: r = a.trunc(); line << "trunc"; break;
      }
      pool.push_back(r);
      trace += "  " + line.str() + " -> " + r.dtype().name() + "\n";
    } catch (const std::invalid_argument&) {
      // the frontend refuses this op for these dtypes (on both devices alike): draw another
    }
  }
  return {pool.end() - std::min<size_t>(2, pool.size()), pool.end()};
}

const IntTuple kShapes[] = {{37}, {5, 19}, {3, 4, 17}, {64}, {2, 33}, {48}, {16, 16}, {1}, {7, 1}};

TEST(X86VsClang, RandomProgramsGiveTheSameBitsAsTheClangPath) {
  const uint64_t count = env_or("X86_FUZZ_COUNT", 40), seed0 = env_or("X86_FUZZ_SEED", 1);
  int compared = 0;
  for (uint64_t p = 0; p < count; p++) {
    std::mt19937_64 rng(seed0 * 1000003 + p);
    const IntTuple shape = kShapes[rng() % std::size(kShapes)];
    std::vector<Tensor> on_c, on_x86;
    for (int i = 0, n = 2 + static_cast<int>(rng() % 2); i < n; i++) {
      Tensor t = make_input(kTypes[rng() % std::size(kTypes)], shape, rng);
      on_c.push_back(t.to("CPU:CLANG"));
      on_x86.push_back(t.to("CPU:X86"));
    }
    const uint64_t program_seed = rng();
    std::string trace;
    std::vector<Tensor> want = build_program(on_c, program_seed, trace);
    std::string trace_x86;
    std::vector<Tensor> got = build_program(on_x86, program_seed, trace_x86);
    ASSERT_EQ(trace, trace_x86);
    for (size_t k = 0; k < want.size(); k++) {
      ASSERT_EQ(want[k].device(), "CPU:CLANG");
      ASSERT_EQ(got[k].device(), parse_device_name("CPU:X86").canonical());
      const std::vector<uint64_t> w = bits_of(want[k]), g = bits_of(got[k]);
      ASSERT_EQ(w.size(), g.size());
      for (size_t i = 0; i < w.size(); i++) {
        if (w[i] == g[i] || (is_nan_bits(want[k].dtype(), w[i]) && is_nan_bits(want[k].dtype(), g[i]))) continue;
        FAIL() << "program " << p << " (X86_FUZZ_SEED=" << seed0 << "), output " << k << " (" << want[k].dtype().name()
               << "), element " << i << ": clang 0x" << std::hex << w[i] << ", x86 0x" << g[i] << std::dec << "\n"
               << trace;
      }
      compared++;
    }
  }
  EXPECT_GE(compared, static_cast<int>(count));  // every program compared at least one output
}

// A register-tiled float32 matmul and a softmax: the optimizer's vector kernels (FMA tiles, lane folds).
TEST(X86VsClang, MatmulAndSoftmaxGiveTheSameBits) {
  std::mt19937_64 rng(5);
  Tensor a = make_input(dtypes::float32, {13, 40}, rng), b = make_input(dtypes::float32, {40, 37}, rng);
  // finite inputs: a matmul of infinities is NaN-soup on both sides and says little
  a = a.isfinite().where(a, 0.5f);
  b = b.isfinite().where(b, -1.5f);
  const Tensor ca = a.to("CPU:CLANG"), cb = b.to("CPU:CLANG"), xa = a.to("CPU:X86"), xb = b.to("CPU:X86");
  for (const auto& [what, c, x] : {std::tuple{"matmul", ca.dot(cb), xa.dot(xb)}, std::tuple{"softmax", ca.softmax(), xa.softmax()}}) {
    const std::vector<uint64_t> w = bits_of(c), g = bits_of(x);
    ASSERT_EQ(w.size(), g.size()) << what;
    for (size_t i = 0; i < w.size(); i++) ASSERT_EQ(w[i], g[i]) << what << " element " << i;
  }
}

}  // namespace
}  // namespace doorbell
