// Empty-kernel dispatch on the Vulkan device (DEV=VK: lavapipe here, a GPU's Vulkan driver elsewhere) against the
// CPU device's same measurement in the same run, alternating each iteration so both see the same drift of a shared
// machine. The "empty" kernel is the smallest one the stack compiles, y[0] += 1 on one float (a kernel without a body
// is not compiled), loaded on each device from its own target. Three measurements:
//   submit -> done:       one bound queue [exec, signal], its signal value patched and resubmitted; host time from
//                         submit until the host sees the signal;
//   batch of 1000:        one submission of 1000 execs and a signal: submit -> done over 1000 (per kernel);
//   1000 submissions:     1000 submissions of one unbound queue [exec, signal] (patched, so each is a copy), the
//                         host waiting only for the last: over 1000.
// Each reports both devices' medians and vk_over_cpu, the ratio of the medians, as counters (JSON with
// --benchmark_out). No assertion on time. Skipped with the reason when DEV=VK cannot open.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "compiler/program.h"
#include "frontend/tensor.h"
#include "hcq/devices.h"
#include "hcq/hw_queue.h"
#include "hcq/wait_primitives.h"
#include "tools/device_kernel.h"

namespace doorbell {
namespace {

constexpr int kBatch = 1000;
constexpr auto kTimeout = std::chrono::milliseconds(60'000);

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

// One device's side: the tiny kernel loaded there, the 4 bytes it increments (storage of the device where it has
// memory of its own, else host memory), its done signal and its bound queue [exec, signal].
struct Side {
  Device* dev = nullptr;
  DeviceKernel kernel;
  Device::Storage storage{};
  std::vector<float> host{0.0f};
  Signal* done = nullptr;
  HWQueue bound;
  HWQueue single;  // the same, unbound: each submit hands the device a copy, so it may be patched while in flight
  explicit Side(Device& d) : dev(&d) {
    Tensor y = Tensor::zeros({1}).contiguous().realize();
    kernel = load_device_kernel(d, y.assign(y + 1));
    storage = d.allocate_storage(4);
    done = &d.new_signal("dispatch bench done");
    exec(bound);
    bound.signal(*done, 0).bind(d);
    exec(single);
    single.signal(*done, 0);
  }
  ~Side() {
    if (storage.address != 0) dev->release_storage(storage);
  }
  Side(const Side&) = delete;
  Side& operator=(const Side&) = delete;
  uint64_t address() const { return storage.address != 0 ? storage.address : reinterpret_cast<uintptr_t>(host.data()); }
  void exec(HWQueue& q) const { q.exec(*kernel.program, std::vector<uint64_t>{address()}, kernel.grid, kernel.block); }
  uint64_t next() const { return done->value() + 1; }
};

// DEV=VK (the registry's), or null after telling the benchmark why not.
Device* open_vk(benchmark::State& state) {
  try {
    Device& d = device("VK");
    (void)d.target();
    return &d;
  } catch (const std::exception& e) {
    state.SkipWithError((std::string("DEV=VK does not open: ") + e.what()).c_str());
    return nullptr;
  }
}

// `measure(side)` returns one sample's ns; the two devices alternate within each iteration. The counters are per
// kernel (`kernels` per sample).
void alternate(benchmark::State& state, int kernels, const std::function<double(Side&)>& measure) {
  Device* vk_device = open_vk(state);
  if (vk_device == nullptr) return;
  Side vk(*vk_device), cpu(device("CPU"));
  measure(vk), measure(cpu);  // first-use costs (pipeline creation, the first submission) out of the samples
  std::vector<double> vk_ns, cpu_ns;
  for (auto _ : state) {
    vk_ns.push_back(measure(vk));
    cpu_ns.push_back(measure(cpu));
  }
  const double v = median(vk_ns) / kernels, c = median(cpu_ns) / kernels;
  state.counters["vk_median_ns"] = v;
  state.counters["cpu_median_ns"] = c;
  state.counters["vk_over_cpu"] = c > 0 ? v / c : 0;
  state.counters["kernels_per_sample"] = kernels;
}

void BM_VkEmptyKernelSubmitToDoneVsCpu(benchmark::State& state) {
  alternate(state, 1, [](Side& s) {
    const uint64_t v = s.next();
    s.bound.patch_value(1, v);
    const int64_t t0 = monotonic_ns();
    s.bound.submit(*s.dev);
    s.done->wait(v, kTimeout);
    return static_cast<double>(monotonic_ns() - t0);
  });
}
BENCHMARK(BM_VkEmptyKernelSubmitToDoneVsCpu)->Iterations(200)->UseRealTime()->Unit(benchmark::kMicrosecond);

void BM_VkBatchOf1000KernelsInOneSubmissionVsCpu(benchmark::State& state) {
  alternate(state, kBatch, [](Side& s) {
    HWQueue q;
    for (int i = 0; i < kBatch; i++) s.exec(q);
    const uint64_t v = s.next();
    q.signal(*s.done, v);
    const int64_t t0 = monotonic_ns();
    q.submit(*s.dev);
    s.done->wait(v, kTimeout);
    return static_cast<double>(monotonic_ns() - t0);
  });
}
BENCHMARK(BM_VkBatchOf1000KernelsInOneSubmissionVsCpu)->Iterations(5)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_Vk1000SingleKernelSubmissionsVsCpu(benchmark::State& state) {
  alternate(state, kBatch, [](Side& s) {
    const uint64_t first = s.next();
    const int64_t t0 = monotonic_ns();
    for (int i = 0; i < kBatch; i++) {
      s.single.patch_value(1, first + i);
      s.single.submit(*s.dev);
    }
    s.done->wait(first + kBatch - 1, kTimeout);
    return static_cast<double>(monotonic_ns() - t0);
  });
}
BENCHMARK(BM_Vk1000SingleKernelSubmissionsVsCpu)->Iterations(5)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace doorbell
