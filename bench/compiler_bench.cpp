// What the optimizer buys: one kernel run on one core (core_id 0 of 1), NOOPT=1 against the optimizer's kernel,
// both in the same run: the ratio is the optimizer's speedup. Kernels: a 1M-element float add (memory bound; clang
// already vectorizes it) and a 256x256x256 float matmul (compute bound: upcast and unroll give the C compiler
// independent accumulators).
#include <benchmark/benchmark.h>

#include <random>

#include "compiler/optimizer.h"
#include "compiler/program.h"
#include "frontend/tensor.h"
#include "hcq/host_buffers.h"

namespace doorbell {
namespace {

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

}  // namespace
}  // namespace doorbell
