#pragma once
// RM ioctl requests and the driver-580 structs they carry (x86-64).
// Sources: NVIDIA/open-gpu-kernel-modules 580.x
//   src/nvidia/arch/nvalloc/unix/include/nv-ioctl-numbers.h (magic, base, NV_ESC_CARD_INFO...),
//   src/nvidia/arch/nvalloc/unix/include/nv_escape.h (NV_ESC_RM_*),
//   src/nvidia/arch/nvalloc/unix/include/nv-ioctl.h (nv_ioctl_* structs),
//   src/common/sdk/nvidia/inc/nvos.h (NVOSxx_PARAMETERS and their flag fields);
// sizes and offsets as measured in firmware-notes/nvidia-hopper.md §3.

#include <cstddef>

#include "kernel-interface/nvidia/nv_types.h"

namespace doorbell::kernel_interface::nvidia {

// ---- Request encoding (nv-ioctl-numbers.h; the driver reads only _IOC_NR and _IOC_SIZE, kernel-open/nvidia/nv.c)
inline constexpr unsigned NV_IOCTL_MAGIC = 'F';
inline constexpr unsigned NV_IOCTL_BASE = 200;
inline constexpr unsigned kIocSizeBits = 14;  // _IOC_SIZEBITS on x86-64

// _IOWR(NV_IOCTL_MAGIC, nr, size) as Linux spells it: direction read|write (3) in bits 31:30.
constexpr unsigned long nv_ioctl_request(unsigned nr, std::size_t size) {
  return (3ul << 30) | ((static_cast<unsigned long>(size) & ((1ul << kIocSizeBits) - 1)) << 16) |
         (static_cast<unsigned long>(NV_IOCTL_MAGIC) << 8) | (nr & 0xffu);
}
constexpr unsigned nv_ioctl_nr(unsigned long request) { return request & 0xffu; }
constexpr std::size_t nv_ioctl_size(unsigned long request) { return (request >> 16) & ((1u << kIocSizeBits) - 1); }
constexpr unsigned nv_ioctl_magic(unsigned long request) { return (request >> 8) & 0xffu; }

// ---- Escapes (nv_escape.h, nv-ioctl-numbers.h)
inline constexpr unsigned NV_ESC_RM_ALLOC_MEMORY = 0x27;
inline constexpr unsigned NV_ESC_RM_FREE = 0x29;
inline constexpr unsigned NV_ESC_RM_CONTROL = 0x2A;
inline constexpr unsigned NV_ESC_RM_ALLOC = 0x2B;
inline constexpr unsigned NV_ESC_RM_VID_HEAP_CONTROL = 0x4A;
inline constexpr unsigned NV_ESC_RM_MAP_MEMORY = 0x4E;
inline constexpr unsigned NV_ESC_RM_UNMAP_MEMORY = 0x4F;
inline constexpr unsigned NV_ESC_RM_MAP_MEMORY_DMA = 0x57;
inline constexpr unsigned NV_ESC_RM_UNMAP_MEMORY_DMA = 0x58;
inline constexpr unsigned NV_ESC_CARD_INFO = NV_IOCTL_BASE + 0;
inline constexpr unsigned NV_ESC_REGISTER_FD = NV_IOCTL_BASE + 1;
inline constexpr unsigned NV_ESC_ALLOC_OS_EVENT = NV_IOCTL_BASE + 6;
inline constexpr unsigned NV_ESC_FREE_OS_EVENT = NV_IOCTL_BASE + 7;
inline constexpr unsigned NV_ESC_CHECK_VERSION_STR = NV_IOCTL_BASE + 10;

// "RM_ALLOC" for NV_ESC_RM_ALLOC etc.; "escape 0x.." for others. Used in error messages.
const char* nv_escape_name(unsigned escape);

// ---- Core structs (nvos.h, nv-ioctl.h)

struct NVOS21_PARAMETERS {  // NV_ESC_RM_ALLOC
  NvHandle hRoot;
  NvHandle hObjectParent;
  NvHandle hObjectNew;
  NvV32 hClass;
  NvP64 pAllocParms;
  NvU32 paramsSize;
  NvV32 status;
};
static_assert(sizeof(NVOS21_PARAMETERS) == 32);
static_assert(offsetof(NVOS21_PARAMETERS, pAllocParms) == 16 && offsetof(NVOS21_PARAMETERS, status) == 28);

struct NVOS54_PARAMETERS {  // NV_ESC_RM_CONTROL
  NvHandle hClient;
  NvHandle hObject;
  NvV32 cmd;
  NvU32 flags;
  NvP64 params;
  NvU32 paramsSize;
  NvV32 status;
};
static_assert(sizeof(NVOS54_PARAMETERS) == 32);
static_assert(offsetof(NVOS54_PARAMETERS, params) == 16 && offsetof(NVOS54_PARAMETERS, status) == 28);

struct NVOS00_PARAMETERS {  // NV_ESC_RM_FREE
  NvHandle hRoot;
  NvHandle hObjectParent;
  NvHandle hObjectOld;
  NvV32 status;
};
static_assert(sizeof(NVOS00_PARAMETERS) == 16);

struct NVOS33_PARAMETERS {  // NV_ESC_RM_MAP_MEMORY (CPU mapping)
  NvHandle hClient;
  NvHandle hDevice;
  NvHandle hMemory;
  NvU64 offset;
  NvU64 length;
  NvP64 pLinearAddress;
  NvU32 status;
  NvU32 flags;
};
static_assert(sizeof(NVOS33_PARAMETERS) == 48);
static_assert(offsetof(NVOS33_PARAMETERS, offset) == 16 && offsetof(NVOS33_PARAMETERS, pLinearAddress) == 32 &&
              offsetof(NVOS33_PARAMETERS, flags) == 44);

// RM attaches an mmap context to `fd` (one per fd, for its life); the caller then mmap()s that fd
// (firmware-notes/nvidia-hopper.md §5).
struct nv_ioctl_nvos33_parameters_with_fd {
  NVOS33_PARAMETERS params;
  int fd;
};
static_assert(sizeof(nv_ioctl_nvos33_parameters_with_fd) == 56);
static_assert(offsetof(nv_ioctl_nvos33_parameters_with_fd, fd) == 48);

struct NVOS34_PARAMETERS {  // NV_ESC_RM_UNMAP_MEMORY
  NvHandle hClient;
  NvHandle hDevice;
  NvHandle hMemory;
  NvP64 pLinearAddress;
  NvV32 status;
  NvV32 flags;
};
static_assert(sizeof(NVOS34_PARAMETERS) == 32);

struct NVOS46_PARAMETERS {  // NV_ESC_RM_MAP_MEMORY_DMA (GPU VA mapping); flags2/kindOverride are new in 580
  NvHandle hClient;
  NvHandle hDevice;
  NvHandle hDma;
  NvHandle hMemory;
  NvU64 offset;
  NvU64 length;
  NvV32 flags;
  NvV32 flags2;
  NvV32 kindOverride;
  NvU64 dmaOffset;
  NvV32 status;
};
static_assert(sizeof(NVOS46_PARAMETERS) == 64);
static_assert(offsetof(NVOS46_PARAMETERS, flags) == 32 && offsetof(NVOS46_PARAMETERS, flags2) == 36 &&
              offsetof(NVOS46_PARAMETERS, kindOverride) == 40 && offsetof(NVOS46_PARAMETERS, dmaOffset) == 48 &&
              offsetof(NVOS46_PARAMETERS, status) == 56);

struct NVOS47_PARAMETERS {  // NV_ESC_RM_UNMAP_MEMORY_DMA
  NvHandle hClient;
  NvHandle hDevice;
  NvHandle hDma;
  NvHandle hMemory;
  NvV32 flags;
  NvU64 dmaOffset;
  NvU64 size;
  NvV32 status;
};
static_assert(sizeof(NVOS47_PARAMETERS) == 48);

struct NVOS02_PARAMETERS {  // NV_ESC_RM_ALLOC_MEMORY (e.g. NV01_MEMORY_SYSTEM_OS_DESCRIPTOR over user memory)
  NvHandle hRoot;
  NvHandle hObjectParent;
  NvHandle hObjectNew;
  NvV32 hClass;
  NvV32 flags;
  NvP64 pMemory;
  NvU64 limit;
  NvV32 status;
};
static_assert(sizeof(NVOS02_PARAMETERS) == 48);
static_assert(offsetof(NVOS02_PARAMETERS, pMemory) == 24 && offsetof(NVOS02_PARAMETERS, status) == 40);

struct nv_ioctl_nvos02_parameters_with_fd {
  NVOS02_PARAMETERS params;
  int fd;
};
static_assert(sizeof(nv_ioctl_nvos02_parameters_with_fd) == 56);

struct nv_pci_info_t {
  NvU32 domain;
  NvU8 bus;
  NvU8 slot;
  NvU8 function;
  NvU16 vendor_id;
  NvU16 device_id;
};
static_assert(sizeof(nv_pci_info_t) == 12);

struct nv_ioctl_card_info_t {  // NV_ESC_CARD_INFO takes an array of these; count = ioctl size / 72
  NvBool valid;
  nv_pci_info_t pci_info;
  NvU32 gpu_id;
  NvU16 interrupt_line;
  NvU64 reg_address;
  NvU64 reg_size;
  NvU64 fb_address;
  NvU64 fb_size;
  NvU32 minor_number;
  NvU8 dev_name[10];
};
static_assert(sizeof(nv_ioctl_card_info_t) == 72);
static_assert(offsetof(nv_ioctl_card_info_t, pci_info) == 4 && offsetof(nv_ioctl_card_info_t, gpu_id) == 16 &&
              offsetof(nv_ioctl_card_info_t, reg_address) == 24 && offsetof(nv_ioctl_card_info_t, fb_size) == 48 &&
              offsetof(nv_ioctl_card_info_t, minor_number) == 56 && offsetof(nv_ioctl_card_info_t, dev_name) == 60);
inline constexpr std::size_t kCardInfoEntries = 64;  // tinygrad passes 64 entries (tinygrad ops_nv.py:402)

struct nv_ioctl_register_fd_t {  // issued on /dev/nvidiaN; ctl_fd is the /dev/nvidiactl fd it joins
  int ctl_fd;
};
static_assert(sizeof(nv_ioctl_register_fd_t) == 4);

// ---- Request numbers (each escape checks its size exactly, so the size is part of the ABI)
inline constexpr unsigned long kRmAllocRequest = nv_ioctl_request(NV_ESC_RM_ALLOC, sizeof(NVOS21_PARAMETERS));
inline constexpr unsigned long kRmControlRequest = nv_ioctl_request(NV_ESC_RM_CONTROL, sizeof(NVOS54_PARAMETERS));
inline constexpr unsigned long kRmFreeRequest = nv_ioctl_request(NV_ESC_RM_FREE, sizeof(NVOS00_PARAMETERS));
inline constexpr unsigned long kRmMapMemoryRequest =
    nv_ioctl_request(NV_ESC_RM_MAP_MEMORY, sizeof(nv_ioctl_nvos33_parameters_with_fd));
inline constexpr unsigned long kRmUnmapMemoryRequest =
    nv_ioctl_request(NV_ESC_RM_UNMAP_MEMORY, sizeof(NVOS34_PARAMETERS));
inline constexpr unsigned long kRmMapMemoryDmaRequest =
    nv_ioctl_request(NV_ESC_RM_MAP_MEMORY_DMA, sizeof(NVOS46_PARAMETERS));
inline constexpr unsigned long kRmUnmapMemoryDmaRequest =
    nv_ioctl_request(NV_ESC_RM_UNMAP_MEMORY_DMA, sizeof(NVOS47_PARAMETERS));
inline constexpr unsigned long kRmAllocMemoryRequest =
    nv_ioctl_request(NV_ESC_RM_ALLOC_MEMORY, sizeof(nv_ioctl_nvos02_parameters_with_fd));
inline constexpr unsigned long kCardInfoRequest =
    nv_ioctl_request(NV_ESC_CARD_INFO, kCardInfoEntries * sizeof(nv_ioctl_card_info_t));
inline constexpr unsigned long kRegisterFdRequest =
    nv_ioctl_request(NV_ESC_REGISTER_FD, sizeof(nv_ioctl_register_fd_t));

// ---- Flag fields (nvos.h)
// NVOS02 (RM_ALLOC_MEMORY) flags
inline constexpr NvU32 NVOS02_FLAGS_PHYSICALITY_SHIFT = 4;  // 7:4
inline constexpr NvU32 NVOS02_FLAGS_PHYSICALITY_NONCONTIGUOUS = 1;
inline constexpr NvU32 NVOS02_FLAGS_COHERENCY_SHIFT = 12;  // 15:12
inline constexpr NvU32 NVOS02_FLAGS_COHERENCY_CACHED = 1;
inline constexpr NvU32 NVOS02_FLAGS_MAPPING_SHIFT = 30;  // 31:30
inline constexpr NvU32 NVOS02_FLAGS_MAPPING_NO_MAP = 1;
// NVOS33 (RM_MAP_MEMORY) flags
inline constexpr NvU32 NVOS33_FLAGS_CACHING_TYPE_SHIFT = 23;  // 25:23
inline constexpr NvU32 NVOS33_FLAGS_CACHING_TYPE_WRITECOMBINED = 2;
inline constexpr NvU32 NVOS33_FLAGS_CACHING_TYPE_DEFAULT = 6;
// NVOS46 (RM_MAP_MEMORY_DMA) flags
inline constexpr NvU32 NVOS46_FLAGS_CACHE_SNOOP_ENABLE = 1u << 4;
inline constexpr NvU32 NVOS46_FLAGS_PAGE_SIZE_SHIFT = 8;  // 11:8
inline constexpr NvU32 NVOS46_FLAGS_PAGE_SIZE_4KB = 1;
inline constexpr NvU32 NVOS46_FLAGS_PAGE_SIZE_BIG = 2;
inline constexpr NvU32 NVOS46_FLAGS_PAGE_SIZE_HUGE = 4;
inline constexpr NvU32 NVOS46_FLAGS_DMA_OFFSET_FIXED_TRUE = 1u << 15;

}  // namespace doorbell::kernel_interface::nvidia
