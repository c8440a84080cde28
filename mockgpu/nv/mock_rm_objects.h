#pragma once
// The emulated RM's object records, shared by mock_rm.cpp and mock_rm_controls.cpp only.

#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "mockgpu/nv/mock_rm.h"

namespace doorbell::mockgpu::nv {

struct MockRm::Object {
  NvHandle handle = 0;
  NvHandle parent = 0;
  NvU32 hclass = 0;
  int gpu = -1;  // the GPU of its device (NV01_DEVICE_0's deviceId), inherited by everything under it; -1: a client
  std::vector<NvHandle> children;
  // Memory objects: the bytes (own backing, or user memory for an OS descriptor) and their size.
  std::shared_ptr<SharedBacking> backing;  // shared with the channels whose USERD or error notifier lives in it
  std::uint8_t* host = nullptr;
  NvU64 size = 0;
  // NV01_MEMORY_VIRTUAL: the VA window and the next VA handed out to an unfixed mapping.
  NvU64 va_start = 0;
  NvU64 va_limit = 0;
  NvU64 next_va = 0;
  // Channel groups: scheduled; channels: their description.
  bool scheduled = false;
  std::optional<MockChannel> channel;
  std::shared_ptr<SharedBacking> internal_userd;
  // Channels: the MMU faults of its SMs, oldest first (RM keeps them with the channel's graphics context).
  std::deque<kernel_interface::nvidia::NV83DE_CTRL_DEBUG_READ_MMU_FAULT_INFO_ENTRY> mmu_faults;
  // GT200_DEBUGGER: the compute object it debugs (hAppClient, hClass3dObject).
  NvHandle debugged_client = 0;
  NvHandle debugged_object = 0;
};

struct MockRm::Client {
  NvHandle handle = 0;
  int ctl_fd = -1;
  std::map<NvHandle, Object> objects;
};

}  // namespace doorbell::mockgpu::nv
