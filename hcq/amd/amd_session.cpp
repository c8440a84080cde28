#include "hcq/amd/amd_session.h"

#include <fcntl.h>
#include <sys/mman.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace doorbell::amd {
namespace {

constexpr uint64_t kPage = 4096;
// The process's doorbell slice: 8 KiB, mapped once at the doorbell offset with its low 13 bits cleared; a queue's
// doorbell is the 64-bit word at those low bits (firmware-notes/amd-hcq.md §1).
constexpr uint64_t kDoorbellPageBytes = 0x2000;
// The event page holds KFD_SIGNAL_EVENT_LIMIT (4096) 8-byte slots (firmware-notes/amd-hcq.md §1).
constexpr uint64_t kEventPageBytes = 0x8000;
constexpr uint64_t kComputeRingBytes = 1 << 20;
constexpr uint64_t kSdmaRingBytes = 1 << 20;

uint64_t round_up(uint64_t v, uint64_t to) { return (v + to - 1) / to * to; }

std::string hex(uint64_t v) {
  char s[24];
  std::snprintf(s, sizeof s, "0x%llx", static_cast<unsigned long long>(v));
  return s;
}

}  // namespace

AmdSession::AmdSession(kernel_interface::SyscallSeam& seam, int gpu_index) : seam_(seam) {
  kfd_ = std::make_unique<ki::Kfd>(seam_);
  const std::vector<ki::KfdNode> gpus = ki::kfd_gpu_nodes(ki::read_kfd_topology(seam_));
  if (gpu_index < 0 || static_cast<size_t>(gpu_index) >= gpus.size())
    throw std::runtime_error("AMD: GPU " + std::to_string(gpu_index) + " asked for; the KFD topology lists " + std::to_string(gpus.size()) +
                             " GPU node(s)");
  node_ = gpus[gpu_index];
  ip_ = gfx_ip_from_target_version(node_.gfx_target_version());
  render_ = kernel_interface::SeamFd(seam_, "/dev/dri/renderD" + std::to_string(node_.drm_render_minor()), O_RDWR | O_CLOEXEC);
  info_ = ki::query_amdgpu_device_info(seam_, render_.get());
  if (info_.gpu_counter_freq_khz == 0) throw std::runtime_error("AMD: the render node's DEV_INFO gives a timestamp frequency of 0 kHz");
  kfd_->acquire_vm(render_.get(), node_.gpu_id);
  bool found = false;
  for (const kfd_process_device_apertures& a : kfd_->process_apertures())
    if (a.gpu_id == node_.gpu_id) aperture_ = a, found = true;
  if (!found) throw std::runtime_error("AMD: the process apertures list no GPU " + std::to_string(node_.gpu_id));
  try {
    event_page_ = alloc(kEventPageBytes, AmdDomain::kGttUncached);
    signal_event_ = kfd_->create_event(KFD_IOC_EVENT_SIGNAL, /*auto_reset=*/true, event_page_.handle);
    signal_event_made_ = true;
    memory_event_ = kfd_->create_event(KFD_IOC_EVENT_MEMORY, /*auto_reset=*/false);
    events_made_ = true;
    compute_ = make_queue("compute", /*pm4=*/true, kComputeRingBytes);
    sdma_ = make_queue("sdma", /*pm4=*/false, kSdmaRingBytes);
  } catch (...) {
    release_all();  // the error that stopped the bring-up is the one to report
    throw;
  }
}

AmdSession::~AmdSession() { release_all(); }

// Queues first (the engines stop), then the events (the event page is not freeable while registered), then memory.
// Errors are dropped: closing /dev/kfd afterwards frees whatever is left.
void AmdSession::release_all() noexcept {
  destroy_queues();
  if (events_made_) {
    for (uint32_t id : {signal_event_.event_id, memory_event_.event_id}) {
      try {
        kfd_->destroy_event(id);
      } catch (const std::exception&) {
      }
    }
    events_made_ = false;
  } else if (signal_event_made_) {
    try {
      kfd_->destroy_event(signal_event_.event_id);
    } catch (const std::exception&) {
    }
  }
  signal_event_made_ = false;
  for (const AmdMemory& m : std::vector<AmdMemory>(live_)) {
    try {
      free(m);
    } catch (const std::exception&) {
    }
  }
  live_.clear();
  if (doorbell_page_ != nullptr) seam_.munmap(doorbell_page_, kDoorbellPageBytes);
  doorbell_page_ = nullptr;
}

void AmdSession::destroy_queues() {
  for (AmdUserQueue* q : {&compute_, &sdma_}) {
    if (q->doorbell == nullptr) continue;
    try {
      kfd_->destroy_queue(q->queue_id);
    } catch (const std::exception&) {
    }
    q->doorbell = nullptr;
  }
}

void AmdSession::rebuild_after_fault() {
  destroy_queues();
  for (AmdUserQueue* q : {&compute_, &sdma_})
    for (AmdMemory* m : {&q->ring, &q->pointers, &q->eop, &q->cwsr})
      if (m->size != 0) free(*m), *m = AmdMemory{};
  kfd_->destroy_event(memory_event_.event_id);
  memory_event_ = kfd_->create_event(KFD_IOC_EVENT_MEMORY, /*auto_reset=*/false);
  compute_ = make_queue("compute", /*pm4=*/true, kComputeRingBytes);
  sdma_ = make_queue("sdma", /*pm4=*/false, kSdmaRingBytes);
}

AmdMemory AmdSession::alloc(uint64_t size, AmdDomain domain) {
  if (size == 0) throw std::invalid_argument("AMD: an allocation of 0 bytes");
  const uint64_t bytes = round_up(size, kPage);
  // tinygrad's KFD allocations (ops_amd.py, KFDIface.alloc): writable, executable, never substituted; uncached host
  // memory is GTT | COHERENT | UNCACHED; video memory the host maps is VRAM | PUBLIC (firmware-notes/amd-hcq.md §1).
  uint32_t flags = ki::kAllocWritable | ki::kAllocExecutable | ki::kAllocNoSubstitute;
  flags |= domain == AmdDomain::kVram ? ki::kAllocVram | ki::kAllocPublic : ki::kAllocGtt | ki::kAllocCoherent | ki::kAllocUncached;
  const uint64_t va = ki::reserve_va(seam_, bytes, bytes >= (2 << 20) ? (2 << 20) : kPage);
  if (va < aperture_.gpuvm_base || va + bytes - 1 > aperture_.gpuvm_limit) {
    ki::release_va(seam_, va, bytes);
    throw std::runtime_error("AMD: the VA range " + hex(va) + "+" + hex(bytes) + " the host gave lies outside the GPU VM aperture " +
                             hex(aperture_.gpuvm_base) + "-" + hex(aperture_.gpuvm_limit));
  }
  ki::KfdAllocation a;
  try {
    a = kfd_->alloc(node_.gpu_id, va, bytes, flags);
  } catch (...) {
    ki::release_va(seam_, va, bytes);
    throw;
  }
  const uint32_t gpus[] = {node_.gpu_id};
  try {
    kfd_->map_to_gpu(a.handle, gpus);
  } catch (...) {
    kfd_->free(a.handle);
    ki::release_va(seam_, va, bytes);
    throw;
  }
  AmdMemory m{a.handle, va, bytes, nullptr, domain == AmdDomain::kVram};
  try {
    m.cpu = static_cast<uint8_t*>(ki::map_allocation_for_cpu(seam_, render_.get(), a));
  } catch (...) {
    kfd_->unmap_from_gpu(a.handle, gpus);
    kfd_->free(a.handle);
    ki::release_va(seam_, va, bytes);
    throw;
  }
  live_.push_back(m);
  return m;
}

AmdMemory AmdSession::register_host(const void* cpu, uint64_t size) {
  if (size == 0) throw std::invalid_argument("AMD: registering 0 bytes of host memory");
  const uint64_t start = reinterpret_cast<uintptr_t>(cpu) / kPage * kPage;
  const uint64_t bytes = round_up(reinterpret_cast<uintptr_t>(cpu) + size, kPage) - start;
  // USERPTR: mmap_offset carries the CPU address of existing pages, va_addr the GPU's (the same: GPU VA = CPU VA)
  // (firmware-notes/amd-kfd.md "Runtime side"); writable for copies into it.
  const uint32_t flags = ki::kAllocUserptr | ki::kAllocWritable | ki::kAllocNoSubstitute;
  const ki::KfdAllocation a = kfd_->alloc(node_.gpu_id, start, bytes, flags, start);
  const uint32_t gpus[] = {node_.gpu_id};
  try {
    kfd_->map_to_gpu(a.handle, gpus);
  } catch (...) {
    kfd_->free(a.handle);
    throw;
  }
  AmdMemory m{a.handle, start, bytes, reinterpret_cast<uint8_t*>(start), false, true};
  live_.push_back(m);
  return m;
}

void AmdSession::free(const AmdMemory& memory) {
  auto it = std::find_if(live_.begin(), live_.end(), [&](const AmdMemory& m) { return m.handle == memory.handle && m.va == memory.va; });
  if (it == live_.end()) throw std::invalid_argument("AMD: free of memory at " + hex(memory.va) + " that is not allocated");
  live_.erase(it);
  const uint32_t gpus[] = {node_.gpu_id};
  kfd_->unmap_from_gpu(memory.handle, gpus);
  kfd_->free(memory.handle);
  if (!memory.userptr) ki::release_va(seam_, memory.va, memory.size);  // the CPU view and the reservation under it
}

AmdUserQueue AmdSession::make_queue(const std::string& name, bool pm4, uint64_t ring_bytes) {
  AmdUserQueue q;
  q.name = name;
  q.pm4 = pm4;
  q.ring = alloc(ring_bytes, AmdDomain::kGttUncached);
  // The write and read pointers: one page of their own, its first page being the start of the allocation (the KFD
  // checks both pages that way), in GTT (gfx11's MES maps it into the GART) (firmware-notes/amd-hcq.md §1).
  q.pointers = alloc(kPage, AmdDomain::kGttUncached);
  kfd_ioctl_create_queue_args args{};
  args.ring_base_address = q.ring.va;
  args.ring_size = static_cast<uint32_t>(ring_bytes);
  args.read_pointer_address = q.pointers.va;
  args.write_pointer_address = q.pointers.va + kWptrOffset;
  args.gpu_id = node_.gpu_id;
  args.queue_type = pm4 ? KFD_IOC_QUEUE_TYPE_COMPUTE : KFD_IOC_QUEUE_TYPE_SDMA;
  args.queue_percentage = 100;  // KFD_MAX_QUEUE_PERCENTAGE; bits 15:8 (the PM4 queue's XCC) 0
  args.queue_priority = 7;      // the middle of 0..15, as tinygrad and ROCr's normal priority
  if (pm4) {
    const ki::QueueBufferSizes sizes = ki::queue_buffer_sizes(node_);
    q.eop = alloc(sizes.eop_bytes, AmdDomain::kVram);
    q.cwsr = alloc(sizes.cwsr_allocation_bytes, AmdDomain::kVram);
    args.eop_buffer_address = q.eop.va;
    args.eop_buffer_size = sizes.eop_bytes;
    args.ctx_save_restore_address = q.cwsr.va;
    args.ctx_save_restore_size = sizes.cwsr_bytes;
    args.ctl_stack_size = sizes.ctl_stack_bytes;
  }
  const ki::KfdQueue made = kfd_->create_queue(args);
  q.queue_id = made.queue_id;
  const uint64_t page_offset = made.doorbell_offset & ~(kDoorbellPageBytes - 1);
  if (doorbell_page_ == nullptr) {
    doorbell_page_ = kfd_->mmap_kfd(kDoorbellPageBytes, page_offset);
    doorbell_page_offset_ = page_offset;
  } else if (page_offset != doorbell_page_offset_) {
    kfd_->destroy_queue(made.queue_id);
    throw std::runtime_error("AMD: the " + name + " queue's doorbell offset " + hex(made.doorbell_offset) + " lies outside the process's doorbell slice at " +
                             hex(doorbell_page_offset_) + "; expected every queue of a GPU in one 8 KiB slice");
  }
  q.doorbell = reinterpret_cast<volatile uint64_t*>(static_cast<uint8_t*>(doorbell_page_) + (made.doorbell_offset & (kDoorbellPageBytes - 1)));
  q.rptr = reinterpret_cast<const volatile uint64_t*>(q.pointers.cpu);
  q.wptr = reinterpret_cast<volatile uint64_t*>(q.pointers.cpu + kWptrOffset);
  return q;
}

void AmdSession::wait_signal_event(uint32_t timeout_ms) {
  kfd_event_data e{};
  e.event_id = signal_event_.event_id;
  kfd_->wait_events(std::span<kfd_event_data>(&e, 1), false, timeout_ms);
}

std::optional<kfd_hsa_memory_exception_data> AmdSession::memory_fault() {
  kfd_event_data e{};
  e.event_id = memory_event_.event_id;
  if (kfd_->wait_events(std::span<kfd_event_data>(&e, 1), false, 0) != ki::KfdWaitResult::kComplete) return std::nullopt;
  return e.memory_exception_data;
}

}  // namespace doorbell::amd
