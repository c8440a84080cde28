// Random tensors, generated on the host from a counter-based generator: element i of a call is a pure function
// of (seed, counter + i), splitmix64's finalizer over the pair, so values do not depend on threads or order
// of evaluation, and a seed reproduces a sequence of calls exactly.
#include <atomic>
#include <cmath>
#include <mutex>
#include <numbers>

#include "frontend/shape.h"
#include "frontend/tensor.h"

namespace doorbell {

using frontend::fail;

namespace {

uint64_t mix64(uint64_t z) {  // splitmix64's finalizer: a bijection with full avalanche
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

struct Rng {
  std::mutex mu;
  uint64_t seed = 0;
  uint64_t counter = 0;
};
Rng& rng() {
  static Rng* r = new Rng();
  return *r;
}

// Reserves n counters of the current seed: returns (seed key, first counter).
std::pair<uint64_t, uint64_t> take(uint64_t n) {
  std::lock_guard lock(rng().mu);
  uint64_t first = rng().counter;
  rng().counter += n;
  return {mix64(rng().seed ^ 0x6a09e667f3bcc909ULL), first};
}

uint64_t bits_at(uint64_t key, uint64_t counter) { return mix64(key + (counter + 1) * 0x9e3779b97f4a7c15ULL); }

// A uniform value in [0, 1) with as many random bits as the dtype's significand holds, so rounding to the
// dtype can never reach 1.0.
double uniform(uint64_t bits, DType dt) {
  int digits = dt == dtypes::float64 ? 53 : dt == dtypes::float16 ? 11 : dt == dtypes::bfloat16 ? 8 : 24;
  return static_cast<double>(bits >> (64 - digits)) * std::ldexp(1.0, -digits);
}

void check(const char* op, const IntTuple& shape, DType dt, bool want_float) {
  if (want_float && !dt.is_float()) fail(op, "dtype " + dt.name() + "; expected a float dtype");
  if (!want_float && !dt.is_int()) fail(op, "dtype " + dt.name() + "; expected an integer dtype");
  if (dt.is_weak()) fail(op, "cannot store dtype " + dt.name());
  frontend::check_size(op, shape, dt);
  // The values are made on the host as 8-byte numbers first: that buffer must be addressable too.
  frontend::check_size(op, shape, dtypes::float64);
}

}  // namespace

void Tensor::manual_seed(uint64_t seed) {
  std::lock_guard lock(rng().mu);
  rng().seed = seed;
  rng().counter = 0;
}

Tensor Tensor::rand(IntTuple shape, DType dtype) {
  check("rand", shape, dtype, true);
  int64_t n = frontend::prod(shape);
  auto [key, first] = take(static_cast<uint64_t>(n));
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; i++) v[i] = uniform(bits_at(key, first + i), dtype);
  return from_data(v, std::move(shape), dtype);
}

Tensor Tensor::randn(IntTuple shape, DType dtype) {
  check("randn", shape, dtype, true);
  int64_t n = frontend::prod(shape);
  auto [key, first] = take(2 * static_cast<uint64_t>(n));
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; i++) {  // Box-Muller, as tinygrad's randn: cos(2 pi u1) * sqrt(-2 ln(1 - u2))
    double u1 = uniform(bits_at(key, first + 2 * i), dtypes::float64);
    double u2 = uniform(bits_at(key, first + 2 * i + 1), dtypes::float64);
    v[i] = std::cos(2 * std::numbers::pi * u1) * std::sqrt(-2 * std::log(1 - u2));
  }
  return from_data(v, std::move(shape), dtype);
}

Tensor Tensor::randint(IntTuple shape, int64_t low, int64_t high, DType dtype) {
  check("randint", shape, dtype, false);
  if (high <= low) fail("randint", "low " + std::to_string(low) + " is not below high " + std::to_string(high) + "; expected low < high");
  if (low < int_min(dtype) || static_cast<__int128>(high) - 1 > int_max(dtype))
    fail("randint", "range [" + std::to_string(low) + ", " + std::to_string(high) + ") does not fit " + dtype.name() + " [" +
                        std::to_string(static_cast<int64_t>(int_min(dtype))) + ", " + std::to_string(static_cast<uint64_t>(int_max(dtype))) +
                        "]; expected low >= the dtype's minimum and high - 1 <= its maximum");
  int64_t n = frontend::prod(shape);
  auto [key, first] = take(static_cast<uint64_t>(n));
  unsigned __int128 range = static_cast<unsigned __int128>(static_cast<__int128>(high) - low);
  std::vector<int64_t> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; i++)  // Lemire's multiply-shift: uniform in [0, range) without a modulo
    v[i] = static_cast<int64_t>(low + static_cast<__int128>((bits_at(key, first + i) * range) >> 64));
  return from_data(v, std::move(shape), dtype);
}

Tensor Tensor::rand_like(const Tensor& t, std::optional<DType> dtype) { return rand(t.shape(), dtype.value_or(t.dtype())); }
Tensor Tensor::randn_like(const Tensor& t, std::optional<DType> dtype) { return randn(t.shape(), dtype.value_or(t.dtype())); }

}  // namespace doorbell
