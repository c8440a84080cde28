// A brought-up emulated H200 (tests/nv_driver/nv_bringup.h: driver, device, compute and copy channels) with its
// command processor running, a CPU-visible arena of GPU memory, and submission the way the NV backend does it:
// pushbuffer words into GPU memory, a GP entry into the ring, GPPut, fence, doorbell (gpfifo_submit_writes).
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "hcq/nv/gpfifo.h"
#include "hcq/nv/nv_classes.h"
#include "hcq/nv/nv_commands.h"
#include "hcq/nv/pushbuffer.h"
#include "hcq/nv/qmd.h"
#include "kernel-interface/nvidia/mmu_fault_info.h"
#include "mockgpu/nv/mock_gpu.h"
#include "tests/nv_driver/nv_bringup.h"

namespace doorbell::mockgpu_nv_test {

using mockgpu::nv::MockNvGpu;
using nv_driver_test::GpuBuffer;
using nv_driver_test::NvBringUp;

inline constexpr uint64_t kArenaVa = nv_driver_test::kLowVaBase + 0x1000000;
inline constexpr uint64_t kArenaSize = 32u << 20;
inline constexpr auto kWaitLimit = std::chrono::seconds(20);

// One GPFIFO ring as the host sees it.
struct Ring {
  std::uint8_t* entries = nullptr;  // CPU view of the ring
  std::uint8_t* userd = nullptr;    // CPU view of USERD
  std::uint32_t token = 0;
  std::uint32_t put = 0;
};

class MockNvGpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    bring_.open_driver();
    bring_.device();
    bring_.channels();
    arena_ = bring_.alloc(kArenaSize, kArenaVa);
    std::memset(arena_.cpu, 0, kArenaSize);
    compute_ = {bring_.gpfifo_area.cpu, bring_.gpfifo_area.cpu + nv_driver_test::kComputeUserdOffset,
                bring_.compute_token};
    copy_ = {bring_.gpfifo_area.cpu + nv_driver_test::kCopyRingOffset,
             bring_.gpfifo_area.cpu + nv_driver_test::kCopyUserdOffset, bring_.copy_token};
    gpu_ = std::make_unique<MockNvGpu>(bring_.driver);
    gpu_->set_fault_callback([this](const std::string& message) {
      std::lock_guard lock(callback_mutex_);
      callback_messages_.push_back(message);
    });
  }
  void TearDown() override { gpu_.reset(); }  // the GPU thread stops before the driver goes

  // Bump allocation in the arena: GPU VA and CPU pointer.
  struct Block {
    std::uint64_t va;
    std::uint8_t* cpu;
  };
  Block take(std::uint64_t bytes, std::uint64_t alignment = 256) {
    next_ = (next_ + alignment - 1) / alignment * alignment;
    Block b{kArenaVa + next_, arena_.cpu + next_};
    next_ += bytes;
    if (next_ > kArenaSize) throw std::runtime_error("test arena exhausted");
    return b;
  }

  // Writes the words into the arena, appends one GP entry pointing at them and rings the doorbell.
  std::uint64_t submit(Ring& ring, std::span<const std::uint32_t> words) {
    const Block pb = take(words.size() * 4, 16);
    std::memcpy(pb.cpu, words.data(), words.size() * 4);
    submit_entry(ring, nv::encode_gpfifo_entry({pb.va, static_cast<std::uint32_t>(words.size())}));
    return pb.va;
  }
  void submit_entry(Ring& ring, std::uint64_t entry) {
    std::memcpy(ring.entries + 8 * ring.put, &entry, 8);
    ring.put = (ring.put + 1) % nv_driver_test::kRingEntries;
    for (const nv::SubmitWrite& w : nv::gpfifo_submit_writes(ring.put, nv_driver_test::kRingEntries, ring.token)) {
      if (w.region == nv::SubmitRegion::kFence) {
        std::atomic_thread_fence(std::memory_order_seq_cst);
        continue;
      }
      std::uint8_t* region =
          w.region == nv::SubmitRegion::kUserd ? ring.userd : reinterpret_cast<std::uint8_t*>(bring_.gpu_mmio);
      std::atomic_ref<std::uint32_t>(*reinterpret_cast<std::uint32_t*>(region + w.offset))
          .store(w.value, std::memory_order_seq_cst);
    }
  }

  // Polls `pred` until it holds or kWaitLimit passes.
  template <typename Pred>
  bool eventually(Pred pred) {
    const auto deadline = std::chrono::steady_clock::now() + kWaitLimit;
    while (!pred()) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    return true;
  }
  static std::uint64_t load64(const std::uint8_t* p) {
    return std::atomic_ref<std::uint64_t>(*reinterpret_cast<std::uint64_t*>(const_cast<std::uint8_t*>(p)))
        .load(std::memory_order_acquire);
  }
  static void store64(std::uint8_t* p, std::uint64_t v) {
    std::atomic_ref<std::uint64_t>(*reinterpret_cast<std::uint64_t*>(p)).store(v, std::memory_order_release);
  }
  bool wait_value(const std::uint8_t* p, std::uint64_t value) {
    return eventually([&] { return load64(p) == value; });
  }
  std::uint32_t gp_get(const Ring& ring) const {
    return std::atomic_ref<std::uint32_t>(*reinterpret_cast<std::uint32_t*>(ring.userd + 0x88)).load();
  }
  // The GPU has consumed every entry submitted to the ring.
  bool wait_drained(const Ring& ring) {
    return eventually([&] { return gp_get(ring) == ring.put; });
  }
  // The first fault, once there is one.
  std::string wait_fault() {
    std::string message;
    eventually([&] {
      auto faults = gpu_->faults();
      if (faults.empty()) return false;
      message = faults.front();
      return true;
    });
    return message;
  }
  std::vector<std::string> callback_messages() {
    std::lock_guard lock(callback_mutex_);
    return callback_messages_;
  }

  // What RM wrote in a channel's error notifier (nvos.h NvNotification, entry NV_CHANNELGPFIFO_NOTIFICATION_TYPE_ERROR
  // = 0): info32 (the Xid) at +8, status at +14. The compute channel's unless `notifier` names another.
  struct ErrorNotification {
    std::uint32_t info32 = 0;
    std::uint16_t status = 0;
  };
  ErrorNotification error_notification(const GpuBuffer* notifier = nullptr) const {
    const GpuBuffer& from = notifier != nullptr ? *notifier : bring_.compute_notifier;
    ErrorNotification n;
    n.status = std::atomic_ref<std::uint16_t>(*reinterpret_cast<std::uint16_t*>(from.cpu + 14))
                   .load(std::memory_order_acquire);
    std::memcpy(&n.info32, from.cpu + 8, 4);
    return n;
  }
  // READ_MMU_FAULT_INFO on a GT200_DEBUGGER made for the compute channel's compute object, as NvSession makes one.
  kernel_interface::nvidia::NV83DE_CTRL_DEBUG_READ_MMU_FAULT_INFO_PARAMS read_mmu_fault_info() {
    using namespace kernel_interface::nvidia;
    if (debugger_ == 0) {
      NV83DE_ALLOC_PARAMETERS params{};
      params.hAppClient = bring_.root;
      params.hClass3dObject = bring_.compute_object;
      debugger_ = bring_.rm.alloc(bring_.nvdevice, GT200_DEBUGGER, params);
    }
    NV83DE_CTRL_DEBUG_READ_MMU_FAULT_INFO_PARAMS info{};
    info.count = 0xffffffff;  // the answer must set it
    bring_.rm.control(debugger_, NV83DE_CTRL_CMD_DEBUG_READ_MMU_FAULT_INFO, info);
    return info;
  }

  NvBringUp bring_;
  GpuBuffer arena_;
  Ring compute_, copy_;
  std::unique_ptr<MockNvGpu> gpu_;
  kernel_interface::nvidia::NvHandle debugger_ = 0;
  std::uint64_t next_ = 0;
  std::mutex callback_mutex_;
  std::vector<std::string> callback_messages_;
};

// Concatenates encoder outputs into one pushbuffer.
inline std::vector<std::uint32_t> join(std::initializer_list<std::vector<std::uint32_t>> parts) {
  std::vector<std::uint32_t> out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

inline std::string hex(std::uint64_t v) {
  char b[24];
  std::snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(v));
  return b;
}

}  // namespace doorbell::mockgpu_nv_test
