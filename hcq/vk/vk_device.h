// VulkanDevice: an HCQ device over the Vulkan loader (DEV=VK; DESIGN.md "HCQ"). The HCQ contract maps onto Vulkan
// like this (firmware-notes/vulkan-device.md has each rule with its spec section or VUID):
//
//  - A queue's commands become batches: a batch waits on timeline semaphores, runs one command buffer and signals
//    timeline semaphores (VkTimelineSemaphoreSubmitInfo values). A wait command starts a new batch; a signal command
//    ends one. All batches of a submission go to the device's one VkQueue in one vkQueueSubmit, the last one also
//    signalling the device's progress semaphore with the submission's count (resources are recycled by it).
//  - HCQ order: before each exec and copy (and at the start of every command buffer, which orders it after the
//    earlier batches, since a barrier's first scope is everything earlier in submission order) a pipeline barrier
//    makes every earlier compute/transfer write visible to later compute/transfer reads and writes. A memory_barrier
//    command is a full barrier; every command buffer ends with a barrier to the host (HOST_READ).
//  - exec: bind the program's compute pipeline, vkCmdPushConstants of the exec's own argument block address, then
//    vkCmdDispatch(grid) (compiler/spirv/spirv_kernel_abi.h). Argument blocks live in host-visible memory: a ring for
//    unbound submissions, recycled once the progress passes them; a bound queue owns its own.
//    copy: vkCmdCopyBuffer between the VkBuffers that hold the two device addresses (storage of this device only).
//  - Signals: every Signal of this device is a VkSemaphore of type TIMELINE. Its value is the driver's
//    (vkGetSemaphoreCounterValue); the host's set() is vkSignalSemaphore (stepping through the values queued waits
//    wait for below it: firmware-notes/vulkan-device.md §3); waiters poll, sleeping between looks in
//    vkWaitSemaphores (up to ~1 ms; the driver wakes them) for the exact value of the next pending queue signal, or
//    50 us when none is pending (firmware-notes/vulkan-device.md §3: the validation layer's limitation).
//    Signal::device_address() is the VkSemaphore's handle, not memory.
//    A queue signal to a value not above what the semaphore was already signalled or scheduled to would break
//    VUID-VkSubmitInfo-pSignalSemaphores-03242 (the value must grow): an equal value is skipped, a smaller one is
//    skipped and reported as a queue error (the next synchronize() throws it). A host set() to a value at or above a
//    queue signal still pending would break VUID-VkSemaphoreSignalInfo-value-03259 and throws instead.
//  - Foreign signals (a CPU device's, another VK device's): Vulkan cannot wait on host memory, so a host thread of
//    this device (the bridge) waits for the foreign signal (Signal::wait_for) and then signals a bridge semaphore of
//    this device that the batch waits on. A queue signal of a foreign signal goes the other way: the batch signals a
//    bridge semaphore, the bridge thread waits on it and sets the foreign signal (no timestamp query).
//  - Timestamps: Vulkan writes timestamps only into query pools, never at +8 of a signal's memory. A timestamp command
//    and every signal command write a VK_QUERY_TYPE_TIMESTAMP query (vkCmdWriteTimestamp BOTTOM_OF_PIPE: when all
//    earlier commands finished) into a slot owned by that recorded command buffer, which then copies its queries'
//    results (vkCmdCopyQueryPoolResults, with availability) into host-visible memory it also owns. Signal::timestamp()
//    returns the latest available result of the signal read from that memory (the host never calls
//    vkGetQueryPoolResults: lavapipe's waits for the whole device idle), masked to timestampValidBits and in ticks of
//    timestampPeriod ns (SignalPlacement::ns_per_tick_*).
//    host_time_ns: by VK_EXT_calibrated_timestamps (device and CLOCK_MONOTONIC sampled together) where the device
//    has it, else by bracketing a submitted timestamp with host reads (hcq/clock_calibration.h).
//  - Bound queues (bind): command buffers recorded once with their own argument blocks, query pool and query results
//    block; submit_bound submits them as they are. patch_value changes the submit-time semaphore value (nothing is
//    re-recorded); patch_buffer/patch_scalar rewrite one word of the exec's argument block after the previous run
//    completed; patch_copy re-records the command buffer of the copy's batch (its addresses are inside vkCmdCopyBuffer).
//  - Memory freed while a submitted batch may use it is kept until the progress semaphore passes that submission.
//    Destroying the device waits (bounded) for its work; a queue that still waits then is released by signalling
//    what it waits for from the host, so teardown never hangs.
//
// The parts, each in its file: vk_instance.h (the process's instance), vk_debug_messenger.h (this device's validation
// messages), vk_memory.h, vk_semaphore_signals.h (signals and the bridge), vk_recording.h (batches and command
// buffers), vk_submission.cpp, vk_bound_queue.h, vk_program.h (pipelines and their cache), vk_clock.cpp; this file's
// .cpp opens the device and tears it down.
#pragma once
#include <vulkan/vulkan.h>

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "compiler/spirv/spirv_target.h"
#include "hcq/clock_calibration.h"
#include "hcq/device.h"
#include "hcq/gpu_bound_queue.h"
#include "hcq/hw_queue.h"
#include "hcq/suballocator.h"
#include "hcq/upload_ring.h"
#include "hcq/vk/vk_debug_messenger.h"
#include "hcq/vk/vk_instance.h"
#include "hcq/vk/vk_program.h"
#include "ir/program_info.h"

namespace doorbell::vk {

struct PipelineRegistry;
struct BoundRegistry;

// What the driver says of the physical device a VulkanDevice opened (VkPhysicalDeviceProperties and the Vulkan 1.2
// VkPhysicalDeviceVulkan12Properties driver fields), kept from bring-up.
struct VulkanDeviceProperties {
  std::string device_name;   // deviceName ("llvmpipe (LLVM 15.0.6, 256 bits)")
  uint32_t api_version = 0;  // apiVersion (VK_MAKE_API_VERSION)
  std::string api_version_text;  // "1.3.230"
  std::string driver_name, driver_info;  // "llvmpipe", "Mesa 22.3.6 (LLVM 15.0.6)"
  uint32_t vendor_id = 0, device_id = 0;
};

struct VkSignalState;
struct VkBatch;
struct VkSubmission;
class VulkanBoundQueue;

class VulkanDevice final : public Device {
 public:
  // The index-th usable physical device (vk_instance.h), named "VK", "VK:1", ... Throws naming what is missing.
  static std::unique_ptr<VulkanDevice> open(int index = 0);
  ~VulkanDevice() override;

  const std::string& physical_name() const { return physical_name_; }
  const VulkanDeviceProperties& properties() const { return properties_; }
  // What the SPIR-V renderer needs to know of the device (compiler/spirv/spirv_target.h), from its properties.
  const SpirvDeviceCaps& spirv_caps() const { return caps_; }
  bool validation() const { return instance_->validation(); }
  // Every validation warning and error message so far (each also failed the next synchronize()).
  std::vector<std::string> validation_messages() const;

  // A module's 32-bit words (compiler/spirv/spirv_kernel_abi.h) as a compute pipeline, through the pipeline cache.
  // The program lives as long as the device. Throws naming the kernel and the driver's answer.
  const VulkanProgram& load_spirv(std::span<const uint32_t> words, const ProgramInfo& info);

  // Storage: mapped (Storage::host set) in DEVICE_LOCAL|HOST_VISIBLE|HOST_COHERENT memory where the device has it,
  // else (or with DOORBELL_VK_STAGING=1 in the environment when the device is opened) unmapped DEVICE_LOCAL memory
  // that copy_in/copy_out reach through a host-visible staging buffer and vkCmdCopyBuffer.
  Storage allocate_storage(size_t bytes) override;
  void release_storage(const Storage& storage) override;
  void copy_in(const Storage& storage, uint64_t offset, const void* src, size_t bytes) override;
  void copy_out(void* dst, const Storage& storage, uint64_t offset, size_t bytes) override;
  bool staging() const { return staging_; }
  // HOST_VISIBLE|HOST_COHERENT memory with a device address (Storage::host and ::address both set, zero-filled) that
  // queues may use as a buffer whether or not storage is staged: for tools that fill buffers from the host (doorbell
  // check). Freed by release_host_visible once no submission made so far can still use it.
  Storage allocate_host_visible(size_t bytes);
  void release_host_visible(const Storage& storage);
  // How long destruction waits for the queue to progress before it releases what the queue waits for (5 s).
  void set_teardown_wait(std::chrono::milliseconds wait) { teardown_wait_ = wait; }
  // Freed storage and bound-queue resources still waiting for the work submitted before they were let go.
  size_t retired_count();

  void submit(const HWQueue& queue) override;
  std::shared_ptr<BoundQueue> bind(const HWQueue& queue) override;
  void submit_bound(std::shared_ptr<const BoundQueue> queue) override;
  std::string blockage() override;

  int64_t host_time_ns(uint64_t device_ns) override;
  // By VK_EXT_calibrated_timestamps each call (cheap), else by brackets once and kept.
  ClockCalibration clock_calibration();
  // The bracket method whether or not the extension is there: `tries` submitted timestamps, each between two host
  // reads of the clock (hcq/clock_calibration.h); kept for later host_time_ns calls on devices without the extension.
  ClockCalibration calibrate_by_brackets(int tries = 5);
  bool calibrated_by_extension() const { return calibrated_timestamps_; }

  // The pipeline cache file (nullopt when the disk cache is off), the bytes the device started with, and a save now
  // (also done at destruction and after every kPipelinesPerSave new pipelines).
  const std::optional<std::string>& pipeline_cache_file() const { return pipeline_cache_path_; }
  size_t pipeline_cache_loaded_bytes() const { return pipeline_cache_loaded_bytes_; }
  void save_pipeline_cache();
  static constexpr size_t kPipelinesPerSave = 32;

  // For tests that use Vulkan directly (the validation test).
  VkDevice vk_device() const { return device_; }
  // The VkSemaphore of one of this device's signals (VK_NULL_HANDLE for another device's).
  VkSemaphore semaphore_of(const Signal& signal);
  Signal& progress() { return *progress_; }
  uint64_t submissions() const { return submissions_.load(std::memory_order_acquire); }

  // Internal, for the signal hooks.
  uint64_t read_semaphore(const VkSignalState& s);
  void write_semaphore(VkSignalState& s, uint64_t value);
  uint64_t read_signal_timestamp(const VkSignalState& s);
  void sleep_on_semaphore(const VkSignalState& s);
  // The first VK_ERROR_DEVICE_LOST seen ("" while there is none): every wait on the device's signals polls it.
  std::string fault() const;

 protected:
  SignalPlacement place_signal() override;
  std::shared_ptr<const LoadedProgram> load(const UOp& program) override;

 private:
  friend class VulkanBoundQueue;
  explicit VulkanDevice(int index);
  void create_logical_device();
  void fill_caps();
  void install_target();
  void teardown();
  void release_waits();
  void stop_bridge();
  void note_result(VkResult r, const char* call);
  VkQueryPool new_query_pool(uint32_t slots);
  VkSemaphore new_timeline_semaphore(const std::string& what);

  struct Memory {
    VkBuffer buffer = VK_NULL_HANDLE;
    VkDeviceMemory memory = VK_NULL_HANDLE;
    uint64_t address = 0, size = 0;
    uint8_t* host = nullptr;
  };
  struct Located {
    VkBuffer buffer;
    uint64_t offset;
    uint64_t room;  // bytes from the address to the end of its buffer
  };
  Memory allocate_memory(uint64_t bytes, uint32_t type, bool map, const std::string& what);
  void free_memory(const Memory& m);
  SubAllocator& heap_locked(bool host_visible);  // memory_mutex_ held
  // A block of host-visible memory (staging, argument blocks), 256-byte aligned; takes memory_mutex_.
  SubAllocator::Block alloc_host_block(uint64_t bytes, const char* what);
  void release_block(uint64_t address, bool host_visible);
  // The buffer holding [address, address + bytes), or throws std::invalid_argument naming the address.
  Located locate(uint64_t address, uint64_t bytes, const char* what);
  void check_buffer_address(uint64_t address, const char* what);
  // Throws std::invalid_argument unless [offset, offset + bytes) lies in live storage of this device.
  void check_transfer(const Storage& storage, uint64_t offset, uint64_t bytes, const char* what);

  std::unique_ptr<VulkanProgram> make_program(std::span<const uint32_t> words, const ProgramInfo& info);

  // Recording: a queue's commands split into batches, query slots assigned to the signal and timestamp commands of
  // this device's signals, each batch recorded into a command buffer (argument blocks from `args_of`).
  struct ArgBlock {
    uint8_t* host;
    uint64_t address;
  };
  void check_commands(std::span<const Command> commands, std::span<void* const> buffers);
  static std::vector<VkBatch> split(std::span<const Command> commands);
  uint32_t count_queries(std::span<const Command> commands);
  uint32_t assign_queries(std::vector<VkBatch>& batches, std::span<const Command> commands, uint32_t first_slot);
  VkCommandBuffer new_command_buffer();  // submit_mutex_ held
  // Where a batch's query results are copied: slot k's at `offset` + 16 k of `buffer` (host-visible).
  struct StampTarget {
    VkBuffer buffer = VK_NULL_HANDLE;
    uint64_t offset = 0;
  };
  void record_batch(VkBatch& batch, std::span<const Command> commands, std::span<void* const> buffers, std::span<const int64_t> scalars,
                    VkQueryPool pool, StampTarget stamps, const std::function<ArgBlock(size_t command, uint64_t bytes)>& args_of);
  uint64_t submit_counted(const HWQueue& queue);  // returns the submission's count
  // Submits recorded batches (values from `commands`; query slot k's copied result at stamps_host + 16 k), the last
  // also signalling the progress; submit_mutex_ held.
  uint64_t submit_batches(std::vector<VkBatch>& batches, std::span<const Command> commands, uint8_t* stamps_host,
                          std::unique_ptr<VkSubmission> submission);
  // Reads the timestamps of completed submissions (from memory) and recycles what they and retired memory held.
  void collect();
  void collect_locked();
  void wait_progress(uint64_t count, const char* what);
  VkSignalState* state_of(const Signal& signal);
  void rerecord(VulkanBoundQueue& b, VkBatch& batch);
  void rerecord_locked(VulkanBoundQueue& b, VkBatch& batch);
  void retire_bound(VulkanBoundQueue& b);

  // The bridge thread (foreign signals).
  struct BridgeJob {
    Signal* foreign = nullptr;
    uint64_t value = 0;
    bool is_wait = true;        // wait for foreign >= value, then signal bridge_in_ to bridge_value; else wait for
    uint64_t bridge_value = 0;  // bridge_out_ >= bridge_value, then set foreign to value
  };
  void bridge_loop();
  void push_bridge(BridgeJob job);

  const VulkanInstance* instance_ = nullptr;  // the process's (vk_instance.h)
  std::unique_ptr<DebugMessenger> messenger_;  // created before and destroyed after the VkDevice
  std::string physical_name_;
  VulkanDeviceProperties properties_;
  VkPhysicalDevice physical_ = VK_NULL_HANDLE;
  VkPhysicalDeviceProperties props_{};
  VkDevice device_ = VK_NULL_HANDLE;
  VkQueue queue_ = VK_NULL_HANDLE;
  uint32_t queue_family_ = 0;
  uint64_t timestamp_mask_ = ~uint64_t{0};
  SpirvDeviceCaps caps_;
  struct Features {
    bool int16 = false, float64 = false, int8 = false, float16 = false, storage8 = false, storage16 = false;
  } features_;
  bool staging_ = false;
  std::chrono::milliseconds teardown_wait_{5000};
  bool calibrated_timestamps_ = false;
  uint32_t storage_type_ = 0, host_type_ = 0;
  VkPipelineLayout layout_ = VK_NULL_HANDLE;
  VkPipelineCache pipeline_cache_ = VK_NULL_HANDLE;
  std::optional<std::string> pipeline_cache_path_;
  size_t pipeline_cache_loaded_bytes_ = 0;
  size_t pipelines_since_save_ = 0;
  std::shared_ptr<PipelineRegistry> pipelines_;
  std::shared_ptr<BoundRegistry> bound_registry_;
  std::mutex programs_mutex_;
  std::deque<std::unique_ptr<VulkanProgram>> spirv_programs_;  // load_spirv's

  mutable std::mutex messages_mutex_;
  std::vector<std::string> validation_messages_;

  std::mutex submit_mutex_;  // the queue, the command pool, the rings, in_flight_, retired_
  VkCommandPool command_pool_ = VK_NULL_HANDLE;
  std::vector<VkCommandBuffer> free_command_buffers_;
  VkQueryPool query_pool_ = VK_NULL_HANDLE;  // the slots of unbound submissions
  static constexpr uint32_t kQuerySlots = 8192;
  // The query slots as a ring (UploadRing over one byte per slot: a piece's offset is its first slot).
  std::vector<uint8_t> query_slot_space_;
  std::optional<UploadRing> query_ring_;
  Memory stamp_memory_{};  // host-visible: each slot's result, copied there by its command buffer (16 bytes a slot)
  Memory arg_memory_{};
  std::optional<UploadRing> args_;
  static constexpr uint64_t kArgRingBytes = 4 << 20;
  std::atomic<uint64_t> submissions_{0};
  Signal* progress_ = nullptr;
  std::deque<std::unique_ptr<VkSubmission>> in_flight_;
  struct Retired {
    uint64_t after;  // the submission that must complete first
    std::function<void()> free;
  };
  std::vector<Retired> retired_;
  std::set<std::pair<bool, uint64_t>> releasing_;  // (host-visible heap, address) of blocks released and kept in retired_

  std::mutex memory_mutex_;  // after submit_mutex_
  std::optional<SubAllocator> storage_heap_, host_heap_;
  std::map<uint64_t, Memory> chunks_;  // by device address

  std::mutex signals_mutex_;
  std::deque<std::unique_ptr<VkSignalState>> signal_states_;
  std::unordered_map<uint64_t, VkSignalState*> by_semaphore_;

  // Bridge semaphores: only the host signals bridge_in_, only queues bridge_out_.
  VkSemaphore bridge_in_ = VK_NULL_HANDLE, bridge_out_ = VK_NULL_HANDLE;
  uint64_t bridge_in_next_ = 0, bridge_out_next_ = 0;  // submit_mutex_
  std::mutex bridge_mutex_;
  std::condition_variable bridge_cv_;
  std::deque<BridgeJob> bridge_jobs_;
  bool bridge_stop_ = false;
  std::thread bridge_thread_;

  std::mutex clock_mutex_;
  std::optional<ClockCalibration> clock_;
  Signal* clock_signal_ = nullptr;
  mutable std::mutex fault_mutex_;
  std::string fault_;
};

}  // namespace doorbell::vk
