// What the optimizer buys: one kernel run on one core (core_id 0 of 1), NOOPT=1 against the optimizer's kernel,
// both in the same run: the ratio is the optimizer's speedup. Kernels: a 1M-element float add (memory bound; clang
// already vectorizes it) and a 256x256x256 float matmul (compute bound: upcast and unroll give the C compiler
// independent accumulators).
// BM_X86VsClang: the same kernels (and a sum, an exp, a softmax, a max over axis 0 and a cast to int32) compiled by both CPU targets, the C target (clang)
// and the X86 target (compiler/x86), run alternately on one core in the same run: medians and the ratio x86 / clang
// (the targets: memory-bound kernels <= 1.2, matmul <= 2). BM_CompileLatencyX86VsClang: the compile latency
// per kernel of the same programs, x86 against clang (target: >= 100x, median).
#include <benchmark/benchmark.h>

#include <random>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "compiler/cpu/cpu_target.h"
#include "compiler/cpu/elf_loader.h"
#include "compiler/optimizer.h"
#include "compiler/program.h"
#include "compiler/x86/x86_target.h"
#include "bench/compile_latency.h"
#include "frontend/tensor.h"
#include "hcq/host_buffers.h"

namespace doorbell {
namespace {

// Before main: the object cache reads it on first use (BM_CompileLatencyX86VsClang times clang itself).
[[maybe_unused]] const bool kNoDiskCache = [] { return setenv("DISABLE_COMPILER_CACHE", "1", 1) == 0; }();

std::vector<float> random_floats(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1, 1);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

void run_kernel(benchmark::State& state, const Tensor& out, bool noopt) {
  set_noopt(noopt);
  UOp linear = out.schedule_linear();
  const UOp& call = linear.src(0);
  CompiledKernel k = compile_kernel(call);
  set_noopt(false);
  std::vector<void*> bufs;
  for (size_t i = 1; i < call.src().size(); i++) bufs.push_back(buffer_bytes(call.src(i)).data());
  for (auto _ : state) k.fn(bufs.data(), nullptr, 0, 1);
  state.counters["kernels"] = static_cast<double>(linear.src().size());
}

void BM_Add1M(benchmark::State& state) {
  Tensor a(random_floats(1 << 20, 1)), b(random_floats(1 << 20, 2));
  run_kernel(state, a + b, state.range(0) == 0);
  state.SetBytesProcessed(state.iterations() * 3 * 4 * (1 << 20));
}
BENCHMARK(BM_Add1M)->ArgName("optimized")->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

void BM_Matmul256(benchmark::State& state) {
  Tensor a(random_floats(256 * 256, 3), {256, 256}), b(random_floats(256 * 256, 4), {256, 256});
  run_kernel(state, a.matmul(b), state.range(0) == 0);
  state.counters["GFLOP/s"] = benchmark::Counter(2.0 * 256 * 256 * 256 * static_cast<double>(state.iterations()),
                                                 benchmark::Counter::kIsRate, benchmark::Counter::kIs1000);
}
BENCHMARK(BM_Matmul256)->ArgName("optimized")->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

// One kernel of `out`'s schedule (the last: the output's), compiled for `target` and loaded.
struct LoadedKernel {
  std::shared_ptr<LoadedObject> code;
  CpuKernelFn fn = nullptr;
};
LoadedKernel load_for(const Target& target, const UOp& call) {
  CompiledProgram p = compile_program(call, target);
  // X86_VS_CLANG_SOURCE=1: each target's source (the C, the x86 listing) on stderr, to compare the two
  if (std::getenv("X86_VS_CLANG_SOURCE")) std::fprintf(stderr, "%s\n", program_source(p.program).c_str());
  LoadedKernel k;
  k.code = LoadedObject::load(program_binary(p.program));
  k.fn = reinterpret_cast<CpuKernelFn>(k.code->symbol(program_info(p.program).name));
  return k;
}

double median_us(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// The programs BM_X86VsClang and BM_CompileLatencyX86VsClang measure, by index.
constexpr int kX86VsClangPrograms = 10;
Tensor x86_vs_clang_program(int which) {
  Tensor out;
  if (which == 0) out = Tensor(random_floats(1 << 20, 1)) + Tensor(random_floats(1 << 20, 2));
  else if (which == 1) out = Tensor(random_floats(256 * 256, 3), {256, 256}).matmul(Tensor(random_floats(256 * 256, 4), {256, 256}));
  else if (which == 2) out = Tensor(random_floats(1 << 22, 5)).sum();
  else if (which == 3) out = Tensor(random_floats(256 * 1024, 6), {256, 1024}).exp();
  else if (which == 4) out = Tensor(random_floats(512 * 1024, 7), {512, 1024}).softmax(-1);
  else if (which == 5) out = Tensor(random_floats(1024 * 1024, 8), {1024, 1024}).max({0});
  else if (which == 6) out = Tensor(random_floats(1 << 20, 9)).cast(dtypes::int32);
  else if (which == 7) out = Tensor(random_floats(1040 * 1040, 10), {1040, 1040}).matmul(Tensor(random_floats(1040 * 1040, 11), {1040, 1040}));
  else if (which == 8) {  // the mlp of `doorbell bench` (mlp 784-512-512-10 b256): every kernel of its schedule
    Tensor x(random_floats(256 * 784, 12), {256, 784}), w1(random_floats(784 * 512, 13), {784, 512}), b1(random_floats(512, 14));
    Tensor w2(random_floats(512 * 512, 15), {512, 512}), b2(random_floats(512, 16)), w3(random_floats(512 * 10, 17), {512, 10});
    out = ((x.matmul(w1) + b1).relu().matmul(w2) + b2).relu().matmul(w3) + Tensor(random_floats(10, 18));
  } else {  // its last layer alone: 10 outputs, not a multiple of the lanes
    out = Tensor(random_floats(256 * 512, 19), {256, 512}).matmul(Tensor(random_floats(512 * 10, 20), {512, 10})) + Tensor(random_floats(10, 21));
  }
  return out;
}

void BM_X86VsClang(benchmark::State& state) {
  Tensor out = x86_vs_clang_program(static_cast<int>(state.range(0)));
  // Every kernel of the schedule (a split sum has two), each target's in order, one core.
  UOp linear = out.schedule_linear();
  std::vector<std::vector<void*>> bufs;
  std::vector<LoadedKernel> clang, x86;
  try {
    for (const UOp& call : linear.src()) {
      bufs.emplace_back();
      for (size_t j = 1; j < call.src().size(); j++) bufs.back().push_back(buffer_bytes(call.src(j)).data());
      clang.push_back(load_for(cpu_c_target(), call));
      x86.push_back(load_for(cpu_x86_target(), call));
    }
  } catch (const std::exception& e) {
    return state.SkipWithError(e.what());
  }
  auto time_us = [&](const std::vector<LoadedKernel>& ks) {
    auto t0 = std::chrono::steady_clock::now();
    for (size_t i = 0; i < ks.size(); i++) ks[i].fn(bufs[i].data(), nullptr, 0, 1);
    return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
  };
  time_us(clang), time_us(x86);  // warm-up: page faults, caches
  std::vector<double> c, x;
  for (auto _ : state) {
    c.push_back(time_us(clang));
    x.push_back(time_us(x86));
  }
  state.counters["clang_us"] = median_us(c);
  state.counters["x86_us"] = median_us(x);
  state.counters["x86_over_clang"] = median_us(x) / median_us(c);
  // X86_VS_CLANG_PER_KERNEL=1: each kernel of the schedule timed alone (alternated, median of 21) on stderr
  if (std::getenv("X86_VS_CLANG_PER_KERNEL"))
    for (size_t i = 0; i < clang.size(); i++) {
      std::vector<double> ci, xi;
      for (int r = 0; r < 21; r++) {
        auto t0 = std::chrono::steady_clock::now();
        clang[i].fn(bufs[i].data(), nullptr, 0, 1);
        auto t1 = std::chrono::steady_clock::now();
        x86[i].fn(bufs[i].data(), nullptr, 0, 1);
        auto t2 = std::chrono::steady_clock::now();
        ci.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
        xi.push_back(std::chrono::duration<double, std::micro>(t2 - t1).count());
      }
      std::fprintf(stderr, "kernel %zu clang %.1f x86 %.1f\n", i, median_us(ci), median_us(xi));
    }
}
// Compile latency per kernel of those programs' schedules, x86 against clang in the same run (bench/compile_latency.h;
// the disk object cache is off in this binary, so clang compiles every time).
void BM_CompileLatencyX86VsClang(benchmark::State& state) {
  std::vector<UOp> kernels;
  for (int which = 0; which < kX86VsClangPrograms; which++) {
    const UOp linear = x86_vs_clang_program(which).schedule_linear();
    for (const UOp& call : linear.src()) kernels.push_back(call.src(0));
  }
  bench_support::compile_latency_x86_vs_clang(state, kernels);
}
BENCHMARK(BM_CompileLatencyX86VsClang)->Iterations(1)->Unit(benchmark::kMillisecond)->UseRealTime();

BENCHMARK(BM_X86VsClang)->ArgName("add1M_matmul256_sum4M_exp256K_softmax512x1K_max0_1Kx1K_castI32_1M_matmul1040_mlp784-512-512-10b256_mlplayer512x10b256")->DenseRange(0, kX86VsClangPrograms - 1)->Iterations(21)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace doorbell
