#include "hcq/nv/nv_device.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstring>
#include <stdexcept>
#include <thread>

#include "compiler/gpu/cubin_reader.h"
#include "compiler/gpu/ptx_target.h"
#include "compiler/program.h"
#include "hcq/nv/gpfifo.h"
#include "hcq/nv/nv_classes.h"
#include "hcq/nv/nv_commands.h"
#include "hcq/nv/qmd.h"
#include "hcq/wait_primitives.h"
#include "kernel-interface/driver_seams.h"
#include "kernel-interface/nvidia/mmu_fault_info.h"

namespace doorbell::nv {
namespace {

constexpr uint64_t kSignalSlot = 32;                 // value, timestamp, timestamp-command payload, second timestamp
constexpr uint64_t kSignalPoolBytes = 64 * 1024;     // 2048 signals
constexpr uint64_t kPushbufferRingBytes = 4 << 20;   // per channel
constexpr uint64_t kKernargRingBytes = 16 << 20;
// tinygrad's shader windows (tinygrad-hcq.md §3.7) and the driver words sm_8x/sm_90 code reads from cbuf0
// (nv-hopper.md §2.5): shared window at words 6-7, local window at 8-9, 0xfffdc0 at 10-11.
constexpr uint64_t kSharedWindow = 0x729400000000;
constexpr uint64_t kLocalWindow = 0x729300000000;

uint64_t round_up(uint64_t v, uint64_t to) { return (v + to - 1) / to * to; }

// The smallest SM shared memory carveout (32, 64 or 100 KiB) that holds `bytes` (tinygrad-hcq.md §3.7).
uint32_t carveout_for(uint32_t bytes) {
  for (uint32_t kib : {32u, 64u, 100u})
    if (kib * 1024 >= bytes) return kib * 1024;
  throw std::invalid_argument("NV: " + std::to_string(bytes) + " bytes of shared memory exceed the 100 KiB carveout");
}

}  // namespace

template <class Wait>
UploadRing::Piece UploadRing::take(uint64_t bytes, uint64_t align, Wait&& wait) {
  const uint64_t size = memory_.size;
  if (bytes > size) throw std::invalid_argument("NV: " + std::to_string(bytes) + " bytes do not fit the " + what_ + " of " + std::to_string(size));
  uint64_t pos = round_up(head_, align);
  if (pos / size != (pos + bytes - 1) / size) pos = round_up(pos, size);  // never straddle the end
  while (pos + bytes > completed_end_ + size) {
    if (pending_.empty()) throw std::logic_error("NV: the " + what_ + " is full of the submission being recorded");
    wait(pending_.front().second);
    completed_end_ = pending_.front().first;
    pending_.pop_front();
  }
  head_ = pos + bytes;
  return {memory_.cpu + pos % size, memory_.va + pos % size};
}

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
  kernargs_.emplace(kernarg_memory_, "kernel argument ring");
  create_timeline_signal();
  auto make = [&](NvChannel& c, const char* name) {
    auto s = std::make_unique<ChannelState>();
    s->channel = &c;
    s->name = name;
    s->pushbuffer_memory = session_->alloc(kPushbufferRingBytes, true);
    s->pushbuffers.emplace(s->pushbuffer_memory, std::string(name) + " pushbuffer ring");
    s->progress = &new_signal(std::string(name) + " progress");
    return s;
  };
  compute_ = make(session_->compute(), "compute");
  copy_ = make(session_->copy(), "copy");
  // Bind the engine classes to their subchannels once (SET_OBJECT), as every driver does at channel setup.
  kick(*compute_, encode_set_object(kSubchannelCompute, session_->classes().compute));
  kick(*copy_, encode_set_object(kSubchannelCopy, session_->classes().copy));
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

NvMemory NvDevice::alloc(uint64_t size, bool system_memory) {
  std::lock_guard lock(memory_mutex_);
  free_retired_locked();
  return session_->alloc(size, system_memory);
}

Device::Storage NvDevice::allocate_storage(size_t bytes) {
  std::lock_guard lock(memory_mutex_);
  free_retired_locked();
  NvMemory m = session_->alloc(bytes, /*system_memory=*/emulated());
  std::memset(m.cpu, 0, bytes);
  storage_[m.handle] = m;
  return Storage{m.cpu, m.va, m.handle};
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
    if (earlier.memory.handle == memory.handle)
      throw std::invalid_argument("NV: free of memory handle " + std::to_string(memory.handle) + " that was already freed");
  if (!session_->owns(memory))
    throw std::invalid_argument("NV: free of memory handle " + std::to_string(memory.handle) + " that this device did not allocate");
  retired_.push_back(r);
  free_retired_locked();
}

void NvDevice::free_retired_locked() {
  if (retired_.empty()) return;
  const uint64_t compute_done = compute_->progress->value(), copy_done = copy_->progress->value();
  std::erase_if(retired_, [&](const Retired& r) {
    if (compute_done < r.compute_submissions || copy_done < r.copy_submissions) return false;
    session_->free(r.memory);
    return true;
  });
}

size_t NvDevice::retired_count() {
  std::lock_guard lock(memory_mutex_);
  free_retired_locked();
  return retired_.size();
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
  std::string image;
  uint32_t registers = 0, shared = static_cast<uint32_t>(info.shared_bytes), param_offset = kSm90ParamOffset, constant0 = 0;
  const uint32_t params = static_cast<uint32_t>(info.buffers + static_cast<int64_t>(info.vars.size()));
  if (emulated()) {
    image = program_source(program);  // the emulated SM interprets the PTX itself (mockgpu/nv/ptx_sm.h)
    image.push_back('\0');
  } else {
    const std::string& binary = program_binary(program);
    if (binary.empty()) throw std::invalid_argument("NV: program " + info.name + " has no cubin; expected one assembled by ptxas");
    Cubin cubin = read_cubin(binary);
    const CubinKernel& k = cubin.kernel(info.name);
    // What this loader does not set up yet: say so rather than launch code that would fault.
    if (k.min_stack_size > 0 || k.frame_size > 0)
      throw std::runtime_error("NV: kernel '" + info.name + "' needs " + std::to_string(std::max(k.min_stack_size, k.frame_size)) +
                               " bytes of local memory per thread; shader local memory is not set up yet");
    for (const CubinRelocation& rel : cubin.relocations)
      if (rel.target == ".text." + info.name)
        throw std::runtime_error("NV: kernel '" + info.name + "' has relocations in its code (" + rel.section + "); the loader applies none yet");
    image = binary.substr(k.text_offset, k.text_size);
    registers = static_cast<uint32_t>(std::max(k.registers, 1));
    shared = static_cast<uint32_t>(k.shared_bytes);
    if (k.param_cbank_size != 0 || k.param_cbank_offset != 0) param_offset = k.param_cbank_offset;
    constant0 = static_cast<uint32_t>(k.constant0_size);
  }
  NvMemory memory = alloc(image.size(), /*system_memory=*/false);
  std::memcpy(memory.cpu, image.data(), image.size());
  auto p = std::make_shared<NvProgram>(info.name, this->name(), memory);
  p->code_address = memory.va;
  p->code_bytes = static_cast<uint32_t>(image.size());
  p->registers = registers;
  p->shared_bytes = shared;
  p->param_offset = param_offset;
  p->param_count = params;
  p->constant0_bytes = std::max<uint32_t>(constant0, param_offset + 8 * params);
  return p;
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

template <class Take>
void NvDevice::encode(std::span<const Command> commands, std::span<void* const> args, std::span<const int64_t> scalars, ChannelState& ch,
                      std::vector<uint32_t>& words, Take&& take_kernargs) {
  auto append = [&](const std::vector<uint32_t>& w) { words.insert(words.end(), w.begin(), w.end()); };
  // The previous exec's QMD while nothing separates it from the next one: the next is chained to it.
  std::optional<std::pair<QmdLaunch, uint8_t*>> previous;
  for (const Command& c : commands) {
    switch (c.kind) {
      case CommandKind::kExec: {
        if (c.program == nullptr) throw std::invalid_argument("NV: exec of a CPU kernel; expected a program loaded on NV");
        if (c.program->device() != name())
          throw std::invalid_argument("NV: program '" + c.program->name() + "' was loaded on " + c.program->device());
        const auto& p = static_cast<const NvProgram&>(*c.program);
        if (c.buffers_count + c.scalars_count != p.param_count)
          throw std::invalid_argument("NV: program '" + p.name() + "' takes " + std::to_string(p.param_count) + " parameters, got " +
                                      std::to_string(c.buffers_count) + " buffers and " + std::to_string(c.scalars_count) + " variables");
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
        q.sass_version = ((session_->gpu_arch() >> 4) & 0xf0) | (session_->gpu_arch() & 0xf);
        uint8_t* qmd_cpu = piece.cpu + qmd_at;
        const std::vector<uint32_t> qmd = encode_qmd(compute_class, q);  // V04 on Hopper, V03 on Ampere/Ada
        std::memcpy(qmd_cpu, qmd.data(), qmd.size() * 4);
        if (previous) {  // chain: the previous grid schedules this one when it completes (tinygrad's QMD chaining)
          previous->first.dependent_qmd_address = piece.va + qmd_at;
          const std::vector<uint32_t> prev = encode_qmd(compute_class, previous->first);
          std::memcpy(previous->second, prev.data(), prev.size() * 4);
        } else {
          append(encode_compute_launch(piece.va + qmd_at, PcasAction::kInvalidateCopySchedule));
        }
        previous = std::make_pair(q, qmd_cpu);
        break;
      }
      case CommandKind::kCopy:
        append(encode_copy_linear(session_->classes().copy, reinterpret_cast<uintptr_t>(c.dst), reinterpret_cast<uintptr_t>(c.src), c.bytes));
        previous.reset();
        break;
      case CommandKind::kSignal:
        append(encode_semaphore_release(session_->classes().gpfifo, signal_address(c), c.value, /*with_timestamp=*/true));
        previous.reset();
        break;
      case CommandKind::kWait:
        append(encode_semaphore_acquire_geq(session_->classes().gpfifo, signal_address(c), c.value));
        previous.reset();
        break;
      case CommandKind::kTimestamp:
        append(encode_semaphore_release(session_->classes().gpfifo, signal_address(c) + 16, 0, /*with_timestamp=*/true));
        previous.reset();
        break;
      case CommandKind::kMemoryBarrier:
        append(&ch == compute_.get() ? encode_invalidate_shader_caches() : encode_host_sys_membar());
        previous.reset();
        break;
    }
  }
}

void NvDevice::kick(ChannelState& ch, const std::vector<uint32_t>& words, const NvMemory* bound, uint32_t bound_words) {
  auto wait = [&](uint64_t count) { ch.progress->wait(count); };
  const uint64_t count = ++ch.submissions;
  const auto release = encode_semaphore_release(session_->classes().gpfifo, ch.progress->device_address(), count, false);
  const size_t total = words.size() + release.size();
  UploadRing::Piece pb = ch.pushbuffers->take(total * 4, 4, wait);
  if (!words.empty()) std::memcpy(pb.cpu, words.data(), words.size() * 4);  // a bound queue's kick brings none
  std::memcpy(pb.cpu + words.size() * 4, release.data(), release.size() * 4);
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
  if (bound != nullptr) {
    c.ring[ch.put] = encode_gpfifo_entry({bound->va, bound_words, true, false});
    ch.put = (ch.put + 1) % c.ring_entries;
  }
  c.ring[ch.put] = encode_gpfifo_entry({pb.va, static_cast<uint32_t>(total), true, false});
  ch.put = (ch.put + 1) % c.ring_entries;
  std::atomic_thread_fence(std::memory_order_seq_cst);  // entries and pushbuffer before GPPut and the doorbell
  for (const SubmitWrite& w : gpfifo_submit_writes(ch.put, c.ring_entries, c.token)) {
    if (w.region == SubmitRegion::kUserd) {
      std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(c.userd + w.offset)).store(w.value, std::memory_order_release);
    } else {
      *session_->doorbell() = w.value;  // the usermode register: uncached MMIO on hardware
    }
  }
}

void NvDevice::submit(const HWQueue& queue) {
  std::lock_guard lock(submit_mutex_);
  ChannelState& ch = channel_for(queue.commands());
  std::vector<uint32_t> words;
  auto take = [&](uint64_t bytes, uint64_t align) {
    return kernargs_->take(bytes, align, [&](uint64_t count) { compute_->progress->wait(count); });
  };
  encode(queue.commands(), queue.buffers(), queue.scalars(), ch, words, take);
  // What it took belongs to the submission about to be kicked (only compute queues take kernel arguments).
  if (&ch == compute_.get()) kernargs_->close(compute_->submissions + 1);
  kick(ch, words);
}

namespace {

// A queue bound into device memory: its pushbuffer and kernel arguments, encoded once, and the commands they were
// encoded from (a patch changes the commands; submit_bound re-encodes into the same memory then).
struct NvBoundQueue : BoundQueue {
  NvMemory pushbuffer{}, kernargs{};
  uint32_t words = 0;
  NvDevice::ChannelState* channel = nullptr;
  std::vector<Command> encoded_commands;
  std::vector<void*> encoded_buffers;
  std::vector<int64_t> encoded_scalars;
  uint64_t last_submission = 0;
  NvDevice* device = nullptr;
  // The queue may outlive its device (HWQueue holds this, not the device): then the device's teardown already freed
  // the pushbuffer and kernel arguments with everything else, and `device` must not be touched.
  std::shared_ptr<const DeviceLife> device_life;
  ~NvBoundQueue() override {
    if (device_life == nullptr || !device_life->alive.load(std::memory_order_acquire)) return;
    try {  // retired by the device until the GPU is done with them: a submission may still be running from them
      device->free(pushbuffer);
      if (kernargs.size) device->free(kernargs);
    } catch (const std::exception&) {
    }
  }
};

bool same_commands(const std::vector<Command>& a, std::span<const Command> b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(Command)) == 0;
}

}  // namespace

std::vector<uint32_t> NvDevice::encode_bound(std::span<const Command> commands, std::span<void* const> args,
                                             std::span<const int64_t> scalars, ChannelState& ch,
                                             const NvMemory& kernargs) {
  std::vector<uint32_t> words;
  uint64_t used = 0;
  auto take = [&](uint64_t bytes, uint64_t align) {
    used = round_up(used, align);
    UploadRing::Piece p{kernargs.cpu + used, kernargs.va + used};
    used += bytes;
    return p;
  };
  encode(commands, args, scalars, ch, words, take);
  return words;
}

std::shared_ptr<BoundQueue> NvDevice::bind(const HWQueue& queue) {
  std::lock_guard lock(submit_mutex_);
  auto b = std::make_shared<NvBoundQueue>();
  b->device = this;
  b->device_life = life();
  b->channel = &channel_for(queue.commands());
  b->commands.assign(queue.commands().begin(), queue.commands().end());
  b->buffers.assign(queue.buffers().begin(), queue.buffers().end());
  b->scalars.assign(queue.scalars().begin(), queue.scalars().end());
  uint64_t kernarg_bytes = 0;
  for (const Command& c : b->commands)
    if (c.kind == CommandKind::kExec && c.program != nullptr)
      kernarg_bytes += round_up(round_up(static_cast<const NvProgram*>(c.program)->constant0_bytes, 64), kQmdAlignment) +
                       qmd_words(session_->classes().compute) * 4 + kQmdAlignment;
  if (kernarg_bytes) b->kernargs = alloc(kernarg_bytes, true);
  std::vector<uint32_t> words = encode_bound(b->commands, b->buffers, b->scalars, *b->channel, b->kernargs);
  b->pushbuffer = alloc(std::max<uint64_t>(words.size() * 4, 4), true);
  std::memcpy(b->pushbuffer.cpu, words.data(), words.size() * 4);
  b->words = static_cast<uint32_t>(words.size());
  b->encoded_commands = b->commands;
  b->encoded_buffers = b->buffers;
  b->encoded_scalars = b->scalars;
  return b;
}

void NvDevice::submit_bound(std::shared_ptr<const BoundQueue> queue) {
  std::lock_guard lock(submit_mutex_);
  auto* b = const_cast<NvBoundQueue*>(dynamic_cast<const NvBoundQueue*>(queue.get()));
  if (b == nullptr || b->device != this) throw std::invalid_argument("NV: submit_bound of a queue bound to another device");
  if (!same_commands(b->encoded_commands, b->commands) || b->encoded_buffers != b->buffers || b->encoded_scalars != b->scalars) {
    // Patched since it was encoded: rewrite the words in place once the GPU is done with the previous run.
    b->channel->progress->wait(b->last_submission);
    std::vector<uint32_t> words = encode_bound(b->commands, b->buffers, b->scalars, *b->channel, b->kernargs);
    if (words.size() != b->words) throw std::logic_error("NV: a patched bound queue encoded to a different length");
    std::memcpy(b->pushbuffer.cpu, words.data(), words.size() * 4);
    b->encoded_commands = b->commands;
    b->encoded_buffers = b->buffers;
    b->encoded_scalars = b->scalars;
  }
  kick(*b->channel, {}, &b->pushbuffer, b->words);
  b->last_submission = b->channel->submissions;
}

}  // namespace doorbell::nv
