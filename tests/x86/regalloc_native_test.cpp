// Allocated functions printed (print_listing), assembled (assemble), wrapped in an ELF object (write_elf_object),
// loaded (compiler/cpu/elf_loader.h) and run on this CPU: the registers libm really clobbers, the real stack
// alignment at calls, and the callee-saved registers the caller (this test) relies on. Each result is compared with
// the interpreter's run of the function before allocation (tests/x86/mf_interpreter.h) and with the value the test
// derives.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "compiler/cpu/elf_loader.h"
#include "compiler/x86/regalloc.h"
#include "compiler/x86/x86_encoder.h"
#include "tests/x86/mf_builder.h"
#include "tests/x86/mf_interpreter.h"

namespace doorbell::x86 {
namespace {

using namespace doorbell::x86::testing;
using KernelFn = void (*)(void* const*, const int64_t*, int32_t, int32_t);

// Allocates, prints, assembles, loads and runs mf with the buffers; checks the result against the interpreter's
// run before allocation and returns the buffers.
std::vector<Bytes> run_native(const MachineFunction& fn, std::vector<Bytes> buffers, const AllocationOptions& options,
                              int32_t core_id = 0, int32_t core_count = 1) {
  MfInterpreter interpreter;
  std::vector<Bytes> expected = interpreter.run(fn, buffers, 0, core_id, core_count);
  MachineFunction mf = fn;
  allocate_registers(mf, options);
  const std::string listing = print_listing(mf);
  const auto object = LoadedObject::load(write_elf_object(assemble(listing)));
  auto kernel = reinterpret_cast<KernelFn>(object->symbol(mf.name));
  std::vector<void*> pointers;
  for (Bytes& b : buffers) pointers.push_back(b.data());
  const int64_t vars[1] = {0};
  kernel(pointers.data(), vars, core_id, core_count);
  EXPECT_EQ(buffers, expected) << listing;
  return buffers;
}

TEST(RegallocNative, FortyLiveGprValuesUnderPressure) {
  std::vector<int64_t> in;
  int64_t expected = 0;
  for (int i = 0; i < 40; i++) in.push_back(1000 + 37 * i), expected += 1000 + 37 * i + i;
  for (uint32_t max_gpr : {0u, 3u}) {
    AllocationOptions options;
    options.max_gpr = max_gpr;
    std::vector<Bytes> out = run_native(forty_gprs(), {Bytes(8), int64s(in)}, options);
    EXPECT_EQ(int64_at(out[0], 0), expected);
  }
}

// 40 vectors live at once, summed lane by lane: ymm with 16 registers, zmm with 32 where the CPU has AVX-512.
TEST(RegallocNative, FortyLiveVectorsUnderPressure) {
  for (uint16_t bits : {256, 512}) {
    if (bits == 256 && !__builtin_cpu_supports("avx2")) GTEST_SKIP() << "no AVX2 on this CPU";
    if (bits == 512 && !(__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl"))) continue;
    const int lanes = bits / 32;
    Fn f;
    std::vector<Reg> v;
    for (int i = 0; i < 40; i++) {
      v.push_back(f.v(bits));
      f.e(Mn::vmovups, {R(v.back()), M(f.in, bits / 8 * i, bits)});
    }
    Reg s = f.v(bits);
    f.e(Mn::vaddps, {R(s), R(v[0]), R(v[1])});
    for (int i = 2; i < 40; i++) f.e(Mn::vaddps, {R(s), R(s), R(v[i])});
    f.e(Mn::vmovups, {M(f.out, 0, bits), R(s)});
    f.e(Mn::vzeroupper, {});
    f.e(Mn::ret, {});
    Bytes in(40 * bits / 8);
    for (int i = 0; i < 40 * lanes; i++) {
      float x = 0.125f * static_cast<float>(i % 13);
      std::memcpy(&in[4 * i], &x, 4);
    }
    AllocationOptions options;
    options.vec_registers = bits == 512 ? 32 : 16;
    std::vector<Bytes> out = run_native(f.mf, {Bytes(bits / 8), in}, options);
    for (int l = 0; l < lanes; l++) {
      float acc = float_at(in, l) + float_at(in, lanes + l);
      for (int i = 2; i < 40; i++) acc += float_at(in, i * lanes + l);
      EXPECT_EQ(float_at(out[0], l), acc) << bits << " bits, lane " << l;
    }
  }
}

// A loop calling libm: acc += pow(y, x); x += 1 (a pool constant, rematerialized) for i < core_count * 3, with GPR
// values live across the calls (callee-saved registers or slots) and core_id read from its ARG slot.
TEST(RegallocNative, LoopWithLibmCallsKeepsValuesAcrossCalls) {
  Fn f;
  f.mf.externs = {"pow", "exp2"};
  f.mf.constants.push_back({f.mf.new_label(), 8, std::string(8, '\0')});
  const double one = 1;
  std::memcpy(f.mf.constants[0].bytes.data(), &one, 8);
  Mem pool;
  pool.kind = MemBase::RIP;
  pool.has_base = false;
  pool.label = f.mf.constants[0].label;
  pool.bits = 64;
  Reg x = f.v(128), y = f.v(128), acc = f.v(128), c1 = f.v(128), t = f.v(128), e = f.v(128);
  Reg i = f.g(), n = f.g(), core = f.g(32), g1 = f.g(), g2 = f.g();
  f.e(Mn::vmovsd, {R(x), M(f.in, 0, 64)});
  f.e(Mn::vmovsd, {R(y), M(f.in, 8, 64)});
  f.e(Mn::vmovsd, {R(acc), M(f.in, 16, 64)});
  f.e(Mn::mov, {R(g1), M(f.in, 24, 64)});
  f.e(Mn::mov, {R(g2), M(f.in, 32, 64)});
  f.e(Mn::mov, {R(core), Slot(MemBase::ARG, 2, 32)});
  f.e(Mn::mov, {R(n), Slot(MemBase::ARG, 3, 64)});
  f.e(Mn::imul, {R(n), R(n), I(3)});
  f.e(Mn::mov, {R(i), I(0)});
  int32_t top = f.label();
  f.place(top);
  f.e(Mn::CALL_EXTERN, {op_symbol(0), R(t), R(y), R(x)});
  f.e(Mn::vaddsd, {R(acc), R(acc), R(t)});
  f.e(Mn::vmovsd, {R(c1), op_mem(pool)}).remat = true;
  f.e(Mn::vaddsd, {R(x), R(x), R(c1)});
  f.tied(Mn::add, {R(g1), R(g1), R(g2)});
  f.tied(Mn::add, {R(i), R(i), I(1)});
  f.e(Mn::cmp, {R(i), R(n)});
  f.jump(Mn::jl, top);
  f.e(Mn::CALL_EXTERN, {op_symbol(1), R(e), R(x)});
  f.e(Mn::vaddsd, {R(acc), R(acc), R(e)});
  f.e(Mn::vmovsd, {M(f.out, 0, 64), R(acc)});
  f.e(Mn::mov, {M(f.out, 8, 64), R(g1)});
  f.e(Mn::mov, {M(f.out, 16, 32), R(core)});
  f.e(Mn::mov, {M(f.out, 24, 64), R(i)});
  f.e(Mn::ret, {});
  Bytes in(40);
  const double dx = 0.5, dy = 3, dacc = 0.25;
  const int64_t gs[2] = {7, 11};
  std::memcpy(&in[0], &dx, 8), std::memcpy(&in[8], &dy, 8), std::memcpy(&in[16], &dacc, 8), std::memcpy(&in[24], gs, 16);
  // Core 5 of 2 runs 2 * 3 iterations.
  double expected = dacc, xx = dx;
  for (int k = 0; k < 6; k++) expected += std::pow(dy, xx), xx += 1;
  expected += std::exp2(xx);
  for (uint32_t max_gpr : {0u, 3u}) {
    AllocationOptions options;
    options.max_gpr = max_gpr;
    std::vector<Bytes> out = run_native(f.mf, {Bytes(32), in}, options, 5, 2);
    EXPECT_EQ(double_at(out[0], 0), expected) << "max_gpr " << max_gpr;
    EXPECT_EQ(int64_at(out[0], 1), 7 + 6 * 11);
    int32_t core_out;
    std::memcpy(&core_out, &out[0][16], 4);
    EXPECT_EQ(core_out, 5);
    EXPECT_EQ(int64_at(out[0], 3), 6);
  }
}

}  // namespace
}  // namespace doorbell::x86
