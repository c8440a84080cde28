#pragma once
// Which kernel driver a device talks to. A device asks for the seam of its driver by name ("nvidia") and gets the
// running kernel's (LinuxSyscalls), or, with MOCKGPU=1 in the environment, the emulator this program installed.
// The runtime links no emulator: a program that wants one links doorbell_mockgpu and calls mockgpu::install()
// (mockgpu/install.h), which registers its emulators here. Thread-safe.
#include <functional>
#include <memory>
#include <string_view>

#include "kernel-interface/syscall_seam.h"

namespace doorbell::kernel_interface {

// Builds one emulated driver behind a fresh seam; the seam owns everything it emulates (driver and GPU).
using DriverSeamFactory = std::function<std::unique_ptr<SyscallSeam>()>;

// Installs the emulator of `driver` (replacing one installed before); an empty factory uninstalls it.
void register_emulated_driver(std::string_view driver, DriverSeamFactory factory);
bool emulated_driver_registered(std::string_view driver);

// MOCKGPU=1 in the environment: devices run on emulated drivers.
bool mockgpu_requested();

// The seam of `driver`: under MOCKGPU=1 a new emulated one, else the kernel's. Throws std::runtime_error naming the
// driver and what to link and call when MOCKGPU=1 asks for an emulator this program did not install.
std::unique_ptr<SyscallSeam> open_driver_seam(std::string_view driver);

}  // namespace doorbell::kernel_interface
