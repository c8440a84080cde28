#include "mockgpu/nv/mock_gpu.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>

#include "mockgpu/nv/mock_gpu_channel.h"
#include "mockgpu/nv/ptx_sm.h"

namespace doorbell::mockgpu::nv {

namespace {
constexpr uint32_t kYieldPollsBeforeSleep = 256;  // idle polls that yield the core before the thread sleeps
}  // namespace

MockNvGpu::MockNvGpu(MockNvDriver& driver, Options options)
    : driver_(driver), options_(options), programs_(std::make_unique<ProgramCache>()) {
  if (options_.gpu < 0 || options_.gpu >= driver_.gpu_count())
    throw std::invalid_argument("MockNvGpu: GPU " + std::to_string(options_.gpu) + " of a driver with " +
                                std::to_string(driver_.gpu_count()) + "; expected an index below that");
  ptimer_ = PTimer(driver_.gpu_config(options_.gpu).ptimer_offset_ns);
  driver_.set_preempt_hook([this](const std::vector<MockChannel>& channels, bool stopping) { preempt(channels, stopping); },
                           options_.gpu);
  thread_ = std::thread([this] { run(); });
}

MockNvGpu::~MockNvGpu() {
  driver_.set_preempt_hook(nullptr, options_.gpu);
  {
    std::lock_guard lock(preempt_mutex_);
    stop_.store(true);
    preempt_.store(true);  // a kernel still running stops at its next preemption point
  }
  if (thread_.joinable()) thread_.join();
}

void MockNvGpu::preempt(const std::vector<MockChannel>& channels, bool stopping) {
  std::lock_guard lock(preempt_mutex_);
  for (const MockChannel& c : channels) {
    if (stopping) {
      stopping_tokens_.insert(c.work_submit_token);
      if (running_token_ == c.work_submit_token) preempt_.store(true);
    } else if (auto it = stopping_tokens_.find(c.work_submit_token); it != stopping_tokens_.end()) {
      stopping_tokens_.erase(it);
    }
  }
}

bool MockNvGpu::begin_running(uint32_t work_submit_token) {
  std::lock_guard lock(preempt_mutex_);
  if (stopping_tokens_.contains(work_submit_token) || stop_.load()) return false;
  running_token_ = work_submit_token;
  preempt_.store(false);
  return true;
}

void MockNvGpu::end_running() {
  std::lock_guard lock(preempt_mutex_);
  running_token_.reset();
  preempt_.store(false);
}

std::vector<std::string> MockNvGpu::faults() const {
  std::lock_guard lock(mutex_);
  return faults_;
}

void MockNvGpu::set_fault_callback(std::function<void(const std::string&)> callback) {
  std::lock_guard lock(mutex_);
  fault_callback_ = std::move(callback);
}

bool MockNvGpu::channel_faulted(uint32_t work_submit_token) const {
  std::lock_guard lock(mutex_);
  return std::find(faulted_tokens_.begin(), faulted_tokens_.end(), work_submit_token) != faulted_tokens_.end();
}

MockNvGpuStats MockNvGpu::stats() const {
  MockNvGpuStats s;
  s.gpfifo_entries = stats_.gpfifo_entries.load();
  s.methods = stats_.methods.load();
  s.launches = stats_.launches.load();
  s.copies = stats_.copies.load();
  s.semaphore_releases = stats_.semaphore_releases.load();
  s.semaphore_acquires = stats_.semaphore_acquires.load();
  s.non_stall_interrupts = stats_.non_stall_interrupts.load();
  s.blocks = stats_.blocks.load();
  s.preemptions = stats_.preemptions.load();
  return s;
}

// What RM writes on a channel error (nvos.h NvNotification: timeStamp u64 at +0, info32 at +8, info16 at +12, status
// u16 at +14; entry NV_CHANNELGPFIFO_NOTIFICATION_TYPE_ERROR = 0): a robust-channel error code in info32 and a
// non-zero status, so the host sees the fault in memory as on hardware. An SM's MMU fault is 31
// (ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT, nverror.h:49 in open-gpu-kernel-modules 580.95.05); the mock classifies
// no other fault and writes 13 (ROBUST_CHANNEL_GR_EXCEPTION, nverror.h:37) for all of them.
constexpr uint32_t kRcGrException = 13;
constexpr uint32_t kRcMmuFault = 31;
constexpr uint16_t kNotificationStatusError = 0xffff;

void MockNvGpu::fault(ChannelState& channel, const std::string& message,
                      const kernel_interface::nvidia::NV83DE_CTRL_DEBUG_READ_MMU_FAULT_INFO_ENTRY* mmu_fault) {
  channel.faulted = true;
  // RM writes the notifier first but records the fault in the same service, under the GPU lock the debugger's
  // control takes (firmware-notes/nvidia-hopper.md §16); recording first keeps that guarantee here: a host
  // that saw the notifier finds the address.
  if (mmu_fault != nullptr) driver_.record_mmu_fault(channel.info.client, channel.info.handle, *mmu_fault);
  if (channel.info.error_notifier != nullptr) {
    const uint64_t now = ptimer_.now_ns();  // RM stamps the notifier with the GPU's time
    const uint32_t error = mmu_fault != nullptr ? kRcMmuFault : kRcGrException;
    std::memcpy(channel.info.error_notifier, &now, 8);
    std::memcpy(channel.info.error_notifier + 8, &error, 4);
    const uint16_t info16 = 0;
    std::memcpy(channel.info.error_notifier + 12, &info16, 2);
    std::atomic_ref<uint16_t>(*reinterpret_cast<uint16_t*>(channel.info.error_notifier + 14)).store(kNotificationStatusError, std::memory_order_release);
  }
  const std::string text = channel.name() + " faulted: " + message;
  std::function<void(const std::string&)> callback;
  {
    std::lock_guard lock(mutex_);
    faults_.push_back(text);
    faulted_tokens_.push_back(channel.info.work_submit_token);
    callback = fault_callback_;
  }
  if (callback) {
    try {
      callback(text);
    } catch (...) {
      // The callback belongs to the test or device; its failure must not take the GPU thread down.
    }
  }
}

MockNvGpu::ScanResult MockNvGpu::scan_channels() {
  ScanResult result;
  const std::vector<MockChannel> current = driver_.channels(options_.gpu);
  // Forget channels the driver freed.
  for (auto it = channels_.begin(); it != channels_.end();) {
    const bool alive = std::any_of(current.begin(), current.end(), [&](const MockChannel& c) {
      return c.work_submit_token == it->first && c.handle == it->second->info.handle;
    });
    it = alive ? std::next(it) : channels_.erase(it);
  }
  for (const MockChannel& info : current) {
    if (!info.scheduled || info.userd == nullptr || info.gpfifo_entries == 0) continue;
    auto& slot = channels_[info.work_submit_token];
    if (!slot) {
      slot = std::make_unique<ChannelState>();
      slot->gp_get = cp::load32(info.userd + hw::kUserdGpGet) % info.gpfifo_entries;
    }
    ChannelState& channel = *slot;
    channel.info = info;
    if (channel.faulted || channel.stopped) continue;
    if (!begin_running(info.work_submit_token)) continue;  // RM is freeing it: the GPU no longer fetches from it
    struct EndRunning {
      MockNvGpu& gpu;
      ~EndRunning() { gpu.end_running(); }
    } end_running{*this};
    try {
      const cp::ChannelExecutor::Result r = cp::ChannelExecutor(*this, channel).run();
      result.progressed |= r.progressed;
      result.stalled |= r.stalled;
    } catch (const PtxPreempted&) {
      // RM is freeing the channel: its work is abandoned where it stood, and it runs nothing more.
      channel.stopped = true;
      stats_.preemptions.fetch_add(1, std::memory_order_relaxed);
    } catch (const cp::SmMmuFault& e) {
      fault(channel, e.what(), &e.fault);
    } catch (const std::exception& e) {
      fault(channel, e.what());
    } catch (...) {
      fault(channel, "unknown error");
    }
  }
  return result;
}

void MockNvGpu::run() {
  bool pending = true;  // scan once at start: work may have been submitted before the GPU existed
  bool stalled = false;
  uint32_t idle_polls = 0;
  while (!stop_.load(std::memory_order_relaxed)) {
    if (driver_.take_doorbell(options_.gpu)) pending = true;
    if (pending) {
      ScanResult r;
      try {
        std::lock_guard execution(driver_.execution_mutex());  // no channel or memory is freed while they run
        r = scan_channels();
      } catch (...) {
        // driver_.channels() failed (out of memory): retry on the next doorbell.
      }
      pending = r.progressed;
      stalled = r.stalled;
      if (pending) {
        idle_polls = 0;
        continue;
      }
    }
    // Idle or stalled: yield the core for a while, then sleep in slices; stalled acquires are re-checked each time.
    if (idle_polls < kYieldPollsBeforeSleep) {
      ++idle_polls;
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(options_.idle_slice);
    }
    // A stalled channel's acquire is re-checked after each pause; an idle GPU waits for a doorbell.
    if (stalled) pending = true;
  }
}

}  // namespace doorbell::mockgpu::nv
