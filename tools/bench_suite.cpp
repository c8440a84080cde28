#include "tools/bench_suite.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <atomic>
#include <chrono>
#include <cmath>
#include <ctime>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "frontend/tensor.h"
#include "hcq/backend.h"
#include "hcq/compile_linear.h"
#include "hcq/cpu/cpu_device.h"
#include "hcq/devices.h"
#include "hcq/json_text.h"
#include "hcq/run_linear.h"
#include "hcq/wait_primitives.h"
#include "ir/environment.h"
#include "tools/checked_gpu.h"

namespace doorbell::bench {
namespace {

std::string format(const char* fmt, auto... args) {
  char buf[256];
  std::snprintf(buf, sizeof buf, fmt, args...);
  return buf;
}

// "1e7" for a power of ten, else the digits.
std::string count_name(int64_t n) {
  int exponent = 0;
  int64_t v = n;
  while (v >= 10 && v % 10 == 0) v /= 10, exponent++;
  return v == 1 && exponent >= 3 ? format("1e%d", exponent) : format("%lld", static_cast<long long>(n));
}

// The case's doorbell program and its floor as functions of one shared state, so each workload is one factory.
class FunctionCase final : public BenchCase {
 public:
  FunctionCase(CaseInfo info, std::function<int64_t()> floor, std::function<CheckResult()> check,
               std::string floor_missing = {})
      : BenchCase(std::move(info)), floor_(std::move(floor)), check_(std::move(check)),
        floor_missing_(std::move(floor_missing)) {}
  using BenchCase::compile_and_warm_up;
  int64_t run_floor() override {
    if (!floor_missing_.empty()) throw std::runtime_error(info_.floor_name + " floor unavailable: " + floor_missing_);
    return floor_();
  }
  bool floor_available() const override { return floor_missing_.empty(); }
  std::string floor_unavailable_reason() const override { return floor_missing_; }
  CheckResult check() override { return check_(); }

 private:
  std::function<int64_t()> floor_;
  std::function<CheckResult()> check_;
  std::string floor_missing_;
};

std::unique_ptr<FunctionCase> finish(CaseInfo info, const Tensor& y, std::function<int64_t()> floor,
                                     std::function<CheckResult()> check, std::string floor_missing = {}) {
  auto c = std::make_unique<FunctionCase>(std::move(info), std::move(floor), std::move(check), std::move(floor_missing));
  c->compile_and_warm_up(y.schedule_linear());
  if (c->floor_available()) c->run_floor();  // warm-up: page faults, OpenBLAS's threads
  return c;
}

// Host copy of a realized doorbell tensor into a floor buffer: the floor sees the same numbers.
FloatBuffer to_floor(Floors& floors, const Tensor& t) {
  std::vector<float> host = t.tolist<float>();
  FloatBuffer b = floors.allocate(host.size());
  floors.fill(b, host);
  return b;
}

CheckResult verdict(double err, double tol, const char* what) {
  return {err <= tol && std::isfinite(err), format("%s %.3g (tolerance %.3g)", what, err, tol)};
}

// ---- memory-bound workloads --------------------------------------------------------------------------------------

std::unique_ptr<BenchCase> add_mul(Floors& floors, int64_t n) {
  Tensor x = Tensor::randn({n}).realize();
  Tensor y = (x + 1) * 2;
  auto a = std::make_shared<FloatBuffer>(to_floor(floors, x));
  auto b = std::make_shared<FloatBuffer>(floors.allocate(n));
  CaseInfo info{"add_mul", count_name(n), "copy_scale", false, 8.0 * n};
  return finish(
      info, y, [&floors, a, b, n] { return floors.copy_scale(a->get(), b->get(), n, 2.0f); },
      [y, a, n] {
        std::vector<float> got = y.tolist<float>();
        double worst = 0;
        for (int64_t i = 0; i < n; i++) {
          double want = (static_cast<double>(a->get()[i]) + 1) * 2;
          worst = std::max(worst, std::abs(got[i] - want) / std::max(1.0, std::abs(want)));
        }
        return verdict(worst, 1e-6, "max rel err vs host, all elements");
      });
}

std::unique_ptr<BenchCase> exp_chain(Floors& floors, int64_t n) {
  Tensor a = Tensor::randn({n}).realize(), b = Tensor::randn({n}).realize(), c = Tensor::randn({n}).realize();
  Tensor y = ((a * b + c).relu() * 2 - 1).exp();
  auto fa = std::make_shared<FloatBuffer>(to_floor(floors, a));
  auto fb = std::make_shared<FloatBuffer>(to_floor(floors, b));
  auto fc = std::make_shared<FloatBuffer>(to_floor(floors, c));
  auto fd = std::make_shared<FloatBuffer>(floors.allocate(n));
  CaseInfo info{"exp_chain", count_name(n), "triad3", false, 16.0 * n};
  return finish(
      info, y, [&floors, fa, fb, fc, fd, n] { return floors.triad3(fa->get(), fb->get(), fc->get(), fd->get(), n); },
      [y, fa, fb, fc, n] {
        std::vector<float> got = y.tolist<float>();
        // exp's relative error is the absolute error of its argument: float a*b+c is off by ~1 ulp of |a*b|+|c|,
        // doubled by *2, plus exp's own ulp.
        double worst = 0;
        const int64_t step = std::max<int64_t>(1, n / 20'000);
        for (int64_t i = 0; i < n; i += step) {
          double pa = fa->get()[i], pb = fb->get()[i], pc = fc->get()[i];
          double arg = std::max(pa * pb + pc, 0.0) * 2 - 1;
          double want = std::exp(arg);
          double tol = 2e-6 * (1 + 2 * (std::abs(pa * pb) + std::abs(pc)));
          worst = std::max(worst, std::abs(got[i] - want) / want / tol);
        }
        return verdict(worst, 1.0, "max rel err / tolerance(|a*b|+|c|) vs std::exp, 20k samples");
      });
}

std::unique_ptr<BenchCase> sum_all(Floors& floors, int64_t n) {
  // Uniform [0, 1): every element adds, so a dropped or doubled chunk shows in the total.
  Tensor x = Tensor::rand({n}).realize();
  Tensor y = x.sum();
  auto a = std::make_shared<FloatBuffer>(to_floor(floors, x));
  auto floor_sum = std::make_shared<double>(0);
  CaseInfo info{"sum", count_name(n), "sum", false, 4.0 * n + 4};
  return finish(
      info, y, [&floors, a, n, floor_sum] { return floors.sum(a->get(), n, floor_sum.get()); },
      [y, a, n, floor_sum] {
        // Against float64 on the host (the floor's own float partial sums are reported beside it): float32
        // accumulation that keeps too few partial sums shows here as an error growing with n.
        double got = y.item<float>(), want = 0;
        for (int64_t i = 0; i < n; i++) want += a->get()[i];
        CheckResult r = verdict(std::abs(got - want) / want, 1e-4, "rel err vs float64 host sum");
        r.detail += format("; the floor's rel err %.3g", std::abs(*floor_sum - want) / want);
        return r;
      });
}

std::unique_ptr<BenchCase> sum_axis(Floors& floors, int64_t rows, int64_t cols, int64_t axis) {
  Tensor x = Tensor::rand({rows, cols}).realize();
  Tensor y = x.sum(axis);
  auto a = std::make_shared<FloatBuffer>(to_floor(floors, x));
  int64_t outputs = axis == 1 ? rows : cols;
  CaseInfo info{axis == 1 ? "sum_axis1" : "sum_axis0", format("%lldx%lld", static_cast<long long>(rows), static_cast<long long>(cols)),
                "sum", false, 4.0 * rows * cols + 4.0 * outputs};
  const int64_t n = rows * cols;
  return finish(
      info, y, [&floors, a, n] { return floors.sum(a->get(), n, nullptr); },
      [y, a, rows, cols, axis, outputs] {
        std::vector<float> got = y.tolist<float>();
        std::vector<double> want(outputs, 0.0);
        for (int64_t r = 0; r < rows; r++)
          for (int64_t c = 0; c < cols; c++) want[axis == 1 ? r : c] += a->get()[r * cols + c];
        double worst = 0;
        for (int64_t i = 0; i < outputs; i++) worst = std::max(worst, std::abs(got[i] - want[i]) / std::abs(want[i]));
        return verdict(worst, 1e-4, "max rel err vs float64 host sums");
      });
}

std::unique_ptr<BenchCase> softmax(Floors& floors, int64_t rows, int64_t cols) {
  Tensor x = Tensor::randn({rows, cols}).realize();
  Tensor y = x.softmax(-1);
  auto a = std::make_shared<FloatBuffer>(to_floor(floors, x));
  auto b = std::make_shared<FloatBuffer>(floors.allocate(rows * cols));
  CaseInfo info{"softmax", format("%lldx%lld", static_cast<long long>(rows), static_cast<long long>(cols)), "copy_scale",
                false, 8.0 * rows * cols};
  const int64_t n = rows * cols;
  return finish(
      info, y, [&floors, a, b, n] { return floors.copy_scale(a->get(), b->get(), n, 2.0f); },
      [y, a, rows, cols] {
        std::vector<float> got = y.tolist<float>();
        double worst = 0;
        std::vector<double> e(cols);
        for (int64_t r = 0; r < rows; r++) {
          const float* row = a->get() + r * cols;
          double mx = *std::max_element(row, row + cols), total = 0;
          for (int64_t c = 0; c < cols; c++) total += (e[c] = std::exp(row[c] - mx));
          for (int64_t c = 0; c < cols; c++)
            worst = std::max(worst, std::abs(got[r * cols + c] - e[c] / total) / (e[c] / total));
        }
        return verdict(worst, 1e-5, "max rel err vs float64 host, all rows");
      });
}

// ---- compute-bound workloads --------------------------------------------------------------------------------------

// max |got - want| / max |want| over the rows compared; the tolerance grows with K (float accumulation).
double matrix_error(const std::vector<float>& got, const float* want, int64_t n, const std::vector<int64_t>& rows) {
  double err = 0, scale = 0;
  for (int64_t r : rows)
    for (int64_t j = 0; j < n; j++) {
      err = std::max(err, std::abs(static_cast<double>(got[r * n + j]) - want[r * n + j]));
      scale = std::max(scale, std::abs(static_cast<double>(want[r * n + j])));
    }
  return scale > 0 ? err / scale : err;
}
double matmul_tolerance(int64_t k) { return 1e-4 * std::max(1.0, static_cast<double>(k) / 1024); }

// C = A @ B in float64 on the host for the given rows (the check when OpenBLAS is missing), written as float.
void host_matmul_rows(const float* a, const float* b, float* c, int64_t n, int64_t k, const std::vector<int64_t>& rows) {
  std::vector<double> acc(n);
  for (int64_t r : rows) {
    std::fill(acc.begin(), acc.end(), 0.0);
    for (int64_t p = 0; p < k; p++) {
      double av = a[r * k + p];
      for (int64_t j = 0; j < n; j++) acc[j] += av * b[p * n + j];
    }
    for (int64_t j = 0; j < n; j++) c[r * n + j] = static_cast<float>(acc[j]);
  }
}

std::vector<int64_t> all_rows(int64_t m) {
  std::vector<int64_t> rows(m);
  for (int64_t i = 0; i < m; i++) rows[i] = i;
  return rows;
}

std::unique_ptr<BenchCase> matmul(Floors& floors, int64_t m, int64_t n, int64_t k) {
  Tensor a = Tensor::randn({m, k}).realize(), b = Tensor::randn({k, n}).realize();
  Tensor y = a.matmul(b);
  auto fa = std::make_shared<FloatBuffer>(to_floor(floors, a));
  auto fb = std::make_shared<FloatBuffer>(to_floor(floors, b));
  auto fc = std::make_shared<FloatBuffer>(floors.allocate(m * n));
  bool blas = floors.sgemm_available();
  CaseInfo info{"matmul", format("%lldx%lldx%lld", static_cast<long long>(m), static_cast<long long>(n), static_cast<long long>(k)),
                "sgemm", true, 2.0 * m * n * k};
  return finish(
      info, y, [&floors, fa, fb, fc, m, n, k] { return floors.sgemm(m, n, k, fa->get(), fb->get(), fc->get()); },
      [&floors, y, fa, fb, fc, m, n, k, blas] {
        std::vector<float> got = y.tolist<float>();
        std::vector<int64_t> rows = blas ? all_rows(m) : std::vector<int64_t>{0, m / 2, m - 1};
        if (blas) floors.sgemm_untimed(m, n, k, fa->get(), fb->get(), fc->get());
        else host_matmul_rows(fa->get(), fb->get(), fc->get(), n, k, rows);
        return verdict(matrix_error(got, fc->get(), n, rows), matmul_tolerance(k),
                       blas ? "max abs err / max |C| vs sgemm" : "max abs err / max |C| vs float64 host, 3 rows");
      },
      blas ? std::string() : floors.sgemm_unavailable_reason());
}

// relu(relu(x @ w1 + b1) @ w2 + b2) @ w3 + b3; the floor is its three sgemm calls (bias and relu not counted).
std::unique_ptr<BenchCase> mlp(Floors& floors, int64_t batch, int64_t in, int64_t hidden, int64_t out) {
  Tensor x = Tensor::randn({batch, in}).realize();
  Tensor w1 = (Tensor::randn({in, hidden}) * (1.0 / std::sqrt(in))).realize();
  Tensor b1 = (Tensor::rand({hidden}) - 0.5).realize();
  Tensor w2 = (Tensor::randn({hidden, hidden}) * (1.0 / std::sqrt(hidden))).realize();
  Tensor b2 = (Tensor::rand({hidden}) - 0.5).realize();
  Tensor w3 = (Tensor::randn({hidden, out}) * (1.0 / std::sqrt(hidden))).realize();
  Tensor b3 = (Tensor::rand({out}) - 0.5).realize();
  Tensor y = ((x.matmul(w1) + b1).relu().matmul(w2) + b2).relu().matmul(w3) + b3;
  struct Buffers {
    FloatBuffer x, w1, b1, w2, b2, w3, b3, h1, h2, o;
  };
  auto f = std::make_shared<Buffers>(Buffers{to_floor(floors, x), to_floor(floors, w1), to_floor(floors, b1),
                                             to_floor(floors, w2), to_floor(floors, b2), to_floor(floors, w3),
                                             to_floor(floors, b3), floors.allocate(batch * hidden),
                                             floors.allocate(batch * hidden), floors.allocate(batch * out)});
  bool blas = floors.sgemm_available();
  CaseInfo info{"mlp", format("%lld-%lld-%lld-%lld b%lld", static_cast<long long>(in), static_cast<long long>(hidden),
                              static_cast<long long>(hidden), static_cast<long long>(out), static_cast<long long>(batch)),
                "sgemm x3", true, 2.0 * batch * (in * hidden + hidden * hidden + hidden * out)};
  return finish(
      info, y,
      [&floors, f, batch, in, hidden, out] {
        return floors.sgemm(batch, hidden, in, f->x.get(), f->w1.get(), f->h1.get()) +
               floors.sgemm(batch, hidden, hidden, f->h1.get(), f->w2.get(), f->h2.get()) +
               floors.sgemm(batch, out, hidden, f->h2.get(), f->w3.get(), f->o.get());
      },
      [&floors, y, f, batch, in, hidden, out, blas] {
        std::vector<float> got = y.tolist<float>();
        std::vector<int64_t> rows = blas ? all_rows(batch) : std::vector<int64_t>{0, batch / 2, batch - 1};
        auto bias_relu = [&](FloatBuffer& h, const FloatBuffer& bias, int64_t cols, bool relu) {
          for (int64_t r : rows)
            for (int64_t j = 0; j < cols; j++) {
              float v = h.get()[r * cols + j] + bias.get()[j];
              h.get()[r * cols + j] = relu ? std::max(v, 0.0f) : v;
            }
        };
        auto layer = [&](const FloatBuffer& a, const FloatBuffer& w, FloatBuffer& h, int64_t n, int64_t k) {
          if (blas) floors.sgemm_untimed(batch, n, k, a.get(), w.get(), h.get());
          else host_matmul_rows(a.get(), w.get(), h.get(), n, k, rows);
        };
        layer(f->x, f->w1, f->h1, hidden, in);
        bias_relu(f->h1, f->b1, hidden, true);
        layer(f->h1, f->w2, f->h2, hidden, hidden);
        bias_relu(f->h2, f->b2, hidden, true);
        layer(f->h2, f->w3, f->o, out, hidden);
        bias_relu(f->o, f->b3, out, false);
        return verdict(matrix_error(got, f->o.get(), out, rows), matmul_tolerance(in),
                       blas ? "max abs err / max |y| vs sgemm + host bias/relu"
                            : "max abs err / max |y| vs float64 host, 3 rows");
      },
      blas ? std::string() : floors.sgemm_unavailable_reason());
}

void spin_ping_pong(int iterations, std::vector<double>& round_trips, int partner_cpu = -1) {
  SpinEcho echo(partner_cpu);
  for (int i = 1; i <= iterations; i++) {
    const int64_t t0 = monotonic_ns();
    echo.round_trip(static_cast<uint64_t>(i));
    round_trips.push_back(static_cast<double>(monotonic_ns() - t0));
  }
}

// Core 0 stores the time it started at buffers[0].
void empty_kernel(void* const* buffers, const int64_t*, int32_t core_id, int32_t) {
  if (core_id == 0) static_cast<std::atomic<int64_t>*>(buffers[0])->store(monotonic_ns(), std::memory_order_relaxed);
}

// The kernel's start stamp on a cache line of its own: the dispatcher writes it on every dispatch, and sharing a line
// with the host's locals (the queue, the device pointer) made the host's next submit wait for that line, as many
// runs as not (the stack's place varies from run to run): a cost of the benchmark, not of the dispatch.
struct alignas(64) StartStamp {
  std::atomic<int64_t> ns{0};
};

std::string iso_date_utc() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string json_array(const std::vector<double>& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); i++) out += (i ? ", " : "") + format("%.0f", v[i]);
  return out + "]";
}

std::string human_ns(double ns) {
  if (ns <= 0) return "-";
  if (ns < 1e3) return format("%.0f ns", ns);
  if (ns < 1e6) return format("%.2f us", ns / 1e3);
  if (ns < 1e9) return format("%.2f ms", ns / 1e6);
  return format("%.2f s", ns / 1e9);
}

}  // namespace

void BenchCase::compile_and_warm_up(const UOp& linear) {
  compiled_ = compile_linear(linear);
  kernels_ = 0;
  for (const UOp& call : compiled_.src())
    if (call.src(0).op() == Ops::PROGRAM) kernels_++;
  run_doorbell();
}

double BenchCase::run_doorbell() {
  double ns = 0;
  for (const KernelTiming& t : run_linear_timed(compiled_)) ns += t.ns;
  return ns;
}

std::vector<CaseSpec> bench_cases() {
  std::vector<CaseSpec> cases;
  auto add = [&](std::string name, bool in_short, std::function<std::unique_ptr<BenchCase>(Floors&)> make) {
    cases.push_back(CaseSpec{std::move(name), in_short, std::move(make)});
  };
  add("add_mul 1e7", true, [](Floors& f) { return add_mul(f, 10'000'000); });
  add("add_mul 1e8", false, [](Floors& f) { return add_mul(f, 100'000'000); });
  add("exp_chain 1e7", true, [](Floors& f) { return exp_chain(f, 10'000'000); });
  add("sum 1e7", true, [](Floors& f) { return sum_all(f, 10'000'000); });
  add("sum 1e8", false, [](Floors& f) { return sum_all(f, 100'000'000); });
  add("sum_axis1 4096x4096", true, [](Floors& f) { return sum_axis(f, 4096, 4096, 1); });
  add("sum_axis0 4096x4096", true, [](Floors& f) { return sum_axis(f, 4096, 4096, 0); });
  add("softmax 4096x1024", true, [](Floors& f) { return softmax(f, 4096, 1024); });
  add("matmul 512", true, [](Floors& f) { return matmul(f, 512, 512, 512); });
  add("matmul 1024", true, [](Floors& f) { return matmul(f, 1024, 1024, 1024); });
  add("matmul 2048", false, [](Floors& f) { return matmul(f, 2048, 2048, 2048); });
  add("matmul 1040", true, [](Floors& f) { return matmul(f, 1040, 1040, 1040); });
  add("mlp 784-512-512-10 b256", true, [](Floors& f) { return mlp(f, 256, 784, 512, 10); });
  return cases;
}

std::vector<CaseSpec> device_vs_cpu_cases() {
  // The CPU suite's workloads at sizes a software Vulkan driver runs in well under a second each (lavapipe: llvmpipe's
  // threads on the same 2 cores as the CPU device); --full adds the CPU suite's own short sizes.
  std::vector<CaseSpec> cases;
  auto add = [&](std::string name, bool in_short, std::function<std::unique_ptr<BenchCase>(Floors&)> make) {
    cases.push_back(CaseSpec{std::move(name), in_short, std::move(make)});
  };
  add("add_mul 1e6", true, [](Floors& f) { return add_mul(f, 1'000'000); });
  add("add_mul 1e7", false, [](Floors& f) { return add_mul(f, 10'000'000); });
  add("exp_chain 1e6", true, [](Floors& f) { return exp_chain(f, 1'000'000); });
  add("sum 1e6", true, [](Floors& f) { return sum_all(f, 1'000'000); });
  add("sum 1e7", false, [](Floors& f) { return sum_all(f, 10'000'000); });
  add("sum_axis1 1024x1024", true, [](Floors& f) { return sum_axis(f, 1024, 1024, 1); });
  add("sum_axis0 1024x1024", true, [](Floors& f) { return sum_axis(f, 1024, 1024, 0); });
  add("softmax 256x1024", true, [](Floors& f) { return softmax(f, 256, 1024); });
  add("softmax 4096x1024", false, [](Floors& f) { return softmax(f, 4096, 1024); });
  add("matmul 256", true, [](Floors& f) { return matmul(f, 256, 256, 256); });
  add("matmul 512", false, [](Floors& f) { return matmul(f, 512, 512, 512); });
  add("matmul 1024", false, [](Floors& f) { return matmul(f, 1024, 1024, 1024); });
  add("mlp 784-512-512-10 b64", true, [](Floors& f) { return mlp(f, 64, 784, 512, 10); });
  add("mlp 784-512-512-10 b256", false, [](Floors& f) { return mlp(f, 256, 784, 512, 10); });
  return cases;
}

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : (v[h - 1] + v[h]) / 2;
}

CaseResult measure_case(BenchCase& c, int repeats, BenchCase* twin) {
  CaseResult r;
  r.info = c.info();
  r.kernels = c.kernel_count();
  r.floor_available = c.floor_available();
  if (!r.floor_available) r.floor_note = c.floor_unavailable_reason();
  // The STREAM-like floors alternate with doorbell's runs, 300 us apart (longer than the floor pool's 200 us and the
  // device's 50 us of polling before their threads sleep): on a shared machine whose speed drifts, both sides of a ratio then see
  // the same drift (blocks of each drifted 2x apart in one run here). OpenBLAS's threads poll for far longer after a
  // call, so an sgemm floor runs after all of doorbell's repetitions instead.
  const bool interleave = r.floor_available && r.info.floor_name.rfind("sgemm", 0) != 0;
  for (int i = 0; i < repeats; i++) {
    r.doorbell_samples.push_back(c.run_doorbell());
    if (twin != nullptr) r.twin_samples.push_back(twin->run_doorbell());
    if (!interleave) continue;
    std::this_thread::sleep_for(std::chrono::microseconds(300));
    r.floor_samples.push_back(static_cast<double>(c.run_floor()));
    std::this_thread::sleep_for(std::chrono::microseconds(300));
  }
  r.check = c.check();
  if (twin != nullptr) {
    r.twin_check = twin->check();
    r.twin_ns = median_of(r.twin_samples);
    r.twin_available = true;
  }
  if (r.floor_available && !interleave)
    for (int i = 0; i < repeats; i++) r.floor_samples.push_back(static_cast<double>(c.run_floor()));
  r.doorbell_ns = median_of(r.doorbell_samples);
  r.floor_ns = median_of(r.floor_samples);
  r.ratio = r.floor_ns > 0 ? r.doorbell_ns / r.floor_ns : 0;
  // work per ns = G-units per second
  r.throughput = r.doorbell_ns > 0 ? r.info.work / r.doorbell_ns : 0;
  r.floor_throughput = r.floor_ns > 0 ? r.info.work / r.floor_ns : 0;
  return r;
}

namespace {
// Empty-kernel dispatches through a bound queue on `dev`: submit -> kernel start and submit -> done, every sample.
std::pair<std::vector<double>, std::vector<double>> dispatch_samples(Device& dev, int iterations) {
  std::vector<double> to_start, to_done;
  Signal& done = dev.new_signal("bench-done");
  StartStamp stamp;
  std::atomic<int64_t>& started = stamp.ns;
  HWQueue q;
  q.exec(empty_kernel, {&started}).signal(done, 0);
  q.bind(dev);
  for (uint64_t value = 1; value <= static_cast<uint64_t>(iterations); value++) {
    q.patch_value(1, value);
    const int64_t t0 = monotonic_ns();
    q.submit(dev);
    done.wait(value);
    const int64_t t1 = monotonic_ns();
    to_start.push_back(static_cast<double>(started.load(std::memory_order_relaxed) - t0));
    to_done.push_back(static_cast<double>(t1 - t0));
  }
  return {std::move(to_start), std::move(to_done)};
}
}  // namespace

std::vector<LatencyResult> measure_dispatch_latency(int iterations) {
  // Each device beside its own floor, measured the way the latency section measures it (bench_latency.cpp): right
  // before the device's samples, after its threads went to sleep, the median of per-sample one-way times (half a
  // round trip), from the CPU the host thread times the device on and to the dispatcher's CPU when the device
  // leaves the host a core of its own (CpuDevice::free_cpu). A one-worker device (the dispatcher runs the kernel:
  // one handoff each way) and the device the workloads run on, one worker per core: on a machine with as many
  // cores as workers the host thread shares a core with one of them, and the ping-pong's two threads go where the
  // scheduler puts them, as the host thread does.
  struct Measured {
    std::pair<std::vector<double>, std::vector<double>> samples;
    std::vector<double> one_way;
  };
  auto measure = [iterations](CpuDevice& dev) {
    Measured m;
    const int host_cpu = dev.free_cpu();
    const ThreadPin pin(host_cpu);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));  // the device's threads stop polling
    std::vector<double> round_trips;
    spin_ping_pong(iterations, round_trips, host_cpu >= 0 ? dev.thread_cpu(0) : -1);
    for (double rt : round_trips) m.one_way.push_back(rt / 2);
    m.samples = dispatch_samples(dev, iterations);
    return m;
  };
  Measured one;
  {
    CpuDevice single(CpuDeviceOptions{.workers = 1});
    one = measure(single);
  }
  auto& all = dynamic_cast<CpuDevice&>(device("CPU"));
  Measured every = measure(all);
  const uint32_t workers = all.worker_count();
  const std::string n = std::to_string(workers) + " worker" + (workers == 1 ? "" : "s");
  const double one_floor = median_of(one.one_way), every_floor = median_of(every.one_way);
  return {
      LatencyResult{"dispatch 1 worker: submit -> start", median_of(one.samples.first), "ping-pong one way",
                    one_floor, iterations, std::move(one.samples.first)},
      LatencyResult{"dispatch 1 worker: submit -> done", median_of(one.samples.second), "ping-pong round trip",
                    2 * one_floor, iterations, std::move(one.samples.second)},
      LatencyResult{"dispatch " + n + ": submit -> start", median_of(every.samples.first), "ping-pong one way",
                    every_floor, iterations, std::move(every.samples.first)},
      LatencyResult{"dispatch " + n + ": submit -> done", median_of(every.samples.second), "ping-pong round trip",
                    2 * every_floor, iterations, std::move(every.samples.second)},
  };
}

std::string cpu_model_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) {
      size_t colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(' ', colon + 1));
    }
  return "unknown";
}

namespace {

// The case again on device `twin`: the same program, its kernels compiled by the CPU's other target (or realized on
// another device: its inputs made there too). Null, with the reason in `note`, when a target refused a kernel or
// the device failed.
std::unique_ptr<BenchCase> make_twin(const CaseSpec& spec, Floors& floors, const std::string& twin, std::string& note) {
  const std::string previous = default_device_name();
  set_default_device_name(twin);
  std::unique_ptr<BenchCase> c;
  try {
    c = spec.make(floors);
  } catch (const std::exception& e) {
    note = e.what();
  }
  set_default_device_name(previous);
  return c;
}

}  // namespace

DeviceVsCpuSection run_device_vs_cpu(const std::string& dev, bool full, int repeats, std::FILE* progress) {
  const int64_t t0 = monotonic_ns();
  DeviceVsCpuSection section;
  section.device = dev;
  try {
    Device& d = device(dev);
    (void)d.target();  // a device that opens but cannot compile (hcq/device.h) is skipped too
    try {
      const std::string described = checked_gpu(d)->describe(), prefix = d.name() + ", ";
      section.detail = described.rfind(prefix, 0) == 0 ? described.substr(prefix.size()) : described;
    } catch (const std::exception&) {
      section.detail = d.name();  // a device without a check adapter: its name is all there is to say
    }
  } catch (const std::exception& e) {
    section.skipped = std::string("DEV=") + dev + " does not open: " + e.what();
    return section;
  }
  Floors floors;
  Tensor::manual_seed(4321);
  for (const CaseSpec& spec : device_vs_cpu_cases()) {
    if (!full && !spec.in_short) continue;
    DeviceVsCpuResult r;
    const size_t space = spec.name.find(' ');
    r.name = spec.name.substr(0, space), r.sizes = space == std::string::npos ? "" : spec.name.substr(space + 1);
    std::string note;
    std::unique_ptr<BenchCase> on_device = make_twin(spec, floors, dev, note);
    std::unique_ptr<BenchCase> on_cpu = on_device ? make_twin(spec, floors, "CPU", note) : nullptr;
    if (on_device != nullptr && on_cpu != nullptr) {
      r.kernels = on_device->kernel_count();
      try {
        // Alternated, so both sides of the ratio see the same drift of a shared machine.
        for (int i = 0; i < repeats; i++) {
          r.device_samples.push_back(on_device->run_doorbell());
          r.cpu_samples.push_back(on_cpu->run_doorbell());
        }
        r.device_check = on_device->check();
        r.cpu_check = on_cpu->check();
        r.available = true;
      } catch (const std::exception& e) {
        note = e.what();
      }
    }
    if (!r.available) r.note = (on_device == nullptr ? dev + ": " : on_cpu == nullptr ? std::string("CPU: ") : dev + " run: ") + note;
    r.device_ns = median_of(r.device_samples), r.cpu_ns = median_of(r.cpu_samples);
    r.device_over_cpu = r.available && r.cpu_ns > 0 ? r.device_ns / r.cpu_ns : 0;
    if (progress) {
      std::fprintf(progress, "bench: %s %-22s done (%s, ratio %.2f)\n", dev.c_str(), spec.name.c_str(),
                   r.ok() ? "ok" : r.available ? "MISMATCH" : "FAILED", r.device_over_cpu);
      std::fflush(progress);
    }
    section.cases.push_back(std::move(r));
  }
  section.wall_s = (monotonic_ns() - t0) / 1e9;
  return section;
}

bool suite_answers_ok(const SuiteResult& result) {
  for (const CaseResult& c : result.cases)
    if (!c.check.ok) return false;
  for (const DeviceVsCpuResult& c : result.vk.cases)
    if (!c.ok()) return false;
  return true;
}

SuiteResult run_suite(const SuiteOptions& options) {
  if (!options.latency_only && parse_device_name(default_device_name()).prefix != "CPU")
    throw std::runtime_error("bench: compares the CPU device with CPU floors; expected DEV unset, CPU, CPU:X86 or CPU:CLANG, got " +
                             default_device_name());
  auto t0 = std::chrono::steady_clock::now();
  SuiteResult result;
  result.full = options.full;
  result.repeats = options.repeats > 0 ? options.repeats : (options.full ? 7 : 5);
  result.cpu_model = cpu_model_name();
  result.date = iso_date_utc();
  // First, while no other thread of this process runs: OpenBLAS's and the floors' threads keep spinning for a while
  // after their work, and on a machine with as many threads as cores they would stand between the host and the
  // device's workers (microseconds instead of a fraction of one).
  result.latency_only = options.latency_only;
  LatencyOptions latency = options.latency;
  latency.full = options.full, latency.progress = options.progress;
  if (options.latency_only) {
    result.latency_section = run_latency(latency);
    result.threads = std::max(1u, std::thread::hardware_concurrency());
    result.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return result;
  }
  result.latency = measure_dispatch_latency(options.full ? 10'000 : 2'000);
  result.latency_section = run_latency(latency);
  Floors floors;
  result.threads = floors.threads();
  Tensor::manual_seed(1234);
  // The twin of each case: the CPU's other target (the default compiles with X86, CPU:CLANG with clang).
  const bool default_is_x86 = device(default_device_name()).target().options().renderer == "X86";
  const std::string twin_name = default_is_x86 ? "CPU:CLANG" : "CPU:X86";
  for (const CaseSpec& spec : bench_cases()) {
    if (!options.full && !spec.in_short) continue;
    std::unique_ptr<BenchCase> c = spec.make(floors);
    std::string twin_note;
    std::unique_ptr<BenchCase> twin = options.compare_cpu_targets ? make_twin(spec, floors, twin_name, twin_note) : nullptr;
    result.cases.push_back(measure_case(*c, result.repeats, twin.get()));
    c.reset(), twin.reset();
    {
      CaseResult& r = result.cases.back();
      r.twin = options.compare_cpu_targets ? twin_name : "";
      r.twin_note = twin_note;
      const double x86_ns = default_is_x86 ? r.doorbell_ns : r.twin_ns, clang_ns = default_is_x86 ? r.twin_ns : r.doorbell_ns;
      r.x86_over_clang = r.twin_available && clang_ns > 0 ? x86_ns / clang_ns : 0;
    }
    if (options.progress) {
      const CaseResult& r = result.cases.back();
      std::fprintf(options.progress, "bench: %-26s done (%s, ratio %.1f)\n", spec.name.c_str(), r.check.ok ? "ok" : "MISMATCH",
                   r.ratio);
      std::fflush(options.progress);
    }
    if (options.compare_cpu_targets) {
      const CaseResult& r = result.cases.back();
      if (options.progress && r.twin_available) {
        std::fprintf(options.progress, "bench: %s %-16s done (%s, ratio %.2f)\n", twin_name.c_str(), spec.name.c_str(),
                     r.twin_check.ok ? "ok" : "MISMATCH", r.x86_over_clang);
        std::fflush(options.progress);
      }
    }
  }
  if (options.compare_vk) result.vk = run_device_vs_cpu("VK", options.full, result.repeats, options.progress);
  result.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return result;
}

void print_suite_table(const SuiteResult& result, std::FILE* out) {
  if (result.latency_only) {
    print_latency_table(result.latency_section, out);
    return;
  }
  std::fprintf(out, "bench (%s): CPU device vs floors, %u threads, %s; median of %d runs, kernel-only times\n",
               result.full ? "full" : "short", result.threads, result.cpu_model.c_str(), result.repeats);
  std::fprintf(out, "%-38s %10s  %-32s %7s  %-14s %s\n", "workload", "doorbell", "floor (name)", "ratio",
               "GFLOP/s, GB/s", "check");
  for (const CaseResult& r : result.cases) {
    std::string name = r.info.name + " " + r.info.sizes;
    std::string floor = r.floor_available ? human_ns(r.floor_ns) + " (" + r.info.floor_name + ")"
                                          : "unavailable (" + r.info.floor_name + ")";
    std::string ratio = r.floor_available ? format("%.1fx", r.ratio) : "-";
    std::string tp = format("%.2f %s", r.throughput, r.info.flops_unit ? "GFLOP/s" : "GB/s");
    std::fprintf(out, "%-38s %10s  %-32s %7s  %-14s %s\n", name.c_str(), human_ns(r.doorbell_ns).c_str(), floor.c_str(),
                 ratio.c_str(), tp.c_str(), r.check.ok ? "ok" : "MISMATCH");
  }
  for (const LatencyResult& l : result.latency) {
    std::string floor = human_ns(l.floor_ns) + " (" + l.floor_name + ")";
    std::fprintf(out, "%-38s %10s  %-32s %7s  %-14s %s\n", l.name.c_str(), human_ns(l.doorbell_ns).c_str(), floor.c_str(),
                 format("%.1fx", l.floor_ns > 0 ? l.doorbell_ns / l.floor_ns : 0).c_str(),
                 format("%d samples", l.samples).c_str(), "");
  }
  print_latency_table(result.latency_section, out);
  bool any_twin = false;
  for (const CaseResult& r : result.cases) any_twin |= !r.twin.empty();
  if (any_twin) {
    std::fprintf(out, "x86 backend vs clang (CPU:X86 vs CPU:CLANG, the same cases, runs alternated), median of %d runs, kernel-only times\n",
                 result.repeats);
    for (const CaseResult& r : result.cases) {
      std::string name = r.info.name + " " + r.info.sizes;
      if (!r.twin_available) {
        std::fprintf(out, "x86 %-34s %s refused: %s\n", name.c_str(), r.twin.c_str(), r.twin_note.c_str());
        continue;
      }
      const bool twin_is_clang = r.twin == "CPU:CLANG";
      const double x86_ns = twin_is_clang ? r.doorbell_ns : r.twin_ns, clang_ns = twin_is_clang ? r.twin_ns : r.doorbell_ns;
      std::fprintf(out, "x86 %-34s clang %10s  x86 %10s %7s  %s\n", name.c_str(), human_ns(clang_ns).c_str(),
                   human_ns(x86_ns).c_str(), format("%.2fx", r.x86_over_clang).c_str(), r.twin_check.ok ? "ok" : "MISMATCH");
    }
  }
  if (!result.vk.device.empty()) {
    const DeviceVsCpuSection& v = result.vk;
    if (!v.ran()) {
      std::fprintf(out, "%s vs CPU: skipped: %s\n", v.device.c_str(), v.skipped.c_str());
    } else {
      std::fprintf(out, "%s vs CPU (DEV=%s: %s; against the CPU device, runs alternated), median of %d runs, kernel-only times\n",
                   v.device.c_str(), v.device.c_str(), v.detail.c_str(), result.repeats);
      std::string lower = v.device;
      for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      for (const DeviceVsCpuResult& r : v.cases) {
        const std::string name = r.name + " " + r.sizes;
        if (!r.available) {
          std::fprintf(out, "%s %-34s FAILED: %s\n", lower.c_str(), name.c_str(), r.note.c_str());
          continue;
        }
        std::fprintf(out, "%s %-34s CPU %10s  %s %10s %8s  %s\n", lower.c_str(), name.c_str(), human_ns(r.cpu_ns).c_str(),
                     v.device.c_str(), human_ns(r.device_ns).c_str(), format("%.2fx", r.device_over_cpu).c_str(),
                     r.ok() ? "ok" : "MISMATCH");
      }
    }
  }
  for (const DeviceVsCpuResult& r : result.vk.cases) {
    if (r.available && !r.device_check.ok)
      std::fprintf(out, "MISMATCH %s %s %s: %s\n", result.vk.device.c_str(), r.name.c_str(), r.sizes.c_str(), r.device_check.detail.c_str());
    if (r.available && !r.cpu_check.ok)
      std::fprintf(out, "MISMATCH CPU (vs %s) %s %s: %s\n", result.vk.device.c_str(), r.name.c_str(), r.sizes.c_str(), r.cpu_check.detail.c_str());
  }
  for (const CaseResult& r : result.cases) {
    if (r.twin_available && !r.twin_check.ok)
      std::fprintf(out, "MISMATCH %s %s %s: %s\n", r.twin.c_str(), r.info.name.c_str(), r.info.sizes.c_str(), r.twin_check.detail.c_str());
    if (!r.check.ok)
      std::fprintf(out, "MISMATCH %s %s: %s\n", r.info.name.c_str(), r.info.sizes.c_str(), r.check.detail.c_str());
    if (!r.floor_available)
      std::fprintf(out, "floor %s unavailable for %s %s: %s\n", r.info.floor_name.c_str(), r.info.name.c_str(),
                   r.info.sizes.c_str(), r.floor_note.c_str());
  }
  std::fprintf(out, "bench: %zu cases in %.1f s\n", result.cases.size(), result.wall_s);
}

void check_json_path(const std::string& path) {
  auto refuse = [&](const std::string& why) {
    return std::runtime_error("cannot write the JSON results to '" + path + "': " + why);
  };
  if (path.empty()) throw refuse("the path is empty; expected a file name");
  std::filesystem::path p(path);
  std::filesystem::path folder = p.parent_path().empty() ? std::filesystem::path(".") : p.parent_path();
  std::error_code ec;
  if (std::filesystem::is_directory(p, ec)) throw refuse("it is a folder; expected a file name");
  if (!std::filesystem::is_directory(folder, ec)) throw refuse("the folder '" + folder.string() + "' does not exist");
  if (std::filesystem::exists(p, ec)) {
    if (access(path.c_str(), W_OK) != 0) throw refuse(std::string("the file is not writable (") + std::strerror(errno) + ")");
  } else if (access(folder.c_str(), W_OK | X_OK) != 0) {
    throw refuse("the folder '" + folder.string() + "' is not writable (" + std::strerror(errno) + ")");
  }
}

void write_suite_json(const SuiteResult& result, const std::string& path) {
  std::ostringstream j;
  j << "{\n  \"suite\": " << json_quote(result.full ? "full" : "short") << ",\n";
  j << "  \"machine\": {\"cpu_model\": " << json_quote(result.cpu_model) << ", \"threads\": " << result.threads
    << ", \"date\": " << json_quote(result.date) << "},\n";
  j << "  \"repeats\": " << result.repeats << ",\n  \"wall_s\": " << json_figure(result.wall_s) << ",\n  \"cases\": [\n";
  for (size_t i = 0; i < result.cases.size(); i++) {
    const CaseResult& r = result.cases[i];
    j << "    {\"name\": " << json_quote(r.info.name) << ", \"sizes\": " << json_quote(r.info.sizes)
      << ", \"kernels\": " << r.kernels << ", \"doorbell_ns\": " << json_figure(r.doorbell_ns)
      << ", \"doorbell_samples_ns\": " << json_array(r.doorbell_samples) << ", \"floor\": " << json_quote(r.info.floor_name)
      << ", \"floor_available\": " << (r.floor_available ? "true" : "false")
      << ", \"floor_note\": " << json_quote(r.floor_note) << ", \"floor_ns\": " << json_figure(r.floor_ns)
      << ", \"floor_samples_ns\": " << json_array(r.floor_samples) << ", \"ratio\": " << json_figure(r.ratio)
      << ", \"throughput\": " << json_figure(r.throughput) << ", \"floor_throughput\": " << json_figure(r.floor_throughput)
      << ", \"unit\": " << json_quote(r.info.flops_unit ? "GFLOP/s" : "GB/s")
      << ", \"check\": " << json_quote(r.check.ok ? "ok" : "MISMATCH") << ", \"check_detail\": " << json_quote(r.check.detail)
      << ", \"twin\": " << json_quote(r.twin) << ", \"twin_available\": " << (r.twin_available ? "true" : "false")
      << ", \"twin_note\": " << json_quote(r.twin_note) << ", \"twin_ns\": " << json_figure(r.twin_ns)
      << ", \"twin_samples_ns\": " << json_array(r.twin_samples) << ", \"x86_over_clang\": " << json_figure(r.x86_over_clang)
      << ", \"twin_check\": " << json_quote(!r.twin_available ? "" : r.twin_check.ok ? "ok" : "MISMATCH")
      << ", \"twin_check_detail\": " << json_quote(r.twin_check.detail)
      << "}" << (i + 1 < result.cases.size() ? "," : "") << "\n";
  }
  j << "  ],\n  \"dispatch\": [\n";
  for (size_t i = 0; i < result.latency.size(); i++) {
    const LatencyResult& l = result.latency[i];
    j << "    {\"name\": " << json_quote(l.name) << ", \"doorbell_ns\": " << json_figure(l.doorbell_ns)
      << ", \"floor\": " << json_quote(l.floor_name) << ", \"floor_ns\": " << json_figure(l.floor_ns)
      << ", \"samples\": " << l.samples << "}" << (i + 1 < result.latency.size() ? "," : "") << "\n";
  }
  j << "  ],\n  \"latency\": " << latency_json(result.latency_section, 2) << ",\n";
  const DeviceVsCpuSection& v = result.vk;
  if (v.device.empty()) {
    j << "  \"vk_vs_cpu\": null\n}\n";
  } else {
    j << "  \"vk_vs_cpu\": {\"device\": " << json_quote(v.device) << ", \"detail\": " << json_quote(v.detail)
      << ", \"skipped\": " << (v.ran() ? std::string("null") : json_quote(v.skipped)) << ", \"wall_s\": " << json_figure(v.wall_s)
      << ", \"cases\": [\n";
    for (size_t i = 0; i < v.cases.size(); i++) {
      const DeviceVsCpuResult& r = v.cases[i];
      j << "    {\"name\": " << json_quote(r.name) << ", \"sizes\": " << json_quote(r.sizes)
        << ", \"available\": " << (r.available ? "true" : "false") << ", \"note\": " << json_quote(r.note)
        << ", \"kernels\": " << r.kernels << ", \"device_ns\": " << json_figure(r.device_ns)
        << ", \"device_samples_ns\": " << json_array(r.device_samples) << ", \"cpu_ns\": " << json_figure(r.cpu_ns)
        << ", \"cpu_samples_ns\": " << json_array(r.cpu_samples) << ", \"device_over_cpu\": " << json_figure(r.device_over_cpu)
        << ", \"device_check\": " << json_quote(!r.available ? "" : r.device_check.ok ? "ok" : "MISMATCH")
        << ", \"device_check_detail\": " << json_quote(r.device_check.detail)
        << ", \"cpu_check\": " << json_quote(!r.available ? "" : r.cpu_check.ok ? "ok" : "MISMATCH")
        << ", \"cpu_check_detail\": " << json_quote(r.cpu_check.detail) << "}" << (i + 1 < v.cases.size() ? "," : "") << "\n";
    }
    j << "  ]}\n}\n";
  }
  std::ofstream f(path);
  if (!f) throw std::runtime_error("bench: cannot open '" + path + "' for writing the JSON results");
  f << j.str();
  if (!f.flush()) throw std::runtime_error("bench: cannot write the JSON results to '" + path + "'");
}

}  // namespace doorbell::bench
