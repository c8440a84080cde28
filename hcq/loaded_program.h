// A PROGRAM (compiler/program.h) loaded by a device (Device::load): what an exec command launches. The device that
// loaded it knows its concrete type (hcq/nv/nv_program.h: code in GPU memory and what its QMD needs); a queue only
// carries the pointer. A host device's programs (the CPU's ELF code, the reference interpreter) run on the device's
// worker threads through HostProgram::run.
#pragma once
#include <cstdint>
#include <string>

namespace doorbell {

class LoadedProgram {
 public:
  virtual ~LoadedProgram() = default;
  virtual const std::string& name() const = 0;
  virtual const std::string& device() const = 0;  // the device it was loaded on
};

class HostProgram : public LoadedProgram {
 public:
  HostProgram(std::string name, std::string device) : name_(std::move(name)), device_(std::move(device)) {}
  const std::string& name() const override { return name_; }
  const std::string& device() const override { return device_; }
  // One core's share of the kernel (the calling convention of compiler/cpu_kernel_abi.h): buffers[i] is the address
  // of buffer slot i, vars the variables' values.
  virtual void run(void* const* buffers, const int64_t* vars, int32_t core_id, int32_t core_count) const = 0;

 private:
  std::string name_, device_;
};

}  // namespace doorbell
