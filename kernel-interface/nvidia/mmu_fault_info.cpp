#include "kernel-interface/nvidia/mmu_fault_info.h"

#include <iterator>

#include "kernel-interface/nvidia/rm_status.h"

namespace doorbell::kernel_interface::nvidia {

std::string mmu_fault_type_name(NvU32 fault_type) {
  // g_kern_gmmu_nvoc.h:334-350, in order (0xb is both fault_compressionFailure and, on newer GPUs, fault_cc_violation).
  static constexpr const char* kNames[] = {
      "fault_invalidPde",         "fault_invalidPdeSize", "fault_invalidPte",          "fault_limitViolation",
      "fault_unboundInstBlock",   "fault_privViolation",  "fault_write",               "fault_read",
      "fault_pitchMaskViolation", "fault_workCreation",   "fault_unsupportedAperture", "fault_compressionFailure",
      "fault_unsupportedKind",    "fault_regionViolation", "fault_poison",             "fault_atomic"};
  if (fault_type < std::size(kNames)) return kNames[fault_type];
  return "fault type " + hex(fault_type);
}

std::string mmu_access_type_name(NvU32 access_type) {
  switch (access_type) {
    case NV_PFAULT_ACCESS_TYPE_VIRT_READ: return "VIRT_READ";
    case NV_PFAULT_ACCESS_TYPE_VIRT_WRITE: return "VIRT_WRITE";
    case NV_PFAULT_ACCESS_TYPE_VIRT_ATOMIC_STRONG: return "VIRT_ATOMIC_STRONG";
    case NV_PFAULT_ACCESS_TYPE_VIRT_PREFETCH: return "VIRT_PREFETCH";
    case NV_PFAULT_ACCESS_TYPE_VIRT_ATOMIC_WEAK: return "VIRT_ATOMIC_WEAK";
    case NV_PFAULT_ACCESS_TYPE_PHYS_READ: return "PHYS_READ";
    case NV_PFAULT_ACCESS_TYPE_PHYS_WRITE: return "PHYS_WRITE";
    case NV_PFAULT_ACCESS_TYPE_PHYS_ATOMIC: return "PHYS_ATOMIC";
    case NV_PFAULT_ACCESS_TYPE_PHYS_PREFETCH: return "PHYS_PREFETCH";
    default: return "access type " + hex(access_type);
  }
}

std::string describe_mmu_fault(const NV83DE_CTRL_DEBUG_READ_MMU_FAULT_INFO_ENTRY& entry) {
  return "MMU fault at " + hex(entry.faultAddress) + " (" + mmu_fault_type_name(entry.faultType) + ", " +
         mmu_access_type_name(entry.accessType) + ")";
}

}  // namespace doorbell::kernel_interface::nvidia
