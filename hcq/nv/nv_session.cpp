#include "hcq/nv/nv_session.h"

#include <fcntl.h>

#include <algorithm>
#include <bitset>
#include <cstdio>
#include <mutex>
#include <stdexcept>

#include "kernel-interface/nvidia/alloc_params.h"
#include "kernel-interface/nvidia/driver_version.h"
#include "kernel-interface/nvidia/rm_classes.h"
#include "kernel-interface/nvidia/rm_controls.h"

namespace doorbell::nv {
namespace {

using namespace ki;

// tinygrad's layout (ops_nv.py:613-620): the GPFIFO area (both rings and both USERDs) at the bottom of the
// low VA range, UVM's per-channel ranges above it, then everything this session allocates.
constexpr uint64_t kLowVaBase = 0x1000000000;
constexpr uint64_t kGpfifoAreaSize = 0x300000;
constexpr uint32_t kRingEntries = 0x10000;
constexpr uint64_t kComputeUserdOffset = 0x80000;
constexpr uint64_t kCopyRingOffset = 0x100000;
constexpr uint64_t kCopyUserdOffset = 0x180000;
constexpr uint64_t kUvmChannelVaOffset = 0x10000000;
constexpr uint64_t kUvmChannelRangeSize = 0x4000000;
constexpr uint64_t kFirstAllocVaOffset = 0x20000000;
// Each session of the process takes VA windows of its own (slot i of kMaxVaWindows while it lives): UVM external and
// channel ranges must not overlap across the process, whichever GPU they are on (tinygrad allocates every device's
// VAs from process-wide allocators, ops_nv.py low_uvm_vaddr_allocator and uvm_vaddr_allocator). Slot i's low window
// (32 GiB from kLowVaBase + i * kLowVaWindow) holds the channels and the GPU-visible host memory, where pushbuffers and
// QMDs live: GP entries and SEND_PCAS take 40-bit addresses (clc86f.h GP_ENTRY1_GET_HI 7:0, open-gpu-doc
// clcbc0.h:422-423), so it stays below 2^40 as tinygrad keeps its system mappings in 0x1000000000-0x2000000000. Its
// high window (4 TiB from 2^40 + i * kHighVaWindow) holds video memory. 16 slots stay below 2^47, the x86-64 user
// address limit.
constexpr uint64_t kLowVaWindow = 0x800000000;
constexpr uint64_t kHighVaBase = 0x10000000000;
constexpr uint64_t kHighVaWindow = 0x40000000000;
constexpr int kMaxVaWindows = 16;

std::mutex g_va_windows_mutex;
std::bitset<kMaxVaWindows> g_va_windows_taken;

}  // namespace

// A slot of the process's VA windows, held while the session lives.
struct NvSession::VaWindow {
  int slot = -1;
  VaWindow() {
    std::lock_guard lock(g_va_windows_mutex);
    for (int i = 0; i < kMaxVaWindows; ++i)
      if (!g_va_windows_taken.test(static_cast<size_t>(i))) {
        g_va_windows_taken.set(static_cast<size_t>(i));
        slot = i;
        return;
      }
    throw std::runtime_error("NV: all " + std::to_string(kMaxVaWindows) + " GPU VA windows of this process are held by open NV devices; close one first");
  }
  ~VaWindow() {
    std::lock_guard lock(g_va_windows_mutex);
    g_va_windows_taken.reset(static_cast<size_t>(slot));
  }
  VaWindow(const VaWindow&) = delete;
  VaWindow& operator=(const VaWindow&) = delete;
};

namespace {
constexpr uint64_t kNotifierSize = 0x10000;  // each channel's error notifier, above the GPFIFO area

uint64_t round_up(uint64_t v, uint64_t to) { return (v + to - 1) / to * to; }

// The first of `wanted` (newest first) that the GPU offers; an error listing what it offers otherwise.
uint32_t pick(const std::vector<NvU32>& offered, std::initializer_list<uint32_t> wanted, const char* what) {
  for (uint32_t c : wanted)
    if (std::find(offered.begin(), offered.end(), c) != offered.end()) return c;
  std::string list;
  for (NvU32 c : offered) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "%s0x%x", list.empty() ? "" : " ", c);
    list += buf;
  }
  throw std::runtime_error(std::string("NV: the GPU offers no ") + what + " class doorbell drives (Hopper, Ada or Ampere); it offers " + list);
}

}  // namespace

NvSession::NvSession(kernel_interface::SyscallSeam& seam, int gpu_index)
    : seam_(seam),
      ctl_(seam, "/dev/nvidiactl", O_RDWR | O_CLOEXEC),
      uvm_fd_(seam, "/dev/nvidia-uvm", O_RDWR | O_CLOEXEC),
      uvm_fd2_(seam, "/dev/nvidia-uvm", O_RDWR | O_CLOEXEC) {
  rm_ = std::make_unique<NvRm>(seam, ctl_.get());
  uvm_ = std::make_unique<NvUvm>(seam, uvm_fd_.get());
  root_ = rm_->alloc_root_client();
  driver_version_ = check_nv_driver_version(seam, *rm_);  // refuses a driver whose structs we do not know
  uvm_->initialize();
  try {
    uvm_->mm_initialize(uvm_fd2_.get());
  } catch (const NvStatusError&) {
    // tinygrad ignores a failing UVM_MM_INITIALIZE too (tinygrad ops_nv.py:399-400)
  }
  const auto cards = rm_->card_info();
  if (cards.empty()) throw std::runtime_error("NV: the driver reports no GPU (NV_ESC_CARD_INFO)");
  if (gpu_index < 0 || static_cast<size_t>(gpu_index) >= cards.size())
    throw std::runtime_error("NV:" + std::to_string(gpu_index) + ": the driver reports " + std::to_string(cards.size()) +
                             " GPU" + (cards.size() == 1 ? "" : "s") + " (NV_ESC_CARD_INFO); expected an index below that");
  va_window_ = std::make_unique<VaWindow>();
  va_base_ = kLowVaBase + static_cast<uint64_t>(va_window_->slot) * kLowVaWindow;
  high_va_base_ = kHighVaBase + static_cast<uint64_t>(va_window_->slot) * kHighVaWindow;
  gpu_id_ = cards.at(static_cast<size_t>(gpu_index)).gpu_id;
  device_path_ = "/dev/nvidia" + std::to_string(cards.at(static_cast<size_t>(gpu_index)).minor_number);
  dev_fd_ = kernel_interface::SeamFd(seam, device_path_, O_RDWR | O_CLOEXEC);
  rm_->register_fd(dev_fd_.get());

  NV0080_ALLOC_PARAMETERS device_params{};
  device_params.deviceId = rm_->device_instance(gpu_id_);
  device_params.hClientShare = root_;
  device_params.vaMode = NV_DEVICE_ALLOCATION_VAMODE_OPTIONAL_MULTIPLE_VASPACES;
  device_ = rm_->alloc(root_, NV01_DEVICE_0, device_params);
  NV2080_ALLOC_PARAMETERS subdevice_params{};
  subdevice_ = rm_->alloc(device_, NV20_SUBDEVICE_0, subdevice_params);
  NV_MEMORY_VIRTUAL_ALLOCATION_PARAMS virtual_params{};
  virtual_params.limit = 0x1ffffffffffff;
  virtmem_ = rm_->alloc(device_, NV01_MEMORY_VIRTUAL, virtual_params);
  const std::vector<NvU32> offered = rm_->class_list(device_);
  classes_.gpfifo = pick(offered, {HOPPER_CHANNEL_GPFIFO_A, AMPERE_CHANNEL_GPFIFO_A}, "GPFIFO channel");
  classes_.compute = pick(offered, {HOPPER_COMPUTE_A, ADA_COMPUTE_A, AMPERE_COMPUTE_B}, "compute");
  classes_.copy = pick(offered, {HOPPER_DMA_COPY_A, AMPERE_DMA_COPY_B}, "copy engine");
  classes_.usermode = pick(offered, {HOPPER_USERMODE_A, AMPERE_USERMODE_A}, "usermode");
  usermode_ = rm_->alloc(subdevice_, classes_.usermode);
  {
    kernel_interface::SeamFd map_fd = new_gpu_fd();
    usermode_mmio_ = static_cast<uint32_t*>(rm_->map_memory(device_, usermode_, NVC361_NV_USERMODE__SIZE, map_fd.get()));
  }
  NV_VASPACE_ALLOCATION_PARAMETERS vaspace_params{};
  vaspace_params.vaBase = 0x1000;
  vaspace_params.vaSize = 0x1fffffb000000;
  vaspace_params.flags = NV_VASPACE_ALLOCATION_FLAGS_ENABLE_PAGE_FAULTING | NV_VASPACE_ALLOCATION_FLAGS_IS_EXTERNALLY_OWNED;
  vaspace_ = rm_->alloc(device_, FERMI_VASPACE_A, vaspace_params);
  uuid_ = rm_->gpu_uuid(subdevice_);
  uvm_->register_gpu(uuid_);
  uvm_->register_gpu_vaspace(uuid_, ctl_.get(), root_, vaspace_);
  const NvU32 sm_index[] = {NV2080_CTRL_GR_INFO_INDEX_SM_VERSION};
  gpu_arch_ = rm_->gr_info(subdevice_, sm_index).at(0);

  NV_CHANNEL_GROUP_ALLOCATION_PARAMETERS group_params{};
  group_params.engineType = NV2080_ENGINE_TYPE_GRAPHICS;
  channel_group_ = rm_->alloc(device_, KEPLER_CHANNEL_GROUP_A, group_params);
  gpfifo_area_ = alloc_at(kGpfifoAreaSize, va_base_, false);
  compute_notifier_ = alloc_at(kNotifierSize, va_base_ + kGpfifoAreaSize, true);
  copy_notifier_ = alloc_at(kNotifierSize, va_base_ + kGpfifoAreaSize + kNotifierSize, true);
  NV_CTXSHARE_ALLOCATION_PARAMETERS share_params{};
  share_params.hVASpace = vaspace_;
  share_params.flags = NV_CTXSHARE_ALLOCATION_FLAGS_SUBCONTEXT_ASYNC;
  ctxshare_ = rm_->alloc(channel_group_, FERMI_CONTEXT_SHARE_A, share_params);
  make_channel(0, kComputeUserdOffset, classes_.compute, va_base_ + kUvmChannelVaOffset, compute_notifier_, compute_);
  make_channel(kCopyRingOffset, kCopyUserdOffset, classes_.copy, va_base_ + kUvmChannelVaOffset + kUvmChannelRangeSize,
               copy_notifier_, copy_);
  make_debugger(offered);
  rm_->schedule_channel_group(channel_group_);
  next_va_ = va_base_ + kFirstAllocVaOffset;
  next_high_va_ = high_va_base_;
}

NvSession::~NvSession() {
  stop_channels();  // before any memory goes: what the channels still had queued may touch any of it
  for (const NvMemory& m : live_) seam_.munmap(m.cpu, m.size);
  if (usermode_mmio_ != nullptr) seam_.munmap(usermode_mmio_, NVC361_NV_USERMODE__SIZE);
  try {
    if (root_ != 0) rm_->free(root_);  // frees every object of the client
  } catch (const std::exception&) {
    // a destructor reports nothing; the driver frees the client when the ctl fd closes anyway
  }
}

void NvSession::stop_channels() {
  // The channel group first: its free preempts the channels, while any other free waits for what the GPU runs.
  try {
    if (channel_group_ != 0) rm_->free(channel_group_);  // its channels, their engine objects and the context share
    channel_group_ = 0;
    if (debugger_ != 0) rm_->free(debugger_);  // it debugged the compute object, gone with its channel
    debugger_ = 0;
    debugger_error_ = "the channels were stopped";
  } catch (const std::exception&) {
    // the free of the root client (or the close of the ctl fd) frees them too
  }
}

// RM's debugger object for the compute object, as tinygrad makes one (ops_nv.py:651-653): RM records an SM's MMU
// fault against the compute context and this object reads it back (firmware-notes/nvidia-hopper.md §16). It
// serves diagnostics only, so a GPU or driver that refuses it leaves the device usable and says why in fault reports.
void NvSession::make_debugger(const std::vector<NvU32>& offered) {
  if (std::find(offered.begin(), offered.end(), GT200_DEBUGGER) == offered.end()) {
    debugger_error_ = "the GPU offers no GT200_DEBUGGER class";
    return;
  }
  NV83DE_ALLOC_PARAMETERS params{};
  params.hAppClient = root_;
  params.hClass3dObject = compute_.engine_object;
  try {
    debugger_ = rm_->alloc(device_, GT200_DEBUGGER, params);
  } catch (const NvStatusError& e) {
    debugger_error_ = e.what();
  }
}

std::vector<NV83DE_CTRL_DEBUG_READ_MMU_FAULT_INFO_ENTRY> NvSession::mmu_faults() {
  if (debugger_ == 0) throw std::runtime_error("NV: no debugger object to read MMU faults from: " + debugger_error_);
  return rm_->read_mmu_fault_info(debugger_);
}

volatile uint32_t* NvSession::doorbell() const {
  return usermode_mmio_ + NVC361_NOTIFY_CHANNEL_PENDING / sizeof(uint32_t);
}

kernel_interface::SeamFd NvSession::new_gpu_fd() {
  kernel_interface::SeamFd fd(seam_, device_path_, O_RDWR | O_CLOEXEC);
  rm_->register_fd(fd.get());
  return fd;
}

ki::NvHandle NvSession::make_channel(uint64_t ring_offset, uint64_t userd_offset, uint32_t engine_class, uint64_t uvm_va,
                                     const NvMemory& notifier, NvChannel& out) {
  NV_CHANNEL_ALLOC_PARAMS params = channel_allocation_params(notifier.handle, gpfifo_area_.handle, gpfifo_area_.va + ring_offset,
                                                             kRingEntries, ctxshare_, gpfifo_area_.handle, userd_offset);
  out.handle = rm_->alloc(channel_group_, classes_.gpfifo, params);
  out.engine_object = rm_->alloc(out.handle, engine_class);
  uvm_->register_channel(uuid_, ctl_.get(), root_, out.handle, uvm_va, kUvmChannelRangeSize);
  out.engine_class = engine_class;
  out.ring = reinterpret_cast<uint64_t*>(gpfifo_area_.cpu + ring_offset);
  out.ring_entries = kRingEntries;
  out.userd = gpfifo_area_.cpu + userd_offset;
  out.token = rm_->work_submit_token(out.handle);
  out.error_notifier = notifier.cpu;
  return out.handle;
}

NvMemory NvSession::alloc(uint64_t size, bool system_memory) {
  if (size == 0) throw std::invalid_argument("NV: an allocation of 0 bytes; expected at least 1");
  const uint64_t page = system_memory ? 0x1000 : 0x200000;
  uint64_t& next = system_memory ? next_va_ : next_high_va_;
  std::map<uint64_t, uint64_t>& freed = system_memory ? free_va_ : free_high_va_;
  const uint64_t end = system_memory ? va_base_ + kLowVaWindow : high_va_base_ + kHighVaWindow;
  const uint64_t span = round_up(size, 0x200000);  // each allocation starts on a 2 MiB boundary of the window
  auto reused = std::find_if(freed.begin(), freed.end(), [&](const auto& r) { return r.second >= span; });
  uint64_t va = 0;
  if (reused != freed.end()) {
    va = reused->first;
    const uint64_t left = reused->second - span;
    freed.erase(reused);
    if (left) freed.emplace(va + span, left);
  } else {
    if (span > end - next)
      throw std::runtime_error("NV: an allocation of " + std::to_string(size) + " bytes does not fit the rest of this device's " +
                               std::to_string((system_memory ? kLowVaWindow : kHighVaWindow) >> 30) + " GiB window of " +
                               (system_memory ? "host" : "video") + " memory VAs");
    va = next;
    next += span;
  }
  try {
    return alloc_at(round_up(size, page), va, system_memory);
  } catch (...) {
    release_va(va, span, system_memory);
    throw;
  }
}

void NvSession::release_va(uint64_t va, uint64_t span, bool system_memory) {
  std::map<uint64_t, uint64_t>& freed = system_memory ? free_va_ : free_high_va_;
  auto it = freed.emplace(va, span).first;
  if (auto next = std::next(it); next != freed.end() && it->first + it->second == next->first) {
    it->second += next->second;
    freed.erase(next);
  }
  if (it != freed.begin())
    if (auto prev = std::prev(it); prev->first + prev->second == it->first) {
      prev->second += it->second;
      freed.erase(it);
    }
}

NvMemory NvSession::alloc_at(uint64_t size, uint64_t va, bool system_memory) {
  NV_MEMORY_ALLOCATION_PARAMS params = memory_allocation_params(root_, size, system_memory);
  NvMemory m;
  m.size = size;
  m.system_memory = system_memory;
  m.handle = rm_->alloc(device_, system_memory ? NV1_MEMORY_SYSTEM : NV1_MEMORY_USER, params);
  uvm_->create_external_range(va, size);
  const NvU32 flags = (NVOS46_FLAGS_PAGE_SIZE_4KB << NVOS46_FLAGS_PAGE_SIZE_SHIFT) | NVOS46_FLAGS_CACHE_SNOOP_ENABLE |
                      NVOS46_FLAGS_DMA_OFFSET_FIXED_TRUE;
  m.va = rm_->map_memory_dma(device_, virtmem_, m.handle, size, flags, va);
  uvm_->map_external_allocation(va, size, uuid_, ctl_.get(), root_, m.handle);
  // A fresh fd per CPU mapping: the driver gives an fd one mmap context for its whole life and answers a second
  // RM_MAP_MEMORY naming it with NV_ERR_STATE_IN_USE (ogkm kernel-open/nvidia/nv-usermap.c:53-57; cleared only when
  // the file is freed, nv.c nv_free_file_private). System memory maps through /dev/nvidiactl, video memory through
  // /dev/nvidiaN (tinygrad ops_nv.py _gpu_map_to_cpu). The fd closes after mmap: the mapping holds its own reference
  // to the file (nv-mmap.c nvidia_vma_release reads it through the vma), as tinygrad closed it after mmap.
  kernel_interface::SeamFd map_fd = system_memory ? kernel_interface::SeamFd(seam_, "/dev/nvidiactl", O_RDWR | O_CLOEXEC) : new_gpu_fd();
  m.cpu = static_cast<uint8_t*>(rm_->map_memory(device_, m.handle, size, map_fd.get()));
  live_.push_back(m);
  return m;
}

bool NvSession::owns(const NvMemory& memory) const {
  return std::any_of(live_.begin(), live_.end(), [&](const NvMemory& m) { return m.handle == memory.handle; });
}

void NvSession::free(const NvMemory& memory) {
  for (auto it = live_.begin(); it != live_.end(); ++it)
    if (it->handle == memory.handle) {
      seam_.munmap(it->cpu, it->size);
      rm_->unmap_memory_dma(device_, virtmem_, it->handle, it->va, it->size);
      uvm_->free(it->va, it->size);
      rm_->free(it->handle, device_);
      // Memory from alloc() goes back to its window's free ranges; fixed setup allocations (alloc_at) live as long
      // as the session, so only window memory past the setup area is ever freed here.
      const bool in_low = it->va >= va_base_ + kFirstAllocVaOffset && it->va < va_base_ + kLowVaWindow;
      const bool in_high = it->va >= high_va_base_ && it->va < high_va_base_ + kHighVaWindow;
      if (in_low || in_high) release_va(it->va, round_up(it->size, 0x200000), in_low);
      live_.erase(it);
      return;
    }
  throw std::invalid_argument("NV: free of memory handle " + std::to_string(memory.handle) + " that this device did not allocate");
}

}  // namespace doorbell::nv
