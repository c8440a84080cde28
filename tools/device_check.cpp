#include "tools/device_check.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <thread>
#include <vector>

#include "compiler/program.h"
#include "frontend/tensor.h"
#include "hcq/backend.h"
#include "hcq/devices.h"
#include "hcq/host_buffers.h"
#include "hcq/nv/nv_device.h"
#include "hcq/run_linear.h"
#include "hcq/wait_primitives.h"
#include "ir/environment.h"

namespace doorbell {
namespace {

using nv::NvDevice;
using nv::NvMemory;
using nv::NvProgram;

struct Checker {
  std::FILE* out;
  int failed = 0;
  void check(const std::string& what, const std::function<void()>& body) {
    const int64_t t0 = monotonic_ns();
    try {
      body();
      std::fprintf(out, "  ok      %-64s %8.1f ms\n", what.c_str(), (monotonic_ns() - t0) / 1e6);
    } catch (const std::exception& e) {
      failed++;
      std::fprintf(out, "  FAILED  %-64s %s\n", what.c_str(), e.what());
    }
    std::fflush(out);
  }
};

void expect(bool ok, const std::string& message) {
  if (!ok) throw std::runtime_error(message);
}

// A one-kernel program compiled for the device's target and loaded, with its launch dims.
struct Kernel {
  const LoadedProgram* program;
  std::array<uint32_t, 3> grid{}, block{};
  UOp call;
  UOp compiled;  // the PROGRAM: held so the device keeps `program` loaded (hcq/device.h program())
};

Kernel load_kernel(NvDevice& d, const Tensor& t) {
  UOp linear = t.schedule_linear();
  expect(linear.src().size() == 1, "expected one kernel");
  UOp program = compile_program(linear.src(0), d.target()).program;
  const ProgramInfo& info = program_info(program);
  auto dims = [](const std::array<int64_t, 3>& a) {
    return std::array<uint32_t, 3>{static_cast<uint32_t>(a[0]), static_cast<uint32_t>(a[1]), static_cast<uint32_t>(a[2])};
  };
  return Kernel{&d.program(program), dims(info.global_size), dims(info.local_size), linear.src(0), program};
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// Offset of the device's timestamp clock from the host's monotonic clock: a bare signal's timestamp against the
// midpoint of host clock reads around it (identical clocks on the emulated GPU; the GPU's own timer on hardware).
double clock_offset_ns(NvDevice& d, Signal& s) {
  std::vector<double> offsets;
  for (int i = 0; i < 21; i++) {
    const uint64_t target = s.value() + 1;
    const int64_t before = monotonic_ns();
    HWQueue().signal(s, target).submit(d);
    s.wait(target);
    const int64_t after = monotonic_ns();
    offsets.push_back(static_cast<double>(s.timestamp()) - (before + after) / 2.0);
  }
  return median(offsets);
}

void contract(NvDevice& d, Checker& c) {
  std::fprintf(c.out, "HCQ contract on %s:\n", d.name().c_str());
  c.check("a queue's signal reaches the host with a timestamp", [&] {
    Signal& s = d.new_signal("check signal");
    HWQueue().signal(s, 5).submit(d);
    s.wait(5, std::chrono::milliseconds(5000));
    expect(s.value() == 5, "value " + std::to_string(s.value()) + ", expected 5");
    expect(s.timestamp() != 0, "no timestamp written");  // the device's clock: not comparable with the host's here
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
    Kernel k = load_kernel(d, a * b + 1);
    NvMemory out = d.alloc(4 << 16), ma = d.alloc(4 << 16), mb = d.alloc(4 << 16);
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
    d.free(out), d.free(ma), d.free(mb);
  });
  c.check("1000 chained kernels in one submission run in order", [&] {
    Tensor y = Tensor::zeros({1024}).contiguous().realize();
    Kernel k = load_kernel(d, y.assign(y + 1));
    NvMemory m = d.alloc(4096);
    std::memset(m.cpu, 0, 4096);
    HWQueue q;
    for (int i = 0; i < 1000; i++) q.exec(*k.program, std::vector<uint64_t>{m.va}, k.grid, k.block);
    Signal& done = d.new_signal("check chain done");
    q.signal(done, 1).submit(d);
    done.wait(1, std::chrono::milliseconds(30000));
    for (int i = 0; i < 1024; i++)
      expect(reinterpret_cast<const float*>(m.cpu)[i] == 1000.0f, "element " + std::to_string(i) + " is " + std::to_string(reinterpret_cast<const float*>(m.cpu)[i]));
    d.free(m);
  });
  c.check("the copy engine copies 16 MiB", [&] {
    NvMemory src = d.alloc(16 << 20), dst = d.alloc(16 << 20);
    for (size_t i = 0; i < (16u << 20); i++) src.cpu[i] = static_cast<uint8_t>(i * 131 + 7);
    std::memset(dst.cpu, 0, 16 << 20);
    Signal& done = d.new_signal("check copy done");
    HWQueue().copy(reinterpret_cast<void*>(dst.va), reinterpret_cast<const void*>(src.va), 16 << 20).signal(done, 1).submit(d);
    done.wait(1, std::chrono::milliseconds(10000));
    expect(std::memcmp(src.cpu, dst.cpu, 16 << 20) == 0, "the copy differs from its source");
    d.free(src), d.free(dst);
  });
  c.check("a bound queue resubmits with a patched signal value", [&] {
    Tensor y = Tensor::zeros({256}).contiguous().realize();
    Kernel k = load_kernel(d, y.assign(y + 1));
    NvMemory m = d.alloc(1024);
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
    d.free(m);
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

void latency(NvDevice& d, Checker& c) {
  std::fprintf(c.out, "dispatch latency and kernel-only times on %s (medians):\n", d.name().c_str());
  c.check("figures", [&] {
    Tensor y = Tensor::zeros({256}).contiguous().realize();
    Kernel tiny = load_kernel(d, y.assign(y + 1));
    NvMemory m = d.alloc(1024);
    Signal& start = d.new_signal("latency start");
    Signal& done = d.new_signal("latency done");
    // The emulated GPU stamps with the host's clock; a real one with its own timer, aligned by calibration.
    const double offset = d.emulated() ? 0.0 : clock_offset_ns(d, done);
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
      to_start.push_back(static_cast<double>(start.timestamp()) - offset - t0);
      to_done.push_back(static_cast<double>(t1 - t0));
    }
    std::fprintf(c.out, "    submit to kernel start      %10.2f us   (%s)\n", median(to_start) / 1e3,
                 d.emulated() ? "the emulated GPU stamps with the host's clock"
                              : ("device clock aligned to the host's by calibration, offset " + std::to_string(static_cast<long long>(offset)) + " ns").c_str());
    std::fprintf(c.out, "    submit to host sees done    %10.2f us\n", median(to_done) / 1e3);
    Signal& batch_start = d.new_signal("latency batch start");
    Signal& batch_end = d.new_signal("latency batch end");
    HWQueue batch;
    batch.timestamp(batch_start);
    for (int i = 0; i < 1000; i++) batch.exec(*tiny.program, std::vector<uint64_t>{m.va}, tiny.grid, tiny.block);
    const uint64_t v = done.value() + 1;
    batch.timestamp(batch_end).signal(done, v).submit(d);
    done.wait(v, std::chrono::milliseconds(60000));
    std::fprintf(c.out, "    per kernel, batch of 1000   %10.2f us   (device timestamps around the batch)\n", (batch_end.timestamp() - batch_start.timestamp()) / 1e3 / 1000);
    // The emulated SM interprets PTX on one host thread: its figures show the path works, not GPU speed.
    const std::vector<int64_t> sizes = d.emulated() ? std::vector<int64_t>{int64_t{1} << 16} : std::vector<int64_t>{int64_t{1} << 20, int64_t{1} << 24};
    for (int64_t n : sizes) {
      Tensor a = Tensor::empty({n}), b = Tensor::empty({n});
      Kernel add = load_kernel(d, a + b);
      NvMemory o = d.alloc(4 * n), ma = d.alloc(4 * n), mb = d.alloc(4 * n);
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
      d.free(o), d.free(ma), d.free(mb);
    }
    d.free(m);
  });
}

}  // namespace

int run_device_check(const std::string& dev, std::FILE* out) {
  // One parser for every device name (DEV=nv works, so does --device nv, nv:0, NV:0:PTX).
  const DeviceName name = parse_device_name(dev);
  if (name.prefix != "NV")
    throw std::invalid_argument("check: --device " + name.canonical() +
                                " is not checked yet; expected an NV device (the CPU device is checked by the test suite and `doorbell run`)");
  const std::string canonical = name.canonical();
  auto& d = dynamic_cast<NvDevice&>(device(canonical));
  std::fprintf(out, "device: %s, %s, %s, driver %s\n", canonical.c_str(), d.arch().c_str(), d.emulated() ? "emulated (MOCKGPU=1)" : "hardware", d.session().driver_version().c_str());
  Checker c{out};
  contract(d, c);
  conformance(canonical, c);
  latency(d, c);
  if (const std::string fault = d.fault_report(); !fault.empty()) std::fprintf(out, "device fault: %s\n", fault.c_str());
  std::fprintf(out, "check: %s\n", c.failed ? (std::to_string(c.failed) + " failed").c_str() : "every check passed");
  return c.failed ? 1 : 0;
}

}  // namespace doorbell
