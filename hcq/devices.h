// The process's devices by name (tinygrad's Device[...]): "CPU" is the CPU HCQ device, created on first use with
// a worker per core. Device("CPU").synchronize() waits for everything submitted to it.
#pragma once
#include <string>

#include "hcq/device.h"

namespace doorbell {

// Throws std::invalid_argument naming the device and the devices that exist.
Device& device(const std::string& name = "CPU");

}  // namespace doorbell
