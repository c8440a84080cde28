#include "mockgpu/nv/mock_gpu_methods.h"

#include <cstdio>

namespace doorbell::mockgpu::nv::hw {

std::string hex(uint64_t value) {
  char buffer[24];
  std::snprintf(buffer, sizeof buffer, "0x%llx", static_cast<unsigned long long>(value));
  return buffer;
}

ClassKind class_kind(uint32_t class_id) {
  switch (class_id) {
    case HOPPER_CHANNEL_GPFIFO_A:
    case AMPERE_CHANNEL_GPFIFO_A: return ClassKind::kHost;
    case HOPPER_COMPUTE_A:
    case AMPERE_COMPUTE_B:
    case ADA_COMPUTE_A: return ClassKind::kCompute;
    case HOPPER_DMA_COPY_A:
    case AMPERE_DMA_COPY_B: return ClassKind::kCopy;
  }
  return ClassKind::kNone;
}

std::string class_name(uint32_t class_id) {
  const char* name = nullptr;
  switch (class_id) {
    case HOPPER_CHANNEL_GPFIFO_A: name = "HOPPER_CHANNEL_GPFIFO_A"; break;
    case AMPERE_CHANNEL_GPFIFO_A: name = "AMPERE_CHANNEL_GPFIFO_A"; break;
    case HOPPER_COMPUTE_A: name = "HOPPER_COMPUTE_A"; break;
    case AMPERE_COMPUTE_B: name = "AMPERE_COMPUTE_B"; break;
    case ADA_COMPUTE_A: name = "ADA_COMPUTE_A"; break;
    case HOPPER_DMA_COPY_A: name = "HOPPER_DMA_COPY_A"; break;
    case AMPERE_DMA_COPY_B: name = "AMPERE_DMA_COPY_B"; break;
  }
  return name == nullptr ? "class " + hex(class_id) : std::string(name) + " (" + hex(class_id) + ")";
}

GpEntry decode_gp_entry(uint64_t word) {
  const auto entry0 = static_cast<uint32_t>(word);
  const auto entry1 = static_cast<uint32_t>(word >> 32);
  GpEntry entry;
  entry.length_words = get(entry1, NVC86F_GP_ENTRY1_LENGTH);
  entry.pushbuffer_va =
      uint64_t{get(entry1, NVC86F_GP_ENTRY1_GET_HI)} << 32 | uint64_t{get(entry0, NVC86F_GP_ENTRY0_GET)} << 2;
  entry.opcode = entry.length_words == 0 ? get(entry1, NVC86F_GP_ENTRY1_OPCODE) : 0;
  entry.fetch_conditional = get(entry0, NVC86F_GP_ENTRY0_FETCH) != 0;
  entry.subroutine = get(entry1, NVC86F_GP_ENTRY1_LEVEL) != 0;
  entry.sync_wait = get(entry1, NVC86F_GP_ENTRY1_SYNC) != 0;
  return entry;
}

namespace {

struct NamedMethod {
  uint32_t method;
  const char* name;
  bool emulated;
};

// clcbc0.h offsets (those in firmware-notes/nvidia-hopper.md §12 and neighbours); emulated = executed or recorded.
constexpr NamedMethod kComputeMethods[] = {
    {0x0000, "NVCBC0_SET_OBJECT", true},
    {NVCBC0_NO_OPERATION, "NVCBC0_NO_OPERATION", true},
    {NVCBC0_WAIT_FOR_IDLE, "NVCBC0_WAIT_FOR_IDLE", true},
    {0x0140, "NVCBC0_PM_TRIGGER", false},
    {0x0158, "NVCBC0_SET_REPORT_SEMAPHORE_PAYLOAD_LOWER", false},
    {0x015c, "NVCBC0_SET_REPORT_SEMAPHORE_PAYLOAD_UPPER", false},
    {0x0160, "NVCBC0_SET_REPORT_SEMAPHORE_ADDRESS_LOWER", false},
    {0x0164, "NVCBC0_SET_REPORT_SEMAPHORE_ADDRESS_UPPER", false},
    {0x0168, "NVCBC0_REPORT_SEMAPHORE_EXECUTE", false},
    {0x01b0, "NVCBC0_LAUNCH_DMA", false},
    {NVCBC0_INVALIDATE_SHADER_CACHES, "NVCBC0_INVALIDATE_SHADER_CACHES", true},
    {NVCBC0_INVALIDATE_SKED_CACHES, "NVCBC0_INVALIDATE_SKED_CACHES", true},
    {NVCBC0_SET_SHADER_SHARED_MEMORY_WINDOW_A, "NVCBC0_SET_SHADER_SHARED_MEMORY_WINDOW_A", true},
    {NVCBC0_SET_SHADER_SHARED_MEMORY_WINDOW_B, "NVCBC0_SET_SHADER_SHARED_MEMORY_WINDOW_B", true},
    {NVCBC0_SEND_PCAS_A, "NVCBC0_SEND_PCAS_A", true},
    {NVCBC0_SEND_PCAS_B, "NVCBC0_SEND_PCAS_B", false},
    {0x02bc, "NVCBC0_SEND_SIGNALING_PCAS_B", false},
    {NVCBC0_SEND_SIGNALING_PCAS2_B, "NVCBC0_SEND_SIGNALING_PCAS2_B", true},
    {NVCBC0_SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_A, "NVCBC0_SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_A", true},
    {NVCBC0_SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_B, "NVCBC0_SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_B", true},
    {NVCBC0_SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_C, "NVCBC0_SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_C", true},
    {0x0310, "NVCBC0_SET_SPA_VERSION", false},
    {0x0318, "NVCBC0_SET_INLINE_QMD_ADDRESS_A", false},
    {0x031c, "NVCBC0_SET_INLINE_QMD_ADDRESS_B", false},
    {NVCBC0_SET_SHADER_LOCAL_MEMORY_A, "NVCBC0_SET_SHADER_LOCAL_MEMORY_A", true},
    {NVCBC0_SET_SHADER_LOCAL_MEMORY_B, "NVCBC0_SET_SHADER_LOCAL_MEMORY_B", true},
    {NVCBC0_SET_SHADER_LOCAL_MEMORY_WINDOW_A, "NVCBC0_SET_SHADER_LOCAL_MEMORY_WINDOW_A", true},
    {NVCBC0_SET_SHADER_LOCAL_MEMORY_WINDOW_B, "NVCBC0_SET_SHADER_LOCAL_MEMORY_WINDOW_B", true},
    {NVCBC0_INVALIDATE_SHADER_CACHES_NO_WFI, "NVCBC0_INVALIDATE_SHADER_CACHES_NO_WFI", true},
};

// clc8b5.h.
constexpr NamedMethod kCopyMethods[] = {
    {0x0000, "NVC8B5_SET_OBJECT", true},
    {NVC8B5_NOP, "NVC8B5_NOP", true},
    {NVC8B5_PM_TRIGGER, "NVC8B5_PM_TRIGGER", true},
    {0x021c, "NVC8B5_SET_MONITORED_FENCE_TYPE", false},
    {0x0220, "NVC8B5_SET_MONITORED_FENCE_SIGNAL_ADDR_BASE_UPPER", false},
    {0x0224, "NVC8B5_SET_MONITORED_FENCE_SIGNAL_ADDR_BASE_LOWER", false},
    {NVC8B5_SET_SEMAPHORE_A, "NVC8B5_SET_SEMAPHORE_A", true},
    {NVC8B5_SET_SEMAPHORE_B, "NVC8B5_SET_SEMAPHORE_B", true},
    {NVC8B5_SET_SEMAPHORE_PAYLOAD, "NVC8B5_SET_SEMAPHORE_PAYLOAD", true},
    {NVC8B5_SET_SEMAPHORE_PAYLOAD_UPPER, "NVC8B5_SET_SEMAPHORE_PAYLOAD_UPPER", true},
    {NVC8B5_LAUNCH_DMA, "NVC8B5_LAUNCH_DMA", true},
    {NVC8B5_OFFSET_IN_UPPER, "NVC8B5_OFFSET_IN_UPPER", true},
    {NVC8B5_OFFSET_IN_LOWER, "NVC8B5_OFFSET_IN_LOWER", true},
    {NVC8B5_OFFSET_OUT_UPPER, "NVC8B5_OFFSET_OUT_UPPER", true},
    {NVC8B5_OFFSET_OUT_LOWER, "NVC8B5_OFFSET_OUT_LOWER", true},
    {NVC8B5_PITCH_IN, "NVC8B5_PITCH_IN", true},
    {NVC8B5_PITCH_OUT, "NVC8B5_PITCH_OUT", true},
    {NVC8B5_LINE_LENGTH_IN, "NVC8B5_LINE_LENGTH_IN", true},
    {NVC8B5_LINE_COUNT, "NVC8B5_LINE_COUNT", true},
};

// clc86f.h and clc56f.h.
constexpr NamedMethod kHostMethods[] = {
    {NVC86F_SET_OBJECT, "NVC86F_SET_OBJECT", true},
    {NVC56F_NOP, "NVC56F_NOP", true},
    {NVC56F_NON_STALL_INTERRUPT, "NVC56F_NON_STALL_INTERRUPT", true},
    {NVC56F_FB_FLUSH, "NVC56F_FB_FLUSH", true},
    {NVC86F_MEM_OP_A, "NVC86F_MEM_OP_A", true},
    {NVC86F_MEM_OP_B, "NVC86F_MEM_OP_B", true},
    {NVC86F_MEM_OP_C, "NVC86F_MEM_OP_C", true},
    {NVC86F_MEM_OP_D, "NVC86F_MEM_OP_D", true},
    {NVC56F_SET_REFERENCE, "NVC56F_SET_REFERENCE", true},
    {NVC86F_SEM_ADDR_LO, "NVC86F_SEM_ADDR_LO", true},
    {NVC86F_SEM_ADDR_HI, "NVC86F_SEM_ADDR_HI", true},
    {NVC86F_SEM_PAYLOAD_LO, "NVC86F_SEM_PAYLOAD_LO", true},
    {NVC86F_SEM_PAYLOAD_HI, "NVC86F_SEM_PAYLOAD_HI", true},
    {NVC86F_SEM_EXECUTE, "NVC86F_SEM_EXECUTE", true},
    {NVC86F_WFI, "NVC86F_WFI", true},
    {NVC56F_YIELD, "NVC56F_YIELD", true},
};

template <size_t N>
const NamedMethod* find(const NamedMethod (&table)[N], uint32_t method) {
  for (const NamedMethod& m : table) {
    if (m.method == method) return &m;
  }
  return nullptr;
}

const NamedMethod* find_method(ClassKind kind, uint32_t method) {
  switch (kind) {
    case ClassKind::kHost: return find(kHostMethods, method);
    case ClassKind::kCompute: return find(kComputeMethods, method);
    case ClassKind::kCopy: return find(kCopyMethods, method);
    case ClassKind::kNone: break;
  }
  return nullptr;
}

}  // namespace

std::string method_name(uint32_t class_id, uint32_t method) {
  const NamedMethod* m = find_method(class_kind(class_id), method);
  return m == nullptr ? std::string() : std::string(m->name);
}

bool implements(ClassKind kind, uint32_t method) {
  const NamedMethod* m = find_method(kind, method);
  return m != nullptr && m->emulated;
}

uint32_t get(std::span<const uint32_t> qmd, QmdField f) {
  const size_t word = f.lo / 32;
  uint64_t window = qmd[word];
  if (word + 1 < qmd.size()) window |= uint64_t{qmd[word + 1]} << 32;
  const uint32_t width = f.hi - f.lo + 1;
  const uint64_t mask = width >= 32 ? 0xffffffffull : (uint64_t{1} << width) - 1;
  return static_cast<uint32_t>((window >> (f.lo % 32)) & mask);
}

#define V4(name, hi, lo) \
  QmdField { "NVCBC0_QMDV04_00_" name, hi, lo }
// V04 release i: RELEASE_*(i) at 320 + 16i (clcbc0qmd.h), RELEASE_SEMAPHORE<i>_* at 640 + 128i.
#define V4_RELEASE(i)                                                                  \
  QmdReleaseFields {                                                                   \
    V4("RELEASE_ENABLE(" #i ")", 320 + 16 * (i), 320 + 16 * (i)),                      \
        V4("RELEASE_STRUCTURE_SIZE(" #i ")", 322 + 16 * (i), 321 + 16 * (i)),          \
        V4("RELEASE_PAYLOAD64B(" #i ")", 332 + 16 * (i), 332 + 16 * (i)),              \
        V4("RELEASE_REDUCTION_ENABLE(" #i ")", 324 + 16 * (i), 324 + 16 * (i)),        \
        V4("RELEASE_SEMAPHORE" #i "_ADDR_LOWER", 671 + 128 * (i), 640 + 128 * (i)),    \
        V4("RELEASE_SEMAPHORE" #i "_ADDR_UPPER", 696 + 128 * (i), 672 + 128 * (i)),    \
        V4("RELEASE_SEMAPHORE" #i "_PAYLOAD_LOWER", 735 + 128 * (i), 704 + 128 * (i)), \
        V4("RELEASE_SEMAPHORE" #i "_PAYLOAD_UPPER", 767 + 128 * (i), 736 + 128 * (i))  \
  }

// NVIDIA/open-gpu-doc classes/compute/clcbc0qmd.h, NVCBC0_QMDV04_00_* (MW(hi:lo)), 3072 bits.
const QmdLayout kQmdV04{
    .version = "V04_00",
    .words = 96,
    .major = 4,
    .major_version = V4("QMD_MAJOR_VERSION", 583, 580),
    .minor_version = V4("QMD_MINOR_VERSION", 579, 576),
    .program_address_lower = V4("PROGRAM_ADDRESS_LOWER", 1247, 1216),
    .program_address_upper = V4("PROGRAM_ADDRESS_UPPER", 1272, 1248),
    .grid_width = V4("GRID_WIDTH", 1055, 1024),
    .grid_height = V4("GRID_HEIGHT", 1071, 1056),
    .grid_depth = V4("GRID_DEPTH", 1103, 1088),
    .cta_thread_dimension0 = V4("CTA_THREAD_DIMENSION0", 1167, 1152),
    .cta_thread_dimension1 = V4("CTA_THREAD_DIMENSION1", 1183, 1168),
    .cta_thread_dimension2 = V4("CTA_THREAD_DIMENSION2", 1199, 1184),
    .shared_memory_size = V4("SHARED_MEMORY_SIZE", 601, 584),
    .constant_buffer_valid0 = V4("CONSTANT_BUFFER_VALID(0)", 416, 416),
    .constant_buffer_addr_lower0 = V4("CONSTANT_BUFFER_ADDR_LOWER_SHIFTED6(0)", 1567, 1536),
    .constant_buffer_addr_upper0 = V4("CONSTANT_BUFFER_ADDR_UPPER_SHIFTED6(0)", 1586, 1568),
    .constant_buffer_size_shifted4_0 = V4("CONSTANT_BUFFER_SIZE_SHIFTED4(0)", 1599, 1587),
    .constant_buffer_addr_shift = 6,
    .release = {V4_RELEASE(0), V4_RELEASE(1), V4_RELEASE(2)},
    .dependent_qmd0_enable = V4("DEPENDENT_QMD_ENABLE(0)", 368, 368),
    .dependent_qmd0_action = V4("DEPENDENT_QMD_ACTION(0)", 371, 369),
    .dependent_qmd0_pointer = V4("DEPENDENT_QMD0_POINTER", 479, 448),
    .shader_local_memory_low_size = V4("SHADER_LOCAL_MEMORY_LOW_SIZE", 535, 512),    // clcbc0qmd.h:419
    .shader_local_memory_high_size = V4("SHADER_LOCAL_MEMORY_HIGH_SIZE", 567, 544),  // clcbc0qmd.h:421
    .constant_buffer_valid_stride = 4,                                                // clcbc0qmd.h:407, 525-527
};
#undef V4_RELEASE
#undef V4

#define V3(name, hi, lo) \
  QmdField { "NVC6C0_QMDV03_00_" name, hi, lo }

// NVIDIA/open-gpu-doc classes/compute/clc6c0qmd.h, NVC6C0_QMDV03_00_* (MW(hi:lo)), 2048 bits; clc7c0qmd.h and
// clc9c0qmd.h differ from it only in reserved and occupancy bits. RELEASE2 sits apart from RELEASE0/1.
const QmdLayout kQmdV03{
    .version = "V03_00",
    .words = 64,
    .major = 3,
    .major_version = V3("QMD_MAJOR_VERSION", 583, 580),
    .minor_version = V3("QMD_VERSION", 579, 576),
    .program_address_lower = V3("PROGRAM_ADDRESS_LOWER", 1567, 1536),
    .program_address_upper = V3("PROGRAM_ADDRESS_UPPER", 1584, 1568),
    .grid_width = V3("CTA_RASTER_WIDTH", 415, 384),
    .grid_height = V3("CTA_RASTER_HEIGHT", 431, 416),
    .grid_depth = V3("CTA_RASTER_DEPTH", 463, 448),
    .cta_thread_dimension0 = V3("CTA_THREAD_DIMENSION0", 607, 592),
    .cta_thread_dimension1 = V3("CTA_THREAD_DIMENSION1", 623, 608),
    .cta_thread_dimension2 = V3("CTA_THREAD_DIMENSION2", 639, 624),
    .shared_memory_size = V3("SHARED_MEMORY_SIZE", 561, 544),
    .constant_buffer_valid0 = V3("CONSTANT_BUFFER_VALID(0)", 640, 640),
    .constant_buffer_addr_lower0 = V3("CONSTANT_BUFFER_ADDR_LOWER(0)", 1055, 1024),
    .constant_buffer_addr_upper0 = V3("CONSTANT_BUFFER_ADDR_UPPER(0)", 1072, 1056),
    .constant_buffer_size_shifted4_0 = V3("CONSTANT_BUFFER_SIZE_SHIFTED4(0)", 1087, 1075),
    .constant_buffer_addr_shift = 0,
    .release =
        {
            QmdReleaseFields{V3("RELEASE0_ENABLE", 823, 823), V3("RELEASE0_STRUCTURE_SIZE", 831, 830),
                             V3("RELEASE0_PAYLOAD64B", 829, 829), V3("RELEASE0_REDUCTION_ENABLE", 826, 826),
                             V3("RELEASE0_ADDRESS_LOWER", 799, 768), V3("RELEASE0_ADDRESS_UPPER", 807, 800),
                             V3("RELEASE0_PAYLOAD_LOWER", 863, 832), V3("RELEASE0_PAYLOAD_UPPER", 895, 864)},
            QmdReleaseFields{V3("RELEASE1_ENABLE", 951, 951), V3("RELEASE1_STRUCTURE_SIZE", 959, 958),
                             V3("RELEASE1_PAYLOAD64B", 957, 957), V3("RELEASE1_REDUCTION_ENABLE", 954, 954),
                             V3("RELEASE1_ADDRESS_LOWER", 927, 896), V3("RELEASE1_ADDRESS_UPPER", 935, 928),
                             V3("RELEASE1_PAYLOAD_LOWER", 991, 960), V3("RELEASE1_PAYLOAD_UPPER", 1023, 992)},
            QmdReleaseFields{V3("RELEASE2_ENABLE", 1719, 1719), V3("RELEASE2_STRUCTURE_SIZE", 1727, 1726),
                             V3("RELEASE2_PAYLOAD64B", 1725, 1725), V3("RELEASE2_REDUCTION_ENABLE", 1722, 1722),
                             V3("RELEASE2_ADDRESS_LOWER", 1695, 1664), V3("RELEASE2_ADDRESS_UPPER", 1703, 1696),
                             V3("RELEASE2_PAYLOAD_LOWER", 1759, 1728), V3("RELEASE2_PAYLOAD_UPPER", 1791, 1760)},
        },
    .dependent_qmd0_enable = V3("DEPENDENT_QMD0_ENABLE", 512, 512),
    .dependent_qmd0_action = V3("DEPENDENT_QMD0_ACTION", 515, 513),
    .dependent_qmd0_pointer = V3("DEPENDENT_QMD0_POINTER", 511, 480),
    .shader_local_memory_low_size = V3("SHADER_LOCAL_MEMORY_LOW_SIZE", 759, 736),     // clc6c0qmd.h:617
    .shader_local_memory_high_size = V3("SHADER_LOCAL_MEMORY_HIGH_SIZE", 1623, 1600), // clc6c0qmd.h:704
    .constant_buffer_valid_stride = 1,                                                 // clc6c0qmd.h:606, 693-701
};
#undef V3

const QmdLayout* qmd_layout(uint32_t compute_class) {
  switch (compute_class) {
    case HOPPER_COMPUTE_A: return &kQmdV04;
    case AMPERE_COMPUTE_B:
    case ADA_COMPUTE_A: return &kQmdV03;
  }
  return nullptr;
}

Qmd decode_qmd(const QmdLayout& L, std::span<const uint32_t> w) {
  Qmd q;
  q.major = get(w, L.major_version);
  q.minor = get(w, L.minor_version);
  q.program_address = uint64_t{get(w, L.program_address_lower)} | uint64_t{get(w, L.program_address_upper)} << 32;
  q.grid = {get(w, L.grid_width), get(w, L.grid_height), get(w, L.grid_depth)};
  q.block = {get(w, L.cta_thread_dimension0), get(w, L.cta_thread_dimension1), get(w, L.cta_thread_dimension2)};
  q.shared_memory_size = get(w, L.shared_memory_size);
  q.constant_buffer0_valid = get(w, L.constant_buffer_valid0) != 0;
  q.constant_buffer0_address =
      (uint64_t{get(w, L.constant_buffer_addr_lower0)} | uint64_t{get(w, L.constant_buffer_addr_upper0)} << 32)
      << L.constant_buffer_addr_shift;
  q.constant_buffer0_size = get(w, L.constant_buffer_size_shifted4_0) << 4;
  for (size_t i = 0; i < L.release.size(); ++i) {
    const QmdReleaseFields& f = L.release[i];
    q.release_enabled[i] = get(w, f.enable) != 0;
    QmdRelease& r = q.releases[i];
    r.structure_size = get(w, f.structure_size);
    r.payload64 = get(w, f.payload64b) != 0;
    r.reduction = get(w, f.reduction_enable) != 0;
    r.address = uint64_t{get(w, f.addr_lower)} | uint64_t{get(w, f.addr_upper)} << 32;
    r.payload = uint64_t{get(w, f.payload_lower)} | uint64_t{get(w, f.payload_upper)} << 32;
  }
  q.dependent_enable = get(w, L.dependent_qmd0_enable) != 0;
  q.dependent_action = get(w, L.dependent_qmd0_action);
  q.dependent_address = uint64_t{get(w, L.dependent_qmd0_pointer)} << 8;
  q.shader_local_memory_low_size = get(w, L.shader_local_memory_low_size);
  q.shader_local_memory_high_size = get(w, L.shader_local_memory_high_size);
  for (uint32_t i = 0; i < kQmdConstantBuffers; ++i) {
    auto at = [&](QmdField f, uint32_t stride) { return QmdField{f.name, f.hi + i * stride, f.lo + i * stride}; };
    q.constant_buffer_valid[i] = get(w, at(L.constant_buffer_valid0, L.constant_buffer_valid_stride)) != 0;
    q.constant_buffer_address[i] = (uint64_t{get(w, at(L.constant_buffer_addr_lower0, 64))} |
                                    uint64_t{get(w, at(L.constant_buffer_addr_upper0, 64))} << 32)
                                   << L.constant_buffer_addr_shift;
    q.constant_buffer_size[i] = get(w, at(L.constant_buffer_size_shifted4_0, 64)) << 4;
  }
  return q;
}

}  // namespace doorbell::mockgpu::nv::hw
