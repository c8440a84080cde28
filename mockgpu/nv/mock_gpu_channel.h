// The command processor's per-channel machinery, shared by mock_gpu.cpp (the thread), mock_gpu_channel.cpp
// (GPFIFO, pushbuffer, host unit), mock_gpu_compute.cpp (compute class, QMD launch) and mock_gpu_copy.cpp (copy
// class). Internal to mockgpu/nv: include mock_gpu.h instead.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "kernel-interface/nvidia/rm_controls.h"
#include "mockgpu/nv/mock_gpu.h"
#include "mockgpu/nv/mock_gpu_methods.h"
#include "mockgpu/nv/ptx_program.h"

namespace doorbell::mockgpu::nv {

namespace cp {

inline constexpr uint32_t kSubchannels = 8;
inline constexpr uint32_t kMethodSlots = 0x4000 / 4;  // NVC56F_DMA_METHOD_ADDRESS 11:0 dwords

[[noreturn]] void fail(const std::string& message);

// A fault the GPU's MMU reports for an SM (a kernel's access to an unmapped address): besides stopping the channel,
// RM records it for the channel's compute context, where the debugger object reads it back.
struct SmMmuFault : std::runtime_error {
  SmMmuFault(const std::string& message, const kernel_interface::nvidia::NV83DE_CTRL_DEBUG_READ_MMU_FAULT_INFO_ENTRY& f)
      : std::runtime_error(message), fault(f) {}
  kernel_interface::nvidia::NV83DE_CTRL_DEBUG_READ_MMU_FAULT_INFO_ENTRY fault;
};
// The host bytes of [va, va + bytes); throws naming `what` and the address when they are not mapped.
uint8_t* translate(GpuMemory& memory, uint64_t va, size_t bytes, const std::string& what);
void require_aligned(const std::string& what, uint64_t va, uint64_t alignment);
uint32_t load32(const uint8_t* p);
uint64_t load64(const uint8_t* p);
void store32(uint8_t* p, uint32_t v);
void store64(uint8_t* p, uint64_t v);
// A semaphore release: the 32- or 64-bit payload at +0 and, for the four-word structure, `timestamp` (the GPU's
// PTIMER, ptimer.h) at +8.
void release_semaphore(GpuMemory& memory, const std::string& what, uint64_t va, uint64_t payload, bool payload64,
                       std::optional<uint64_t> timestamp);

}  // namespace cp

struct MockNvGpu::ChannelState {
  MockChannel info;
  bool faulted = false;
  bool stopped = false;  // preempted because RM frees it: runs nothing more
  uint32_t gp_get = 0;  // next GP entry to run; mirrored into USERD GPGet as entries complete

  // The pushbuffer segment being run and the method header being consumed (kept across a stalled acquire).
  bool in_segment = false;
  uint32_t segment_entry = 0;
  uint64_t pb_va = 0;
  uint32_t pb_length = 0;
  uint32_t pb_pos = 0;
  uint32_t hdr_remaining = 0;
  uint32_t hdr_index = 0;
  uint32_t hdr_method = 0;
  uint32_t hdr_subchannel = 0;
  uint32_t hdr_sec_op = 0;
  uint64_t hdr_va = 0;

  std::array<uint32_t, cp::kSubchannels> bound{};  // class per subchannel, 0 = none
  std::vector<uint32_t> regs = std::vector<uint32_t>(cp::kSubchannels * cp::kMethodSlots);  // last data per method
  std::array<uint32_t, hw::kHostMethodEnd / 4> host_regs{};
  // Which shader memory setup methods (cp::ShaderMemoryMethod bits) the compute class has executed on this channel:
  // a launch that needs a window or local memory faults when its methods were never sent (mock_gpu_compute.cpp).
  uint32_t shader_memory_written = 0;

  struct Acquire {
    bool pending = false;
    uint32_t operation = 0;
    bool payload64 = false;
    uint64_t address = 0;
    uint64_t payload = 0;
  } acquire;

  // The compute engine's scheduler (SKED) cache of QMDs, by address: a launch whose action neither invalidates nor
  // copies (PCAS SCHEDULE / PREFETCH_SCHEDULE, DEPENDENT_QMD_ACTION QMD_SCHEDULE) runs the copy cached for its address
  // if there is one, whatever the memory holds now; INVALIDATE_SKED_CACHES (clcbc0.h:386) empties it.
  std::unordered_map<uint64_t, std::vector<uint32_t>> sked_cache;
  // A grid launched by SEND_PCAS that has not run yet. Nothing orders grids of separate SEND_PCAS on one channel
  // (only a chain, WAIT_FOR_IDLE or a semaphore release with RELEASE_WFI wait for the engine), so the mock runs the
  // next SEND_PCAS's grid before this one: code that relies on an order it did not ask for reads stale data here.
  struct DeferredLaunch {
    uint32_t cls = 0;
    uint64_t qmd_va = 0;
    std::vector<uint32_t> qmd;  // as SKED took it at SEND_PCAS
  };
  std::vector<DeferredLaunch> deferred;  // at most one

  uint32_t reg(uint32_t subchannel, uint32_t method) const { return regs[subchannel * cp::kMethodSlots + method / 4]; }
  std::string name() const {
    return "channel " + std::to_string(info.work_submit_token) + " (" + hw::class_name(info.hclass) + ", handle " +
           hw::hex(info.handle) + ")";
  }
};

struct MockNvGpu::ProgramCache {
  struct Entry {
    size_t hash = 0;
    std::string text;
    std::shared_ptr<const PtxProgram> program;
  };
  std::unordered_map<uint64_t, Entry> by_address;
};

namespace cp {

// Executes one channel's GP entries, methods and QMDs; every error throws and the caller faults the channel.
class ChannelExecutor {
 public:
  ChannelExecutor(MockNvGpu& gpu, MockNvGpu::ChannelState& channel)
      : gpu_(gpu), ch_(channel), memory_(gpu.driver_.gpu_memory(gpu.options_.gpu)) {}

  struct Result {
    bool progressed = false;
    bool stalled = false;
  };
  // Runs the channel until its ring is empty, it stalls on an acquire, or it has had its turn.
  Result run();

 private:
  // GPFIFO and pushbuffer (mock_gpu_channel.cpp).
  bool fetch_entry();
  bool run_segment();
  bool execute(uint32_t subchannel, uint32_t method, uint32_t data, uint64_t header_va);
  // Host unit, clc86f.h / clc56f.h (mock_gpu_channel.cpp).
  bool host_method(uint32_t subchannel, uint32_t method, uint32_t data);
  void set_object(uint32_t subchannel, uint32_t data);
  bool sem_execute(uint32_t data);
  bool acquire_passed();
  // Compute class, clcbc0.h / clc7c0.h (mock_gpu_compute.cpp).
  void require_fits(uint32_t data, hw::Field f);
  void compute_method(uint32_t subchannel, uint32_t cls, uint32_t method, uint32_t data);
  void launch(uint32_t cls, uint64_t qmd_va, std::vector<uint32_t> qmd);
  // SEND_SIGNALING_PCAS2_B with `action` for the QMD at qmd_va: SKED's cache, and the grid deferred behind the next.
  void send_pcas(uint32_t cls, uint64_t qmd_va, uint32_t action);
  // The QMD at qmd_va as SKED launches it: read afresh when `copy` (and cached), else the cached copy if any.
  std::vector<uint32_t> sked_qmd(uint32_t cls, uint64_t qmd_va, bool copy);
  // Runs the deferred grid: the engine idles (WAIT_FOR_IDLE, a WFI release, a stall or the end of the turn).
  void wait_for_idle();
  void note_shader_memory_method(uint32_t method);
  // Sets local_memory_base_ for the grid (0 when it asks for no local memory).
  void require_shader_memory(uint32_t cls, const hw::Qmd& q, const std::string& where);
  void require_constant_buffers(const hw::Qmd& q, const std::string& where);
  void qmd_release(const hw::QmdRelease& r, const std::string& where);
  std::string read_program_text(uint64_t va, const std::string& where);
  std::shared_ptr<const PtxProgram> program_at(uint64_t va, const std::string& where);
  void run_grid(const hw::Qmd& q, const std::string& where);
  static std::string dims(const std::array<uint32_t, 3>& d);
  // Copy class, clc8b5.h / clc7b5.h (mock_gpu_copy.cpp).
  uint64_t copy_address(uint32_t subchannel, uint32_t cls, uint32_t upper_method, uint32_t lower_method);
  void require_launch_field(uint32_t data, hw::Field f, uint32_t expected, const char* meaning);
  void copy_method(uint32_t subchannel, uint32_t cls, uint32_t method, uint32_t data);
  void copy_bytes(uint64_t dst, uint64_t src, uint64_t bytes);

  MockNvGpu& gpu_;
  MockNvGpu::ChannelState& ch_;
  GpuMemory& memory_;
  uint64_t local_memory_base_ = 0;  // the shader local memory store of the grid being launched
};

}  // namespace cp
}  // namespace doorbell::mockgpu::nv
