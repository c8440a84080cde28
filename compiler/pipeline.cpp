#include "compiler/pipeline.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <thread>

#include "compiler/cpu/cpu_optimizer.h"
#include "compiler/cpu/vectorize.h"
#include "compiler/expander.h"
#include "compiler/gpu/gpu_dims.h"
#include "compiler/gpu/gpu_optimizer.h"
#include "compiler/gpu/group_reduce.h"
#include "compiler/kernel_estimates.h"
#include "compiler/optimizer.h"
#include "compiler/late_lowering.h"
#include "compiler/verify.h"
#include "ir/debug.h"

namespace doorbell {
namespace {

std::atomic<int> g_verify{-1};  // -1: not read from the environment yet

thread_local std::vector<std::string> t_last_passes;

size_t node_count(const UOp& u) { return u.toposort().size(); }

// Elementary operations (ALU ops plus 4-byte words moved) below which another core does not pay for its wake-up
// (about a microsecond on this project's machines): a tiny kernel runs on one core, a big one on every core.
constexpr int64_t kMinWorkPerCore = 8192;

LoweredKernel cpu_launch(const UOp& original, const UOp& lowered) {
  KernelEstimates e = estimate_kernel(original);
  int64_t work = e.ops + (e.bytes_read + e.bytes_written) / 4;
  LoweredKernel k{lowered};
  // Never more shares than this machine has cores: the CPU device runs a worker per core (hcq/cpu/cpu_device.h).
  static const int64_t cores = std::max<int64_t>(1, std::thread::hardware_concurrency());
  k.global_size[0] = std::clamp<int64_t>(std::min(work / kMinWorkPerCore, e.global_size), 1, cores);
  return k;
}

}  // namespace

bool verify_passes() {
  int v = g_verify.load(std::memory_order_acquire);
  if (v < 0) {
    const char* e = std::getenv("DOORBELL_VERIFY");
    v = e != nullptr && *e != '\0' && std::string(e) != "0";
    g_verify.store(v, std::memory_order_release);
  }
  return v == 1;
}

void set_verify_passes(bool on) { g_verify.store(on ? 1 : 0, std::memory_order_release); }

UOp PassRunner::run(const char* pass, KernelStage after, const UOp& in, const std::function<UOp(const UOp&)>& f) {
  passes_.emplace_back(pass);
  const bool print = debug_level() >= 5;
  const auto start = std::chrono::steady_clock::now();
  if (print) std::fprintf(stderr, "pass %s (%s): %zu nodes\n", pass, kernel_.c_str(), node_count(in));
  UOp out = f(in);
  if (print) {
    double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
    std::fprintf(stderr, "pass %s (%s): -> %zu nodes%s in %.1f us\n", pass, kernel_.c_str(), node_count(out),
                 out == in ? " (unchanged)" : "", us);
  }
  if (verify_passes()) verify_kernel(out, after, pass, &late_);
  return out;
}

const std::vector<std::string>& last_pipeline_passes() { return t_last_passes; }

LoweredKernel cpu_pipeline(const UOp& sink, const LoweringOptions& options, bool optimize) {
  PassRunner p(sink.key().hex().substr(0, 16), options.late);
  auto late_lowering = [&](const UOp& in) { return lower_late(in, options.late); };
  if (verify_passes()) verify_kernel(sink, KernelStage::SCHEDULED, "the scheduler", nullptr);
  UOp k = sink;
  if (optimize) {
    UOp opt = p.run("optimize_cpu", KernelStage::OPTIMIZED, sink, optimize_for_cpu);
    if (!(opt == sink)) {
      UOp v = p.run("expand", KernelStage::EXPANDED, opt, expand_kernel);
      v = p.run("late_lowering", KernelStage::LOWERED, v, late_lowering);
      std::string why;
      std::optional<UOp> vectorized;
      p.run("vectorize", KernelStage::LOWERED, v, [&](const UOp& in) {
        vectorized = vectorize_kernel(in, &why);
        return vectorized ? *vectorized : in;
      });
      if (vectorized) {
        t_last_passes = p.passes();
        return cpu_launch(sink, *vectorized);
      }
      if (debug_level() >= 3)  // DEBUG=3: why a kernel runs in scalar lanes
        std::fprintf(stderr, "cpu: kernel %s not vectorized: %s\n", sink.key().hex().substr(0, 16).c_str(), why.c_str());
    }
    k = p.run("optimize_scalar", KernelStage::OPTIMIZED, sink, apply_optimizations);
    k = p.run("expand", KernelStage::EXPANDED, k, expand_kernel);
  }
  k = p.run("late_lowering", KernelStage::LOWERED, k, late_lowering);
  t_last_passes = p.passes();
  return cpu_launch(sink, k);
}

LoweredKernel gpu_pipeline(const UOp& sink, const GpuTarget& target, const GpuPipelineOptions& options) {
  static const LateLoweringOptions ptx = ptx_lowering_options(), amdgpu = amdgpu_lowering_options(),
                                   spirv = spirv_lowering_options();
  const LateLoweringOptions& late = options.late != nullptr      ? *options.late
                                    : target.vendor == GpuVendor::NV ? ptx
                                    : target.vendor == GpuVendor::VK ? spirv
                                                                     : amdgpu;
  PassRunner p(sink.key().hex().substr(0, 16), late);
  if (verify_passes()) verify_kernel(sink, KernelStage::SCHEDULED, "the scheduler", nullptr);
  UOp k = sink;
  if (options.optimize) {
    if (int64_t lanes = group_lanes_for(sink, target)) {
      k = p.run("optimize_gpu", KernelStage::OPTIMIZED, k, [&](const UOp& in) { return group_reduces(in, lanes); });
    } else {
      k = p.run("optimize_gpu", KernelStage::OPTIMIZED, k, apply_optimizations);
      k = p.run("expand", KernelStage::EXPANDED, k, expand_kernel);
    }
  }
  LoweredKernel launched;
  k = p.run("launch_dims", KernelStage::LAUNCHED, k, [&](const UOp& in) {
    launched = lower_for_gpu(in, target, options.dims);
    return launched.sink;
  });
  if (options.late_lowering)
    launched.sink = p.run("late_lowering", KernelStage::LOWERED, k, [&](const UOp& in) { return lower_late(in, late); });
  t_last_passes = p.passes();
  return launched;
}

}  // namespace doorbell
