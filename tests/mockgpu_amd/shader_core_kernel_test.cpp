// The emulated RDNA3 shader core (mockgpu/amd/shader_core.h) on real kernels: tensor programs lowered and rendered
// as for the AMD device (compiler/gpu/gpu_dims.h, llvmir_renderer.h), compiled for gfx1100 by LLVM 19 and linked
// (compiler/gpu/llvm/amdgpu_compiler.h), the code object loaded into mapped memory and dispatched with the kernel
// descriptor's RSRC registers and a kernarg segment of buffer pointers (8 bytes per slot, no hidden arguments:
// tests/gpucodegen/amdgpu_compile_test.cpp). Results are compared with the same arithmetic done on the host.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "tests/mockgpu_amd/shader_core_fixture.h"
#if DOORBELL_HAVE_LLVM
#include "compiler/c_renderer.h"
#include "compiler/gpu/amd_code_object.h"
#include "compiler/gpu/gpu_dims.h"
#include "compiler/gpu/gpu_target.h"
#include "compiler/gpu/amdgpu_target.h"
#include "compiler/gpu/llvmir_renderer.h"
#include "ir/exec_alu.h"
#include "tests/gpucodegen/amdgpu_corpus.h"
#endif

namespace doorbell::mockgpu::amd {
namespace {

#if DOORBELL_HAVE_LLVM
using amdgpu_test::E;

// One compiled kernel, ready to dispatch on the fixture's memory.
struct LoadedKernel {
  DispatchState state;
  int64_t slots = 0;
};

LoadedKernel load_kernel(ShaderCoreFixture& f, const UOp& sink) {
  const GpuTarget& t = gpu_target("gfx1100");
  const std::string name = c_kernel_name(sink);
  GpuKernel k = lower_for_gpu(sink, t);
  // The AMD target's compiler: LLVM 19 in process, linked by ld.lld, through the disk object cache.
  static const std::unique_ptr<Target> amd = make_amdgpu_target("gfx1100");
  CompiledBinary c = amd->compile(render_llvm_ir(name, k, t), name);
  AmdCodeObject co = read_amd_code_object(c.bytes);
  const AmdKernel& kern = co.kernel(name);
  const ElfSection* text = co.section(".text");
  if (!text) throw std::runtime_error("code object without .text");
  // The whole file at a 64 KiB-aligned VA; the entry's file offset keeps the 256-byte alignment of its address.
  std::vector<uint32_t> words((c.bytes.size() + 3) / 4 + 4, 0);
  std::memcpy(words.data(), c.bytes.data(), c.bytes.size());
  uint64_t base = f.map_words(words);
  LoadedKernel out;
  DispatchState& st = out.state;
  st.code_va = base + text->offset + (kern.entry_address - text->addr);
  st.rsrc1 = kern.kd.compute_pgm_rsrc1;
  st.rsrc2 = kern.kd.compute_pgm_rsrc2;
  st.rsrc3 = kern.kd.compute_pgm_rsrc3;
  st.lds_bytes = kern.kd.group_segment_fixed_size;
  for (int d = 0; d < 3; ++d) {
    st.workgroup_size[d] = static_cast<uint32_t>(k.local_size[d]);
    st.grid_workgroups[d] = static_cast<uint32_t>(k.global_size[d]);
  }
  for (const UOp& u : sink.toposort())
    if (u.op() == Ops::PARAM) out.slots = std::max<int64_t>(out.slots, u.arg_as<ParamArg>().slot + 1);
  return out;
}

// Maps the buffers, writes the kernarg segment (slot i's pointer at byte 8*i) into s[0:1] and runs the dispatch.
void run(ShaderCoreFixture& f, LoadedKernel& k, const std::vector<uint64_t>& buffer_vas) {
  ASSERT_EQ(static_cast<int64_t>(buffer_vas.size()), k.slots);
  std::vector<uint32_t> kernarg;
  for (uint64_t va : buffer_vas) {
    kernarg.push_back(static_cast<uint32_t>(va));
    kernarg.push_back(static_cast<uint32_t>(va >> 32));
  }
  uint64_t kernarg_va = f.map_words(kernarg);
  k.state.user_data[0] = static_cast<uint32_t>(kernarg_va);
  k.state.user_data[1] = static_cast<uint32_t>(kernarg_va >> 32);
  run_dispatch(k.state, f.memory, f.options);
}

template <typename T>
uint64_t map_vector(ShaderCoreFixture& f, const std::vector<T>& v) {
  uint64_t va = f.map_bytes(v.size() * sizeof(T));
  std::memcpy(f.memory.translate(va, v.size() * sizeof(T)), v.data(), v.size() * sizeof(T));
  return va;
}

TEST(ShaderCoreKernels, Float32MultiplyAddOverAThousandElements) {
  ShaderCoreFixture f;
  std::vector<UOp> ks = amdgpu_test::kernels_of({E({1000}) * E({1000}) + 1});
  ASSERT_EQ(ks.size(), 1u);
  LoadedKernel k = load_kernel(f, ks[0]);
  std::vector<float> a(1000), b(1000), out(1000, -1.0f);
  for (int i = 0; i < 1000; ++i) { a[i] = 0.5f * i - 100.0f; b[i] = 1.0f / (i + 1); }
  uint64_t out_va = map_vector(f, out), a_va = map_vector(f, a), b_va = map_vector(f, b);
  run(f, k, {out_va, a_va, b_va});
  f.read_back(out_va, out);
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(out[i], a[i] * b[i] + 1.0f) << "element " << i;
}

TEST(ShaderCoreKernels, AMillionElementsRunInAFractionOfASecond) {
  ShaderCoreFixture f;
  constexpr int n = 1 << 20;
  std::vector<UOp> ks = amdgpu_test::kernels_of({E({n}) * E({n}) + 1});
  ASSERT_EQ(ks.size(), 1u);
  LoadedKernel k = load_kernel(f, ks[0]);
  std::vector<float> a(n), b(n), out(n, -1.0f);
  for (int i = 0; i < n; ++i) { a[i] = static_cast<float>(i % 1000); b[i] = static_cast<float>(i % 7) * 0.25f; }
  uint64_t out_va = map_vector(f, out), a_va = map_vector(f, a), b_va = map_vector(f, b);
  auto t0 = std::chrono::steady_clock::now();
  run(f, k, {out_va, a_va, b_va});
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::printf("[ grid ] %d-element multiply-add (%u workgroups of %u) on the emulated gfx1100: %.1f ms\n", n,
              k.state.grid_workgroups[0] * k.state.grid_workgroups[1] * k.state.grid_workgroups[2], k.state.workgroup_size[0], ms);
  f.read_back(out_va, out);
  for (int i = 0; i < n; i += 997) ASSERT_EQ(out[i], a[i] * b[i] + 1.0f) << i;
}

TEST(ShaderCoreKernels, Float32DivisionAsMultiplyByTheCorrectlyRoundedReciprocal) {
  ShaderCoreFixture f;
  std::vector<UOp> ks = amdgpu_test::kernels_of({E({256}) / E({256})});
  ASSERT_EQ(ks.size(), 1u);
  LoadedKernel k = load_kernel(f, ks[0]);
  std::vector<float> a(256), b(256), out(256, -1.0f);
  for (int i = 0; i < 256; ++i) {
    a[i] = i % 7 == 0 ? 1e-40f * i : 3.0f * i - 300.0f;  // subnormal numerators take div_scale's scaling path
    b[i] = i % 5 == 0 ? 0.0f : (i % 3 == 0 ? 1e30f : 7.0f - i);
  }
  uint64_t out_va = map_vector(f, out), a_va = map_vector(f, a), b_va = map_vector(f, b);
  run(f, k, {out_va, a_va, b_va});
  f.read_back(out_va, out);
  for (int i = 0; i < 256; ++i) {
    // The renderer divides as x * (1 / y) (the IEEE reciprocal through v_div_scale/v_rcp/v_div_fmas/v_div_fixup,
    // then one multiply), so that is what the host computes.
    float want = a[i] * (1.0f / b[i]);
    if (std::isnan(want)) EXPECT_TRUE(std::isnan(out[i])) << i;
    else EXPECT_EQ(out[i], want) << "element " << i << ": " << a[i] << " / " << b[i];
  }
}

TEST(ShaderCoreKernels, Float32RowSumReduction) {
  ShaderCoreFixture f;
  std::vector<UOp> ks = amdgpu_test::kernels_of({E({300, 4}).sum(1)});
  ASSERT_EQ(ks.size(), 1u);
  LoadedKernel k = load_kernel(f, ks[0]);
  std::vector<float> a(1200), out(300, -1.0f);
  for (int i = 0; i < 1200; ++i) a[i] = static_cast<float>((i * 37) % 101) - 50.0f;
  uint64_t out_va = map_vector(f, out), a_va = map_vector(f, a);
  run(f, k, {out_va, a_va});
  f.read_back(out_va, out);
  for (int r = 0; r < 300; ++r) EXPECT_EQ(out[r], a[4 * r] + a[4 * r + 1] + a[4 * r + 2] + a[4 * r + 3]) << "row " << r;
}

TEST(ShaderCoreKernels, Float32MatmulWithExactIntegerValues) {
  ShaderCoreFixture f;
  std::vector<UOp> ks = amdgpu_test::kernels_of({E({17, 33}).matmul(E({33, 9}))});
  ASSERT_EQ(ks.size(), 1u);
  LoadedKernel k = load_kernel(f, ks[0]);
  std::vector<float> a(17 * 33), b(33 * 9), out(17 * 9, -1.0f);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(static_cast<int>(i % 11) - 5);
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(static_cast<int>(i % 7) - 3);
  uint64_t out_va = map_vector(f, out), a_va = map_vector(f, a), b_va = map_vector(f, b);
  auto t0 = std::chrono::steady_clock::now();
  run(f, k, {out_va, a_va, b_va});
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::printf("[ matmul ] 17x33 @ 33x9 on the emulated gfx1100: %.2f ms\n", ms);
  f.read_back(out_va, out);
  for (int i = 0; i < 17; ++i)
    for (int j = 0; j < 9; ++j) {
      float s = 0;
      for (int kk = 0; kk < 33; ++kk) s += a[i * 33 + kk] * b[kk * 9 + j];
      EXPECT_EQ(out[i * 9 + j], s) << i << "," << j;
    }
}

TEST(ShaderCoreKernels, Int32FloorDivisionRoundsTowardMinusInfinity) {
  ShaderCoreFixture f;
  Tensor a = E({64}, dtypes::int32), b = E({64}, dtypes::int32);
  std::vector<UOp> ks = amdgpu_test::kernels_of({a.floordiv(b)});
  ASSERT_EQ(ks.size(), 1u);
  LoadedKernel k = load_kernel(f, ks[0]);
  std::vector<int32_t> av(64), bv(64), out(64, 12345);
  for (int i = 0; i < 64; ++i) { av[i] = i * 977 - 31000; bv[i] = (i % 2 ? 1 : -1) * (i % 13 + 1); }
  uint64_t out_va = map_vector(f, out), a_va = map_vector(f, av), b_va = map_vector(f, bv);
  run(f, k, {out_va, a_va, b_va});
  f.read_back(out_va, out);
  for (int i = 0; i < 64; ++i) {
    int32_t q = av[i] / bv[i];
    if ((av[i] % bv[i] != 0) && ((av[i] < 0) != (bv[i] < 0))) --q;  // floor
    EXPECT_EQ(out[i], q) << i << ": " << av[i] << " // " << bv[i] << " rounds toward -inf (frontend/tensor.h)";
  }
}
// One elementwise kernel of `out = fn(a, b)` over n elements of dtype In -> Out, run and returned.
template <typename Out, typename In>
std::vector<Out> run_binary(const Tensor& expr, const std::vector<In>& a, const std::vector<In>& b) {
  ShaderCoreFixture f;
  std::vector<UOp> ks = amdgpu_test::kernels_of({expr});
  EXPECT_EQ(ks.size(), 1u);
  LoadedKernel k = load_kernel(f, ks[0]);
  std::vector<Out> out(a.size());
  uint64_t out_va = map_vector(f, out), a_va = map_vector(f, a);
  if (k.slots == 3) run(f, k, {out_va, a_va, map_vector(f, b)});
  else run(f, k, {out_va, a_va});
  f.read_back(out_va, out);
  return out;
}

TEST(ShaderCoreKernels, Float16MultiplyAddMatchesTheHostInHalfPrecision) {
  Tensor a = E({96}, dtypes::float16), b = E({96}, dtypes::float16);
  std::vector<uint16_t> av(96), bv(96);
  for (int i = 0; i < 96; ++i) {
    av[i] = float_to_half_bits(0.37f * i - 11.0f);
    bv[i] = float_to_half_bits(i % 9 == 0 ? 6.1e-5f : 1.0f / (i + 3));  // includes a subnormal half
  }
  std::vector<uint16_t> out = run_binary<uint16_t>(a * b + a, av, bv);
  for (int i = 0; i < 96; ++i) {
    float x = half_bits_to_float(av[i]), y = half_bits_to_float(bv[i]);
    uint16_t prod = float_to_half_bits(x * y);
    uint16_t want = float_to_half_bits(half_bits_to_float(prod) + x);
    uint16_t fused = float_to_half_bits(static_cast<float>(static_cast<double>(x) * y + x));
    EXPECT_TRUE(out[i] == want || out[i] == fused) << i << ": got 0x" << std::hex << out[i] << " want 0x" << want;
  }
}

TEST(ShaderCoreKernels, Float64MultiplyAddAndSqrtAreIeee) {
  Tensor a = E({80}, dtypes::float64), b = E({80}, dtypes::float64);
  std::vector<double> av(80), bv(80);
  for (int i = 0; i < 80; ++i) { av[i] = 1.0 / 3.0 * i + 1e-300; bv[i] = std::sqrt(2.0) * (i - 40); }
  std::vector<double> out = run_binary<double>(a * b + a.sqrt(), av, bv);
  for (int i = 0; i < 80; ++i) {
    double fused = std::fma(av[i], bv[i], std::sqrt(av[i])), plain = av[i] * bv[i] + std::sqrt(av[i]);
    EXPECT_TRUE(out[i] == fused || out[i] == plain) << i << ": " << out[i] << " vs " << plain;
  }
}

TEST(ShaderCoreKernels, Int64MultiplyAddWrapsLikeTheHost) {
  Tensor a = E({70}, dtypes::int64), b = E({70}, dtypes::int64);
  std::vector<int64_t> av(70), bv(70);
  for (int i = 0; i < 70; ++i) { av[i] = (int64_t{i} - 35) * 0x123456789LL; bv[i] = (int64_t{i} * 7919) ^ 0x5555555555LL; }
  std::vector<int64_t> out = run_binary<int64_t>(a * b + a, av, bv);
  for (int i = 0; i < 70; ++i) {
    int64_t want = static_cast<int64_t>(static_cast<uint64_t>(av[i]) * static_cast<uint64_t>(bv[i]) + static_cast<uint64_t>(av[i]));
    EXPECT_EQ(out[i], want) << i;
  }
}

TEST(ShaderCoreKernels, CastsFloat32ToInt8AndUint8ToFloat32) {
  std::vector<float> fv(64);
  for (int i = 0; i < 64; ++i) fv[i] = (i - 32) * 3.7f;
  std::vector<int8_t> out8 = run_binary<int8_t>(E({64}).cast(dtypes::int8), fv, fv);
  for (int i = 0; i < 64; ++i) EXPECT_EQ(out8[i], static_cast<int8_t>(float_to_int(dtypes::int8, fv[i]))) << i << ": " << fv[i];
  std::vector<uint8_t> uv(64);
  for (int i = 0; i < 64; ++i) uv[i] = static_cast<uint8_t>(i * 4 + 3);
  std::vector<float> outf = run_binary<float>(E({64}, dtypes::uint8).cast(dtypes::float32), uv, uv);
  for (int i = 0; i < 64; ++i) EXPECT_EQ(outf[i], static_cast<float>(uv[i])) << i;
}

TEST(ShaderCoreKernels, Float32TranscendentalsMatchTheHostWithinFewUlps) {
  std::vector<float> xv(128);
  for (int i = 0; i < 128; ++i) xv[i] = (i - 64) * 0.173f;
  auto ulps = [](float got, double want) {
    float w = static_cast<float>(want);
    return std::fabs(got - w) / std::max(std::fabs(std::nextafter(w, INFINITY) - w), 1e-45f);
  };
  std::vector<float> e = run_binary<float>(E({128}).exp2(), xv, xv);
  std::vector<float> s = run_binary<float>(E({128}).sin(), xv, xv);
  std::vector<float> l = run_binary<float>((E({128}) + 12.0f).log2(), xv, xv);
  for (int i = 0; i < 128; ++i) {
    EXPECT_LE(ulps(e[i], std::exp2(static_cast<double>(xv[i]))), 2.0f) << "exp2 " << xv[i] << " = " << e[i];
    EXPECT_LE(std::fabs(s[i] - std::sin(static_cast<double>(xv[i]))), 2e-6) << "sin " << xv[i] << " = " << s[i];
    EXPECT_LE(ulps(l[i], std::log2(static_cast<double>(xv[i] + 12.0f))), 2.0f) << "log2 " << xv[i] + 12.0f << " = " << l[i];
  }
}
#endif

uint64_t map_floats(ShaderCoreFixture& f, const std::vector<float>& v) {
  uint64_t va = f.map_bytes(v.size() * 4);
  std::memcpy(f.memory.translate(va, v.size() * 4), v.data(), v.size() * 4);
  return va;
}

// Speed of the per-instruction path: a loop of 5 instructions (3 VALU, 2 SALU + branch) run 200000 times by one wave.
TEST(ShaderCoreSpeed, LoopRateIsReported) {
  const std::vector<uint32_t> program = {
      0xbe8200ff, 0x00030d40,  // s_mov_b32 s2, 0x30d40
      0x7e020280,              // v_mov_b32_e32 v1, 0
      0x060202f2,              // loop: v_add_f32_e32 v1, 1.0, v1
      0x10040301,              // v_mul_f32_e32 v2, v1, v1
      0x3a060302,              // v_xor_b32_e32 v3, v2, v1
      0x80828102,              // s_sub_u32 s2, s2, 1
      0xbf078002,              // s_cmp_lg_u32 s2, 0
      0xbfa2fffa,              // s_cbranch_scc1 loop
      0x7e000280,              // v_mov_b32_e32 v0, 0
      0xdc6a0000, 0x00000100,  // global_store_b32 v0, v1, s[0:1]
      0xbfb00000,              // s_endpgm
  };
  ShaderCoreFixture f;
  std::vector<float> out(32, 0.0f);
  uint64_t out_va = map_floats(f, out);
  DispatchState st = f.state(program, 2u << 1, out_va);
  st.workgroup_size = {32, 1, 1};
  auto t0 = std::chrono::steady_clock::now();
  run_dispatch(st, f.memory, f.options);
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double instructions = 6 + 6.0 * 200000;
  std::printf("[ speed ] %.0f wave instructions in %.3f s: %.2f M wave-instructions/s (32 lanes each)\n", instructions, s,
              instructions / s / 1e6);
  f.read_back(out_va, out);
  EXPECT_EQ(out[0], 200000.0f) << "every lane stores its v1 to offset 0";
}

}  // namespace
}  // namespace doorbell::mockgpu::amd
