#pragma once
// The emulated GPU's usermode region (HOPPER_USERMODE_A, 64 KiB), where the CPU kicks a channel by writing its work
// submit token to the doorbell register NVC361_NOTIFY_CHANNEL_PENDING (+0x90).
//
// The CPU writes plain memory (through its mmap of the region), so nothing can call back on the write. Instead the
// register holds kNoDoorbell while idle, and a GPU thread takes a doorbell by atomically exchanging it back to
// kNoDoorbell: take_doorbell() polls once, wait_doorbell() polls until a deadline. Two doorbells written before the GPU
// thread looks coalesce into the last token, so on any doorbell the command processor should scan every channel's
// GPPut rather than only the named channel.

#include <chrono>
#include <cstdint>
#include <optional>

#include "mockgpu/nv/mock_rm_backing.h"

namespace doorbell::mockgpu::nv {

class UsermodeRegion {
 public:
  static constexpr std::uint32_t kNoDoorbell = 0xffffffff;

  UsermodeRegion();

  SharedBacking& backing() { return backing_; }
  // The doorbell register in the mock's own view of the region (the CPU's mmap aliases the same page).
  std::uint32_t* doorbell_register() const;
  // The token written since the last take, if any.
  std::optional<std::uint32_t> take_doorbell();
  // Polls until a token arrives or `timeout` passes.
  std::optional<std::uint32_t> wait_doorbell(std::chrono::nanoseconds timeout);

 private:
  SharedBacking backing_;
};

}  // namespace doorbell::mockgpu::nv
