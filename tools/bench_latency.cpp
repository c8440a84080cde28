#include "tools/bench_latency.h"

#include "frontend/jit.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <thread>

#include "frontend/tensor.h"
#include "hcq/cpu/cpu_device.h"
#include "hcq/devices.h"
#include "hcq/hw_queue.h"
#include "hcq/amd/amd_device.h"
#include "hcq/nv/nv_device.h"
#include "hcq/signal.h"
#include "hcq/wait_primitives.h"
#include "kernel-interface/driver_seams.h"
#include "tools/checked_gpu.h"
#include "tools/device_kernel.h"
#include "hcq/json_text.h"

namespace doorbell::bench {
namespace {

using nv::NvDevice;
using amd::AmdDevice;

// The rows' path names: stable keys for the JSON and the plots.
constexpr const char* kPathToStart = "submit -> kernel start";
constexpr const char* kPathToDone = "submit -> done";
constexpr const char* kPathSignalRoundTrip = "host -> device signal round trip";
constexpr const char* kPathSmallCopy = "copy 64 B: submit -> done";
constexpr const char* kPathRealize = "realize x+1 (3 floats)";
constexpr const char* kPathJitReplay = "jit replay x+1 (3 floats)";
constexpr const char* kPathJitReplay10 = "jit replay 10-kernel program";
std::string batch_path(int n) { return "batch of " + std::to_string(n) + ": per kernel"; }
// "replay" is a bound HWQueue of N kernels, its signal value patched and the queue resubmitted: what a captured
// program's replay does underneath (tinygrad's HCQGraph: one bound queue, patched, resubmitted). The Jit's own replay
// (frontend/jit.h: input checks, patching, doorbell, wait) has rows of its own on the devices that realize.
std::string replay_path(int n) { return "replay " + std::to_string(n) + "-kernel program (bound queue)"; }
std::string large_copy_path(uint64_t bytes) { return "copy " + std::to_string(bytes >> 20) + " MiB: submit -> done"; }

constexpr uint64_t kSmallCopyBytes = 64;
constexpr auto kWaitTimeout = std::chrono::milliseconds(60'000);

std::string fmt(const char* f, auto... args) {
  char buf[256];
  std::snprintf(buf, sizeof buf, f, args...);
  return buf;
}

// Core 0 stores the time it started at buffers[0].
void stamping_kernel(void* const* buffers, const int64_t*, int32_t core_id, int32_t) {
  if (core_id == 0) static_cast<std::atomic<int64_t>*>(buffers[0])->store(monotonic_ns(), std::memory_order_relaxed);
}
void empty_kernel(void* const*, const int64_t*, int32_t, int32_t) {}

// Spins the host thread for `ns` (the device meanwhile reaches a wait in its queue).
void spin_for(int64_t ns) {
  const int64_t until = monotonic_ns() + ns;
  while (monotonic_ns() < until) {
  }
}

// The floors, measured on the host just before a device's rows.
struct HostFloors {
  std::vector<double> one_way, round_trip;  // ping-pong
  std::vector<double> large_memcpy;         // memcpy of the large copy's bytes
};

HostFloors measure_floors(int iterations, uint64_t large_bytes, int copy_samples, int partner_cpu) {
  HostFloors f;
  // The previous device's threads poll for a while after their last work (CpuDeviceOptions::spin_ns): let them sleep
  // first, or on a 2-core machine they stand between the two threads of the ping-pong.
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  {
    SpinEcho echo(partner_cpu);
    for (int i = 1; i <= iterations; i++) {
      const int64_t t0 = monotonic_ns();
      echo.round_trip(static_cast<uint64_t>(i));
      const double rt = static_cast<double>(monotonic_ns() - t0);
      f.round_trip.push_back(rt);
      f.one_way.push_back(rt / 2);
    }
  }
  std::vector<uint8_t> src(large_bytes, 0x5a), dst(large_bytes, 0);
  std::memcpy(dst.data(), src.data(), large_bytes);  // first touch out of the samples
  for (int i = 0; i < copy_samples; i++) {
    const int64_t t0 = monotonic_ns();
    std::memcpy(dst.data(), src.data(), large_bytes);
    std::atomic_signal_fence(std::memory_order_seq_cst);
    f.large_memcpy.push_back(static_cast<double>(monotonic_ns() - t0));
  }
  return f;
}

// What differs between devices: how an empty kernel is recorded and where its start time comes from, and the
// memory the copies use (host pointers on the CPU device, device addresses on a GPU).
struct Target {
  std::string key, detail;
  Device* dev = nullptr;
  std::unique_ptr<CheckedGpu> gpu;  // null on the CPU device
  int samples = 0;         // per row (batches: fewer for the big ones)
  std::string realize_on;  // registry name realize runs on; "" for a device outside the registry
  // A CPU device with a core to spare: the host thread runs on host_cpu, and the ping-pong's partner on the
  // dispatcher's CPU (partner_cpu), so that the floor is a handoff between the same two CPUs as the dispatch.
  // -1: where the scheduler puts them (every CPU has a device thread: the all-core device; a GPU).
  int host_cpu = -1, partner_cpu = -1;
  // CPU: the stamping kernel's word; a GPU: a timestamp command right before the kernel, on the device's clock.
  // The word has a cache line of its own: the dispatcher writes it on every dispatch, and sharing a line with the
  // fields the host reads to submit (dev) made each submit wait for that line, a cost of the benchmark.
  struct alignas(64) {
    std::atomic<int64_t> ns{0};
  } start_word;
  std::atomic<int64_t>& started = start_word.ns;
  Signal* start_signal = nullptr;
  std::optional<DeviceKernel> tiny;  // a GPU: a one-thread kernel (no kernel without a body can be compiled)
  CheckedMemory tiny_out{};
  // copies: small host -> device and large host -> device
  void *small_dst = nullptr, *large_dst = nullptr;
  const void *small_src = nullptr, *large_src = nullptr;
  uint64_t large_bytes = 0;
  std::vector<uint8_t> host_small, host_large, host_small_dst, host_large_dst;  // CPU device's copy buffers
  std::vector<CheckedMemory> gpu_memory;

  void record_kernel(HWQueue& q, bool stamp) {
    if (gpu == nullptr) {
      if (stamp) q.exec(stamping_kernel, {static_cast<void*>(&started)});
      else q.exec(empty_kernel, std::span<void* const>{}, {});
      return;
    }
    if (stamp) q.timestamp(*start_signal);
    q.exec(*tiny->program, std::vector<uint64_t>{tiny_out.va}, tiny->grid, tiny->block);
  }
  double start_ns() const {
    if (gpu == nullptr) return static_cast<double>(started.load(std::memory_order_relaxed));
    return static_cast<double>(dev->host_time_ns(start_signal->timestamp()));  // the GPU's timer by calibration
  }
  ~Target() {
    if (gpu != nullptr)
      for (const CheckedMemory& m : gpu_memory) gpu->free(m);
  }
};

void prepare_copies(Target& t, uint64_t large_bytes) {
  t.large_bytes = large_bytes;
  if (t.gpu == nullptr) {
    t.host_small.assign(kSmallCopyBytes, 0x3c), t.host_small_dst.assign(kSmallCopyBytes, 0);
    t.host_large.assign(large_bytes, 0x3c), t.host_large_dst.assign(large_bytes, 0);
    t.small_src = t.host_small.data(), t.small_dst = t.host_small_dst.data();
    t.large_src = t.host_large.data(), t.large_dst = t.host_large_dst.data();
    return;
  }
  // The copy engine from GPU-visible host memory into video memory: what uploading an input costs.
  CheckedMemory hs = t.gpu->alloc(kSmallCopyBytes, /*host_memory=*/true), ds = t.gpu->alloc(kSmallCopyBytes);
  t.gpu_memory.push_back(hs), t.gpu_memory.push_back(ds);
  CheckedMemory hl = t.gpu->alloc(large_bytes, /*host_memory=*/true), dl = t.gpu->alloc(large_bytes);
  t.gpu_memory.push_back(hl), t.gpu_memory.push_back(dl);
  std::memset(hs.cpu, 0x3c, kSmallCopyBytes), std::memset(hl.cpu, 0x3c, large_bytes);
  t.small_src = reinterpret_cast<const void*>(hs.va), t.small_dst = reinterpret_cast<void*>(ds.va);
  t.large_src = reinterpret_cast<const void*>(hl.va), t.large_dst = reinterpret_cast<void*>(dl.va);
}

LatencyRow make_row(const Target& t, std::string path, std::vector<double> samples, std::string floor,
                    std::vector<double> floor_samples, uint64_t bytes = 0) {
  LatencyRow r;
  r.device = t.key, r.device_detail = t.detail, r.path = std::move(path);
  r.p50_ns = percentile_of(samples, 0.50), r.p90_ns = percentile_of(samples, 0.90);
  r.p99_ns = percentile_of(samples, 0.99), r.max_ns = percentile_of(samples, 1.0);
  r.samples_ns = std::move(samples);
  r.floor = std::move(floor);
  r.floor_ns = percentile_of(floor_samples, 0.50);
  r.floor_samples_ns = std::move(floor_samples);
  r.bytes = bytes;
  return r;
}

std::vector<double> scaled(std::vector<double> v, double by) {
  for (double& x : v) x *= by;
  return v;
}

// Submits `q` (its command `patch` a signal command of `done`) `samples` times with the next value, waiting for
// each: submit -> done ns, and (when `start` is given) submit -> the start the target recorded.
std::vector<double> submit_and_wait(Target& t, HWQueue& q, size_t patch, Signal& done, int samples,
                                    std::vector<double>* to_start = nullptr) {
  std::vector<double> to_done;
  for (int i = 0; i < samples; i++) {
    const uint64_t v = done.value() + 1;
    q.patch_value(patch, v);
    const int64_t t0 = monotonic_ns();
    q.submit(*t.dev);
    done.wait(v, kWaitTimeout);
    const int64_t t1 = monotonic_ns();
    to_done.push_back(static_cast<double>(t1 - t0));
    if (to_start) to_start->push_back(t.start_ns() - static_cast<double>(t0));
  }
  return to_done;
}

void measure_device(Target& t, bool full, std::vector<LatencyRow>& rows) {
  const int n = t.samples;
  const uint64_t large_bytes = full ? uint64_t{64} << 20 : uint64_t{8} << 20;
  const int copy_samples = std::max(5, n / 20);
  const ThreadPin pin(t.host_cpu);
  prepare_copies(t, large_bytes);
  HostFloors f = measure_floors(full ? 10'000 : 1'000, large_bytes, copy_samples, t.partner_cpu);
  const std::string one_way = "ping-pong one way", round_trip = "ping-pong round trip";

  // An empty kernel: submit -> start, submit -> done (a bound queue, as the dispatch rows of bench_suite.h).
  {
    Signal& done = t.dev->new_signal("latency done");
    HWQueue q;
    t.record_kernel(q, /*stamp=*/true);
    q.signal(done, 0).bind(*t.dev);
    submit_and_wait(t, q, q.size() - 1, done, 3);  // warm-up: first-use costs out of the samples
    std::vector<double> to_start;
    std::vector<double> to_done = submit_and_wait(t, q, q.size() - 1, done, n, &to_start);
    rows.push_back(make_row(t, kPathToStart, std::move(to_start), one_way, f.one_way));
    rows.push_back(make_row(t, kPathToDone, std::move(to_done), round_trip, f.round_trip));
  }
  // Per kernel in batches: one recorded (unbound) queue of N kernels, submitted whole. The floor is a round trip per
  // kernel: what a kernel split over worker threads needs at least (told to start, reporting done); a device that
  // runs a batch on one thread can go below it.
  for (int batch : {1, 10, 100, 1000}) {
    Signal& done = t.dev->new_signal("latency batch done");
    HWQueue q;
    for (int i = 0; i < batch; i++) t.record_kernel(q, false);
    q.signal(done, 0);
    const int samples = std::clamp(n * 10 / batch, 5, n);
    submit_and_wait(t, q, q.size() - 1, done, 1);
    std::vector<double> per_kernel = scaled(submit_and_wait(t, q, q.size() - 1, done, samples), 1.0 / batch);
    rows.push_back(make_row(t, batch_path(batch), std::move(per_kernel), round_trip, f.round_trip));
  }
  // Replay of a captured program of 1 and 10 kernels (see replay_path): submit -> done of the whole program.
  for (int kernels : {1, 10}) {
    Signal& done = t.dev->new_signal("latency replay done");
    HWQueue q;
    for (int i = 0; i < kernels; i++) t.record_kernel(q, false);
    q.signal(done, 0).bind(*t.dev);
    submit_and_wait(t, q, q.size() - 1, done, 3);
    rows.push_back(make_row(t, replay_path(kernels), submit_and_wait(t, q, q.size() - 1, done, n), round_trip, f.round_trip));
  }
  // Host -> device -> host: the device waits on a signal the host sets and answers with another; the host sets it
  // 20 us after the submit, once the device is waiting, and times set -> seeing the answer.
  {
    Signal& in = t.dev->new_signal("latency host to device");
    Signal& out = t.dev->new_signal("latency device to host");
    HWQueue q;
    q.wait(in, 0).signal(out, 0).bind(*t.dev);
    std::vector<double> samples;
    for (int i = -3; i < n; i++) {
      const uint64_t v = out.value() + 1;
      q.patch_value(0, v), q.patch_value(1, v);
      q.submit(*t.dev);
      spin_for(20'000);
      const int64_t t0 = monotonic_ns();
      in.set(v);
      out.wait(v, kWaitTimeout);
      if (i >= 0) samples.push_back(static_cast<double>(monotonic_ns() - t0));
    }
    rows.push_back(make_row(t, kPathSignalRoundTrip, std::move(samples), round_trip, f.round_trip));
  }
  // Copies: a small one's latency (against a handoff each way) and a large one's time (GB/s = bytes / ns) against
  // the host's memcpy of the same bytes.
  {
    Signal& done = t.dev->new_signal("latency copy done");
    HWQueue small;
    small.copy(t.small_dst, t.small_src, kSmallCopyBytes).signal(done, 0).bind(*t.dev);
    submit_and_wait(t, small, 1, done, 3);
    rows.push_back(make_row(t, kPathSmallCopy, submit_and_wait(t, small, 1, done, n), round_trip, f.round_trip,
                            kSmallCopyBytes));
    HWQueue large;
    large.copy(t.large_dst, t.large_src, large_bytes).signal(done, 0).bind(*t.dev);
    submit_and_wait(t, large, 1, done, 1);
    rows.push_back(make_row(t, large_copy_path(large_bytes), submit_and_wait(t, large, 1, done, copy_samples),
                            "memcpy " + std::to_string(large_bytes >> 20) + " MiB", f.large_memcpy, large_bytes));
  }
  // The frontend's whole path for a tiny program already compiled: graph, schedule, cache lookup, submit, wait.
  if (!t.realize_on.empty()) {
    Tensor x = Tensor::ones({3}).to(t.realize_on).realize();
    std::vector<float> got = (x + 1).realize().tolist<float>();
    if (got != std::vector<float>{2, 2, 2})
      throw std::runtime_error("latency: realize of x+1 on " + t.realize_on + " gave a wrong answer; expected 2, 2, 2");
    std::vector<double> samples;
    for (int i = 0; i < n; i++) {
      const int64_t t0 = monotonic_ns();
      Tensor y = (x + 1).realize();
      samples.push_back(static_cast<double>(monotonic_ns() - t0));
    }
    rows.push_back(make_row(t, kPathRealize, std::move(samples), round_trip, f.round_trip));
    // The same program captured by a Jit (frontend/jit.h) and replayed: patch what changed, one doorbell, wait. And a
    // captured program of 10 kernels (ten realized steps), replayed whole.
    auto time_jit = [&](Jit& jit, const Tensor& input, float want, const char* what) {
      for (int i = 0; i < 3; i++) jit({input});  // run, capture, first replay
      if (jit({input})[0].tolist<float>() != std::vector<float>(3, want))
        throw std::runtime_error(std::string("latency: the Jit's replay of ") + what + " on " + t.realize_on + " gave a wrong answer");
      std::vector<double> jit_samples;
      for (int i = 0; i < n; i++) {
        const int64_t t0 = monotonic_ns();
        jit({input});
        jit_samples.push_back(static_cast<double>(monotonic_ns() - t0));
      }
      return jit_samples;
    };
    const Tensor input = Tensor::ones({3}).to(t.realize_on).contiguous().realize();  // a buffer the Jit can patch
    Jit one([](std::span<const Tensor> in) { return std::vector<Tensor>{in[0] + 1}; });
    rows.push_back(make_row(t, kPathJitReplay, time_jit(one, input, 2, "x+1"), round_trip, f.round_trip));
    Jit ten([](std::span<const Tensor> in) {
      Tensor y = in[0];
      for (int i = 0; i < 10; i++) y = (y + 1).realize();
      return std::vector<Tensor>{y};
    });
    rows.push_back(make_row(t, kPathJitReplay10, time_jit(ten, input, 11, "ten steps of x+1"), round_trip, f.round_trip));
  }
}

std::string worker_text(uint32_t workers) { return std::to_string(workers) + (workers == 1 ? " worker" : " workers"); }

// `detail` "": the adapter's description without the device's name (VK: "llvmpipe (LLVM 15.0.6, 256 bits), Mesa ...").
void prepare_gpu(Target& t, Device& d, const std::string& detail) {
  t.dev = &d, t.gpu = checked_gpu(d);
  t.detail = detail;
  if (t.detail.empty()) {
    const std::string described = t.gpu->describe(), prefix = d.name() + ", ";
    t.detail = described.rfind(prefix, 0) == 0 ? described.substr(prefix.size()) : described;
  }
  Tensor y = Tensor::zeros({1}).contiguous().realize();
  t.tiny.emplace(load_device_kernel(d, y.assign(y + 1)));
  t.tiny_out = t.gpu->alloc(256);
  t.gpu_memory.push_back(t.tiny_out);
  t.start_signal = &d.new_signal("latency kernel start");
  t.gpu->calibrate_clock();  // afresh, right before the samples that use it
}
std::string gpu_detail(const std::string& arch, bool emulated) { return arch + (emulated ? ", emulated (mockgpu)" : ", hardware"); }
void prepare_nv(Target& t, NvDevice& d) { prepare_gpu(t, d, gpu_detail(d.arch(), d.emulated())); }
void prepare_amd(Target& t, AmdDevice& d) { prepare_gpu(t, d, gpu_detail(d.arch(), d.emulated())); }

void progress(const LatencyOptions& o, const std::string& device, size_t rows, double s) {
  if (!o.progress) return;
  std::fprintf(o.progress, "bench: latency on %-14s done (%zu rows, %.1f s)\n", device.c_str(), rows, s);
  std::fflush(o.progress);
}

std::string human(double ns) {
  if (ns < 1e3) return fmt("%.0f ns", ns);
  if (ns < 1e6) return fmt("%.2f us", ns / 1e3);
  if (ns < 1e9) return fmt("%.2f ms", ns / 1e6);
  return fmt("%.2f s", ns / 1e9);
}

// ns to 0.1 ns, the figures as their samples: max_ns is then the largest sample's text exactly.
std::string ns_text(double ns) { return std::isfinite(ns) ? fmt("%.1f", ns) : "null"; }

std::string json_samples(const std::vector<double>& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); i++) out += (i ? ", " : "") + ns_text(v[i]);
  return out + "]";
}

}  // namespace

double percentile_of(std::vector<double> samples, double p) {
  if (samples.empty()) return 0;
  std::sort(samples.begin(), samples.end());
  const auto rank = static_cast<size_t>(std::ceil(p * static_cast<double>(samples.size())));
  return samples[std::clamp<size_t>(rank, 1, samples.size()) - 1];
}

LatencySection run_latency(const LatencyOptions& options) {
  const int64_t t0 = monotonic_ns();
  LatencySection s;
  s.full = options.full;
  const int cpu_samples = options.full ? 2'000 : 200;
  auto run = [&](Target& t, auto&& prepare) {
    const int64_t d0 = monotonic_ns();
    const size_t before = s.rows.size();
    prepare();
    measure_device(t, options.full, s.rows);
    progress(options, t.key, s.rows.size() - before, (monotonic_ns() - d0) / 1e9);
  };
  {
    // The dispatcher runs the kernel itself: one handoff each way.
    CpuDevice single(CpuDeviceOptions{.workers = 1}, "CPU");
    Target t;
    t.key = "CPU 1 worker", t.detail = worker_text(1), t.dev = &single, t.samples = cpu_samples;
    t.host_cpu = single.free_cpu(), t.partner_cpu = t.host_cpu >= 0 ? single.thread_cpu(0) : -1;
    run(t, [] {});
  }
  {
    auto& all = dynamic_cast<CpuDevice&>(device("CPU"));
    Target t;
    t.key = "CPU all cores", t.detail = worker_text(all.worker_count()), t.dev = &all, t.samples = cpu_samples;
    t.realize_on = "CPU";
    run(t, [] {});
  }
  // Each GPU backend's rows: its emulated GPU (the registry's under MOCKGPU=1, else one opened on the emulator the
  // program handed in), then the real one when there is one. A GPU without a compiler for its kernels (AMD in a
  // build without LLVM) is skipped, saying so.
  const bool mock = kernel_interface::mockgpu_requested();
  auto compiles = [&](Device& d, const std::string& key) {
    try {
      (void)d.target();
      return true;
    } catch (const std::exception& e) {
      s.skipped.push_back({key, e.what()});
      return false;
    }
  };
  auto gpu_rows = [&](const std::string& prefix, const EmulatedSeam& emulated_seam,
                      const std::function<std::unique_ptr<Device>(std::unique_ptr<kernel_interface::SyscallSeam>)>& open,
                      const std::function<void(Target&, Device&)>& prepare) {
    const std::string emulated_key = prefix + " emulated";
    if (mock) {
      Device& d = device(prefix);
      Target t;
      t.key = emulated_key, t.samples = options.full ? 500 : 50, t.realize_on = prefix;
      if (compiles(d, emulated_key)) run(t, [&] { prepare(t, d); });
    } else if (emulated_seam) {
      std::unique_ptr<Device> d = open(emulated_seam());
      if (compiles(*d, emulated_key)) {
        Target t;
        t.key = emulated_key, t.samples = options.full ? 500 : 50;
        run(t, [&] { prepare(t, *d); });
        s.skipped.push_back({emulated_key, std::string(kPathRealize) + ": this emulated GPU is outside the device registry "
                                                                       "(MOCKGPU=1 puts it there as " + prefix + ")"});
      }
    } else {
      s.skipped.push_back({emulated_key, "this program installed no emulator"});
    }
    if (mock) {
      s.skipped.push_back({prefix, "MOCKGPU=1: " + prefix + " is the emulated GPU"});
      return;
    }
    Device* d = nullptr;
    try {
      d = &device(prefix);
    } catch (const std::exception& e) {
      s.skipped.push_back({prefix, std::string("no GPU: ") + e.what()});
    }
    if (d != nullptr && compiles(*d, prefix)) {
      Target t;
      t.key = prefix, t.samples = options.full ? 2'000 : 200, t.realize_on = prefix;
      run(t, [&] { prepare(t, *d); });
    }
  };
  gpu_rows("NV", options.emulated_nv_seam,
           [](std::unique_ptr<kernel_interface::SyscallSeam> seam) -> std::unique_ptr<Device> { return NvDevice::open(std::move(seam)); },
           [](Target& t, Device& d) { prepare_nv(t, dynamic_cast<NvDevice&>(d)); });
  gpu_rows("AMD", options.emulated_amd_seam,
           [](std::unique_ptr<kernel_interface::SyscallSeam> seam) -> std::unique_ptr<Device> { return AmdDevice::open(std::move(seam)); },
           [](Target& t, Device& d) { prepare_amd(t, dynamic_cast<AmdDevice&>(d)); });
  // The Vulkan device (DEV=VK: Mesa's lavapipe on a machine without a GPU, a GPU's own Vulkan driver elsewhere): the
  // registry's, with the same rows and floors; skipped, saying why, where it cannot open (no Vulkan in this build,
  // no loader or driver, no usable physical device).
  {
    Device* d = nullptr;
    try {
      d = &device("VK");
    } catch (const std::exception& e) {
      s.skipped.push_back({"VK", std::string("DEV=VK does not open: ") + e.what()});
    }
    if (d != nullptr && compiles(*d, "VK")) {
      Target t;
      t.key = "VK", t.samples = options.full ? 2'000 : 200, t.realize_on = "VK";
      run(t, [&] { prepare_gpu(t, *d, ""); });
    }
  }
  s.wall_s = (monotonic_ns() - t0) / 1e9;
  return s;
}

void print_latency_table(const LatencySection& s, std::FILE* out) {
  std::fprintf(out, "latency (%s): p50, p90, p99 and max of each path, beside its floor measured in the same run\n",
               s.full ? "full" : "short");
  std::fprintf(out, "  %-14s %-40s %9s %9s %9s %9s  %-28s %9s %7s\n", "device", "path", "p50", "p90", "p99", "max",
               "floor", "floor p50", "ratio");
  std::vector<std::string> devices;
  for (const LatencyRow& r : s.rows) {
    if (std::find(devices.begin(), devices.end(), r.device) == devices.end()) devices.push_back(r.device);
    std::string ratio = r.floor_ns > 0 ? fmt("%.1fx", r.p50_ns / r.floor_ns) : "-";
    std::fprintf(out, "  %-14s %-40s %9s %9s %9s %9s  %-28s %9s %7s", r.device.c_str(), r.path.c_str(), human(r.p50_ns).c_str(),
                 human(r.p90_ns).c_str(), human(r.p99_ns).c_str(), human(r.max_ns).c_str(), r.floor.c_str(),
                 human(r.floor_ns).c_str(), ratio.c_str());
    if (r.bytes >= (uint64_t{1} << 20) && r.p50_ns > 0)
      std::fprintf(out, "  %.2f GB/s (floor %.2f GB/s)", r.bytes / r.p50_ns, r.floor_ns > 0 ? r.bytes / r.floor_ns : 0.0);
    std::fprintf(out, "\n");
  }
  for (const LatencySkip& k : s.skipped) std::fprintf(out, "  %-14s skipped: %s\n", k.device.c_str(), k.reason.c_str());
  std::fprintf(out, "latency: %zu rows on %zu devices in %.1f s\n", s.rows.size(), devices.size(), s.wall_s);
}

std::string latency_json(const LatencySection& s, int indent) {
  const std::string pad(indent, ' ');
  std::string j = "{\"mode\": " + json_quote(s.full ? "full" : "short") + ", \"wall_s\": " + json_figure(s.wall_s) + ",\n";
  j += pad + "  \"rows\": [\n";
  for (size_t i = 0; i < s.rows.size(); i++) {
    const LatencyRow& r = s.rows[i];
    j += pad + "    {\"device\": " + json_quote(r.device) + ", \"device_detail\": " + json_quote(r.device_detail) +
         ", \"path\": " + json_quote(r.path) + ", \"p50_ns\": " + ns_text(r.p50_ns) + ", \"p90_ns\": " + ns_text(r.p90_ns) +
         ", \"p99_ns\": " + ns_text(r.p99_ns) + ", \"max_ns\": " + ns_text(r.max_ns) + ", \"floor\": " + json_quote(r.floor) +
         ", \"floor_ns\": " + ns_text(r.floor_ns) + ", \"bytes\": " + std::to_string(r.bytes) +
         ", \"samples_ns\": " + json_samples(r.samples_ns) + ", \"floor_samples_ns\": " + json_samples(r.floor_samples_ns) + "}" +
         (i + 1 < s.rows.size() ? "," : "") + "\n";
  }
  j += pad + "  ],\n" + pad + "  \"skipped\": [";
  for (size_t i = 0; i < s.skipped.size(); i++)
    j += std::string(i ? ", " : "") + "{\"device\": " + json_quote(s.skipped[i].device) + ", \"reason\": " +
         json_quote(s.skipped[i].reason) + "}";
  j += "]}";
  return j;
}

}  // namespace doorbell::bench
