#pragma once
// A machine for the emulated KFD's tests: MockAmdSeam with a test-local engine (RecordingEngine) in place of the
// PM4/SDMA engines, so a test sees what CREATE_QUEUE hands an engine and raises interrupts and faults as one would.
// kernel-interface/amd's Kfd wrapper drives it where a call should succeed; raw ioctls check each error.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/kfd_ioctl.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "kernel-interface/amd/kfd.h"
#include "mockgpu/amd/mock_amd_seam.h"
#include "mockgpu/amd/mock_amd_topology.h"

namespace doorbell::mockgpu::amd::testing {

namespace ki = kernel_interface::amd;

// What an engine would be: it keeps the queue and the hooks the KFD gave it, and counts its destruction.
class RecordingEngine final : public QueueEngine {
 public:
  RecordingEngine(QueueDesc desc, EngineHooks hooks, std::atomic<int>& destroyed)
      : desc(desc), hooks(std::move(hooks)), destroyed_(destroyed) {}
  ~RecordingEngine() override { ++destroyed_; }
  uint64_t packets_executed() const override { return 0; }
  bool faulted() const override { return false; }

  QueueDesc desc;
  EngineHooks hooks;

 private:
  std::atomic<int>& destroyed_;
};

// Which engines the machine's queues get: the recording one, none, or the emulated PM4/SDMA engines.
// kRecordingWithShaderCore also gives the machine a run_dispatch hook that records each dispatch.
enum class Engines { kRecording, kRecordingWithShaderCore, kNone, kEmulated };

class MockKfdTest : public ::testing::Test {
 protected:
  explicit MockKfdTest(std::vector<MockAmdGpuConfig> gpus = {MockAmdGpuConfig{}},
                       Engines engines = Engines::kRecording)
      : seam_(options(std::move(gpus), engines)) {}

  MockKfdOptions options(std::vector<MockAmdGpuConfig> gpus, Engines engines) {
    MockKfdOptions o;
    o.gpus = std::move(gpus);
    if (engines == Engines::kEmulated) o.make_engine = make_queue_engine;
    if (engines == Engines::kRecordingWithShaderCore) {
      o.run_dispatch = [this](const DispatchState& state, const GpuMemory& memory, const ShaderCoreOptions& shader) {
        std::lock_guard lock(engines_mutex_);
        dispatched_.push_back(Dispatched{state, &memory, shader.realtime ? shader.realtime() : 0});
      };
    }
    if (engines == Engines::kRecording || engines == Engines::kRecordingWithShaderCore) {
      o.make_engine = [this](const QueueDesc& desc, EngineHooks hooks) -> std::unique_ptr<QueueEngine> {
        auto engine = std::make_unique<RecordingEngine>(desc, std::move(hooks), destroyed_);
        std::lock_guard lock(engines_mutex_);
        last_engine_ = engine.get();
        return engine;
      };
    }
    return o;
  }

  MockAmdSeam& seam() { return seam_; }
  const MockAmdGpuConfig& gpu(int i = 0) { return seam_.kfd().options().gpus.at(static_cast<std::size_t>(i)); }
  uint32_t gpu_id(int i = 0) { return gpu(i).gpu_id; }
  std::string render_path(int i = 0) { return "/dev/dri/renderD" + std::to_string(gpu(i).drm_render_minor); }

  // /dev/kfd opened, the render node of each GPU in `gpus` opened and its VM acquired.
  ki::Kfd& open_kfd(std::vector<int> gpus = {0}) {
    kfd_.emplace(seam_);
    for (const int i : gpus) {
      const int render = seam_.open(render_path(i), O_RDWR);
      EXPECT_GE(render, 0);
      renders_.push_back(render);
      kfd_->acquire_vm(render, gpu_id(i));
    }
    return *kfd_;
  }
  ki::Kfd& kfd() { return *kfd_; }
  int render(int i = 0) { return renders_.at(static_cast<std::size_t>(i)); }

  // An allocation at a VA reserved through the seam, mapped on GPU 0 (or the given ones).
  ki::KfdAllocation alloc(uint64_t size, uint32_t flags, std::vector<uint32_t> map_on = {}) {
    const uint64_t va = ki::reserve_va(seam_, page_align(size), 4096);
    ki::KfdAllocation a = kfd_->alloc(gpu_id(), va, size, flags);
    if (map_on.empty()) map_on = {gpu_id()};
    kfd_->map_to_gpu(a.handle, map_on);
    return a;
  }
  static uint64_t page_align(uint64_t v) { return (v + 4095) / 4096 * 4096; }

  int raw(unsigned long request, void* args) { return seam_.ioctl(kfd_->fd(), request, args); }

  // Arguments of a valid PM4 compute queue on GPU 0: a 4 KiB ring, the pointers in one page, EOP, CWSR.
  kfd_ioctl_create_queue_args compute_queue_args() {
    const NodeQueueSizes sizes = node_queue_sizes(gpu());
    const ki::KfdAllocation ring = alloc(4096, ki::kAllocGtt);
    const ki::KfdAllocation pointers = alloc(0x100, ki::kAllocGtt | ki::kAllocUncached);
    const ki::KfdAllocation eop = alloc(sizes.eop_bytes, ki::kAllocVram);
    const ki::KfdAllocation cwsr = alloc(sizes.cwsr_allocation_bytes, ki::kAllocVram);
    kfd_ioctl_create_queue_args args{};
    args.ring_base_address = ring.va;
    args.ring_size = 4096;
    args.write_pointer_address = pointers.va + 0x38;
    args.read_pointer_address = pointers.va + 0x80;
    args.gpu_id = gpu_id();
    args.queue_type = KFD_IOC_QUEUE_TYPE_COMPUTE;
    args.queue_percentage = 100;
    args.queue_priority = 7;
    args.eop_buffer_address = eop.va;
    args.eop_buffer_size = sizes.eop_bytes;
    args.ctx_save_restore_address = cwsr.va;
    args.ctx_save_restore_size = sizes.cwsr_bytes;
    args.ctl_stack_size = sizes.ctl_stack_bytes;
    return args;
  }
  kfd_ioctl_create_queue_args sdma_queue_args() {
    const ki::KfdAllocation ring = alloc(4096, ki::kAllocGtt);
    const ki::KfdAllocation pointers = alloc(0x100, ki::kAllocGtt);
    kfd_ioctl_create_queue_args args{};
    args.ring_base_address = ring.va;
    args.ring_size = 4096;
    args.write_pointer_address = pointers.va;
    args.read_pointer_address = pointers.va + 8;
    args.gpu_id = gpu_id();
    args.queue_type = KFD_IOC_QUEUE_TYPE_SDMA;
    args.queue_percentage = 100;
    args.queue_priority = 7;
    return args;
  }

  RecordingEngine& last_engine() {
    std::lock_guard lock(engines_mutex_);
    return *last_engine_;
  }
  int engines_destroyed() const { return destroyed_.load(); }
  struct Dispatched {
    DispatchState state;
    const GpuMemory* memory = nullptr;
    uint64_t realtime = 0;  // the shader core's REALTIME counter read once
  };
  std::vector<Dispatched> dispatched() {
    std::lock_guard lock(engines_mutex_);
    return dispatched_;
  }

 private:
  std::atomic<int> destroyed_{0};
  std::mutex engines_mutex_;
  RecordingEngine* last_engine_ = nullptr;
  std::vector<Dispatched> dispatched_;
  MockAmdSeam seam_;
  std::optional<ki::Kfd> kfd_;
  std::vector<int> renders_;
};

}  // namespace doorbell::mockgpu::amd::testing
