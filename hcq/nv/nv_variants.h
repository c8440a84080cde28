// NvLaunchVariant: the launch choices that public sources leave open for Hopper and that only a GPU can settle. An
// NvDevice launches with its variant (set_launch_variant); the defaults are what it does otherwise. The device
// check's experiments (tools/nv_experiments.h) run a kernel under each alternative on a fresh device.
#pragma once
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <span>
#include <string>

#include "hcq/nv/qmd.h"

namespace doorbell::nv {

// sm_90 code loads c[0][0x208..0x20f] with ULDC.64 and names it as desc[UR] in every LDG/STG; its parameters follow
// at 0x210 (measured with ptxas 13.0: the .text constant operands and EIATTR_PARAM_CBANK).
inline constexpr uint32_t kSm90GlobalDescriptorOffset = 0x208;

// 64-bit L2 cache-policy words CUTLASS passes as `.L2::cache_hint` operands on sm_90 (CUTLASS
// include/cute/arch/copy_sm90_desc.hpp, enum CacheHintSm90); in SASS such an operand is the desc[UR] of a load.
inline constexpr uint64_t kCacheHintSm90EvictNormal = 0x1000000000000000;
inline constexpr uint64_t kCacheHintSm90EvictFirst = 0x12F0000000000000;

struct NvLaunchVariant {
  // V04 QMD_TYPE: GRID_CTA (2) as clcbc0qmd.h describes a grid launch; Mesa NAK leaves QUEUE (0) on V04 (qmd.rs).
  uint32_t qmd_type = NVCBC0_QMDV04_00_QMD_TYPE_GRID_CTA;
  // Registers added to the cubin's EIATTR_REGCOUNT: tinygrad adds none (ops_nv.py:273, :300); Mesa NAK reports its
  // allocation + 2 on SM70+ (nak api.rs, nak_compile_shader: `max(4, num_gprs + 2)`).
  uint32_t register_count_extra = 0;
  // The word at c[0][0x208] on sm_90. tinygrad zero-fills cbuf0 around its driver words, so the same slot of sm_8x
  // (0x118) and sm_100+ (0x358) code reads 0 there (ops_nv.py:285-298).
  uint64_t global_memory_descriptor = 0;
  // WAIT_FOR_IDLE (clcbc0.h 0x110, NVK sends it with data 0) after each compute memory barrier: the next, unchained
  // grid then starts only once the previous ones finished (INVALIDATE_SHADER_CACHES_NO_WFI is by name no wait).
  // On by default (audit M7); the experiment turns it off to see whether hardware orders such grids anyway.
  bool wait_for_idle_after_barrier = true;

  bool operator==(const NvLaunchVariant&) const = default;
};

// "qmd_type 2, registers +0, c[0][0x208] 0x0, WAIT_FOR_IDLE after barriers"
inline std::string describe(const NvLaunchVariant& v) {
  char line[160];
  std::snprintf(line, sizeof line, "qmd_type %u, registers +%u, c[0][0x208] 0x%llx, %s after barriers", v.qmd_type,
                v.register_count_extra, static_cast<unsigned long long>(v.global_memory_descriptor),
                v.wait_for_idle_after_barrier ? "WAIT_FOR_IDLE" : "no WAIT_FOR_IDLE");
  return line;
}

// Applies `v` to one launch: its QMD fields, and the descriptor word in `cbuf0` when the parameters start past it
// (sm_90 code; sm_8x parameters start at 0x160, where 0x208 is a parameter).
inline void apply_launch_variant(const NvLaunchVariant& v, QmdLaunch& q, std::span<uint8_t> cbuf0, uint32_t param_offset) {
  q.qmd_type = v.qmd_type;
  q.register_count += v.register_count_extra;
  if (param_offset >= kSm90GlobalDescriptorOffset + 8 && cbuf0.size() >= kSm90GlobalDescriptorOffset + 8)
    std::memcpy(cbuf0.data() + kSm90GlobalDescriptorOffset, &v.global_memory_descriptor, 8);
}

}  // namespace doorbell::nv
