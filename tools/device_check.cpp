#include "tools/device_check.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <optional>
#include <stdexcept>
#include <thread>
#include <tuple>
#include <vector>

#include "compiler/program.h"
#include "frontend/tensor.h"
#include "hcq/backend.h"
#include "hcq/devices.h"
#include "hcq/host_buffers.h"
#include "hcq/hw_queue.h"
#include "hcq/run_linear.h"
#include "hcq/wait_primitives.h"
#include "ir/environment.h"
#include "tools/bench_suite.h"
#include "tools/checked_gpu.h"
#include "tools/device_kernel.h"
#include "hcq/json_text.h"
#include "tools/nv_experiments.h"

namespace doorbell {
namespace {

struct Checker {
  std::FILE* out;
  int failed = 0, passed = 0;
  std::vector<std::string> failures;  // "what: message"
  // The device's documented differences (CheckedGpu::documented_differences), and those seen: a check among them
  // that fails is a difference, not a failure.
  std::vector<CheckDifference> documented;
  struct Seen {
    CheckDifference difference;
    std::string observed;  // the check's message
  };
  std::vector<Seen> differences;
  void check(const std::string& what, const std::function<void()>& body) {
    const int64_t t0 = monotonic_ns();
    try {
      body();
      passed++;
      std::fprintf(out, "  ok      %-64s %8.1f ms\n", what.c_str(), (monotonic_ns() - t0) / 1e6);
    } catch (const std::exception& e) {
      const auto known = std::find_if(documented.begin(), documented.end(), [&](const CheckDifference& d) { return d.check == what; });
      if (known != documented.end()) {
        differences.push_back({*known, e.what()});
        std::fprintf(out, "  differs %-64s %s\n          (documented: %s)\n", what.c_str(), e.what(), known->reason.c_str());
      } else {
        failed++;
        failures.push_back(what + ": " + e.what());
        std::fprintf(out, "  FAILED  %-64s %s\n", what.c_str(), e.what());
      }
    }
    std::fflush(out);
  }
};

void expect(bool ok, const std::string& message) {
  if (!ok) throw std::runtime_error(message);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

constexpr double kMissing = std::numeric_limits<double>::quiet_NaN();  // written as null: a check that failed

// Every figure the check measures, for the JSON report (medians of repeats).
struct Figures {
  double to_start_us = kMissing, to_done_us = kMissing, batch_per_kernel_us = kMissing;
  std::optional<ClockCalibration> clock;  // the GPU's timer against the host's clock (CheckedGpu::calibrate_clock)
  int dispatch_samples = 0;
  struct KernelOnly {
    int64_t elements;
    double us, gb_per_s;
  };
  std::vector<KernelOnly> kernel_only;
  uint64_t copy_bytes = 0;
  double host_to_gpu = kMissing, gpu_to_host = kMissing, gpu_to_gpu = kMissing, memcpy_into_mapping = kMissing;
  double host_to_gpu_submit_to_done = kMissing, gpu_to_host_submit_to_done = kMissing, gpu_to_gpu_submit_to_done = kMissing;
  int copy_repeats = 0;
};

void contract(CheckedGpu& g, Checker& c) {
  Device& d = g.device();
  std::fprintf(c.out, "HCQ contract on %s:\n", d.name().c_str());
  c.check("a queue's signal reaches the host with a timestamp", [&] {
    Signal& s = d.new_signal("check signal");
    HWQueue().signal(s, 5).submit(d);
    s.wait(5, std::chrono::milliseconds(5000));
    expect(s.value() == 5, "value " + std::to_string(s.value()) + ", expected 5");
    expect(s.timestamp() != 0, "no timestamp written");  // the device's clock: not comparable with the host's here
  });
  c.check(kSignalValueInMemory, [&] {
    // The HCQ contract's signal is 16 bytes of memory (hcq/signal.h): a queue's release writes the value there, where
    // the host and other devices' queues read it by address.
    Signal& s = d.new_signal("check memory");
    HWQueue().signal(s, 7).submit(d);
    s.wait(7, std::chrono::milliseconds(5000));
    const uint64_t in_memory = s.memory().value.load(std::memory_order_acquire);
    expect(in_memory == 7, "the word at +0 of the signal's memory holds " + std::to_string(in_memory) + " after the queue signalled 7");
  });
  c.check("a timestamp converted to the host's clock lies between the host's reads around it", [&] {
    const ClockCalibration clock = g.calibrate_clock();
    Signal& s = d.new_signal("check clock");
    for (int i = 0; i < 5; i++) {
      const uint64_t v = s.value() + 1;
      const int64_t before = monotonic_ns();
      HWQueue().signal(s, v).submit(d);
      s.wait(v, std::chrono::milliseconds(5000));
      const int64_t after = monotonic_ns();
      // Within the calibration's bound of the bracket: a wider miss is an offset that is wrong, or a clock that does
      // not count nanoseconds.
      const int64_t at = d.host_time_ns(s.timestamp());
      expect(at >= before - clock.uncertainty_ns && at <= after + clock.uncertainty_ns,
             "stamp at host time " + std::to_string(at) + " ns, outside [" + std::to_string(before) + ", " + std::to_string(after) +
                 "] +- " + std::to_string(clock.uncertainty_ns) + " ns (offset " + std::to_string(clock.offset_ns) + " ns)");
    }
  });
  c.check("a wait holds the queue until the host sets the signal", [&] {
    Signal& gate = d.new_signal("check gate");
    Signal& done = d.new_signal("check done");
    HWQueue().wait(gate, 1).signal(done, 1).submit(d);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    expect(done.value() == 0, "the queue passed the wait before the host set the gate");
    gate.set(1);
    done.wait(1, std::chrono::milliseconds(5000));
  });
  c.check("waits compare 64 bits (values around 2^31, 2^32, 2^40)", [&] {
    Signal& gate = d.new_signal("check wide gate");
    Signal& done = d.new_signal("check wide done");
    for (uint64_t v : {(uint64_t{1} << 31) + 1, (uint64_t{1} << 32) + 1, (uint64_t{1} << 40) + 1}) {
      HWQueue().wait(gate, v).signal(done, v).submit(d);
      gate.set(v - 1);
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      expect(done.value() < v, "a wait for " + std::to_string(v) + " passed at " + std::to_string(v - 1));
      gate.set(v);
      done.wait(v, std::chrono::milliseconds(5000));
    }
  });
  c.check("timestamps bracket a kernel whose result matches the host", [&] {
    Tensor::manual_seed(1);
    Tensor a = Tensor::randn({1 << 16}).realize(), b = Tensor::randn({1 << 16}).realize();
    DeviceKernel k = load_device_kernel(d, a * b + 1);
    CheckedMemory out = g.alloc(4 << 16), ma = g.alloc(4 << 16), mb = g.alloc(4 << 16);
    const float* pa = reinterpret_cast<const float*>(buffer_bytes(k.call.src(2)).data());
    const float* pb = reinterpret_cast<const float*>(buffer_bytes(k.call.src(3)).data());
    std::memcpy(ma.cpu, pa, 4 << 16);
    std::memcpy(mb.cpu, pb, 4 << 16);
    Signal& start = d.new_signal("check start");
    Signal& end = d.new_signal("check end");
    Signal& done = d.new_signal("check kernel done");
    HWQueue().timestamp(start).exec(*k.program, std::vector<uint64_t>{out.va, ma.va, mb.va}, k.grid, k.block).timestamp(end).signal(done, 1).submit(d);
    done.wait(1, std::chrono::milliseconds(10000));
    const float* o = reinterpret_cast<const float*>(out.cpu);
    for (int i = 0; i < (1 << 16); i++) {
      const float want = pa[i] * pb[i] + 1;
      expect(o[i] == want, "element " + std::to_string(i) + " is " + std::to_string(o[i]) + ", expected " + std::to_string(want));
    }
    expect(start.timestamp() != 0 && start.timestamp() <= end.timestamp(), "start " + std::to_string(start.timestamp()) + " after end " + std::to_string(end.timestamp()));
    g.free(out), g.free(ma), g.free(mb);
  });
  c.check("1000 chained kernels in one submission run in order", [&] {
    Tensor y = Tensor::zeros({1024}).contiguous().realize();
    DeviceKernel k = load_device_kernel(d, y.assign(y + 1));
    CheckedMemory m = g.alloc(4096);
    std::memset(m.cpu, 0, 4096);
    HWQueue q;
    for (int i = 0; i < 1000; i++) q.exec(*k.program, std::vector<uint64_t>{m.va}, k.grid, k.block);
    Signal& done = d.new_signal("check chain done");
    q.signal(done, 1).submit(d);
    done.wait(1, std::chrono::milliseconds(30000));
    for (int i = 0; i < 1024; i++)
      expect(reinterpret_cast<const float*>(m.cpu)[i] == 1000.0f, "element " + std::to_string(i) + " is " + std::to_string(reinterpret_cast<const float*>(m.cpu)[i]));
    g.free(m);
  });
  c.check("the copy engine copies 16 MiB", [&] {
    CheckedMemory src = g.alloc(16 << 20), dst = g.alloc(16 << 20);
    for (size_t i = 0; i < (16u << 20); i++) src.cpu[i] = static_cast<uint8_t>(i * 131 + 7);
    std::memset(dst.cpu, 0, 16 << 20);
    Signal& done = d.new_signal("check copy done");
    HWQueue().copy(reinterpret_cast<void*>(dst.va), reinterpret_cast<const void*>(src.va), 16 << 20).signal(done, 1).submit(d);
    done.wait(1, std::chrono::milliseconds(10000));
    expect(std::memcmp(src.cpu, dst.cpu, 16 << 20) == 0, "the copy differs from its source");
    g.free(src), g.free(dst);
  });
  c.check("a bound queue resubmits with a patched signal value", [&] {
    Tensor y = Tensor::zeros({256}).contiguous().realize();
    DeviceKernel k = load_device_kernel(d, y.assign(y + 1));
    CheckedMemory m = g.alloc(1024);
    std::memset(m.cpu, 0, 1024);
    Signal& done = d.new_signal("check bound done");
    HWQueue q;
    q.exec(*k.program, std::vector<uint64_t>{m.va}, k.grid, k.block).signal(done, 1).bind(d);
    for (uint64_t v = 1; v <= 3; v++) {
      q.patch_value(1, v);
      q.submit(d);
      done.wait(v, std::chrono::milliseconds(5000));
    }
    expect(reinterpret_cast<const float*>(m.cpu)[0] == 3.0f, "three submissions gave " + std::to_string(reinterpret_cast<const float*>(m.cpu)[0]));
    g.free(m);
  });
  c.check("a wait that never passes times out naming the signal", [&] {
    Signal& s = d.new_signal("check never");
    try {
      s.wait(1, std::chrono::milliseconds(50));
    } catch (const std::runtime_error& e) {
      expect(std::string(e.what()).find("'check never'") != std::string::npos, std::string("the message does not name it: ") + e.what());
      return;
    }
    throw std::runtime_error("no timeout");
  });
}

// Programs realized on the device through the whole stack, compared with the same programs on the CPU device.
void conformance(const std::string& dev, Checker& c) {
  std::fprintf(c.out, "conformance subset on %s (compared with the CPU device):\n", dev.c_str());
  struct Case {
    const char* name;
    std::function<Tensor()> build;
    double tolerance;  // relative; 0: bit for bit
  };
  const std::vector<Case> cases = {
      {"float32 a * b + c over 70001 elements", [] { return Tensor::arange(70001).cast(dtypes::float32) * 0.5 + Tensor::arange(70001).cast(dtypes::float32); }, 0},
      {"int32 arithmetic with floordiv and mod", [] { Tensor a = Tensor::arange(4099) - 2000; return a * 3 + a.floordiv(7) - a.mod(5); }, 0},
      {"float16 multiply", [] { Tensor a = Tensor::arange(1000).cast(dtypes::float16) * 0.25; return a * a; }, 0},
      {"sum of 100000 integers (grouped reduce)", [] { return Tensor::arange(100000).sum(); }, 0},
      {"max over rows of 300 x 1000", [] { return (Tensor::arange(300000).reshape({300, 1000}) % 977).max(1); }, 0},
      {"matmul 64 x 96 x 80", [] { return (Tensor::arange(64 * 96).reshape({64, 96}).cast(dtypes::float32) / 100).matmul(Tensor::arange(96 * 80).reshape({96, 80}).cast(dtypes::float32) / 100); }, 1e-5},
      {"softmax over 16 rows of 1000", [] { return (Tensor::arange(16000).reshape({16, 1000}).cast(dtypes::float32) / 1000).softmax(-1); }, 1e-5},
  };
  for (const Case& k : cases) {
    c.check(k.name, [&] {
      const std::string saved = default_device_name();
      set_default_device_name("CPU");
      Tensor want = k.build().cast(dtypes::float64).realize();
      set_default_device_name(dev);
      Tensor got;
      try {
        got = k.build().cast(dtypes::float64).realize();
      } catch (...) {
        set_default_device_name(saved);
        throw;
      }
      set_default_device_name(saved);
      std::vector<double> w = want.tolist<double>(), g = got.tolist<double>();
      expect(w.size() == g.size(), "sizes differ");
      for (size_t i = 0; i < w.size(); i++) {
        const double err = std::fabs(w[i] - g[i]);
        if (k.tolerance == 0 ? w[i] != g[i] : err > k.tolerance * std::max(1.0, std::fabs(w[i])))
          throw std::runtime_error("element " + std::to_string(i) + " is " + std::to_string(g[i]) + ", expected " + std::to_string(w[i]));
      }
    });
  }
}

void latency(CheckedGpu& g, Checker& c, Figures& f) {
  Device& d = g.device();
  std::fprintf(c.out, "dispatch latency and kernel-only times on %s (medians):\n", d.name().c_str());
  c.check("figures", [&] {
    Tensor y = Tensor::zeros({256}).contiguous().realize();
    DeviceKernel tiny = load_device_kernel(d, y.assign(y + 1));
    CheckedMemory m = g.alloc(1024);
    Signal& start = d.new_signal("latency start");
    Signal& done = d.new_signal("latency done");
    // The GPU stamps with its own timer (the emulated one too): its start stamp goes to the host's clock by calibration.
    f.clock = g.calibrate_clock();
    std::vector<double> to_start, to_done;
    HWQueue q;
    q.timestamp(start).exec(*tiny.program, std::vector<uint64_t>{m.va}, tiny.grid, tiny.block).signal(done, 0).bind(d);
    for (int i = 0; i < 101; i++) {
      const uint64_t v = done.value() + 1;
      q.patch_value(2, v);
      const int64_t t0 = monotonic_ns();
      q.submit(d);
      done.wait(v, std::chrono::milliseconds(5000));
      const int64_t t1 = monotonic_ns();
      to_start.push_back(static_cast<double>(d.host_time_ns(start.timestamp()) - t0));
      to_done.push_back(static_cast<double>(t1 - t0));
    }
    std::fprintf(c.out, "    submit to kernel start      %10.2f us   (GPU timer on the host's clock: offset %lld ns +- %lld ns)\n",
                 median(to_start) / 1e3, static_cast<long long>(f.clock->offset_ns), static_cast<long long>(f.clock->uncertainty_ns));
    std::fprintf(c.out, "    submit to host sees done    %10.2f us\n", median(to_done) / 1e3);
    f.to_start_us = median(to_start) / 1e3, f.to_done_us = median(to_done) / 1e3, f.dispatch_samples = static_cast<int>(to_done.size());
    Signal& batch_start = d.new_signal("latency batch start");
    Signal& batch_end = d.new_signal("latency batch end");
    HWQueue batch;
    batch.timestamp(batch_start);
    for (int i = 0; i < 1000; i++) batch.exec(*tiny.program, std::vector<uint64_t>{m.va}, tiny.grid, tiny.block);
    const uint64_t v = done.value() + 1;
    batch.timestamp(batch_end).signal(done, v).submit(d);
    done.wait(v, std::chrono::milliseconds(60000));
    f.batch_per_kernel_us = (batch_end.timestamp() - batch_start.timestamp()) / 1e3 / 1000;
    std::fprintf(c.out, "    per kernel, batch of 1000   %10.2f us   (device timestamps around the batch)\n", f.batch_per_kernel_us);
    // The emulated SM interprets PTX on one host thread: its figures show the path works, not GPU speed.
    const std::vector<int64_t> sizes = g.emulated() ? std::vector<int64_t>{int64_t{1} << 16} : std::vector<int64_t>{int64_t{1} << 20, int64_t{1} << 24};
    for (int64_t n : sizes) {
      Tensor a = Tensor::empty({n}), b = Tensor::empty({n});
      DeviceKernel add = load_device_kernel(d, a + b);
      CheckedMemory o = g.alloc(4 * n), ma = g.alloc(4 * n), mb = g.alloc(4 * n);
      Signal& ks = d.new_signal("kernel only start");
      Signal& ke = d.new_signal("kernel only end");
      std::vector<double> times;
      for (int i = 0; i < 5; i++) {
        const uint64_t w = done.value() + 1;
        HWQueue().timestamp(ks).exec(*add.program, std::vector<uint64_t>{o.va, ma.va, mb.va}, add.grid, add.block).timestamp(ke).signal(done, w).submit(d);
        done.wait(w, std::chrono::milliseconds(60000));
        times.push_back(static_cast<double>(ke.timestamp() - ks.timestamp()));
      }
      const double ns = median(times);
      std::fprintf(c.out, "    add of %8lld float32        %10.2f us kernel only, %8.2f GB/s\n", static_cast<long long>(n), ns / 1e3, 12.0 * n / ns);
      f.kernel_only.push_back({n, ns / 1e3, 12.0 * n / ns});
      g.free(o), g.free(ma), g.free(mb);
    }
    g.free(m);
  });
}

// Copy bandwidth, medians of repeats: the copy engine host -> GPU, GPU -> host and GPU -> GPU (device timestamps
// around the copy), and the host's memcpy into the CPU mapping of video memory (host clock).
void copies(CheckedGpu& g, Checker& c, Figures& f) {
  Device& d = g.device();
  std::fprintf(c.out, "copy bandwidth on %s (medians):\n", d.name().c_str());
  c.check("copy bandwidth", [&] {
    const uint64_t bytes = g.emulated() ? uint64_t{4} << 20 : uint64_t{64} << 20;
    const int repeats = 5;
    CheckedMemory host = g.alloc(bytes, /*host_memory=*/true), a = g.alloc(bytes), b = g.alloc(bytes);
    std::memset(host.cpu, 0x5a, bytes);
    Signal& start = d.new_signal("copy start");
    Signal& end = d.new_signal("copy end");
    Signal& done = d.new_signal("copy done");
    // GB/s from the device's timestamps around the copy, and from the host's submit to its seeing the copy done
    // (a bound that does not rely on the timestamps waiting for the copy engine).
    auto engine = [&](const CheckedMemory& dst, const CheckedMemory& src, const char* what) {
      std::vector<double> ns, host_ns;
      for (int i = 0; i < repeats; i++) {
        const uint64_t v = done.value() + 1;
        const int64_t t0 = monotonic_ns();
        HWQueue().timestamp(start).copy(reinterpret_cast<void*>(dst.va), reinterpret_cast<const void*>(src.va), bytes).timestamp(end).signal(done, v).submit(d);
        done.wait(v, std::chrono::milliseconds(30000));
        host_ns.push_back(static_cast<double>(monotonic_ns() - t0));
        ns.push_back(static_cast<double>(end.timestamp()) - static_cast<double>(start.timestamp()));
      }
      const std::pair<double, double> gb_per_s{bytes / median(ns), bytes / median(host_ns)};
      std::fprintf(c.out, "    %-26s %10.2f GB/s   (%llu MiB, device timestamps; %.2f GB/s submit to done)\n", what, gb_per_s.first,
                   static_cast<unsigned long long>(bytes >> 20), gb_per_s.second);
      return gb_per_s;
    };
    std::tie(f.host_to_gpu, f.host_to_gpu_submit_to_done) = engine(a, host, "copy engine host -> GPU");
    std::tie(f.gpu_to_host, f.gpu_to_host_submit_to_done) = engine(host, a, "copy engine GPU -> host");
    std::tie(f.gpu_to_gpu, f.gpu_to_gpu_submit_to_done) = engine(b, a, "copy engine GPU -> GPU");
    std::vector<uint8_t> source(bytes, 0x3c);
    std::vector<double> ns;
    for (int i = 0; i < repeats; i++) {
      const int64_t t0 = monotonic_ns();
      std::memcpy(b.cpu, source.data(), bytes);
      std::atomic_thread_fence(std::memory_order_seq_cst);  // the write-combined stores leave the CPU
      ns.push_back(static_cast<double>(monotonic_ns() - t0));
    }
    f.memcpy_into_mapping = bytes / median(ns);
    std::fprintf(c.out, "    %-26s %10.2f GB/s   (host clock)\n", "memcpy into the mapping", f.memcpy_into_mapping);
    f.copy_bytes = bytes, f.copy_repeats = repeats;
    g.free(host), g.free(a), g.free(b);
  });
}

std::string report_json(CheckedGpu& g, const std::string& canonical, const Checker& c, const Figures& f,
                        const std::vector<Experiment>* experiments) {
  std::string failures = "[";
  for (size_t i = 0; i < c.failures.size(); i++) failures += (i ? ", " : "") + json_quote(c.failures[i]);
  failures += "]";
  std::string kernel_only = "[";
  for (size_t i = 0; i < f.kernel_only.size(); i++)
    kernel_only += std::string(i ? ", " : "") + "{\"elements\": " + std::to_string(f.kernel_only[i].elements) + ", \"us\": " +
                   json_figure(f.kernel_only[i].us) + ", \"gb_per_s\": " + json_figure(f.kernel_only[i].gb_per_s) + "}";
  kernel_only += "]";
  std::string j = "{\n";
  j += "  \"device\": {\"name\": " + json_quote(canonical) + g.identity_json() + "},\n";
  std::string differences = "[";
  for (size_t i = 0; i < c.differences.size(); i++)
    differences += std::string(i ? ", " : "") + "{\"check\": " + json_quote(c.differences[i].difference.check) + ", \"reason\": " +
                   json_quote(c.differences[i].difference.reason) + ", \"observed\": " + json_quote(c.differences[i].observed) + "}";
  differences += "]";
  j += "  \"checks\": {\"passed\": " + std::to_string(c.passed) + ", \"failed\": " + std::to_string(c.failed) + ", \"failures\": " + failures +
       ", \"differences\": " + differences + "},\n";
  j += "  \"dispatch_us\": {\"submit_to_kernel_start\": " + json_figure(f.to_start_us) + ", \"submit_to_done\": " + json_figure(f.to_done_us) +
       ", \"per_kernel_batch_of_1000\": " + json_figure(f.batch_per_kernel_us) + ", \"samples\": " + std::to_string(f.dispatch_samples) +
       ", \"clock_offset_ns\": " + (f.clock ? std::to_string(f.clock->offset_ns) : "null") +
       ", \"clock_uncertainty_ns\": " + (f.clock ? std::to_string(f.clock->uncertainty_ns) : "null") + "},\n";
  j += "  \"kernel_only\": " + kernel_only + ",\n";
  j += "  \"copy_gb_per_s\": {\"host_to_gpu\": " + json_figure(f.host_to_gpu) + ", \"gpu_to_host\": " + json_figure(f.gpu_to_host) +
       ", \"gpu_to_gpu\": " + json_figure(f.gpu_to_gpu) + ", \"memcpy_into_mapping\": " + json_figure(f.memcpy_into_mapping) +
       ", \"host_to_gpu_submit_to_done\": " + json_figure(f.host_to_gpu_submit_to_done) + ", \"gpu_to_host_submit_to_done\": " +
       json_figure(f.gpu_to_host_submit_to_done) + ", \"gpu_to_gpu_submit_to_done\": " + json_figure(f.gpu_to_gpu_submit_to_done) +
       ", \"bytes\": " + std::to_string(f.copy_bytes) + ", \"repeats\": " + std::to_string(f.copy_repeats) + "},\n";
  j += "  \"fault\": " + json_quote(g.fault_report()) + ",\n";
  j += "  \"experiments\": " + (experiments ? experiments_json(*experiments, 2) : std::string("null")) + "\n}\n";
  return j;
}

}  // namespace

int run_device_check(const std::string& dev, std::FILE* out, const DeviceCheckOptions& options) {
  // One parser for every device name (DEV=nv works, so does --device nv, nv:0, NV:0:PTX).
  const DeviceName name = parse_device_name(dev);
  if (name.prefix != "NV" && name.prefix != "AMD" && name.prefix != "VK")
    throw std::invalid_argument("check: --device " + name.canonical() +
                                " is not checked yet; expected an NV, AMD or VK device (the CPU device is checked by the test suite and `doorbell run`)");
  if (options.experiments && name.prefix != "NV")
    throw std::invalid_argument("check: experiments exist for NV devices only (tools/nv_experiments.h), not " + name.canonical());
  if (!options.json_path.empty()) bench::check_json_path(options.json_path);  // before the minutes the check takes
  const std::string canonical = name.canonical();
  std::unique_ptr<CheckedGpu> gpu = checked_gpu(device(canonical), name.index);
  CheckedGpu& g = *gpu;
  std::fprintf(out, "device: %s\n", g.describe().c_str());
  Checker c{out, 0, 0, {}, g.documented_differences(), {}};
  Figures f;
  contract(g, c);
  conformance(canonical, c);
  latency(g, c, f);
  copies(g, c, f);
  if (const std::string fault = g.fault_report(); !fault.empty()) std::fprintf(out, "device fault: %s\n", fault.c_str());
  std::vector<Experiment> experiments;
  if (options.experiments) {
    std::fprintf(out, "experiments on %s, each alternative on a fresh device:\n", canonical.c_str());
    experiments = run_nv_experiments(name.index, g.emulated(), out);
    // On the emulated GPU each outcome is defined (nv_experiments.h); on hardware the outcomes are the findings.
    if (g.emulated())
      for (const std::string& mismatch : emulator_mismatches(experiments)) {
        c.failed++;
        c.failures.push_back("experiment " + mismatch);
        std::fprintf(out, "  FAILED  experiment %s\n", mismatch.c_str());
      }
  }
  if (!options.json_path.empty()) {
    std::ofstream file(options.json_path);
    file << report_json(g, canonical, c, f, options.experiments ? &experiments : nullptr);
    if (!file.flush()) throw std::runtime_error("check: cannot write the JSON report to '" + options.json_path + "'");
    std::fprintf(out, "check: JSON written to %s\n", options.json_path.c_str());
  }
  const std::string differ = c.differences.empty() ? "" : " (" + std::to_string(c.differences.size()) + " documented differences)";
  std::fprintf(out, "check: %s%s\n", c.failed ? (std::to_string(c.failed) + " failed").c_str() : "every check passed", differ.c_str());
  return c.failed ? 1 : 0;
}

}  // namespace doorbell
