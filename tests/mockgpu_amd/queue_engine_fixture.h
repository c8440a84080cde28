// A queue engine (mockgpu/amd/queue_engine.h) on a small emulated address space, driven as the runtime drives it:
// packets written into the ring, the write pointer announced through the 64-bit doorbell, the engine's read-pointer
// report polled. The hooks record what the engine tells the KFD (faults, interrupts) and what it hands the shader
// core (DispatchState).
#pragma once
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "mockgpu/amd/queue_engine.h"

namespace doorbell::mockgpu::amd::testing {

using Words = std::vector<uint32_t>;

inline bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// One mapping: the ring at its start, then the pointers, then data.
inline constexpr uint64_t kBase = 0x7f0000100000, kArenaBytes = 1 << 20;
inline constexpr uint64_t kRingVa = kBase, kRptrVa = kBase + 0x10000, kWptrVa = kBase + 0x11000,
                          kData = kBase + 0x20000;
inline constexpr uint64_t kUnmapped = 0x7f0000000000;  // nothing maps it

// How a test's engine is made: the target, the ring size, and hooks replacing the recorders.
struct EngineOptions {
  uint32_t gfx_target_version = 110000;
  uint64_t ring_bytes = 4096;
  std::function<void(const DispatchState&)> dispatch;
  std::function<uint64_t()> clock;
  EngineOptions& target(uint32_t version) {
    gfx_target_version = version;
    return *this;
  }
  EngineOptions& ring(uint64_t bytes) {
    ring_bytes = bytes;
    return *this;
  }
  EngineOptions& dispatch_hook(std::function<void(const DispatchState&)> f) {
    dispatch = std::move(f);
    return *this;
  }
  EngineOptions& clock_hook(std::function<uint64_t()> f) {
    clock = std::move(f);
    return *this;
  }
};

class QueueEngineTest : public ::testing::Test {
 protected:
  using Options = EngineOptions;

  QueueEngineTest() : arena_(kArenaBytes / 8, 0) {
    EXPECT_TRUE(memory_.map(kBase, reinterpret_cast<uint8_t*>(arena_.data()), kArenaBytes, 1));
  }
  ~QueueEngineTest() override { engine_.reset(); }

  void start(QueueDesc::Kind kind, Options options) {
    sdma_ = kind == QueueDesc::Kind::kSdma;
    desc_.kind = kind;
    desc_.gfx_target_version = options.gfx_target_version;
    desc_.queue_id = sdma_ ? 2 : 3;
    desc_.ring_va = kRingVa;
    desc_.ring_bytes = options.ring_bytes;
    desc_.wptr_va = kWptrVa;
    desc_.rptr_va = kRptrVa;
    desc_.doorbell = &doorbell_;
    EngineHooks hooks;
    hooks.memory = &memory_;
    hooks.interrupt = [this](uint32_t context) {
      std::lock_guard lock(mutex_);
      interrupts_.push_back(context);
    };
    hooks.fault = [this](const QueueFault& fault) {
      std::lock_guard lock(mutex_);
      faults_.push_back(fault);
    };
    hooks.clock = options.clock;
    hooks.dispatch = options.dispatch ? options.dispatch : [this](const DispatchState& state) {
      std::lock_guard lock(mutex_);
      dispatches_.push_back(state);
    };
    engine_ = sdma_ ? make_sdma_engine(desc_, std::move(hooks)) : make_pm4_engine(desc_, std::move(hooks));
  }
  void start_pm4(Options options = Options()) { start(QueueDesc::Kind::kPm4Compute, std::move(options)); }
  void start_sdma(Options options = Options()) { start(QueueDesc::Kind::kSdma, std::move(options)); }

  // Writes the words at the write pointer (wrapping at the ring end), then the wptr word, then the doorbell.
  void submit(const Words& words) {
    const uint64_t ring_dwords = desc_.ring_bytes / 4;
    uint64_t dword = sdma_ ? wptr_ / 4 : wptr_;
    auto* ring = reinterpret_cast<uint32_t*>(arena_.data());
    for (uint32_t w : words) ring[dword++ % ring_dwords] = w;
    wptr_ = sdma_ ? dword * 4 : dword;
    std::atomic_ref<uint64_t>(word64(kWptrVa)).store(wptr_, std::memory_order_release);
    __atomic_store_n(&doorbell_, wptr_, __ATOMIC_RELEASE);
  }

  uint64_t& word64(uint64_t va) { return *reinterpret_cast<uint64_t*>(host(va)); }
  uint32_t& word32(uint64_t va) { return *reinterpret_cast<uint32_t*>(host(va)); }
  uint8_t* host(uint64_t va) { return reinterpret_cast<uint8_t*>(arena_.data()) + (va - kBase); }
  uint64_t load64(uint64_t va) { return std::atomic_ref<uint64_t>(word64(va)).load(); }
  uint32_t load32(uint64_t va) { return std::atomic_ref<uint32_t>(word32(va)).load(); }
  void store32(uint64_t va, uint32_t value) { std::atomic_ref<uint32_t>(word32(va)).store(value); }
  void store64(uint64_t va, uint64_t value) { std::atomic_ref<uint64_t>(word64(va)).store(value); }
  uint64_t reported_rptr() { return load64(kRptrVa); }

  static bool wait_for(const std::function<bool()>& done, std::chrono::milliseconds limit = std::chrono::seconds(10)) {
    const auto end = std::chrono::steady_clock::now() + limit;
    while (!done()) {
      if (std::chrono::steady_clock::now() > end) return false;
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    return true;
  }
  // Waits until the engine has reported everything submitted as read; fails the test on a fault.
  void drain() {
    ASSERT_TRUE(wait_for([&] { return reported_rptr() == wptr_ || engine_->faulted(); })) << "queue did not drain";
    ASSERT_FALSE(engine_->faulted()) << first_fault().message;
  }
  // Waits for the queue's fault and returns it; exactly one is reported.
  QueueFault fault() {
    EXPECT_TRUE(wait_for([&] { return engine_->faulted(); })) << "no fault";
    std::lock_guard lock(mutex_);
    EXPECT_EQ(faults_.size(), 1u);
    return faults_.empty() ? QueueFault{} : faults_.front();
  }
  QueueFault first_fault() {
    std::lock_guard lock(mutex_);
    return faults_.empty() ? QueueFault{} : faults_.front();
  }
  std::vector<uint32_t> interrupts() {
    std::lock_guard lock(mutex_);
    return interrupts_;
  }
  std::vector<DispatchState> dispatches() {
    std::lock_guard lock(mutex_);
    return dispatches_;
  }

  static uint32_t lo(uint64_t va) { return static_cast<uint32_t>(va); }
  static uint32_t hi(uint64_t va) { return static_cast<uint32_t>(va >> 32); }

  nv::GpuMemory memory_;
  std::vector<uint64_t> arena_;
  uint64_t doorbell_ = 0;
  QueueDesc desc_;
  bool sdma_ = false;
  uint64_t wptr_ = 0;  // PM4: dwords; SDMA: bytes
  std::mutex mutex_;
  std::vector<QueueFault> faults_;
  std::vector<uint32_t> interrupts_;
  std::vector<DispatchState> dispatches_;
  std::unique_ptr<QueueEngine> engine_;  // last: destroyed first, while what its hooks touch is alive
};

}  // namespace doorbell::mockgpu::amd::testing
