// The process's devices by name (tinygrad's Device[...]): each opened on first use by its backend's registration
// (hcq/backend.h) and kept until the process ends (kernels may run until then). Device("CPU").synchronize() waits for
// everything submitted to it. Names are parsed by parse_device_name: "nv", "NV" and "NV:0" are one device.
#pragma once
#include <string>

#include "hcq/device.h"

namespace doorbell {

// Throws std::invalid_argument naming the text and the backends there are, or the backend's error when it cannot
// open the device (no driver, no such GPU).
Device& device(const std::string& name = "CPU");

}  // namespace doorbell
