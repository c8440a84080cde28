// The emulated KFD's queues: CREATE_QUEUE's checks (kfd_chardev.c set_queue_properties_from_user, kfd_queue.c
// kfd_queue_acquire_buffers; firmware-notes/amd-kfd.md §K5-§K7), the doorbell slot and the engine behind the queue.
#include <linux/kfd_ioctl.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>

#include "mockgpu/amd/mock_amd_topology.h"
#include "mockgpu/amd/mock_kfd.h"
#include "mockgpu/amd/mock_kfd_state.h"

namespace doorbell::mockgpu::amd {

namespace {
constexpr int kENOTSUPP = 524;             // the kernel-internal ENOTSUPP set_queue_properties_from_user answers
constexpr uint32_t kMinRingBytes = 1024;  // KFD_MIN_QUEUE_RING_SIZE
constexpr uint32_t kMaxQueuePercentage = 100, kMaxQueuePriority = 15;

bool is_power_of_two(uint64_t value) { return value != 0 && (value & (value - 1)) == 0; }

// kfd_queue_buffer_get: `address`'s page must be the first page of a mapping of this GPU's VM and, when
// expected_bytes has whole pages, the mapping must be exactly that many pages (the kernel compares page numbers
// only). The BO found, or nullptr.
MockKfd::Bo* queue_buffer(MockKfd::Process& p, uint32_t gpu_id, uint64_t address, uint64_t expected_bytes) {
  const uint64_t page = address / kPageBytes * kPageBytes;
  const uint64_t pages = expected_bytes / kPageBytes;
  for (auto& [id, bo] : p.bos) {
    if (bo.mapped_on.count(gpu_id) == 0 || address < bo.va || address >= bo.va + bo.size) continue;
    if (bo.va != page) return nullptr;
    if (pages != 0 && bo.size != pages * kPageBytes) return nullptr;
    return &bo;
  }
  return nullptr;
}
}  // namespace

int MockKfd::create_queue(Process& p, void* args) {
  auto* a = static_cast<kfd_ioctl_create_queue_args*>(args);
  // set_queue_properties_from_user, in its order.
  if ((a->queue_percentage & 0xFF) > kMaxQueuePercentage) return -EINVAL;  // bits 15:8 are pm4_target_xcc
  if (a->queue_priority > kMaxQueuePriority) return -EINVAL;
  if (a->ring_size != 0 && !is_power_of_two(a->ring_size)) return -EINVAL;
  const uint64_t ring_bytes = a->ring_size < kMinRingBytes ? kMinRingBytes : a->ring_size;  // silently clamped
  const uint32_t type = a->queue_type;
  if (type != KFD_IOC_QUEUE_TYPE_COMPUTE && type != KFD_IOC_QUEUE_TYPE_SDMA && type != KFD_IOC_QUEUE_TYPE_COMPUTE_AQL &&
      type != KFD_IOC_QUEUE_TYPE_SDMA_XGMI) {
    return -kENOTSUPP;
  }
  const bool compute = type == KFD_IOC_QUEUE_TYPE_COMPUTE || type == KFD_IOC_QUEUE_TYPE_COMPUTE_AQL;
  // kfd_ioctl_create_queue: the device, then its VM (kfd_bind_process_to_device fails: ESRCH here).
  const int gpu = gpu_index(a->gpu_id);
  if (gpu < 0) return -EINVAL;
  GpuProcessState& state = p.gpus[static_cast<std::size_t>(gpu)];
  if (state.render_fd < 0) return -ESRCH;
  const MockAmdGpuConfig& config = options_.gpus[static_cast<std::size_t>(gpu)];

  // kfd_queue_acquire_buffers: wptr and rptr each in the first page of a one-page mapping, the ring a mapping of
  // exactly its size; compute queues: the EOP buffer (0 or the node's size), the control stack and CWSR sizes.
  std::vector<Bo*> held;
  Bo* wptr = queue_buffer(p, a->gpu_id, a->write_pointer_address, kPageBytes);
  Bo* rptr = queue_buffer(p, a->gpu_id, a->read_pointer_address, kPageBytes);
  Bo* ring = queue_buffer(p, a->gpu_id, a->ring_base_address, page_align(ring_bytes));  // PAGE_ALIGN(queue_size)
  if (wptr == nullptr || rptr == nullptr || ring == nullptr) return -EINVAL;
  held = {wptr, rptr, ring};
  if (compute) {
    const NodeQueueSizes sizes = node_queue_sizes(config);
    if (a->eop_buffer_address != 0) {
      if (a->eop_buffer_size != sizes.eop_bytes) return -EINVAL;
      Bo* eop = queue_buffer(p, a->gpu_id, a->eop_buffer_address, sizes.eop_bytes);
      if (eop == nullptr) return -EINVAL;
      held.push_back(eop);
    }
    if (a->ctl_stack_size != sizes.ctl_stack_bytes) return -EINVAL;
    if (a->ctx_save_restore_size < sizes.cwsr_bytes) return -EINVAL;
    const uint64_t cwsr_total =
        page_align((uint64_t{a->ctx_save_restore_size} + sizes.debug_memory_bytes) * config.num_xcc);
    Bo* cwsr = queue_buffer(p, a->gpu_id, a->ctx_save_restore_address, cwsr_total);
    if (cwsr == nullptr) return -EINVAL;
    held.push_back(cwsr);
  }
  if (type == KFD_IOC_QUEUE_TYPE_COMPUTE_AQL) {
    std::fprintf(stderr, "mockgpu amd: CREATE_QUEUE on GPU 0x%x: AQL queues are not emulated; use PM4 (type 0)\n",
                 a->gpu_id);
    return -EOPNOTSUPP;
  }

  // pqm_create_queue: a free queue id, an SDMA engine slot, a doorbell slot (KFD_MAX_NUM_OF_QUEUES_PER_PROCESS).
  uint32_t queue_id = 0;
  while (queue_id < kMaxQueues && p.queues.count(queue_id) != 0) ++queue_id;
  if (queue_id == kMaxQueues) return -ENOMEM;
  if (!compute) {
    uint32_t same_kind = 0;
    for (const auto& [id, q] : p.queues)
      if (q.gpu_id == a->gpu_id && q.type == type) ++same_kind;
    const uint32_t engines = type == KFD_IOC_QUEUE_TYPE_SDMA ? config.num_sdma_engines : config.num_sdma_xgmi_engines;
    if (same_kind >= engines * config.num_sdma_queues_per_engine) return -ENOMEM;
  }
  uint32_t slot = 0;
  while (slot < kMaxQueues && state.doorbell_slots.test(slot)) ++slot;
  if (slot == kMaxQueues) return -ENOMEM;
  if (!options_.make_engine) {
    std::fprintf(stderr, "mockgpu amd: CREATE_QUEUE on GPU 0x%x: this emulated machine has no queue engines "
                         "(MockKfdOptions::make_engine is empty)\n", a->gpu_id);
    return -ENODEV;
  }
  if (state.doorbells.memfd < 0) state.doorbells = make_shared_memory(kDoorbellSliceBytes, "kfd-doorbells");

  QueueDesc desc;
  desc.kind = compute ? QueueDesc::Kind::kPm4Compute : QueueDesc::Kind::kSdma;
  desc.gfx_target_version = config.gfx_target_version;
  desc.queue_id = queue_id;
  desc.ring_va = a->ring_base_address;
  desc.ring_bytes = ring_bytes;
  desc.wptr_va = a->write_pointer_address;
  desc.rptr_va = a->read_pointer_address;
  desc.doorbell = reinterpret_cast<volatile uint64_t*>(state.doorbells.host + uint64_t{slot} * 8);
  // A doorbell is a register the process writes, not memory the engine may find stale: the new queue's starts at its
  // write pointer's value (the MQD takes the ring's state from the write-pointer memory at creation, kfd_mqd_manager),
  // not at what a queue destroyed before left in this slot, which would run the fresh ring's zeros.
  {
    uint64_t initial = 0;
    std::memcpy(&initial, state.memory->translate(a->write_pointer_address, 8), 8);
    __atomic_store_n(desc.doorbell, initial, __ATOMIC_RELEASE);
  }
  desc.eop_va = compute ? a->eop_buffer_address : 0;
  const GpuMemory* memory = state.memory.get();
  const uint32_t gpu_id = a->gpu_id;
  EngineHooks hooks;
  hooks.memory = memory;
  hooks.interrupt = [this, &p](uint32_t context_id) { on_interrupt(p, context_id); };
  hooks.fault = [this, &p, gpu_id](const QueueFault& fault) { on_fault(p, gpu_id, fault); };
  hooks.clock = options_.clock;
  if (options_.run_dispatch) {
    hooks.dispatch = [run = options_.run_dispatch, memory, clock = options_.clock](const DispatchState& dispatch) {
      ShaderCoreOptions shader;
      shader.realtime = clock;
      run(dispatch, *memory, shader);
    };
  } else {
    hooks.dispatch = [](const DispatchState& dispatch) {
      throw ShaderFault("DISPATCH_DIRECT: this emulated machine has no shader core (MockKfdOptions::run_dispatch "
                        "is empty)", dispatch.code_va);
    };
  }
  std::unique_ptr<QueueEngine> engine;
  try {
    engine = options_.make_engine(desc, std::move(hooks));
  } catch (const std::exception& error) {
    std::fprintf(stderr, "mockgpu amd: CREATE_QUEUE on GPU 0x%x: the queue engine refused the queue: %s\n", gpu_id,
                 error.what());
    return -EINVAL;
  }
  if (engine == nullptr) return -ENODEV;

  Queue queue;
  queue.id = queue_id;
  queue.gpu_id = gpu_id;
  queue.type = type;
  queue.doorbell_slot = slot;
  for (Bo* bo : held) {
    ++bo->queue_refs;
    queue.bos.push_back(bo->id);
  }
  queue.engine = std::move(engine);
  state.doorbell_slots.set(slot);
  p.queues.emplace(queue_id, std::move(queue));
  a->queue_id = queue_id;
  // KFD_MMAP_TYPE_DOORBELL | KFD_MMAP_GPU_ID(gpu_id) | the byte offset in the process's slice (SOC15 and later).
  a->doorbell_offset = (kMmapTypeDoorbell << kMmapTypeShift) | (uint64_t{gpu_id} << kMmapGpuIdShift) |
                       (uint64_t{slot} * 8);
  return 0;
}

std::unique_ptr<QueueEngine> MockKfd::remove_queue_locked(Process& p, uint32_t queue_id) {
  auto it = p.queues.find(queue_id);
  if (it == p.queues.end()) return nullptr;
  Queue& queue = it->second;
  for (const uint32_t id : queue.bos) {
    if (auto bo = p.bos.find(id); bo != p.bos.end()) --bo->second.queue_refs;
  }
  p.gpus[static_cast<std::size_t>(gpu_index(queue.gpu_id))].doorbell_slots.reset(queue.doorbell_slot);
  std::unique_ptr<QueueEngine> engine = std::move(queue.engine);
  p.queues.erase(it);
  return engine;
}

}  // namespace doorbell::mockgpu::amd
