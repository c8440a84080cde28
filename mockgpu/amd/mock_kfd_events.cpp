// The emulated KFD's events (amdkfd/kfd_events.c; firmware-notes/amd-kfd.md §K8): the event page, signal events
// whose ids are their slots, CPU SET/RESET, WAIT_EVENTS, and what the engines raise: interrupts that signal events
// through their slots, and faults that fill MEMORY events.
#include <linux/kfd_ioctl.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>

#include "mockgpu/amd/mock_kfd.h"
#include "mockgpu/amd/mock_kfd_state.h"

namespace doorbell::mockgpu::amd {

namespace {
constexpr uint32_t kContextIdBits = 28;  // the interrupt's valid context-id bits (CP end-of-pipe, SDMA trap)
constexpr uint32_t kInfiniteTimeout = 0xFFFFFFFF;

bool is_signal_type(uint32_t type) {  // events that own a slot of the event page
  return type == KFD_IOC_EVENT_SIGNAL || type == KFD_IOC_EVENT_DEBUG_EVENT;
}

uint64_t load_slot(const uint8_t* page, uint32_t slot) {
  return __atomic_load_n(reinterpret_cast<const uint64_t*>(page) + slot, __ATOMIC_ACQUIRE);
}
void store_slot(uint8_t* page, uint32_t slot, uint64_t value) {
  __atomic_store_n(reinterpret_cast<uint64_t*>(page) + slot, value, __ATOMIC_RELEASE);
}
}  // namespace

int MockKfd::create_event(Process& p, void* args) {
  auto* a = static_cast<kfd_ioctl_create_event_args*>(args);
  if (a->event_page_offset != 0) {
    // kfd_kmap_event_page: once per process, a BO of the process that can be pinned in GTT and mapped for the
    // kernel (not a USERPTR, not VRAM), of at least 32 KiB; kfd_event_page_set sets its 32 KiB to all-ones.
    if (p.signal_page != nullptr) return -EINVAL;  // "Event page is already set"
    const uint32_t gpu_id = static_cast<uint32_t>(a->event_page_offset >> 32);
    const int gpu = gpu_index(gpu_id);
    if (gpu < 0) return -EINVAL;
    if (p.gpus[static_cast<std::size_t>(gpu)].render_fd < 0) return -ENODEV;  // kfd_bind_process_to_device
    auto bo = p.bos.find(static_cast<uint32_t>(a->event_page_offset));
    if (bo == p.bos.end() || bo->second.gpu_id != gpu_id) return -EINVAL;
    if ((bo->second.flags & KFD_IOC_ALLOC_MEM_FLAGS_GTT) == 0 || bo->second.memory.memfd < 0) return -EINVAL;
    if (bo->second.size < kEventPageBytes) return -EINVAL;
    std::memset(bo->second.memory.host, 0xFF, kEventPageBytes);
    p.signal_page = bo->second.memory.host;
    p.signal_page_bytes = bo->second.size;
    p.signal_page_bo = bo->second.id;
  }
  Event event;
  event.type = a->event_type;
  event.auto_reset = a->auto_reset != 0;
  if (is_signal_type(event.type)) {
    if (p.signal_page == nullptr) {
      // allocate_signal_page: without a page from userspace the kernel allocates one (mmap type EVENTS), of which
      // only 256 slots count until the process maps it ("oldest user mode expects 256 event slots").
      p.events_memory = make_shared_memory(kEventPageBytes, "kfd-event-page");
      std::memset(p.events_memory.host, 0xFF, kEventPageBytes);
      p.signal_page = p.events_memory.host;
      p.signal_page_bytes = 256 * 8;
    }
    // allocate_event_notification_slot: the lowest free id from 1 (id 0 is reserved at process creation for CP
    // interrupts without a context id) below the mapped slot count; the slot starts unsignaled.
    const uint32_t slots = static_cast<uint32_t>(std::min<uint64_t>(p.signal_page_bytes / 8, KFD_SIGNAL_EVENT_LIMIT));
    uint32_t id = 1;
    while (id < slots && p.events.count(id) != 0) ++id;
    if (id >= slots) return -ENOSPC;
    store_slot(p.signal_page, id, kUnsignaledSlot);
    event.id = id;
    a->event_page_offset = kMmapTypeEvents << kMmapTypeShift;
    a->event_slot_index = id;
  } else {
    event.id = p.next_non_signal_id++;
    a->event_page_offset = 0;
  }
  a->event_id = event.id;
  a->event_trigger_data = event.id;
  p.events.emplace(event.id, std::move(event));
  return 0;
}

int MockKfd::destroy_event(Process& p, void* args) {
  const auto* a = static_cast<const kfd_ioctl_destroy_event_args*>(args);
  auto it = p.events.find(a->event_id);
  if (it == p.events.end()) return -EINVAL;
  // destroy_event: its waiters wake and their wait fails.
  for (EventWaiter* waiter : it->second.waiters) waiter->event_gone = true;
  p.events.erase(it);
  p.events_changed.notify_all();
  return 0;
}

int MockKfd::set_event(Process& p, void* args, bool set) {
  const auto* a = static_cast<const kfd_ioctl_set_event_args*>(args);  // RESET_EVENT's struct is the same
  static_assert(sizeof(kfd_ioctl_set_event_args) == sizeof(kfd_ioctl_reset_event_args));
  auto it = p.events.find(a->event_id);
  if (it == p.events.end()) return -EINVAL;
  if (it->second.type != KFD_IOC_EVENT_SIGNAL) return -EINVAL;  // event_can_be_cpu_signaled
  if (set) {
    signal_event_locked(p, it->second);
  } else {
    it->second.signaled = false;
  }
  return 0;
}

void MockKfd::signal_event_locked(Process& p, Event& event) {
  // set_event: an auto-reset event a waiter takes stays unsignaled; every current waiter is activated.
  event.signaled = !event.auto_reset || event.waiters.empty();
  for (EventWaiter* waiter : event.waiters) waiter->activated = true;
  p.events_changed.notify_all();
}

// kfd_wait_on_events: a wait that fails because an event was destroyed answers EIO with wait_result FAIL.
int MockKfd::wait_events(Process& p, void* args, std::unique_lock<std::mutex>& lock) {
  auto* a = static_cast<kfd_ioctl_wait_events_args*>(args);
  a->wait_result = KFD_IOC_WAIT_RESULT_FAIL;
  if (a->num_events > 0 && a->events_ptr == 0) return -EFAULT;
  auto* data = reinterpret_cast<kfd_event_data*>(a->events_ptr);
  std::vector<EventWaiter> waiters(a->num_events);
  std::vector<uint32_t> ids(a->num_events);
  // init_event_waiter: every id must name an event; a waiter starts activated when its event is signaled, and
  // takes the signal of an auto-reset event.
  for (uint32_t i = 0; i < a->num_events; ++i) {
    ids[i] = data[i].event_id;
    auto it = p.events.find(ids[i]);
    if (it == p.events.end()) return -EINVAL;
    waiters[i].activated = it->second.signaled;
    it->second.signaled = it->second.signaled && !it->second.auto_reset;
  }
  // Only a waiter still waiting joins the event's queue (set_event's auto-reset looks at who is queued).
  for (uint32_t i = 0; i < a->num_events; ++i)
    if (!waiters[i].activated) p.events.at(ids[i]).waiters.push_back(&waiters[i]);

  const auto condition = [&]() -> int {  // test_event_condition: -1 while not complete
    uint32_t activated = 0;
    for (const EventWaiter& waiter : waiters) {
      if (waiter.event_gone) return KFD_IOC_WAIT_RESULT_FAIL;
      if (waiter.activated) {
        if (a->wait_for_all == 0) return KFD_IOC_WAIT_RESULT_COMPLETE;
        ++activated;
      }
    }
    return activated == a->num_events ? KFD_IOC_WAIT_RESULT_COMPLETE : -1;
  };
  const uint32_t timeout_ms = a->timeout;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  int result = condition();
  ++p.waits_in_progress;
  while (result < 0 && !p.closing) {
    if (timeout_ms == 0) break;
    if (timeout_ms == kInfiniteTimeout) {
      p.events_changed.wait(lock);
    } else if (p.events_changed.wait_until(lock, deadline) == std::cv_status::timeout) {
      result = condition();
      break;
    }
    result = condition();
  }
  --p.waits_in_progress;
  if (p.closing) {
    // The fd was closed under the wait (the kernel would keep the file until the call returns): the process is
    // going, so the wait ends here.
    p.events_changed.notify_all();
    for (uint32_t i = 0; i < a->num_events; ++i) {
      if (auto it = p.events.find(ids[i]); it != p.events.end()) {
        auto& list = it->second.waiters;
        list.erase(std::remove(list.begin(), list.end(), &waiters[i]), list.end());
      }
    }
    return -EBADF;
  }
  if (result < 0) result = KFD_IOC_WAIT_RESULT_TIMEOUT;

  for (uint32_t i = 0; i < a->num_events; ++i) {
    auto it = p.events.find(ids[i]);
    if (it == p.events.end()) continue;
    auto& list = it->second.waiters;
    list.erase(std::remove(list.begin(), list.end(), &waiters[i]), list.end());
    // copy_signaled_event_data: a MEMORY event that fired hands back its exception data.
    if (result == KFD_IOC_WAIT_RESULT_COMPLETE && waiters[i].activated && it->second.type == KFD_IOC_EVENT_MEMORY) {
      std::memcpy(&data[i].memory_exception_data, &it->second.memory, sizeof it->second.memory);
    }
  }
  a->wait_result = static_cast<uint32_t>(result);
  return result == KFD_IOC_WAIT_RESULT_FAIL ? -EIO : 0;
}

void MockKfd::on_interrupt(Process& p, uint32_t context_id) {
  std::lock_guard lock(mutex_);
  if (p.signal_page == nullptr) return;
  const uint32_t slots = static_cast<uint32_t>(std::min<uint64_t>(p.signal_page_bytes / 8, KFD_SIGNAL_EVENT_LIMIT));
  // kfd_signal_event_interrupt: a context id with 28 valid bits is a whole event id; its event fires when its slot
  // holds anything but all-ones. Otherwise every signal event's slot is scanned. A fired slot is reset to all-ones.
  const uint32_t id = context_id & ((1u << kContextIdBits) - 1);
  auto it = p.events.find(id);
  if (it != p.events.end() && is_signal_type(it->second.type) && id < slots &&
      load_slot(p.signal_page, id) != kUnsignaledSlot) {
    store_slot(p.signal_page, id, kUnsignaledSlot);
    signal_event_locked(p, it->second);
    return;
  }
  for (auto& [event_id, event] : p.events) {
    if (!is_signal_type(event.type) || event_id >= slots) continue;
    if (load_slot(p.signal_page, event_id) == kUnsignaledSlot) continue;
    store_slot(p.signal_page, event_id, kUnsignaledSlot);
    signal_event_locked(p, event);
  }
}

void MockKfd::on_fault(Process& p, uint32_t gpu_id, const QueueFault& fault) {
  std::lock_guard lock(mutex_);
  std::fprintf(stderr, "mockgpu amd: GPU 0x%x: queue fault%s: %s\n", gpu_id, fault.memory ? " (memory)" : "",
               fault.message.c_str());
  // kfd_signal_vm_fault_event: every MEMORY event of the process gets the faulting VA and the GPU, and fires.
  for (auto& [id, event] : p.events) {
    if (event.type != KFD_IOC_EVENT_MEMORY) continue;
    event.memory = kfd_hsa_memory_exception_data{};
    event.memory.gpu_id = gpu_id;
    event.memory.va = fault.address;
    event.memory.failure.NotPresent = fault.memory ? 1 : 0;
    signal_event_locked(p, event);
  }
}

}  // namespace doorbell::mockgpu::amd
