// Settings read from the environment once, each with an override for tests and tools (tinygrad's getenv
// settings). DEBUG is in ir/debug.h; NOOPT belongs to the optimizer (compiler/optimizer.h).
#pragma once
#include <string>

namespace doorbell {

// DEV: the device new buffers are made on; "CPU" when unset. Upper-cased ("cpu" names CPU).
std::string default_device_name();
void set_default_device_name(std::string name);

}  // namespace doorbell
