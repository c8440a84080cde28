// Layouts and values: firmware-notes/amd-sdma.md (§N cited per packet).
#include "hcq/amd/sdma.h"

#include <cstdio>
#include <stdexcept>
#include <string>

#include "hcq/amd/encoder_checks.h"

namespace doorbell::amd {
namespace {

using encoder::hex;
using encoder::hi;
using encoder::lo;
using encoder::require_aligned;

// §2: OP[7:0], SUB_OP[15:8].
constexpr uint32_t kOpCopy = 1, kOpIndirect = 4, kOpFence = 5, kOpTrap = 6, kOpPollRegmem = 8, kOpTimestamp = 13;
constexpr uint32_t kSubCopyLinear = 0, kSubTimestampGetGlobal = 2;

}  // namespace

uint64_t sdma_max_copy_bytes(GfxIp ip) {
  // §3: COPY_LINEAR COUNT (bytes - 1) is 30 bits on SDMA 6, 22 bits in the vega10 layout SDMA 4.4.2 uses.
  return ip == GfxIp::kGc11_0 ? uint64_t{1} << 30 : uint64_t{1} << 22;
}

size_t sdma_copy_dwords(GfxIp ip, uint64_t bytes) {
  if (bytes == 0) throw std::invalid_argument("COPY_LINEAR: a copy of 0 bytes (COUNT holds bytes - 1)");
  const uint64_t max = sdma_max_copy_bytes(ip);
  return static_cast<size_t>((bytes + max - 1) / max) * kSdmaCopyLinearDwords;
}

void write_sdma_copy(CmdStream& s, GfxIp ip, uint64_t dst, uint64_t src, uint64_t bytes) {
  // §3: header OP 1 | SUB_OP 0; COUNT = bytes - 1; dword 2 (swizzles and cache policies) 0; src lo/hi; dst lo/hi.
  const size_t dwords = sdma_copy_dwords(ip, bytes);
  if (src + bytes < src || dst + bytes < dst)
    throw std::invalid_argument("COPY_LINEAR: " + std::to_string(bytes) + " bytes from " + hex(src) + " to " + hex(dst) +
                                " wrap around the address space");
  const uint64_t max = sdma_max_copy_bytes(ip);
  s.reserve(dwords, "COPY_LINEAR");
  for (uint64_t done = 0; done < bytes;) {
    const uint64_t n = bytes - done < max ? bytes - done : max;
    s.write(kOpCopy | (kSubCopyLinear << 8));
    s.write(static_cast<uint32_t>(n - 1));
    s.write(0);
    s.write(lo(src + done));
    s.write(hi(src + done));
    s.write(lo(dst + done));
    s.write(hi(dst + done));
    done += n;
  }
  s.commit();
}

void write_sdma_fence(CmdStream& s, GfxIp ip, uint64_t address, uint32_t value) {
  // §4: on SDMA 6 the header carries MTYPE[18:16] = 3 (uncached), as the kernel's sdma_v6_0 fence does; the vega10
  // layout has no header fields.
  require_aligned("FENCE", "address", address, 4);
  s.reserve(kSdmaFenceDwords, "FENCE");
  s.write(kOpFence | (ip == GfxIp::kGc11_0 ? 3u << 16 : 0u));
  s.write(lo(address));
  s.write(hi(address));
  s.write(value);
  s.commit();
}

void write_sdma_poll_regmem(CmdStream& s, uint64_t address, uint32_t function, uint32_t value, uint32_t mask) {
  // §5: header OP 8 | FUNC[30:28] | MEM_POLL 1<<31 (HDP_FLUSH 0); dword 5 INTERVAL[15:0] = 4 | RETRY_COUNT[27:16]
  // = 0xFFF, the kernel's values.
  if (function > 6)
    throw std::invalid_argument("POLL_REGMEM: function " + std::to_string(function) +
                                " is not a compare function (0 always, 1 <, 2 <=, 3 ==, 4 !=, 5 >=, 6 >)");
  require_aligned("POLL_REGMEM", "address", address, 4);
  s.reserve(kSdmaPollRegMemDwords, "POLL_REGMEM");
  s.write(kOpPollRegmem | (function << 28) | (1u << 31));
  s.write(lo(address));
  s.write(hi(address));
  s.write(value);
  s.write(mask);
  s.write(4u | (0xFFFu << 16));
  s.commit();
}

void write_sdma_timestamp(CmdStream& s, uint64_t address) {
  // §6: OP 13 | SUB_OP 2 (GET_GLOBAL); WRITE_ADDR_LO 31:3.
  require_aligned("TIMESTAMP", "address", address, 8);
  s.reserve(kSdmaTimestampDwords, "TIMESTAMP");
  s.write(kOpTimestamp | (kSubTimestampGetGlobal << 8));
  s.write(lo(address));
  s.write(hi(address));
  s.commit();
}

void write_sdma_trap(CmdStream& s, uint32_t context_id) {
  // §7: dword 1 INT_CONTEXT[27:0].
  if (context_id >> 28)
    throw std::invalid_argument("TRAP: context id " + hex(context_id) + " exceeds 28 bits (INT_CONTEXT 27:0)");
  s.reserve(kSdmaTrapDwords, "TRAP");
  s.write(kOpTrap);
  s.write(context_id);
  s.commit();
}

void write_sdma_nops(CmdStream& s, size_t dwords) {
  // §8: a zero dword is a one-dword NOP (OP 0, COUNT 0). Zero NOPs is a valid pad.
  if (dwords == 0) return;
  s.reserve(dwords, "NOP");
  for (size_t i = 0; i < dwords; i++) s.write(0);
  s.commit();
}

void write_sdma_indirect(CmdStream& s, uint64_t address, uint32_t dwords) {
  // §9: header OP 4 (VMID 0 on a user queue); IB base lo/hi (32-byte aligned: the kernel masks the low 5 bits);
  // IB_SIZE[19:0] dwords, a multiple of 8 (the kernel pads IBs to 8 dwords); CSA address 0.
  require_aligned("INDIRECT", "address", address, 32);
  if (dwords == 0 || dwords > 0xFFFFF || dwords % 8)
    throw std::invalid_argument("INDIRECT: size " + std::to_string(dwords) +
                                " dwords is not a nonzero multiple of 8 below 2^20 (IB_SIZE 19:0)");
  s.reserve(kSdmaIndirectDwords, "INDIRECT");
  s.write(kOpIndirect);
  s.write(lo(address));
  s.write(hi(address));
  s.write(dwords);
  s.write(0);
  s.write(0);
  s.commit();
}

}  // namespace doorbell::amd
