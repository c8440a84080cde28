// Scheduling speed: the time from a tensor graph to a LINEAR of kernels (rangeify, ordering, memory plan), without
// the schedule cache (every call schedules from scratch) and with it (a hit binds the cached schedule to the
// graph's buffers). Reported per kernel and per UOp of the tensor graph. The baseline measured in the same run is
// a plain toposort of the same tensor graph: the least any pass over it costs.
// For reference, tinygrad (Python) takes 1.5 to 10 ms to schedule such graphs on this machine kind.
#include <benchmark/benchmark.h>

#include "frontend/tensor.h"
#include "scheduler/schedule.h"
#include "scheduler/schedule_cache.h"

namespace doorbell {
namespace {

UOp add_mul() { return ((Tensor::empty({10000000}) + 1) * 2).uop(); }
UOp softmax() { return Tensor::empty({4096, 1024}).softmax(-1).uop(); }
UOp matmul() { return Tensor::empty({1024, 1024}).matmul(Tensor::empty({1024, 1024})).uop(); }
UOp mlp() {
  Tensor x = Tensor::empty({256, 784});
  Tensor h1 = (x.matmul(Tensor::empty({784, 512})) + Tensor::empty({512})).relu();
  Tensor h2 = (h1.matmul(Tensor::empty({512, 512})) + Tensor::empty({512})).relu();
  return (h2.matmul(Tensor::empty({512, 10})) + Tensor::empty({10})).uop();
}
UOp layers(int n) {
  Tensor x = Tensor::empty({64, 512});
  for (int i = 0; i < n; i++) x = (x.matmul(Tensor::empty({512, 512})) + Tensor::empty({512})).relu();
  return x.uop();
}

void run(benchmark::State& state, UOp (*graph)(), bool cached) {
  UOp g = graph();
  set_schedule_cache_enabled(cached);
  clear_schedule_cache();
  // the layout choices of DEV's target, as Tensor::schedule_linear takes them (the CPU's: matmul 1024 packs w)
  const ScheduleOptions options = schedule_options_for(default_device_name());
  ScheduleResult first = schedule({g}, options);  // warms the cache when it is on
  size_t kernels = first.linear.src().size(), uops = g.toposort().size();
  for (auto _ : state) benchmark::DoNotOptimize(schedule({g}, options).linear.get());
  set_schedule_cache_enabled(true);
  double n = static_cast<double>(state.iterations());
  state.counters["kernels"] = static_cast<double>(kernels);
  state.counters["uops"] = static_cast<double>(uops);
  state.counters["us_per_kernel"] = benchmark::Counter(n * kernels, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.counters["us_per_uop"] = benchmark::Counter(n * uops, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

void baseline(benchmark::State& state, UOp (*graph)()) {
  UOp g = graph();
  size_t uops = g.toposort().size();
  for (auto _ : state) benchmark::DoNotOptimize(g.toposort().size());
  state.counters["uops"] = static_cast<double>(uops);
  state.counters["us_per_uop"] = benchmark::Counter(static_cast<double>(state.iterations()) * uops,
                                                    benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

UOp layers1() { return layers(1); }
UOp layers4() { return layers(4); }
UOp layers16() { return layers(16); }
UOp layers64() { return layers(64); }

#define DOORBELL_SCHEDULE_BENCH(name, fn)                                                          \
  BENCHMARK_CAPTURE(run, name##_nocache, fn, false)->Unit(benchmark::kMicrosecond);              \
  BENCHMARK_CAPTURE(run, name##_cachehit, fn, true)->Unit(benchmark::kMicrosecond);              \
  BENCHMARK_CAPTURE(baseline, name##_toposort, fn)->Unit(benchmark::kMicrosecond);

DOORBELL_SCHEDULE_BENCH(add_mul_1e7, add_mul)
DOORBELL_SCHEDULE_BENCH(softmax_4096x1024, softmax)
DOORBELL_SCHEDULE_BENCH(matmul_1024, matmul)
DOORBELL_SCHEDULE_BENCH(mlp_784_512_512_10, mlp)
DOORBELL_SCHEDULE_BENCH(layers_1, layers1)
DOORBELL_SCHEDULE_BENCH(layers_4, layers4)
DOORBELL_SCHEDULE_BENCH(layers_16, layers16)
DOORBELL_SCHEDULE_BENCH(layers_64, layers64)

}  // namespace
}  // namespace doorbell
