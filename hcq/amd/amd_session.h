// The driver side of an AMD device: the bring-up through KFD (kernel-interface/amd) on any SyscallSeam, the
// kernel's or an emulated driver's (kernel-interface/driver_seams.h). In order (firmware-notes/amd-hcq.md §1):
// /dev/kfd, the topology's GPU node `gpu_index`, its render node /dev/dri/renderD<drm_render_minor>, the render
// node's DEV_INFO (timestamp frequency), ACQUIRE_VM, the process apertures; memory (a reserved VA range, ALLOC, MAP
// and the CPU view at the same address: GPU VA = CPU VA); the 32 KiB event page with an auto-reset signal event
// (what the GPU's interrupts wake) and a MEMORY event (where the KFD reports a queue's memory fault); and two user
// queues: a PM4 compute queue (ring, a one-page wptr/rptr allocation, EOP, CWSR sized by the node's formulas) and an
// SDMA queue for copies, each with its 64-bit doorbell in the process's doorbell page.
#pragma once
#include <linux/kfd_ioctl.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hcq/amd/amd_registers.h"
#include "kernel-interface/amd/amdgpu_drm.h"
#include "kernel-interface/amd/kfd.h"
#include "kernel-interface/amd/kfd_topology.h"
#include "kernel-interface/syscall_seam.h"

namespace doorbell::amd {

namespace ki = kernel_interface::amd;

// GPU memory mapped for the CPU at the same address: `va` for both.
struct AmdMemory {
  uint64_t handle = 0;  // the KFD allocation (gpu_id << 32 | id)
  uint64_t va = 0, size = 0;
  uint8_t* cpu = nullptr;
  bool vram = false;
  bool userptr = false;  // the host's own pages made visible to the GPU (register_host): freeing leaves them to the host
};

enum class AmdDomain {
  kVram,         // video memory the host maps too (PUBLIC): buffers, code
  kGttUncached,  // host memory the GPU reads over PCIe, uncached for both: signals, rings, pointers, kernargs
};

// A user-mode queue as the host drives it.
struct AmdUserQueue {
  std::string name;  // "compute" or "sdma"
  uint32_t queue_id = 0;
  AmdMemory ring, pointers, eop, cwsr;  // pointers: rptr at +0, wptr at +kWptrOffset of one page
  volatile uint64_t* wptr = nullptr;
  const volatile uint64_t* rptr = nullptr;
  volatile uint64_t* doorbell = nullptr;
  bool pm4 = true;  // else SDMA (byte pointers)
};

class AmdSession {
 public:
  static constexpr uint64_t kWptrOffset = 0x10;
  // Throws naming the step that failed, or how many GPU nodes there are when `gpu_index` is past them.
  AmdSession(kernel_interface::SyscallSeam& seam, int gpu_index);
  ~AmdSession();
  AmdSession(const AmdSession&) = delete;
  AmdSession& operator=(const AmdSession&) = delete;

  // `size` rounded up to 4 KiB, at a fresh VA. Throws naming the size, the domain and the driver's answer.
  AmdMemory alloc(uint64_t size, AmdDomain domain);
  // The host's own memory [cpu, cpu + size) made visible to the GPU at the same address (KFD USERPTR: the pages are
  // pinned until free): the whole pages around it, so the returned `va` and `size` are page-aligned and `cpu`
  // is the page-aligned start. Throws naming the range and the driver's answer.
  AmdMemory register_host(const void* cpu, uint64_t size);
  void free(const AmdMemory& memory);

  const ki::KfdNode& node() const { return node_; }
  uint32_t gpu_id() const { return node_.gpu_id; }
  GfxIp ip() const { return ip_; }
  std::string arch() const { return node_.gfx_arch(); }
  const ki::AmdgpuDeviceInfo& device_info() const { return info_; }
  ki::Kfd& kfd() { return *kfd_; }

  AmdUserQueue& compute() { return compute_; }
  AmdUserQueue& sdma() { return sdma_; }
  // Destroys both queues (the engines stop: work not done is abandoned); memory stays. The destructor does it first.
  void destroy_queues();
  // After a fault: destroys both queues and the MEMORY event (a CPU cannot reset a MEMORY event: kfd_events.c), frees
  // the queues' memory, and makes fresh ones the same way. Work that was queued is abandoned.
  void rebuild_after_fault();

  // The signal event the queues' interrupts carry as their context id, and its mailbox: the event page's slot the
  // queue writes (anything but all-ones) before the interrupt, for the KFD fires a signal event only when its slot
  // was written (kfd_events.c kfd_signal_event_interrupt; firmware-notes/amd-hcq.md §1).
  uint32_t signal_event_id() const { return signal_event_.event_id; }
  uint64_t signal_event_mailbox() const { return event_page_.va + 8ull * signal_event_.slot; }
  // Sleeps until a queue raises the signal event's interrupt, or `timeout_ms` passed.
  void wait_signal_event(uint32_t timeout_ms);
  // The memory fault the KFD reported for this process, if any (polls the MEMORY event without waiting).
  std::optional<kfd_hsa_memory_exception_data> memory_fault();
  ki::KfdClockCounters clock_counters() { return kfd_->clock_counters(node_.gpu_id); }

 private:
  AmdUserQueue make_queue(const std::string& name, bool pm4, uint64_t ring_bytes);
  void release_all() noexcept;

  kernel_interface::SyscallSeam& seam_;
  std::unique_ptr<ki::Kfd> kfd_;
  ki::KfdNode node_;
  GfxIp ip_ = GfxIp::kGc11_0;
  kernel_interface::SeamFd render_;
  ki::AmdgpuDeviceInfo info_;
  kfd_process_device_apertures aperture_{};
  std::vector<AmdMemory> live_;
  AmdMemory event_page_;
  ki::KfdEvent signal_event_, memory_event_;
  bool signal_event_made_ = false, events_made_ = false;
  void* doorbell_page_ = nullptr;
  uint64_t doorbell_page_offset_ = 0;
  AmdUserQueue compute_, sdma_;
};

}  // namespace doorbell::amd
