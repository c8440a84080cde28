// A one-kernel tensor program compiled for a GPU device's target and loaded on that device, with its launch dims:
// what the device check and its experiments launch by hand through HWQueue.
#pragma once
#include <array>
#include <cstdint>
#include <stdexcept>

#include "compiler/program.h"
#include "frontend/tensor.h"
#include "hcq/device.h"

namespace doorbell {

struct DeviceKernel {
  const LoadedProgram* program = nullptr;
  std::array<uint32_t, 3> grid{}, block{};
  UOp call;      // the CALL: its sources are the output and input buffers, in the order exec takes them
  UOp compiled;  // the PROGRAM: held so the device keeps `program` loaded (hcq/device.h program())
};

inline DeviceKernel load_device_kernel(Device& d, const Tensor& t) {
  UOp linear = t.schedule_linear();
  if (linear.src().size() != 1) throw std::runtime_error("expected one kernel, got " + std::to_string(linear.src().size()));
  UOp program = compile_program(linear.src(0), d.target()).program;
  const ProgramInfo& info = program_info(program);
  auto dims = [](const std::array<int64_t, 3>& a) {
    return std::array<uint32_t, 3>{static_cast<uint32_t>(a[0]), static_cast<uint32_t>(a[1]), static_cast<uint32_t>(a[2])};
  };
  return DeviceKernel{&d.program(program), dims(info.global_size), dims(info.local_size), linear.src(0), program};
}

}  // namespace doorbell
