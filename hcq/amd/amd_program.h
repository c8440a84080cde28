// A kernel loaded on an AMD device: its code object's image in video memory (hcq/amd/amd_code_image.h: the PT_LOAD
// segments at a 256-byte aligned base), the descriptor a dispatch names (<name>.kd, at kd_va) and the kernarg
// segment's layout from the metadata: the explicit arguments (the buffers, then the variables) and, when the kernel
// reads any, the COV5 hidden arguments.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "compiler/gpu/amd_code_object.h"
#include "hcq/amd/amd_code_image.h"
#include "hcq/amd/amd_session.h"
#include "hcq/loaded_program.h"

namespace doorbell::amd {

class AmdProgram final : public LoadedProgram {
 public:
  AmdProgram(std::string name, std::string device, AmdMemory image) : name_(std::move(name)), device_(std::move(device)), image_(image) {}
  const std::string& name() const override { return name_; }
  const std::string& device() const override { return device_; }
  const AmdMemory& image() const { return image_; }

  KernelDescriptor kd;
  uint64_t kd_va = 0;
  std::vector<AmdKernelArg> explicit_args;
  std::optional<uint32_t> hidden_offset;
  uint32_t kernarg_size = 0, kernarg_alignment = 8;
  // Bytes each dispatch takes from the kernarg memory: the segment (hidden arguments included, 256 bytes of them),
  // then the HSA dispatch packet at packet_offset when the descriptor enables DISPATCH_PTR.
  uint32_t kernarg_bytes = 0;
  std::optional<uint32_t> packet_offset;
  size_t dispatch_dwords = 0;  // what write_dispatch writes for it (its user SGPRs fix the count)

 private:
  std::string name_, device_;
  AmdMemory image_;
};

}  // namespace doorbell::amd
