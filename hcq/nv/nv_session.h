// The driver side of an NVIDIA device: tinygrad's bring-up sequence (ops_nv.py:384-414, 590-666) through the RM and
// UVM wrappers (kernel-interface/nvidia), on any SyscallSeam: the kernel's (LinuxSyscalls) or an emulated driver's
// (kernel-interface/driver_seams.h). It opens the driver, checks its version, makes the device, subdevice, VA space,
// usermode (doorbell) mapping, channel group, context share, two GPFIFO channels (compute and copy) with their
// work-submit tokens and a debugger object for the compute object (where a kernel's MMU fault is read back), and
// allocates memory mapped at a fixed GPU VA and for the CPU.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kernel-interface/nvidia/nv_rm.h"
#include "kernel-interface/nvidia/nv_uvm.h"
#include "kernel-interface/syscall_seam.h"

namespace doorbell::nv {

namespace ki = kernel_interface::nvidia;

// GPU memory mapped for the CPU: the same bytes at `va` for the GPU and at `cpu` for the host.
struct NvMemory {
  ki::NvHandle handle = 0;
  uint64_t va = 0;
  uint64_t size = 0;
  uint8_t* cpu = nullptr;
  bool system_memory = false;
};

// A GPFIFO channel as the host drives it: its ring of 8-byte entries, USERD (GPPut/GPGet) and doorbell token.
struct NvChannel {
  ki::NvHandle handle = 0;
  uint32_t engine_class = 0;   // HOPPER_COMPUTE_A or HOPPER_DMA_COPY_A
  ki::NvHandle engine_object = 0;  // the object of that class on the channel
  uint64_t* ring = nullptr;    // CPU view of the entries
  uint32_t ring_entries = 0;
  uint8_t* userd = nullptr;    // CPU view of USERD
  uint32_t token = 0;          // written to the usermode doorbell
  // CPU view of this channel's own error notifier (its hObjectError), where RM writes an NvNotification when the
  // channel faults: one per channel, as tinygrad gives each GPFIFO its own (ops_nv.py:642-643), so a report names
  // the channel that faulted.
  const uint8_t* error_notifier = nullptr;
};

// The classes a session drives, the newest offered: Hopper, else Ada/Ampere (firmware-notes/nvidia-hopper.md §4).
struct NvClasses {
  uint32_t gpfifo = 0;    // HOPPER_CHANNEL_GPFIFO_A or AMPERE_CHANNEL_GPFIFO_A
  uint32_t compute = 0;   // HOPPER_COMPUTE_A, ADA_COMPUTE_A or AMPERE_COMPUTE_B
  uint32_t copy = 0;      // HOPPER_DMA_COPY_A or AMPERE_DMA_COPY_B
  uint32_t usermode = 0;  // HOPPER_USERMODE_A or AMPERE_USERMODE_A
};

class NvSession {
 public:
  // Throws (NvStatusError, NvIoctlError, std::runtime_error) naming the step that failed.
  // Opens the driver's GPU number `gpu_index` (0: the first NV_ESC_CARD_INFO lists). Throws naming the step that
  // failed, or how many GPUs there are when `gpu_index` is past them.
  explicit NvSession(kernel_interface::SyscallSeam& seam, int gpu_index = 0);
  ~NvSession();
  NvSession(const NvSession&) = delete;
  NvSession& operator=(const NvSession&) = delete;

  // Video memory (system_memory false) or host memory the GPU reads over PCIe, `size` rounded up to 4 KiB (video
  // memory to 2 MiB: the GPU's large pages), at the next free GPU VA.
  NvMemory alloc(uint64_t size, bool system_memory);
  void free(const NvMemory& memory);
  // Whether `memory` is an allocation of this session not freed yet.
  bool owns(const NvMemory& memory) const;

  NvChannel& compute() { return compute_; }
  NvChannel& copy() { return copy_; }
  volatile uint32_t* doorbell() const;   // the usermode region's NOTIFY_CHANNEL_PENDING register
  uint32_t gpu_arch() const { return gpu_arch_; }  // SM version from GR info, e.g. 0x900
  const NvClasses& classes() const { return classes_; }
  // The MMU faults RM recorded for the compute object's context (its GT200_DEBUGGER's READ_MMU_FAULT_INFO), oldest
  // first: a kernel's access to an unmapped address, with the address. Throws naming why when there is no debugger.
  std::vector<ki::NV83DE_CTRL_DEBUG_READ_MMU_FAULT_INFO_ENTRY> mmu_faults();
  const std::string& driver_version() const { return driver_version_; }
  // Frees the channel group and with it both channels: RM disables and preempts them, and the GPU fetches nothing
  // more from them (a kernel running on one is abandoned). Memory stays allocated. The destructor does this first.
  void stop_channels();
  ki::NvRm& rm() { return *rm_; }
  // NV2080_CTRL_CMD_GR_GET_INFO on the subdevice: one value per NV2080_CTRL_GR_INFO_INDEX_* asked.
  std::vector<ki::NvU32> gr_info(std::span<const ki::NvU32> indices) { return rm_->gr_info(subdevice_, indices); }

 private:
  NvMemory alloc_at(uint64_t size, uint64_t va, bool system_memory);
  kernel_interface::SeamFd new_gpu_fd();
  ki::NvHandle make_channel(uint64_t ring_offset, uint64_t userd_offset, uint32_t engine_class, uint64_t uvm_va,
                            const NvMemory& notifier, NvChannel& out);
  void make_debugger(const std::vector<ki::NvU32>& offered);

  kernel_interface::SyscallSeam& seam_;
  // This session's slot of the process's GPU VA windows; declared before the fds, so it is given back only once
  // closing them (the UVM fd last) dropped every range in it.
  struct VaWindow;
  std::unique_ptr<VaWindow> va_window_;
  kernel_interface::SeamFd ctl_, uvm_fd_, uvm_fd2_, dev_fd_;
  std::unique_ptr<ki::NvRm> rm_;
  std::unique_ptr<ki::NvUvm> uvm_;
  std::string device_path_, driver_version_;
  ki::NvHandle root_ = 0, device_ = 0, subdevice_ = 0, virtmem_ = 0, usermode_ = 0, vaspace_ = 0;
  ki::NvHandle channel_group_ = 0, ctxshare_ = 0;
  ki::NvHandle debugger_ = 0;
  std::string debugger_error_;  // why there is no debugger object, when there is none
  ki::NvProcessorUuid uuid_{};
  uint32_t gpu_id_ = 0, gpu_arch_ = 0;
  NvClasses classes_;
  uint32_t* usermode_mmio_ = nullptr;
  NvMemory gpfifo_area_, compute_notifier_, copy_notifier_;
  NvChannel compute_, copy_;
  uint64_t va_base_ = 0, high_va_base_ = 0;  // its windows (host memory and channels, video memory)
  uint64_t next_va_ = 0, next_high_va_ = 0;
  // Freed VA ranges of each window (start -> bytes, neighbours merged), taken first-fit before the bump pointer moves:
  // without them a process that allocates and frees (the per-buffer baseline, a growing local-memory store) runs
  // through its window however little it holds.
  std::map<uint64_t, uint64_t> free_va_, free_high_va_;
  void release_va(uint64_t va, uint64_t span, bool system_memory);
  std::vector<NvMemory> live_;
};

}  // namespace doorbell::nv
