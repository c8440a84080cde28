#include "hcq/amd/amd_device.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <stdexcept>
#include <thread>

#include "compiler/gpu/amdgpu_target.h"
#include "compiler/program.h"
#include "hcq/amd/amd_code_image.h"
#include "hcq/amd/dispatch_plan.h"
#include "hcq/amd/pm4.h"
#include "hcq/amd/sdma.h"
#include "hcq/gpu_bound_queue.h"
#include "hcq/wait_primitives.h"
#include "kernel-interface/driver_seams.h"

namespace doorbell::amd {
namespace {

constexpr uint64_t kSignalSlot = 16;                // value, timestamp
constexpr uint64_t kSignalPoolBytes = 64 * 1024;    // 4096 signals
constexpr uint64_t kIbRingBytes = 4 << 20;          // per queue
constexpr uint64_t kKernargRingBytes = 16 << 20;
// A submission's ring slot. PM4: INDIRECT_BUFFER (4) + RELEASE_MEM of the progress value (8) + RELEASE_MEM of the
// event mailbox with the interrupt (8) + a 12-dword NOP = 32 dwords, so no packet straddles the ring's end (its size is
// a power of two). SDMA: 2 NOPs, INDIRECT (6: it must end on an 8-dword boundary, firmware-notes/amd-sdma.md), two
// FENCEs of the progress value and one of the mailbox (4 each), TRAP (2), 10 NOPs = 32 dwords.
constexpr uint32_t kPm4SlotDwords = 32, kSdmaSlotDwords = 32;
// SDMA IBs are padded to a multiple of 8 dwords (the kernel's pad_ib; firmware-notes/amd-sdma.md).
constexpr size_t kSdmaIbGranule = 8;
// WAIT_REG_MEM / POLL_REGMEM function 5: (mem & mask) >= reference (firmware-notes/amd-pm4.md).
constexpr uint32_t kFunctionGreaterEqual = 5;

uint64_t round_up(uint64_t v, uint64_t to) { return (v + to - 1) / to * to; }

std::string hex(uint64_t v) {
  char s[24];
  std::snprintf(s, sizeof s, "0x%llx", static_cast<unsigned long long>(v));
  return s;
}

uint64_t signal_address(const Command& c) {
  if (c.signal->device_address() == 0)
    throw std::invalid_argument("AMD: signal '" + c.signal->name() + "' of " + c.signal->device() + " is not in GPU memory");
  return c.signal->device_address();
}

bool has_exec(std::span<const Command> commands) {
  return std::any_of(commands.begin(), commands.end(), [](const Command& c) { return c.kind == CommandKind::kExec; });
}

void write_pm4_nop(CmdStream& s, uint32_t dwords) {  // a NOP packet of `dwords` (>= 2) in all
  s.reserve(dwords, "NOP");
  s.write(pm4_header(kPm4Nop, dwords - 1));
  for (uint32_t i = 1; i < dwords; i++) s.write(0);
  s.commit();
}

}  // namespace

struct AmdDevice::QueueState {
  AmdUserQueue* queue = nullptr;
  std::string name;
  bool pm4 = true;
  AmdMemory ib_memory{};
  std::optional<UploadRing> ibs;
  Signal* progress = nullptr;
  std::atomic<uint64_t> submissions{0};
  uint64_t base = 0;  // submissions made before the queue was last rebuilt: its write pointer counts from there
  uint32_t slot_dwords = 0;
  uint64_t slots = 0;
};

std::unique_ptr<AmdDevice> AmdDevice::open(int gpu_index) { return open(kernel_interface::open_driver_seam("amd"), gpu_index); }

std::unique_ptr<AmdDevice> AmdDevice::open(std::unique_ptr<kernel_interface::SyscallSeam> seam, int gpu_index) {
  if (seam == nullptr) throw std::invalid_argument("AMD: open of a null seam; expected a driver's seam (kernel-interface/driver_seams.h)");
  return std::unique_ptr<AmdDevice>(new AmdDevice(std::move(seam), gpu_index));
}

AmdDevice::AmdDevice(std::unique_ptr<kernel_interface::SyscallSeam> seam, int gpu_index)
    : Device(gpu_index == 0 ? std::string("AMD") : "AMD:" + std::to_string(gpu_index), /*host_signals=*/false), seam_(std::move(seam)) {
  session_ = std::make_unique<AmdSession>(*seam_, gpu_index);
  // LLVM compiles for AMD (compiler/gpu/amdgpu_target.h); without it the device still runs queues of copies, signals
  // and waits, and loading a program throws this reason.
  try {
    set_target(make_amdgpu_target(arch()));
  } catch (const std::invalid_argument& e) {
    target_error_ = e.what();
    set_no_target_reason(target_error_);
  }
  // The timestamp counter's tick: 1e6 / gpu_counter_freq (kHz) ns, reduced (10/1 at 100 MHz).
  const uint64_t khz = session_->device_info().gpu_counter_freq_khz, g = std::gcd<uint64_t>(1'000'000, khz);
  ns_per_tick_num_ = 1'000'000 / g;
  ns_per_tick_den_ = khz / g;
  signal_pool_ = session_->alloc(kSignalPoolBytes, AmdDomain::kGttUncached);
  kernarg_memory_ = session_->alloc(kKernargRingBytes, AmdDomain::kGttUncached);
  kernargs_.emplace(kernarg_memory_.cpu, kernarg_memory_.va, kernarg_memory_.size, "AMD: the kernel argument ring");
  create_timeline_signal();
  auto make = [&](AmdUserQueue& uq, const char* name, bool pm4) {
    auto q = std::make_unique<QueueState>();
    q->queue = &uq;
    q->name = name;
    q->pm4 = pm4;
    q->ib_memory = session_->alloc(kIbRingBytes, AmdDomain::kGttUncached);
    q->ibs.emplace(q->ib_memory.cpu, q->ib_memory.va, q->ib_memory.size, "AMD: the " + std::string(name) + " IB ring");
    q->progress = &new_signal(std::string(name) + " progress");
    q->slot_dwords = pm4 ? kPm4SlotDwords : kSdmaSlotDwords;
    q->slots = uq.ring.size / (4 * q->slot_dwords);
    return q;
  };
  compute_ = make(session_->compute(), "compute", true);
  copy_ = make(session_->sdma(), "sdma", false);
}

// The session destroys the queues (the KFD stops them) before it frees any memory, retired memory included.
AmdDevice::~AmdDevice() {
  session_->destroy_queues();
  vram_heap_.reset();
  gtt_heap_.reset();
}

SignalPlacement AmdDevice::place_signal() {
  if ((signals_used_ + 1) * kSignalSlot > signal_pool_.size)
    throw std::runtime_error("AMD: all " + std::to_string(signal_pool_.size / kSignalSlot) + " signal slots are in use");
  const uint64_t offset = signals_used_++ * kSignalSlot;
  uint8_t* p = signal_pool_.cpu + offset;
  std::memset(p, 0, kSignalSlot);
  SignalPlacement s;
  s.memory = reinterpret_cast<SignalMemory*>(p);
  s.device_address = signal_pool_.va + offset;
  s.device_wakes_waiters = false;
  s.fault_report = [](const void* device) { return static_cast<const AmdDevice*>(device)->fault_report(); };
  s.fault_context = this;
  // A RELEASE_MEM or TRAP raises the signal event's interrupt: a waiter sleeps on the event (1 ms at most: another
  // waiter may take the auto-reset event's wake-up).
  s.interrupt_wait = [](const void* device) { const_cast<AmdDevice*>(static_cast<const AmdDevice*>(device))->session_->wait_signal_event(1); };
  s.interrupt_context = this;
  s.ns_per_tick_num = ns_per_tick_num_;
  s.ns_per_tick_den = ns_per_tick_den_;
  return s;
}

// ---- memory ------------------------------------------------------------------------------------------------------

SubAllocator& AmdDevice::heap_locked(AmdDomain domain) {
  std::optional<SubAllocator>& heap = domain == AmdDomain::kVram ? vram_heap_ : gtt_heap_;
  if (!heap) {
    SubAllocatorPolicy policy;
    if (domain == AmdDomain::kGttUncached) {
      policy.max_chunk = 32 << 20;
      policy.own_chunk_at = 16 << 20;
    }
    heap.emplace(
        name() + (domain == AmdDomain::kVram ? " video memory" : " host memory"), policy,
        [this, domain](uint64_t bytes) {
          const AmdMemory m = session_->alloc(bytes, domain);
          return HeapChunk{m.handle, m.va, m.size, m.cpu};
        },
        [this, domain](const HeapChunk& c) { session_->free(AmdMemory{c.handle, c.address, c.size, c.host, domain == AmdDomain::kVram}); });
  }
  return *heap;
}

AmdMemory AmdDevice::alloc(uint64_t size, AmdDomain domain) {
  std::lock_guard lock(memory_mutex_);
  free_retired_locked();
  const SubAllocator::Block b = heap_locked(domain).alloc(size, 256, "an allocation of " + std::to_string(size) + " bytes");
  const AmdMemory m{b.chunk_handle, b.address, b.size, b.host, domain == AmdDomain::kVram};
  allocations_.emplace(m.va, m);
  return m;
}

void AmdDevice::free(const AmdMemory& memory) {
  Retired r{memory, compute_->submissions.load(), copy_->submissions.load()};
  std::lock_guard lock(memory_mutex_);
  for (const Retired& earlier : retired_)
    if (earlier.memory.va == memory.va) throw std::invalid_argument("AMD: free of the memory at " + hex(memory.va) + ", which was already freed");
  auto it = allocations_.find(memory.va);
  if (it == allocations_.end() || it->second.handle != memory.handle)
    throw std::invalid_argument("AMD: free of the memory at " + hex(memory.va) + ", which this device did not allocate or already freed");
  retired_.push_back(r);
  free_retired_locked();
}

void AmdDevice::free_retired_locked() {
  if (retired_.empty()) return;
  const uint64_t compute_done = compute_->progress->value(), copy_done = copy_->progress->value();
  std::erase_if(retired_, [&](const Retired& r) {
    if (compute_done < r.compute_submissions || copy_done < r.copy_submissions) return false;
    allocations_.erase(r.memory.va);
    heap_locked(r.memory.vram ? AmdDomain::kVram : AmdDomain::kGttUncached).free(r.memory.va);
    return true;
  });
}

size_t AmdDevice::retired_count() {
  std::lock_guard lock(memory_mutex_);
  free_retired_locked();
  return retired_.size();
}

Device::Storage AmdDevice::allocate_storage(size_t bytes) {
  AmdMemory m = alloc(std::max<size_t>(bytes, 1), AmdDomain::kVram);
  std::memset(m.cpu, 0, bytes);
  m.size = bytes;  // what transfers may touch
  std::lock_guard lock(memory_mutex_);
  storage_[m.va] = m;
  return Storage{m.cpu, m.va, m.va};
}

void AmdDevice::release_storage(const Storage& storage) {
  AmdMemory m;
  {
    std::lock_guard lock(memory_mutex_);
    auto it = storage_.find(storage.handle);
    if (it == storage_.end()) return;
    m = it->second;
    storage_.erase(it);
  }
  free(m);
}

void AmdDevice::check_transfer(const Storage& storage, uint64_t offset, uint64_t bytes, const char* what) const {
  std::lock_guard lock(memory_mutex_);
  auto it = storage_.find(storage.handle);
  if (it == storage_.end() || it->second.va != storage.address)
    throw std::invalid_argument(std::string("AMD: ") + what + " of storage at " + hex(storage.address) +
                                ", which this device did not allocate or already released");
  if (offset > it->second.size || bytes > it->second.size - offset)
    throw std::invalid_argument(std::string("AMD: ") + what + " of " + std::to_string(bytes) + " bytes at byte " + std::to_string(offset) +
                                " of storage of " + std::to_string(it->second.size) + " bytes; expected a range inside it");
}

void AmdDevice::copy_in(const Storage& storage, uint64_t offset, const void* src, size_t bytes) {
  check_transfer(storage, offset, bytes, "copy_in");
  if (bytes < kSdmaTransferThreshold) return Device::copy_in(storage, offset, src, bytes);
  sdma_transfer(storage.address + offset, src, bytes, /*to_device=*/true);
}

void AmdDevice::copy_out(void* dst, const Storage& storage, uint64_t offset, size_t bytes) {
  check_transfer(storage, offset, bytes, "copy_out");
  if (bytes < kSdmaTransferThreshold) return Device::copy_out(dst, storage, offset, bytes);
  sdma_transfer(storage.address + offset, dst, bytes, /*to_device=*/false);
}

void AmdDevice::sdma_transfer(uint64_t device_va, const void* host, size_t bytes, bool to_device) {
  // One registration at a time: two transfers of neighbouring host buffers may share a page, and the KFD refuses a
  // second USERPTR over it.
  std::lock_guard transfer(transfer_mutex_);
  if (transfer_done_ == nullptr) transfer_done_ = &new_signal("host transfer");
  AmdMemory pages;
  {
    std::lock_guard lock(memory_mutex_);
    pages = session_->register_host(host, bytes);
  }
  auto release = [&] {
    std::lock_guard lock(memory_mutex_);
    session_->free(pages);
  };
  const uint64_t host_va = reinterpret_cast<uintptr_t>(host);  // GPU VA = CPU VA for registered pages
  const uint64_t v = transfer_done_->value() + 1;
  HWQueue q;
  if (to_device) q.copy(reinterpret_cast<void*>(device_va), reinterpret_cast<const void*>(host_va), bytes);
  else q.copy(reinterpret_cast<void*>(host_va), reinterpret_cast<const void*>(device_va), bytes);
  try {
    q.signal(*transfer_done_, v).submit(*this);
    transfer_done_->wait(v);
  } catch (...) {
    release();  // a faulted copy queue reads nothing more; the pages go back to the host either way
    throw;
  }
  release();
  sdma_transfers_.fetch_add(1, std::memory_order_relaxed);
}

// ---- faults and time -----------------------------------------------------------------------------------------------

std::string AmdDevice::fault_report() const {
  std::lock_guard lock(fault_mutex_);
  if (!first_fault_.empty()) return first_fault_;
  const std::optional<kfd_hsa_memory_exception_data> f = session_->memory_fault();
  if (!f) return "";
  std::string kinds;
  auto add = [&](uint32_t set, const char* what) {
    if (set) kinds += std::string(kinds.empty() ? "" : ", ") + what;
  };
  add(f->failure.NotPresent, "page not present");
  add(f->failure.ReadOnly, "write to a read-only page");
  add(f->failure.NoExecute, "execute of a no-execute page");
  add(f->failure.imprecise, "imprecise address");
  first_fault_ = f->va == 0 ? "KFD memory exception without an address on GPU " + std::to_string(f->gpu_id) +
                                  " (a queue stopped; the driver's log says why)"
                            : "KFD memory exception at VA " + hex(f->va) + " on GPU " + std::to_string(f->gpu_id);
  if (!kinds.empty()) first_fault_ += " (" + kinds + ")";
  return first_fault_;
}

ClockCalibration AmdDevice::calibrate_clock(int tries) {
  if (tries < 1) throw std::invalid_argument("AMD: clock calibration with " + std::to_string(tries) + " tries; expected at least 1");
  std::lock_guard lock(clock_mutex_);
  std::vector<ClockSample> samples;
  for (int i = 0; i < tries; i++) {
    ClockSample s;
    s.host_before_ns = monotonic_ns();
    const ki::KfdClockCounters c = session_->clock_counters();
    s.host_after_ns = monotonic_ns();
    s.device_ns = static_cast<uint64_t>(static_cast<unsigned __int128>(c.gpu_clock_counter) * ns_per_tick_num_ / ns_per_tick_den_);
    samples.push_back(s);
  }
  clock_ = calibrate_from(samples, static_cast<int64_t>((ns_per_tick_num_ + ns_per_tick_den_ - 1) / ns_per_tick_den_));
  return *clock_;
}

ClockCalibration AmdDevice::clock_calibration() {
  {
    std::lock_guard lock(clock_mutex_);
    if (clock_) return *clock_;
  }
  return calibrate_clock();
}

int64_t AmdDevice::host_time_ns(uint64_t device_ns) { return clock_calibration().host_ns(device_ns); }

std::string AmdDevice::blockage() {
  std::string out;
  for (const QueueState* q : {compute_.get(), copy_.get()}) {
    const uint64_t done = q->progress->value(), sent = q->submissions.load();
    if (done < sent)
      out += std::string(out.empty() ? "" : "; ") + "the " + q->name + " queue completed " + std::to_string(done) + " of " +
             std::to_string(sent) + " submissions";
  }
  return out;
}

// ---- programs ------------------------------------------------------------------------------------------------------

std::shared_ptr<const LoadedProgram> AmdDevice::load(const UOp& program) {
  const ProgramInfo& info = program_info(program);
  if (!target_error_.empty()) throw std::invalid_argument("AMD: program " + info.name + " cannot be loaded: " + target_error_);
  if (info.target != target().name())
    throw std::invalid_argument("AMD: program " + info.name + " was compiled for " + info.target + "; expected " + target().name());
  const std::string& binary = program_binary(program);
  if (binary.empty()) throw std::invalid_argument("AMD: program " + info.name + " has no code object; expected one linked by ld.lld");
  const AmdCodeImage image = make_amd_code_image(binary, info.name);
  const size_t params = static_cast<size_t>(info.buffers) + info.vars.size();
  if (image.explicit_args.size() != params)
    throw std::invalid_argument("AMD: program " + info.name + "'s metadata lists " + std::to_string(image.explicit_args.size()) +
                                " explicit arguments; expected " + std::to_string(params) + " (its buffers and variables)");
  if (image.kd.uses_dynamic_stack())
    throw std::invalid_argument("AMD: program " + info.name + " uses a dynamic stack, whose scratch size its descriptor does not bound");
  if (image.kd.enable_private_segment()) ensure_scratch(image.kd.private_segment_fixed_size);
  // The base is the image's alignment (256 at least: the entry's); the sub-allocator aligns to 256, so a larger
  // alignment is reached by over-allocating.
  const uint64_t extra = image.alignment > 256 ? image.alignment : 0;
  const AmdMemory memory = alloc(image.bytes.size() + extra, AmdDomain::kVram);
  const uint64_t base = round_up(memory.va, image.alignment);
  std::memcpy(memory.cpu + (base - memory.va), image.bytes.data(), image.bytes.size());
  auto p = std::make_shared<AmdProgram>(info.name, name(), memory);
  p->kd = image.kd;
  p->kd_va = base + image.kd_offset;
  p->explicit_args = image.explicit_args;
  p->hidden_offset = image.hidden_offset;
  p->kernarg_size = image.kernarg_size;
  p->kernarg_alignment = image.kernarg_alignment;
  uint64_t bytes = std::max<uint64_t>(image.kernarg_size, image.hidden_offset ? *image.hidden_offset + 256 : 0);
  if (image.kd.enable_sgpr_dispatch_ptr()) {
    p->packet_offset = static_cast<uint32_t>(round_up(bytes, 64));
    bytes = *p->packet_offset + 64;
  }
  p->kernarg_bytes = static_cast<uint32_t>(std::max<uint64_t>(bytes, 8));
  // The dispatch's size depends on the descriptor only (its user SGPRs), not on the addresses: planned once here.
  LaunchAddresses probe;
  probe.kernarg_va = kernarg_memory_.va;
  probe.dispatch_packet_va = kernarg_memory_.va;
  if (p->kd.enable_private_segment()) {
    std::lock_guard lock(submit_mutex_);
    probe.scratch = {scratch_.va, scratch_waves_};
  }
  p->dispatch_dwords = dispatch_dwords(plan_dispatch(ip(), p->kd, p->kd_va, probe, {1, 1, 1}, {1, 1, 1}));
  return p;
}

void AmdDevice::ensure_scratch(uint32_t bytes_per_lane) {
  std::lock_guard lock(submit_mutex_);  // encode reads the store under it
  if (bytes_per_lane <= scratch_bytes_per_lane_ && scratch_.size != 0) return;
  // Every wave slot of the GPU may run a wave of this kernel: simd_count * max_waves_per_simd from the topology, a slice
  // each of 64 lanes (the widest wave) rounded to 1 KiB (the coarser TMPRING_SIZE.WAVESIZE unit, gc 9.4.3's). On
  // gc 11 TMPRING_SIZE.WAVES counts per shader engine (unverified: firmware-notes/amd-hcq.md §1), so the store holds
  // WAVES slices for each engine.
  const uint64_t slots = session_->node().property("simd_count") * session_->node().property("max_waves_per_simd");
  const uint64_t engines = ip() == GfxIp::kGc11_0 ? std::max<uint64_t>(1, session_->device_info().num_shader_engines) : 1;
  const uint32_t waves = static_cast<uint32_t>(std::clamp<uint64_t>((slots + engines - 1) / engines, 1, 0xFFF));
  const uint64_t wave_bytes = round_up(uint64_t{bytes_per_lane} * 64, 1024);
  const AmdMemory store = alloc(std::max<uint64_t>(wave_bytes * waves * engines, 256), AmdDomain::kVram);
  if (scratch_.size != 0) old_scratch_.push_back(scratch_);
  scratch_ = store;
  scratch_bytes_per_lane_ = bytes_per_lane;
  scratch_waves_ = waves;
}

const AmdProgram& AmdDevice::exec_program(const Command& c) const {
  if (c.program == nullptr) throw std::invalid_argument("AMD: exec of a CPU kernel; expected a program loaded on " + name());
  if (c.program->device() != name()) throw std::invalid_argument("AMD: program '" + c.program->name() + "' was loaded on " + c.program->device());
  const auto& p = static_cast<const AmdProgram&>(*c.program);
  if (c.buffers_count + c.scalars_count != p.explicit_args.size())
    throw std::invalid_argument("AMD: program '" + p.name() + "' takes " + std::to_string(p.explicit_args.size()) + " arguments, got " +
                                std::to_string(c.buffers_count) + " buffers and " + std::to_string(c.scalars_count) + " variables");
  return p;
}

// ---- encoding ------------------------------------------------------------------------------------------------------

AmdDevice::QueueState& AmdDevice::queue_for(std::span<const Command> commands) {
  bool copies = false, execs = false;
  for (const Command& c : commands) {
    copies |= c.kind == CommandKind::kCopy;
    execs |= c.kind == CommandKind::kExec;
  }
  if (copies && execs)
    throw std::invalid_argument("AMD: a queue with both exec and copy commands; kernels run on the compute queue and copies on the SDMA "
                                "queue: record them in two queues and order them with signals");
  return copies ? *copy_ : *compute_;
}

size_t AmdDevice::command_dwords(const Command& c, const QueueState& q) const {
  switch (c.kind) {
    case CommandKind::kExec:
      return exec_program(c).dispatch_dwords + kEventWriteDwords;
    case CommandKind::kCopy:
      if (q.pm4) throw std::logic_error("AMD: a copy on the compute queue");
      return sdma_copy_dwords(ip(), c.bytes);
    case CommandKind::kSignal:
      signal_address(c);
      return q.pm4 ? 3 * kReleaseMemDwords : kSdmaTimestampDwords + 3 * kSdmaFenceDwords + kSdmaTrapDwords;
    case CommandKind::kWait:
      signal_address(c);
      // POLL_REGMEM compares one 32-bit word (firmware-notes/amd-sdma.md). A target whose low word is 0 is exact on
      // the high word alone (v >= hi:0 iff v.hi >= hi); one below 2^32 is compared on the low word (exact while the
      // signal stays below 2^32). Both halves set would need hi > h OR (hi == h AND lo >= l): two polls cannot say OR.
      if (!q.pm4 && (c.value >> 32) != 0 && static_cast<uint32_t>(c.value) != 0)
        throw std::invalid_argument("AMD: a wait for signal '" + c.signal->name() + "' >= " + std::to_string(c.value) +
                                    " on the SDMA queue; its POLL_REGMEM compares one 32-bit word, so a target from 2^32 on "
                                    "must be a multiple of 2^32 there (or wait on the compute queue)");
      return q.pm4 ? kWaitRegMem64Dwords : kSdmaPollRegMemDwords;
    case CommandKind::kTimestamp:
      signal_address(c);
      return q.pm4 ? kReleaseMemDwords : kSdmaTimestampDwords;
    case CommandKind::kMemoryBarrier:
      // SDMA runs its packets one after another, each copy's writes done before the next packet: nothing to add.
      return q.pm4 ? kEventWriteDwords + acquire_mem_dwords(ip()) : 0;
  }
  return 0;
}

size_t AmdDevice::encoded_dwords(std::span<const Command> commands, const QueueState& q) const {
  size_t dwords = q.pm4 && has_exec(commands) ? acquire_mem_dwords(ip()) : 0;
  for (const Command& c : commands) dwords += command_dwords(c, q);
  if (!q.pm4) dwords = round_up(dwords, kSdmaIbGranule);
  return dwords;
}

void AmdDevice::encode_command(CmdStream& s, const Command& c, std::span<void* const> args, std::span<const int64_t> scalars,
                               const QueueState& q, const TakeKernargs& take, ExecSite* site) {
  const GfxIp gfx = ip();
  switch (c.kind) {
    case CommandKind::kExec: {
      const AmdProgram& p = exec_program(c);
      const UploadRing::Piece piece = take(p.kernarg_bytes, std::max<uint32_t>(64, p.kernarg_alignment));
      std::memset(piece.cpu, 0, p.kernarg_bytes);
      for (uint32_t i = 0; i < c.buffers_count + c.scalars_count; i++) {
        const AmdKernelArg& a = p.explicit_args[i];
        const uint64_t v = i < c.buffers_count ? reinterpret_cast<uintptr_t>(args[c.buffers_begin + i])
                                               : static_cast<uint64_t>(scalars[c.scalars_begin + (i - c.buffers_count)]);
        std::memcpy(piece.cpu + a.offset, &v, std::min<uint32_t>(a.size, 8));  // little-endian: the low bytes
      }
      const Dim3 grid{c.grid[0], c.grid[1], c.grid[2]}, block{c.block[0], c.block[1], c.block[2]};
      if (p.hidden_offset) write_implicit_kernargs(std::span<uint8_t>(piece.cpu + *p.hidden_offset, 256), grid, block);
      LaunchAddresses launch;
      launch.kernarg_va = piece.va;
      if (p.kd.enable_private_segment()) launch.scratch = {scratch_.va, scratch_waves_};
      launch.dispatch_id = ++dispatch_id_;
      if (p.packet_offset) {
        const std::array<uint8_t, 64> packet = dispatch_packet_bytes(p.kd, p.kd_va, piece.va, grid, block);
        std::memcpy(piece.cpu + *p.packet_offset, packet.data(), packet.size());
        launch.dispatch_packet_va = piece.va + *p.packet_offset;
      }
      if (site != nullptr) site->kernargs = piece.cpu;
      write_dispatch(s, gfx, plan_dispatch(gfx, p.kd, p.kd_va, launch, grid, block));
      // The CP starts the next dispatch without waiting for this one's waves (firmware-notes/amd-pm4.md): wait here,
      // so consecutive kernels run in order as they do on every other device.
      write_cs_partial_flush(s);
      break;
    }
    case CommandKind::kCopy:
      write_sdma_copy(s, gfx, reinterpret_cast<uintptr_t>(c.dst), reinterpret_cast<uintptr_t>(c.src), c.bytes);
      break;
    case CommandKind::kSignal: {
      const uint64_t at = signal_address(c);
      // The timestamp, the value, then the event's mailbox with the interrupt that wakes host waiters (the KFD fires
      // the event only when its mailbox was written).
      if (q.pm4) {
        write_release_mem(s, gfx, ReleaseData::kTimestamp64, at + 8, 0);
        write_release_mem(s, gfx, ReleaseData::kValue64, at, c.value);
        write_event_interrupt(s, q);
      } else {  // a 64-bit value is two 32-bit fences, the high word first (firmware-notes/amd-sdma.md)
        write_sdma_timestamp(s, at + 8);
        write_sdma_fence(s, gfx, at + 4, static_cast<uint32_t>(c.value >> 32));
        write_sdma_fence(s, gfx, at, static_cast<uint32_t>(c.value));
        write_event_interrupt(s, q);
      }
      break;
    }
    case CommandKind::kWait:
      if (q.pm4) write_wait_reg_mem64(s, signal_address(c), kFunctionGreaterEqual, c.value, ~uint64_t{0});
      else if ((c.value >> 32) != 0) write_sdma_poll_regmem(s, signal_address(c) + 4, kFunctionGreaterEqual, static_cast<uint32_t>(c.value >> 32), 0xFFFFFFFFu);
      else write_sdma_poll_regmem(s, signal_address(c), kFunctionGreaterEqual, static_cast<uint32_t>(c.value), 0xFFFFFFFFu);
      break;
    case CommandKind::kTimestamp:
      if (q.pm4) write_release_mem(s, gfx, ReleaseData::kTimestamp64, signal_address(c) + 8, 0);
      else write_sdma_timestamp(s, signal_address(c) + 8);
      break;
    case CommandKind::kMemoryBarrier:
      if (q.pm4) {
        write_cs_partial_flush(s);
        write_acquire_mem(s, gfx);
      }
      break;
  }
}

void AmdDevice::encode(CmdStream& s, std::span<const Command> commands, std::span<void* const> args, std::span<const int64_t> scalars,
                       const QueueState& q, const TakeKernargs& take, std::vector<uint32_t>* starts, std::vector<ExecSite>* sites) {
  // Kernels read what the host and the copy queue wrote since the last submission: invalidate the caches first (the
  // kernel's emit_mem_sync before an IB).
  if (q.pm4 && has_exec(commands)) write_acquire_mem(s, ip());
  for (size_t i = 0; i < commands.size(); i++) {
    if (starts != nullptr) (*starts)[i] = static_cast<uint32_t>(s.size());
    encode_command(s, commands[i], args, scalars, q, take, sites != nullptr ? &(*sites)[i] : nullptr);
  }
  if (!q.pm4) write_sdma_nops(s, round_up(s.size(), kSdmaIbGranule) - s.size());
}

void AmdDevice::write_event_interrupt(CmdStream& s, const QueueState& q) const {
  const uint32_t event = session_->signal_event_id();
  if (q.pm4) {
    write_release_mem(s, ip(), ReleaseData::kLow32, session_->signal_event_mailbox(), event, ReleaseInterrupt::kAfterWriteConfirm, event);
  } else {
    write_sdma_fence(s, ip(), session_->signal_event_mailbox(), event);
    write_sdma_trap(s, event);
  }
}

void AmdDevice::kick(QueueState& q, uint64_t ib_va, uint32_t ib_dwords) {
  const uint64_t count = q.submissions + 1;
  // The slot of submission `count` was last used by submission count - slots, whose progress release is not its last
  // packet: the engine may still read that slot's tail (and its read pointer lags) when the release lands. Once the
  // next submission released too, the engine has left the slot: the ring holds slots - 1 submissions in flight.
  if (count + 1 > q.slots) q.progress->wait(count + 1 - q.slots);
  AmdUserQueue& uq = *q.queue;
  const uint64_t slot = (count - q.base - 1) % q.slots;
  CmdStream s(std::span<uint32_t>(reinterpret_cast<uint32_t*>(uq.ring.cpu) + slot * q.slot_dwords, q.slot_dwords));
  const uint64_t progress = q.progress->device_address();
  if (q.pm4) {
    if (ib_dwords != 0) write_indirect_buffer(s, ib_va, ib_dwords);
    else write_pm4_nop(s, kIndirectBufferDwords);
    write_release_mem(s, ip(), ReleaseData::kValue64, progress, count);
    write_event_interrupt(s, q);
    write_pm4_nop(s, kPm4SlotDwords - kIndirectBufferDwords - 2 * kReleaseMemDwords);
  } else {
    write_sdma_nops(s, 2);
    if (ib_dwords != 0) write_sdma_indirect(s, ib_va, ib_dwords);
    else write_sdma_nops(s, kSdmaIndirectDwords);
    write_sdma_fence(s, ip(), progress + 4, static_cast<uint32_t>(count >> 32));
    write_sdma_fence(s, ip(), progress, static_cast<uint32_t>(count));
    write_event_interrupt(s, q);
    write_sdma_nops(s, kSdmaSlotDwords - s.size());
  }
  if (s.size() != q.slot_dwords)
    throw std::logic_error("AMD: the " + q.name + " queue's ring slot holds " + std::to_string(q.slot_dwords) + " dwords and " +
                           std::to_string(s.size()) + " were written");
  q.submissions = count;
  // The write pointer counts dwords on a PM4 queue and bytes on an SDMA queue, and only grows
  // (firmware-notes/amd-hcq.md §1). The IB and the slot before *wptr, *wptr before the doorbell.
  const uint64_t wptr = (count - q.base) * q.slot_dwords * (q.pm4 ? 1 : 4);
  std::atomic_thread_fence(std::memory_order_seq_cst);
  std::atomic_ref<uint64_t>(*const_cast<uint64_t*>(uq.wptr)).store(wptr, std::memory_order_release);
  std::atomic_thread_fence(std::memory_order_seq_cst);
  std::atomic_ref<uint64_t>(*const_cast<uint64_t*>(uq.doorbell)).store(wptr, std::memory_order_release);
}

void AmdDevice::recover_if_faulted_locked() {
  {
    std::lock_guard lock(fault_mutex_);
    if (first_fault_.empty()) return;
  }
  session_->rebuild_after_fault();
  for (QueueState* q : {compute_.get(), copy_.get()}) {
    q->base = q->submissions;
    q->slots = q->queue->ring.size / (4 * q->slot_dwords);
    // What was queued before the fault is abandoned: counted as done, so the ring pieces and retired memory it held
    // are reused and freed, and a bound queue may be patched again.
    if (q->progress->value() < q->submissions) q->progress->set(q->submissions);
  }
  std::lock_guard lock(fault_mutex_);
  recovered_faults_++;
  first_fault_.clear();
}

void AmdDevice::submit(const HWQueue& queue) {
  std::lock_guard lock(submit_mutex_);
  recover_if_faulted_locked();
  QueueState& q = queue_for(queue.commands());
  const size_t dwords = encoded_dwords(queue.commands(), q);
  auto wait = [&q](uint64_t count) { q.progress->wait(count); };
  TakeKernargs take = [&](uint64_t bytes, uint64_t align) {
    return kernargs_->take(bytes, align, [&](uint64_t count) { compute_->progress->wait(count); });
  };
  uint64_t ib_va = 0;
  if (dwords != 0) {
    const UploadRing::Piece piece = q.ibs->take(dwords * 4, 256, wait);
    CmdStream s(std::span<uint32_t>(reinterpret_cast<uint32_t*>(piece.cpu), dwords));
    encode(s, queue.commands(), queue.buffers(), queue.scalars(), q, take, nullptr, nullptr);
    if (s.size() != dwords)
      throw std::logic_error("AMD: a " + q.name + " submission declared " + std::to_string(dwords) + " dwords and wrote " + std::to_string(s.size()));
    ib_va = piece.va;
  }
  kick(q, ib_va, static_cast<uint32_t>(dwords));
  q.ibs->close(q.submissions);
  if (&q == compute_.get()) kernargs_->close(compute_->submissions);
}

// ---- bound queues --------------------------------------------------------------------------------------------------

namespace {

// A queue bound into device memory: its IB and kernel arguments, encoded once, and where each command starts in the
// IB. A patch re-encodes the one command into scratch words with the same writer and rewrites those that differ (or
// an exec's argument bytes), once the GPU is done with the previous run.
struct AmdBoundQueue : GpuBoundQueue {
  AmdMemory ib{}, kernargs{};
  uint32_t dwords = 0;
  AmdDevice::QueueState* queue = nullptr;
  std::vector<uint32_t> starts;
  std::vector<uint8_t*> exec_kernargs;
  std::function<std::vector<uint32_t>(const Command&)> reencode;  // one signal, wait or copy command's words
  AmdDevice* device = nullptr;
  ~AmdBoundQueue() override {
    if (device_life == nullptr || !device_life->alive.load(std::memory_order_acquire)) return;
    try {  // retired by the device until the GPU is done with them
      device->free(ib);
      if (kernargs.size) device->free(kernargs);
    } catch (const std::exception&) {
    }
  }

  // Writes the dwords of `fresh` that differ from those at dword `at` of the IB; returns how many.
  size_t rewrite(uint32_t at, const std::vector<uint32_t>& fresh) {
    size_t words = 0;
    auto* p = reinterpret_cast<uint32_t*>(ib.cpu) + at;
    for (size_t i = 0; i < fresh.size(); i++) {
      std::atomic_ref<uint32_t> word(p[i]);
      if (word.load(std::memory_order_relaxed) == fresh[i]) continue;
      word.store(fresh[i], std::memory_order_relaxed);
      words++;
    }
    return words;
  }
  // An argument's bytes (its size, up to 8) in the kernarg segment, counted in the 32-bit words that changed.
  size_t rewrite_arg(size_t command, size_t index, uint64_t value) {
    const auto& p = static_cast<const AmdProgram&>(*commands[command].program);
    const AmdKernelArg& a = p.explicit_args[index];
    uint8_t* at = exec_kernargs[command] + a.offset;
    size_t words = 0;
    for (uint32_t off = 0; off < std::min<uint32_t>(a.size, 8); off += 4) {
      uint32_t v = 0, old = 0;
      const uint32_t n = std::min<uint32_t>(4, a.size - off);
      std::memcpy(&v, reinterpret_cast<const uint8_t*>(&value) + off, n);
      std::memcpy(&old, at + off, n);
      if (v == old) continue;
      std::memcpy(at + off, &v, n);
      words++;
    }
    return words;
  }

  size_t patch_value(size_t command, uint64_t value) override {
    wait_for_previous_run("patch_value");
    BoundQueue::patch_value(command, value);
    return rewrite(starts[command], reencode(commands[command]));
  }
  size_t patch_buffer(size_t command, size_t slot, void* buffer) override {
    wait_for_previous_run("patch_buffer");
    BoundQueue::patch_buffer(command, slot, buffer);
    return rewrite_arg(command, slot, reinterpret_cast<uintptr_t>(buffer));
  }
  size_t patch_scalar(size_t command, size_t slot, int64_t value) override {
    wait_for_previous_run("patch_scalar");
    BoundQueue::patch_scalar(command, slot, value);
    return rewrite_arg(command, commands[command].buffers_count + slot, static_cast<uint64_t>(value));
  }
  size_t patch_copy(size_t command, void* dst, const void* src) override {
    wait_for_previous_run("patch_copy");
    Command c = commands[command];
    c.dst = dst;
    c.src = src;
    const std::vector<uint32_t> fresh = reencode(c);  // throws for addresses the engine cannot take, before any write
    BoundQueue::patch_copy(command, dst, src);
    return rewrite(starts[command], fresh);
  }
};

}  // namespace

std::shared_ptr<BoundQueue> AmdDevice::bind(const HWQueue& queue) {
  std::lock_guard lock(submit_mutex_);
  recover_if_faulted_locked();
  auto b = std::make_shared<AmdBoundQueue>();
  b->device = this;
  b->device_life = life();
  b->queue = &queue_for(queue.commands());
  b->progress = b->queue->progress;
  b->commands.assign(queue.commands().begin(), queue.commands().end());
  b->buffers.assign(queue.buffers().begin(), queue.buffers().end());
  b->scalars.assign(queue.scalars().begin(), queue.scalars().end());
  const size_t dwords = encoded_dwords(b->commands, *b->queue);
  uint64_t kernarg_bytes = 0;
  for (const Command& c : b->commands)
    if (c.kind == CommandKind::kExec) {
      const AmdProgram& p = exec_program(c);
      kernarg_bytes += round_up(p.kernarg_bytes, 64) + std::max<uint32_t>(64, p.kernarg_alignment);
    }
  if (kernarg_bytes) b->kernargs = alloc(kernarg_bytes, AmdDomain::kGttUncached);
  b->ib = alloc(std::max<uint64_t>(dwords * 4, 4), AmdDomain::kGttUncached);
  b->dwords = static_cast<uint32_t>(dwords);
  b->starts.assign(b->commands.size(), 0);
  b->exec_kernargs.assign(b->commands.size(), nullptr);
  QueueState* q = b->queue;
  AmdBoundQueue* raw = b.get();
  b->reencode = [this, q, raw](const Command& c) {
    CmdStream s(command_dwords(c, *q));
    encode_command(s, c, raw->buffers, raw->scalars, *q, [](uint64_t, uint64_t) -> UploadRing::Piece {
      throw std::logic_error("AMD: a bound queue's patch re-encoded an exec");
    }, nullptr);
    return std::vector<uint32_t>(s.words().begin(), s.words().end());
  };
  if (dwords != 0) {
    uint64_t used = 0;
    TakeKernargs take = [&](uint64_t bytes, uint64_t align) {
      used = round_up(used, align);
      UploadRing::Piece p{b->kernargs.cpu + used, b->kernargs.va + used};
      used += bytes;
      return p;
    };
    std::vector<ExecSite> sites(b->commands.size());
    CmdStream s(std::span<uint32_t>(reinterpret_cast<uint32_t*>(b->ib.cpu), dwords));
    encode(s, b->commands, b->buffers, b->scalars, *q, take, &b->starts, &sites);
    if (s.size() != dwords) throw std::logic_error("AMD: a bound queue declared " + std::to_string(dwords) + " dwords and wrote " + std::to_string(s.size()));
    for (size_t i = 0; i < sites.size(); i++) b->exec_kernargs[i] = sites[i].kernargs;
  }
  return b;
}

AmdDevice::BoundMemory AmdDevice::bound_memory(const BoundQueue& queue) const {
  const auto* b = dynamic_cast<const AmdBoundQueue*>(&queue);
  if (b == nullptr || b->device != this) throw std::invalid_argument("AMD: bound_memory of a queue bound to another device");
  return {b->ib, b->kernargs, b->dwords};
}

void AmdDevice::submit_bound(std::shared_ptr<const BoundQueue> queue) {
  std::lock_guard lock(submit_mutex_);
  auto* b = const_cast<AmdBoundQueue*>(dynamic_cast<const AmdBoundQueue*>(queue.get()));
  if (b == nullptr || b->device != this) throw std::invalid_argument("AMD: submit_bound of a queue bound to another device");
  recover_if_faulted_locked();
  kick(*b->queue, b->ib.va, b->dwords);
  b->queue->ibs->close(b->queue->submissions);  // nothing taken: keeps the ring's submission counts in step
  b->last_submission.store(b->queue->submissions, std::memory_order_release);
}

}  // namespace doorbell::amd
