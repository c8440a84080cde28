// doorbell's CPU kernels against this machine's limits: every case of `doorbell bench --full` (tools/bench_suite.h),
// one benchmark each. The time is doorbell's kernel-only time (manual time: the sum of its kernels' timestamps per
// run); counters give the floor measured in the same run on the same sizes (floor_ns, its median), the ratio of
// doorbell's median to it, and GFLOP/s (FLOPS) or bytes/s. A wrong answer fails the benchmark.
//
// By hand, no filter: every case, 5 iterations each (minutes). Short mode, for CI (`--short` or
// DOORBELL_BENCH_SHORT=1): the short suite's cases with 2 iterations each.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "frontend/tensor.h"
#include "tools/bench_suite.h"

namespace doorbell::bench {
namespace {

Floors& floors() {
  static Floors* f = new Floors();  // one pool and one OpenBLAS for the whole run; never destroyed (exit order)
  return *f;
}

void run_case(benchmark::State& state, const CaseSpec& spec) {
  Tensor::manual_seed(1234);
  std::unique_ptr<BenchCase> c = spec.make(floors());
  std::vector<double> samples;
  for (auto _ : state) {
    double ns = c->run_doorbell();
    samples.push_back(ns);
    state.SetIterationTime(ns * 1e-9);
  }
  const CaseInfo& info = c->info();
  std::vector<double> floor_samples;
  if (c->floor_available())
    for (size_t i = 0; i < samples.size(); i++) floor_samples.push_back(static_cast<double>(c->run_floor()));
  double doorbell_ns = median_of(samples), floor_ns = median_of(floor_samples);
  state.counters["doorbell_median_ns"] = doorbell_ns;
  state.counters["floor_ns"] = floor_ns;
  state.counters["ratio"] = floor_ns > 0 ? doorbell_ns / floor_ns : 0;
  state.counters["kernels"] = static_cast<double>(c->kernel_count());
  if (info.flops_unit)
    state.counters["FLOPS"] = benchmark::Counter(info.work, benchmark::Counter::kIsIterationInvariantRate);
  else
    state.SetBytesProcessed(static_cast<int64_t>(info.work * static_cast<double>(state.iterations())));
  state.SetLabel(info.floor_name + (c->floor_available() ? "" : " unavailable: " + c->floor_unavailable_reason()));
  CheckResult check = c->check();
  state.counters["check_ok"] = check.ok ? 1 : 0;
  if (!check.ok) state.SkipWithError(("MISMATCH: " + check.detail).c_str());
}

void BM_DispatchLatency(benchmark::State& state, int iterations) {
  std::vector<LatencyResult> rows;
  for (auto _ : state) {
    rows = measure_dispatch_latency(iterations);
    state.SetIterationTime(rows.back().doorbell_ns * 1e-9);
  }
  state.counters["median_to_start_ns"] = rows.at(0).doorbell_ns;
  state.counters["median_to_done_ns"] = rows.at(1).doorbell_ns;
  state.counters["pingpong_round_trip_ns"] = rows.at(1).floor_ns;
  state.counters["ratio"] = rows.at(1).floor_ns > 0 ? rows.at(1).doorbell_ns / rows.at(1).floor_ns : 0;
}

}  // namespace
}  // namespace doorbell::bench

int main(int argc, char** argv) {
  // --short is ours: take it out before Google Benchmark sees the arguments (it rejects unknown flags).
  const char* env = std::getenv("DOORBELL_BENCH_SHORT");
  bool short_mode = env != nullptr && *env != '\0' && std::strcmp(env, "0") != 0;
  std::vector<char*> args;
  for (int i = 0; i < argc; i++) {
    if (i > 0 && std::strcmp(argv[i], "--short") == 0) short_mode = true;
    else args.push_back(argv[i]);
  }
  int count = static_cast<int>(args.size());

  const int iterations = short_mode ? 2 : 5;
  static const std::vector<doorbell::bench::CaseSpec> cases = doorbell::bench::bench_cases();
  for (const doorbell::bench::CaseSpec& spec : cases) {
    if (short_mode && !spec.in_short) continue;
    std::string name = "BM_CpuLimits/" + spec.name;
    for (char& ch : name)
      if (ch == ' ') ch = '/';
    benchmark::RegisterBenchmark(name.c_str(), [&spec](benchmark::State& s) { doorbell::bench::run_case(s, spec); })
        ->Iterations(iterations)
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
  }
  const int dispatches = short_mode ? 2'000 : 10'000;
  benchmark::RegisterBenchmark("BM_CpuLimits/dispatch_latency",
                               [dispatches](benchmark::State& s) { doorbell::bench::BM_DispatchLatency(s, dispatches); })
      ->Iterations(1)
      ->UseManualTime()
      ->Unit(benchmark::kMicrosecond);

  benchmark::Initialize(&count, args.data());
  if (benchmark::ReportUnrecognizedArguments(count, args.data())) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
