// The emulated NVIDIA GPU's own reading of NVIDIA's class headers: class ids, method offsets, method data fields,
// the pushbuffer method header, the GPFIFO entry and the QMD layouts (V04_00 for HOPPER_COMPUTE_A, V03_00 for
// AMPERE_COMPUTE_B / ADA_COMPUTE_A). It is written from the headers independently of hcq/nv's encoders (which the
// mock must not include), so that running the encoders' words through the mock checks them against a second reading.
// Each table cites the header it was taken from; the values were read from NVIDIA/open-gpu-doc at commit c8607fe
// (classes/host/clc56f.h, classes/compute/clcbc0.h, clcbc0qmd.h, clc6c0qmd.h, clc7c0.h, classes/dma-copy/clc8b5.h,
// clc7b5.h) and NVIDIA/open-gpu-kernel-modules src/common/sdk/nvidia/inc/class/clc86f.h.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace doorbell::mockgpu::nv::hw {

// A field of one 32-bit method data word or GP entry half, as the headers write it: `hi:lo`.
struct Field {
  const char* name;
  uint32_t hi, lo;
};
constexpr uint32_t field_mask(Field f) { return f.hi - f.lo >= 31 ? 0xffffffffu : ((1u << (f.hi - f.lo + 1)) - 1); }
constexpr uint32_t get(uint32_t word, Field f) { return (word >> f.lo) & field_mask(f); }
// True when `value` has no bit outside the field's width.
constexpr bool fits(uint64_t value, Field f) { return (value & ~uint64_t{field_mask(f)}) == 0; }

std::string hex(uint64_t value);

// ---- Class ids (clc86f.h, clc56f.h, clcbc0.h, clc7c0.h, clc9c0.h, clc8b5.h, clc7b5.h) ----
inline constexpr uint32_t HOPPER_CHANNEL_GPFIFO_A = 0xc86f;
inline constexpr uint32_t AMPERE_CHANNEL_GPFIFO_A = 0xc56f;
inline constexpr uint32_t HOPPER_COMPUTE_A = 0xcbc0;
inline constexpr uint32_t AMPERE_COMPUTE_B = 0xc7c0;
inline constexpr uint32_t ADA_COMPUTE_A = 0xc9c0;
inline constexpr uint32_t HOPPER_DMA_COPY_A = 0xc8b5;
inline constexpr uint32_t AMPERE_DMA_COPY_B = 0xc7b5;

enum class ClassKind { kNone, kHost, kCompute, kCopy };
ClassKind class_kind(uint32_t class_id);
// "HOPPER_COMPUTE_A (0xcbc0)"; unknown ids as plain hex.
std::string class_name(uint32_t class_id);

// ---- Pushbuffer method header (clc56f.h NVC56F_DMA_*; clc86f.h defines none, the format is unchanged) ----
inline constexpr Field NVC56F_DMA_METHOD_ADDRESS{"NVC56F_DMA_METHOD_ADDRESS", 11, 0};  // dwords
inline constexpr Field NVC56F_DMA_METHOD_SUBCHANNEL{"NVC56F_DMA_METHOD_SUBCHANNEL", 15, 13};
inline constexpr Field NVC56F_DMA_METHOD_COUNT{"NVC56F_DMA_METHOD_COUNT", 28, 16};
inline constexpr Field NVC56F_DMA_IMMD_DATA{"NVC56F_DMA_IMMD_DATA", 28, 16};
inline constexpr Field NVC56F_DMA_SEC_OP{"NVC56F_DMA_SEC_OP", 31, 29};
inline constexpr uint32_t NVC56F_DMA_SEC_OP_INC_METHOD = 1;
inline constexpr uint32_t NVC56F_DMA_SEC_OP_NON_INC_METHOD = 3;
inline constexpr uint32_t NVC56F_DMA_SEC_OP_IMMD_DATA_METHOD = 4;
inline constexpr uint32_t NVC56F_DMA_SEC_OP_ONE_INC = 5;

struct MethodHeader {
  uint32_t sec_op = 0;
  uint32_t subchannel = 0;
  uint32_t method = 0;  // byte offset (METHOD_ADDRESS << 2)
  uint32_t count = 0;   // data words that follow; for IMMD_DATA_METHOD the immediate value
};
constexpr MethodHeader decode_method_header(uint32_t word) {
  return {get(word, NVC56F_DMA_SEC_OP), get(word, NVC56F_DMA_METHOD_SUBCHANNEL),
          get(word, NVC56F_DMA_METHOD_ADDRESS) << 2, get(word, NVC56F_DMA_METHOD_COUNT)};
}

// ---- GPFIFO entry (clc86f.h NVC86F_GP_ENTRY*, identical in clc56f.h) ----
inline constexpr uint32_t NVC86F_GP_ENTRY__SIZE = 8;
inline constexpr Field NVC86F_GP_ENTRY0_FETCH{"NVC86F_GP_ENTRY0_FETCH", 0, 0};  // 1 = CONDITIONAL
inline constexpr Field NVC86F_GP_ENTRY0_GET{"NVC86F_GP_ENTRY0_GET", 31, 2};
inline constexpr Field NVC86F_GP_ENTRY1_GET_HI{"NVC86F_GP_ENTRY1_GET_HI", 7, 0};
inline constexpr Field NVC86F_GP_ENTRY1_OPCODE{"NVC86F_GP_ENTRY1_OPCODE", 7, 0};  // control entries (LENGTH 0)
inline constexpr Field NVC86F_GP_ENTRY1_LEVEL{"NVC86F_GP_ENTRY1_LEVEL", 9, 9};
inline constexpr Field NVC86F_GP_ENTRY1_LENGTH{"NVC86F_GP_ENTRY1_LENGTH", 30, 10};
inline constexpr Field NVC86F_GP_ENTRY1_SYNC{"NVC86F_GP_ENTRY1_SYNC", 31, 31};

struct GpEntry {
  uint64_t pushbuffer_va = 0;  // GET << 2 | GET_HI << 32
  uint32_t length_words = 0;   // 0: a control entry
  uint32_t opcode = 0;         // control entries only
  bool fetch_conditional = false;
  bool subroutine = false;
  bool sync_wait = false;
};
GpEntry decode_gp_entry(uint64_t word);

// ---- USERD (clc86f.h Nvc86fControl, the same layout as clc56f.h Nvc56fControl) ----
inline constexpr uint32_t kUserdReference = 0x48;
inline constexpr uint32_t kUserdGpGet = 0x88;
inline constexpr uint32_t kUserdGpPut = 0x8c;

// ---- Host methods (clc86f.h; clc56f.h for those the trimmed clc86f.h omits, which Hopper keeps:
// firmware-notes/nvidia-hopper.md §11, UVM's Hopper host HAL inherits them) ----
inline constexpr uint32_t NVC86F_SET_OBJECT = 0x00;
inline constexpr uint32_t NVC56F_NOP = 0x08;
inline constexpr uint32_t NVC56F_NON_STALL_INTERRUPT = 0x20;
inline constexpr uint32_t NVC56F_FB_FLUSH = 0x24;
inline constexpr uint32_t NVC86F_MEM_OP_A = 0x28;
inline constexpr uint32_t NVC86F_MEM_OP_B = 0x2c;
inline constexpr uint32_t NVC86F_MEM_OP_C = 0x30;
inline constexpr uint32_t NVC86F_MEM_OP_D = 0x34;
inline constexpr uint32_t NVC56F_SET_REFERENCE = 0x50;
inline constexpr uint32_t NVC86F_SEM_ADDR_LO = 0x5c;
inline constexpr uint32_t NVC86F_SEM_ADDR_HI = 0x60;
inline constexpr uint32_t NVC86F_SEM_PAYLOAD_LO = 0x64;
inline constexpr uint32_t NVC86F_SEM_PAYLOAD_HI = 0x68;
inline constexpr uint32_t NVC86F_SEM_EXECUTE = 0x6c;
inline constexpr uint32_t NVC86F_WFI = 0x78;
inline constexpr uint32_t NVC56F_YIELD = 0x80;
inline constexpr uint32_t kHostMethodEnd = 0x100;  // methods below this go to the host unit on any subchannel

inline constexpr Field NVC86F_SET_OBJECT_NVCLASS{"NVC56F_SET_OBJECT_NVCLASS", 15, 0};
inline constexpr Field NVC86F_SEM_ADDR_LO_OFFSET{"NVC86F_SEM_ADDR_LO_OFFSET", 31, 2};
inline constexpr Field NVC86F_SEM_ADDR_HI_OFFSET{"NVC86F_SEM_ADDR_HI_OFFSET", 24, 0};  // 57-bit VAs
inline constexpr Field NVC56F_SEM_ADDR_HI_OFFSET{"NVC56F_SEM_ADDR_HI_OFFSET", 7, 0};   // 40-bit VAs
inline constexpr Field NVC86F_SEM_EXECUTE_OPERATION{"NVC86F_SEM_EXECUTE_OPERATION", 2, 0};
inline constexpr uint32_t NVC56F_SEM_EXECUTE_OPERATION_ACQUIRE = 0;
inline constexpr uint32_t NVC56F_SEM_EXECUTE_OPERATION_RELEASE = 1;
inline constexpr uint32_t NVC56F_SEM_EXECUTE_OPERATION_ACQ_STRICT_GEQ = 2;
inline constexpr uint32_t NVC56F_SEM_EXECUTE_OPERATION_ACQ_CIRC_GEQ = 3;
inline constexpr uint32_t NVC56F_SEM_EXECUTE_OPERATION_ACQ_AND = 4;
inline constexpr uint32_t NVC56F_SEM_EXECUTE_OPERATION_ACQ_NOR = 5;
inline constexpr uint32_t NVC56F_SEM_EXECUTE_OPERATION_REDUCTION = 6;
inline constexpr Field NVC56F_SEM_EXECUTE_ACQUIRE_SWITCH_TSG{"NVC56F_SEM_EXECUTE_ACQUIRE_SWITCH_TSG", 12, 12};
inline constexpr Field NVC86F_SEM_EXECUTE_RELEASE_WFI{"NVC86F_SEM_EXECUTE_RELEASE_WFI", 20, 20};
inline constexpr Field NVC86F_SEM_EXECUTE_PAYLOAD_SIZE{"NVC86F_SEM_EXECUTE_PAYLOAD_SIZE", 24, 24};  // 1 = 64BIT
inline constexpr Field NVC56F_SEM_EXECUTE_RELEASE_TIMESTAMP{"NVC56F_SEM_EXECUTE_RELEASE_TIMESTAMP", 25, 25};
inline constexpr Field NVC56F_SEM_EXECUTE_REDUCTION{"NVC56F_SEM_EXECUTE_REDUCTION", 30, 27};
inline constexpr Field NVC86F_MEM_OP_D_OPERATION{"NVC86F_MEM_OP_D_OPERATION", 31, 27};

// ---- Compute methods (clcbc0.h; clc7c0.h / clc9c0.h have the same offsets for these) ----
inline constexpr uint32_t NVCBC0_NO_OPERATION = 0x0100;
inline constexpr uint32_t NVCBC0_WAIT_FOR_IDLE = 0x0110;
inline constexpr uint32_t NVCBC0_INVALIDATE_SHADER_CACHES = 0x021c;
inline constexpr uint32_t NVCBC0_INVALIDATE_SKED_CACHES = 0x0298;
inline constexpr uint32_t NVCBC0_SET_SHADER_SHARED_MEMORY_WINDOW_A = 0x02a0;
inline constexpr uint32_t NVCBC0_SET_SHADER_SHARED_MEMORY_WINDOW_B = 0x02a4;
inline constexpr uint32_t NVCBC0_SEND_PCAS_A = 0x02b4;
inline constexpr uint32_t NVCBC0_SEND_PCAS_B = 0x02b8;
inline constexpr uint32_t NVCBC0_SEND_SIGNALING_PCAS2_B = 0x02c0;
inline constexpr uint32_t NVCBC0_SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_A = 0x02e4;
inline constexpr uint32_t NVCBC0_SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_B = 0x02e8;
inline constexpr uint32_t NVCBC0_SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_C = 0x02ec;
inline constexpr uint32_t NVCBC0_SET_SHADER_LOCAL_MEMORY_A = 0x0790;
inline constexpr uint32_t NVCBC0_SET_SHADER_LOCAL_MEMORY_B = 0x0794;
inline constexpr uint32_t NVCBC0_SET_SHADER_LOCAL_MEMORY_WINDOW_A = 0x07b0;
inline constexpr uint32_t NVCBC0_SET_SHADER_LOCAL_MEMORY_WINDOW_B = 0x07b4;
inline constexpr uint32_t NVCBC0_INVALIDATE_SHADER_CACHES_NO_WFI = 0x1698;

inline constexpr Field NVCBC0_SEND_SIGNALING_PCAS2_B_PCAS_ACTION{"NVCBC0_SEND_SIGNALING_PCAS2_B_PCAS_ACTION", 3, 0};
inline constexpr uint32_t PCAS_ACTION_NOP = 0x0;
inline constexpr uint32_t PCAS_ACTION_INVALIDATE = 0x1;
inline constexpr uint32_t PCAS_ACTION_SCHEDULE = 0x2;
inline constexpr uint32_t PCAS_ACTION_INVALIDATE_COPY_SCHEDULE = 0x3;
inline constexpr uint32_t PCAS_ACTION_PREFETCH = 0x8;
inline constexpr uint32_t PCAS_ACTION_PREFETCH_SCHEDULE = 0x9;
inline constexpr uint32_t PCAS_ACTION_INVALIDATE_PREFETCH_COPY_SCHEDULE = 0xa;
inline constexpr uint32_t PCAS_ACTION_INVALIDATE_PREFETCH_COPY_FORCE_REQUIRE_SCHEDULING = 0xb;
inline constexpr Field NVCBC0_SET_SHADER_SHARED_MEMORY_WINDOW_A_BASE_ADDRESS_UPPER{
    "NVCBC0_SET_SHADER_SHARED_MEMORY_WINDOW_A_BASE_ADDRESS_UPPER", 16, 0};
inline constexpr Field NVCBC0_SET_SHADER_LOCAL_MEMORY_WINDOW_A_BASE_ADDRESS_UPPER{
    "NVCBC0_SET_SHADER_LOCAL_MEMORY_WINDOW_A_BASE_ADDRESS_UPPER", 16, 0};
inline constexpr Field NVCBC0_SET_SHADER_LOCAL_MEMORY_A_ADDRESS_UPPER{"NVCBC0_SET_SHADER_LOCAL_MEMORY_A_ADDRESS_UPPER",
                                                                      24, 0};
inline constexpr Field NVC7C0_SET_SHADER_LOCAL_MEMORY_A_ADDRESS_UPPER{"NVC7C0_SET_SHADER_LOCAL_MEMORY_A_ADDRESS_UPPER",
                                                                      16, 0};
inline constexpr Field NVCBC0_SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_A_SIZE_UPPER{
    "NVCBC0_SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_A_SIZE_UPPER", 7, 0};
inline constexpr Field NVCBC0_SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_C_MAX_SM_COUNT{
    "NVCBC0_SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_C_MAX_SM_COUNT", 8, 0};

// ---- Copy methods (clc8b5.h; clc7b5.h has the same offsets, with 17-bit upper address fields) ----
inline constexpr uint32_t NVC8B5_NOP = 0x0100;
inline constexpr uint32_t NVC8B5_PM_TRIGGER = 0x0140;
inline constexpr uint32_t NVC8B5_SET_SEMAPHORE_A = 0x0240;
inline constexpr uint32_t NVC8B5_SET_SEMAPHORE_B = 0x0244;
inline constexpr uint32_t NVC8B5_SET_SEMAPHORE_PAYLOAD = 0x0248;
inline constexpr uint32_t NVC8B5_SET_SEMAPHORE_PAYLOAD_UPPER = 0x024c;
inline constexpr uint32_t NVC8B5_LAUNCH_DMA = 0x0300;
inline constexpr uint32_t NVC8B5_OFFSET_IN_UPPER = 0x0400;
inline constexpr uint32_t NVC8B5_OFFSET_IN_LOWER = 0x0404;
inline constexpr uint32_t NVC8B5_OFFSET_OUT_UPPER = 0x0408;
inline constexpr uint32_t NVC8B5_OFFSET_OUT_LOWER = 0x040c;
inline constexpr uint32_t NVC8B5_PITCH_IN = 0x0410;
inline constexpr uint32_t NVC8B5_PITCH_OUT = 0x0414;
inline constexpr uint32_t NVC8B5_LINE_LENGTH_IN = 0x0418;
inline constexpr uint32_t NVC8B5_LINE_COUNT = 0x041c;

inline constexpr Field NVC8B5_UPPER_ADDRESS{"NVC8B5_SET_SEMAPHORE_A_UPPER / NVC8B5_OFFSET_*_UPPER_UPPER", 24, 0};
inline constexpr Field NVC7B5_UPPER_ADDRESS{"NVC7B5_SET_SEMAPHORE_A_UPPER / NVC7B5_OFFSET_*_UPPER_UPPER", 16, 0};
inline constexpr Field NVC8B5_LAUNCH_DMA_DATA_TRANSFER_TYPE{"NVC8B5_LAUNCH_DMA_DATA_TRANSFER_TYPE", 1, 0};
inline constexpr uint32_t DATA_TRANSFER_TYPE_NONE = 0;
inline constexpr uint32_t DATA_TRANSFER_TYPE_PIPELINED = 1;
inline constexpr uint32_t DATA_TRANSFER_TYPE_NON_PIPELINED = 2;
inline constexpr Field NVC8B5_LAUNCH_DMA_SEMAPHORE_TYPE{"NVC8B5_LAUNCH_DMA_SEMAPHORE_TYPE", 4, 3};
inline constexpr uint32_t SEMAPHORE_TYPE_NONE = 0;
inline constexpr uint32_t SEMAPHORE_TYPE_RELEASE_ONE_WORD_SEMAPHORE = 1;
inline constexpr uint32_t SEMAPHORE_TYPE_RELEASE_FOUR_WORD_SEMAPHORE = 2;
inline constexpr Field NVC8B5_LAUNCH_DMA_SRC_MEMORY_LAYOUT{"NVC8B5_LAUNCH_DMA_SRC_MEMORY_LAYOUT", 7, 7};  // 1 PITCH
inline constexpr Field NVC8B5_LAUNCH_DMA_DST_MEMORY_LAYOUT{"NVC8B5_LAUNCH_DMA_DST_MEMORY_LAYOUT", 8, 8};
inline constexpr Field NVC8B5_LAUNCH_DMA_MULTI_LINE_ENABLE{"NVC8B5_LAUNCH_DMA_MULTI_LINE_ENABLE", 9, 9};
inline constexpr Field NVC8B5_LAUNCH_DMA_REMAP_ENABLE{"NVC8B5_LAUNCH_DMA_REMAP_ENABLE", 10, 10};
inline constexpr Field NVC8B5_LAUNCH_DMA_SRC_TYPE{"NVC8B5_LAUNCH_DMA_SRC_TYPE", 12, 12};  // 0 VIRTUAL
inline constexpr Field NVC8B5_LAUNCH_DMA_DST_TYPE{"NVC8B5_LAUNCH_DMA_DST_TYPE", 13, 13};
inline constexpr Field NVC8B5_LAUNCH_DMA_SEMAPHORE_REDUCTION_ENABLE{"NVC8B5_LAUNCH_DMA_SEMAPHORE_REDUCTION_ENABLE", 19,
                                                                    19};
inline constexpr Field NVC8B5_LAUNCH_DMA_COPY_TYPE{"NVC8B5_LAUNCH_DMA_COPY_TYPE", 21, 20};
inline constexpr Field NVC8B5_LAUNCH_DMA_MEMORY_SCRUB_ENABLE{"NVC8B5_LAUNCH_DMA_MEMORY_SCRUB_ENABLE", 23, 23};
inline constexpr Field NVC8B5_LAUNCH_DMA_SEMAPHORE_PAYLOAD_SIZE{"NVC8B5_LAUNCH_DMA_SEMAPHORE_PAYLOAD_SIZE", 27,
                                                                27};  // 1 TWO_WORD

// The vendor's name of a method of a class ("NVCBC0_SEND_PCAS_A"), or "" when this table does not know it.
std::string method_name(uint32_t class_id, uint32_t method);
// Whether the mock executes `method` for a bound class of this kind (host methods are separate).
bool implements(ClassKind kind, uint32_t method);

// ---- QMD ----
// A field of the QMD as the headers write it, MW(hi:lo) over the whole structure; at most 32 bits wide.
struct QmdField {
  const char* name;
  uint32_t hi, lo;
};
uint32_t get(std::span<const uint32_t> qmd, QmdField f);

struct QmdReleaseFields {
  QmdField enable, structure_size, payload64b, reduction_enable, addr_lower, addr_upper, payload_lower, payload_upper;
};
inline constexpr uint32_t RELEASE_STRUCTURE_SIZE_SEMAPHORE_FOUR_WORDS = 0;
inline constexpr uint32_t RELEASE_STRUCTURE_SIZE_SEMAPHORE_ONE_WORD = 1;
inline constexpr uint32_t RELEASE_STRUCTURE_SIZE_SEMAPHORE_TWO_WORDS = 2;
inline constexpr uint32_t DEPENDENT_QMD_ACTION_QMD_SCHEDULE = 1;
inline constexpr uint32_t DEPENDENT_QMD_ACTION_QMD_INVALIDATE_COPY_SCHEDULE = 3;

struct QmdLayout {
  const char* version;  // "V04_00"
  size_t words;
  uint32_t major;
  QmdField major_version, minor_version;
  QmdField program_address_lower, program_address_upper;
  QmdField grid_width, grid_height, grid_depth;
  QmdField cta_thread_dimension0, cta_thread_dimension1, cta_thread_dimension2;
  QmdField shared_memory_size;
  QmdField constant_buffer_valid0, constant_buffer_addr_lower0, constant_buffer_addr_upper0,
      constant_buffer_size_shifted4_0;
  uint32_t constant_buffer_addr_shift;  // V04 stores address >> 6
  std::array<QmdReleaseFields, 3> release;
  QmdField dependent_qmd0_enable, dependent_qmd0_action, dependent_qmd0_pointer;  // pointer = address >> 8
  QmdField shader_local_memory_low_size, shader_local_memory_high_size;          // bytes per thread
  // CONSTANT_BUFFER_VALID(i) / ADDR(i) / SIZE_SHIFTED4(i) for i = 1..kQmdConstantBuffers-1: the (i) formulas' strides
  // from field (0) above (V04: VALID every 4 bits, V03 every bit; both: address and size every 64 bits).
  uint32_t constant_buffer_valid_stride;
};
inline constexpr size_t kQmdConstantBuffers = 8;  // V04 VALID(i) 416+4i below DEPENDENT_QMD (448); V03 640+i
extern const QmdLayout kQmdV04;  // clcbc0qmd.h NVCBC0_QMDV04_00_*
extern const QmdLayout kQmdV03;  // clc6c0qmd.h NVC6C0_QMDV03_00_* (clc7c0qmd.h, clc9c0qmd.h: same positions)
// The layout a compute class reads; nullptr for a class that is not a compute class.
const QmdLayout* qmd_layout(uint32_t compute_class);

struct QmdRelease {
  uint32_t structure_size = 0;
  bool payload64 = false;
  bool reduction = false;
  uint64_t address = 0;
  uint64_t payload = 0;
};
struct Qmd {
  uint32_t major = 0, minor = 0;
  uint64_t program_address = 0;
  std::array<uint32_t, 3> grid{}, block{};
  uint32_t shared_memory_size = 0;
  bool constant_buffer0_valid = false;
  uint64_t constant_buffer0_address = 0;
  uint32_t constant_buffer0_size = 0;
  std::array<bool, 3> release_enabled{};
  std::array<QmdRelease, 3> releases{};
  bool dependent_enable = false;
  uint32_t dependent_action = 0;
  uint64_t dependent_address = 0;
  uint32_t shader_local_memory_low_size = 0, shader_local_memory_high_size = 0;
  // Every constant buffer, 0 included (the same values as constant_buffer0_* for 0).
  std::array<bool, kQmdConstantBuffers> constant_buffer_valid{};
  std::array<uint64_t, kQmdConstantBuffers> constant_buffer_address{};
  std::array<uint32_t, kQmdConstantBuffers> constant_buffer_size{};
};
// Reads the fields above; does not check the version (the caller names the address in its error).
Qmd decode_qmd(const QmdLayout& layout, std::span<const uint32_t> words);

}  // namespace doorbell::mockgpu::nv::hw
