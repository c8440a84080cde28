// The encoder byte for byte against llvm-mc-19 (`--show-encoding`, Intel syntax): every mnemonic, every operand
// form, registers 0-15 and 16-31, every addressing mode. llvm-mc runs once for the whole table. Facts the table
// exercises: firmware-notes/x86-encoding.md.
#include "compiler/x86/x86_encoder.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "compiler/subprocess.h"
#include "compiler/x86/x86_inst.h"

namespace doorbell::x86 {
namespace {

const char* const kG64[16] = {"rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15"};
const char* const kG32[16] = {"eax", "ecx", "edx", "ebx", "esp", "ebp", "esi", "edi", "r8d", "r9d", "r10d", "r11d", "r12d", "r13d", "r14d", "r15d"};
const char* const kG16[16] = {"ax", "cx", "dx", "bx", "sp", "bp", "si", "di", "r8w", "r9w", "r10w", "r11w", "r12w", "r13w", "r14w", "r15w"};
const char* const kG8[16] = {"al", "cl", "dl", "bl", "spl", "bpl", "sil", "dil", "r8b", "r9b", "r10b", "r11b", "r12b", "r13b", "r14b", "r15b"};

// Addressing modes: no base, rsp/r12 base (SIB), rbp/r13 base (no disp0 form), each scale, disp 0/8/32 bits.
const char* const kModes[] = {
    "[rax]", "[rsp]", "[r12]", "[rbp]", "[r13]", "[rbp + 8]", "[r13 - 8]", "[rsp + 64]", "[r12 + 127]", "[rdi - 128]",
    "[rsi + 128]", "[rdi + 4*rax]", "[rdi + 8*r9 + 32]", "[rdi + 2*r12 - 1024]", "[r15 + rcx]", "[4*rax + 32]",
    "[rsp + 4*rbx + 4096]", "[rbp + r13]", "[r13 + 8*r14 + 100000]", "[2*rbx]", "[rdi + 1]", "[r8 - 4096]",
};

std::vector<std::string> table() {
  std::vector<std::string> t;
  auto add = [&](const std::string& s) { t.push_back(s); };
  // Integer ALU: every register 0-15 as destination and source, each size, imm8/imm32, accumulator short forms.
  const char* alu[] = {"add", "sub", "and", "or", "xor", "cmp"};
  for (const char* op : alu) {
    for (int r = 0; r < 16; r += 5) add(std::string(op) + " " + kG64[r] + ", " + kG64[15 - r]);
    add(std::string(op) + " " + kG32[3] + ", " + kG32[12]);
    add(std::string(op) + " " + kG16[9] + ", " + kG16[2]);
    add(std::string(op) + " " + kG8[6] + ", " + kG8[9]);
    add(std::string(op) + " eax, 100000");
    add(std::string(op) + " rax, -100000");
    add(std::string(op) + " ecx, 100000");
    add(std::string(op) + " r11, 5");
    add(std::string(op) + " al, 7");
    add(std::string(op) + " r10b, -3");
    add(std::string(op) + " qword ptr [rdi + 8], 1000");
    add(std::string(op) + " dword ptr [rsp], -1");
    add(std::string(op) + " r9, qword ptr [rbp - 16]");
    add(std::string(op) + " dword ptr [r12 + 4*rcx], esi");
    add(std::string(op) + " ax, 300");
  }
  // mov in every form, every addressing mode.
  for (const char* m : kModes) {
    add(std::string("mov rax, qword ptr ") + m);
    add(std::string("mov dword ptr ") + m + ", r9d");
    add(std::string("lea r10, ") + m);
  }
  for (int r = 0; r < 16; r++) add(std::string("mov ") + kG64[r] + ", " + kG64[(r * 7 + 3) % 16]);
  for (int r = 0; r < 16; r += 3) add(std::string("mov ") + kG32[r] + ", " + std::to_string(r * 1000 + 1));
  add("mov rax, -1");
  add("mov r12, 2147483647");
  add("mov rcx, 4294967295");
  add("mov r9d, 4294967295");
  add("mov sil, 5");
  add("mov r8b, dil");
  add("mov byte ptr [rdi], 255");
  add("mov word ptr [rdi + 2], 1234");
  add("mov qword ptr [rsp + 8], -5");
  add("mov bpl, byte ptr [rax]");
  add("mov cx, word ptr [rsi]");
  add("movabs rax, 81985529216486895");
  add("movabs r13, -2");
  add("movzx eax, byte ptr [rdi]");
  add("movzx r8d, sil");
  add("movzx rax, word ptr [rdi + 4*rcx]");
  add("movzx ecx, ax");
  add("movzx ax, bl");
  add("movsx rdx, r9b");
  add("movsx eax, word ptr [rbp - 2]");
  add("movsx r15, r14w");
  add("movsxd rax, ecx");
  add("movsxd r11, dword ptr [rdi + 8*rdx + 4]");
  add("movsxd rax, eax");
  add("lea eax, [rdi + 4*rsi + 3]");
  // imul, unary group 3, division, sign extension.
  add("imul rax, rcx");
  add("imul r9d, dword ptr [rdi]");
  add("imul eax, ecx, 10");
  add("imul r12, r13, 1000");
  add("imul ax, word ptr [rsi], 300");
  add("imul rcx");
  add("neg r10");
  add("neg dword ptr [rsp + 4]");
  add("not eax");
  add("not r11b");
  add("idiv rcx");
  add("idiv r9d");
  add("div dword ptr [rdi]");
  add("div r15");
  add("cwd");
  add("cdq");
  add("cqo");
  // Shifts by 1, imm8 and cl.
  const char* shifts[] = {"shl", "shr", "sar"};
  for (const char* op : shifts) {
    add(std::string(op) + " eax, 1");
    add(std::string(op) + " r9, 13");
    add(std::string(op) + " rdx, cl");
    add(std::string(op) + " r10d, cl");
    add(std::string(op) + " dword ptr [rdi], 3");
    add(std::string(op) + " sil, 2");
  }
  add("test eax, eax");
  add("test r8, r9");
  add("test dil, dil");
  add("test eax, 1");
  add("test rcx, 255");
  add("test al, 1");
  add("test qword ptr [rdi], rax");
  add("test dword ptr [rdi + 4], 65536");
  for (int r = 0; r < 16; r += 3) {
    add(std::string("push ") + kG64[r]);
    add(std::string("pop ") + kG64[15 - r]);
  }
  add("ret");
  add("nop");
  add("vzeroupper");
  add("call rax");
  add("call qword ptr [rdi + 8]");
  add("jmp r11");
  // setcc (REX for sil/dil and r8b+) and cmovcc, every condition.
  const char* cc[] = {"e", "ne", "l", "le", "g", "ge", "b", "be", "a", "ae", "p", "np"};
  for (int i = 0; i < 12; i++) {
    add(std::string("set") + cc[i] + " " + kG8[(i * 5) % 16]);
    add(std::string("cmov") + cc[i] + " " + kG64[i] + ", " + kG64[15 - i]);
  }
  add("sete byte ptr [rdi]");
  add("cmovne eax, dword ptr [rsp + 8]");
  add("cmovl r9w, ax");

  // Scalar float, VEX and EVEX (xmm16-31, masks).
  const char* sbin[] = {"vaddss", "vaddsd", "vsubss", "vsubsd", "vmulss", "vmulsd", "vdivss", "vdivsd", "vsqrtss", "vsqrtsd",
                        "vmaxss", "vmaxsd", "vminss", "vminsd", "vcvtss2sd", "vcvtsd2ss", "vfmadd231ss", "vfmadd231sd"};
  for (const char* op : sbin) {
    const std::string name(op);  // the memory source is the source's scalar: vcvtss2sd reads a float
    const bool sd = (name.ends_with("sd") && name != "vcvtss2sd") || name == "vcvtsd2ss";
    const std::string ptr = sd ? "qword ptr " : "dword ptr ";
    add(std::string(op) + " xmm0, xmm1, xmm2");
    add(std::string(op) + " xmm9, xmm14, xmm3");
    add(std::string(op) + " xmm1, xmm2, xmm12");
    add(std::string(op) + " xmm3, xmm4, " + ptr + "[rdi + 8*rax + 64]");
    add(std::string(op) + " xmm17, xmm30, xmm5");
    add(std::string(op) + " xmm2, xmm3, " + ptr + "[r13 + 256]");
    add(std::string(op) + " xmm20, xmm21, " + ptr + "[rsp + 16]");
  }
  add("vaddss xmm1 {k3}, xmm2, xmm3");
  add("vmulsd xmm1 {k3} {z}, xmm2, xmm3");
  add("vmovss xmm0, dword ptr [rdi]");
  add("vmovss dword ptr [rsi + 4*rcx], xmm11");
  add("vmovss xmm0, xmm1, xmm9");
  add("vmovss xmm9, xmm1, xmm2");
  add("vmovss xmm20, dword ptr [rdi + 64]");
  add("vmovsd qword ptr [rsp + 8], xmm3");
  add("vmovsd xmm1, xmm2, xmm3");
  add("vmovsd xmm17, xmm18, xmm19");
  add("vmovd xmm0, eax");
  add("vmovd xmm12, r9d");
  add("vmovd xmm3, dword ptr [rdi]");
  add("vmovd ecx, xmm5");
  add("vmovd dword ptr [rsp + 4], xmm14");
  add("vmovd xmm22, eax");
  add("vmovq xmm0, rax");
  add("vmovq r10, xmm4");
  add("vmovq xmm1, xmm2");
  add("vmovq xmm1, xmm10");
  add("vmovq xmm1, qword ptr [rdi]");
  add("vmovq qword ptr [rdi], xmm6");
  add("vmovq xmm25, qword ptr [rdi + 8]");
  add("vmovq xmm24, rcx");
  add("vucomiss xmm0, xmm1");
  add("vucomiss xmm8, dword ptr [rdi]");
  add("vucomisd xmm1, xmm13");
  add("vucomisd xmm21, xmm3");
  add("vcmpss xmm0, xmm1, xmm2, 1");
  add("vcmpss xmm0, xmm1, xmm10, 0");
  add("vcmpsd xmm0, xmm1, xmm10, 2");
  add("vcmpsd xmm0, xmm1, xmm10, 4");
  add("vcmpsd xmm3, xmm4, qword ptr [rdi], 4");
  add("vcmpss k1, xmm1, xmm2, 5");
  add("vcmpsd k2, xmm17, qword ptr [rdi + 64], 0");
  add("vroundss xmm0, xmm1, xmm2, 9");
  add("vroundsd xmm8, xmm9, qword ptr [rdi], 10");
  add("vcvtsi2ss xmm0, xmm1, eax");
  add("vcvtsi2ss xmm0, xmm1, r9");
  add("vcvtsi2ss xmm0, xmm1, dword ptr [rdi]");
  add("vcvtsi2sd xmm2, xmm3, rcx");
  add("vcvtsi2sd xmm2, xmm3, qword ptr [rdi + 8]");
  add("vcvtsi2sd xmm18, xmm19, eax");
  add("vcvttss2si eax, xmm1");
  add("vcvttss2si r12, xmm9");
  add("vcvttss2si ecx, dword ptr [rdi]");
  add("vcvttsd2si rax, xmm3");
  add("vcvttsd2si eax, xmm17");
  add("vcvtusi2ss xmm0, xmm1, eax");
  add("vcvtusi2ss xmm0, xmm1, rax");
  add("vcvtusi2sd xmm16, xmm1, r10");
  add("vcvtusi2sd xmm2, xmm1, dword ptr [rdi + 8]");
  add("vcvttss2usi eax, xmm1");
  add("vcvttss2usi rax, xmm20");
  add("vcvttsd2usi r8d, qword ptr [rdi + 16]");
  add("vcvtph2ps xmm0, xmm1");
  add("vcvtph2ps ymm0, xmm1");
  add("vcvtph2ps ymm10, xmmword ptr [rdi]");
  add("vcvtph2ps zmm0, ymm1");
  add("vcvtph2ps zmm3, ymmword ptr [rdi + 64]");
  add("vcvtps2ph xmm1, xmm0, 4");
  add("vcvtps2ph xmm1, ymm12, 4");
  add("vcvtps2ph qword ptr [rdi], xmm2, 0");
  add("vcvtps2ph ymm1, zmm2, 4");
  add("vcvtps2ph ymmword ptr [rdi + 32], zmm2, 4");
  add("vpextrw eax, xmm1, 3");
  add("vpextrw r9d, xmm10, 0");
  add("vpextrw word ptr [rdi + 2], xmm1, 1");
  add("vpinsrw xmm0, xmm1, eax, 2");
  add("vpinsrw xmm8, xmm9, word ptr [rdi], 7");
  add("vpinsrw xmm20, xmm1, eax, 2");

  // Packed moves: VEX xmm/ymm, EVEX zmm, registers 16-31, masks, compressed disp8.
  const char* movs[] = {"vmovups", "vmovaps"};
  for (const char* op : movs) {
    add(std::string(op) + " xmm0, xmm1");
    add(std::string(op) + " ymm0, ymm9");
    add(std::string(op) + " ymm9, ymm1");
    add(std::string(op) + " ymm2, ymmword ptr [rdi + 32]");
    add(std::string(op) + " ymmword ptr [rdi + 4*rax], ymm11");
    add(std::string(op) + " zmm1, zmmword ptr [rdi + 64]");
    add(std::string(op) + " zmm1, zmmword ptr [rdi + 96]");
    add(std::string(op) + " zmmword ptr [rsp + 128], zmm31");
    add(std::string(op) + " zmm16 {k1} {z}, zmm17");
    add(std::string(op) + " xmm16, xmmword ptr [rdi - 2048]");
    add(std::string(op) + " ymm30, ymmword ptr [rdi - 4128]");
    add(std::string(op) + " zmmword ptr [rdi] {k2}, zmm3");
  }
  add("vmovdqu ymm0, ymmword ptr [rdi]");
  add("vmovdqu ymm1, ymm12");
  add("vmovdqu xmmword ptr [rdi], xmm1");
  add("vmovdqa ymm0, ymmword ptr [rdi]");
  add("vmovdqa xmm3, xmm15");
  add("vmovdqa ymmword ptr [rsp + 32], ymm8");
  add("vmovdqu32 zmm0, zmmword ptr [rdi + 4*rcx + 64]");
  add("vmovdqu32 zmmword ptr [rdi], zmm19");
  add("vmovdqu32 ymm1 {k1} {z}, ymm2");
  add("vmovdqa32 zmm0, zmm1");
  add("vmovdqa32 xmm20, xmmword ptr [rdi + 16]");
  add("vmovdqa32 zmmword ptr [rdi + 128], zmm8");
  add("vbroadcastss xmm0, dword ptr [rdi]");
  add("vbroadcastss ymm0, xmm1");
  add("vbroadcastss ymm12, dword ptr [rdi + 4]");
  add("vbroadcastss zmm0, dword ptr [rdi + 8]");
  add("vbroadcastss zmm20, xmm21");
  add("vbroadcastsd ymm0, qword ptr [rdi]");
  add("vbroadcastsd zmm1, xmm2");
  add("vbroadcastsd zmm1, qword ptr [rdi + 16]");
  add("vpbroadcastd xmm0, xmm1");
  add("vpbroadcastd ymm0, dword ptr [rdi]");
  add("vpbroadcastd zmm0, eax");
  add("vpbroadcastd zmm17, r11d");
  add("vpbroadcastd ymm18, ecx");
  add("vpbroadcastd zmm2, dword ptr [rdi + 12]");
  add("vpbroadcastq ymm0, xmm1");
  add("vpbroadcastq zmm0, rax");
  add("vpbroadcastq zmm1, qword ptr [rdi + 8]");

  // Packed arithmetic in every width.
  const char* pbin[] = {"vaddps", "vsubps", "vmulps", "vdivps", "vmaxps", "vminps", "vfmadd231ps", "vfmadd213ps", "vxorps",
                        "vandps", "vandnps", "vorps", "vpaddd", "vpsubd", "vpmulld", "vpsllvd", "vpsrlvd", "vpsravd",
                        "vpmaxsd", "vpmaxud", "vpminsd", "vpminud", "vpermilps"};
  for (const char* op : pbin) {
    add(std::string(op) + " xmm0, xmm1, xmm2");
    add(std::string(op) + " ymm3, ymm4, ymm13");
    add(std::string(op) + " ymm8, ymm1, ymmword ptr [rdi + 32]");
    add(std::string(op) + " zmm0, zmm1, zmm2");
    add(std::string(op) + " zmm20 {k1}, zmm21, zmmword ptr [rsi + 8*rcx + 256]");
    add(std::string(op) + " ymm16 {k7} {z}, ymm29, ymm31");
  }
  for (const char* op : {"vpermps", "vpermd"}) {
    add(std::string(op) + " ymm0, ymm1, ymm2");
    add(std::string(op) + " ymm9, ymm10, ymmword ptr [rdi]");
    add(std::string(op) + " zmm0, zmm1, zmm18");
  }
  for (const char* op : {"vpand", "vpandn", "vpor", "vpxor"}) {
    add(std::string(op) + " xmm0, xmm1, xmm2");
    add(std::string(op) + " ymm1, ymm2, ymm12");
    add(std::string(op) + " ymm1, ymm12, ymmword ptr [rdi]");
  }
  for (const char* op : {"vpandd", "vpandnd", "vpord", "vpxord", "vblendmps", "vpblendmd"}) {
    add(std::string(op) + " zmm0, zmm1, zmm2");
    add(std::string(op) + " ymm17 {k2}, ymm1, ymmword ptr [rdi + 64]");
    add(std::string(op) + " xmm1, xmm2, xmm3");
  }
  add("vsqrtps ymm0, ymm1");
  add("vsqrtps zmm0, zmmword ptr [rdi + 128]");
  add("vsqrtps xmm18, xmm9");
  add("vroundps ymm0, ymm1, 9");
  add("vroundps xmm10, xmmword ptr [rdi], 11");
  add("vrndscaleps zmm0, zmm1, 9");
  add("vrndscaleps ymm20, ymmword ptr [rdi + 32], 10");
  add("vcmpps ymm0, ymm1, ymm2, 1");
  add("vcmpps ymm0, ymm1, ymm10, 0");
  add("vcmpps ymm0, ymm1, ymm10, 4");
  add("vcmpps ymm0, ymm1, ymm10, 14");
  add("vcmpps xmm3, xmm4, xmmword ptr [rdi], 2");
  add("vcmpps k1, zmm0, zmm1, 1");
  add("vcmpps k3 {k2}, zmm20, zmmword ptr [rdi + 64], 13");
  add("vblendvps ymm0, ymm1, ymm2, ymm3");
  add("vblendvps xmm8, xmm9, xmmword ptr [rdi], xmm15");
  add("vpternlogd zmm0, zmm1, zmm2, 150");
  add("vpternlogd ymm20, ymm21, ymmword ptr [rdi + 32], 255");
  for (const char* op : {"vpslld", "vpsrld", "vpsrad"}) {
    add(std::string(op) + " ymm0, ymm1, 3");
    add(std::string(op) + " xmm9, xmm12, 31");
    add(std::string(op) + " zmm0, zmm1, 7");
    add(std::string(op) + " zmm20, zmmword ptr [rdi + 64], 1");
    add(std::string(op) + " ymm0, ymm1, xmm2");
    add(std::string(op) + " zmm0, zmm1, xmmword ptr [rdi + 16]");
  }
  for (const char* op : {"vpcmpeqd", "vpcmpgtd"}) {
    add(std::string(op) + " ymm0, ymm1, ymm2");
    add(std::string(op) + " ymm0, ymm1, ymm12");
    add(std::string(op) + " xmm0, xmm1, xmmword ptr [rdi]");
    add(std::string(op) + " k1, zmm0, zmm1");
    add(std::string(op) + " k2 {k1}, ymm20, ymmword ptr [rdi + 32]");
  }
  for (const char* op : {"vpcmpd", "vpcmpud"}) {
    add(std::string(op) + " k1, zmm0, zmm1, 1");
    add(std::string(op) + " k5, ymm17, ymmword ptr [rdi + 64], 4");
    add(std::string(op) + " k1 {k2}, xmm0, xmm1, 2");
  }
  add("vpmovm2d zmm0, k1");
  add("vpmovm2d ymm20, k7");
  add("vpmovd2m k1, zmm0");
  add("vpmovd2m k3, xmm19");
  add("vptestmd k1, zmm0, zmm1");
  add("vptestmd k2 {k1}, ymm18, ymmword ptr [rdi]");
  for (const char* op : {"vcvtdq2ps", "vcvttps2dq", "vcvtudq2ps", "vcvttps2udq"}) {
    add(std::string(op) + " zmm0, zmm1");
    add(std::string(op) + " ymm1, ymmword ptr [rdi + 32]");
    add(std::string(op) + " xmm17, xmm2");
  }
  add("vcvtdq2ps ymm9, ymm10");
  add("vcvttps2dq xmm1, xmm14");
  add("vextractf128 xmm0, ymm1, 1");
  add("vextractf128 xmmword ptr [rdi], ymm9, 1");
  add("vextracti128 xmm10, ymm1, 1");
  add("vextractf32x4 xmm0, zmm1, 3");
  add("vextractf32x4 xmmword ptr [rdi + 32], zmm1, 2");
  add("vextractf32x4 xmm17, ymm18, 1");
  add("vextractf32x8 ymm0, zmm1, 1");
  add("vextractf32x8 ymmword ptr [rdi + 64], zmm20, 1");
  add("vextracti32x8 ymm2, zmm3, 1");
  add("vinsertf128 ymm0, ymm1, xmm2, 1");
  add("vinsertf128 ymm8, ymm9, xmmword ptr [rdi], 0");
  add("vpermilps ymm0, ymm1, 177");
  add("vpermilps zmm0, zmmword ptr [rdi + 64], 27");
  add("vpermilps xmm10, xmm1, 78");
  add("vshufps ymm0, ymm1, ymm2, 136");
  add("vshufps xmm9, xmm10, xmmword ptr [rdi], 221");
  add("vshufps zmm0, zmm1, zmm2, 68");
  add("vpshufd xmm0, xmm1, 78");
  add("vpshufd ymm12, ymmword ptr [rdi], 177");
  add("vpshufd zmm3, zmm4, 14");
  add("vmovshdup xmm0, xmm1");
  add("vmovshdup ymm20, ymm21");
  add("vmovhlps xmm0, xmm1, xmm2");
  add("vmovhlps xmm0, xmm1, xmm10");
  add("vmovhlps xmm16, xmm1, xmm2");
  add("vextractps eax, xmm1, 2");
  add("vextractps dword ptr [rdi + 4], xmm9, 1");
  add("vextractps ecx, xmm20, 3");
  add("vpextrd eax, xmm1, 1");
  add("vpextrd r10d, xmm11, 3");
  add("vpextrd dword ptr [rdi], xmm17, 2");
  add("vpinsrd xmm0, xmm1, eax, 1");
  add("vpinsrd xmm9, xmm10, dword ptr [rdi + 4], 3");
  add("vpinsrd xmm19, xmm20, r12d, 0");
  add("vinsertps xmm0, xmm1, xmm2, 16");
  add("vinsertps xmm9, xmm1, dword ptr [rdi], 48");
  add("vinsertps xmm20, xmm1, xmm2, 32");
  // Mask registers.
  add("vpextrw eax, xmm17, 1");
  add("vpextrw word ptr [rdi + 64], xmm20, 5");
  add("vpextrd r12d, xmm4, 2");
  add("vextractps dword ptr [rdi + 256], xmm18, 1");
  add("vcvtph2ps ymm17, xmm18");
  add("vcvtph2ps xmm0, qword ptr [rdi + 8]");
  add("vcvtps2ph xmm20, ymm21, 3");
  add("vextracti128 xmmword ptr [rsp + 16], ymm2, 1");
  add("vinsertps xmm0, xmm1, dword ptr [rdi + 400], 16");
  add("vbroadcastss ymm5 {k1} {z}, dword ptr [rdi + 40]");
  add("vpbroadcastd xmm30 {k2}, eax");
  add("vmovups zmm0, zmmword ptr [rdi + 8128]");
  add("vmovups zmm0, zmmword ptr [rdi + 8192]");
  add("vmovups zmm0, zmmword ptr [rdi - 8192]");
  add("vmovups zmm0, zmmword ptr [rdi - 8256]");
  add("vmovups ymm0, ymmword ptr [r13]");
  add("vmovups zmm0, zmmword ptr [r13]");
  add("vmovups zmm0, zmmword ptr [4*r14 + 64]");
  add("vmovss xmm0, dword ptr [rdi + 508]");
  add("vmovss xmm16, dword ptr [rdi + 508]");
  add("vmovss xmm16, dword ptr [rdi + 510]");
  add("vmovsd xmm16, qword ptr [rdi + 1016]");
  add("kmovw k1, k2");
  add("kmovw k1, eax");
  add("kmovw r9d, k3");
  add("kmovw k4, word ptr [rdi]");
  add("kmovw word ptr [rsp + 2], k5");
  add("kmovb k1, k2");
  add("kmovb k1, ecx");
  add("kmovb eax, k7");
  add("kmovb k0, byte ptr [rdi]");
  add("kmovb byte ptr [rdi], k1");
  add("knotw k1, k2");
  add("kortestw k0, k7");
  return t;
}

// The encoding llvm-mc reports for each line ("encoding: [0xc5,0xf8,...]"), in order.
std::vector<std::string> llvm_encodings(const std::string& llvm_mc, const std::vector<std::string>& lines, std::string& log_text) {
  ScratchDir dir("x86-encoder-test");
  std::string src = ".intel_syntax noprefix\n";
  for (const std::string& l : lines) src += l + "\n";
  const auto in = dir.path() / "table.s", out = dir.path() / "table.out", log = dir.path() / "log";
  {
    FILE* f = std::fopen(in.c_str(), "wb");
    std::fwrite(src.data(), 1, src.size(), f);
    std::fclose(f);
  }
  const ProcessResult r = run_process({llvm_mc, "--show-encoding", "-x86-asm-syntax=intel", "-output-asm-variant=1", in.string(), "-o", out.string()}, log);
  log_text = read_whole_file(log);
  std::vector<std::string> enc;
  if (!r.ok()) return enc;
  const std::string text = read_whole_file(out);
  size_t pos = 0;
  while ((pos = text.find("encoding: [", pos)) != std::string::npos) {
    pos += 11;
    const size_t end = text.find(']', pos);
    std::string bytes;
    size_t p = pos;
    while (p < end) {
      bytes.push_back(static_cast<char>(std::stoul(text.substr(p, 4), nullptr, 16)));
      p += 5;
    }
    enc.push_back(bytes);
    pos = end;
  }
  return enc;
}

std::string hex(const std::string& b) {
  std::string s;
  char buf[4];
  for (unsigned char c : b) {
    std::snprintf(buf, sizeof buf, "%02x ", c);
    s += buf;
  }
  return s;
}

TEST(X86Encoder, TableCoversEveryMnemonicAndEnoughForms) {
  const auto lines = table();
  EXPECT_GE(lines.size(), 350u);
  std::set<std::string> used;
  for (const std::string& l : lines) used.insert(l.substr(0, l.find(' ')));
  std::vector<std::string> missing;
  for (int i = 0; i <= static_cast<int>(Mn::kortestw); i++) {
    const std::string name(mnemonic_name(static_cast<Mn>(i)));
    if (!used.count(name) && name[0] != 'j' && name != "call") missing.push_back(name);  // jumps, calls: the listing test
  }
  EXPECT_TRUE(missing.empty()) << "mnemonics without a table line: " << ::testing::PrintToString(missing);
}

TEST(X86Encoder, EveryTableLineMatchesLlvmMcByteForByte) {
  const auto llvm_mc = find_executable({"llvm-mc-19"});
  if (!llvm_mc) GTEST_SKIP() << "llvm-mc-19 is not installed (tools/setup.sh installs llvm-19)";
  const auto lines = table();
  std::string log;
  const auto expected = llvm_encodings(*llvm_mc, lines, log);
  ASSERT_EQ(expected.size(), lines.size()) << "llvm-mc-19 reported " << expected.size() << " encodings for " << lines.size()
                                           << " lines:\n" << log;
  int bad = 0;
  for (size_t i = 0; i < lines.size(); i++) {
    std::string ours;
    try {
      ours = assemble("f:\n" + lines[i] + "\n").bytes;
    } catch (const std::exception& e) {
      ADD_FAILURE() << lines[i] << ": " << e.what();
      bad++;
      continue;
    }
    if (ours != expected[i]) {
      ADD_FAILURE() << lines[i] << "\n  ours: " << hex(ours) << "\n  llvm: " << hex(expected[i]);
      bad++;
    }
  }
  EXPECT_EQ(bad, 0);
}

}  // namespace
}  // namespace doorbell::x86
