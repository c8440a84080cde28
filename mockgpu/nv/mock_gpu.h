// The emulated NVIDIA GPU's command processor: one thread (per GPU of the driver, Options::gpu) that executes, with
// the rules of the hardware, what the NV backend writes through a MockNvDriver to that GPU: GPFIFO entries (clc86f.h), pushbuffer methods of the host, compute and copy
// classes, and QMDs (V04_00 on HOPPER_COMPUTE_A, V03_00 on AMPERE_COMPUTE_B / ADA_COMPUTE_A). Tables and field
// positions are in mock_gpu_methods.h, read from NVIDIA's headers independently of hcq/nv's encoders.
//
// The thread waits on the usermode doorbell; on any doorbell (writes may coalesce) it scans every scheduled channel
// and runs each from its GPGet (USERD +0x88, written back as entries complete) to its GPPut (USERD +0x8c). A channel
// stalled on a semaphore acquire keeps its place while the others run; when every channel is stalled or idle the
// thread sleeps in short slices (re-checking acquires) instead of spinning.
//
// Compute: the program image at the QMD's program address is, in the mock, NUL-terminated PTX text (real hardware
// gets SASS). It runs on the PTX SM interpreter (ptx_sm.h) with the parameters read from constant buffer 0 at
// kCbuf0ParamOffset. Timestamps are the GPU's own timer (ptimer.h): nanoseconds, but not on the host's clock.
//
// Faults: any error on a channel (unknown method, unmapped or misaligned address, bad QMD, PTX fault...) stops that
// channel for good; the other channels keep running. The host learns of it as from hardware: RM's NvNotification in
// the channel's error notifier (hObjectError) and, for a kernel's access to an unmapped address (an SM's MMU fault),
// the fault RM records for the channel's compute context, which NV83DE_CTRL_CMD_DEBUG_READ_MMU_FAULT_INFO on a
// GT200_DEBUGGER reads back. A channel that RM is freeing is preempted (MockNvDriver's preempt hook): a kernel running
// on it stops at its next preemption point (a block's start, a taken branch, the next QMD of a chain) and the channel
// runs nothing more; that is no fault and writes no notifier. For tests of the emulator itself, each fault's message (naming the channel, the method
// or structure and the address) is also kept here (faults(), the callback); no device reads those.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "mockgpu/nv/mock_nv_driver.h"
#include "mockgpu/nv/ptimer.h"

namespace doorbell::mockgpu::nv {

// Where CUDA sm_90 code finds its kernel parameters in constant bank 0 (firmware-notes/nvidia-hopper.md §14,
// measured with CUDA 13.0: EIATTR_PARAM_CBANK 0x210 on sm_90; 0x160 on sm_80/89).
inline constexpr uint64_t kCbuf0ParamOffset = 0x210;

struct MockNvGpuStats {
  uint64_t gpfifo_entries = 0;
  uint64_t methods = 0;   // data words executed (an immediate counts one)
  uint64_t launches = 0;  // grids run, chained ones included
  uint64_t copies = 0;
  uint64_t semaphore_releases = 0;  // host, copy-engine and QMD releases
  uint64_t semaphore_acquires = 0;  // acquires that passed
  uint64_t non_stall_interrupts = 0;
  uint64_t blocks = 0;       // thread blocks (CTAs) that ran to their end
  uint64_t preemptions = 0;  // launches abandoned because RM freed their channel
};

namespace cp {
class ChannelExecutor;
}

class MockNvGpu {
 public:
  struct Options {
    // How long the thread sleeps between re-checks while every channel is stalled or idle (also the bound on how
    // late it notices a stop request).
    std::chrono::microseconds idle_slice{50};
    // Which of the driver's GPUs this is (MockNvDriver with several GPUs: one MockNvGpu, one thread, per GPU).
    int gpu = 0;
  };

  explicit MockNvGpu(MockNvDriver& driver) : MockNvGpu(driver, Options{}) {}
  MockNvGpu(MockNvDriver& driver, Options options);
  ~MockNvGpu();
  MockNvGpu(const MockNvGpu&) = delete;
  MockNvGpu& operator=(const MockNvGpu&) = delete;

  std::vector<std::string> faults() const;
  // Called on the GPU thread with each new fault's message; exceptions it throws are swallowed. It runs while the GPU
  // holds the driver's execution_mutex(), so it must not free driver objects.
  void set_fault_callback(std::function<void(const std::string&)> callback);
  bool channel_faulted(uint32_t work_submit_token) const;
  MockNvGpuStats stats() const;
  // The GPU's timer, which every timestamp it writes reads (MockGpuConfig::ptimer_offset_ns).
  const PTimer& ptimer() const { return ptimer_; }

  struct ChannelState;  // per-channel engine state, in mock_gpu.cpp
  struct ProgramCache;

 private:
  struct ScanResult {
    bool progressed = false;  // some channel ran a method or finished an acquire
    bool stalled = false;     // some channel waits on an acquire
  };
  void run();
  ScanResult scan_channels();
  // `mmu_fault`: the MMU's report of an SM's access, which RM records for the channel's context.
  void fault(ChannelState& channel, const std::string& message,
             const kernel_interface::nvidia::NV83DE_CTRL_DEBUG_READ_MMU_FAULT_INFO_ENTRY* mmu_fault = nullptr);

  // The preempt hook: channels RM is about to free (stopping) or has freed.
  void preempt(const std::vector<MockChannel>& channels, bool stopping);
  // Whether the channel may run (RM is not freeing it); when it may, it becomes the one preempt() stops.
  bool begin_running(uint32_t work_submit_token);
  void end_running();

  MockNvDriver& driver_;
  Options options_;
  PTimer ptimer_;
  std::map<uint32_t, std::unique_ptr<ChannelState>> channels_;  // by work-submit token; GPU thread only
  std::unique_ptr<ProgramCache> programs_;                      // GPU thread only

  mutable std::mutex mutex_;  // guards what other threads read: faults, callback, faulted tokens
  std::vector<std::string> faults_;
  std::vector<uint32_t> faulted_tokens_;
  std::function<void(const std::string&)> fault_callback_;

  struct AtomicStats {
    std::atomic<uint64_t> gpfifo_entries{0}, methods{0}, launches{0}, copies{0}, semaphore_releases{0},
        semaphore_acquires{0}, non_stall_interrupts{0}, blocks{0}, preemptions{0};
  };
  AtomicStats stats_;

  std::mutex preempt_mutex_;                  // guards stopping_tokens_ and running_token_
  std::multiset<uint32_t> stopping_tokens_;   // channels RM is freeing (one entry per free in progress)
  std::optional<uint32_t> running_token_;     // the channel the GPU thread runs now
  std::atomic<bool> preempt_{false};          // set when RM frees the running channel; the SM polls it
  friend class cp::ChannelExecutor;

  std::atomic<bool> stop_{false};
  std::thread thread_;  // last: starts after everything above is built
};

}  // namespace doorbell::mockgpu::nv
