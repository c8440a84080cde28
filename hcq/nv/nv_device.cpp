#include "hcq/nv/nv_device.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <thread>

#include "compiler/gpu/cubin_reader.h"
#include "compiler/gpu/ptx_target.h"
#include "compiler/program.h"
#include "hcq/gpu_bound_queue.h"
#include "hcq/nv/cubin_image.h"
#include "hcq/nv/gpfifo.h"
#include "hcq/nv/nv_classes.h"
#include "hcq/nv/nv_commands.h"
#include "hcq/nv/pushbuffer.h"
#include "hcq/nv/qmd.h"
#include "hcq/wait_primitives.h"
#include "kernel-interface/driver_seams.h"
#include "kernel-interface/nvidia/mmu_fault_info.h"
#include "kernel-interface/nvidia/rm_controls.h"

namespace doorbell::nv {
namespace {

constexpr uint64_t kSignalSlot = 32;                 // value, timestamp, timestamp-command payload, second timestamp
constexpr uint64_t kSignalPoolBytes = 64 * 1024;     // 2048 signals
constexpr uint64_t kPushbufferRingBytes = 4 << 20;   // per channel
constexpr uint64_t kKernargRingBytes = 16 << 20;
// tinygrad's shader windows (tinygrad ops_nv.py:685) and the driver words sm_8x/sm_90 code reads from cbuf0
// (firmware-notes/nvidia-hopper.md §12, §14): shared window at words 6-7, local window at 8-9, 0xfffdc0 at 10-11.
// The same values are programmed at channel setup (SET_SHADER_*_MEMORY_WINDOW), so code and hardware agree.
constexpr uint64_t kSharedWindow = 0x729400000000;
constexpr uint64_t kLocalWindow = 0x729300000000;
// NVK: "shared memory window needs 4GB alignment on hopper+" (nvk_cmd_dispatch.c, nvk_push_dispatch_state_init).
static_assert(kSharedWindow % (uint64_t{1} << 32) == 0, "the shared memory window must be 4 GiB aligned on Hopper");

uint64_t round_up(uint64_t v, uint64_t to) { return (v + to - 1) / to * to; }

// The smallest SM shared memory carveout (32, 64 or 100 KiB) that holds `bytes` (firmware-notes/nvidia-hopper.md §13).
uint32_t carveout_for(uint32_t bytes) {
  for (uint32_t kib : {32u, 64u, 100u})
    if (kib * 1024 >= bytes) return kib * 1024;
  throw std::invalid_argument("NV: " + std::to_string(bytes) + " bytes of shared memory exceed the 100 KiB carveout");
}

}  // namespace

struct NvDevice::ChannelState {
  NvChannel* channel = nullptr;
  std::string name;                 // "compute" or "copy"
  NvMemory pushbuffer_memory{};
  std::optional<UploadRing> pushbuffers;
  Signal* progress = nullptr;       // released with the submission count at the end of every submission
  std::atomic<uint64_t> submissions{0};  // written under submit_mutex_; read by free() without it
  uint32_t put = 0;                 // next GPFIFO entry
};

std::unique_ptr<NvDevice> NvDevice::open(int gpu_index) { return open(kernel_interface::open_driver_seam("nvidia"), gpu_index); }

std::unique_ptr<NvDevice> NvDevice::open(std::unique_ptr<kernel_interface::SyscallSeam> seam, int gpu_index) {
  if (seam == nullptr) throw std::invalid_argument("NV: open of a null seam; expected a driver's seam (kernel-interface/driver_seams.h)");
  return std::unique_ptr<NvDevice>(new NvDevice(std::move(seam), gpu_index));
}

NvDevice::NvDevice(std::unique_ptr<kernel_interface::SyscallSeam> seam, int gpu_index)
    : Device(gpu_index == 0 ? std::string("NV") : "NV:" + std::to_string(gpu_index), /*host_signals=*/false), seam_(std::move(seam)) {
  session_ = std::make_unique<NvSession>(*seam_, gpu_index);
  // ptxas is required on hardware, which runs the cubin; the emulated GPU interprets the PTX and takes a cubin too
  // when ptxas is there (so the PROGRAM and its ProgramInfo are the ones hardware would get).
  set_target(make_ptx_target(arch(), emulated() ? PtxAssembly::kIfFound : PtxAssembly::kRequired));
  signal_pool_ = session_->alloc(kSignalPoolBytes, /*system_memory=*/true);
  kernarg_memory_ = session_->alloc(kKernargRingBytes, true);
  kernargs_.emplace(kernarg_memory_.cpu, kernarg_memory_.va, kernarg_memory_.size, "NV: the kernel argument ring");
  create_timeline_signal();
  auto make = [&](NvChannel& c, const char* name) {
    auto s = std::make_unique<ChannelState>();
    s->channel = &c;
    s->name = name;
    s->pushbuffer_memory = session_->alloc(kPushbufferRingBytes, true);
    s->pushbuffers.emplace(s->pushbuffer_memory.cpu, s->pushbuffer_memory.va, s->pushbuffer_memory.size, "NV: the " + std::string(name) + " pushbuffer ring");
    s->progress = &new_signal(std::string(name) + " progress");
    return s;
  };
  compute_ = make(session_->compute(), "compute");
  copy_ = make(session_->copy(), "copy");
  // Bind the engine classes to their subchannels once (SET_OBJECT), as every driver does at channel setup, and place
  // the shader memory windows: unset, "the memory window might be in a random place and cause us to fault off into
  // nowhere" (Mesa NVK, which sets them unconditionally from Volta on; tinygrad ops_nv.py:685-688 at setup).
  kick(*compute_, kSetObjectWords + kShaderMemoryWindowsWords, [&](PushBuffer& pb) {
    write_set_object(pb, kSubchannelCompute, session_->classes().compute);
    write_set_shader_memory_windows(pb, kSharedWindow, kLocalWindow);
  });
  kick(*copy_, kSetObjectWords, [&](PushBuffer& pb) { write_set_object(pb, kSubchannelCopy, session_->classes().copy); });
}

// Nothing waits for queued work: the session stops the channels (RM preempts them as it frees them) before it frees
// any memory, retired memory included.
NvDevice::~NvDevice() = default;

SignalPlacement NvDevice::place_signal() {
  if ((signals_used_ + 1) * kSignalSlot > signal_pool_.size)
    throw std::runtime_error("NV: all " + std::to_string(signal_pool_.size / kSignalSlot) + " signal slots are in use");
  const uint64_t offset = signals_used_++ * kSignalSlot;
  uint8_t* p = signal_pool_.cpu + offset;
  std::memset(p, 0, kSignalSlot);
  SignalPlacement s;
  s.memory = reinterpret_cast<SignalMemory*>(p);
  s.device_address = signal_pool_.va + offset;
  s.device_wakes_waiters = false;
  s.second_timestamp = reinterpret_cast<const std::atomic<uint64_t>*>(p + 24);
  s.fault_report = [](const void* device) { return static_cast<const NvDevice*>(device)->fault_report(); };
  s.fault_context = this;
  return s;
}

std::string NvDevice::arch() const {
  const uint32_t v = session_->gpu_arch();
  return "sm_" + std::to_string(v >> 8) + std::to_string(v & 0xff);  // GR SM_VERSION 0x806 is sm_86 (tinygrad)
}

std::string NvDevice::ptx_target() const { return ptx_arch_for(arch()); }

// ---- memory: sub-allocated blocks, RM allocations of their own (the baseline), retirement ---------------------

namespace {

// Video memory: 2 MiB chunks (the GPU's large page) doubling up to 256 MiB, so a program that grows to n bytes makes
// O(log n) RM allocations while a mostly idle device wastes at most one growth step. System memory (bound queues'
// pushbuffers and kernel arguments): the same, capped lower, since pinned host pages are taken from the host.
SubAllocatorPolicy heap_policy(bool system_memory) {
  SubAllocatorPolicy p;
  if (system_memory) {
    p.max_chunk = 32 << 20;
    p.own_chunk_at = 16 << 20;
  }
  return p;
}

// cudaMalloc's alignment, and what cubin images and QMDs need (hcq/nv/cubin_image.h). Requests of a large page or
// more are aligned to it, as RM placed every allocation before sub-allocation: their TLB entries stay large, and a
// store whose alignment needs no header states (shader local memory) gets what it always had.
constexpr uint64_t kAllocationAlignment = 256;
constexpr uint64_t kLargePage = 2 << 20;

}  // namespace

bool NvDevice::suballocation_default() {
  const char* v = std::getenv("DOORBELL_NV_SUBALLOC");
  return v == nullptr || std::string(v) != "0";
}

void NvDevice::set_suballocation(bool on) {
  std::lock_guard lock(memory_mutex_);
  suballocate_ = on;
}

SubAllocator::Stats NvDevice::heap_stats(bool system_memory) {
  std::lock_guard lock(memory_mutex_);
  const std::optional<SubAllocator>& heap = system_memory ? system_heap_ : video_heap_;
  return heap ? heap->stats() : SubAllocator::Stats{};
}

SubAllocator& NvDevice::heap_locked(bool system_memory) {
  std::optional<SubAllocator>& heap = system_memory ? system_heap_ : video_heap_;
  if (!heap) {
    heap.emplace(
        name() + (system_memory ? " system memory" : " video memory"), heap_policy(system_memory),
        [this, system_memory](uint64_t bytes) {
          NvMemory m = session_->alloc(bytes, system_memory);
          return HeapChunk{m.handle, m.va, m.size, m.cpu};
        },
        [this](const HeapChunk& c) {
          NvMemory m;
          m.handle = c.handle;
          session_->free(m);
        });
  }
  return *heap;
}

NvMemory NvDevice::alloc_locked(uint64_t size, bool system_memory, std::string_view what) {
  NvMemory m;
  if (suballocate_) {
    const uint64_t alignment = size >= kLargePage ? kLargePage : kAllocationAlignment;
    const SubAllocator::Block b = heap_locked(system_memory).alloc(size, alignment, what);
    m = NvMemory{static_cast<ki::NvHandle>(b.chunk_handle), b.address, b.size, b.host, system_memory};
  } else {
    m = session_->alloc(size, system_memory);
  }
  allocations_.emplace(m.va, Allocation{m, suballocate_});
  return m;
}

void NvDevice::release_locked(const NvMemory& memory) {
  auto it = allocations_.find(memory.va);
  if (it == allocations_.end()) throw std::logic_error("NV: release of memory at " + hex(memory.va) + " that is not allocated");
  const Allocation a = it->second;
  allocations_.erase(it);
  if (a.suballocated) heap_locked(a.memory.system_memory).free(a.memory.va);
  else session_->free(a.memory);
}

NvMemory NvDevice::alloc(uint64_t size, bool system_memory) {
  std::lock_guard lock(memory_mutex_);
  free_retired_locked();
  return alloc_locked(size, system_memory, "an allocation of " + std::to_string(size) + " bytes");
}

Device::Storage NvDevice::allocate_storage(size_t bytes) {
  std::lock_guard lock(memory_mutex_);
  free_retired_locked();
  // The baseline keeps the old placement: host memory on the emulated GPU, whose 4 KiB pages kept thousands of small
  // buffers cheap when each was an RM allocation of its own.
  NvMemory m = alloc_locked(bytes, /*system_memory=*/!suballocate_ && emulated(), "buffer storage of " + std::to_string(bytes) + " bytes");
  std::memset(m.cpu, 0, bytes);
  m.size = bytes;  // what transfers may touch (the block may be larger)
  storage_[m.va] = m;
  return Storage{m.cpu, m.va, m.va};
}

void NvDevice::release_storage(const Storage& storage) {
  NvMemory m;
  {
    std::lock_guard lock(memory_mutex_);
    auto it = storage_.find(storage.handle);
    if (it == storage_.end()) return;
    m = it->second;
    storage_.erase(it);
  }
  free(m);
}

void NvDevice::free(const NvMemory& memory) {
  // The counts first, then the progress signals (in free_retired_locked): a command submitted before this call is
  // counted, and its completion is seen.
  Retired r{memory, compute_->submissions.load(), copy_->submissions.load()};
  std::lock_guard lock(memory_mutex_);
  for (const Retired& earlier : retired_)
    if (earlier.memory.va == memory.va)
      throw std::invalid_argument("NV: free of the memory at GPU address " + hex(memory.va) + ", which was already freed");
  auto it = allocations_.find(memory.va);
  if (it == allocations_.end() || it->second.memory.handle != memory.handle)
    throw std::invalid_argument("NV: free of the memory at GPU address " + hex(memory.va) + " (RM handle " + std::to_string(memory.handle) +
                                "), which this device did not allocate or already freed");
  retired_.push_back(r);
  free_retired_locked();
}

// A retired block goes back to its heap (where the next allocation may reuse it) only here: once no submitted
// command may touch it.
void NvDevice::free_retired_locked() {
  if (retired_.empty()) return;
  const uint64_t compute_done = compute_->progress->value(), copy_done = copy_->progress->value();
  std::erase_if(retired_, [&](const Retired& r) {
    if (compute_done < r.compute_submissions || copy_done < r.copy_submissions) return false;
    release_locked(r.memory);
    return true;
  });
}

size_t NvDevice::retired_count() {
  std::lock_guard lock(memory_mutex_);
  free_retired_locked();
  return retired_.size();
}

// ---- host <-> GPU transfers ------------------------------------------------------------------------------------

uint64_t NvDevice::kick_copy(uint64_t dst, uint64_t src, uint64_t bytes) {
  std::lock_guard lock(submit_mutex_);
  kick(*copy_, copy_linear_words(bytes), [&](PushBuffer& pb) { write_copy_linear(pb, session_->classes().copy, dst, src, bytes); });
  return copy_->submissions.load();
}

uint8_t* NvDevice::staging_slot(size_t slot) {
  if (staging_.size == 0) {
    std::lock_guard lock(memory_mutex_);
    staging_ = session_->alloc(kStagingSlots * kStagingSlotBytes, /*system_memory=*/true);  // lives as long as the device
  }
  copy_->progress->wait(staging_slot_done_[slot]);
  return staging_.cpu + slot * kStagingSlotBytes;
}

void NvDevice::check_transfer(const Storage& storage, uint64_t offset, uint64_t bytes, const char* what) const {
  std::lock_guard lock(memory_mutex_);
  auto it = storage_.find(storage.handle);
  if (it == storage_.end() || it->second.va != storage.address)
    throw std::invalid_argument(std::string("NV: ") + what + " of storage at GPU address " + hex(storage.address) +
                                ", which this device did not allocate or already released");
  if (offset > it->second.size || bytes > it->second.size - offset)
    throw std::invalid_argument(std::string("NV: ") + what + " of " + std::to_string(bytes) + " bytes at byte " + std::to_string(offset) +
                                " of storage of " + std::to_string(it->second.size) + " bytes; expected a range inside it");
}

void NvDevice::copy_in(const Storage& storage, uint64_t offset, const void* src, size_t bytes) {
  check_transfer(storage, offset, bytes, "copy_in");
  if (bytes < kStagedCopyThreshold) return Device::copy_in(storage, offset, src, bytes);
  std::lock_guard lock(transfer_mutex_);
  const auto* from = static_cast<const uint8_t*>(src);
  uint64_t last = 0;
  for (uint64_t done = 0, piece = 0; done < bytes; done += kStagingSlotBytes, piece++) {
    const size_t slot = piece % kStagingSlots;
    const uint64_t n = std::min<uint64_t>(kStagingSlotBytes, bytes - done);
    std::memcpy(staging_slot(slot), from + done, n);  // while the engine copies the previous slots
    last = kick_copy(storage.address + offset + done, staging_.va + slot * kStagingSlotBytes, n);
    staging_slot_done_[slot] = last;
  }
  copy_->progress->wait(last);
}

void NvDevice::copy_out(void* dst, const Storage& storage, uint64_t offset, size_t bytes) {
  check_transfer(storage, offset, bytes, "copy_out");
  if (bytes < kStagedCopyThreshold) return Device::copy_out(dst, storage, offset, bytes);
  std::lock_guard lock(transfer_mutex_);
  auto* to = static_cast<uint8_t*>(dst);
  const uint64_t pieces = (bytes + kStagingSlotBytes - 1) / kStagingSlotBytes;
  uint64_t issued = 0;
  auto issue = [&]() {  // the copy of piece `issued` into its slot
    const size_t slot = issued % kStagingSlots;
    const uint64_t at = issued * kStagingSlotBytes, n = std::min<uint64_t>(kStagingSlotBytes, bytes - at);
    staging_slot(slot);
    staging_slot_done_[slot] = kick_copy(staging_.va + slot * kStagingSlotBytes, storage.address + offset + at, n);
    issued++;
  };
  // Keep every slot busy: drain the oldest piece while the engine fills the others.
  while (issued < std::min<uint64_t>(pieces, kStagingSlots)) issue();
  for (uint64_t piece = 0; piece < pieces; piece++) {
    const size_t slot = piece % kStagingSlots;
    const uint64_t at = piece * kStagingSlotBytes, n = std::min<uint64_t>(kStagingSlotBytes, bytes - at);
    std::memcpy(to + at, staging_slot(slot), n);
    if (issued < pieces) issue();
  }
}

std::string NvDevice::fault_report() const {
  // NV_CHANNELGPFIFO_NOTIFICATION_TYPE_ERROR is entry 0 of each channel's error notifier; NvNotification (nvos.h) has
  // its 16-bit status at +14 and info32 (the robust-channel error, the Xid) at +8. The emulated driver writes it as RM
  // does; on hardware this reading is unverified (no GPU has been lent yet).
  for (const ChannelState* ch : {compute_.get(), copy_.get()}) {
    const uint8_t* n = ch->channel->error_notifier;
    const uint16_t status = std::atomic_ref<const uint16_t>(*reinterpret_cast<const uint16_t*>(n + 14)).load(std::memory_order_acquire);
    if (status == 0) continue;
    std::lock_guard lock(fault_mutex_);
    if (!first_fault_.empty()) return first_fault_;
    uint32_t info;
    std::memcpy(&info, n + 8, 4);
    char head[128];
    std::snprintf(head, sizeof head, "%s channel error notifier status 0x%x, error %u (Xid)", ch->name.c_str(), status, info);
    std::string report = head;
    if (ch == copy_.get()) {
      first_fault_ = report + "; a copy-engine fault's address is in the kernel log (RM records none for the host)";
      return first_fault_;
    }
    // RM records the address of an SM's MMU fault (a kernel's access) for the compute object's debugger; the host's
    // faults leave theirs in the kernel log only. RM may write the notifier before it records the fault, so a report
    // without an address is not kept: the next look reads the debugger again.
    try {
      const auto mmu_faults = session_->mmu_faults();
      for (const auto& fault : mmu_faults) report += "; " + kernel_interface::nvidia::describe_mmu_fault(fault);
      if (mmu_faults.empty())
        return report + "; RM recorded no MMU fault of a kernel (a host fault's address is in the kernel log)";
    } catch (const std::exception& e) {
      report += "; no faulting address: " + std::string(e.what());
    }
    first_fault_ = report;
    return report;
  }
  return "";
}

std::shared_ptr<const LoadedProgram> NvDevice::load(const UOp& program) {
  const ProgramInfo& info = program_info(program);
  if (info.target != target().name())
    throw std::invalid_argument("NV: program " + info.name + " was compiled for " + info.target + "; expected " + target().name());
  const uint32_t params = static_cast<uint32_t>(info.buffers + static_cast<int64_t>(info.vars.size()));
  const std::string& binary = program_binary(program);
  if (binary.empty() && !emulated())
    throw std::invalid_argument("NV: program " + info.name + " has no cubin; expected one assembled by ptxas");
  // The cubin's code, global data and constant banks, and what the launch needs (hcq/nv/cubin_image.h). The emulated
  // GPU runs the PTX, but takes the cubin's needs when ptxas made one, so it is set up as hardware would be.
  std::optional<CubinImage> cubin;
  if (!binary.empty()) cubin = make_cubin_image(binary, info.name);
  if (cubin && cubin->local_bytes_per_thread > 0) ensure_local_memory(cubin->local_bytes_per_thread);
  std::string image;
  NvMemory memory;
  if (emulated()) {
    image = program_source(program);  // the emulated SM interprets the PTX itself (mockgpu/nv/ptx_sm.h)
    image.push_back('\0');
    memory = alloc(image.size(), /*system_memory=*/false);
  } else {
    memory = alloc(cubin->size, /*system_memory=*/false);
    image = cubin->bytes_at(memory.va);
  }
  std::memcpy(memory.cpu, image.data(), image.size());
  auto p = std::make_shared<NvProgram>(info.name, this->name(), memory);
  p->code_address = memory.va;
  p->code_bytes = static_cast<uint32_t>(emulated() ? image.size() : cubin->code_bytes);
  p->registers = emulated() || !cubin ? 0 : cubin->registers;
  p->shared_bytes = emulated() || !cubin ? static_cast<uint32_t>(info.shared_bytes) : cubin->shared_bytes;
  p->param_offset = cubin && !emulated() && cubin->has_param_offset ? cubin->param_offset : kSm90ParamOffset;
  p->param_count = params;
  p->constant0_bytes = std::max<uint32_t>(emulated() || !cubin ? 0 : cubin->constant0_bytes, p->param_offset + 8 * params);
  p->local_bytes_per_thread = cubin ? cubin->local_bytes_per_thread : 0;
  if (cubin && !emulated())
    for (const CubinConstantBank& b : cubin->constant_banks) p->constant_banks[b.index] = {memory.va + b.offset, b.size};
  return p;
}

void NvDevice::ensure_local_memory(uint32_t bytes_per_thread) {
  std::lock_guard lock(submit_mutex_);  // the setup is a compute submission, in order with the others
  if (bytes_per_thread <= local_bytes_per_thread_) return;
  // Sized as tinygrad does (ops_nv.py:696-708): every warp slot of every SM of a TPC may hold a warp with a stack,
  // then one store for all TPCs; granularities 0x200 per warp, 0x8000 per TPC, 0x20000 in all.
  const uint32_t per_thread = static_cast<uint32_t>(round_up(bytes_per_thread, 32));
  const ki::NvU32 indices[] = {ki::NV2080_CTRL_GR_INFO_INDEX_MAX_WARPS_PER_SM, ki::NV2080_CTRL_GR_INFO_INDEX_LITTER_NUM_SM_PER_TPC,
                               ki::NV2080_CTRL_GR_INFO_INDEX_LITTER_NUM_TPC_PER_GPC, ki::NV2080_CTRL_GR_INFO_INDEX_LITTER_NUM_GPCS};
  const std::vector<ki::NvU32> gr = session_->gr_info(indices);
  const uint64_t per_tpc = round_up(round_up(uint64_t{per_thread} * 32, 0x200) * gr.at(0) * gr.at(1), 0x8000);
  const uint64_t total = round_up(per_tpc * gr.at(2) * gr.at(3), 0x20000);
  NvMemory store = alloc(total, /*system_memory=*/false);
  kick(*compute_, kShaderLocalMemoryWords,
       [&](PushBuffer& pb) { write_set_shader_local_memory(pb, session_->classes().compute, {store.va, per_tpc}); });
  // Counted after the kick above: the old store is freed once the channel passed everything before the new one.
  if (local_memory_.size != 0) free(local_memory_);
  local_memory_ = store;
  local_bytes_per_thread_ = per_thread;
}

NvDevice::ChannelState& NvDevice::channel_for(std::span<const Command> commands) {
  bool copies = false, execs = false;
  for (const Command& c : commands) {
    copies |= c.kind == CommandKind::kCopy;
    execs |= c.kind == CommandKind::kExec;
  }
  if (copies && execs)
    throw std::invalid_argument("NV: a queue with both exec and copy commands; the compute and copy engines are separate "
                                "channels here: record them in two queues and order them with signals");
  return copies ? *copy_ : *compute_;
}

namespace {

// The GPU address of a signal command's signal; a signal in host memory (another device's) cannot be used here.
uint64_t signal_address(const Command& c) {
  if (c.signal->device_address() == 0)
    throw std::invalid_argument("NV: signal '" + c.signal->name() + "' of " + c.signal->device() + " is not in GPU memory");
  return c.signal->device_address();
}

}  // namespace

const NvProgram& NvDevice::exec_program(const Command& c) const {
  if (c.program == nullptr) throw std::invalid_argument("NV: exec of a CPU kernel; expected a program loaded on NV");
  if (c.program->device() != name())
    throw std::invalid_argument("NV: program '" + c.program->name() + "' was loaded on " + c.program->device());
  const auto& p = static_cast<const NvProgram&>(*c.program);
  if (c.buffers_count + c.scalars_count != p.param_count)
    throw std::invalid_argument("NV: program '" + p.name() + "' takes " + std::to_string(p.param_count) + " parameters, got " +
                                std::to_string(c.buffers_count) + " buffers and " + std::to_string(c.scalars_count) + " variables");
  return p;
}

namespace {

bool has_exec(std::span<const Command> commands) {
  return std::any_of(commands.begin(), commands.end(), [](const Command& c) { return c.kind == CommandKind::kExec; });
}

}  // namespace

size_t NvDevice::encoded_words(std::span<const Command> commands, const ChannelState& ch) const {
  // One case per command, mirroring encode(): what each writes, so the ring piece is reserved before anything is
  // written and a bad command throws before anything is taken.
  size_t words = has_exec(commands) ? kInvalidateSkedCachesWords : 0;
  bool chained = false;  // an exec right after an exec is chained to it by its QMD and takes no method
  for (const Command& c : commands) {
    switch (c.kind) {
      case CommandKind::kExec:
        exec_program(c);
        if (!chained) words += kComputeLaunchWords;
        chained = true;
        continue;
      case CommandKind::kCopy: words += copy_linear_words(c.bytes); break;
      case CommandKind::kSignal:
      case CommandKind::kWait:
      case CommandKind::kTimestamp:
        signal_address(c);
        words += kSemaphoreWords;
        break;
      case CommandKind::kMemoryBarrier:
        words += &ch == compute_.get() ? (variant_.wait_for_idle_after_barrier ? kWaitForIdleWords : 0) + kInvalidateShaderCachesWords
                                        : kHostSysMembarWords;
        break;
    }
    chained = false;
  }
  return words;
}

template <class Take>
void NvDevice::encode(std::span<const Command> commands, std::span<void* const> args, std::span<const int64_t> scalars, ChannelState& ch,
                      PushBuffer& pb, Take&& take_kernargs, PatchSites* sites) {
  const uint32_t gpfifo_class = session_->classes().gpfifo;
  // QMDs live in recycled memory (the kernel argument ring, or memory another bound queue had): the scheduler must not
  // launch a copy it cached from an earlier QMD at the same address (NVK sends this at the start of every command
  // buffer, nvk_cmd_buffer_begin_compute).
  if (has_exec(commands)) write_invalidate_sked_caches(pb);
  // The previous exec's QMD while nothing separates it from the next one: the next is chained to it.
  std::optional<std::pair<QmdLaunch, uint8_t*>> previous;
  for (size_t index = 0; index < commands.size(); index++) {
    const Command& c = commands[index];
    switch (c.kind) {
      case CommandKind::kExec: {
        const NvProgram& p = exec_program(c);
        const uint64_t cbuf_bytes = round_up(p.constant0_bytes, 64);
        const uint64_t qmd_at = round_up(cbuf_bytes, kQmdAlignment);
        const uint32_t compute_class = session_->classes().compute;
        UploadRing::Piece piece = take_kernargs(qmd_at + qmd_words(compute_class) * 4, kQmdAlignment);
        std::memset(piece.cpu, 0, cbuf_bytes);
        auto* cbuf = reinterpret_cast<uint32_t*>(piece.cpu);
        const uint64_t driver_words[] = {kSharedWindow, kLocalWindow, 0xfffdc0};
        for (int i = 0; i < 3; i++) {
          cbuf[6 + 2 * i] = static_cast<uint32_t>(driver_words[i]);
          cbuf[7 + 2 * i] = static_cast<uint32_t>(driver_words[i] >> 32);
        }
        for (uint32_t i = 0; i < c.buffers_count; i++) {
          const uint64_t va = reinterpret_cast<uintptr_t>(args[c.buffers_begin + i]);
          std::memcpy(piece.cpu + p.param_offset + 8 * i, &va, 8);
        }
        for (uint32_t i = 0; i < c.scalars_count; i++)  // the kernel's variables after its buffers, 8 bytes each
          std::memcpy(piece.cpu + p.param_offset + 8 * (c.buffers_count + i), &scalars[c.scalars_begin + i], 8);
        if (sites != nullptr) sites->params[index] = piece.cpu + p.param_offset;
        QmdLaunch q;
        q.program_address = p.code_address;
        q.program_prefetch_size = p.code_bytes;
        q.grid_x = c.grid[0], q.grid_y = c.grid[1], q.grid_z = c.grid[2];
        q.block_x = c.block[0], q.block_y = c.block[1], q.block_z = c.block[2];
        q.shared_memory_size = static_cast<uint32_t>(round_up(p.shared_bytes, 128));
        q.sm_config_shared_memory_min = q.sm_config_shared_memory_target = carveout_for(q.shared_memory_size);
        q.sm_config_shared_memory_max = 100 * 1024;
        q.register_count = std::max<uint32_t>(p.registers, 1);
        q.constant_buffer0_address = piece.va;
        q.constant_buffer0_size = static_cast<uint32_t>(cbuf_bytes);
        q.constant_buffers = p.constant_banks;
        q.shader_local_memory_high_size = p.local_bytes_per_thread;  // where CUDA puts it (tinygrad ops_nv.py:301)
        q.sass_version = ((session_->gpu_arch() >> 4) & 0xf0) | (session_->gpu_arch() & 0xf);
        apply_launch_variant(variant_, q, {piece.cpu, cbuf_bytes}, p.param_offset);
        uint8_t* qmd_cpu = piece.cpu + qmd_at;
        const std::vector<uint32_t> qmd = encode_qmd(compute_class, q);  // V04 on Hopper, V03 on Ampere/Ada
        std::memcpy(qmd_cpu, qmd.data(), qmd.size() * 4);
        if (previous) {  // chain: the previous grid schedules this one when it completes (tinygrad's QMD chaining)
          previous->first.dependent_qmd_address = piece.va + qmd_at;
          // Read afresh, never a copy the scheduler cached from an older QMD at this recycled address (the head
          // QMD's PCAS action is INVALIDATE_COPY_SCHEDULE for the same reason).
          previous->first.dependent_qmd_action = kDependentQmdActionInvalidateCopySchedule;
          const std::vector<uint32_t> prev = encode_qmd(compute_class, previous->first);
          std::memcpy(previous->second, prev.data(), prev.size() * 4);
        } else {
          write_compute_launch(pb, piece.va + qmd_at, PcasAction::kInvalidateCopySchedule);
        }
        previous = std::make_pair(q, qmd_cpu);
        break;
      }
      case CommandKind::kCopy:
        if (sites != nullptr) sites->copy_word[index] = static_cast<uint32_t>(pb.size());
        write_copy_linear(pb, session_->classes().copy, reinterpret_cast<uintptr_t>(c.dst), reinterpret_cast<uintptr_t>(c.src), c.bytes);
        previous.reset();
        break;
      case CommandKind::kSignal:
        if (sites != nullptr) sites->payload_word[index] = static_cast<uint32_t>(pb.size() + kSemaphorePayloadWord);
        write_semaphore_release(pb, gpfifo_class, signal_address(c), c.value, /*with_timestamp=*/true);
        previous.reset();
        break;
      case CommandKind::kWait:
        if (sites != nullptr) sites->payload_word[index] = static_cast<uint32_t>(pb.size() + kSemaphorePayloadWord);
        write_semaphore_acquire_geq(pb, gpfifo_class, signal_address(c), c.value);
        previous.reset();
        break;
      case CommandKind::kTimestamp:
        write_semaphore_release(pb, gpfifo_class, signal_address(c) + 16, 0, /*with_timestamp=*/true);
        previous.reset();
        break;
      case CommandKind::kMemoryBarrier:
        if (&ch == compute_.get()) {
          // The chain is broken here and the next grid is a fresh SEND_PCAS, which nothing orders after the grids
          // before it: wait for them (WAIT_FOR_IDLE, clcbc0.h:52), then drop the caches so the next grid reads
          // their writes. INVALIDATE_SHADER_CACHES_NO_WFI alone waits for nothing. The device check's experiment d
          // turns the wait off (NvLaunchVariant) to see whether hardware needs it.
          if (variant_.wait_for_idle_after_barrier) write_wait_for_idle(pb);
          write_invalidate_shader_caches(pb);
        } else {
          write_host_sys_membar(pb);
        }
        previous.reset();
        break;
    }
  }
}

template <class Write>
void NvDevice::kick(ChannelState& ch, size_t words, Write&& write, const NvMemory* bound, uint32_t bound_words) {
  auto wait = [&](uint64_t count) { ch.progress->wait(count); };
  const uint64_t count = ch.submissions + 1;  // counted once written: a write that throws submits nothing
  const size_t total = words + kSemaphoreWords;
  UploadRing::Piece piece = ch.pushbuffers->take(total * 4, 4, wait);
  PushBuffer pb(std::span<uint32_t>(reinterpret_cast<uint32_t*>(piece.cpu), total));
  write(pb);  // the commands, encoded in place (a bound queue's kick brings none)
  write_semaphore_release(pb, session_->classes().gpfifo, ch.progress->device_address(), count, false);
  if (pb.size() != total)
    throw std::logic_error("NV: the " + ch.name + " channel's submission declared " + std::to_string(total) + " words and wrote " +
                           std::to_string(pb.size()));
  ch.submissions = count;
  ch.pushbuffers->close(count);
  NvChannel& c = *ch.channel;
  auto entry_space = [&]() {  // two free entries: the GPU's read pointer must not be overtaken by a lap
    const uint32_t get = std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(c.userd + kUserdGpGetOffset)).load(std::memory_order_acquire);
    return (get + c.ring_entries - ch.put - 1) % c.ring_entries >= 2;
  };
  const int64_t deadline = monotonic_ns() + static_cast<int64_t>(kDefaultWaitTimeout.count()) * 1'000'000;
  while (!entry_space()) {
    if (monotonic_ns() > deadline) throw std::runtime_error("NV: the " + ch.name + " channel's GPFIFO stayed full for " + std::to_string(kDefaultWaitTimeout.count()) + " ms");
    std::this_thread::yield();
  }
  if (bound != nullptr && bound_words != 0) {
    c.ring[ch.put] = encode_gpfifo_entry({bound->va, bound_words, true, false});
    ch.put = (ch.put + 1) % c.ring_entries;
  }
  c.ring[ch.put] = encode_gpfifo_entry({piece.va, static_cast<uint32_t>(total), true, false});
  ch.put = (ch.put + 1) % c.ring_entries;
  // Fence, GPPut, fence, doorbell (gpfifo_submit_writes): the pushbuffer and entries before GPPut, GPPut before the
  // doorbell (USERD may be write-combined, the usermode page is uncached; UVM puts wmb() between the two).
  for (const SubmitWrite& w : gpfifo_submit_writes(ch.put, c.ring_entries, c.token)) {
    switch (w.region) {
      case SubmitRegion::kFence: std::atomic_thread_fence(std::memory_order_seq_cst); break;
      case SubmitRegion::kUserd:
        std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(c.userd + w.offset)).store(w.value, std::memory_order_release);
        break;
      case SubmitRegion::kUsermode: *session_->doorbell() = w.value; break;  // the usermode register: uncached MMIO
    }
  }
}

void NvDevice::submit(const HWQueue& queue) {
  std::lock_guard lock(submit_mutex_);
  ChannelState& ch = channel_for(queue.commands());
  const size_t words = encoded_words(queue.commands(), ch);
  auto take = [&](uint64_t bytes, uint64_t align) {
    return kernargs_->take(bytes, align, [&](uint64_t count) { compute_->progress->wait(count); });
  };
  kick(ch, words, [&](PushBuffer& pb) { encode(queue.commands(), queue.buffers(), queue.scalars(), ch, pb, take, nullptr); });
  // What it took belongs to the submission just kicked (only compute queues take kernel arguments).
  if (&ch == compute_.get()) kernargs_->close(compute_->submissions);
}

namespace {

// A queue bound into device memory: its pushbuffer and kernel arguments, encoded once, and where its patch points
// sit in them. A patch rewrites only those words, once the GPU is done with the previous run of the queue.
struct NvBoundQueue : GpuBoundQueue {
  NvMemory pushbuffer{}, kernargs{};
  uint32_t words = 0;
  NvDevice::ChannelState* channel = nullptr;
  NvDevice::PatchSites sites;
  uint32_t copy_class = 0;  // the copy engine's class, for patch_copy's encoding
  NvDevice* device = nullptr;
  // The queue may outlive its device (HWQueue holds this, not the device): then the device's teardown already freed
  // the pushbuffer and kernel arguments with everything else, and `device` must not be touched (device_life says).
  ~NvBoundQueue() override {
    if (device_life == nullptr || !device_life->alive.load(std::memory_order_acquire)) return;
    try {  // retired by the device until the GPU is done with them: a submission may still be running from them
      device->free(pushbuffer);
      if (kernargs.size) device->free(kernargs);
    } catch (const std::exception&) {
    }
  }

  // Writes the 32-bit halves of `value` that differ from what is there (the GPU's words are 32 bits); returns how many.
  static size_t store64(uint8_t* at, uint64_t value) {
    size_t words = 0;
    for (int half = 0; half < 2; half++) {
      std::atomic_ref<uint32_t> word(*reinterpret_cast<uint32_t*>(at + 4 * half));
      const auto v = static_cast<uint32_t>(value >> (32 * half));
      if (word.load(std::memory_order_relaxed) == v) continue;
      word.store(v, std::memory_order_relaxed);
      words++;
    }
    return words;
  }

  size_t patch_value(size_t command, uint64_t value) override {
    wait_for_previous_run("patch_value");
    BoundQueue::patch_value(command, value);
    return store64(pushbuffer.cpu + 4 * uint64_t{sites.payload_word[command]}, value);  // SEM_PAYLOAD_LO, SEM_PAYLOAD_HI
  }
  size_t patch_buffer(size_t command, size_t slot, void* buffer) override {
    wait_for_previous_run("patch_buffer");
    BoundQueue::patch_buffer(command, slot, buffer);
    return store64(sites.params[command] + 8 * slot, reinterpret_cast<uintptr_t>(buffer));  // its parameter in cbuf 0
  }
  size_t patch_scalar(size_t command, size_t slot, int64_t value) override {
    wait_for_previous_run("patch_scalar");
    BoundQueue::patch_scalar(command, slot, value);
    return store64(sites.params[command] + 8 * (uint64_t{commands[command].buffers_count} + slot), static_cast<uint64_t>(value));
  }
  // A copy's addresses sit in each chunk's OFFSET_IN/OUT methods: the copy is encoded again by the same writer into a
  // scratch buffer (it throws for addresses the engine cannot take before anything is written), and the words that
  // differ are written over the bound ones.
  size_t patch_copy(size_t command, void* dst, const void* src) override {
    wait_for_previous_run("patch_copy");
    const uint64_t bytes = commands[command].bytes;
    std::vector<uint32_t> fresh(copy_linear_words(bytes));
    PushBuffer pb{std::span<uint32_t>(fresh)};
    write_copy_linear(pb, copy_class, reinterpret_cast<uintptr_t>(dst), reinterpret_cast<uintptr_t>(src), bytes);
    BoundQueue::patch_copy(command, dst, src);
    size_t words = 0;
    auto* at = reinterpret_cast<uint32_t*>(pushbuffer.cpu) + sites.copy_word[command];
    for (size_t i = 0; i < fresh.size(); i++) {
      std::atomic_ref<uint32_t> word(at[i]);
      if (word.load(std::memory_order_relaxed) == fresh[i]) continue;
      word.store(fresh[i], std::memory_order_relaxed);
      words++;
    }
    return words;
  }
};

}  // namespace

std::shared_ptr<BoundQueue> NvDevice::bind(const HWQueue& queue) {
  std::lock_guard lock(submit_mutex_);
  auto b = std::make_shared<NvBoundQueue>();
  b->device = this;
  b->device_life = life();
  b->channel = &channel_for(queue.commands());
  b->progress = b->channel->progress;
  b->copy_class = session_->classes().copy;
  b->commands.assign(queue.commands().begin(), queue.commands().end());
  b->buffers.assign(queue.buffers().begin(), queue.buffers().end());
  b->scalars.assign(queue.scalars().begin(), queue.scalars().end());
  const size_t words = encoded_words(b->commands, *b->channel);
  uint64_t kernarg_bytes = 0;
  for (const Command& c : b->commands)
    if (c.kind == CommandKind::kExec)
      kernarg_bytes += round_up(round_up(static_cast<const NvProgram*>(c.program)->constant0_bytes, 64), kQmdAlignment) +
                       qmd_words(session_->classes().compute) * 4 + kQmdAlignment;
  if (kernarg_bytes) b->kernargs = alloc(kernarg_bytes, true);
  b->pushbuffer = alloc(std::max<uint64_t>(words * 4, 4), true);
  b->words = static_cast<uint32_t>(words);
  b->sites.payload_word.assign(b->commands.size(), 0);
  b->sites.params.assign(b->commands.size(), nullptr);
  b->sites.copy_word.assign(b->commands.size(), 0);
  if (words != 0) {
    uint64_t used = 0;  // the kernel arguments and QMDs laid out from the start of b->kernargs
    auto take = [&](uint64_t bytes, uint64_t align) {
      used = round_up(used, align);
      UploadRing::Piece p{b->kernargs.cpu + used, b->kernargs.va + used};
      used += bytes;
      return p;
    };
    PushBuffer pb(std::span<uint32_t>(reinterpret_cast<uint32_t*>(b->pushbuffer.cpu), words));
    encode(b->commands, b->buffers, b->scalars, *b->channel, pb, take, &b->sites);
    if (pb.size() != words) throw std::logic_error("NV: a bound queue declared " + std::to_string(words) + " words and wrote " + std::to_string(pb.size()));
  }
  return b;
}

NvDevice::BoundMemory NvDevice::bound_memory(const BoundQueue& queue) const {
  const auto* b = dynamic_cast<const NvBoundQueue*>(&queue);
  if (b == nullptr || b->device != this) throw std::invalid_argument("NV: bound_memory of a queue bound to another device");
  return {b->pushbuffer, b->kernargs, b->words};
}

void NvDevice::submit_bound(std::shared_ptr<const BoundQueue> queue) {
  std::lock_guard lock(submit_mutex_);
  auto* b = const_cast<NvBoundQueue*>(dynamic_cast<const NvBoundQueue*>(queue.get()));
  if (b == nullptr || b->device != this) throw std::invalid_argument("NV: submit_bound of a queue bound to another device");
  // Patches were written in place (NvBoundQueue::patch_*): nothing is encoded here, one GP entry runs the bound words.
  kick(*b->channel, 0, [](PushBuffer&) {}, &b->pushbuffer, b->words);
  b->last_submission.store(b->channel->submissions, std::memory_order_release);
}

// ---- clock calibration -----------------------------------------------------------------------------------------

ClockSample NvDevice::clock_sample(ChannelState& ch) {
  const uint64_t target = clock_signal_->value() + 1;
  ClockSample s;
  s.host_before_ns = monotonic_ns();
  {
    std::lock_guard lock(submit_mutex_);
    kick(ch, kSemaphoreWords, [&](PushBuffer& pb) {
      write_semaphore_release(pb, session_->classes().gpfifo, clock_signal_->device_address(), target, /*with_timestamp=*/true);
    });
  }
  clock_signal_->wait(target);
  s.host_after_ns = monotonic_ns();
  s.device_ns = clock_signal_->timestamp();  // the release's stamp at +8; nothing writes +24 of this signal
  return s;
}

ClockCalibration NvDevice::calibrate_clock(int tries_per_channel) {
  if (tries_per_channel < 1)
    throw std::invalid_argument("NV: clock calibration with " + std::to_string(tries_per_channel) + " tries per channel; expected at least 1");
  std::lock_guard lock(clock_mutex_);
  if (clock_signal_ == nullptr) clock_signal_ = &new_signal("clock calibration");
  std::vector<ClockSample> samples;
  for (int i = 0; i < tries_per_channel; i++)
    for (ChannelState* ch : {compute_.get(), copy_.get()}) samples.push_back(clock_sample(*ch));
  clock_ = calibrate_from(samples, kPtimerTickNs);
  return *clock_;
}

ClockCalibration NvDevice::clock_calibration() {
  {
    std::lock_guard lock(clock_mutex_);
    if (clock_) return *clock_;
  }
  return calibrate_clock();
}

int64_t NvDevice::host_time_ns(uint64_t device_ns) { return clock_calibration().host_ns(device_ns); }

}  // namespace doorbell::nv
