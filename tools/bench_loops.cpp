#include "tools/bench_loops.h"

namespace doorbell::bench {

void loop_copy_scale(const float* __restrict a, float* __restrict b, size_t n, float s) {
  for (size_t i = 0; i < n; i++) b[i] = a[i] * s;
}

void loop_triad3(const float* __restrict a, const float* __restrict b, const float* __restrict c, float* __restrict d,
                 size_t n) {
  for (size_t i = 0; i < n; i++) d[i] = a[i] * b[i] + c[i];
}

// 64 independent accumulators (several vector registers): one accumulator would wait on the add latency each step
// and run below memory bandwidth.
float loop_sum(const float* __restrict a, size_t n) {
  constexpr size_t kLanes = 64;
  float acc[kLanes] = {};
  size_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (size_t j = 0; j < kLanes; j++) acc[j] += a[i + j];
  float total = 0;
  for (; i < n; i++) total += a[i];
  for (size_t j = 0; j < kLanes; j++) total += acc[j];
  return total;
}

void loop_fill(float* __restrict dst, const float* __restrict src, size_t n) {
  if (src == nullptr) {
    for (size_t i = 0; i < n; i++) dst[i] = 0;
  } else {
    for (size_t i = 0; i < n; i++) dst[i] = src[i];
  }
}

}  // namespace doorbell::bench
