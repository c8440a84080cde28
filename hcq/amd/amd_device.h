// AmdDevice: an HCQ device on an AMD GPU driven by our own packets through KFD user-mode queues (DESIGN.md "HCQ"),
// as NvDevice is on an NVIDIA GPU. A queue's commands are encoded once, in place, into an indirect buffer (IB) of
// GPU-visible host memory: PM4 packets for the compute queue (dispatches programmed from the kernel descriptor by
// hcq/amd/dispatch_plan.h, a CS_PARTIAL_FLUSH after each so the next starts after it, CS_PARTIAL_FLUSH + ACQUIRE_MEM
// for a memory barrier, RELEASE_MEM for signals and timestamps, WAIT_REG_MEM64 >= for waits) and SDMA packets for the
// copy queue (COPY_LINEAR chunks, FENCEs, POLL_REGMEM, TIMESTAMP, TRAP). A submission is one fixed-size slot of the
// queue's ring: the INDIRECT_BUFFER that runs the IB and the release of the queue's progress signal (the submission
// count) with an interrupt; then *wptr and the 64-bit doorbell, fenced in that order. A bound queue's IB lives in
// memory of its own and its patches rewrite exactly the words that change, after its previous run.
//
// Memory: IBs and kernel arguments are written into rings of GPU-visible host memory, a region reused once the
// submission that used it completed (its queue's progress signal); the ring slots the same way. Memory freed while
// work is queued (a buffer, a destroyed bound queue's IB and kernel arguments) is retired and freed once both queues'
// progress passed the submissions made before it was let go; a faulted queue passes once the device rebuilt its queues
// after the fault was reported (fault_report). Destroying the device destroys its queues first (the KFD stops them),
// then frees. Signals are 16-byte slots of uncached host memory: value at +0, the GPU clock counter's ticks at +8
// (RELEASE_MEM writes the timestamp, then the value; then the signal event's mailbox with the interrupt that wakes
// host waiters), scaled to ns by Signal.
//
// The device runs on the "amd" driver's seam (kernel-interface/driver_seams.h: the kernel's, or with MOCKGPU=1 the
// emulator the program installed) and reads faults as the KFD reports them: the MEMORY event's faulting address.
#pragma once
#include <atomic>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "hcq/amd/amd_program.h"
#include "hcq/amd/amd_registers.h"
#include "hcq/amd/amd_session.h"
#include "hcq/amd/cmd_stream.h"
#include "hcq/clock_calibration.h"
#include "hcq/device.h"
#include "hcq/hw_queue.h"
#include "hcq/suballocator.h"
#include "hcq/upload_ring.h"

namespace doorbell::amd {

class AmdDevice final : public Device {
 public:
  // On the "amd" driver's seam: the kernel's, or with MOCKGPU=1 the installed emulator. Throws naming the step of
  // the bring-up that failed. `gpu_index`: which of the KFD topology's GPUs; the device is named "AMD", "AMD:1", ...
  static std::unique_ptr<AmdDevice> open(int gpu_index = 0);
  // On `seam`, which the device owns until it is destroyed (an emulated machine: mockgpu/amd/mock_amd_seam.h).
  static std::unique_ptr<AmdDevice> open(std::unique_ptr<kernel_interface::SyscallSeam> seam, int gpu_index = 0);
  ~AmdDevice() override;

  bool emulated() const { return seam_->emulated(); }
  std::string arch() const { return session_->arch(); }  // "gfx1100", "gfx942"
  GfxIp ip() const { return session_->ip(); }
  AmdSession& session() { return *session_; }

  // Memory mapped for the host too, 256-byte aligned: a block of one of the device's sub-allocators (chunks from the
  // KFD). Throws OutOfDeviceMemory naming the request.
  AmdMemory alloc(uint64_t size, AmdDomain domain = AmdDomain::kVram);
  // Freed at once when no submitted command may touch it, else once the work submitted so far completed (or at the
  // device's destruction). Throws for memory this device did not allocate or already freed.
  void free(const AmdMemory& memory);
  size_t retired_count();

  Storage allocate_storage(size_t bytes) override;
  void release_storage(const Storage& storage) override;
  // Through the host's mapping of video memory (PUBLIC), after checking the range lies in live storage.
  // Host <-> buffer transfers. Below kSdmaTransferThreshold a memcpy through the buffer's mapping; from it on the SDMA
  // engine copies between the buffer and the host's own pages, registered with the KFD for the transfer (USERPTR:
  // no staging copy; reads of video memory through the BAR are uncached and slow on hardware). Returns once the bytes
  // arrived.
  void copy_in(const Storage& storage, uint64_t offset, const void* src, size_t bytes) override;
  void copy_out(void* dst, const Storage& storage, uint64_t offset, size_t bytes) override;
  // A registration and a submission cost several ioctls and a wait (tens of us on a KFD, an estimate: not measured on
  // hardware yet); at PCIe 4 x16's ~25 GB/s 256 KiB take ~10 us, so below it the fixed cost dominates (NV's threshold).
  static constexpr uint64_t kSdmaTransferThreshold = 256 << 10;
  // Transfers the SDMA engine made for copy_in/copy_out.
  uint64_t sdma_transfers() const { return sdma_transfers_.load(std::memory_order_relaxed); }

  bool separate_copy_queue() const override { return true; }
  void submit(const HWQueue& queue) override;
  std::shared_ptr<BoundQueue> bind(const HWQueue& queue) override;
  void submit_bound(std::shared_ptr<const BoundQueue> queue) override;
  std::string blockage() override;

  // What a queue bound here runs from: its IB (`dwords` long) and its kernel arguments (size 0 without execs).
  struct BoundMemory {
    AmdMemory ib, kernargs;
    uint32_t dwords = 0;
  };
  BoundMemory bound_memory(const BoundQueue& queue) const;

  // The first fault as one line ("" while there is none): the KFD's MEMORY event, naming the faulting address.
  // Once a fault was reported (a wait threw it, or this returned it), the next submit, bind or submit_bound rebuilds the
  // queues (AmdSession::rebuild_after_fault) and the device runs new work again: the work queued before the fault is
  // abandoned (its signals never reach their values; a wait on one times out naming it) and what it held is freed.
  std::string fault_report() const;
  // How many faults the device recovered from that way.
  uint64_t recovered_faults() const {
    std::lock_guard lock(fault_mutex_);
    return recovered_faults_;
  }

  // The GPU clock counter against the host's monotonic_ns, from kClockTries GET_CLOCK_COUNTERS brackets (the KFD
  // reads the counter between the host's two reads), measured on first use; calibrate_clock() measures it again.
  ClockCalibration clock_calibration();
  ClockCalibration calibrate_clock(int tries = kClockTries);
  static constexpr int kClockTries = 9;
  int64_t host_time_ns(uint64_t device_ns) override;
  // The counter's tick in ns as a fraction (10/1 at 100 MHz), from DEV_INFO's gpu_counter_freq.
  uint64_t ns_per_tick_num() const { return ns_per_tick_num_; }
  uint64_t ns_per_tick_den() const { return ns_per_tick_den_; }

  struct QueueState;  // in amd_device.cpp

 protected:
  SignalPlacement place_signal() override;
  // A PROGRAM of this device's AMDGPU target: its code object's image uploaded to video memory.
  std::shared_ptr<const LoadedProgram> load(const UOp& program) override;

 private:
  AmdDevice(std::unique_ptr<kernel_interface::SyscallSeam> seam, int gpu_index);

  QueueState& queue_for(std::span<const Command> commands);
  const AmdProgram& exec_program(const Command& c) const;
  // Dwords one command encodes to on `q` (a bad command throws here, before anything is taken).
  size_t command_dwords(const Command& c, const QueueState& q) const;
  size_t encoded_dwords(std::span<const Command> commands, const QueueState& q) const;
  using TakeKernargs = std::function<UploadRing::Piece(uint64_t bytes, uint64_t align)>;
  // Where an exec's kernel arguments were written (for a bound queue's patches).
  struct ExecSite {
    uint8_t* kernargs = nullptr;
  };
  void encode_command(CmdStream& s, const Command& c, std::span<void* const> args, std::span<const int64_t> scalars, const QueueState& q,
                      const TakeKernargs& take, ExecSite* site);
  // Every command, padded to the queue's IB granule; `starts` (when given) receives each command's first dword.
  void encode(CmdStream& s, std::span<const Command> commands, std::span<void* const> args, std::span<const int64_t> scalars,
              const QueueState& q, const TakeKernargs& take, std::vector<uint32_t>* starts, std::vector<ExecSite>* sites);
  // Puts one ring slot on `q` that runs `ib_dwords` at `ib_va` (none: 0) and releases the progress signal; rings the
  // doorbell. submit_mutex_ held.
  void kick(QueueState& q, uint64_t ib_va, uint32_t ib_dwords);
  // copy_in/copy_out from kSdmaTransferThreshold on: the host's pages registered, one SDMA copy, waited for.
  void sdma_transfer(uint64_t device_va, const void* host, size_t bytes, bool to_device);
  // With submit_mutex_ held: after a reported fault, rebuilds the queues (fault_report()).
  void recover_if_faulted_locked();
  // The event mailbox write and the interrupt after it that wake host waiters (AmdSession::signal_event_mailbox).
  void write_event_interrupt(CmdStream& s, const QueueState& q) const;

  std::unique_ptr<kernel_interface::SyscallSeam> seam_;
  std::unique_ptr<AmdSession> session_;
  std::string target_error_;  // why there is no target (no LLVM): loading a program throws it
  uint64_t ns_per_tick_num_ = 1, ns_per_tick_den_ = 1;
  AmdMemory signal_pool_{}, kernarg_memory_{};
  uint32_t signals_used_ = 0;
  std::optional<UploadRing> kernargs_;
  std::unique_ptr<QueueState> compute_, copy_;
  uint64_t dispatch_id_ = 0;
  // Scratch (private segment) for kernels with RSRC2.SCRATCH_EN: one store for every dispatch, grown for a kernel that
  // needs more per lane. A grown-out store is kept until the device goes: bound queues hold its address in their IBs.
  void ensure_scratch(uint32_t bytes_per_lane);
  AmdMemory scratch_{};
  std::vector<AmdMemory> old_scratch_;
  uint32_t scratch_bytes_per_lane_ = 0, scratch_waves_ = 0;

  std::mutex submit_mutex_;
  mutable std::mutex memory_mutex_;  // after submit_mutex_
  SubAllocator& heap_locked(AmdDomain domain);
  void free_retired_locked();
  std::optional<SubAllocator> vram_heap_, gtt_heap_;
  std::unordered_map<uint64_t, AmdMemory> allocations_;  // live (retired included), by address
  std::unordered_map<uint64_t, AmdMemory> storage_;
  struct Retired {
    AmdMemory memory;
    uint64_t compute_submissions, copy_submissions;
  };
  std::vector<Retired> retired_;
  void check_transfer(const Storage& storage, uint64_t offset, uint64_t bytes, const char* what) const;

  std::mutex clock_mutex_;
  std::optional<ClockCalibration> clock_;
  mutable std::mutex fault_mutex_;
  mutable std::string first_fault_;
  std::mutex transfer_mutex_;             // sdma_transfer: one host registration at a time; before submit_mutex_
  Signal* transfer_done_ = nullptr;       // under transfer_mutex_
  std::atomic<uint64_t> sdma_transfers_{0};
  uint64_t recovered_faults_ = 0;  // under fault_mutex_
};

}  // namespace doorbell::amd
