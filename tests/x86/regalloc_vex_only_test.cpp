// Instructions that have only a VEX encoding (vcmpss into an xmm, vblendvps, ...) can name vector registers 0-15
// only: with 32 registers (AVX-512) the allocator keeps their values below 16 and reloads them into xmm14/xmm15
// (compiler/x86/regalloc.h). Found by the fusion corpus on CPU:X86: a relu's compare landed in xmm26 and the encoder
// refused it.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "compiler/cpu/elf_loader.h"
#include "compiler/x86/regalloc.h"
#include "compiler/x86/x86_encoder.h"
#include "tests/x86/mf_builder.h"

namespace doorbell::x86 {
namespace {

using namespace doorbell::x86::testing;
using KernelFn = void (*)(void* const*, const int64_t*, int32_t, int32_t);

TEST(RegallocVexOnly, ComparesUnderPressureWithThirtyTwoRegistersStayBelowSixteen) {
  if (!(__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl")))
    GTEST_SKIP() << "no AVX-512 on this CPU: registers 16-31 do not exist";
  for (uint32_t max_vec : {0u, 6u}) {  // all 30 allocatable registers, and few enough to spill
    Fn f;
    constexpr int kValues = 28;
    std::vector<Reg> a;
    for (int i = 0; i < kValues; i++) {
      a.push_back(f.v(128));
      f.e(Mn::vmovss, {R(a.back()), M(f.in, 4 * i, 32)});
    }
    std::vector<Reg> m;
    for (int i = 0; i + 1 < kValues; i++) {  // every value still live: the compares compete for 0-13
      m.push_back(f.v(128));
      f.e(Mn::vcmpss, {R(m.back()), R(a[i]), R(a[i + 1]), I(1)});  // LT_OS
    }
    for (int i = 0; i + 1 < kValues; i++) f.e(Mn::vmovss, {M(f.out, 4 * i, 32), R(m[i])});
    f.e(Mn::ret, {});
    AllocationOptions options;
    options.vec_registers = 32;
    options.max_vec = max_vec;
    MachineFunction mf = f.mf;
    AllocationStats stats = allocate_registers(mf, options);
    int low = 0;
    for (const IntervalAssignment& as : stats.assignments)
      if (as.interval.cls == RegClass::VEC && as.interval.low16) {
        low++;
        if (as.where == IntervalAssignment::Where::REG) {
          EXPECT_LT(as.reg, 16u) << "%v" << as.interval.vreg;
        }
      }
    EXPECT_EQ(low, 2 * kValues - 1);  // every value and every mask is named by a vcmpss
    const std::string listing = print_listing(mf);
    const auto object = LoadedObject::load(write_elf_object(assemble(listing)));  // throws on xmm16-31 in a vcmpss
    std::vector<float> in(kValues);
    for (int i = 0; i < kValues; i++) in[i] = static_cast<float>((i * 7) % 5) - 2.0f;
    std::vector<uint32_t> out(kValues, 0x5a5a5a5a);
    void* bufs[2] = {out.data(), in.data()};
    const int64_t vars[1] = {0};
    reinterpret_cast<KernelFn>(object->symbol(mf.name))(bufs, vars, 0, 1);
    for (int i = 0; i + 1 < kValues; i++)
      EXPECT_EQ(out[i], in[i] < in[i + 1] ? 0xffffffffu : 0u) << "value " << i << " with max_vec " << max_vec << "\n" << listing;
  }
}

}  // namespace
}  // namespace doorbell::x86
