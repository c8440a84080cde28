// The floors' inner loops, alone in bench_loops.cpp: that file is compiled with -O3 -march=native and fast-math
// flags (tools/CMakeLists.txt) so the loops vectorize to the machine's widest registers, and it includes nothing
// from the standard library so no inline function compiled with those flags can be shared with other files.
#pragma once
#include <cstddef>

namespace doorbell::bench {

void loop_copy_scale(const float* a, float* b, size_t n, float s);
void loop_triad3(const float* a, const float* b, const float* c, float* d, size_t n);
float loop_sum(const float* a, size_t n);
void loop_fill(float* dst, const float* src, size_t n);  // src null: zeros

}  // namespace doorbell::bench
