// Jit replay of a tiny program, (x + 1) on 3 floats on the CPU device, end to end (check the input, patch, ring
// the doorbell, wait for the signal), against what the same work costs without it, measured in the same run,
// alternating each iteration:
//   realize:     (x + 1).realize(): build the graph, schedule (cache hit), program cache, allocate, submit, wait;
//   queue:       the compiled kernel recorded into a fresh HWQueue with a signal, submitted and waited for (what
//                run_linear does once the schedule is known);
//   direct call: the loaded kernel's function called on this thread (HostProgram::run): no device, no queue.
// Reported: the medians and the ratios realize/replay, queue/replay and replay/direct call. tinygrad's TinyJit
// takes about 60 us for the same replay on this machine. No assertion on time.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <array>
#include <vector>

#include "compiler/program.h"
#include "frontend/jit.h"
#include "hcq/compile_linear.h"
#include "hcq/device.h"
#include "hcq/devices.h"
#include "hcq/host_buffers.h"
#include "hcq/hw_queue.h"
#include "hcq/wait_primitives.h"

namespace doorbell {
namespace {

double median(std::vector<int64_t>& v) {
  if (v.empty()) return 0;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return static_cast<double>(v[v.size() / 2]);
}

void BM_JitReplayVsRealizeVsDirect(benchmark::State& state) {
  Device& d = device("CPU");
  Tensor x = Tensor({1.f, 2.f, 3.f}).realize();
  Jit jit([](std::span<const Tensor> in) { return std::vector<Tensor>{in[0] + 1}; });
  jit({x});
  jit({x});  // captured
  // The same kernel outside the Jit: its PROGRAM, loaded, and two buffers of its own.
  UOp call = compile_linear((x + 1).schedule_linear()).src(0);
  const LoadedProgram& loaded = d.program(call.src(0));
  const ProgramInfo& info = program_info(call.src(0));
  const auto* host = dynamic_cast<const HostProgram*>(&loaded);
  if (host == nullptr) return state.SkipWithError("the CPU device's program is not a HostProgram");
  void* const args[2] = {buffer_bytes(call.src(1)).data(), buffer_bytes(call.src(2)).data()};
  const std::vector<uint64_t> addresses{reinterpret_cast<uintptr_t>(args[0]), reinterpret_cast<uintptr_t>(args[1])};
  const std::array<uint32_t, 3> grid{static_cast<uint32_t>(info.global_size[0]), 1, 1};
  Signal& done = d.new_signal("bench done");
  uint64_t value = 0;
  std::vector<int64_t> replay_ns, realize_ns, queue_ns, direct_ns;
  for (auto _ : state) {
    int64_t t0 = monotonic_ns();
    benchmark::DoNotOptimize(jit({x}));
    int64_t t1 = monotonic_ns();
    replay_ns.push_back(t1 - t0);

    t0 = monotonic_ns();
    Tensor y = (x + 1).realize();
    t1 = monotonic_ns();
    realize_ns.push_back(t1 - t0);

    t0 = monotonic_ns();
    HWQueue q;
    q.exec(loaded, addresses, {}, grid, {1, 1, 1}).signal(done, ++value).submit(d);
    done.wait(value);
    t1 = monotonic_ns();
    queue_ns.push_back(t1 - t0);

    t0 = monotonic_ns();
    host->run(args, nullptr, 0, 1);
    t1 = monotonic_ns();
    direct_ns.push_back(t1 - t0);
  }
  if (jit({x})[0].tolist<float>() != std::vector<float>{2, 3, 4}) return state.SkipWithError("the replay computed a wrong value");
  const double replay = median(replay_ns), realize = median(realize_ns), queue = median(queue_ns), direct = median(direct_ns);
  state.counters["median_replay_ns"] = replay;
  state.counters["median_realize_ns"] = realize;
  state.counters["median_queue_ns"] = queue;
  state.counters["median_direct_call_ns"] = direct;
  state.counters["realize_over_replay"] = replay > 0 ? realize / replay : 0;
  state.counters["queue_over_replay"] = replay > 0 ? queue / replay : 0;
  state.counters["replay_over_direct_call"] = direct > 0 ? replay / direct : 0;
  state.counters["cores"] = static_cast<double>(info.global_size[0]);
}
BENCHMARK(BM_JitReplayVsRealizeVsDirect)->Iterations(3000)->UseRealTime()->Unit(benchmark::kMicrosecond);

// Replay alone, back to back: the device's workers stay warm between replays (the alternating run above lets them
// go idle while the other modes run), the figure the 2 us target is about.
void BM_JitReplayBackToBack(benchmark::State& state) {
  Tensor x = Tensor({1.f, 2.f, 3.f}).realize();
  Jit jit([](std::span<const Tensor> in) { return std::vector<Tensor>{in[0] + 1}; });
  jit({x});
  jit({x});
  for (auto _ : state) benchmark::DoNotOptimize(jit({x}));
  state.counters["patches_per_replay"] = static_cast<double>(jit.stats().last_patches);
}
BENCHMARK(BM_JitReplayBackToBack)->UseRealTime()->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace doorbell
