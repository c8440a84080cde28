// Compile latency per kernel, the x86 target against the C target (clang), measured in the same run: what
// bench_compile_time (the representative and conformance corpora) and bench_compiler (its own kernels) report as
// BM_CompileLatencyX86VsClang. Each kernel goes from its SINK to loaded code as compile_program would without its
// program cache: the C target once (the caller turns the disk object cache off: DISABLE_COMPILER_CACHE=1 before the
// cache is first used), the x86 target five times (its median). Counters are medians over the kernels.
#pragma once
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <string>
#include <vector>

#include "compiler/c_renderer.h"
#include "compiler/cpu/clang_compiler.h"
#include "compiler/cpu/cpu_target.h"
#include "compiler/cpu/elf_loader.h"
#include "compiler/linearize.h"
#include "compiler/x86/x86_target.h"

namespace doorbell::bench_support {

inline double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

template <class F>
double ms_of(F f) {
  auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// The x86 target from the SINK to loaded code.
inline void compile_x86(const UOp& sink) {
  const Target& t = cpu_x86_target();
  LoweredKernel low = t.lower(sink, true);
  std::vector<Statement> st = linearize(low.sink);
  std::string name = c_kernel_name(sink), listing = t.render(name, low, st);
  CompiledBinary bin = t.compile(listing, name);
  auto code = LoadedObject::load(bin.bytes);
  benchmark::DoNotOptimize(code->symbol(name));
}

// The C target likewise: pipeline, C renderer, clang, load.
inline void compile_clang(const UOp& sink) {
  UOp low = cpu_c_target().lower(sink, true).sink;
  std::string name = c_kernel_name(sink), src = render_c(name, low, linearize(low));
  auto code = LoadedObject::load(compile_c(src).object);
  benchmark::DoNotOptimize(code->symbol(name));
}

// One pass over `kernels` per benchmark iteration; the counters of the last.
inline void compile_latency_x86_vs_clang(benchmark::State& state, const std::vector<UOp>& kernels) {
  std::vector<double> clang_ms, x86_ms, ratio;
  size_t refused = 0;
  for (auto _ : state) {
    clang_ms.clear(), x86_ms.clear(), ratio.clear();
    refused = 0;
    for (const UOp& sink : kernels) {
      std::vector<double> x;
      try {
        for (int r = 0; r < 5; r++) x.push_back(ms_of([&] { compile_x86(sink); }));
      } catch (const std::invalid_argument&) {
        refused++;  // a kernel the x86 backend cannot express: no pair to compare
        continue;
      }
      const double c = ms_of([&] { compile_clang(sink); });
      clang_ms.push_back(c);
      x86_ms.push_back(median_of(x));
      ratio.push_back(c / x86_ms.back());
    }
  }
  state.counters["kernels"] = static_cast<double>(kernels.size());
  state.counters["x86_refused"] = static_cast<double>(refused);
  state.counters["clang_ms_median"] = median_of(clang_ms);
  state.counters["x86_us_median"] = median_of(x86_ms) * 1e3;
  state.counters["clang_over_x86_median"] = median_of(ratio);
  state.counters["clang_over_x86_min"] = ratio.empty() ? 0 : *std::min_element(ratio.begin(), ratio.end());
}

}  // namespace doorbell::bench_support
