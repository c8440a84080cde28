#pragma once
// The emulated NVIDIA resource manager: clients and their object trees, the GH100 class list, memory objects backed
// by host memory, GPU VA mappings into GpuMemory, CPU mapping contexts, channel groups and GPFIFO channels. It answers
// the way RM does: an NV_STATUS in the params' status field (NV_ERR_INVALID_CLASS for a class the GPU lacks,
// NV_ERR_OBJECT_NOT_FOUND for an unknown handle or parent, as resserv's clientGetResourceRef answers,
// NV_ERR_INVALID_OBJECT_PARENT for a parent of the wrong class, NV_ERR_INSERT_DUPLICATE_NAME for a handle in use,
// NV_ERR_INVALID_ARGUMENT for a control whose paramsSize is not its struct's); freeing an object frees its children.
// It records an SM's MMU fault for the faulting channel's compute context, as RM's kgrctxRecordMmuFault does, and a
// GT200_DEBUGGER made for that channel's compute object reads it back (NV83DE_CTRL_CMD_DEBUG_READ_MMU_FAULT_INFO).
// Stricter than RM in one way: RM reads alloc params by the class's size whatever paramsSize says; the mock insists
// that paramsSize equals that size (NV_ERR_INVALID_PARAM_STRUCT), so a wrong layout fails here instead of misreading.
// Not thread-safe by itself: MockNvDriver serialises all calls.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "kernel-interface/nvidia/rm_classes.h"
#include "kernel-interface/nvidia/rm_controls.h"
#include "kernel-interface/nvidia/rm_ioctl.h"
#include "kernel-interface/nvidia/rm_status.h"
#include "mockgpu/nv/gpu_memory.h"
#include "mockgpu/nv/mock_rm_backing.h"
#include "mockgpu/nv/mock_rm_gpu.h"
#include "mockgpu/nv/mock_rm_usermode.h"

namespace doorbell::mockgpu::nv {

using kernel_interface::nvidia::NV_STATUS;
using kernel_interface::nvidia::NvHandle;
using kernel_interface::nvidia::NvU32;
using kernel_interface::nvidia::NvU64;

// A GPFIFO channel as the command processor needs it.
struct MockChannel {
  int gpu = 0;                 // which of the driver's GPUs runs it (its device's deviceId)
  NvHandle client = 0;
  NvHandle handle = 0;
  NvU32 hclass = 0;            // e.g. HOPPER_CHANNEL_GPFIFO_A
  NvHandle parent = 0;         // the channel group (or device)
  NvU32 engine_type = 0;       // NV2080_ENGINE_TYPE_* from the alloc params
  NvU32 work_submit_token = 0; // what the CPU writes to the doorbell to kick this channel
  NvU64 gpfifo_va = 0;         // GPU VA of the ring of 8-byte GP entries
  NvU32 gpfifo_entries = 0;
  NvHandle userd_memory = 0;   // hUserdMemory[0]
  NvU64 userd_offset = 0;      // userdOffset[0]
  // Host address of USERD (GPPut at +0x8c, GPGet at +0x88); valid as long as the channel (see `memory`).
  std::uint8_t* userd = nullptr;
  bool scheduled = false;      // GPFIFO_SCHEDULE(bEnable) on its group or itself
  // Host address of the error notifier (hObjectError's memory), where RM writes an NvNotification when the channel
  // faults; null when the channel has none. Valid as long as the channel (see `memory`).
  std::uint8_t* error_notifier = nullptr;
  // The bytes of its USERD and error notifier memory objects: RM's channel holds references to their memory
  // descriptors, so freeing those objects first leaves the bytes to the channel until it is freed (and the GPU
  // never writes a notifier into freed memory).
  std::vector<std::shared_ptr<SharedBacking>> memory;
  std::vector<NvU32> engine_classes;  // compute/copy objects allocated on it, in order
  std::vector<NvHandle> engine_objects;
};

// What mmap of an fd maps after RM_MAP_MEMORY named that fd.
struct CpuMapContext {
  int memfd = -1;
  NvU64 offset = 0;  // into the memfd
  NvU64 length = 0;
  int gpu = 0;                 // the GPU whose memory (or usermode region) it is
  bool system_memory = false;  // NV1_MEMORY_SYSTEM: mapped through a /dev/nvidiactl fd, anything else a /dev/nvidiaN one
};

class MockRm {
 public:
  // One RM for all the machine's GPUs (`gpus[i]` is the one NV0080 deviceId i allocates, with its address space
  // `memories[i]`): a client may hold devices of several GPUs, and each object belongs to its device's GPU.
  MockRm(const std::vector<MockGpuConfig>& gpus, const std::vector<GpuMemory*>& memories);
  ~MockRm();

  // Escape handlers: each sets the params' status.
  void alloc(kernel_interface::nvidia::NVOS21_PARAMETERS& args, int ctl_fd);
  void control(kernel_interface::nvidia::NVOS54_PARAMETERS& args);
  void free(kernel_interface::nvidia::NVOS00_PARAMETERS& args);
  void alloc_memory(kernel_interface::nvidia::NVOS02_PARAMETERS& args);
  std::optional<CpuMapContext> map_memory(kernel_interface::nvidia::NVOS33_PARAMETERS& args);
  void unmap_memory(kernel_interface::nvidia::NVOS34_PARAMETERS& args);
  void map_memory_dma(kernel_interface::nvidia::NVOS46_PARAMETERS& args);
  void unmap_memory_dma(kernel_interface::nvidia::NVOS47_PARAMETERS& args);

  // Closing a ctl fd frees the clients allocated through it, as RM does.
  void free_clients_of_fd(int ctl_fd);
  bool has_clients_of_fd(int ctl_fd) const;

  // Lookups for the UVM driver.
  bool has_client(NvHandle client) const;
  bool is_object_of_class(NvHandle client, NvHandle handle, std::initializer_list<NvU32> classes) const;
  bool is_channel(NvHandle client, NvHandle handle) const;
  // The host bytes of [offset, offset + length) of a memory object, or the failure status.
  NV_STATUS memory_bytes(NvHandle client, NvHandle memory, NvU64 offset, NvU64 length, std::uint8_t** host) const;
  // The tag GpuMemory carries for mappings of this memory object.
  static std::uint64_t owner_tag(NvHandle client, NvHandle memory) {
    return (static_cast<std::uint64_t>(client) << 32) | memory;
  }

  // For the emulated command processors: every channel, or those of GPU `gpu`.
  std::vector<MockChannel> channels() const;
  std::vector<MockChannel> channels(int gpu) const;
  // An SM's MMU fault on `channel`: kept for the debugger objects of the channel's compute object. Ignored when the
  // channel is gone (freed while its last work ran).
  void record_mmu_fault(NvHandle client, NvHandle channel,
                        const kernel_interface::nvidia::NV83DE_CTRL_DEBUG_READ_MMU_FAULT_INFO_ENTRY& fault);
  std::optional<MockChannel> channel_by_token(NvU32 token, int gpu = 0) const;
  // The channels an RM_FREE of `handle` takes down (it and its descendants), and those of the clients a close of
  // `ctl_fd` frees: RM preempts them before it frees anything (MockNvDriver's preempt hook).
  std::vector<MockChannel> channels_freed_with(NvHandle client, NvHandle handle) const;
  std::vector<MockChannel> channels_of_fd(int ctl_fd) const;
  UsermodeRegion& usermode(int gpu = 0) { return gpus_.at(static_cast<std::size_t>(gpu))->usermode; }
  std::size_t object_count() const;
  bool has_object(NvHandle client, NvHandle handle) const;

 private:
  struct Object;
  struct Client;
  struct VirtualRange;
  // One GPU's state: what it reports, offers and holds.
  struct Gpu {
    MockGpuConfig config;
    std::vector<NvU32> class_list;
    GpuMemory* memory = nullptr;
    UsermodeRegion usermode;
    NvU64 vram_in_use = 0;
    NvU32 next_channel_id = 0;  // work-submit tokens are per GPU (a channel id of its runlist)
  };
  Gpu& gpu_of(const Object& object) const;

  Client* find_client(NvHandle client);
  const Client* find_client(NvHandle client) const;
  Object* find(NvHandle client, NvHandle handle);
  const Object* find(NvHandle client, NvHandle handle) const;
  NV_STATUS alloc_root_client(kernel_interface::nvidia::NVOS21_PARAMETERS& args, int ctl_fd);
  NV_STATUS alloc_object(kernel_interface::nvidia::NVOS21_PARAMETERS& args);
  NV_STATUS construct(Client& client, Object& object, const Object& parent, void* params);
  NV_STATUS construct_memory(Object& object, void* params);
  NV_STATUS construct_channel(Client& client, Object& object, const Object& parent, void* params);
  NV_STATUS construct_engine(Object& object, Object& parent);
  NV_STATUS construct_debugger(Client& client, Object& object, void* params);
  void free_tree(Client& client, NvHandle handle);
  void destroy(Client& client, Object& object);
  NV_STATUS run_control(Client& client, Object& object, NvU32 cmd, void* params, NvU32 size);
  NV_STATUS control_client(Client& client, NvU32 cmd, void* params);
  NV_STATUS control_device(const Object& device, NvU32 cmd, void* params);
  NV_STATUS control_subdevice(const Object& subdevice, NvU32 cmd, void* params);
  NV_STATUS control_channel(Client& client, Object& object, NvU32 cmd, void* params);
  NV_STATUS control_debugger(const Object& debugger, NvU32 cmd, void* params) const;

  std::vector<std::unique_ptr<Gpu>> gpus_;
  std::map<NvHandle, std::unique_ptr<Client>> clients_;
  NvHandle next_client_ = 0xc1d00001;
  NvHandle next_generated_handle_ = 0xcf000001;
};

}  // namespace doorbell::mockgpu::nv
