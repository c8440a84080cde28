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
#include <cstdlib>
#include <string>
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

std::array<uint32_t, 3> dims(const std::array<int64_t, 3>& a) {
  return {static_cast<uint32_t>(a[0]), static_cast<uint32_t>(a[1]), static_cast<uint32_t>(a[2])};
}

// Runs fn once and appends its wall time to `samples`. What fn assigns to the caller's variables is released after
// the timing, where the caller's loop iteration ends.
template <class F>
void time_into(std::vector<int64_t>& samples, F&& fn) {
  const int64_t t0 = monotonic_ns();
  fn();
  samples.push_back(monotonic_ns() - t0);
}

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
    time_into(replay_ns, [&] { benchmark::DoNotOptimize(jit({x})); });
    Tensor y;
    time_into(realize_ns, [&] { y = (x + 1).realize(); });
    HWQueue q;  // a fresh queue each time, released after the timing as y is
    time_into(queue_ns, [&] {
      q.exec(loaded, addresses, {}, grid, {1, 1, 1}).signal(done, ++value).submit(d);
      done.wait(value);
    });
    time_into(direct_ns, [&] { host->run(args, nullptr, 0, 1); });
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

// The same replay against realize and a fresh queue on the emulated NV GPU (MOCKGPU=1, ctest bench_jit_nv): the
// replay patches the bound queue's words in GPU memory and rings the doorbell once; realize and the queue encode
// their pushbuffers afresh. Figures are the emulator's: the ratios say what the Jit saves of the host's work, not
// what a GPU takes. Registered only under MOCKGPU=1 (the CPU-only run has no NV device).
void BM_JitReplayVsRealizeNv(benchmark::State& state) {
  Device& d = device("NV");
  Tensor x = Tensor({1.f, 2.f, 3.f}).to("NV").realize();
  Jit jit([](std::span<const Tensor> in) { return std::vector<Tensor>{in[0] + 1}; });
  jit({x});
  jit({x});
  UOp call = compile_linear((x + 1).schedule_linear()).src(0);
  const LoadedProgram& loaded = d.program(call.src(0));
  const ProgramInfo& info = program_info(call.src(0));
  const std::vector<uint64_t> addresses{buffer_device_address(call.src(1)), buffer_device_address(call.src(2))};
  Signal& done = d.new_signal("bench done");
  uint64_t value = 0;
  std::vector<int64_t> replay_ns, realize_ns, queue_ns;
  for (auto _ : state) {
    time_into(replay_ns, [&] { benchmark::DoNotOptimize(jit({x})); });
    Tensor y;
    time_into(realize_ns, [&] { y = (x + 1).realize(); });
    HWQueue q;  // a fresh queue each time, released after the timing as y is
    time_into(queue_ns, [&] {
      q.exec(loaded, addresses, {}, dims(info.global_size), dims(info.local_size)).signal(done, ++value).submit(d);
      done.wait(value);
    });
  }
  if (jit({x})[0].to("CPU").tolist<float>() != std::vector<float>{2, 3, 4}) return state.SkipWithError("the replay computed a wrong value");
  const double replay = median(replay_ns), realize = median(realize_ns), queue = median(queue_ns);
  state.counters["median_replay_ns"] = replay;
  state.counters["median_realize_ns"] = realize;
  state.counters["median_queue_ns"] = queue;
  state.counters["realize_over_replay"] = replay > 0 ? realize / replay : 0;
  state.counters["queue_over_replay"] = replay > 0 ? queue / replay : 0;
  state.counters["patched_words_per_replay"] = static_cast<double>(jit.stats().last_words);
}

// Three dependent queues, NV -> CPU -> NV (x + 1 on NV, * 2 on the CPU, + 3 on NV, the copies on the CPU's queue through
// NV's mapped memory): the replay submits all three back to back with device-side waits and the host waits once;
// realize runs the same function, a host wait at each device change.
void BM_JitThreeQueuesVsRealizeNv(benchmark::State& state) {
  Tensor x = Tensor({1.f, 2.f, 3.f}).to("NV").realize();
  auto f = [](std::span<const Tensor> in) {
    return std::vector<Tensor>{(((in[0] + 1).contiguous().to("CPU") * 2).contiguous().to("NV") + 3).contiguous()};
  };
  Jit jit{Jit::PlainFunction(f)};
  const std::vector<Tensor> in{x};
  jit(in);
  jit(in);
  std::vector<int64_t> replay_ns, realize_ns;
  for (auto _ : state) {
    time_into(replay_ns, [&] { benchmark::DoNotOptimize(jit(in)); });
    std::vector<Tensor> y;
    time_into(realize_ns, [&] {
      y = f(in);
      Tensor::realize(y);
    });
  }
  if (jit(in)[0].to("CPU").tolist<float>() != std::vector<float>{7, 9, 11}) return state.SkipWithError("the replay computed a wrong value");
  const double replay = median(replay_ns), realize = median(realize_ns);
  state.counters["median_replay_ns"] = replay;
  state.counters["median_realize_ns"] = realize;
  state.counters["realize_over_replay"] = replay > 0 ? realize / replay : 0;
  state.counters["host_waits_per_replay"] = static_cast<double>(jit.stats().host_waits);
}

[[maybe_unused]] const bool kNvRegistered = [] {
  const char* mock = std::getenv("MOCKGPU");
  if (mock == nullptr || std::string(mock) != "1") return false;
  benchmark::RegisterBenchmark("BM_JitReplayVsRealizeNv", BM_JitReplayVsRealizeNv)->Iterations(1000)->UseRealTime()->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("BM_JitThreeQueuesVsRealizeNv", BM_JitThreeQueuesVsRealizeNv)->Iterations(300)->UseRealTime()->Unit(benchmark::kMicrosecond);
  return true;
}();

}  // namespace
}  // namespace doorbell
