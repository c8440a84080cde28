// Warm realize of a tiny program, (x + 1) on 3 floats, end to end: build the lazy graph, schedule (schedule cache
// hit), look the kernel up in the program cache, allocate the output, submit to the CPU device, wait. tinygrad
// takes about 750 us for the same on this machine. Its parts are measured alone in the same run, so the ratio of
// each to the whole shows where the time goes; the floor is BM_QueueDispatch in bench_hcq.
#include <benchmark/benchmark.h>

#include <vector>

#include "frontend/tensor.h"
#include "hcq/compile_linear.h"
#include "hcq/run_linear.h"

namespace doorbell {
namespace {

void BM_WarmTinyRealize(benchmark::State& state) {
  Tensor x = Tensor({1.f, 2.f, 3.f}).realize();
  (x + 1).realize();  // compiles the kernel and fills the caches
  for (auto _ : state) {
    Tensor y = x + 1;
    y.realize();
    benchmark::DoNotOptimize(y);
  }
  if ((x + 1).tolist<float>() != std::vector<float>{2, 3, 4}) state.SkipWithError("(x + 1) computed a wrong value");
}
BENCHMARK(BM_WarmTinyRealize)->UseRealTime();

// Parts of the above: building the graph and scheduling it (a schedule cache hit) ...
void BM_WarmTinySchedule(benchmark::State& state) {
  Tensor x = Tensor({1.f, 2.f, 3.f}).realize();
  (x + 1).realize();
  for (auto _ : state) {
    Tensor y = x + 1;
    benchmark::DoNotOptimize(y.schedule_linear());
  }
}
BENCHMARK(BM_WarmTinySchedule)->UseRealTime();

// ... compile_linear of the scheduled LINEAR (a program cache hit) ...
void BM_WarmTinyCompileLookup(benchmark::State& state) {
  Tensor x = Tensor({1.f, 2.f, 3.f}).realize();
  Tensor y = x + 1;
  UOp linear = y.schedule_linear();
  compile_linear(linear);
  for (auto _ : state) benchmark::DoNotOptimize(compile_linear(linear));
}
BENCHMARK(BM_WarmTinyCompileLookup)->UseRealTime();

// ... and run_linear of the compiled LINEAR: submit, run on the device's workers, wait.
void BM_WarmTinyRun(benchmark::State& state) {
  Tensor x = Tensor({1.f, 2.f, 3.f}).realize();
  Tensor y = x + 1;
  UOp compiled = compile_linear(y.schedule_linear());
  run_linear(compiled);
  for (auto _ : state) run_linear(compiled);
}
BENCHMARK(BM_WarmTinyRun)->UseRealTime();

// cumsum over 70,000 floats, warm (kernels compiled): one window sum per element is O(n^2) adds; the two-stage
// split (frontend/scan.cpp) is O(n * 256).
void BM_WarmCumsum70000(benchmark::State& state) {
  std::vector<float> data(70000, 1.f);
  Tensor x = Tensor(data).realize();
  x.cumsum().realize();
  for (auto _ : state) {
    Tensor y = x.cumsum();
    y.realize();
    benchmark::DoNotOptimize(y);
  }
  if (x.cumsum()[69999].item<float>() != 70000.f) state.SkipWithError("cumsum computed a wrong value");
}
BENCHMARK(BM_WarmCumsum70000)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace doorbell
