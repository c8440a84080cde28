// assemble() on whole listings (labels, jumps relaxed as llvm-mc relaxes them, a constant pool, an extern call) against
// `llvm-mc-19 -filetype=obj`; print_listing -> assemble round trips; write_elf_object loaded and run with
// compiler/cpu/elf_loader.h; error messages. Facts: firmware-notes/x86-encoding.md.
#include <elf.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>

#include "compiler/cpu/elf_loader.h"
#include "compiler/subprocess.h"
#include "compiler/x86/x86_encoder.h"
#include "compiler/x86/x86_inst.h"
#include "tests/common/error_of.h"

namespace doorbell::x86 {
namespace {

using doorbell::testing::error_of;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::string hex(const std::string& b) {
  std::string s;
  char buf[4];
  for (unsigned char c : b) {
    std::snprintf(buf, sizeof buf, "%02x ", c);
    s += buf;
  }
  return s;
}

// The bytes of the section `name` of an ELF64 object (read by hand: headers per the System V gABI).
std::string section_bytes(const std::string& elf, const std::string& name) {
  Elf64_Ehdr eh;
  if (elf.size() < sizeof eh) return "";
  std::memcpy(&eh, elf.data(), sizeof eh);
  Elf64_Shdr names;
  std::memcpy(&names, elf.data() + eh.e_shoff + eh.e_shstrndx * sizeof(Elf64_Shdr), sizeof names);
  for (size_t i = 0; i < eh.e_shnum; i++) {
    Elf64_Shdr s;
    std::memcpy(&s, elf.data() + eh.e_shoff + i * sizeof(Elf64_Shdr), sizeof s);
    if (elf.c_str() + names.sh_offset + s.sh_name == name) return elf.substr(s.sh_offset, s.sh_size);
  }
  return "";
}

// 11-byte instructions (EVEX, ModRM, SIB, disp32: 4100 is no multiple of 64): filler that moves labels out of rel8 reach.
std::string filler(int count) {
  std::string s;
  for (int i = 0; i < count; i++) s += "  vaddps zmm" + std::to_string(16 + i % 16) + ", zmm1, zmmword ptr [rdi + 4*rax + 4100]\n";
  return s;
}

// Forward and backward jumps that fit rel8 and ones that do not, a jump whose reach depends on another's size, RIP
// loads of pool constants, an extern call, pool data of each directive.
std::string sample_listing() {
  return ".intel_syntax noprefix\n.text\n.globl kern\nkern:\n"
         "  push rbx\n  xor eax, eax\n"
         ".L1:\n"
         "  vmovss xmm0, dword ptr [rip + .L9]\n"
         "  vaddps ymm1, ymm2, ymmword ptr [rip + .L10 + 32]\n"
         "  add eax, 1\n  cmp eax, 10\n"
         "  jl .L1\n"
         "  je .L2\n"
         "  jne .L3\n" +
         filler(12) +
         ".L2:\n"
         "  call sqrt@PLT\n"
         "  jmp .L4\n" +
         filler(10) +
         "  jb .L1\n"
         // A chain: jne .L5 reaches over 10 filler lines, jmp .L6 and 14 nops (126 bytes) only while jmp .L6 is rel8;
         // jmp .L6 must widen (12 filler lines), and then jne .L5 must too.
         "  jne .L5\n" + filler(10) + "  jmp .L6\n" + [] { std::string n; for (int i = 0; i < 14; i++) n += "  nop\n"; return n; }() +
         ".L5:\n" + filler(12) + ".L6:\n"
         ".L3:\n"
         "  jmp .L1\n"
         ".L4:\n"
         "  pop rbx\n  ret\n"
         ".p2align 4, 0xcc\n.L9:\n  .long 0x3f800000, 0x40000000\n"
         ".p2align 6, 0xcc\n.L10:\n  .quad 0x3f8000003f800000, 0x4000000040000000, 0x1, 0x2, 0x3, 0x4, 0x5, 0x6\n"
         ".p2align 0, 0xcc\n.L11:\n  .byte 1, 2, 255\n";
}

TEST(X86Assembler, ListingWithLabelsJumpsAndPoolMatchesLlvmMcObject) {
  const auto llvm_mc = find_executable({"llvm-mc-19"});
  if (!llvm_mc) GTEST_SKIP() << "llvm-mc-19 is not installed (tools/setup.sh installs llvm-19)";
  const std::string listing = sample_listing();
  ScratchDir dir("x86-assembler-test");
  const auto in = dir.path() / "k.s", obj = dir.path() / "k.o", log = dir.path() / "log";
  FILE* f = std::fopen(in.c_str(), "wb");
  std::fwrite(listing.data(), 1, listing.size(), f);
  std::fclose(f);
  const ProcessResult r = run_process({*llvm_mc, "-filetype=obj", "-triple=x86_64-unknown-linux-gnu", "-x86-asm-syntax=intel",
                                       in.string(), "-o", obj.string()}, log);
  ASSERT_TRUE(r.ok()) << read_whole_file(log);
  const std::string expected = section_bytes(read_whole_file(obj), ".text");
  const AssembledCode code = assemble(listing);
  EXPECT_EQ(hex(code.bytes), hex(expected));
  EXPECT_EQ(code.name, "kern");
  // The code ends where the first .p2align of the pool starts: before it, the last instruction is ret (C3).
  ASSERT_GT(code.code_bytes, 0u);
  EXPECT_EQ(static_cast<uint8_t>(code.bytes[code.code_bytes - 1]), 0xC3);
  ASSERT_EQ(code.relocations.size(), 1u);
  EXPECT_EQ(code.relocations[0].symbol, "sqrt");
  EXPECT_EQ(code.relocations[0].addend, -4);
  EXPECT_EQ(static_cast<uint8_t>(code.bytes[code.relocations[0].offset - 1]), 0xE8);  // call rel32's opcode before it
}

TEST(X86Assembler, ForwardJumpOutOfReachGetsRel32AndInReachRel8) {
  // jmp .L0 over 5 bytes: EB 05; je .L0 over 12 filler lines of 11 bytes: 0F 84 rel32.
  const AssembledCode near = assemble("f:\n  jmp .L0\n  mov eax, 1\n.L0:\n  ret\n");
  EXPECT_EQ(hex(near.bytes), "eb 05 b8 01 00 00 00 c3 ");
  const AssembledCode far = assemble("f:\n  je .L0\n" + filler(12) + ".L0:\n  ret\n");
  ASSERT_EQ(far.bytes.size(), 6u + 12 * 11 + 1);
  EXPECT_EQ(static_cast<uint8_t>(far.bytes[0]), 0x0F);
  EXPECT_EQ(static_cast<uint8_t>(far.bytes[1]), 0x84);
  int32_t rel;
  std::memcpy(&rel, far.bytes.data() + 2, 4);
  EXPECT_EQ(rel, 12 * 11);  // to the final ret, from the end of the jcc
  // A chain: jne .L5 spans 10 filler lines, jmp .L6 and 14 nops: 126 bytes with a rel8 jmp (in reach), 129 with a
  // rel32 one; .L6 lies 12 filler lines further, so jmp .L6 widens and then jne .L5 does too.
  std::string nops;
  for (int i = 0; i < 14; i++) nops += "  nop\n";
  const AssembledCode chain = assemble("f:\n  jne .L5\n" + filler(10) + "  jmp .L6\n" + nops + ".L5:\n" + filler(12) + ".L6:\n  ret\n");
  ASSERT_EQ(chain.bytes.size(), 6u + 110 + 5 + 14 + 132 + 1);
  EXPECT_EQ(hex(chain.bytes.substr(0, 6)), "0f 85 81 00 00 00 ");    // 110 + 5 + 14 = 129 = 0x81
  EXPECT_EQ(hex(chain.bytes.substr(116, 5)), "e9 92 00 00 00 ");     // 14 + 132 = 146 = 0x92
  // Backward in reach: rel8 (-2 - 5 bytes of mov).
  EXPECT_EQ(hex(assemble("f:\n.L0:\n  mov eax, 1\n  jne .L0\n").bytes), "b8 01 00 00 00 75 f9 ");
}

TEST(X86Assembler, ElfObjectLoadsAndRunsAFunctionReturning42) {
  const AssembledCode code = assemble(".intel_syntax noprefix\n.text\n.globl answer\nanswer:\n  mov eax, 42\n  ret\n");
  const auto obj = LoadedObject::load(write_elf_object(code));
  auto fn = reinterpret_cast<int (*)()>(obj->symbol("answer"));
  EXPECT_EQ(fn(), 42);
}

TEST(X86Assembler, ElfObjectCallsAnExternAndReadsThePool) {
  // f(x) = sqrt(x) + 2.5 (the pool's double), keeping the stack 16-byte aligned around the call.
  const std::string listing =
      ".intel_syntax noprefix\n.text\n.globl f\nf:\n"
      "  sub rsp, 8\n  call sqrt@PLT\n  vaddsd xmm0, xmm0, qword ptr [rip + .L0]\n  add rsp, 8\n  ret\n"
      ".p2align 3, 0xcc\n.L0:\n  .quad 0x4004000000000000\n";
  const AssembledCode code = assemble(listing);
  ASSERT_EQ(code.relocations.size(), 1u);
  const auto obj = LoadedObject::load(write_elf_object(code));
  auto fn = reinterpret_cast<double (*)(double)>(obj->symbol("f"));
  EXPECT_EQ(fn(16.0), 6.5);
  EXPECT_EQ(fn(2.25), 4.0);
}

TEST(X86Assembler, ElfObjectRunsALoopWithJumps) {
  // sum of 0..n-1 with a backward jcc and a forward jcc over the loop when n <= 0.
  const std::string listing =
      "sum:\n  xor eax, eax\n  xor ecx, ecx\n  test edi, edi\n  jle .L1\n.L0:\n  add eax, ecx\n  add ecx, 1\n  cmp ecx, edi\n"
      "  jl .L0\n.L1:\n  ret\n";
  const auto obj = LoadedObject::load(write_elf_object(assemble(listing)));
  auto fn = reinterpret_cast<int (*)(int)>(obj->symbol("sum"));
  EXPECT_EQ(fn(10), 45);
  EXPECT_EQ(fn(0), 0);
  EXPECT_EQ(fn(-3), 0);
}

// A function built as instructions: what instruction selection and register allocation hand the printer.
MachineFunction sample_function() {
  MachineFunction mf;
  mf.name = "kern";
  mf.allocated = true;
  mf.externs = {"exp2f"};
  const int32_t loop = mf.new_label(), done = mf.new_label(), pool = mf.new_label();
  mf.constants.push_back(ConstantData{pool, 32, std::string("\x00\x00\x80\x3f\x00\x00\x00\x40\x00\x00\x40\x40\x00\x00\x80\x40"
                                                            "\x00\x00\xa0\x40\x00\x00\xc0\x40\x00\x00\xe0\x40\x00\x00\x00\x41", 32)});
  auto inst = [&](Mn op, std::initializer_list<Operand> ops) {
    mf.code.push_back(make_inst(op, ops));
    return &mf.code.back();
  };
  Mem arg;
  arg.bits = 64;
  arg.base = gpr(RDI);
  Mem elem;
  elem.bits = 256;
  elem.base = gpr(RSI);
  elem.has_index = true;
  elem.index = gpr(R9);
  elem.scale = 4;
  elem.disp = -64;
  Mem rip;
  rip.kind = MemBase::RIP;
  rip.label = pool;
  rip.bits = 256;
  Mem zmm_mem;
  zmm_mem.bits = 512;
  zmm_mem.base = gpr(R13);
  zmm_mem.disp = 128;
  inst(Mn::push, {op_reg(gpr(R12))});
  inst(Mn::mov, {op_reg(gpr(RSI)), op_mem(arg)});
  inst(Mn::xor_, {op_reg(gpr(R9, 32)), op_reg(gpr(R9, 32))});
  inst(Mn::LABEL, {op_label(loop)});
  inst(Mn::vmovups, {op_reg(vec(3, 256)), op_mem(elem)});
  inst(Mn::vfmadd231ps, {op_reg(vec(3, 256)), op_reg(vec(12, 256)), op_mem(rip)});
  Inst* masked = inst(Mn::vaddps, {op_reg(vec(17, 512)), op_reg(vec(18, 512)), op_mem(zmm_mem)});
  masked->masked = true;
  masked->zeroing = true;
  masked->mask = kreg(2);
  inst(Mn::vcmpps, {op_reg(kreg(1)), op_reg(vec(0, 512)), op_reg(vec(31, 512)), op_imm(1)});
  inst(Mn::setl, {op_reg(gpr(RSI, 8))});
  inst(Mn::movzx, {op_reg(gpr(R8, 32)), op_reg(gpr(RSI, 8))});
  inst(Mn::add, {op_reg(gpr(R9, 32)), op_imm(8)});
  inst(Mn::cmp, {op_reg(gpr(R9, 32)), op_imm(1000)});
  inst(Mn::jl, {op_label(loop)});
  inst(Mn::je, {op_label(done)});
  inst(Mn::call, {op_symbol(0)});
  inst(Mn::LABEL, {op_label(done)});
  inst(Mn::movabs, {op_reg(gpr(R11)), op_imm(-81985529216486896)});
  inst(Mn::pop, {op_reg(gpr(R12))});
  inst(Mn::vzeroupper, {});
  inst(Mn::ret, {});
  return mf;
}

TEST(X86Assembler, PrintedListingReassemblesToTheEncodersBytes) {
  const MachineFunction mf = sample_function();
  Encoder enc;
  for (const std::string& e : mf.externs) enc.extern_symbol(e);
  for (const Inst& i : mf.code) enc.emit(i);
  for (const ConstantData& c : mf.constants) {
    enc.data(c.align, {});
    enc.bind(c.label);
    enc.data(1, c.bytes);
  }
  const AssembledCode direct = enc.finish(mf.name);
  const std::string listing = print_listing(mf);
  const AssembledCode reassembled = assemble(listing);
  EXPECT_EQ(hex(reassembled.bytes), hex(direct.bytes)) << listing;
  EXPECT_EQ(reassembled.code_bytes, direct.code_bytes);
  ASSERT_EQ(reassembled.relocations.size(), 1u);
  EXPECT_EQ(reassembled.relocations[0].offset, direct.relocations[0].offset);
  EXPECT_EQ(reassembled.relocations[0].symbol, "exp2f");
  // The printed lines the other passes read in DEBUG output.
  EXPECT_TRUE(contains(listing, "  vmovups ymm3, ymmword ptr [rsi + 4*r9 - 64]\n")) << listing;
  EXPECT_TRUE(contains(listing, "  vfmadd231ps ymm3, ymm12, ymmword ptr [rip + .L2]\n")) << listing;
  EXPECT_TRUE(contains(listing, "  vaddps zmm17 {k2} {z}, zmm18, zmmword ptr [r13 + 128]\n")) << listing;
  EXPECT_TRUE(contains(listing, "  call exp2f@PLT\n")) << listing;
  EXPECT_TRUE(contains(listing, ".L0:\n")) << listing;
  EXPECT_TRUE(contains(listing, ".p2align 5, 0xcc\n.L2:\n  .quad 0x400000003f800000, 0x4080000040400000, 0x40c0000040a00000, 0x4100000040e00000\n"))
      << listing;
}

TEST(X86Assembler, PrintInstShowsVirtualRegistersAndFrameSlots) {
  MachineFunction mf;
  Inst i;
  i.op = Mn::vaddps;
  i.n = 3;
  i.tied = true;
  i.o[0] = op_reg(mf.new_vreg(RegClass::VEC, 256));
  i.o[1] = op_reg(mf.new_vreg(RegClass::VEC, 256));
  Mem spill;
  spill.kind = MemBase::SPILL;
  spill.slot = 3;
  spill.bits = 256;
  i.o[2] = op_mem(spill);
  EXPECT_EQ(print_inst(i, mf), "vaddps %v0y, %v1y, ymmword ptr [spill 3]");
  Inst m;
  m.op = Mn::mov;
  m.n = 2;
  m.o[0] = op_reg(Reg{RegClass::GPR, true, 32, 7});
  Mem a;
  a.kind = MemBase::ARG;
  a.slot = 1;
  a.bits = 32;
  a.disp = 4;
  m.o[1] = op_mem(a);
  EXPECT_EQ(print_inst(m, mf), "mov %g7d, dword ptr [arg 1 + 4]");
  Inst k;
  k.op = Mn::kmovw;
  k.n = 2;
  k.o[0] = op_reg(Reg{RegClass::MASK, true, 16, 1});
  k.o[1] = op_reg(gpr(R10, 32));
  EXPECT_EQ(print_inst(k, mf), "kmovw %k1, r10d");
  // print_listing refuses what cannot be assembled.
  mf.allocated = true;
  mf.name = "g";
  mf.code.push_back(i);
  EXPECT_TRUE(contains(error_of([&] { print_listing(mf); }), "virtual register")) << error_of([&] { print_listing(mf); });
}

TEST(X86Assembler, ErrorsNameTheLineAndTheExpectedForm) {
  auto err = [](const std::string& listing) { return error_of<X86EncodeError>([&] { assemble(listing); }); };
  std::string e = err("f:\n  mov eax, 1\n  vfoo xmm0, xmm1\n");
  EXPECT_TRUE(contains(e, "line 3 'vfoo xmm0, xmm1': unknown mnemonic 'vfoo'")) << e;
  e = err("f:\n  vaddps ymm0, rax, ymm1\n");
  EXPECT_TRUE(contains(e, "line 2")) << e;
  EXPECT_TRUE(contains(e, "vaddps ymm0, rax, ymm1: operands do not match; expected (vector register, vector register, vector register or memory)")) << e;
  e = err("f:\n  jne .L7\n  ret\n");
  EXPECT_TRUE(contains(e, "f: label .L7 is jumped to but never bound")) << e;
  e = err("f:\n  vmovss xmm0, dword ptr [rip + .L3]\n");
  EXPECT_TRUE(contains(e, "label .L3 is addressed")) << e;
  e = err("f:\n  add eax, [rdi + ]\n");
  EXPECT_TRUE(contains(e, "line 2 'add eax, [rdi + ]': memory operand '[rdi + ]' ends with a sign")) << e;
  e = err("f:\n  add eax,\n");
  EXPECT_TRUE(contains(e, "line 2")) << e;
  e = err("f:\n  .weird 1\n");
  EXPECT_TRUE(contains(e, "line 2 '.weird 1': unknown directive '.weird'")) << e;
  e = err("f:\n  vmovdqu zmm0, zmmword ptr [rdi]\n");
  EXPECT_TRUE(contains(e, "needs EVEX")) << e;
  e = err("f:\n  add eax, rcx\n");
  EXPECT_TRUE(contains(e, "add eax, rcx: operand widths differ; expected both 32-bit")) << e;
  e = err("f:\n  mov rax, qword ptr [rdi + 8*rsp]\n");
  EXPECT_TRUE(contains(e, "rsp as an index")) << e;
  e = err("f:\n  vaddps ymm0, xmm1, ymm2\n");
  EXPECT_TRUE(contains(e, "vaddps ymm0, xmm1, ymm2: operand 2 is 128-bit; expected every vector operand 256-bit")) << e;
  e = err("f:\n  vmulps zmm0, zmm1, ymmword ptr [rdi + 64]\n");
  EXPECT_TRUE(contains(e, "operand 3 is 256-bit; expected every vector operand 512-bit")) << e;
  e = err("f:\n  vaddss ymm0, ymm1, ymm2\n");
  EXPECT_TRUE(contains(e, "operand 1 is not xmm; expected xmm registers (a scalar form)")) << e;
  e = err("f:\n  vmovups zmmword ptr [rdi] {k1} {z}, zmm0\n");
  EXPECT_TRUE(contains(e, "{z} on a memory or mask destination")) << e;
  e = err("f:\n  vaddps xmm0 {k0}, xmm1, xmm2\n");
  EXPECT_TRUE(contains(e, "write mask k0; expected k1..k7")) << e;
  e = err("f:\n  vpslld ymm0, ymm1, 300\n");
  EXPECT_TRUE(contains(e, "immediate 300 does not fit 8 bits")) << e;
  e = err("f:\n  mov eax, 4294967296\n");
  EXPECT_TRUE(contains(e, "immediate 4294967296 does not fit 32 bits")) << e;
  e = err("  ret\n");
  EXPECT_TRUE(contains(e, "no function symbol")) << e;
  e = err("f:\n.L1:\n.L1:\n  ret\n");
  EXPECT_TRUE(contains(e, "line 3")) << e;
  EXPECT_TRUE(contains(e, "bound twice")) << e;
  // The encoder itself: a virtual register and a tied instruction are refused, naming the instruction.
  Encoder enc;
  Inst v;
  v.op = Mn::add;
  v.n = 2;
  v.o[0] = op_reg(Reg{RegClass::GPR, true, 64, 3});
  v.o[1] = op_imm(1);
  EXPECT_EQ(error_of<X86EncodeError>([&] { enc.emit(v); }), "add %g3, 1: operand 1 is a virtual register; expected a physical one");
  // ...and stays usable.
  Inst ok;
  ok.op = Mn::ret;
  enc.emit(ok);
  EXPECT_EQ(hex(enc.finish("g").bytes), "c3 ");
}

TEST(X86Assembler, MangledListingsEitherAssembleOrThrowX86EncodeError) {
  // Random byte edits of a real listing: no crash, no other exception type, and the assembler stays usable.
  const std::string base = sample_listing();
  std::mt19937 rng(18);
  const std::string alphabet = "[]+-*,{}.:@ 0123456789abcdefklmnopqrstuvwxyz\n";
  int threw = 0;
  for (int round = 0; round < 2000; round++) {
    std::string s = base;
    const int edits = 1 + static_cast<int>(rng() % 3);
    for (int e = 0; e < edits; e++) {
      const size_t at = rng() % s.size();
      switch (rng() % 3) {
        case 0: s[at] = alphabet[rng() % alphabet.size()]; break;
        case 1: s.erase(at, 1 + rng() % 4); break;
        default: s.insert(at, 1, alphabet[rng() % alphabet.size()]); break;
      }
    }
    try {
      assemble(s);
    } catch (const X86EncodeError&) {
      threw++;
    }
  }
  EXPECT_GT(threw, 1000);  // most edits break the listing
  EXPECT_EQ(assemble(base).bytes, assemble(base).bytes);
}

TEST(X86Assembler, AssemblesAThreeHundredLineListingInWellUnderAMillisecond) {
  std::string listing = "f:\n";
  for (int i = 0; i < 100; i++)
    listing += "  vfmadd231ps zmm" + std::to_string(i % 32) + ", zmm1, zmmword ptr [rdi + 4*rax + " + std::to_string(64 * i) +
               "]\n  add rax, 16\n  cmp rax, rcx\n";
  listing += "  ret\n";
  assemble(listing);  // warm the name tables
  const auto t0 = std::chrono::steady_clock::now();
  constexpr int kRuns = 50;
  for (int i = 0; i < kRuns; i++) assemble(listing);
  const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / kRuns;
  RecordProperty("assemble_us", std::to_string(us));
  EXPECT_LT(us, 1000.0) << "301 lines took " << us << " us";  // a generous bound for a shared machine
}

}  // namespace
}  // namespace doorbell::x86
