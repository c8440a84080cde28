#pragma once
// What RM's debugger object reports about an MMU fault (NV83DE_CTRL_CMD_DEBUG_READ_MMU_FAULT_INFO, rm_controls.h):
// the faulting GPU virtual address, RM's FAULT_TYPE and the fault buffer's ACCESS_TYPE, named for messages.
//
// Values (open-gpu-kernel-modules 580.95.05):
// - faultType: RM's FAULT_TYPE enum, src/nvidia/generated/g_kern_gmmu_nvoc.h:334-350 (kgmmuGetFaultType_GV100 maps
//   the hardware's NV_PFAULT_FAULT_TYPE_* onto it value for value: PTE 2 is fault_invalidPte).
// - accessType: NVC369_BUF_ENTRY_ACCESS_TYPE as RM copies it, values NV_PFAULT_ACCESS_TYPE_*,
//   kernel-open/nvidia-uvm/hwref/hopper/gh100/dev_fault.h:491-500.
#include <string>

#include "kernel-interface/nvidia/rm_controls.h"

namespace doorbell::kernel_interface::nvidia {

inline constexpr NvU32 kFaultInvalidPte = 0x2;  // fault_invalidPte: no valid page table entry (an unmapped address)

inline constexpr NvU32 NV_PFAULT_ACCESS_TYPE_VIRT_READ = 0x0;
inline constexpr NvU32 NV_PFAULT_ACCESS_TYPE_VIRT_WRITE = 0x1;
inline constexpr NvU32 NV_PFAULT_ACCESS_TYPE_VIRT_ATOMIC_STRONG = 0x2;
inline constexpr NvU32 NV_PFAULT_ACCESS_TYPE_VIRT_PREFETCH = 0x3;
inline constexpr NvU32 NV_PFAULT_ACCESS_TYPE_VIRT_ATOMIC_WEAK = 0x4;
inline constexpr NvU32 NV_PFAULT_ACCESS_TYPE_PHYS_READ = 0x8;
inline constexpr NvU32 NV_PFAULT_ACCESS_TYPE_PHYS_WRITE = 0x9;
inline constexpr NvU32 NV_PFAULT_ACCESS_TYPE_PHYS_ATOMIC = 0xa;
inline constexpr NvU32 NV_PFAULT_ACCESS_TYPE_PHYS_PREFETCH = 0xb;

// "fault_invalidPte"; "fault type 0x1f" for a value RM does not define.
std::string mmu_fault_type_name(NvU32 fault_type);
// "VIRT_READ"; "access type 0x7" for a value the hardware does not define.
std::string mmu_access_type_name(NvU32 access_type);
// "MMU fault at 0xdead0000 (fault_invalidPte, VIRT_READ)".
std::string describe_mmu_fault(const NV83DE_CTRL_DEBUG_READ_MMU_FAULT_INFO_ENTRY& entry);

}  // namespace doorbell::kernel_interface::nvidia
