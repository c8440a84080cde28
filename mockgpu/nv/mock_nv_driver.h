#pragma once
// An emulated NVIDIA kernel driver (RM + UVM) behind the SyscallSeam, for one or more H200-like GPUs: kernel-interface's
// NvRm and NvUvm run against it unchanged. It serves /dev/nvidiactl, /dev/nvidia0 .. /dev/nvidia<N-1> (GPU i is
// minor i, listed by NV_ESC_CARD_INFO in that order), /dev/nvidia-uvm and /proc/driver/nvidia/version; fds are numbers
// from 0x40000000 up, so a mock fd handed to a real syscall fails with EBADF instead of touching a real file.
//
// For each emulated GPU (command processor, SMs) it exposes its address space (gpu_memory(i)), its GPFIFO channels
// (channels(i), channel_by_token()) and its doorbell (see mock_rm_usermode.h for why it is polled, not a callback).
// The GPUs share nothing but the driver: no peer mappings (UVM_ENABLE_PEER_ACCESS answers NV_ERR_INVALID_DEVICE).
// All driver calls are serialised by one mutex; gpu_memory() and the doorbell calls are safe from any thread.
// RM stops a channel before it frees what the channel uses: here the GPU holds execution_mutex() while it runs
// channels, and the calls that free memory or channels (RM_FREE, closing a control fd) take it first, so the GPU
// never reads memory freed under it. Order: execution_mutex(), then the driver's mutex.
// A free that takes channels down (RM_FREE of a channel or of an object above one, closing a control fd) first
// preempts them, as RM disables and preempts a channel before it frees it (the GPU stops fetching from it): the
// preempt hook (the GPU's) is told which channels are going before the free waits for execution_mutex(), so a kernel
// running on one of them stops at its next preemption point instead of holding the free until it ends.

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "kernel-interface/syscall_seam.h"
#include "mockgpu/nv/gpu_memory.h"
#include "mockgpu/nv/mock_rm.h"
#include "mockgpu/nv/mock_rm_gpu.h"
#include "mockgpu/nv/mock_uvm.h"

namespace doorbell::mockgpu::nv {

inline constexpr char kNvidiaCtlPath[] = "/dev/nvidiactl";
inline constexpr char kNvidia0Path[] = "/dev/nvidia0";
inline constexpr char kNvidiaUvmPath[] = "/dev/nvidia-uvm";
inline constexpr char kNvidiaVersionPath[] = "/proc/driver/nvidia/version";

class MockNvDriver final : public kernel_interface::SyscallSeam {
 public:
  explicit MockNvDriver(MockGpuConfig config = {});
  // One driver for several GPUs (mock_gpu_configs() makes a machine of N); the driver's version is gpus[0]'s.
  explicit MockNvDriver(std::vector<MockGpuConfig> gpus);
  ~MockNvDriver() override;

  // SyscallSeam. mmap of an RM fd maps what the one RM_MAP_MEMORY naming that fd asked for (the same host memory
  // the GPU sees), as often as asked; a second RM_MAP_MEMORY naming the fd answers NV_ERR_STATE_IN_USE, as the
  // driver keeps one mmap context per fd for the fd's life. An anonymous mmap (fd -1, MAP_ANONYMOUS) and munmap go
  // to the kernel.
  int open(const std::string& path, int flags) override;
  int ioctl(int fd, unsigned long request, void* arg) override;
  ssize_t read(int fd, void* buffer, std::size_t length) override;
  void* mmap(void* addr, std::size_t length, int prot, int flags, int fd, off_t offset, int* error) override;
  int munmap(void* addr, std::size_t length) override;
  int close(int fd) override;
  bool emulated() const override { return true; }

  const MockGpuConfig& config() const { return gpus_.front(); }  // the first GPU's (and the driver's version)
  int gpu_count() const { return static_cast<int>(gpus_.size()); }
  const MockGpuConfig& gpu_config(int gpu) const { return gpus_.at(static_cast<std::size_t>(gpu)); }
  // The text of /proc/driver/nvidia/version.
  std::string version_file_text() const;

  // For the emulated GPUs (`gpu`: its index, 0 the first). One execution_mutex() serves them all.
  GpuMemory& gpu_memory(int gpu = 0) { return *gpu_memories_.at(static_cast<std::size_t>(gpu)); }
  std::mutex& execution_mutex() { return execution_mutex_; }
  std::vector<MockChannel> channels() const;  // every GPU's
  std::vector<MockChannel> channels(int gpu) const;
  std::optional<MockChannel> channel_by_token(std::uint32_t token, int gpu = 0) const;
  std::uint32_t* doorbell_register(int gpu = 0);
  std::optional<std::uint32_t> take_doorbell(int gpu = 0);
  std::optional<std::uint32_t> wait_doorbell(std::chrono::nanoseconds timeout, int gpu = 0);
  // Called with the channels of GPU `gpu` a free is about to take down (stopping true) before it waits for
  // execution_mutex(), and again with the same channels (stopping false) once they are freed. Set by that GPU;
  // empty to remove.
  using PreemptHook = std::function<void(const std::vector<MockChannel>& channels, bool stopping)>;
  void set_preempt_hook(PreemptHook hook, int gpu = 0);
  // An SM's MMU fault on a channel, for RM to record (MockRm::record_mmu_fault).
  void record_mmu_fault(NvHandle client, NvHandle channel,
                        const kernel_interface::nvidia::NV83DE_CTRL_DEBUG_READ_MMU_FAULT_INFO_ENTRY& fault);

  // For tests.
  std::size_t rm_object_count() const;
  bool rm_has_object(NvHandle client, NvHandle handle) const;
  std::vector<MockUvm::Range> uvm_external_ranges(int uvm_fd) const;

 private:
  enum class FileKind { kControl, kDevice, kUvm, kVersionText };
  struct OpenFile {
    FileKind kind = FileKind::kControl;
    int gpu = 0;  // /dev/nvidiaN: GPU N
    std::size_t read_position = 0;
    std::optional<CpuMapContext> map_context;  // set by the one RM_MAP_MEMORY naming this fd, kept until close
    bool registered = false;                   // REGISTER_FD done on this /dev/nvidiaN fd
  };

  bool is_ctl_fd_locked(int fd) const;
  int locked_ioctl(int fd, unsigned long request, void* arg);
  void preempt(const std::vector<MockChannel>& channels, bool stopping);
  int rm_escape(int fd, OpenFile& file, unsigned long request, void* arg);

  std::vector<MockGpuConfig> gpus_;
  std::mutex execution_mutex_;
  std::mutex preempt_mutex_;  // guards preempt_hooks_ and is held while one runs
  std::vector<PreemptHook> preempt_hooks_;  // by GPU
  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<GpuMemory>> gpu_memories_;  // by GPU
  MockRm rm_;
  MockUvm uvm_;
  std::map<int, OpenFile> files_;
  int next_fd_ = 0x40000000;
};

}  // namespace doorbell::mockgpu::nv
