// Runs the PTX renderer's kernels on the interpreter and compares their outputs with the CPU reference: every
// kernel of a program is rendered for sm_90 (compiler/gpu/ptx_renderer), parsed and run over the program's real
// buffers (device address = host address), and its outputs must equal the reference's (run_linear of the same
// CALL on the CPU device) byte for byte; within a relative tolerance a kernel with a transcendental (EXP2, LOG2,
// SIN, POW: float32 polynomials on the GPU, libm in the reference) or, unless NOOPT=1, a float reduction (the GPU
// optimizer may sum in another order). A float NaN equals any NaN:
// NVIDIA's canonical NaN (0x7FFFFFFF) and x86's default NaN (0xFFC00000) differ by design.
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <sstream>
#include <unordered_set>

#include "compiler/c_renderer.h"
#include "compiler/gpu/ptx_renderer.h"
#include "compiler/optimizer.h"
#include "frontend/tensor.h"
#include "hcq/host_buffers.h"
#include "hcq/run_linear.h"
#include "ptx_test_util.h"

namespace doorbell::ptx_e2e {

using mockgpu::nv::PtxDim3;
using mockgpu::nv::PtxProgram;

// Fills a buffer nobody has written (Tensor::empty) with values every op keeps defined: 0/1 for bool, 1..7
// otherwise (no division by zero, no log of a negative, every cast in range).
inline void fill_defined(std::span<std::byte> b, DType d, uint64_t& seed) {
  size_t size = static_cast<size_t>(d.itemsize());
  for (size_t i = 0; i < b.size() / size; i++) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    int v = static_cast<int>((seed >> 33) % 7) + 1;
    std::byte* p = b.data() + i * size;
    if (d.is_bool()) { p[0] = static_cast<std::byte>(v & 1); continue; }
    if (d.is_float()) {
      double x = v + static_cast<double>((seed >> 20) & 255) / 256;
      if (d.scalar_type == ScalarType::Float32) { float f = static_cast<float>(x); std::memcpy(p, &f, 4); }
      else if (d.scalar_type == ScalarType::Float64) std::memcpy(p, &x, 8);
      else {  // 16-bit floats: float16 holds x exactly, bfloat16 keeps its top 8 significant bits
        float f = static_cast<float>(x);
        uint32_t u = std::bit_cast<uint32_t>(f);
        uint16_t h = d.scalar_type == ScalarType::BFloat16 ? static_cast<uint16_t>(u >> 16)
                                                         : static_cast<uint16_t>(((u >> 16) & 0x8000) | (((u >> 23) - 112) << 10) | ((u >> 13) & 0x3FF));
        std::memcpy(p, &h, 2);
      }
      continue;
    }
    uint64_t w = static_cast<uint64_t>(v);
    std::memcpy(p, &w, size);  // little-endian: the low bytes
  }
}


inline double element(const std::byte* p, DType d) {
  switch (d.scalar_type) {
    case ScalarType::Float32: { float f; std::memcpy(&f, p, 4); return f; }
    case ScalarType::Float64: { double f; std::memcpy(&f, p, 8); return f; }
    case ScalarType::Float16: case ScalarType::BFloat16: {
      uint16_t h;
      std::memcpy(&h, p, 2);
      if (d.scalar_type == ScalarType::BFloat16) return std::bit_cast<float>(static_cast<uint32_t>(h) << 16);
      int e = (h >> 10) & 31, m = h & 1023;
      double v = e == 31 ? (m ? NAN : INFINITY) : e == 0 ? std::ldexp(m, -24) : std::ldexp(1024 + m, e - 25);
      return (h & 0x8000) ? -v : v;
    }
    default: return 0;
  }
}

inline std::string hex_bytes(const std::byte* p, size_t n) {
  std::ostringstream s;
  for (size_t i = n; i-- > 0;) s << std::hex << ((static_cast<unsigned>(p[i]) >> 4) & 15) << (static_cast<unsigned>(p[i]) & 15);
  return "0x" + s.str();
}

// Compares one output buffer; returns "" or a description of the first mismatch.
inline std::string compare(const std::byte* got, const std::byte* want, size_t bytes, DType d, bool exact) {
  size_t size = static_cast<size_t>(d.itemsize());
  bool fl = d.is_float();
  size_t bad = 0;
  std::string first;
  for (size_t i = 0; i < bytes / size; i++) {
    const std::byte *g = got + i * size, *w = want + i * size;
    if (std::memcmp(g, w, size) == 0) continue;
    if (fl) {
      double x = element(g, d), y = element(w, d);
      if (std::isnan(x) && std::isnan(y)) continue;
      if (!exact) {
        double tol = d.scalar_type == ScalarType::Float64 ? 1e-12 : d.scalar_type == ScalarType::Float32 ? 2e-5
                   : d.scalar_type == ScalarType::Float16 ? 2e-3 : 1.6e-2;
        if (std::fabs(x - y) <= tol * std::max(1.0, std::fabs(y)) || (std::isinf(x) && x == y)) continue;
      }
    }
    if (bad++ == 0)
      first = "element " + std::to_string(i) + ": expected " + hex_bytes(w, size) + " got " + hex_bytes(g, size) +
              (fl ? " (" + std::to_string(element(w, d)) + " vs " + std::to_string(element(g, d)) + ")" : "");
  }
  return bad ? std::to_string(bad) + " elements differ; first " + first : "";
}

// Every kernel of `outs`: the reference's result, then the interpreter's on the same inputs; each kernel runs on
// the reference's inputs (the next kernel reads the reference's outputs).
// Returns the number of kernels compared.
inline int expect_same_as_reference(const std::vector<Tensor>& outs, bool fill_unwritten_inputs = false) {
  const GpuTarget& target = gpu_target("sm_90");
  UOp linear = Tensor::schedule_linear(outs);
  int kernels = 0;
  uint64_t seed = 12345;
  std::unordered_set<const void*> written;
  for (const UOp& call : linear.src()) {
    if (call.src(0).op() != Ops::SINK) {
      run_linear(UOp::make(Ops::LINEAR, dtypes::void_, {call}), on_device("REF"));
      continue;
    }
    const UOp& sink = call.src(0);
    kernels++;
    std::string name = c_kernel_name(sink);
    GpuKernel k = prepare_gpu_kernel(sink, target);
    std::string ptx = render_ptx(name, k, target);
    PtxProgram prog;
    try {
      prog = mockgpu::nv::parse_ptx(ptx);
    } catch (const std::exception& e) {
      ADD_FAILURE() << name << ": " << e.what() << "\n" << ptx;
      return kernels;
    }
    // transcendentals are decomposed into float32 polynomials on the GPU, the reference calls libm; and the GPU
    // optimizer may split a float reduction across threads (another summation order) unless NOOPT=1
    bool kernel_exact = true;
    for (const UOp& u : sink.toposort()) {
      if (u.op() == Ops::EXP2 || u.op() == Ops::LOG2 || u.op() == Ops::SIN || u.op() == Ops::POW) kernel_exact = false;
      if (u.op() == Ops::REDUCE && u.dtype().is_float() && !noopt_enabled()) kernel_exact = false;
    }
    std::vector<bool> stored(call.src().size() - 1, false), loaded(call.src().size() - 1, false);
    std::vector<DType> dts(call.src().size() - 1, dtypes::uint8);
    for (const UOp& u : sink.toposort())
      if (u.op() == Ops::STORE || u.op() == Ops::LOAD) {
        const UOp& param = u.src(0).src(0);
        if (param.op() != Ops::PARAM) continue;
        size_t slot = static_cast<size_t>(param.arg_as<ParamArg>().slot);
        (u.op() == Ops::STORE ? stored : loaded).at(slot) = true;
        if (u.op() == Ops::STORE) dts[slot] = param.dtype();
      }
    if (fill_unwritten_inputs)
      for (size_t i = 1; i < call.src().size(); i++) {
        std::span<std::byte> b = buffer_bytes(call.src(i));
        if (stored[i - 1]) written.insert(b.data());
        else if (written.insert(b.data()).second) fill_defined(b, call.src(i).dtype(), seed);
      }
    // the kernel's inputs before the reference runs (an in-place kernel reads what it overwrites)
    std::vector<std::vector<std::byte>> before, want;
    for (size_t i = 1; i < call.src().size(); i++) {
      std::span<std::byte> b = buffer_bytes(call.src(i));
      before.emplace_back(b.begin(), b.end());
    }
    run_linear(UOp::make(Ops::LINEAR, dtypes::void_, {call}), on_device("REF"));
    std::vector<const void*> ptrs;
    mockgpu::nv::test::HostMemory mem;
    for (size_t i = 1; i < call.src().size(); i++) {
      std::span<std::byte> b = buffer_bytes(call.src(i));
      want.emplace_back(b.begin(), b.end());
      ptrs.push_back(b.data());
      mem.add(b.data(), b.size());
      // pure outputs are poisoned so an element the kernel fails to write shows up
      if (stored[i - 1] && !loaded[i - 1]) std::memset(b.data(), 0xAB, b.size());
      else std::memcpy(b.data(), before[i - 1].data(), b.size());
    }
    std::vector<uint8_t> params = mockgpu::nv::test::pointer_params(ptrs);
    PtxDim3 grid{static_cast<uint32_t>(k.global_size[0]), static_cast<uint32_t>(k.global_size[1]), static_cast<uint32_t>(k.global_size[2])};
    PtxDim3 block{static_cast<uint32_t>(k.local_size[0]), static_cast<uint32_t>(k.local_size[1]), static_cast<uint32_t>(k.local_size[2])};
    try {
      mockgpu::nv::run_kernel(prog, name, grid, block, params, 0, mem);
    } catch (const std::exception& e) {
      ADD_FAILURE() << name << ": " << e.what() << "\n" << ptx;
    }
    for (size_t i = 0; i < ptrs.size(); i++) {
      if (!stored[i]) continue;
      std::span<std::byte> got = buffer_bytes(call.src(i + 1));
      std::string diff = compare(got.data(), want[i].data(), want[i].size(), dts[i], kernel_exact);
      EXPECT_EQ(diff, "") << "buffer " << i << " (" << dts[i].name() << ") of " << name << "\n" << (diff.empty() ? "" : ptx);
      std::memcpy(got.data(), want[i].data(), want[i].size());
    }
  }
  EXPECT_GT(kernels, 0) << "the program scheduled no kernel";
  return kernels;
}

// Runs every kernel of `outs` on the interpreter only (other CALLs, such as copies, with run_linear) and returns
// the bytes of the buffers the last kernel stores, by slot. For behaviour the reference leaves undefined.
inline std::vector<std::vector<std::byte>> run_on_interpreter_only(const std::vector<Tensor>& outs) {
  const GpuTarget& target = gpu_target("sm_90");
  UOp linear = Tensor::schedule_linear(outs);
  std::vector<std::vector<std::byte>> last;
  for (const UOp& call : linear.src()) {
    if (call.src(0).op() != Ops::SINK) {
      run_linear(UOp::make(Ops::LINEAR, dtypes::void_, {call}), on_device("REF"));
      continue;
    }
    const UOp& sink = call.src(0);
    std::string name = c_kernel_name(sink);
    GpuKernel k = prepare_gpu_kernel(sink, target);
    PtxProgram prog = mockgpu::nv::parse_ptx(render_ptx(name, k, target));
    std::vector<const void*> ptrs;
    mockgpu::nv::test::HostMemory mem;
    for (size_t i = 1; i < call.src().size(); i++) {
      std::span<std::byte> b = buffer_bytes(call.src(i));
      ptrs.push_back(b.data());
      mem.add(b.data(), b.size());
    }
    std::vector<uint8_t> params = mockgpu::nv::test::pointer_params(ptrs);
    mockgpu::nv::run_kernel(prog, name, {static_cast<uint32_t>(k.global_size[0]), static_cast<uint32_t>(k.global_size[1]), static_cast<uint32_t>(k.global_size[2])},
                            {static_cast<uint32_t>(k.local_size[0]), static_cast<uint32_t>(k.local_size[1]), static_cast<uint32_t>(k.local_size[2])},
                            params, 0, mem);
    std::vector<bool> stored(ptrs.size(), false);
    for (const UOp& u : sink.toposort())
      if (u.op() == Ops::STORE && u.src(0).src(0).op() == Ops::PARAM) stored.at(u.src(0).src(0).arg_as<ParamArg>().slot) = true;
    last.clear();
    for (size_t i = 0; i < ptrs.size(); i++)
      if (stored[i]) {
        std::span<std::byte> b = buffer_bytes(call.src(i + 1));
        last.emplace_back(b.begin(), b.end());
      }
  }
  return last;
}

}  // namespace doorbell::ptx_e2e
