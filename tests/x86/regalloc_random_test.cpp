// Random machine functions (straight code, nested loops, forward branches, accumulators, rematerializable
// constants, calls, vectors, write masks) run by the interpreter (tests/x86/mf_interpreter.h) before allocation and,
// after allocation under several register budgets, by the interpreter and natively (printed, assembled, loaded with
// compiler/cpu/elf_loader.h, calling libm): every run must write the same buffers, with the allocation's invariants
// kept. Seeds are fixed, so a failure names a reproducible function.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "compiler/cpu/elf_loader.h"
#include "compiler/x86/regalloc.h"
#include "compiler/x86/x86_encoder.h"
#include "tests/x86/mf_builder.h"
#include "tests/x86/mf_interpreter.h"
#include "tests/x86/regalloc_checks.h"

namespace doorbell::x86 {
namespace {

using namespace doorbell::x86::testing;

constexpr int32_t kOutValues = 1536;
constexpr size_t kOutBytes = 2048;

class Generator {
 public:
  // Externs: two of two arguments, then one of one (the interpreter knows them all; libm has pow, fmax, exp2).
  Generator(uint32_t seed, std::vector<std::string> externs) : rng_(seed) {
    f_.mf.externs = std::move(externs);
    out_ = f_.out;
    in_ = f_.in;
    gprs_ = {};
  }

  MachineFunction make() {
    for (int i = 0; i < 3; i++) new_load();
    block(8 + rnd(25));
    // Every value still available is stored: out[8 k] for GPRs, then doubles, then ymm values.
    // (At most kOutValues bytes: statement 12 stores at 1600-1663.)
    int32_t at = 0;
    for (Reg g : gprs_)
      if (at + 8 <= kOutValues) f_.e(Mn::mov, {M(out_, at, 64), R(g)}), at += 8;
    for (Reg v : doubles_)
      if (at + 8 <= kOutValues) f_.e(Mn::vmovsd, {M(out_, at, 64), R(v)}), at += 8;
    for (Reg v : ymms_)
      if (at + 32 <= kOutValues) f_.e(Mn::vmovups, {M(out_, at, 256), R(v)}), at += 32;
    f_.e(Mn::ret, {});
    return f_.mf;
  }

 private:
  std::mt19937 rng_;
  Fn f_;
  Reg out_, in_;
  std::vector<Reg> gprs_, doubles_, ymms_;
  int depth_ = 0;

  int rnd(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }
  Reg pick(const std::vector<Reg>& v) { return v[rnd(static_cast<int>(v.size()))]; }

  void new_load() {
    Reg g = f_.g();
    f_.e(Mn::mov, {R(g), M(in_, 8 * rnd(32), 64)});
    gprs_.push_back(g);
  }

  void block(int n) {
    for (int i = 0; i < n; i++) statement();
  }

  void statement() {
    switch (rnd(19)) {
      case 0: {  // a constant, usually rematerializable
        Reg g = f_.g();
        f_.e(Mn::mov, {R(g), I(rnd(1000) - 500)}).remat = rnd(4) != 0;
        gprs_.push_back(g);
        break;
      }
      case 1: new_load(); break;
      case 2: {  // d = a op b (tied), b a register or an immediate
        static constexpr Mn kOps[] = {Mn::add, Mn::sub, Mn::imul, Mn::and_, Mn::or_, Mn::xor_};
        Reg d = f_.g(), a = pick(gprs_);
        Operand b = rnd(3) ? R(pick(gprs_)) : I(rnd(100));
        f_.tied(kOps[rnd(6)], {R(d), R(a), b});
        gprs_.push_back(d);
        break;
      }
      case 3: {  // an accumulator: x = x op y (x may be defined outside the current loop)
        Reg x = pick(gprs_), y = pick(gprs_);
        f_.tied(rnd(2) ? Mn::add : Mn::sub, {R(x), R(x), R(y)});
        break;
      }
      case 4: {  // lea d, [a + 4*b + disp]
        Reg d = f_.g();
        f_.e(Mn::lea, {R(d), MI(pick(gprs_), pick(gprs_), 4, rnd(64), 0)});
        gprs_.push_back(d);
        break;
      }
      case 5: {  // d = b - d: the destination also the second source
        Reg d = pick(gprs_), a = pick(gprs_);
        f_.tied(Mn::sub, {R(d), R(a), R(d)});
        break;
      }
      case 6: {  // a loop of 2-3 iterations; what its body defines stays available after it (it ran once at least)
        if (depth_ >= 2) return statement();
        Reg i = f_.g();  // available only after the loop: the body must not change the count
        f_.e(Mn::mov, {R(i), I(0)});
        int32_t top = f_.label();
        f_.place(top);
        depth_++;
        block(2 + rnd(5));
        depth_--;
        f_.tied(Mn::add, {R(i), R(i), I(1)});
        f_.e(Mn::cmp, {R(i), I(2 + rnd(2))});
        f_.jump(Mn::jl, top);
        gprs_.push_back(i);
        break;
      }
      case 7: {  // a forward branch around a block; what it defines is not available after it
        if (depth_ >= 3) return statement();
        static constexpr Mn kJumps[] = {Mn::jl, Mn::jge, Mn::je, Mn::jne, Mn::jb, Mn::ja};
        f_.e(Mn::cmp, {R(pick(gprs_)), I(rnd(200) - 100)});
        int32_t skip = f_.label();
        f_.jump(kJumps[rnd(6)], skip);
        auto g = gprs_, d = doubles_, y = ymms_;
        depth_++;
        block(1 + rnd(4));
        depth_--;
        gprs_ = g, doubles_ = d, ymms_ = y;
        f_.place(skip);
        break;
      }
      case 8: {  // a double loaded, or a sum of two
        Reg v = f_.v(128);
        if (doubles_.size() < 2 || rnd(2)) f_.e(Mn::vmovsd, {R(v), M(in_, 256 + 8 * rnd(16), 64)});
        else f_.e(Mn::vaddsd, {R(v), R(pick(doubles_)), R(pick(doubles_))});
        doubles_.push_back(v);
        break;
      }
      case 9: {  // a call: one or two doubles in, one out
        if (doubles_.empty()) return statement();
        Reg r = f_.v(128);
        int sym = rnd(3);
        if (sym == 2) f_.e(Mn::CALL_EXTERN, {op_symbol(2), R(r), R(pick(doubles_))});
        else f_.e(Mn::CALL_EXTERN, {op_symbol(sym), R(r), R(pick(doubles_)), R(pick(doubles_))});
        doubles_.push_back(r);
        break;
      }
      case 10: {  // ymm: a load or a sum
        Reg v = f_.v(256);
        if (ymms_.size() < 2 || rnd(2)) f_.e(Mn::vmovups, {R(v), M(in_, 512 + 32 * rnd(8), 256)});
        else f_.e(Mn::vaddps, {R(v), R(pick(ymms_)), R(pick(ymms_))});
        ymms_.push_back(v);
        break;
      }
      case 11: {  // write masks: several live at once, used by masked adds, read back into a GPR
        if (ymms_.size() < 2) return statement();
        std::vector<Reg> ks;
        for (int i = 0, n = 1 + rnd(7); i < n; i++) {
          Reg g = f_.g(32), k = f_.k();
          f_.e(Mn::mov, {R(g), I(rnd(256))});
          f_.e(Mn::kmovw, {R(k), R(g)});
          ks.push_back(k);
        }
        Reg acc = f_.v(256);
        f_.e(Mn::vaddps, {R(acc), R(pick(ymms_)), R(pick(ymms_))});
        Reg sum = f_.g(32);
        f_.e(Mn::mov, {R(sum), I(0)});
        for (Reg k : ks) {
          Inst& add = f_.e(Mn::vaddps, {R(acc), R(acc), R(pick(ymms_))});
          add.masked = true;
          add.mask = k;
          add.zeroing = rnd(2);
          Reg g = f_.g(32);
          f_.e(Mn::kmovw, {R(g), R(k)});
          f_.tied(Mn::add, {R(sum), R(sum), R(g)});
        }
        ymms_.push_back(acc);
        gprs_.push_back(with_bits(sum, 64));
        break;
      }
      case 12: f_.e(Mn::mov, {M(out_, 8 * (200 + rnd(8)), 64), R(pick(gprs_))}); break;
      case 13: {  // a compare's flag as 0/1: setcc writes 8 bits (keeping the rest), movzx reads them
        static constexpr Mn kSets[] = {Mn::setl, Mn::setge, Mn::sete, Mn::setne, Mn::setb, Mn::seta};
        Reg flag = f_.g(8), d = f_.g(32);
        f_.e(Mn::cmp, {R(pick(gprs_)), R(pick(gprs_))});
        f_.e(kSets[rnd(6)], {R(flag)});
        f_.e(Mn::movzx, {R(d), R(flag)});
        gprs_.push_back(with_bits(d, 64));
        break;
      }
      case 14: {  // d = a < b ? y : x (tied cmov)
        Reg d = f_.g(), a = pick(gprs_), b = pick(gprs_);
        f_.e(Mn::cmp, {R(a), R(b)});
        f_.tied(rnd(2) ? Mn::cmovl : Mn::cmovae, {R(d), R(pick(gprs_)), R(pick(gprs_))});
        gprs_.push_back(d);
        break;
      }
      case 15: {  // shifts by cl (rcx, physical) and by an immediate
        static constexpr Mn kShifts[] = {Mn::shl, Mn::shr, Mn::sar};
        Reg d = f_.g();
        if (rnd(2)) {
          f_.e(Mn::mov, {R(gpr(RCX, 32)), R(with_bits(pick(gprs_), 32))});
          f_.tied(kShifts[rnd(3)], {R(d), R(pick(gprs_)), R(gpr(RCX, 8))});
        } else {
          f_.tied(kShifts[rnd(3)], {R(d), R(pick(gprs_)), I(rnd(64))});
        }
        gprs_.push_back(d);
        break;
      }
      case 16: {  // signed division through rax and rdx (physical): a / (b | 1 & 255 + 1) or the remainder
        Reg b = f_.g(), d = f_.g();
        f_.tied(Mn::and_, {R(b), R(pick(gprs_)), I(255)});
        f_.tied(Mn::add, {R(b), R(b), I(1)});
        f_.e(Mn::mov, {R(gpr(RAX)), R(pick(gprs_))});
        f_.e(Mn::cqo, {});
        f_.e(Mn::idiv, {R(b)});
        f_.e(Mn::mov, {R(d), R(gpr(rnd(2) ? RAX : RDX))});
        gprs_.push_back(d);
        break;
      }
      case 17: {  // ymm: d = a * b + addend (tied FMA, b maybe memory), or a sum with a memory operand
        if (ymms_.size() < 2) return statement();
        Reg d = f_.v(256);
        Operand b = rnd(2) ? R(pick(ymms_)) : M(in_, 512 + 32 * rnd(8), 256);
        if (rnd(2)) f_.tied(Mn::vfmadd231ps, {R(d), R(pick(ymms_)), R(pick(ymms_)), b});
        else f_.e(Mn::vaddps, {R(d), R(pick(ymms_)), b});
        ymms_.push_back(d);
        break;
      }
      default: {  // a value copied (a move the allocator must keep apart from its source's later redefinitions)
        Reg d = f_.g();
        f_.e(Mn::mov, {R(d), R(pick(gprs_))});
        gprs_.push_back(d);
        break;
      }
    }
  }
};

Bytes random_input() {
  Bytes in(1024);
  for (int i = 0; i < 32; i++) {
    int64_t v = (i * 7919) % 211 - 100;
    std::memcpy(&in[8 * i], &v, 8);
  }
  for (int i = 0; i < 16; i++) {
    double d = 0.5 * i - 3.25;
    std::memcpy(&in[256 + 8 * i], &d, 8);
  }
  for (int i = 0; i < 64; i++) {
    float x = 0.25f * static_cast<float>(i % 9) - 1;
    std::memcpy(&in[512 + 4 * i], &x, 4);
  }
  return in;
}

struct Budget {
  uint32_t vec_registers, max_gpr, max_vec;
};
constexpr Budget kBudgets[] = {{16, 0, 0}, {32, 0, 0}, {16, 3, 2}, {32, 4, 3}, {16, 6, 0}};

AllocationOptions options_of(const Budget& b) {
  AllocationOptions options;
  options.vec_registers = b.vec_registers, options.max_gpr = b.max_gpr, options.max_vec = b.max_vec;
  return options;
}

TEST(RegallocRandom, RandomFunctionsComputeTheSameBeforeAndAfterAllocation) {
  const Bytes in = random_input();
  int functions = 0, spilled = 0, remats = 0, borrowed = 0;
  for (uint32_t seed = 1; seed <= 300; seed++) {
    MachineFunction mf = Generator(seed, {"twice_plus", "minus", "halve"}).make();
    functions++;
    MfInterpreter before;
    std::vector<Bytes> expected = before.run(mf, {Bytes(kOutBytes), in});
    for (const Budget& b : kBudgets) {
      const AllocationOptions options = options_of(b);
      MachineFunction allocated = mf;
      AllocationStats stats = allocate_registers(allocated, options);
      expect_physical(allocated);
      expect_invariants(stats, options);
      spilled += stats.spilled, remats += stats.remats;
      for (const Inst& i : allocated.code)
        if (i.op == Mn::mov && i.o[0].kind == Operand::Kind::MEM && i.o[1].kind == Operand::Kind::REG &&
            i.o[1].reg.num != R10 && i.o[1].reg.num != R11 && i.o[0].mem.base.num == RSP && i.o[0].mem.disp >= 40)
          borrowed++;  // a spill store from a register other than the scratch ones: a borrowed register's save
      for (uint64_t misalign : {0, 16}) {
        MfInterpreter after;
        std::vector<Bytes> got = after.run(allocated, {Bytes(kOutBytes), in}, misalign);
        ASSERT_EQ(got, expected) << "seed " << seed << ", vec_registers " << b.vec_registers << ", max_gpr " << b.max_gpr
                                 << ", max_vec " << b.max_vec;
        ASSERT_FALSE(after.trace.call_misaligned) << "seed " << seed;
        ASSERT_FALSE(after.trace.callee_saved_changed) << "seed " << seed;
        ASSERT_EQ(after.trace.calls, before.trace.calls) << "seed " << seed;
      }
    }
  }
  // The budgets did force the interesting paths.
  EXPECT_EQ(functions, 300);
  EXPECT_GT(spilled, 10000);
  EXPECT_GT(remats, 1000);
  EXPECT_GT(borrowed, 100);
}

// The same kind of functions, calling libm, assembled and run on this CPU (write masks need AVX-512).
TEST(RegallocRandom, RandomFunctionsRunNatively) {
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) GTEST_SKIP() << "no AVX2/FMA on this CPU";
  const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl");
  const Bytes in = random_input();
  int ran = 0;
  for (uint32_t seed = 1001; seed <= 1100; seed++) {
    MachineFunction mf = Generator(seed, {"pow", "fmax", "exp2"}).make();
    bool uses_masks = false;
    for (const Inst& i : mf.code) uses_masks |= i.op == Mn::kmovw;
    if (uses_masks && !avx512) continue;
    MfInterpreter before;
    const std::vector<Bytes> expected = before.run(mf, {Bytes(kOutBytes), in});
    for (const Budget& b : kBudgets) {
      if (b.vec_registers == 32 && !avx512) continue;
      MachineFunction allocated = mf;
      allocate_registers(allocated, options_of(b));
      const std::string listing = print_listing(allocated);
      const auto object = LoadedObject::load(write_elf_object(assemble(listing)));
      auto kernel = reinterpret_cast<void (*)(void* const*, const int64_t*, int32_t, int32_t)>(object->symbol(mf.name));
      Bytes out(kOutBytes), input = in;
      void* const bufs[2] = {out.data(), input.data()};
      const int64_t vars[1] = {0};
      kernel(bufs, vars, 0, 1);
      ASSERT_EQ(out, expected[0]) << "seed " << seed << ", vec_registers " << b.vec_registers << ", max_gpr "
                                  << b.max_gpr << ", max_vec " << b.max_vec << "\n" << listing;
      ran++;
    }
  }
  EXPECT_GT(ran, 200);
}

}  // namespace
}  // namespace doorbell::x86
