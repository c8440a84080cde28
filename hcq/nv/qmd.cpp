#include "hcq/nv/qmd.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "hcq/nv/bit_field.h"
#include "hcq/nv/nv_classes.h"

namespace doorbell::nv {
namespace {

struct ReleaseFields {
  BitField enable, structure_size, payload64b, addr_lower, addr_upper, payload_lower, payload_upper;
};

// Where each QmdLaunch field lives in one QMD version. A field with an empty name does not exist in that version.
struct QmdLayout {
  std::string_view version;
  size_t words;
  uint32_t major;
  BitField major_version, minor_version, qmd_group_id, qmd_type, sm_global_caching_enable;
  BitField api_visible_call_limit, cwd_membar_type;
  BitField invalidate_texture_header_cache, invalidate_texture_sampler_cache, invalidate_texture_data_cache,
      invalidate_shader_data_cache;
  BitField program_address_lower, program_address_upper;
  BitField program_prefetch_addr_lower_shifted, program_prefetch_addr_upper_shifted, program_prefetch_size;
  BitField grid_width, grid_height, grid_depth;
  BitField cta_thread_dimension0, cta_thread_dimension1, cta_thread_dimension2;
  BitField shared_memory_size, min_sm_config_shared_mem_size, max_sm_config_shared_mem_size,
      target_sm_config_shared_mem_size;
  BitField register_count, barrier_count;
  BitField constant_buffer_valid0, constant_buffer_invalidate0, constant_buffer_addr_lower0,
      constant_buffer_addr_upper0, constant_buffer_size_shifted4_0;
  uint32_t constant_buffer_addr_shift;
  // Bit strides of the indexed (i) forms of the fields above: VALID(i), INVALIDATE(i); ADDR and SIZE step by 64.
  uint32_t constant_buffer_valid_stride, constant_buffer_invalidate_stride;
  ReleaseFields release[kQmdReleases];
  BitField dependent_qmd0_enable, dependent_qmd0_action, dependent_qmd0_prefetch, dependent_qmd0_pointer;
  BitField shader_local_memory_low_size, shader_local_memory_high_size, sass_version;
};

constexpr BitField kAbsent{"", 0, 0};
bool present(const BitField& f) { return !f.name.empty(); }

// Values shared by both versions (clcbc0qmd.h, clc6c0qmd.h).
constexpr uint32_t kApiVisibleCallLimitNoCheck = 1;
constexpr uint32_t kCwdMembarTypeL1Sysmembar = 1;
constexpr uint32_t kReleaseStructureFourWords = 0;
constexpr uint32_t kReleaseStructureOneWord = 1;
constexpr uint32_t kReleaseStructureTwoWords = 2;

#define V4(name, hi, lo) BitField{"NVCBC0_QMDV04_00_" #name, hi, lo}

// open-gpu-doc classes/compute/clcbc0qmd.h, NVCBC0_QMDV04_00_* (MW(hi:lo)); indexed fields at i = 0..2 expanded
// from their (base + i*stride) formulas.
constexpr QmdLayout kV04{
    .version = "V04_00",
    .words = kQmdV04Words,
    .major = 4,
    .major_version = V4(QMD_MAJOR_VERSION, 583, 580),
    .minor_version = V4(QMD_MINOR_VERSION, 579, 576),
    .qmd_group_id = V4(QMD_GROUP_ID, 21, 16),
    .qmd_type = V4(QMD_TYPE, 25, 23),
    .sm_global_caching_enable = kAbsent,
    .api_visible_call_limit = V4(API_VISIBLE_CALL_LIMIT, 568, 568),
    .cwd_membar_type = V4(CWD_MEMBAR_TYPE, 1137, 1136),
    .invalidate_texture_header_cache = V4(INVALIDATE_TEXTURE_HEADER_CACHE, 602, 602),
    .invalidate_texture_sampler_cache = V4(INVALIDATE_TEXTURE_SAMPLER_CACHE, 603, 603),
    .invalidate_texture_data_cache = V4(INVALIDATE_TEXTURE_DATA_CACHE, 604, 604),
    .invalidate_shader_data_cache = V4(INVALIDATE_SHADER_DATA_CACHE, 605, 605),
    .program_address_lower = V4(PROGRAM_ADDRESS_LOWER, 1247, 1216),
    .program_address_upper = V4(PROGRAM_ADDRESS_UPPER, 1272, 1248),
    .program_prefetch_addr_lower_shifted = V4(PROGRAM_PREFETCH_ADDR_LOWER_SHIFTED, 1375, 1344),
    .program_prefetch_addr_upper_shifted = V4(PROGRAM_PREFETCH_ADDR_UPPER_SHIFTED, 1392, 1376),
    .program_prefetch_size = V4(PROGRAM_PREFETCH_SIZE, 1401, 1393),
    .grid_width = V4(GRID_WIDTH, 1055, 1024),
    .grid_height = V4(GRID_HEIGHT, 1071, 1056),
    .grid_depth = V4(GRID_DEPTH, 1103, 1088),
    .cta_thread_dimension0 = V4(CTA_THREAD_DIMENSION0, 1167, 1152),
    .cta_thread_dimension1 = V4(CTA_THREAD_DIMENSION1, 1183, 1168),
    .cta_thread_dimension2 = V4(CTA_THREAD_DIMENSION2, 1199, 1184),
    .shared_memory_size = V4(SHARED_MEMORY_SIZE, 601, 584),
    .min_sm_config_shared_mem_size = V4(MIN_SM_CONFIG_SHARED_MEM_SIZE, 613, 608),
    .max_sm_config_shared_mem_size = V4(MAX_SM_CONFIG_SHARED_MEM_SIZE, 619, 614),
    .target_sm_config_shared_mem_size = V4(TARGET_SM_CONFIG_SHARED_MEM_SIZE, 625, 620),
    .register_count = V4(REGISTER_COUNT, 1208, 1200),
    .barrier_count = V4(BARRIER_COUNT, 1215, 1211),
    .constant_buffer_valid0 = V4(CONSTANT_BUFFER_VALID(0), 416, 416),
    .constant_buffer_invalidate0 = V4(CONSTANT_BUFFER_INVALIDATE(0), 419, 419),
    .constant_buffer_addr_lower0 = V4(CONSTANT_BUFFER_ADDR_LOWER_SHIFTED6(0), 1567, 1536),
    .constant_buffer_addr_upper0 = V4(CONSTANT_BUFFER_ADDR_UPPER_SHIFTED6(0), 1586, 1568),
    .constant_buffer_size_shifted4_0 = V4(CONSTANT_BUFFER_SIZE_SHIFTED4(0), 1599, 1587),
    .constant_buffer_addr_shift = 6,
    .constant_buffer_valid_stride = 4,       // MW((416+(i)*4):(416+(i)*4)), clcbc0qmd.h:407
    .constant_buffer_invalidate_stride = 4,  // MW((419+(i)*4):(419+(i)*4)), clcbc0qmd.h:414
    .release =
        {
            {V4(RELEASE_ENABLE(0), 320, 320), V4(RELEASE_STRUCTURE_SIZE(0), 322, 321),
             V4(RELEASE_PAYLOAD64B(0), 332, 332), V4(RELEASE_SEMAPHORE0_ADDR_LOWER, 671, 640),
             V4(RELEASE_SEMAPHORE0_ADDR_UPPER, 696, 672), V4(RELEASE_SEMAPHORE0_PAYLOAD_LOWER, 735, 704),
             V4(RELEASE_SEMAPHORE0_PAYLOAD_UPPER, 767, 736)},
            {V4(RELEASE_ENABLE(1), 336, 336), V4(RELEASE_STRUCTURE_SIZE(1), 338, 337),
             V4(RELEASE_PAYLOAD64B(1), 348, 348), V4(RELEASE_SEMAPHORE1_ADDR_LOWER, 799, 768),
             V4(RELEASE_SEMAPHORE1_ADDR_UPPER, 824, 800), V4(RELEASE_SEMAPHORE1_PAYLOAD_LOWER, 863, 832),
             V4(RELEASE_SEMAPHORE1_PAYLOAD_UPPER, 895, 864)},
            {V4(RELEASE_ENABLE(2), 352, 352), V4(RELEASE_STRUCTURE_SIZE(2), 354, 353),
             V4(RELEASE_PAYLOAD64B(2), 364, 364), V4(RELEASE_SEMAPHORE2_ADDR_LOWER, 927, 896),
             V4(RELEASE_SEMAPHORE2_ADDR_UPPER, 952, 928), V4(RELEASE_SEMAPHORE2_PAYLOAD_LOWER, 991, 960),
             V4(RELEASE_SEMAPHORE2_PAYLOAD_UPPER, 1023, 992)},
        },
    .dependent_qmd0_enable = V4(DEPENDENT_QMD_ENABLE(0), 368, 368),
    .dependent_qmd0_action = V4(DEPENDENT_QMD_ACTION(0), 371, 369),
    .dependent_qmd0_prefetch = V4(DEPENDENT_QMD_PREFETCH(0), 372, 372),
    .dependent_qmd0_pointer = V4(DEPENDENT_QMD0_POINTER, 479, 448),
    .shader_local_memory_low_size = V4(SHADER_LOCAL_MEMORY_LOW_SIZE, 535, 512),
    .shader_local_memory_high_size = V4(SHADER_LOCAL_MEMORY_HIGH_SIZE, 567, 544),
    .sass_version = V4(SASS_VERSION, 543, 536),
};
#undef V4

#define V3(name, hi, lo) BitField{"NVC6C0_QMDV03_00_" #name, hi, lo}

// open-gpu-doc classes/compute/clc6c0qmd.h, NVC6C0_QMDV03_00_* (MW(hi:lo)); clc9c0qmd.h has the same positions.
// GRID_* here are the CTA_RASTER_* fields (V04 renamed them).
constexpr QmdLayout kV03{
    .version = "V03_00",
    .words = kQmdV03Words,
    .major = 3,
    .major_version = V3(QMD_MAJOR_VERSION, 583, 580),
    .minor_version = V3(QMD_VERSION, 579, 576),
    .qmd_group_id = V3(QMD_GROUP_ID, 133, 128),
    .qmd_type = kAbsent,
    .sm_global_caching_enable = V3(SM_GLOBAL_CACHING_ENABLE, 134, 134),
    .api_visible_call_limit = V3(API_VISIBLE_CALL_LIMIT, 378, 378),
    .cwd_membar_type = V3(CWD_MEMBAR_TYPE, 369, 368),
    .invalidate_texture_header_cache = V3(INVALIDATE_TEXTURE_HEADER_CACHE, 186, 186),
    .invalidate_texture_sampler_cache = V3(INVALIDATE_TEXTURE_SAMPLER_CACHE, 187, 187),
    .invalidate_texture_data_cache = V3(INVALIDATE_TEXTURE_DATA_CACHE, 188, 188),
    .invalidate_shader_data_cache = V3(INVALIDATE_SHADER_DATA_CACHE, 189, 189),
    .program_address_lower = V3(PROGRAM_ADDRESS_LOWER, 1567, 1536),
    .program_address_upper = V3(PROGRAM_ADDRESS_UPPER, 1584, 1568),
    .program_prefetch_addr_lower_shifted = V3(PROGRAM_PREFETCH_ADDR_LOWER_SHIFTED, 287, 256),
    .program_prefetch_addr_upper_shifted = V3(PROGRAM_PREFETCH_ADDR_UPPER_SHIFTED, 1640, 1632),
    .program_prefetch_size = V3(PROGRAM_PREFETCH_SIZE, 1649, 1641),
    .grid_width = V3(CTA_RASTER_WIDTH, 415, 384),
    .grid_height = V3(CTA_RASTER_HEIGHT, 431, 416),
    .grid_depth = V3(CTA_RASTER_DEPTH, 463, 448),
    .cta_thread_dimension0 = V3(CTA_THREAD_DIMENSION0, 607, 592),
    .cta_thread_dimension1 = V3(CTA_THREAD_DIMENSION1, 623, 608),
    .cta_thread_dimension2 = V3(CTA_THREAD_DIMENSION2, 639, 624),
    .shared_memory_size = V3(SHARED_MEMORY_SIZE, 561, 544),
    .min_sm_config_shared_mem_size = V3(MIN_SM_CONFIG_SHARED_MEM_SIZE, 567, 562),
    .max_sm_config_shared_mem_size = V3(MAX_SM_CONFIG_SHARED_MEM_SIZE, 574, 569),
    .target_sm_config_shared_mem_size = V3(TARGET_SM_CONFIG_SHARED_MEM_SIZE, 662, 657),
    .register_count = V3(REGISTER_COUNT_V, 656, 648),
    .barrier_count = V3(BARRIER_COUNT, 767, 763),
    .constant_buffer_valid0 = V3(CONSTANT_BUFFER_VALID(0), 640, 640),
    .constant_buffer_invalidate0 = V3(CONSTANT_BUFFER_INVALIDATE(0), 1074, 1074),
    .constant_buffer_addr_lower0 = V3(CONSTANT_BUFFER_ADDR_LOWER(0), 1055, 1024),
    .constant_buffer_addr_upper0 = V3(CONSTANT_BUFFER_ADDR_UPPER(0), 1072, 1056),
    .constant_buffer_size_shifted4_0 = V3(CONSTANT_BUFFER_SIZE_SHIFTED4(0), 1087, 1075),
    .constant_buffer_addr_shift = 0,
    .constant_buffer_valid_stride = 1,        // MW((640+(i)*1):(640+(i)*1)), clc6c0qmd.h:606
    .constant_buffer_invalidate_stride = 64,  // MW((1074+(i)*64):(1074+(i)*64)), clc6c0qmd.h:698
    .release =
        {
            {V3(RELEASE0_ENABLE, 823, 823), V3(RELEASE0_STRUCTURE_SIZE, 831, 830), V3(RELEASE0_PAYLOAD64B, 829, 829),
             V3(RELEASE0_ADDRESS_LOWER, 799, 768), V3(RELEASE0_ADDRESS_UPPER, 807, 800),
             V3(RELEASE0_PAYLOAD_LOWER, 863, 832), V3(RELEASE0_PAYLOAD_UPPER, 895, 864)},
            {V3(RELEASE1_ENABLE, 951, 951), V3(RELEASE1_STRUCTURE_SIZE, 959, 958), V3(RELEASE1_PAYLOAD64B, 957, 957),
             V3(RELEASE1_ADDRESS_LOWER, 927, 896), V3(RELEASE1_ADDRESS_UPPER, 935, 928),
             V3(RELEASE1_PAYLOAD_LOWER, 991, 960), V3(RELEASE1_PAYLOAD_UPPER, 1023, 992)},
            {V3(RELEASE2_ENABLE, 1719, 1719), V3(RELEASE2_STRUCTURE_SIZE, 1727, 1726),
             V3(RELEASE2_PAYLOAD64B, 1725, 1725), V3(RELEASE2_ADDRESS_LOWER, 1695, 1664),
             V3(RELEASE2_ADDRESS_UPPER, 1703, 1696), V3(RELEASE2_PAYLOAD_LOWER, 1759, 1728),
             V3(RELEASE2_PAYLOAD_UPPER, 1791, 1760)},
        },
    .dependent_qmd0_enable = V3(DEPENDENT_QMD0_ENABLE, 512, 512),
    .dependent_qmd0_action = V3(DEPENDENT_QMD0_ACTION, 515, 513),
    .dependent_qmd0_prefetch = V3(DEPENDENT_QMD0_PREFETCH, 516, 516),
    .dependent_qmd0_pointer = V3(DEPENDENT_QMD0_POINTER, 511, 480),
    .shader_local_memory_low_size = V3(SHADER_LOCAL_MEMORY_LOW_SIZE, 759, 736),
    .shader_local_memory_high_size = V3(SHADER_LOCAL_MEMORY_HIGH_SIZE, 1623, 1600),
    .sass_version = V3(SASS_VERSION, 1663, 1656),
};
#undef V3

std::string prefix(const QmdLayout& layout) { return "QMD " + std::string(layout.version) + ": "; }

void require_nonzero(const QmdLayout& layout, const char* what, uint32_t value) {
  if (value == 0) {
    throw std::invalid_argument(prefix(layout) + what + " is 0; expected at least 1");
  }
}

// bytes -> bytes / 4096 + 1 (NAK gv100_sm_config_smem_size, tinygrad); 0 leaves the field 0.
uint32_t sm_config_encoding(const QmdLayout& layout, const char* what, uint32_t bytes) {
  if (bytes == 0) return 0;
  if (bytes % 4096 != 0) {
    throw std::invalid_argument(prefix(layout) + what + " " + std::to_string(bytes) +
                                " bytes is not a multiple of 4096; the field counts 4 KiB units");
  }
  return bytes / 4096 + 1;
}
uint32_t sm_config_bytes(uint64_t field) { return field == 0 ? 0 : static_cast<uint32_t>((field - 1) * 4096); }

uint32_t release_structure(const QmdRelease& r) {
  if (r.timestamp) return kReleaseStructureFourWords;
  return r.payload64 ? kReleaseStructureTwoWords : kReleaseStructureOneWord;
}

void encode_release(const QmdLayout& layout, std::span<uint32_t> w, size_t i, const QmdRelease& r) {
  if (!r.enable) return;
  const ReleaseFields& f = layout.release[i];
  const std::string what = prefix(layout) + "release " + std::to_string(i) + " address";
  require_aligned(what, r.address, r.timestamp ? 16 : r.payload64 ? 8 : 4);
  if (!r.payload64 && r.payload > 0xffffffffu) {
    throw std::invalid_argument(prefix(layout) + "release " + std::to_string(i) +
                                " payload does not fit 32 bits; expected payload64 for a 64-bit value");
  }
  set_field(w, f.enable, 1);
  set_field(w, f.structure_size, release_structure(r));
  set_field(w, f.payload64b, r.payload64 ? 1 : 0);
  set_field(w, f.addr_lower, r.address & 0xffffffffu);
  set_field(w, f.addr_upper, r.address >> 32);
  set_field(w, f.payload_lower, r.payload & 0xffffffffu);
  set_field(w, f.payload_upper, r.payload64 ? r.payload >> 32 : 0);
}

// Field (0) of an indexed constant-buffer field moved to index i; the name says which bank.
struct IndexedField {
  std::string name;
  BitField field;
  IndexedField(const BitField& zero, uint32_t i, uint32_t stride)
      : name(std::string(zero.name.substr(0, zero.name.rfind("(0)"))) + "(" + std::to_string(i) + ")"),
        field{name, zero.hi + i * stride, zero.lo + i * stride} {}
  IndexedField(const IndexedField&) = delete;
};

void encode_constant_buffer(const QmdLayout& L, std::span<uint32_t> w, uint32_t i, const QmdConstantBuffer& b) {
  if (b.size == 0) {
    if (b.address != 0) {
      throw std::invalid_argument(prefix(L) + "constant buffer " + std::to_string(i) +
                                  " has an address but size 0; expected a size");
    }
    return;
  }
  const uint32_t shift = L.constant_buffer_addr_shift;
  require_aligned(prefix(L) + "constant buffer " + std::to_string(i) + " address", b.address, uint64_t{1} << shift);
  const uint64_t address = b.address >> shift;
  set_field(w, IndexedField(L.constant_buffer_valid0, i, L.constant_buffer_valid_stride).field, 1);
  set_field(w, IndexedField(L.constant_buffer_invalidate0, i, L.constant_buffer_invalidate_stride).field, 1);
  set_field(w, IndexedField(L.constant_buffer_addr_lower0, i, 64).field, address & 0xffffffffu);
  set_field(w, IndexedField(L.constant_buffer_addr_upper0, i, 64).field, address >> 32);
  set_field(w, IndexedField(L.constant_buffer_size_shifted4_0, i, 64).field, (uint64_t{b.size} + 15) >> 4);
}

void encode_into(const QmdLayout& L, std::span<uint32_t> w, const QmdLaunch& q) {
  require_nonzero(L, "grid_x", q.grid_x);
  require_nonzero(L, "grid_y", q.grid_y);
  require_nonzero(L, "grid_z", q.grid_z);
  require_nonzero(L, "block_x", q.block_x);
  require_nonzero(L, "block_y", q.block_y);
  require_nonzero(L, "block_z", q.block_z);

  set_field(w, L.major_version, L.major);
  set_field(w, L.minor_version, 0);
  set_field(w, L.qmd_group_id, q.qmd_group_id);
  if (present(L.qmd_type)) set_field(w, L.qmd_type, q.qmd_type);
  if (present(L.sm_global_caching_enable)) set_field(w, L.sm_global_caching_enable, 1);
  set_field(w, L.api_visible_call_limit, kApiVisibleCallLimitNoCheck);
  set_field(w, L.cwd_membar_type, kCwdMembarTypeL1Sysmembar);
  if (q.invalidate_caches) {
    set_field(w, L.invalidate_texture_header_cache, 1);
    set_field(w, L.invalidate_texture_sampler_cache, 1);
    set_field(w, L.invalidate_texture_data_cache, 1);
    set_field(w, L.invalidate_shader_data_cache, 1);
  }

  set_field(w, L.program_address_lower, q.program_address & 0xffffffffu);
  set_field(w, L.program_address_upper, q.program_address >> 32);
  if (q.program_prefetch_size != 0) {
    // PROGRAM_PREFETCH_ADDR_*_SHIFTED hold address >> 8 split at bit 32 of the shifted value; the size counts
    // 256-byte blocks (rounded up so the first instructions are covered) and is clamped to the 9-bit field.
    const uint64_t shifted = q.program_address >> 8;
    set_field(w, L.program_prefetch_addr_lower_shifted, shifted & 0xffffffffu);
    set_field(w, L.program_prefetch_addr_upper_shifted, shifted >> 32);
    const uint64_t blocks = (uint64_t{q.program_prefetch_size} + 255) / 256;
    set_field(w, L.program_prefetch_size, std::min<uint64_t>(blocks, L.program_prefetch_size.max_value()));
  }

  set_field(w, L.grid_width, q.grid_x);
  set_field(w, L.grid_height, q.grid_y);
  set_field(w, L.grid_depth, q.grid_z);
  set_field(w, L.cta_thread_dimension0, q.block_x);
  set_field(w, L.cta_thread_dimension1, q.block_y);
  set_field(w, L.cta_thread_dimension2, q.block_z);

  set_field(w, L.shared_memory_size, q.shared_memory_size);
  set_field(w, L.min_sm_config_shared_mem_size,
            sm_config_encoding(L, "sm_config_shared_memory_min", q.sm_config_shared_memory_min));
  set_field(w, L.max_sm_config_shared_mem_size,
            sm_config_encoding(L, "sm_config_shared_memory_max", q.sm_config_shared_memory_max));
  set_field(w, L.target_sm_config_shared_mem_size,
            sm_config_encoding(L, "sm_config_shared_memory_target", q.sm_config_shared_memory_target));
  set_field(w, L.register_count, q.register_count);
  set_field(w, L.barrier_count, q.barrier_count);

  if (q.constant_buffer0_size != 0) {
    const uint32_t shift = L.constant_buffer_addr_shift;
    require_aligned(prefix(L) + "constant buffer 0 address", q.constant_buffer0_address, uint64_t{1} << shift);
    const uint64_t address = q.constant_buffer0_address >> shift;
    set_field(w, L.constant_buffer_valid0, 1);
    set_field(w, L.constant_buffer_invalidate0, 1);
    set_field(w, L.constant_buffer_addr_lower0, address & 0xffffffffu);
    set_field(w, L.constant_buffer_addr_upper0, address >> 32);
    set_field(w, L.constant_buffer_size_shifted4_0, (uint64_t{q.constant_buffer0_size} + 15) >> 4);
  } else if (q.constant_buffer0_address != 0) {
    throw std::invalid_argument(prefix(L) + "constant buffer 0 has an address but size 0; expected a size");
  }

  if (q.constant_buffers[0] != QmdConstantBuffer{}) {
    throw std::invalid_argument(prefix(L) + "constant_buffers[0] is set; bank 0 is constant_buffer0_address/size");
  }
  for (uint32_t i = 1; i < kQmdConstantBuffers; ++i) encode_constant_buffer(L, w, i, q.constant_buffers[i]);

  for (size_t i = 0; i < kQmdReleases; ++i) encode_release(L, w, i, q.releases[i]);

  if (q.dependent_qmd_address != 0) {
    require_aligned(prefix(L) + "dependent QMD address", q.dependent_qmd_address, kQmdAlignment);
    set_field(w, L.dependent_qmd0_enable, 1);
    set_field(w, L.dependent_qmd0_action, q.dependent_qmd_action);
    set_field(w, L.dependent_qmd0_prefetch, 1);
    set_field(w, L.dependent_qmd0_pointer, q.dependent_qmd_address >> 8);
  }

  set_field(w, L.shader_local_memory_low_size, q.shader_local_memory_low_size);
  set_field(w, L.shader_local_memory_high_size, q.shader_local_memory_high_size);
  set_field(w, L.sass_version, q.sass_version);
}

QmdLaunch decode_from(const QmdLayout& L, std::span<const uint32_t> w) {
  if (w.size() != L.words) {
    throw std::invalid_argument(prefix(L) + "decoding " + std::to_string(w.size()) + " words; expected " +
                                std::to_string(L.words));
  }
  const uint64_t major = get_field(w, L.major_version);
  if (major != L.major) {
    throw std::invalid_argument(prefix(L) + "QMD_MAJOR_VERSION is " + std::to_string(major) + "; expected " +
                                std::to_string(L.major));
  }
  auto get32 = [&](const BitField& f) { return static_cast<uint32_t>(get_field(w, f)); };
  QmdLaunch q;
  q.qmd_group_id = get32(L.qmd_group_id);
  q.qmd_type = present(L.qmd_type) ? get32(L.qmd_type) : QmdLaunch{}.qmd_type;
  q.invalidate_caches = get_field(w, L.invalidate_shader_data_cache) != 0;
  q.program_address = get_field(w, L.program_address_lower) | get_field(w, L.program_address_upper) << 32;
  q.program_prefetch_size = get32(L.program_prefetch_size) << 8;
  q.grid_x = get32(L.grid_width);
  q.grid_y = get32(L.grid_height);
  q.grid_z = get32(L.grid_depth);
  q.block_x = get32(L.cta_thread_dimension0);
  q.block_y = get32(L.cta_thread_dimension1);
  q.block_z = get32(L.cta_thread_dimension2);
  q.shared_memory_size = get32(L.shared_memory_size);
  q.sm_config_shared_memory_min = sm_config_bytes(get_field(w, L.min_sm_config_shared_mem_size));
  q.sm_config_shared_memory_max = sm_config_bytes(get_field(w, L.max_sm_config_shared_mem_size));
  q.sm_config_shared_memory_target = sm_config_bytes(get_field(w, L.target_sm_config_shared_mem_size));
  q.register_count = get32(L.register_count);
  q.barrier_count = get32(L.barrier_count);
  if (get_field(w, L.constant_buffer_valid0) != 0) {
    q.constant_buffer0_address =
        (get_field(w, L.constant_buffer_addr_lower0) | get_field(w, L.constant_buffer_addr_upper0) << 32)
        << L.constant_buffer_addr_shift;
    q.constant_buffer0_size = get32(L.constant_buffer_size_shifted4_0) << 4;
  }
  for (uint32_t i = 1; i < kQmdConstantBuffers; ++i) {
    if (get_field(w, IndexedField(L.constant_buffer_valid0, i, L.constant_buffer_valid_stride).field) == 0) continue;
    q.constant_buffers[i].address = (get_field(w, IndexedField(L.constant_buffer_addr_lower0, i, 64).field) |
                                     get_field(w, IndexedField(L.constant_buffer_addr_upper0, i, 64).field) << 32)
                                    << L.constant_buffer_addr_shift;
    q.constant_buffers[i].size =
        static_cast<uint32_t>(get_field(w, IndexedField(L.constant_buffer_size_shifted4_0, i, 64).field) << 4);
  }
  for (size_t i = 0; i < kQmdReleases; ++i) {
    const ReleaseFields& f = L.release[i];
    if (get_field(w, f.enable) == 0) continue;
    QmdRelease& r = q.releases[i];
    r.enable = true;
    r.address = get_field(w, f.addr_lower) | get_field(w, f.addr_upper) << 32;
    r.payload = get_field(w, f.payload_lower) | get_field(w, f.payload_upper) << 32;
    r.timestamp = get_field(w, f.structure_size) == kReleaseStructureFourWords;
    r.payload64 = get_field(w, f.payload64b) != 0;
  }
  if (get_field(w, L.dependent_qmd0_enable) != 0) {
    q.dependent_qmd_address = get_field(w, L.dependent_qmd0_pointer) << 8;
    q.dependent_qmd_action = static_cast<uint32_t>(get_field(w, L.dependent_qmd0_action));
  }
  q.shader_local_memory_low_size = get32(L.shader_local_memory_low_size);
  q.shader_local_memory_high_size = get32(L.shader_local_memory_high_size);
  q.sass_version = get32(L.sass_version);
  return q;
}

}  // namespace

std::array<uint32_t, kQmdV04Words> encode_qmd_v04(const QmdLaunch& launch) {
  std::array<uint32_t, kQmdV04Words> words{};
  encode_into(kV04, words, launch);
  return words;
}

std::array<uint32_t, kQmdV03Words> encode_qmd_v03(const QmdLaunch& launch) {
  std::array<uint32_t, kQmdV03Words> words{};
  encode_into(kV03, words, launch);
  return words;
}

size_t qmd_words(uint32_t compute_class) {
  switch (compute_class) {
    case HOPPER_COMPUTE_A: return kQmdV04Words;
    case AMPERE_COMPUTE_B:
    case ADA_COMPUTE_A: return kQmdV03Words;
  }
  throw std::invalid_argument("QMD: compute class " + hex(compute_class) +
                              " has no QMD encoder; expected HOPPER_COMPUTE_A (0xcbc0), AMPERE_COMPUTE_B (0xc7c0) or "
                              "ADA_COMPUTE_A (0xc9c0)");
}

std::vector<uint32_t> encode_qmd(uint32_t compute_class, const QmdLaunch& launch) {
  if (qmd_words(compute_class) == kQmdV04Words) {
    const auto words = encode_qmd_v04(launch);
    return {words.begin(), words.end()};
  }
  const auto words = encode_qmd_v03(launch);
  return {words.begin(), words.end()};
}

QmdLaunch decode_qmd_v04(std::span<const uint32_t> words) { return decode_from(kV04, words); }
QmdLaunch decode_qmd_v03(std::span<const uint32_t> words) { return decode_from(kV03, words); }

}  // namespace doorbell::nv
