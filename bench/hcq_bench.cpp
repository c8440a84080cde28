// CPU HCQ dispatch latency: an empty kernel through the queue (submit -> kernel ran on every worker -> signal
// observed by the host), per dispatch, with the median time from submit to the kernel's start and to the host
// seeing completion. Baselines measured in the same run: a two-thread spin ping-pong round trip (the hardware
// floor: a one-thread device needs exactly one round trip, host -> dispatcher -> host; more threads add a fan-out
// and a join inside the device) and the same round trip through a mutex + condition variable (what a sleeping
// handoff costs). Only meaningful on an otherwise idle machine with a core per thread.
// Each dispatch benchmark also measures its floor in the same run, right before its dispatches: the median one-way
// time of the spin ping-pong (half a round trip), between the host thread and a partner on the dispatcher's CPU
// when the device leaves the host thread a core of its own (CpuDevice::free_cpu; the host thread then runs there),
// else between two threads wherever the scheduler puts them, as it puts the host thread. start_ratio and
// done_ratio are the medians over that one way and round trip.
// BM_*Dispatch/<workers>/<waiters_help>: with waiters_help 1 the host thread waiting on the done signal runs the
// device's work itself (hcq/cpu/cpu_device.h); 0 is the device without it, measured in the same run. The default
// (-1) is 1 where the device's threads and the host's fill every core (all workers), else 0.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "hcq/cpu/cpu_device.h"
#include "hcq/wait_primitives.h"

namespace doorbell {
namespace {

// Core 0 stores the time it started at buffers[0].
void empty_kernel(void* const* buffers, const int64_t*, int32_t core_id, int32_t) {
  if (core_id == 0) static_cast<std::atomic<int64_t>*>(buffers[0])->store(monotonic_ns(), std::memory_order_relaxed);
}

double median(std::vector<int64_t>& v) {
  if (v.empty()) return 0;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return static_cast<double>(v[v.size() / 2]);
}

// One dispatch per iteration: patch the signal value, submit, wait for the host to see it. A bound queue's submit
// hands the ring a reference to the device copy instead of copying the commands.
void dispatch(benchmark::State& state, bool bound) {
  CpuDevice dev(CpuDeviceOptions{.workers = static_cast<uint32_t>(state.range(0)), .waiters_help = state.range(1) != 0});
  const int host_cpu = dev.free_cpu();
  const ThreadPin pin(host_cpu);
  std::vector<int64_t> one_way;
  {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));  // the new device's threads stop polling
    SpinEcho echo(host_cpu >= 0 ? dev.thread_cpu(0) : -1);
    for (uint64_t i = 1; i <= 2'000; i++) {
      const int64_t t0 = monotonic_ns();
      echo.round_trip(i);
      one_way.push_back((monotonic_ns() - t0) / 2);
    }
  }
  Signal& done = dev.new_signal("done");
  std::atomic<int64_t> started{0};
  HWQueue q;
  q.exec(empty_kernel, {&started}).signal(done, 0);
  if (bound) q.bind(dev);
  uint64_t value = 0;
  std::vector<int64_t> to_submitted;  // submit() returned
  std::vector<int64_t> to_start;
  std::vector<int64_t> to_done;
  for (auto _ : state) {
    q.patch_value(1, ++value);
    const int64_t t0 = monotonic_ns();
    q.submit(dev);
    const int64_t ts = monotonic_ns();
    done.wait(value);
    const int64_t t1 = monotonic_ns();
    to_submitted.push_back(ts - t0);
    to_start.push_back(started.load(std::memory_order_relaxed) - t0);
    to_done.push_back(t1 - t0);
  }
  if (state.iterations() > 0 && started.load() == 0) state.SkipWithError("the kernel never ran");
  state.counters["workers"] = static_cast<double>(dev.worker_count());
  state.counters["median_submit_ns"] = median(to_submitted);
  state.counters["median_to_start_ns"] = median(to_start);
  state.counters["median_to_done_ns"] = median(to_done);
  const double floor = median(one_way);
  state.counters["median_one_way_ns"] = floor;
  state.counters["start_ratio"] = floor > 0 ? median(to_start) / floor : 0;
  state.counters["done_ratio"] = floor > 0 ? median(to_done) / (2 * floor) : 0;
}
void BM_QueueDispatch(benchmark::State& state) { dispatch(state, false); }
void BM_BoundQueueDispatch(benchmark::State& state) { dispatch(state, true); }

// One thread (the dispatcher runs the kernel itself: one handoff each way), two, and one per core.
void dispatch_args(benchmark::internal::Benchmark* b) {
  const int64_t cores = std::max(1u, std::thread::hardware_concurrency());
  for (int64_t help : {0, 1}) {
    b->Args({1, help});
    if (cores >= 2) b->Args({2, help});
    if (cores > 2) b->Args({cores, help});
  }
}
// 10,000 dispatches each, as the figure is a median of 10,000.
BENCHMARK(BM_QueueDispatch)->Apply(dispatch_args)->Iterations(10'000)->UseRealTime();
BENCHMARK(BM_BoundQueueDispatch)->Apply(dispatch_args)->Iterations(10'000)->UseRealTime();

void BM_SpinPingPong(benchmark::State& state) {
  SpinEcho echo;
  uint64_t i = 0;
  for (auto _ : state) echo.round_trip(++i);
}
BENCHMARK(BM_SpinPingPong)->UseRealTime();

void BM_CondvarHandoff(benchmark::State& state) {
  std::mutex m;
  std::condition_variable to_partner;
  std::condition_variable to_host;
  uint64_t ping = 0;
  uint64_t pong = 0;
  bool stop = false;
  std::thread partner([&] {
    std::unique_lock lock(m);
    uint64_t seen = 0;
    while (true) {
      to_partner.wait(lock, [&] { return stop || ping != seen; });
      if (stop) return;
      seen = ping;
      pong = ping;
      to_host.notify_one();
    }
  });
  uint64_t i = 0;
  for (auto _ : state) {
    std::unique_lock lock(m);
    ping = ++i;
    to_partner.notify_one();
    to_host.wait(lock, [&] { return pong == i; });
  }
  {
    std::lock_guard lock(m);
    stop = true;
  }
  to_partner.notify_one();
  partner.join();
}
BENCHMARK(BM_CondvarHandoff)->UseRealTime();

}  // namespace
}  // namespace doorbell
