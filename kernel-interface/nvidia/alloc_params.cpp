#include "kernel-interface/nvidia/alloc_params.h"

namespace doorbell::kernel_interface::nvidia {

NV_MEMORY_ALLOCATION_PARAMS memory_allocation_params(NvHandle owner, NvU64 size, bool system_memory) {
  NV_MEMORY_ALLOCATION_PARAMS params{};
  params.owner = owner;
  params.type = system_memory ? NVOS32_TYPE_NOTIFIER : NVOS32_TYPE_IMAGE;
  params.flags = NVOS32_ALLOC_FLAGS_MAP_NOT_REQUIRED | NVOS32_ALLOC_FLAGS_MEMORY_HANDLE_PROVIDED |
                 NVOS32_ALLOC_FLAGS_ALIGNMENT_FORCE | NVOS32_ALLOC_FLAGS_IGNORE_BANK_PLACEMENT;
  params.attr = NVOS32_ATTR_PHYSICALITY_CONTIGUOUS << NVOS32_ATTR_PHYSICALITY_SHIFT;
  params.attr2 = NVOS32_ATTR2_GPU_CACHEABLE_YES << NVOS32_ATTR2_GPU_CACHEABLE_SHIFT;
  if (system_memory) {
    params.attr |= NVOS32_ATTR_LOCATION_PCI << NVOS32_ATTR_LOCATION_SHIFT;
    params.attr2 = NVOS32_ATTR2_GPU_CACHEABLE_NO << NVOS32_ATTR2_GPU_CACHEABLE_SHIFT;
  }
  params.format = 6;  // tinygrad's value (pitch)
  params.size = size;
  params.alignment = 0x1000;
  params.limit = size - 1;
  return params;
}

NV_CHANNEL_ALLOC_PARAMS channel_allocation_params(NvHandle error_notifier, NvHandle gpfifo_memory, NvU64 gpfifo_va,
                                                  NvU32 gpfifo_entries, NvHandle context_share, NvHandle userd_memory,
                                                  NvU64 userd_offset) {
  NV_CHANNEL_ALLOC_PARAMS params{};
  params.hObjectError = error_notifier;
  params.hObjectBuffer = gpfifo_memory;
  params.gpFifoOffset = gpfifo_va;
  params.gpFifoEntries = gpfifo_entries;
  params.hContextShare = context_share;
  params.hUserdMemory[0] = userd_memory;
  params.userdOffset[0] = userd_offset;
  return params;
}

}  // namespace doorbell::kernel_interface::nvidia
