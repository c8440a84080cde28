// QMD (Queue Meta Data): the structure in GPU memory that describes one compute grid launch to the compute class.
// SEND_PCAS_A hands the engine its address >> 8, so a QMD is 256-byte aligned. Two layouts:
//   V04_00 (96 words, 384 bytes): HOPPER_COMPUTE_A's native version (Mesa NAK uses it for Hopper), clcbc0qmd.h;
//   V03_00 (64 words, 256 bytes): AMPERE_COMPUTE_B / ADA_COMPUTE_A (tinygrad, NAK), clc6c0qmd.h.
// The encoders are pure: QmdLaunch in, words out. The decoders read the same fields back (the mock GPU launches
// from them). A value that does not fit its field throws std::invalid_argument naming the vendor's field.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace doorbell::nv {

inline constexpr size_t kQmdV04Words = 96;
inline constexpr size_t kQmdV03Words = 64;
inline constexpr uint64_t kQmdAlignment = 256;  // NVCBC0_SEND_PCAS_A_QMD_ADDRESS_SHIFTED8
inline constexpr size_t kQmdReleases = 3;       // V04 RELEASE_*(0..2); V03 RELEASE0, RELEASE1 and RELEASE2
// CONSTANT_BUFFER_*(i), i = 0..7: V04 VALID(i) at 416+4i ends below DEPENDENT_QMD0_POINTER (448), clcbc0qmd.h:407;
// V03 VALID(i) at 640+i and ADDR(i) at 1024+64i below PROGRAM_ADDRESS (1536), clc6c0qmd.h:606, 693.
inline constexpr size_t kQmdConstantBuffers = 8;

// NVCBC0_QMDV04_00_QMD_TYPE values (V04 only; V03 has no such field).
inline constexpr uint32_t NVCBC0_QMDV04_00_QMD_TYPE_QUEUE = 0;
inline constexpr uint32_t NVCBC0_QMDV04_00_QMD_TYPE_GRID_CTA = 2;

// DEPENDENT_QMD_ACTION values (the same in V04 and V03).
inline constexpr uint32_t kDependentQmdActionSchedule = 1;
inline constexpr uint32_t kDependentQmdActionInvalidateCopySchedule = 3;

// A semaphore the engine releases when the grid completes.
struct QmdRelease {
  bool enable = false;
  uint64_t address = 0;  // 16-byte aligned with a timestamp, 8 for a 64-bit payload alone, else 4
  uint64_t payload = 0;
  // STRUCTURE_SIZE: SEMAPHORE_FOUR_WORDS writes the payload at +0 and a timestamp at +8 (our Signal layout);
  // without it, TWO_WORDS (64-bit payload) or ONE_WORD (32-bit payload).
  bool timestamp = true;
  bool payload64 = true;  // RELEASE_PAYLOAD64B
  bool operator==(const QmdRelease&) const = default;
};

// A constant bank other than 0 (c[i]): the bytes the code reads through LDC/ULDC c[i][...].
struct QmdConstantBuffer {
  uint64_t address = 0;  // V04: 64-byte aligned (stored >> 6), as bank 0
  uint32_t size = 0;     // bytes, stored >> 4 rounded up; 0 leaves the bank unbound
  bool operator==(const QmdConstantBuffer&) const = default;
};

struct QmdLaunch {
  uint64_t program_address = 0;  // VA of the first instruction, stored unshifted (V04: 57 bits, V03: 49 bits)
  // Bytes of code to prefetch before launch; stored >> 8 and clamped to the 9-bit field (a hint, so clamping is
  // safe; tinygrad does the same). The prefetch address is program_address >> 8. 0 leaves prefetch off.
  uint32_t program_prefetch_size = 0;
  uint32_t grid_x = 1, grid_y = 1, grid_z = 1;     // CTAs; x is 32 bits, y and z 16 bits
  uint32_t block_x = 1, block_y = 1, block_z = 1;  // threads per CTA, 16 bits each
  uint32_t shared_memory_size = 0;                 // bytes, stored as given (18 bits)
  // SM shared memory carveout, in bytes and multiples of 4 KiB, stored as bytes / 4096 + 1 (the encoding of NAK's
  // gv100_sm_config_smem_size and tinygrad). 0 leaves the field 0.
  uint32_t sm_config_shared_memory_min = 0;
  uint32_t sm_config_shared_memory_max = 0;
  uint32_t sm_config_shared_memory_target = 0;
  uint32_t register_count = 0;  // per thread, 9 bits
  uint32_t barrier_count = 1;   // 5 bits; tinygrad writes 1
  // Constant bank 0 (cbuf 0: driver words, then kernel parameters at the caller's offset, 0x210 on sm_90).
  // V04 stores the address >> 6 (so it must be 64-byte aligned) and both store the size >> 4: the size is rounded
  // up to 16 bytes (NAK writes size >> 4 of an aligned size; NVK aligns cbuf sizes up). Size 0 means no cbuf 0.
  uint64_t constant_buffer0_address = 0;
  uint32_t constant_buffer0_size = 0;
  // Banks 1..7 (VALID, INVALIDATE, ADDR, SIZE_SHIFTED4 at index i; V04 clcbc0qmd.h:407-416, 525-527; V03
  // clc6c0qmd.h:606, 693-701): ptxas puts PTX .const data in bank 3 and global symbols' addresses in bank 4 (sm_90).
  // Entry 0 must stay empty: bank 0 is constant_buffer0_* above.
  std::array<QmdConstantBuffer, kQmdConstantBuffers> constant_buffers{};
  std::array<QmdRelease, kQmdReleases> releases{};
  // A QMD the engine schedules when this grid completes (DEPENDENT_QMD0 with prefetch, as tinygrad chains kernels);
  // stored >> 8, so 256-byte aligned. 0 means none.
  uint64_t dependent_qmd_address = 0;
  // DEPENDENT_QMD_ACTION(0) (clcbc0qmd.h:383-387; clc6c0qmd.h:575-579): QMD_SCHEDULE (1, tinygrad) may launch a copy
  // the scheduler cached from an earlier QMD at the same address; QMD_INVALIDATE_COPY_SCHEDULE (3) reads it afresh.
  uint32_t dependent_qmd_action = kDependentQmdActionSchedule;
  uint32_t shader_local_memory_low_size = 0;   // bytes per thread (NAK puts its SLM size here)
  uint32_t shader_local_memory_high_size = 0;  // bytes per thread (tinygrad puts CUDA's slm_per_thread here)
  uint32_t sass_version = 0;                   // ((sm >> 4) & 0xf0) | (sm & 0xf), e.g. 0x90 for SM 9.0
  uint32_t qmd_group_id = 0x3f;                // tinygrad's value on V03; NAK leaves it 0
  uint32_t qmd_type = NVCBC0_QMDV04_00_QMD_TYPE_GRID_CTA;  // V04 only (ignored by V03); unverified on Hopper
  // INVALIDATE_TEXTURE_HEADER/SAMPLER/DATA_CACHE and INVALIDATE_SHADER_DATA_CACHE at launch (tinygrad sets them).
  bool invalidate_caches = true;

  bool operator==(const QmdLaunch&) const = default;
};

// Fixed policy written by both encoders and not part of QmdLaunch: QMD version, API_VISIBLE_CALL_LIMIT NO_CHECK,
// SAMPLER_INDEX INDEPENDENTLY, CWD_MEMBAR_TYPE L1_SYSMEMBAR (the grid's writes reach system scope before its
// releases), CONSTANT_BUFFER_INVALIDATE(0) with cbuf 0 (its contents change between launches), and on V03
// SM_GLOBAL_CACHING_ENABLE (tinygrad and NAK).
std::array<uint32_t, kQmdV04Words> encode_qmd_v04(const QmdLaunch& launch);
std::array<uint32_t, kQmdV03Words> encode_qmd_v03(const QmdLaunch& launch);

// The QMD for a compute class: V04 for HOPPER_COMPUTE_A, V03 for AMPERE_COMPUTE_B and ADA_COMPUTE_A.
std::vector<uint32_t> encode_qmd(uint32_t compute_class, const QmdLaunch& launch);
size_t qmd_words(uint32_t compute_class);

// Read the fields above back. They throw std::invalid_argument when the span has the wrong size or the QMD's major
// version is not 4 (resp. 3). Fixed-policy bits are not checked.
QmdLaunch decode_qmd_v04(std::span<const uint32_t> words);
QmdLaunch decode_qmd_v03(std::span<const uint32_t> words);

}  // namespace doorbell::nv
