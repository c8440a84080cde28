#pragma once
// Typed calls into the NVIDIA resource manager (RM) through /dev/nvidiactl, all made through a SyscallSeam.
// Every failure throws: NvIoctlError when the kernel refuses the ioctl (errno), NvStatusError when RM answers with
// an NV_STATUS other than NV_OK; both messages name the escape, the class or command and the handles involved.

#include <sys/mman.h>

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "kernel-interface/nvidia/nv_types.h"
#include "kernel-interface/nvidia/rm_controls.h"
#include "kernel-interface/nvidia/rm_ioctl.h"
#include "kernel-interface/nvidia/rm_status.h"
#include "kernel-interface/nvidia/uvm_ioctl.h"
#include "kernel-interface/syscall_seam.h"

namespace doorbell::kernel_interface::nvidia {

// Handles this wrapper picks for new objects when the caller gives none; RM accepts any unused client-chosen value.
inline constexpr NvHandle kFirstAutoHandle = 0xcaf00001;

struct CpuMapOptions {
  NvU64 offset = 0;          // into the memory object
  NvU32 flags = 0;           // NVOS33 flags (RM overrides the caching type; firmware-notes/nvidia-hopper.md §5)
  void* address = nullptr;   // when set, mmap with MAP_FIXED at this address
  int prot = PROT_READ | PROT_WRITE;
};

class NvRm {
 public:
  // ctl_fd: an open /dev/nvidiactl; not owned.
  NvRm(SyscallSeam& seam, int ctl_fd) : seam_(seam), ctl_fd_(ctl_fd) {}

  SyscallSeam& seam() const { return seam_; }
  int ctl_fd() const { return ctl_fd_; }
  // The root client (hClient of every later call); 0 until alloc_root_client().
  NvHandle client() const { return client_; }

  // NV01_ROOT_CLIENT with hRoot = 0: RM picks the handle, which becomes client().
  NvHandle alloc_root_client();
  // NV_ESC_RM_ALLOC of `hclass` under `parent`. new_handle 0 takes the next automatic handle. RM reads the params by
  // the class's own size, so `params` must be the class's full struct.
  NvHandle alloc(NvHandle parent, NvU32 hclass, void* params, NvU32 params_size, NvHandle new_handle = 0);
  NvHandle alloc(NvHandle parent, NvU32 hclass, NvHandle new_handle = 0) {
    return alloc(parent, hclass, nullptr, 0, new_handle);
  }
  template <class Params>
  NvHandle alloc(NvHandle parent, NvU32 hclass, Params& params, NvHandle new_handle = 0) {
    return alloc(parent, hclass, &params, static_cast<NvU32>(sizeof(Params)), new_handle);
  }

  // NV_ESC_RM_CONTROL `cmd` on `object`; params_size must be the command's struct size exactly.
  void control(NvHandle object, NvU32 cmd, void* params, NvU32 params_size);
  template <class Params>
  void control(NvHandle object, NvU32 cmd, Params& params) {
    control(object, cmd, &params, static_cast<NvU32>(sizeof(Params)));
  }

  // NV_ESC_RM_FREE; RM frees the object's children with it. Freeing client() frees everything.
  void free(NvHandle object, NvHandle parent = 0);

  // NV_ESC_RM_MAP_MEMORY with `mmap_fd` (a /dev/nvidiaN fd of the memory's GPU, or a /dev/nvidiactl fd for system
  // memory), then mmap of that fd: the CPU address of `length` bytes of `memory`. The driver gives an fd one mmap
  // context for its whole life, so `mmap_fd` must be one no RM_MAP_MEMORY named before (else NV_ERR_STATE_IN_USE,
  // ogkm kernel-open/nvidia/nv-usermap.c:53-57); it may be closed once this returns.
  void* map_memory(NvHandle device, NvHandle memory, NvU64 length, int mmap_fd, const CpuMapOptions& options = {});
  // munmap, then NV_ESC_RM_UNMAP_MEMORY.
  void unmap_memory(NvHandle device, NvHandle memory, void* address, NvU64 length);

  // NV_ESC_RM_MAP_MEMORY_DMA into the virtual memory object `dma`: the GPU VA. With
  // NVOS46_FLAGS_DMA_OFFSET_FIXED_TRUE in `flags`, `dma_offset` is the VA asked for.
  NvU64 map_memory_dma(NvHandle device, NvHandle dma, NvHandle memory, NvU64 length, NvU32 flags,
                       NvU64 dma_offset = 0, NvU64 offset = 0);
  void unmap_memory_dma(NvHandle device, NvHandle dma, NvHandle memory, NvU64 dma_offset, NvU64 size);

  // NV_ESC_RM_ALLOC_MEMORY, which RM accepts only on a /dev/nvidiaN fd (e.g. NV01_MEMORY_SYSTEM_OS_DESCRIPTOR over
  // user memory at `memory`). new_handle 0 takes the next automatic handle.
  NvHandle alloc_memory(int device_fd, NvHandle parent, NvU32 hclass, NvU32 flags, NvP64 memory, NvU64 limit,
                        NvHandle new_handle = 0);

  // NV_ESC_CARD_INFO: the valid entries of the driver's GPU table.
  std::vector<nv_ioctl_card_info_t> card_info();
  // NV_ESC_REGISTER_FD on `device_fd` (a /dev/nvidiaN fd), linking it to this ctl fd.
  void register_fd(int device_fd);

  // Common controls.
  std::string build_version();                       // NV0000 SYSTEM_GET_BUILD_VERSION_V2, e.g. "580.159"
  NvU32 device_instance(NvU32 gpu_id);               // NV0000 GPU_GET_ID_INFO_V2
  std::vector<NvU32> attached_gpu_ids();             // NV0000 GPU_GET_ATTACHED_IDS
  std::vector<NvU32> class_list(NvHandle device);    // NV0080 GPU_GET_CLASSLIST (count, then list)
  NvProcessorUuid gpu_uuid(NvHandle subdevice);      // NV2080 GPU_GET_GID_INFO, binary
  std::vector<NvU32> gr_info(NvHandle subdevice, std::span<const NvU32> indices);  // NV2080 GR_GET_INFO
  NvU32 work_submit_token(NvHandle channel);         // NVC36F GPFIFO_GET_WORK_SUBMIT_TOKEN
  void schedule_channel_group(NvHandle channel_group, bool enable = true);  // NVA06C GPFIFO_SCHEDULE
  // NV83DE DEBUG_READ_MMU_FAULT_INFO on a GT200_DEBUGGER: the MMU faults of the context it debugs, oldest first.
  std::vector<NV83DE_CTRL_DEBUG_READ_MMU_FAULT_INFO_ENTRY> read_mmu_fault_info(NvHandle debugger);

 private:
  void ioctl(int fd, unsigned long request, void* arg, const std::string& what);
  NvHandle next_handle() { return next_handle_++; }

  SyscallSeam& seam_;
  int ctl_fd_;
  NvHandle client_ = 0;
  NvHandle next_handle_ = kFirstAutoHandle;
};

}  // namespace doorbell::kernel_interface::nvidia
