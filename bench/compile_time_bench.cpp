// Compile time per kernel for each target, with the program and object caches out of the way, over two corpora
// (argument `corpus`):
//  0: a fixed set of representative kernels (elementwise ops of every dtype, reductions, a matmul, softmax, float16
//     math, integer floor division and modulo with index math, transcendentals and pow), scheduled once;
//  1: the op conformance suite's kernels (tests/e2e/op_conformance_test.cpp, linked in when GoogleTest is there): the
//     suite runs once, silently, with a kernel observer (compiler/program.h) recording every kernel it compiles.
// Each kernel is compiled from its SINK on every iteration as each target's pipeline does:
//  - C:      the CPU pipeline (compiler/pipeline.h), linearize, render_c, compile_c (clang subprocess; DISABLE_COMPILER_CACHE=1), ELF load;
//  - PTX:    prepare_gpu_kernel, render_ptx (sm_90), assemble_ptx (ptxas subprocess, when installed);
//  - AMDGPU: optimize_for_gpu, render_llvm_ir (gfx1100), compile_amdgpu in process (relocatable, no ld.lld);
//  - X86:    the CPU pipeline, linearize, instruction selection + register allocation + listing, assemble + ELF
//            (compiler/x86), ELF load: all in process.
// BM_CompileLatencyX86VsClang times each kernel through both CPU targets in the same run (clang once per kernel,
// caches off; X86 the median of 5) and reports the medians over kernels of each and of the per-kernel ratio
// clang / X86 (the target: >= 100). CI (DOORBELL_BENCH_SHORT=1) runs it on the representative kernels; by
// hand `bench_compile_time --benchmark_filter=X86VsClang/corpus:1` runs the conformance suite's.
// Each target also runs without its backend compiler ("codegen": our passes and the renderer only), the part that
// doorbell's own changes move. DOORBELL_BENCH_SHORT=1 (CI) runs the conformance corpus through codegen only. Counters per kernel: ms_per_kernel, wall time (subprocesses included), and
// subprocess_cpu_ms_per_kernel, the CPU time of clang or ptxas; Google Benchmark's CPU time is this process's.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <unordered_set>
#include <cstdlib>
#include <string>
#include <vector>

#include <sys/resource.h>

#include "compiler/c_renderer.h"
#include "compiler/cpu/clang_compiler.h"
#include "compiler/cpu/cpu_target.h"
#include "compiler/cpu/elf_loader.h"
#include "compiler/gpu/gpu_optimizer.h"
#include "compiler/gpu/llvmir_renderer.h"
#include "compiler/gpu/ptx_renderer.h"
#include "compiler/gpu/ptxas.h"
#include "compiler/linearize.h"
#include "compiler/program.h"
#include "bench/compile_latency.h"
#include "compiler/x86/x86_target.h"
#include "frontend/tensor.h"
#if DOORBELL_HAVE_LLVM
#include "compiler/gpu/llvm/amdgpu_compiler.h"
#endif
#if DOORBELL_CONFORMANCE_CORPUS
#include <gtest/gtest.h>
#endif

namespace doorbell {
namespace {

// Before main: the object cache reads it on first use.
[[maybe_unused]] const bool kNoDiskCache = [] { return setenv("DISABLE_COMPILER_CACHE", "1", 1) == 0; }();

std::vector<Tensor> programs() {
  std::vector<Tensor> out;
  const DType numeric[] = {dtypes::int8, dtypes::int16, dtypes::int32, dtypes::int64, dtypes::uint8, dtypes::uint16,
                           dtypes::uint32, dtypes::uint64, dtypes::float16, dtypes::bfloat16, dtypes::float32, dtypes::float64};
  for (DType dt : numeric) {
    Tensor a = Tensor::empty({4096}, dt), b = Tensor::empty({4096}, dt);
    out.push_back((a + b).maximum(a) * b);
  }
  Tensor p = Tensor::empty({4096}, dtypes::bool_), q = Tensor::empty({4096}, dtypes::bool_);
  out.push_back((p & q).logical_not());
  Tensor m = Tensor::empty({512, 256}), n = Tensor::empty({256, 256});
  out.push_back(m.sum(1));
  out.push_back(m.max(0));
  out.push_back(Tensor::empty({512, 256}, dtypes::int32).sum(1));
  out.push_back(m.matmul(n));
  out.push_back(Tensor::empty({128, 1024}).softmax());
  Tensor h = Tensor::empty({4096}, dtypes::float16);
  out.push_back((h * h + h).sqrt());
  out.push_back(h.exp2());
  out.push_back(Tensor::empty({512, 256}, dtypes::float16).max(1));
  Tensor i = Tensor::empty({4096}, dtypes::int32), j = Tensor::empty({4096}, dtypes::int32);
  out.push_back(i.floordiv(j) + i.mod(j));
  out.push_back(i.floordiv(7) + i.mod(4));
  out.push_back(Tensor::empty({24, 40}).permute({1, 0}).reshape({960}).pad({{5, 3}}) + 1);  // index math: // and %
  Tensor x = Tensor::empty({4096});
  out.push_back(x.exp2() + x.log2());
  out.push_back(x.sin());
  out.push_back(x.pow(Tensor::empty({4096})));
  return out;
}

const std::vector<UOp>& representative_kernels() {
  static const std::vector<UOp> ks = [] {
    std::vector<UOp> out;
    for (const Tensor& t : programs()) {
      UOp linear = t.schedule_linear();
      for (const UOp& call : linear.src()) out.push_back(call.src(0));
    }
    return out;
  }();
  return ks;
}

#if DOORBELL_CONFORMANCE_CORPUS
std::mutex g_recorded_mutex;
std::vector<UOp> g_recorded;
std::unordered_set<const UOpNode*> g_seen;
void record(const UOp& sink) {
  std::lock_guard lock(g_recorded_mutex);
  if (g_seen.insert(sink.get()).second) g_recorded.push_back(sink);
}
#endif

// The conformance suite's kernels, each once; empty without GoogleTest.
const std::vector<UOp>& conformance_kernels() {
  static const std::vector<UOp> ks = [] {
#if DOORBELL_CONFORMANCE_CORPUS
    int argc = 1;
    char name[] = "bench_compile_time";
    char* argv[] = {name, nullptr};
    ::testing::InitGoogleTest(&argc, argv);
    ::testing::TestEventListeners& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());  // the suite's pass/fail lines are not the bench's
    set_kernel_observer(record);
    const int rc = RUN_ALL_TESTS();
    set_kernel_observer(nullptr);
    if (rc != 0) std::fprintf(stderr, "bench_compile_time: the op conformance suite failed while its kernels were harvested\n");
    std::lock_guard lock(g_recorded_mutex);
    return g_recorded;
#else
    return std::vector<UOp>{};
#endif
  }();
  return ks;
}

bool short_mode() {
  const char* e = std::getenv("DOORBELL_BENCH_SHORT");
  return e != nullptr && std::string(e) == "1";
}

// CPU time of the finished subprocesses (clang, ptxas), in ms: on a loaded machine steadier than wall time.
double children_cpu_ms() {
  rusage r{};
  getrusage(RUSAGE_CHILDREN, &r);
  auto ms = [](const timeval& t) { return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_usec) / 1e3; };
  return ms(r.ru_utime) + ms(r.ru_stime);
}

// state.range(0): the corpus; state.range(1): with the target's backend compiler.
template <class F>
void per_kernel(benchmark::State& state, F compile) {
  const bool conformance = state.range(0) == 1;
  if (conformance && state.range(1) == 1 && short_mode()) return state.SkipWithError("DOORBELL_BENCH_SHORT=1: codegen only");
  const std::vector<UOp>& ks = conformance ? conformance_kernels() : representative_kernels();
  if (ks.empty()) return state.SkipWithError("built without GoogleTest: no op conformance suite to harvest");
  auto t0 = std::chrono::steady_clock::now();
  double c0 = children_cpu_ms();
  for (auto _ : state)
    for (const UOp& k : ks) compile(k);
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  double n = static_cast<double>(ks.size()) * static_cast<double>(state.iterations());
  state.counters["kernels"] = static_cast<double>(ks.size());
  state.counters["ms_per_kernel"] = ms / n;
  state.counters["subprocess_cpu_ms_per_kernel"] = (children_cpu_ms() - c0) / n;
}

void BM_CompileC(benchmark::State& state) {
  const bool backend = state.range(1) == 1;
  per_kernel(state, [&](const UOp& sink) {
    UOp low = cpu_c_target().lower(sink, true).sink;
    std::vector<Statement> st = linearize(low);
    std::string name = c_kernel_name(sink), src = render_c(name, low, st);
    if (!backend) return benchmark::DoNotOptimize(src);
    CompiledObject obj = compile_c(src);
    auto code = LoadedObject::load(obj.object);
    benchmark::DoNotOptimize(code->symbol(name));
  });
}
BENCHMARK(BM_CompileC)->ArgNames({"corpus", "clang"})->ArgsProduct({{0, 1}, {0, 1}})->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_CompileX86(benchmark::State& state) {
  const bool backend = state.range(1) == 1;
  per_kernel(state, [&](const UOp& sink) {
    if (backend) return bench_support::compile_x86(sink);
    const Target& t = cpu_x86_target();
    LoweredKernel low = t.lower(sink, true);
    benchmark::DoNotOptimize(t.render(c_kernel_name(sink), low, linearize(low.sink)));
  });
}
BENCHMARK(BM_CompileX86)->ArgNames({"corpus", "assemble"})->ArgsProduct({{0, 1}, {0, 1}})->Unit(benchmark::kMillisecond)->UseRealTime();

// Per kernel: the C target's whole compile once, the X86 target's median of 5 (bench/compile_latency.h).
void BM_CompileLatencyX86VsClang(benchmark::State& state) {
  const bool conformance = state.range(0) == 1;
  if (conformance && short_mode()) return state.SkipWithError("DOORBELL_BENCH_SHORT=1: representative kernels only");
  const std::vector<UOp>& ks = conformance ? conformance_kernels() : representative_kernels();
  if (ks.empty()) return state.SkipWithError("built without GoogleTest: no op conformance suite to harvest");
  bench_support::compile_latency_x86_vs_clang(state, ks);
}
BENCHMARK(BM_CompileLatencyX86VsClang)->ArgName("corpus")->Arg(0)->Arg(1)->Iterations(1)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_CompilePtx(benchmark::State& state) {
  const bool backend = state.range(1) == 1;
  if (backend && !ptxas_available()) return state.SkipWithError("ptxas not found on PATH or in /usr/local/cuda/bin");
  const GpuTarget& t = gpu_target("sm_90");
  per_kernel(state, [&](const UOp& sink) {
    std::string ptx = render_ptx(c_kernel_name(sink), prepare_gpu_kernel(sink, t), t);
    if (!backend) return benchmark::DoNotOptimize(ptx);
    benchmark::DoNotOptimize(assemble_ptx(ptx, "sm_90").cubin);
  });
}
BENCHMARK(BM_CompilePtx)->ArgNames({"corpus", "ptxas"})->ArgsProduct({{0, 1}, {0, 1}})->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_CompileAmdgpu(benchmark::State& state) {
  const bool backend = state.range(1) == 1;
#if !DOORBELL_HAVE_LLVM
  if (backend) return state.SkipWithError("built without LLVM");
#endif
  const GpuTarget& t = gpu_target("gfx1100");
  per_kernel(state, [&](const UOp& sink) {
    std::string name = c_kernel_name(sink), ir = render_llvm_ir(name, optimize_for_gpu(sink, t), t);
    if (!backend) return benchmark::DoNotOptimize(ir);
#if DOORBELL_HAVE_LLVM
    benchmark::DoNotOptimize(compile_amdgpu(ir, "gfx1100", {.link = false}).object);
#endif
  });
}
BENCHMARK(BM_CompileAmdgpu)->ArgNames({"corpus", "llvm"})->ArgsProduct({{0, 1}, {0, 1}})->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace doorbell
