// The cubin image a kernel loads from: code first, then global data and constant banks 1..7, with the relocations
// ptxas emits applied for the image's GPU address; and what the launch needs (constant banks for the QMD, local memory
// per thread for a stack). Cubins come from NVIDIA's ptxas (skipped without it) for small PTX kernels: a .const
// array (ptxas puts it in .nv.constant3) and .global symbols (their addresses in .nv.constant4, R_CUDA_64), a brx.idx
// jump table (the kernel's own .nv.constant2.<name>), and a local array indexed dynamically (a stack frame).
#include <gtest/gtest.h>

#include <cstring>

#include "compiler/gpu/cubin_reader.h"
#include "compiler/gpu/ptxas.h"
#include "hcq/nv/cubin_image.h"

namespace doorbell::nv {
namespace {

#define REQUIRE_PTXAS() \
  if (!ptxas_available()) GTEST_SKIP() << "ptxas not found on PATH or in /usr/local/cuda/bin: no cubin to load"

// out[0] = tab[i] + gv[i]; out[1..2] = the addresses of gz and gv.
std::string const_and_global_ptx(const std::string& arch) {
  return R"(.version 8.0
.target )" + arch + R"(
.address_size 64
.const .align 4 .b32 tab[4] = {1, 2, 3, 4};
.global .align 4 .b32 gv[4] = {5, 6, 7, 8};
.global .align 8 .b32 gz[4];
.visible .entry k(.param .u64 out, .param .u32 i)
{
  .reg .b32 r<6>;
  .reg .b64 rd<8>;
  ld.param.u64 rd1, [out];
  ld.param.u32 r1, [i];
  mul.wide.u32 rd2, r1, 4;
  mov.u64 rd3, tab;
  add.s64 rd4, rd3, rd2;
  ld.const.u32 r2, [rd4];
  mov.u64 rd5, gv;
  add.s64 rd6, rd5, rd2;
  ld.global.u32 r3, [rd6];
  add.s32 r4, r2, r3;
  st.global.u32 [rd1], r4;
  st.global.u64 [rd1+8], rd5;
  mov.u64 rd7, gz;
  st.global.u64 [rd1+16], rd7;
  ret;
}
)";
}

// out[0] = arr[i ^ 7] after arr[i] = i: a local array indexed at run time lives in a stack frame.
const char* kLocalArrayPtx = R"(.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 out, .param .u32 i)
{
  .local .align 4 .b8 arr[256];
  .reg .b32 r<8>;
  .reg .b64 rd<2>;
  ld.param.u64 rd1, [out];
  ld.param.u32 r1, [i];
  mov.u32 r2, arr;
  shl.b32 r3, r1, 2;
  add.u32 r4, r2, r3;
  st.local.u32 [r4], r1;
  xor.b32 r5, r3, 28;
  add.u32 r6, r2, r5;
  ld.local.u32 r7, [r6];
  st.global.u32 [rd1], r7;
  ret;
}
)";

// out[0] = {10, 21, 32, 43}[i] through brx.idx: ptxas puts the jump table in .nv.constant2.k.
const char* kJumpTablePtx = R"(.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 out, .param .u32 i)
{
  .reg .b32 r<4>;
  .reg .b64 rd<2>;
  ld.param.u64 rd1, [out];
  ld.param.u32 r1, [i];
  ts: .branchtargets L0, L1, L2, L3;
  brx.idx r1, ts;
L0: mov.u32 r2, 10; bra.uni E;
L1: mov.u32 r2, 21; bra.uni E;
L2: mov.u32 r2, 32; bra.uni E;
L3: mov.u32 r2, 43; bra.uni E;
E:
  st.global.u32 [rd1], r2;
  ret;
}
)";

uint64_t load64(const std::string& bytes, uint64_t at) {
  uint64_t v;
  std::memcpy(&v, bytes.data() + at, 8);
  return v;
}
uint32_t load32(const std::string& bytes, uint64_t at) {
  uint32_t v;
  std::memcpy(&v, bytes.data() + at, 4);
  return v;
}

const CubinConstantBank* bank(const CubinImage& image, uint32_t index) {
  for (const CubinConstantBank& b : image.constant_banks)
    if (b.index == index) return &b;
  return nullptr;
}

constexpr uint64_t kVa = 0x7fff00012300ull & ~uint64_t{0xff};

void expect_const_and_global_image(const std::string& arch) {
  const std::string cubin = assemble_ptx(const_and_global_ptx(arch), arch).cubin;
  const CubinImage image = make_cubin_image(cubin, "k");
  const Cubin parsed = read_cubin(cubin);
  EXPECT_EQ(image.code_bytes, parsed.kernel("k").text_size);
  EXPECT_EQ(image.unpatched.substr(0, image.code_bytes), cubin.substr(parsed.kernel("k").text_offset, image.code_bytes))
      << "the code first, unchanged";
  const CubinConstantBank* c3 = bank(image, 3);
  ASSERT_NE(c3, nullptr) << "the .const array's bank";
  EXPECT_EQ(c3->section, ".nv.constant3");
  ASSERT_EQ(c3->size, 16u);
  EXPECT_EQ(c3->offset % 256, 0u);
  const std::string bytes = image.bytes_at(kVa);
  for (uint32_t i = 0; i < 4; ++i) EXPECT_EQ(load32(bytes, c3->offset + 4 * i), i + 1);
  const CubinConstantBank* c4 = bank(image, 4);
  ASSERT_NE(c4, nullptr) << "the bank of global symbols' addresses";
  ASSERT_EQ(c4->size, 16u);
  EXPECT_EQ(image.unpatched.substr(c4->offset, 16), std::string(16, '\0')) << "ptxas leaves the addresses to the loader";
  // Both addresses point into the image: gv at its initial data {5, 6, 7, 8}, gz at 16 zero bytes.
  int initialized = 0, zeroed = 0;
  for (uint64_t at : {c4->offset, c4->offset + 8}) {
    const uint64_t va = load64(bytes, at);
    ASSERT_GE(va, kVa);
    ASSERT_LE(va + 16, kVa + image.size) << "a relocated address outside the image";
    const uint64_t off = va - kVa;
    if (load32(bytes, off) == 5) {
      ++initialized;
      for (uint32_t i = 0; i < 4; ++i) EXPECT_EQ(load32(bytes, off + 4 * i), 5 + i);
    } else {
      ++zeroed;
      EXPECT_EQ(bytes.substr(off, 16), std::string(16, '\0'));
    }
  }
  EXPECT_EQ(initialized, 1);
  EXPECT_EQ(zeroed, 1);
  EXPECT_EQ(image.patches.size(), 2u);
  for (const CubinImagePatch& p : image.patches) EXPECT_EQ(p.type, R_CUDA_64);
  EXPECT_NE(load64(image.bytes_at(kVa + 0x100000), c4->offset), load64(bytes, c4->offset)) << "relocated per address";
  EXPECT_EQ(image.local_bytes_per_thread, 0u) << "no stack";
}

TEST(CubinImage, ConstArrayIsBank3AndGlobalAddressesInBank4AreRelocatedSm90) {
  REQUIRE_PTXAS();
  expect_const_and_global_image("sm_90");
}

TEST(CubinImage, ConstArrayIsBank3AndGlobalAddressesInBank4AreRelocatedSm80Rel) {
  REQUIRE_PTXAS();
  expect_const_and_global_image("sm_80");  // sm_80 cubins carry .rel sections (no explicit addend)
}

TEST(CubinImage, JumpTableIsTheKernelsOwnBank2) {
  REQUIRE_PTXAS();
  const CubinImage image = make_cubin_image(assemble_ptx(kJumpTablePtx, "sm_90").cubin, "k");
  const CubinConstantBank* c2 = bank(image, 2);
  ASSERT_NE(c2, nullptr);
  EXPECT_EQ(c2->section, ".nv.constant2.k");
  ASSERT_EQ(c2->size, 16u);
  const std::string bytes = image.bytes_at(kVa);
  for (uint32_t i = 0; i < 4; ++i) EXPECT_LT(load32(bytes, c2->offset + 4 * i), image.code_bytes) << "code offsets";
}

TEST(CubinImage, LocalArrayIndexedAtRunTimeNeedsItsStackPlusTheReserveInLocalMemory) {
  REQUIRE_PTXAS();
  const PtxasResult r = assemble_ptx(kLocalArrayPtx, "sm_90");
  const int64_t frame = r.report.functions.at("k").stack_frame_bytes;
  ASSERT_GE(frame, 256) << r.report.text;
  const CubinImage image = make_cubin_image(r.cubin, "k");
  EXPECT_EQ(image.local_bytes_per_thread, (frame + kLocalMemoryReserve + 31) / 32 * 32);
}

// The sm_90 cubin of const_and_global_ptx with the first entry of .rela.nv.constant4 changed by `edit`.
std::string edited_cubin(void (*edit)(std::string& cubin, const Cubin& parsed, uint64_t entry)) {
  std::string cubin = assemble_ptx(const_and_global_ptx("sm_90"), "sm_90").cubin;
  const Cubin parsed = read_cubin(cubin);
  const CubinSection* rela = parsed.section(".rela.nv.constant4");
  if (rela == nullptr) throw std::runtime_error("this ptxas wrote no .rela.nv.constant4");
  edit(cubin, parsed, rela->offset);
  return cubin;
}

TEST(CubinImage, RelocationTypeTheLoaderDoesNotApplyIsRefusedByName) {
  REQUIRE_PTXAS();
  const std::string cubin = edited_cubin([](std::string& c, const Cubin&, uint64_t entry) {
    const uint32_t type = 0x3a;  // R_CUDA_ABS47_34
    std::memcpy(c.data() + entry + 8, &type, 4);
  });
  try {
    make_cubin_image(cubin, "k");
    FAIL() << "expected a refusal";
  } catch (const CubinError& e) {
    EXPECT_NE(std::string(e.what()).find("R_CUDA_ABS47_34 in .rela.nv.constant4"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("kernel 'k'"), std::string::npos) << e.what();
  }
}

TEST(CubinImage, RelocationAgainstASectionTheImageDoesNotLoadIsRefused) {
  REQUIRE_PTXAS();
  const std::string cubin = edited_cubin([](std::string& c, const Cubin& parsed, uint64_t entry) {
    uint32_t symbol = 0;
    while (symbol < parsed.symbols.size() && parsed.symbols[symbol].name != ".debug_frame") ++symbol;
    std::memcpy(c.data() + entry + 12, &symbol, 4);
  });
  EXPECT_THROW(
      {
        try {
          make_cubin_image(cubin, "k");
        } catch (const CubinError& e) {
          EXPECT_NE(std::string(e.what()).find("symbol '.debug_frame' in section .debug_frame, which the image does "
                                               "not load"),
                    std::string::npos)
              << e.what();
          throw;
        }
      },
      CubinError);
}

// ABS32_LO_32 / HI_32 write the low / high half of the address into the upper 32 bits of a 64-bit instruction word
// (tinygrad ops_nv.py); ABS32_32 the whole address, which must fit.
TEST(CubinImage, InstructionRelocationsPatchTheUpperHalfOfTheInstructionWord) {
  CubinImage image;
  image.kernel = "k";
  image.unpatched = std::string(0x300, '\x11');
  image.size = image.unpatched.size();
  image.patches = {{0x10, R_CUDA_ABS32_LO_32, 0x200, 8}, {0x20, R_CUDA_ABS32_HI_32, 0x200, 8}};
  const uint64_t va = 0x123400000100ull;
  const std::string bytes = image.bytes_at(va);
  EXPECT_EQ(load32(bytes, 0x10), 0x11111111u) << "the instruction's lower half stays";
  EXPECT_EQ(load32(bytes, 0x14), 0x00000308u);
  EXPECT_EQ(load32(bytes, 0x24), 0x1234u);
  image.patches = {{0x10, R_CUDA_ABS32_32, 0x200, 0}};
  EXPECT_THROW(image.bytes_at(va), std::invalid_argument) << "0x123400000300 does not fit 32 bits";
  EXPECT_THROW(image.bytes_at(va + 4), std::invalid_argument) << "not 256-byte aligned";
}

TEST(CubinImage, RelocationNamesFollowCuobjdump) {
  EXPECT_EQ(relocation_name(R_CUDA_64), "R_CUDA_64");
  EXPECT_EQ(relocation_name(0x38), "R_CUDA_ABS32_LO_32");
  EXPECT_EQ(relocation_name(0x99), "R_CUDA type 0x99");
}

}  // namespace
}  // namespace doorbell::nv
