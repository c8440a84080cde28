// NvDevice: an HCQ device on an NVIDIA GPU driven by our own packets (DESIGN.md "HCQ"): a queue's commands become
// host, compute and copy-engine methods in a pushbuffer, launched by a GPFIFO entry, a GPPut store and a doorbell
// write. Kernels launch by QMD (V04 on Hopper) with their parameters in constant bank 0; back-to-back kernels chain
// (the first QMD schedules the next when it completes); signals are semaphore releases with timestamps, waits are
// semaphore acquires (circular >= on 64 bits). A queue runs on one channel: with copies on the copy engine's, else
// on the compute engine's (tinygrad's split into compute and copy queues). Every command has a declared size and is
// encoded once, in place, into space reserved for it (nv_commands.h); a bound queue lives in its own memory and its
// patches rewrite only the recorded words there (a semaphore's payload, a parameter in cbuf 0), after its previous
// run. Ordering: each compute submission starts with INVALIDATE_SKED_CACHES and chained QMDs are read afresh (their
// memory is recycled); a memory barrier between grids waits for idle; GPPut and the doorbell are fenced apart.
//
// Memory: pushbuffers and kernel arguments are written into rings of GPU-visible host memory; a region is reused
// once the submission that used it has completed (each submission ends with a release of the channel's progress
// signal). The same rule holds for every allocation a submitted command may touch: memory freed or released while
// work is queued (a buffer, a destroyed bound queue's pushbuffer and kernel arguments) is retired, and freed only
// once both channels' progress signals passed the submissions made before it was let go. A channel that faulted or
// hangs never passes, so what it may touch then stays until the device is destroyed; programs live as long as the
// device. Destroying the device stops its channels first (RM preempts them as it frees them: a running kernel is
// abandoned, nothing waits for it) and frees the memory after. Signals are 32-byte slots of GPU-visible host memory: value at +0, timestamp at +8 (written by a signal),
// a second timestamp at +24 (written by a timestamp command: a release always writes its payload first, here at +16).
//
// The device runs on the seam it is opened with: open() asks kernel-interface for the "nvidia" driver's
// (kernel-interface/driver_seams.h: the kernel's, or with MOCKGPU=1 the emulator the program installed, mockgpu/nv),
// and reads faults only as the hardware reports them: the channels' error notifier and RM's debugger object.
#pragma once
#include <array>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "hcq/clock_calibration.h"
#include "hcq/device.h"
#include "hcq/hw_queue.h"
#include "hcq/nv/nv_program.h"
#include "hcq/nv/pushbuffer.h"
#include "hcq/nv/nv_session.h"
#include "hcq/nv/nv_variants.h"
#include "hcq/suballocator.h"
#include "hcq/upload_ring.h"
#include "ir/uop.h"

namespace doorbell::nv {

// A Hopper's timer counts in 32 ns steps: its nanoseconds field is TIME_0 bits 31:5 (firmware-notes/nvidia-hopper.md
// §18), so a stamp lies up to 31 ns before the moment it was taken.
inline constexpr int64_t kPtimerTickNs = 32;

class NvDevice final : public Device {
 public:
  // On the "nvidia" driver's seam from kernel-interface: the kernel's, or with MOCKGPU=1 the installed emulator.
  // Throws naming the step of the bring-up that failed (no driver, an unsupported driver version, ...).
  // `gpu_index`: which of the driver's GPUs (0 the first); the device is named "NV", "NV:1", ...
  static std::unique_ptr<NvDevice> open(int gpu_index = 0);
  // On `seam`, which the device owns until it is destroyed: e.g. an emulated GPU built with another MockGpuConfig
  // (mockgpu/nv/mock_nv_seam.h).
  static std::unique_ptr<NvDevice> open(std::unique_ptr<kernel_interface::SyscallSeam> seam, int gpu_index = 0);
  ~NvDevice() override;

  // The driver is an emulator (its seam says so): video memory is host memory, the "SASS" is PTX text.
  bool emulated() const { return seam_->emulated(); }
  // The GPU's architecture as ptxas names it ("sm_90"), from the SM version the driver reports.
  std::string arch() const;
  // The PTX target the renderer writes for it (compiler/gpu/gpu_target.h): sm_90 on Hopper, sm_80 on Ampere/Ada
  // (ptxas assembles sm_80 PTX for any later sm_8x). target() is the whole compile target (compiler/gpu/ptx_target.h).
  std::string ptx_target() const;
  NvSession& session() { return *session_; }

  // Video memory (default) or GPU-visible host memory, mapped for the host too, 256-byte aligned (2 MiB-aligned
  // from 2 MiB on): a block of one of the device's two sub-allocators (hcq/suballocator.h; chunks from RM), or with
  // sub-allocation off an RM allocation of its own. `memory.handle` is the RM allocation it lies in; the device
  // knows it by `memory.va`.
  // Throws OutOfDeviceMemory naming the request, what is free and RM's answer.
  NvMemory alloc(uint64_t size, bool system_memory = false);
  // Lets the memory go: freed at once when no submitted command may touch it, else once the work submitted so far
  // completed (or at the device's destruction). Throws for memory this device did not allocate or already freed.
  void free(const NvMemory& memory);
  // How many freed allocations still wait for submitted work to complete (after freeing those whose work did).
  size_t retired_count();
  // Sub-allocation (the default) or, as the baseline the benchmarks measure it against, one RM allocation per
  // buffer (video memory rounded to 2 MiB): DOORBELL_NV_SUBALLOC=0 in the environment, or this call before the
  // first allocation.
  void set_suballocation(bool on);
  // The video- or system-memory sub-allocator's figures (all zero before its first allocation).
  SubAllocator::Stats heap_stats(bool system_memory);

  // Buffer storage for host_buffers: video memory mapped for the host, zero-filled.
  Storage allocate_storage(size_t bytes) override;
  void release_storage(const Storage& storage) override;
  // Host <-> buffer transfers. Below kStagedCopyThreshold a memcpy through the buffer's mapping; from it on the copy
  // engine moves the bytes between the buffer and a ring of kStagingSlots pinned host slots of kStagingSlotBytes,
  // the host filling (or draining) one slot while the engine copies another. Returns once the bytes arrived.
  void copy_in(const Storage& storage, uint64_t offset, const void* src, size_t bytes) override;
  void copy_out(void* dst, const Storage& storage, uint64_t offset, size_t bytes) override;
  // A submission and its completion wait cost about 10 us (doorbell, semaphore poll); at PCIe 5 x16's ~25 GB/s that
  // is the time of 256 KiB, so below it the fixed cost dominates and a memcpy is faster (an estimate, not measured
  // on hardware yet). Reads of video memory through the BAR mapping are uncached, which favours the engine sooner.
  static constexpr uint64_t kStagedCopyThreshold = 256 << 10;
  static constexpr uint64_t kStagingSlotBytes = 2 << 20;
  static constexpr uint64_t kStagingSlots = 4;  // 8 MiB of pinned host memory, allocated on the first staged copy

  bool separate_copy_queue() const override { return true; }

  // What a queue bound to this device runs from: its pushbuffer (`words` long) and its kernel arguments and QMDs
  // (size 0 without execs). Throws std::invalid_argument for a queue bound to another device.
  struct BoundMemory {
    NvMemory pushbuffer, kernargs;
    uint32_t words = 0;
  };
  BoundMemory bound_memory(const BoundQueue& queue) const;

  void submit(const HWQueue& queue) override;
  std::shared_ptr<BoundQueue> bind(const HWQueue& queue) override;
  void submit_bound(std::shared_ptr<const BoundQueue> queue) override;

  // The first fault as one line ("" while there is none), as the hardware reports it: the channels' error notifier
  // (NvNotification status and the Xid, as RM writes them on a channel error), then the MMU faults RM's debugger
  // object recorded for the compute context, each naming the faulting address. Cheap until a fault: every wait on
  // the device's signals polls it.
  std::string fault_report() const;

  // The offset of the GPU's timer (the PTIMER nanoseconds its semaphore releases stamp) from the host's monotonic_ns,
  // and its bound (hcq/clock_calibration.h): measured on first use from kClockTries brackets on each channel (both
  // stamp the one PTIMER; the overlap of all brackets decides) and kept. calibrate_clock() measures it again: the two
  // clocks run on different crystals and drift apart by some ppm. Each try waits for its release like any signal: it
  // throws as a wait does when a channel faulted, or times out behind a queue held by a wait nobody satisfies.
  ClockCalibration clock_calibration();
  ClockCalibration calibrate_clock(int tries_per_channel = kClockTries);
  static constexpr int kClockTries = 5;
  // A stamp of this device's queues on the host's clock, by clock_calibration() (trace.h draws kernels with it).
  int64_t host_time_ns(uint64_t device_ns) override;

  // How later submissions launch (hcq/nv/nv_variants.h); for experiments on a fresh device, not for use mid-stream.
  void set_launch_variant(const NvLaunchVariant& variant) { variant_ = variant; }
  const NvLaunchVariant& launch_variant() const { return variant_; }

  struct ChannelState;  // defined in nv_device.cpp
  // Where a bound queue's patch points were encoded, by command index: a signal's or wait's SEM_PAYLOAD_LO word in its
  // pushbuffer (PAYLOAD_HI follows), and an exec's first parameter in its constant bank 0 (8 bytes per parameter:
  // buffers, then scalars).
  struct PatchSites {
    std::vector<uint32_t> payload_word;
    std::vector<uint8_t*> params;
    std::vector<uint32_t> copy_word;  // a copy's first pushbuffer word (its methods, copy_linear_words of them)
  };

 protected:
  SignalPlacement place_signal() override;
  // A PROGRAM of this device's PTX target (compiler/gpu/ptx_target.h): on hardware the cubin's code uploaded with
  // what its QMD needs (registers, shared memory, the parameters' place in constant bank 0, from the cubin); on the
  // emulated GPU the PTX text itself, which its SM interprets.
  std::shared_ptr<const LoadedProgram> load(const UOp& program) override;

 private:
  NvDevice(std::unique_ptr<kernel_interface::SyscallSeam> seam, int gpu_index);

  ChannelState& channel_for(std::span<const Command> commands);
  // The exec's program, checked: loaded on this device, with as many parameters as the command has.
  const NvProgram& exec_program(const Command& c) const;
  // The pushbuffer words encode() writes for `commands` (each command's declared size); throws for a command that
  // cannot be encoded, before anything is taken from a ring.
  size_t encoded_words(std::span<const Command> commands, const ChannelState& ch) const;
  // Writes the queue's methods into `pb` (reserved in place: a ring piece or a bound pushbuffer); kernel arguments and
  // QMDs go to `take_kernargs`. With `sites`, records where each signal's/wait's payload and each exec's parameters
  // were written (sized to the commands by the caller).
  template <class Take>
  void encode(std::span<const Command> commands, std::span<void* const> args, std::span<const int64_t> scalars, ChannelState& ch,
              PushBuffer& pb, Take&& take_kernargs, PatchSites* sites);
  // Takes `words` plus the progress release from the channel's pushbuffer ring, lets `write` fill the words in place,
  // appends the progress release and rings the doorbell; a bound queue's words run first from their own GP entry.
  template <class Write>
  void kick(ChannelState& ch, size_t words, Write&& write, const NvMemory* bound_pushbuffer = nullptr, uint32_t bound_words = 0);

  std::unique_ptr<kernel_interface::SyscallSeam> seam_;  // destroyed after the session, which closes its fds on it
  std::unique_ptr<NvSession> session_;
  NvMemory signal_pool_{}, kernarg_memory_{};
  std::optional<UploadRing> kernargs_;
  uint32_t signals_used_ = 0;
  std::unique_ptr<ChannelState> compute_, copy_;
  NvLaunchVariant variant_{};
  // Shader local memory (stacks and spills): grown for a loaded kernel that needs more per thread than the current
  // store holds, the old store retired once the compute channel passed the work before it.
  void ensure_local_memory(uint32_t bytes_per_thread);
  NvMemory local_memory_{};
  uint32_t local_bytes_per_thread_ = 0;
  // Frees the retired memory both channels are done with; memory_mutex_ held.
  void free_retired_locked();

  std::mutex submit_mutex_;
  // The session's allocations and frees, the heaps, allocations_, storage_, retired_; after submit_mutex_.
  mutable std::mutex memory_mutex_;
  // Memory management (memory_mutex_ held): an allocation through the heap or RM; its release.
  NvMemory alloc_locked(uint64_t size, bool system_memory, std::string_view what);
  void release_locked(const NvMemory& memory);
  SubAllocator& heap_locked(bool system_memory);
  std::optional<SubAllocator> video_heap_, system_heap_;  // made on first use
  bool suballocate_ = suballocation_default();
  static bool suballocation_default();
  struct Allocation {
    NvMemory memory;
    bool suballocated;
  };
  std::unordered_map<uint64_t, Allocation> allocations_;  // live (retired included), by GPU address
  std::unordered_map<uint64_t, NvMemory> storage_;        // by GPU address (Storage::handle)
  struct Retired {
    NvMemory memory;
    uint64_t compute_submissions, copy_submissions;  // each channel's submissions when it was let go
  };
  std::vector<Retired> retired_;
  // Staged transfers (copy_in/copy_out): one at a time, each slot reused once the copy that used it completed.
  std::mutex transfer_mutex_;
  NvMemory staging_{};
  std::array<uint64_t, kStagingSlots> staging_slot_done_{};  // the copy channel submission that last used each slot
  // Kicks a copy of `bytes` from `src` to `dst` (GPU addresses) on the copy channel; returns its submission count.
  uint64_t kick_copy(uint64_t dst, uint64_t src, uint64_t bytes);
  uint8_t* staging_slot(size_t slot);  // waits until its last copy completed; transfer_mutex_ held
  // Throws std::invalid_argument unless [offset, offset + bytes) lies in live storage of this device.
  void check_transfer(const Storage& storage, uint64_t offset, uint64_t bytes, const char* what) const;
  // Clock calibration: one bracket on `ch` (submits a timestamped release of clock_signal_ and waits for it).
  ClockSample clock_sample(ChannelState& ch);
  std::mutex clock_mutex_;  // before submit_mutex_
  std::optional<ClockCalibration> clock_;
  Signal* clock_signal_ = nullptr;
  mutable std::mutex fault_mutex_;
  mutable std::string first_fault_;  // the report, once a fault was seen (a faulted channel stays faulted)
};

}  // namespace doorbell::nv
