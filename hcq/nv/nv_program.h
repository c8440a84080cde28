// A kernel loaded on an NV device: its code in GPU memory and what its QMD needs. On hardware the code is the SASS of
// the cubin ptxas makes from our PTX (registers, shared memory and the parameters' place in constant bank 0 read
// from the cubin, compiler/gpu/cubin_reader.h); on the emulated GPU (MOCKGPU=1) the "code" is the PTX text itself,
// NUL-terminated, which the emulated SM interprets (mockgpu/nv/ptx_sm.h). Everything else is the same bytes.
#pragma once
#include <array>
#include <cstdint>
#include <string>

#include "hcq/hw_queue.h"
#include "hcq/nv/nv_session.h"
#include "hcq/nv/qmd.h"

namespace doorbell::nv {

// Where sm_90 code reads its parameters in constant bank 0 (EIATTR_PARAM_CBANK, firmware-notes/nvidia-hopper.md §14).
inline constexpr uint32_t kSm90ParamOffset = 0x210;

class NvProgram final : public LoadedProgram {
 public:
  NvProgram(std::string name, std::string device, NvMemory image) : name_(std::move(name)), device_(std::move(device)), image_(image) {}
  const std::string& name() const override { return name_; }
  const std::string& device() const override { return device_; }

  const NvMemory& image() const { return image_; }
  uint64_t code_address = 0;      // the first instruction (or the PTX text) in GPU memory
  uint32_t code_bytes = 0;
  uint32_t registers = 0;         // per thread (EIATTR_REGCOUNT); 0 on the emulated GPU, which has no SASS
  uint32_t shared_bytes = 0;      // static shared memory the code declares
  uint32_t param_offset = kSm90ParamOffset;
  uint32_t param_count = 0;       // 8-byte pointer parameters data0..
  uint32_t constant0_bytes = 0;   // size of constant bank 0: driver words, then the parameters
  // Banks 1..7 the code reads (the cubin's .nv.constantN, uploaded after the code); entry 0 stays empty.
  std::array<QmdConstantBuffer, kQmdConstantBuffers> constant_banks{};
  uint32_t local_bytes_per_thread = 0;  // the QMD's SHADER_LOCAL_MEMORY_HIGH_SIZE; 0 without a stack

 private:
  std::string name_, device_;
  NvMemory image_;
};

}  // namespace doorbell::nv
