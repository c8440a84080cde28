// Helpers for tests that run scheduled kernels compiled (compiler/program.h) against the reference interpreter
// (hcq/run_linear.h) on the same host buffers.
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <random>
#include <span>
#include <string>
#include <unordered_set>
#include <vector>

#include "compiler/cpu/clang_compiler.h"
#include "compiler/optimizer.h"
#include "compiler/program.h"
#include "frontend/tensor.h"
#include "hcq/host_buffers.h"
#include "hcq/run_linear.h"
#include "ir/exec_alu.h"

namespace doorbell::test {

#define SKIP_WITHOUT_C_COMPILER() \
  if (!find_c_compiler()) GTEST_SKIP() << "no C compiler (clang-19, clang or cc) on PATH: compiled kernels cannot be tested"

using Snapshot = std::vector<std::vector<std::byte>>;

// Sets the optimizer switch for a scope, then puts back what it was.
class NooptScope {
 public:
  explicit NooptScope(bool noopt) : saved_(noopt_enabled()) { set_noopt(noopt); }
  ~NooptScope() { set_noopt(saved_); }
  NooptScope(const NooptScope&) = delete;
  NooptScope& operator=(const NooptScope&) = delete;

 private:
  bool saved_;
};

// Every buffer the CALLs of `linear` bind, each once.
inline std::vector<UOp> call_buffers(const UOp& linear) {
  std::vector<UOp> out;
  std::unordered_set<const UOpNode*> seen;
  for (const UOp& call : linear.src())
    for (size_t i = 1; i < call.src().size(); i++)
      if (seen.insert(call.src(i).get()).second) out.push_back(call.src(i));
  return out;
}

inline Snapshot snapshot(const std::vector<UOp>& buffers) {
  Snapshot s;
  for (const UOp& b : buffers) {
    std::span<std::byte> bytes = buffer_bytes(b);
    s.emplace_back(bytes.begin(), bytes.end());
  }
  return s;
}

inline void restore(const std::vector<UOp>& buffers, const Snapshot& s) {
  for (size_t i = 0; i < buffers.size(); i++) std::memcpy(buffer_bytes(buffers[i]).data(), s[i].data(), s[i].size());
}

inline double element_as_double(DType dt, const std::byte* p) {
  auto get = [&](auto v) { std::memcpy(&v, p, sizeof v); return v; };
  switch (dt.scalar_type) {
    case ScalarType::Float16: return half_bits_to_float(get(uint16_t{}));
    case ScalarType::BFloat16: return bfloat16_bits_to_float(get(uint16_t{}));
    case ScalarType::Float32: return get(float{});
    default: return get(double{});
  }
}

// Floats within a relative `rtol` (of max(1, |want|); NaN equals NaN); everything else byte for byte.
inline void expect_same_contents(const std::vector<UOp>& buffers, const Snapshot& got, const Snapshot& want,
                                 const std::string& run, double rtol = 1e-6) {
  for (size_t b = 0; b < buffers.size(); b++) {
    DType dt = buffers[b].dtype();
    size_t item = static_cast<size_t>(dt.itemsize()), n = want[b].size() / item;
    int reported = 0;
    for (size_t i = 0; i < n && reported < 5; i++) {
      const std::byte *g = got[b].data() + i * item, *w = want[b].data() + i * item;
      bool same = std::memcmp(g, w, item) == 0;
      if (!same && dt.is_float()) {
        double x = element_as_double(dt, g), y = element_as_double(dt, w);
        same = (std::isnan(x) && std::isnan(y)) || std::fabs(x - y) <= rtol * std::max(1.0, std::fabs(y));
      }
      if (!same) {
        ADD_FAILURE() << run << ": buffer " << b << " (" << dt.name() << ") element " << i << " differs from the reference";
        reported++;
      }
    }
  }
}

// Runs every CALL of `linear` compiled, its iterations divided over `cores` calls (core ids 0..cores-1).
inline void run_compiled(const UOp& linear, int cores) {
  for (const UOp& call : linear.src()) {
    CompiledKernel k = compile_kernel(call);
    if (std::getenv("DOORBELL_TEST_PRINT_SOURCE")) std::cout << k.program.src(2).arg_as<std::string>() << "\n";
    std::vector<void*> bufs;
    for (size_t i = 1; i < call.src().size(); i++) bufs.push_back(buffer_bytes(call.src(i)).data());
    for (int c = 0; c < cores; c++) k.fn(bufs.data(), nullptr, c, cores);
  }
}

// Outputs nobody reads start as a byte pattern no kernel computes, so a kernel that skips an element is caught.
inline void poison_unread_outputs(const UOp& linear) {
  std::unordered_set<const UOpNode*> read;
  for (const UOp& call : linear.src())
    for (size_t i = 2; i < call.src().size(); i++) read.insert(call.src(i).get());
  for (const UOp& call : linear.src())
    if (!read.count(call.src(1).get())) std::memset(buffer_bytes(call.src(1)).data(), 0xA5, buffer_bytes(call.src(1)).size());
}

// `outputs` scheduled, with every buffer's contents before (outputs nobody reads poisoned) and after the reference
// interpreter ran the schedule: what compiled runs restore from and compare with.
struct ReferenceRun {
  UOp linear;
  std::vector<UOp> buffers;
  Snapshot initial, want;
};
inline ReferenceRun run_reference(const std::vector<Tensor>& outputs) {
  ReferenceRun r;
  r.linear = Tensor::schedule_linear(outputs);
  EXPECT_GT(r.linear.src().size(), 0u);
  r.buffers = call_buffers(r.linear);
  poison_unread_outputs(r.linear);
  r.initial = snapshot(r.buffers);
  run_linear(r.linear, on_device("REF"));
  r.want = snapshot(r.buffers);
  return r;
}

// Schedules `outputs`, runs the reference and then the compiled kernels on the same initial contents and compares
// every buffer. The compiled results stay in the buffers, so the tensors' tolist() reads them afterwards.
inline void expect_compiled_matches_reference(const std::vector<Tensor>& outputs) {
  ReferenceRun r = run_reference(outputs);
  for (int cores : {4, 3, 1}) {
    restore(r.buffers, r.initial);
    run_compiled(r.linear, cores);
    expect_same_contents(r.buffers, snapshot(r.buffers), r.want, std::to_string(cores) + " core(s)");
  }
}

// The kernels (CALL sources) that `outputs` schedule into, in order.
inline std::vector<UOp> kernel_sinks(const std::vector<Tensor>& outputs) {
  UOp linear = Tensor::schedule_linear(outputs);
  std::vector<UOp> sinks;
  for (const UOp& call : linear.src()) sinks.push_back(call.src(0));
  return sinks;
}

inline std::vector<UOp> nodes(const UOp& root, Ops op) {
  std::vector<UOp> out;
  for (const UOp& u : root.toposort())
    if (u.op() == op) out.push_back(u);
  return out;
}

inline std::vector<UOp> ranges_of(const UOp& root, AxisType type) {
  std::vector<UOp> out;
  for (const UOp& r : nodes(root, Ops::RANGE))
    if (r.arg_as<RangeArg>().type == type) out.push_back(r);
  return out;
}

inline int64_t range_size(const UOp& r) { return std::get<int64_t>(r.src(0).const_value()); }

inline std::vector<float> random_floats(size_t n, uint32_t seed, float lo = -4, float hi = 4) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = d(g);
  return v;
}

}  // namespace doorbell::test
