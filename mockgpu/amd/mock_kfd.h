#pragma once
// An emulated AMD kernel driver behind the SyscallSeam: /dev/kfd (KFD ioctl 1.11, the kernel's own
// <linux/kfd_ioctl.h>), the amdgpu DRM render nodes /dev/dri/renderD<minor>, and the KFD topology in sysfs
// (mock_amd_topology.h). kernel-interface/amd (kfd.h, kfd_topology.h, amdgpu_drm.h) runs against it unchanged.
// Every rule it enforces is the kernel's, recorded with its source in firmware-notes/amd-kfd.md §K1-§K11.
//
// Each open of /dev/kfd is one KFD process: its GPU address spaces (one GpuMemory per GPU: GPU VA = CPU VA), buffer
// objects, queues, events and doorbell pages; closing it destroys the queues (their engine threads stop) and frees
// everything. Memory is a memfd per buffer object: the process maps it through the render node at the BO's VA and
// the driver maps the same memfd for the GPU, so both views share bytes. Queues run on engines the options build
// (queue_engine.h); the shader core is reached only through the options' run_dispatch hook, so this links without it.
// Fds are numbers from 0x50000000 up, so a mock fd handed to a real syscall fails with EBADF.
// Thread-safe: one mutex serialises the driver; engines call back (interrupts, faults) from their threads.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "kernel-interface/syscall_seam.h"
#include "mockgpu/amd/amd_memory.h"
#include "mockgpu/amd/mock_amd_config.h"
#include "mockgpu/amd/queue_engine.h"
#include "mockgpu/amd/shader_core.h"

namespace doorbell::mockgpu::amd {

inline constexpr char kKfdPath[] = "/dev/kfd";

// The constant-rate 100 MHz GPU timestamp counter (firmware-notes/amd-kfd.md §K10): ticks of 10 ns since the first
// call in this program, so every engine, the shader core and GET_CLOCK_COUNTERS read one counter.
uint64_t gpu_clock_100mhz();

struct MockKfdOptions {
  std::vector<MockAmdGpuConfig> gpus{MockAmdGpuConfig{}};
  // Builds a queue's engine at CREATE_QUEUE: make_pm4_engine / make_sdma_engine (queue_engine.h) in the emulated
  // machine, a test's own engine in the KFD's tests. Empty: CREATE_QUEUE validates, then answers -ENODEV.
  std::function<std::unique_ptr<QueueEngine>(const QueueDesc&, EngineHooks)> make_engine;
  // The shader core (shader_core.h run_dispatch), handed to PM4 engines as their dispatch hook. Empty: a dispatch
  // faults its queue, naming what is missing.
  std::function<void(const DispatchState&, const GpuMemory&, const ShaderCoreOptions&)> run_dispatch;
  std::function<uint64_t()> clock = gpu_clock_100mhz;
};

class MockKfd final : public kernel_interface::SyscallSeam {
 public:
  explicit MockKfd(MockKfdOptions options = {});
  ~MockKfd() override;  // destroys every process: their engines stop first

  // SyscallSeam. open: /dev/kfd, /dev/dri/renderD<minor>, the topology's sysfs files. mmap: the render node at a
  // BO's mmap_offset, /dev/kfd at a doorbell offset (0x2000 bytes) or the events offset; an anonymous mmap and a
  // munmap of memory the driver does not own go to the kernel.
  int open(const std::string& path, int flags) override;
  int ioctl(int fd, unsigned long request, void* arg) override;
  ssize_t read(int fd, void* buffer, std::size_t length) override;
  void* mmap(void* addr, std::size_t length, int prot, int flags, int fd, off_t offset, int* error) override;
  int munmap(void* addr, std::size_t length) override;
  int close(int fd) override;
  bool emulated() const override { return true; }

  const MockKfdOptions& options() const { return options_; }
  int gpu_count() const { return static_cast<int>(options_.gpus.size()); }

  // For tests: the GPU address space of the process open as `kfd_fd` on GPU `gpu_id` (nullptr when none), and how
  // many queues it has.
  const GpuMemory* process_memory(int kfd_fd, uint32_t gpu_id) const;
  std::size_t queue_count(int kfd_fd) const;

  struct Process;
  struct Bo;
  struct Queue;
  struct Event;

 private:
  enum class FileKind { kKfd, kRender, kText };
  struct OpenFile {
    FileKind kind = FileKind::kText;
    int gpu = 0;                 // render node: its GPU's index
    std::string text;            // sysfs file contents
    std::size_t position = 0;
    std::unique_ptr<Process> process;  // /dev/kfd
  };

  int gpu_index(uint32_t gpu_id) const;  // -1 when unknown
  int render_ioctl(OpenFile& file, unsigned long request, void* arg);
  // The handlers: `args` is the kernel's copy of the struct (zero-filled past what the caller passed).
  int get_version(Process& p, void* args);
  int acquire_vm(Process& p, void* args);
  int get_process_apertures_new(Process& p, void* args);
  int alloc_memory(Process& p, void* args);
  int free_memory(Process& p, void* args);
  int map_memory(Process& p, void* args, bool map);
  int available_memory(Process& p, void* args);
  int get_clock_counters(Process& p, void* args);
  int create_queue(Process& p, void* args);
  int destroy_queue(Process& p, void* args);
  int set_xnack_mode(Process& p, void* args);
  int create_event(Process& p, void* args);
  int destroy_event(Process& p, void* args);
  int set_event(Process& p, void* args, bool set);
  int wait_events(Process& p, void* args, std::unique_lock<std::mutex>& lock);
  // Engine callbacks (any thread).
  void on_interrupt(Process& p, uint32_t context_id);
  void on_fault(Process& p, uint32_t gpu_id, const QueueFault& fault);
  void signal_event_locked(Process& p, Event& event);
  // Takes the queue out of the process; the caller destroys its engine with the mutex released.
  std::unique_ptr<QueueEngine> remove_queue_locked(Process& p, uint32_t queue_id);
  void release_retired_locked(Process& p);

  MockKfdOptions options_;
  mutable std::mutex mutex_;
  std::map<int, OpenFile> files_;
  std::vector<uint64_t> vram_used_;  // by GPU, over every process
  int next_fd_ = 0x50000000;
};

}  // namespace doorbell::mockgpu::amd
