// The allocation parameters tinygrad's bring-up uses (ops_nv.py:478-516, 590-666), built in one place for the NV
// device (hcq/nv/nv_session.h) and the driver tests that replay its sequence step by step.
#pragma once

#include "kernel-interface/nvidia/rm_classes.h"

namespace doorbell::kernel_interface::nvidia {

// NV1_MEMORY_USER (video memory) or NV1_MEMORY_SYSTEM (host memory over PCIe, uncached by the GPU) of `size` bytes:
// physically contiguous, 4 KiB aligned, handle chosen by the caller.
NV_MEMORY_ALLOCATION_PARAMS memory_allocation_params(NvHandle owner, NvU64 size, bool system_memory);

// A GPFIFO channel whose ring is `gpfifo_entries` entries at `gpfifo_va` and whose USERD is at `userd_offset` of
// `userd_memory`, with errors reported in `error_notifier`.
NV_CHANNEL_ALLOC_PARAMS channel_allocation_params(NvHandle error_notifier, NvHandle gpfifo_memory, NvU64 gpfifo_va,
                                                  NvU32 gpfifo_entries, NvHandle context_share, NvHandle userd_memory,
                                                  NvU64 userd_offset);

}  // namespace doorbell::kernel_interface::nvidia
