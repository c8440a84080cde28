// tinygrad's NV device bring-up (ops_nv.py:384-414, 590-666) through kernel-interface/nvidia's wrappers. Tests take it
// step by step: open_driver(), then device(), then channels().
#pragma once

#include <fcntl.h>
#include <sys/mman.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernel-interface/nvidia/alloc_params.h"
#include "kernel-interface/nvidia/driver_version.h"
#include "kernel-interface/nvidia/nv_rm.h"
#include "kernel-interface/nvidia/nv_uvm.h"
#include "kernel-interface/nvidia/rm_classes.h"
#include "kernel-interface/nvidia/rm_controls.h"
#include "kernel-interface/syscall_seam.h"
#include "mockgpu/nv/mock_nv_driver.h"

namespace doorbell::nv_driver_test {

using namespace doorbell::kernel_interface::nvidia;
using doorbell::kernel_interface::SeamFd;
using doorbell::mockgpu::nv::MockGpuConfig;
using doorbell::mockgpu::nv::MockNvDriver;

// tinygrad's layout: low VAs for CPU-visible memory, gpfifo area of 3 MiB with two rings (ops_nv.py:380,
// 613-620; firmware-notes/nvidia-hopper.md §8).
inline constexpr NvU64 kLowVaBase = 0x1000000000;
inline constexpr NvU64 kGpfifoAreaSize = 0x300000;
inline constexpr NvU32 kRingEntries = 0x10000;
inline constexpr NvU64 kComputeUserdOffset = 0x80000;
inline constexpr NvU64 kCopyRingOffset = 0x100000;
inline constexpr NvU64 kCopyUserdOffset = 0x180000;
inline constexpr NvU64 kUvmChannelVaBase = kLowVaBase + 0x10000000;
inline constexpr NvU64 kUvmChannelRangeSize = 0x4000000;

struct GpuBuffer {
  NvHandle memory = 0;
  NvU64 va = 0;
  NvU64 size = 0;
  std::uint8_t* cpu = nullptr;
};

// The sequence on any seam: the emulated driver here, LinuxSyscalls on a machine with an NVIDIA GPU.
class NvSequence {
 public:
  explicit NvSequence(kernel_interface::SyscallSeam& seam)
      : seam(seam),
        ctl(seam, "/dev/nvidiactl", O_RDWR),
        uvm_fd(seam, "/dev/nvidia-uvm", O_RDWR),
        uvm_fd2(seam, "/dev/nvidia-uvm", O_RDWR),
        rm(seam, ctl.get()),
        uvm(seam, uvm_fd.get()) {}
  NvSequence(const NvSequence&) = delete;
  NvSequence& operator=(const NvSequence&) = delete;

  // Steps 1-6: root client, driver version, UVM init, card info, /dev/nvidiaN registration.
  void open_driver() {
    root = rm.alloc_root_client();
    check_nv_driver_version(seam, rm);
    uvm.initialize();
    try {
      uvm.mm_initialize(uvm_fd2.get());
    } catch (const NvStatusError&) {
      // tinygrad ignores a failing UVM_MM_INITIALIZE too (tinygrad ops_nv.py:399-400).
    }
    const auto cards = rm.card_info();
    gpu_id = cards.at(0).gpu_id;
    device_path = "/dev/nvidia" + std::to_string(cards.at(0).minor_number);
    dev_fd = SeamFd(seam, device_path, O_RDWR);
    rm.register_fd(dev_fd.get());
  }

  // A fresh /dev/nvidiaN fd linked to the ctl fd, as tinygrad's _new_gpu_fd makes one per CPU mapping.
  SeamFd new_gpu_fd() {
    SeamFd fd(seam, device_path, O_RDWR);
    rm.register_fd(fd.get());
    return fd;
  }

  // Steps 6-10: device, subdevice, virtual memory, usermode (mapped), VA space, UVM GPU + VA space registration.
  void device() {
    NV0080_ALLOC_PARAMETERS device_params{};
    device_params.deviceId = rm.device_instance(gpu_id);
    device_params.hClientShare = root;
    device_params.vaMode = NV_DEVICE_ALLOCATION_VAMODE_OPTIONAL_MULTIPLE_VASPACES;
    nvdevice = rm.alloc(root, NV01_DEVICE_0, device_params);
    NV2080_ALLOC_PARAMETERS subdevice_params{};
    subdevice = rm.alloc(nvdevice, NV20_SUBDEVICE_0, subdevice_params);
    NV_MEMORY_VIRTUAL_ALLOCATION_PARAMS virtual_params{};
    virtual_params.limit = 0x1ffffffffffff;
    virtmem = rm.alloc(nvdevice, NV01_MEMORY_VIRTUAL, virtual_params);
    usermode = rm.alloc(subdevice, HOPPER_USERMODE_A);
    SeamFd map_fd = new_gpu_fd();
    gpu_mmio = static_cast<std::uint32_t*>(rm.map_memory(nvdevice, usermode, NVC361_NV_USERMODE__SIZE, map_fd.get()));
    NV_VASPACE_ALLOCATION_PARAMETERS vaspace_params{};
    vaspace_params.vaBase = 0x1000;
    vaspace_params.vaSize = 0x1fffffb000000;
    vaspace_params.flags =
        NV_VASPACE_ALLOCATION_FLAGS_ENABLE_PAGE_FAULTING | NV_VASPACE_ALLOCATION_FLAGS_IS_EXTERNALLY_OWNED;
    vaspace = rm.alloc(nvdevice, FERMI_VASPACE_A, vaspace_params);
    uuid = rm.gpu_uuid(subdevice);
    uvm.register_gpu(uuid);
    uvm.register_gpu_vaspace(uuid, ctl.get(), root, vaspace);
  }

  // Video or system memory at GPU VA `va`, mapped for the CPU: tinygrad's alloc + _gpu_uvm_map + _gpu_map_to_cpu.
  GpuBuffer alloc(NvU64 size, NvU64 va, bool system_memory = false) {
    NV_MEMORY_ALLOCATION_PARAMS params = memory_allocation_params(root, size, system_memory);
    GpuBuffer buffer;
    buffer.size = size;
    buffer.memory = rm.alloc(nvdevice, system_memory ? NV1_MEMORY_SYSTEM : NV1_MEMORY_USER, params);
    uvm.create_external_range(va, size);
    const NvU32 flags = (NVOS46_FLAGS_PAGE_SIZE_4KB << NVOS46_FLAGS_PAGE_SIZE_SHIFT) |
                        NVOS46_FLAGS_CACHE_SNOOP_ENABLE | NVOS46_FLAGS_DMA_OFFSET_FIXED_TRUE;
    buffer.va = rm.map_memory_dma(nvdevice, virtmem, buffer.memory, size, flags, va);
    uvm.map_external_allocation(va, size, uuid, ctl.get(), root, buffer.memory);
    // One fd per CPU mapping (an fd carries one mmap context for its life): a fresh /dev/nvidiactl fd for system
    // memory, a fresh /dev/nvidiaN fd for video memory (tinygrad's _gpu_map_to_cpu); closed once mapped.
    SeamFd map_fd = system_memory ? SeamFd(seam, "/dev/nvidiactl", O_RDWR) : new_gpu_fd();
    buffer.cpu = static_cast<std::uint8_t*>(rm.map_memory(nvdevice, buffer.memory, size, map_fd.get()));
    cpu_mappings.push_back(buffer);
    return buffer;
  }

  // The channel; `engine_object` receives the handle of its engine_class object.
  NvHandle gpfifo(NvU64 ring_offset, NvU64 userd_offset, NvU32 engine_class, NvU64 uvm_channel_va,
                  const GpuBuffer& notifier, NvHandle& engine_object) {
    NV_CHANNEL_ALLOC_PARAMS params = channel_allocation_params(notifier.memory, gpfifo_area.memory, gpfifo_area.va + ring_offset,
                                                               kRingEntries, ctxshare, gpfifo_area.memory, userd_offset);
    const NvHandle channel = rm.alloc(channel_group, HOPPER_CHANNEL_GPFIFO_A, params);
    engine_object = rm.alloc(channel, engine_class);
    // UVM reserves a VA range for the channel's own buffers; tinygrad gives it a fresh low range.
    uvm.register_channel(uuid, ctl.get(), root, channel, uvm_channel_va, kUvmChannelRangeSize);
    return channel;
  }

  // Steps 11-16: channel group, gpfifo area, context share, compute and copy channels, schedule.
  void channels() {
    NV_CHANNEL_GROUP_ALLOCATION_PARAMETERS group_params{};
    group_params.engineType = NV2080_ENGINE_TYPE_GRAPHICS;
    channel_group = rm.alloc(nvdevice, KEPLER_CHANNEL_GROUP_A, group_params);
    gpfifo_area = alloc(kGpfifoAreaSize, kLowVaBase);
    // One error notifier per channel, as tinygrad gives each GPFIFO its own.
    compute_notifier = alloc(0x10000, kLowVaBase + kGpfifoAreaSize, /*system_memory=*/true);
    copy_notifier = alloc(0x10000, kLowVaBase + kGpfifoAreaSize + 0x10000, /*system_memory=*/true);
    NV_CTXSHARE_ALLOCATION_PARAMETERS share_params{};
    share_params.hVASpace = vaspace;
    share_params.flags = NV_CTXSHARE_ALLOCATION_FLAGS_SUBCONTEXT_ASYNC;
    ctxshare = rm.alloc(channel_group, FERMI_CONTEXT_SHARE_A, share_params);
    compute_channel = gpfifo(0, kComputeUserdOffset, HOPPER_COMPUTE_A, kUvmChannelVaBase, compute_notifier, compute_object);
    compute_token = rm.work_submit_token(compute_channel);
    copy_channel = gpfifo(kCopyRingOffset, kCopyUserdOffset, HOPPER_DMA_COPY_A,
                          kUvmChannelVaBase + kUvmChannelRangeSize, copy_notifier, copy_object);
    copy_token = rm.work_submit_token(copy_channel);
    rm.schedule_channel_group(channel_group);
  }

  ~NvSequence() {
    for (const GpuBuffer& buffer : cpu_mappings) seam.munmap(buffer.cpu, buffer.size);
    if (gpu_mmio != nullptr) seam.munmap(gpu_mmio, NVC361_NV_USERMODE__SIZE);
  }

  kernel_interface::SyscallSeam& seam;
  SeamFd ctl;
  SeamFd uvm_fd;
  SeamFd uvm_fd2;
  SeamFd dev_fd;
  std::string device_path;
  NvRm rm;
  NvUvm uvm;
  NvHandle root = 0;
  NvU32 gpu_id = 0;
  NvHandle nvdevice = 0;
  NvHandle subdevice = 0;
  NvHandle virtmem = 0;
  NvHandle usermode = 0;
  NvHandle vaspace = 0;
  std::uint32_t* gpu_mmio = nullptr;
  NvProcessorUuid uuid{};
  NvHandle channel_group = 0;
  NvHandle ctxshare = 0;
  GpuBuffer gpfifo_area;
  GpuBuffer compute_notifier;  // the compute channel's hObjectError
  GpuBuffer copy_notifier;     // the copy channel's
  NvHandle compute_channel = 0;
  NvHandle copy_channel = 0;
  NvHandle compute_object = 0;  // HOPPER_COMPUTE_A on compute_channel
  NvHandle copy_object = 0;     // HOPPER_DMA_COPY_A on copy_channel
  NvU32 compute_token = 0;
  NvU32 copy_token = 0;
  std::vector<GpuBuffer> cpu_mappings;
};

// Constructed before NvSequence (base classes initialise in order), so the sequence's fds open on a live driver.
struct MockDriverHolder {
  explicit MockDriverHolder(MockGpuConfig config) : driver(std::move(config)) {}
  MockNvDriver driver;
};

// The sequence against the emulated driver, which tests inspect through `driver`.
class NvBringUp : private MockDriverHolder, public NvSequence {
 public:
  explicit NvBringUp(MockGpuConfig config = {}) : MockDriverHolder(std::move(config)), NvSequence(driver) {}
  using MockDriverHolder::driver;
};

}  // namespace doorbell::nv_driver_test
