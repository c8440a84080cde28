// The compute class (clcbc0.h HOPPER_COMPUTE_A; clc7c0.h / clc9c0.h): setup methods, SEND_PCAS_A +
// SEND_SIGNALING_PCAS2_B, and the QMD launch: PTX program image, cbuf0 parameters, grid, releases, dependent QMD.
#include <algorithm>
#include <cstring>
#include <functional>

#include "kernel-interface/nvidia/mmu_fault_info.h"
#include "mockgpu/nv/mock_gpu_channel.h"
#include "mockgpu/nv/ptx_parser.h"
#include "mockgpu/nv/ptx_sm.h"

namespace doorbell::mockgpu::nv::cp {

using namespace hw;

namespace {

constexpr uint32_t kMaxQmdChain = 1u << 20;     // dependent QMDs followed from one launch before it is a fault
constexpr size_t kMaxProgramBytes = 64u << 20;  // PTX text longer than this has lost its NUL

// Global memory for the SM over the GPU's address space; mapped_range hands out whole mappings so the interpreter
// translates once per buffer, not once per access.
class GpuGlobalMemory final : public GlobalMemory {
 public:
  explicit GpuGlobalMemory(GpuMemory& memory) : memory_(memory), mappings_(memory.mappings()) {
    std::sort(mappings_.begin(), mappings_.end(),
              [](const GpuMemory::Mapping& a, const GpuMemory::Mapping& b) { return a.va < b.va; });
  }
  uint8_t* translate(uint64_t va, size_t bytes) override { return memory_.translate(va, bytes); }
  Range mapped_range(uint64_t va, size_t bytes) override {
    auto it = std::upper_bound(mappings_.begin(), mappings_.end(), va,
                               [](uint64_t v, const GpuMemory::Mapping& m) { return v < m.va; });
    if (it != mappings_.begin()) {
      const GpuMemory::Mapping& m = *std::prev(it);
      if (va - m.va < m.size && m.size - (va - m.va) >= bytes) return {m.va, m.size, m.host};
    }
    return {va, bytes, translate(va, bytes)};  // throws naming the address
  }

 private:
  GpuMemory& memory_;
  std::vector<GpuMemory::Mapping> mappings_;
};

}  // namespace

void ChannelExecutor::require_fits(uint32_t data, Field f) {
  if (!fits(data, f)) {
    fail(std::string("bits above ") + f.name + " " + std::to_string(f.hi) + ":" + std::to_string(f.lo) + " are set");
  }
}

namespace {

// Bits of ChannelState::shader_memory_written, one per setup method a launch may depend on.
enum ShaderMemoryMethod : uint32_t {
  kSharedWindowA = 1u << 0,
  kSharedWindowB = 1u << 1,
  kLocalWindowA = 1u << 2,
  kLocalWindowB = 1u << 3,
  kLocalMemoryA = 1u << 4,
  kLocalMemoryB = 1u << 5,
  kLocalMemorySizeA = 1u << 6,
  kLocalMemorySizeB = 1u << 7,
};
constexpr uint32_t kWindows = kSharedWindowA | kSharedWindowB | kLocalWindowA | kLocalWindowB;
constexpr uint32_t kLocalMemory = kLocalMemoryA | kLocalMemoryB | kLocalMemorySizeA | kLocalMemorySizeB;
// NVK: "shared memory window needs 4GB alignment on hopper+" (nvk_cmd_dispatch.c, nvk_push_dispatch_state_init).
constexpr uint64_t kHopperSharedWindowAlignment = uint64_t{1} << 32;

}  // namespace

void ChannelExecutor::note_shader_memory_method(uint32_t method) {
  switch (method) {
    case NVCBC0_SET_SHADER_SHARED_MEMORY_WINDOW_A: ch_.shader_memory_written |= kSharedWindowA; return;
    case NVCBC0_SET_SHADER_SHARED_MEMORY_WINDOW_B: ch_.shader_memory_written |= kSharedWindowB; return;
    case NVCBC0_SET_SHADER_LOCAL_MEMORY_WINDOW_A: ch_.shader_memory_written |= kLocalWindowA; return;
    case NVCBC0_SET_SHADER_LOCAL_MEMORY_WINDOW_B: ch_.shader_memory_written |= kLocalWindowB; return;
    case NVCBC0_SET_SHADER_LOCAL_MEMORY_A: ch_.shader_memory_written |= kLocalMemoryA; return;
    case NVCBC0_SET_SHADER_LOCAL_MEMORY_B: ch_.shader_memory_written |= kLocalMemoryB; return;
    case NVCBC0_SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_A: ch_.shader_memory_written |= kLocalMemorySizeA; return;
    case NVCBC0_SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_B: ch_.shader_memory_written |= kLocalMemorySizeB; return;
    default: return;
  }
}

// What a grid's shared and local memory accesses go through: the generic-address windows (an unset window sits "in a
// random place", NVK) and, for local memory, the backing store sized per TPC (clcbc0.h:459-468, 583-587).
void ChannelExecutor::require_shader_memory(uint32_t cls, const Qmd& q, const std::string& where) {
  const uint64_t local_per_thread = uint64_t{q.shader_local_memory_low_size} + q.shader_local_memory_high_size;
  local_memory_base_ = 0;
  if (q.shared_memory_size == 0 && local_per_thread == 0) return;
  uint32_t sub = 0;  // the subchannel the compute class is bound to (the launch came through it)
  while (sub + 1 < kSubchannels && ch_.bound[sub] != cls) ++sub;
  auto reg64 = [&](uint32_t method_a) { return uint64_t{ch_.reg(sub, method_a)} << 32 | ch_.reg(sub, method_a + 4); };
  const std::string uses = q.shared_memory_size > 0
                               ? std::to_string(q.shared_memory_size) + " bytes of shared memory (SHARED_MEMORY_SIZE)"
                               : std::to_string(local_per_thread) + " bytes of local memory per thread";
  if ((ch_.shader_memory_written & kWindows) != kWindows) {
    fail(where + ": the grid uses " + uses +
         " but SET_SHADER_SHARED_MEMORY_WINDOW_A/B and SET_SHADER_LOCAL_MEMORY_WINDOW_A/B were not all sent on this "
         "channel; expected the windows programmed at channel setup");
  }
  const uint64_t shared_window = reg64(NVCBC0_SET_SHADER_SHARED_MEMORY_WINDOW_A);
  if (cls == HOPPER_COMPUTE_A && shared_window % kHopperSharedWindowAlignment != 0) {
    fail(where + ": the shared memory window " + hex(shared_window) + " is not 4 GiB aligned; " + class_name(cls) +
         " needs a 4 GiB-aligned window");
  }
  if (local_per_thread == 0) return;
  if ((ch_.shader_memory_written & kLocalMemory) != kLocalMemory) {
    fail(where + ": the grid asks for " + std::to_string(local_per_thread) +
         " bytes of local memory per thread (SHADER_LOCAL_MEMORY_LOW/HIGH_SIZE) but SET_SHADER_LOCAL_MEMORY_A/B and "
         "SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_A/B were not all sent on this channel");
  }
  const MockGpuConfig& gpu = gpu_.driver_.config();
  const uint64_t per_tpc = reg64(NVCBC0_SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_A);
  // Every warp slot of every SM of a TPC may hold a warp of this grid, each thread with its own local memory.
  const uint64_t needed = local_per_thread * 32 * gpu.max_warps_per_sm * gpu.num_sm_per_tpc;
  if (per_tpc < needed) {
    fail(where + ": the grid asks for " + std::to_string(local_per_thread) + " bytes of local memory per thread, " +
         std::to_string(needed) + " bytes per TPC (x 32 threads x " + std::to_string(gpu.max_warps_per_sm) +
         " warps per SM x " + std::to_string(gpu.num_sm_per_tpc) + " SMs per TPC); SET_SHADER_LOCAL_MEMORY_NON_THROTTLED "
         "programmed " + std::to_string(per_tpc) + " bytes per TPC");
  }
  const uint64_t base = reg64(NVCBC0_SET_SHADER_LOCAL_MEMORY_A);
  const uint64_t tpcs = uint64_t{gpu.num_gpcs} * gpu.num_tpc_per_gpc;
  translate(memory_, base, per_tpc * tpcs,
            where + ": the shader local memory (SET_SHADER_LOCAL_MEMORY_A/B, " + std::to_string(per_tpc) +
                " bytes per TPC x " + std::to_string(tpcs) + " TPCs)");
  local_memory_base_ = base;
}

void ChannelExecutor::compute_method(uint32_t subchannel, uint32_t cls, uint32_t method, uint32_t data) {
  note_shader_memory_method(method);
  switch (method) {
    case NVCBC0_SET_SHADER_SHARED_MEMORY_WINDOW_A:
      require_fits(data, NVCBC0_SET_SHADER_SHARED_MEMORY_WINDOW_A_BASE_ADDRESS_UPPER);
      return;
    case NVCBC0_SET_SHADER_LOCAL_MEMORY_WINDOW_A:
      require_fits(data, NVCBC0_SET_SHADER_LOCAL_MEMORY_WINDOW_A_BASE_ADDRESS_UPPER);
      return;
    case NVCBC0_SET_SHADER_LOCAL_MEMORY_A:
      require_fits(data, cls == HOPPER_COMPUTE_A ? NVCBC0_SET_SHADER_LOCAL_MEMORY_A_ADDRESS_UPPER
                                                 : NVC7C0_SET_SHADER_LOCAL_MEMORY_A_ADDRESS_UPPER);
      return;
    case NVCBC0_SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_A:
      require_fits(data, NVCBC0_SET_SHADER_LOCAL_MEMORY_NON_THROTTLED_A_SIZE_UPPER);
      return;
    case NVCBC0_SEND_SIGNALING_PCAS2_B: {
      const uint32_t action = get(data, NVCBC0_SEND_SIGNALING_PCAS2_B_PCAS_ACTION);
      switch (action) {
        case PCAS_ACTION_NOP: return;
        case PCAS_ACTION_INVALIDATE:
        case PCAS_ACTION_PREFETCH:
          send_pcas(cls, uint64_t{ch_.reg(subchannel, NVCBC0_SEND_PCAS_A)} << 8, action);
          return;
        case PCAS_ACTION_SCHEDULE:
        case PCAS_ACTION_INVALIDATE_COPY_SCHEDULE:
        case PCAS_ACTION_PREFETCH_SCHEDULE:
        case PCAS_ACTION_INVALIDATE_PREFETCH_COPY_SCHEDULE:
        case PCAS_ACTION_INVALIDATE_PREFETCH_COPY_FORCE_REQUIRE_SCHEDULING:
          send_pcas(cls, uint64_t{ch_.reg(subchannel, NVCBC0_SEND_PCAS_A)} << 8, action);
          return;
      }
      fail("NVCBC0_SEND_SIGNALING_PCAS2_B_PCAS_ACTION " + hex(action) +
           " is not emulated; expected a NOP, INVALIDATE, PREFETCH or a SCHEDULE action");
    }
    case NVCBC0_WAIT_FOR_IDLE: wait_for_idle(); return;
    case NVCBC0_INVALIDATE_SKED_CACHES: ch_.sked_cache.clear(); return;
    default: return;  // recorded setup state (windows, local memory sizes, cache invalidations, PCAS_A)
  }
}

std::vector<uint32_t> ChannelExecutor::sked_qmd(uint32_t cls, uint64_t qmd_va, bool copy) {
  constexpr size_t kMaxCachedQmds = 1u << 16;  // bounds the mock's memory; a real SKED cache is far smaller
  if (!copy) {
    auto it = ch_.sked_cache.find(qmd_va);
    if (it != ch_.sked_cache.end()) return it->second;
  }
  const QmdLayout* layout = qmd_layout(cls);
  const std::string where = "QMD " + std::string(layout->version) + " at " + hex(qmd_va);
  require_aligned("QMD", qmd_va, 256);
  std::vector<uint32_t> words(layout->words);
  std::memcpy(words.data(), translate(memory_, qmd_va, words.size() * 4, where), words.size() * 4);
  if (ch_.sked_cache.size() >= kMaxCachedQmds) ch_.sked_cache.clear();
  ch_.sked_cache[qmd_va] = words;
  return words;
}

// PCAS actions (clcbc0.h SEND_SIGNALING_PCAS2_B): INVALIDATE drops the cached QMD, PREFETCH caches it; the SCHEDULE
// actions launch it, afresh when they invalidate and copy (3, 0xa, 0xb), else from the cache when it holds one.
void ChannelExecutor::send_pcas(uint32_t cls, uint64_t qmd_va, uint32_t action) {
  switch (action) {
    case PCAS_ACTION_INVALIDATE: ch_.sked_cache.erase(qmd_va); return;
    case PCAS_ACTION_PREFETCH:
      if (!ch_.sked_cache.contains(qmd_va)) sked_qmd(cls, qmd_va, true);
      return;
  }
  const bool copy = action != PCAS_ACTION_SCHEDULE && action != PCAS_ACTION_PREFETCH_SCHEDULE;
  std::vector<uint32_t> qmd = sked_qmd(cls, qmd_va, copy);
  if (ch_.deferred.empty()) {
    ch_.deferred.push_back({cls, qmd_va, std::move(qmd)});
    return;
  }
  // Two unordered grids: the later one runs first.
  MockNvGpu::ChannelState::DeferredLaunch earlier = std::move(ch_.deferred.front());
  ch_.deferred.clear();
  launch(cls, qmd_va, std::move(qmd));
  launch(earlier.cls, earlier.qmd_va, std::move(earlier.qmd));
}

void ChannelExecutor::wait_for_idle() {
  if (ch_.deferred.empty()) return;
  MockNvGpu::ChannelState::DeferredLaunch d = std::move(ch_.deferred.front());
  ch_.deferred.clear();
  launch(d.cls, d.qmd_va, std::move(d.qmd));
}

void ChannelExecutor::launch(uint32_t cls, uint64_t qmd_va, std::vector<uint32_t> words) {
  const QmdLayout* layout = qmd_layout(cls);
  for (uint32_t chained = 0;; ++chained) {
    if (chained >= kMaxQmdChain) {
      fail("QMD chain from the launch passed " + std::to_string(kMaxQmdChain) +
           " dependent QMDs; expected a chain that ends (a QMD that depends on itself loops)");
    }
    if (gpu_.preempt_.load(std::memory_order_relaxed)) throw PtxPreempted{};  // between the QMDs of a chain
    const std::string where = "QMD " + std::string(layout->version) + " at " + hex(qmd_va);
    const Qmd qmd = decode_qmd(*layout, words);
    if (qmd.major != layout->major) {
      fail(where + ": " + layout->major_version.name + " is " + std::to_string(qmd.major) + "; " + class_name(cls) +
           " reads QMD " + layout->version + " (major " + std::to_string(layout->major) + ")");
    }
    require_shader_memory(cls, qmd, where);
    require_constant_buffers(qmd, where);
    run_grid(qmd, where);
    for (size_t i = 0; i < qmd.releases.size(); ++i) {
      if (qmd.release_enabled[i]) qmd_release(qmd.releases[i], where + " release " + std::to_string(i));
    }
    if (!qmd.dependent_enable) return;
    if (qmd.dependent_action != DEPENDENT_QMD_ACTION_QMD_SCHEDULE &&
        qmd.dependent_action != DEPENDENT_QMD_ACTION_QMD_INVALIDATE_COPY_SCHEDULE) {
      fail(where + ": DEPENDENT_QMD_ACTION(0) " + std::to_string(qmd.dependent_action) +
           " is not emulated; expected QMD_SCHEDULE (1) or QMD_INVALIDATE_COPY_SCHEDULE (3)");
    }
    qmd_va = qmd.dependent_address;
    // QMD_SCHEDULE takes SKED's cached copy of that address when it has one; INVALIDATE_COPY reads memory.
    words = sked_qmd(cls, qmd_va, qmd.dependent_action == DEPENDENT_QMD_ACTION_QMD_INVALIDATE_COPY_SCHEDULE);
  }
}

// Every bound constant buffer must be mapped (the SM reads c[i] from there).
void ChannelExecutor::require_constant_buffers(const Qmd& q, const std::string& where) {
  for (size_t i = 0; i < q.constant_buffer_valid.size(); ++i) {
    if (!q.constant_buffer_valid[i]) continue;
    translate(memory_, q.constant_buffer_address[i], q.constant_buffer_size[i],
              where + ": constant buffer " + std::to_string(i) + " (CONSTANT_BUFFER_VALID(" + std::to_string(i) + "))");
  }
}

void ChannelExecutor::qmd_release(const QmdRelease& r, const std::string& where) {
  if (r.reduction) fail(where + ": RELEASE_REDUCTION_ENABLE is set; reductions are not emulated");
  bool payload64 = r.payload64;
  bool timestamp = false;
  switch (r.structure_size) {
    case RELEASE_STRUCTURE_SIZE_SEMAPHORE_FOUR_WORDS: timestamp = true; break;
    case RELEASE_STRUCTURE_SIZE_SEMAPHORE_ONE_WORD:
      if (payload64) fail(where + ": STRUCTURE_SIZE SEMAPHORE_ONE_WORD with PAYLOAD64B; expected TWO_WORDS");
      break;
    case RELEASE_STRUCTURE_SIZE_SEMAPHORE_TWO_WORDS: payload64 = true; break;
    default: fail(where + ": STRUCTURE_SIZE " + std::to_string(r.structure_size) + " is not a structure size");
  }
  release_semaphore(memory_, where, r.address, r.payload, payload64, timestamp ? std::optional(gpu_.ptimer_.now_ns()) : std::nullopt);
  gpu_.stats_.semaphore_releases.fetch_add(1, std::memory_order_relaxed);
}

std::string ChannelExecutor::read_program_text(uint64_t va, const std::string& where) {
  std::string text;
  for (uint64_t at = va; text.size() < kMaxProgramBytes;) {
    size_t chunk = 0x1000 - (at & 0xfff);
    const uint8_t* p = nullptr;
    try {
      p = memory_.translate(at, chunk);
    } catch (const std::exception&) {
      chunk = 1;  // the mapping ends inside this page: go byte by byte
      p = translate(memory_, at, 1, where + ": PTX text of the program (no NUL terminator before)");
    }
    const void* nul = std::memchr(p, 0, chunk);
    if (nul != nullptr) {
      text.append(reinterpret_cast<const char*>(p), static_cast<const uint8_t*>(nul) - p);
      return text;
    }
    text.append(reinterpret_cast<const char*>(p), chunk);
    at += chunk;
  }
  fail(where + ": program at " + hex(va) + " has no NUL within " + std::to_string(kMaxProgramBytes) +
       " bytes; the mock expects NUL-terminated PTX text there");
}

std::shared_ptr<const PtxProgram> ChannelExecutor::program_at(uint64_t va, const std::string& where) {
  std::string text = read_program_text(va, where);
  const size_t hash = std::hash<std::string>{}(text);
  auto& cache = gpu_.programs_->by_address;
  auto it = cache.find(va);
  if (it != cache.end() && it->second.hash == hash && it->second.text == text) return it->second.program;
  std::shared_ptr<const PtxProgram> program;
  try {
    program = std::make_shared<const PtxProgram>(parse_ptx(text));
  } catch (const std::exception& e) {
    fail(where + ": the program at " + hex(va) + " is not PTX the SM accepts: " + e.what());
  }
  if (cache.size() > 4096) cache.clear();
  cache[va] = {hash, std::move(text), program};
  return program;
}

void ChannelExecutor::run_grid(const Qmd& q, const std::string& where) {
  for (int d = 0; d < 3; ++d) {
    if (q.grid[d] == 0 || q.block[d] == 0) {
      fail(where + ": grid " + dims(q.grid) + " block " + dims(q.block) + " has a zero dimension");
    }
  }
  const auto program = program_at(q.program_address, where);
  if (program->entries.size() != 1) {
    fail(where + ": the program at " + hex(q.program_address) + " has " + std::to_string(program->entries.size()) +
         " .entry functions; the mock launches a module with exactly one");
  }
  const PtxEntry& entry = program->entries.front();
  const std::string kernel = where + ", kernel " + entry.name;
  if (!q.constant_buffer0_valid) {
    fail(kernel + ": CONSTANT_BUFFER_VALID(0) is 0; the kernel's parameters live in constant buffer 0");
  }
  const uint64_t needed = kCbuf0ParamOffset + entry.param_bytes;
  if (q.constant_buffer0_size < needed) {
    fail(kernel + ": constant buffer 0 at " + hex(q.constant_buffer0_address) + " is " +
         std::to_string(q.constant_buffer0_size) + " bytes; the parameters need " + std::to_string(needed) + " (" +
         std::to_string(entry.param_bytes) + " bytes at " + hex(kCbuf0ParamOffset) + ")");
  }
  std::vector<uint8_t> params(entry.param_bytes);
  if (!params.empty()) {
    std::memcpy(params.data(),
                translate(memory_, q.constant_buffer0_address + kCbuf0ParamOffset, params.size(),
                          kernel + ": parameters in constant buffer 0"),
                params.size());
  }
  if (q.shared_memory_size < entry.static_shared_bytes) {
    fail(kernel + ": SHARED_MEMORY_SIZE is " + std::to_string(q.shared_memory_size) +
         " bytes but the kernel declares " + std::to_string(entry.static_shared_bytes) +
         " bytes of static shared memory");
  }
  const uint32_t dynamic_shared =
      q.shared_memory_size > entry.dynamic_shared_offset ? q.shared_memory_size - entry.dynamic_shared_offset : 0;
  // The kernel's .local arrays live in the shader local memory store, one slice per thread of the running block.
  const uint64_t local_per_thread = uint64_t{q.shader_local_memory_low_size} + q.shader_local_memory_high_size;
  if (entry.local_bytes > local_per_thread) {
    fail(kernel + ": the kernel's .local arrays take " + std::to_string(entry.local_bytes) +
         " bytes per thread; SHADER_LOCAL_MEMORY_LOW/HIGH_SIZE give " + std::to_string(local_per_thread));
  }
  GpuGlobalMemory global(memory_);
  const std::string launch = kernel + " (grid " + dims(q.grid) + ", block " + dims(q.block) + "): ";
  try {
    PtxRunOptions options;
    options.local_base = local_memory_base_;
    options.local_stride = local_per_thread;
    options.preempt = &gpu_.preempt_;
    options.blocks_completed = &gpu_.stats_.blocks;
    run_kernel(*program, entry.name, {q.grid[0], q.grid[1], q.grid[2]}, {q.block[0], q.block[1], q.block[2]}, params,
               dynamic_shared, global, options);
  } catch (const PtxFault& e) {
    if (!e.unmapped) fail(launch + e.what());
    // No page table entry maps the address (fault_invalidPte), read or written through its virtual address.
    throw SmMmuFault(launch + e.what(), {e.unmapped->address, kernel_interface::nvidia::kFaultInvalidPte,
                                         e.unmapped->write ? kernel_interface::nvidia::NV_PFAULT_ACCESS_TYPE_VIRT_WRITE
                                                           : kernel_interface::nvidia::NV_PFAULT_ACCESS_TYPE_VIRT_READ});
  } catch (const std::exception& e) {
    fail(launch + e.what());
  }
  gpu_.stats_.launches.fetch_add(1, std::memory_order_relaxed);
}

std::string ChannelExecutor::dims(const std::array<uint32_t, 3>& d) {
  return std::to_string(d[0]) + "x" + std::to_string(d[1]) + "x" + std::to_string(d[2]);
}

}  // namespace doorbell::mockgpu::nv::cp
