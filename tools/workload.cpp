#include "tools/workload.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <vector>

#include "compiler/program.h"
#include "frontend/tensor.h"
#include "hcq/compile_linear.h"
#include "hcq/devices.h"
#include "hcq/run_linear.h"
#include "ir/debug.h"

namespace doorbell {
namespace {

constexpr int64_t kBatch = 256, kIn = 512, kHidden = 512, kOut = 64;

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// softmax(relu(x @ w1 + b1) @ w2) for one row, in float64 from the float32 inputs.
std::vector<double> reference_row(int64_t r, const std::vector<float>& x, const std::vector<float>& w1,
                                  const std::vector<float>& b1, const std::vector<float>& w2) {
  std::vector<double> h(kHidden);
  for (int64_t j = 0; j < kHidden; j++) {
    double acc = b1[j];
    for (int64_t k = 0; k < kIn; k++) acc += static_cast<double>(x[r * kIn + k]) * w1[k * kHidden + j];
    h[j] = std::max(acc, 0.0);
  }
  std::vector<double> o(kOut);
  for (int64_t j = 0; j < kOut; j++) {
    double acc = 0;
    for (int64_t k = 0; k < kHidden; k++) acc += h[k] * w2[k * kOut + j];
    o[j] = acc;
  }
  double mx = *std::max_element(o.begin(), o.end()), sum = 0;
  for (double& v : o) sum += (v = std::exp(v - mx));
  for (double& v : o) v /= sum;
  return o;
}

}  // namespace

int run_workload(std::FILE* out) {
  Tensor::manual_seed(42);
  Tensor x = Tensor::randn({kBatch, kIn}).realize();
  Tensor w1 = (Tensor::randn({kIn, kHidden}) * (1.0 / std::sqrt(kIn))).realize();
  Tensor b1 = (Tensor::rand({kHidden}) - 0.5).realize();
  Tensor w2 = (Tensor::randn({kHidden, kOut}) * (1.0 / std::sqrt(kHidden))).realize();
  auto forward = [&] { return (x.matmul(w1) + b1).relu().matmul(w2).softmax(-1); };
  std::fprintf(out, "workload: MLP forward, softmax(relu(x @ w1 + b1) @ w2), x (%lld, %lld), w1 (%lld, %lld), w2 (%lld, %lld), float32\n",
               static_cast<long long>(kBatch), static_cast<long long>(kIn), static_cast<long long>(kIn),
               static_cast<long long>(kHidden), static_cast<long long>(kHidden), static_cast<long long>(kOut));

  // Cold: schedule, compile every kernel (reporting each one's compile latency), run.
  auto t0 = std::chrono::steady_clock::now();
  Tensor y = forward();
  UOp compiled = compile_linear(y.schedule_linear());
  double cold_compile_ms = ms_since(t0);
  std::vector<double> compile_ms;
  for (const UOp& call : compiled.src())
    if (call.src(0).op() == Ops::PROGRAM) {
      CompiledProgram k = compile_program(call.src(0).src(0), call_device(call).target());  // a program cache hit
      compile_ms.push_back(k.compile_ms);
      std::fprintf(out, "  compiled %-24s in %8.2f ms%s\n", program_info(k.program).name.c_str(), k.compile_ms,
                   k.from_disk_cache ? " (disk cache)" : "");
    }
  auto t1 = std::chrono::steady_clock::now();
  run_linear(compiled);
  std::fprintf(out, "cold: %zu kernels scheduled and compiled in %.1f ms, run in %.3f ms\n", compiled.src().size(),
               cold_compile_ms, ms_since(t1));

  // Warm: the same program again, every cache hit, with the DEBUG=2 table of kernel-only times.
  int saved = debug_level();
  set_debug_level(std::max(saved, 2));
  auto t2 = std::chrono::steady_clock::now();
  Tensor y2 = forward();
  y2.realize();
  double warm_ms = ms_since(t2);
  set_debug_level(saved);
  std::fprintf(out, "warm: realize in %.3f ms\n", warm_ms);

  std::vector<float> got = y2.tolist<float>();
  std::vector<float> xs = x.tolist<float>(), w1s = w1.tolist<float>(), b1s = b1.tolist<float>(), w2s = w2.tolist<float>();
  double worst = 0;
  for (int64_t r : {int64_t{0}, kBatch / 2, kBatch - 1}) {
    std::vector<double> want = reference_row(r, xs, w1s, b1s, w2s);
    for (int64_t j = 0; j < kOut; j++) worst = std::max(worst, std::abs(got[r * kOut + j] - want[j]));
  }
  bool ok = worst < 1e-5;
  std::fprintf(out, "check: rows 0, %lld, %lld against float64 on the host: max abs error %.3g (%s)\n",
               static_cast<long long>(kBatch / 2), static_cast<long long>(kBatch - 1), worst, ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}

}  // namespace doorbell
