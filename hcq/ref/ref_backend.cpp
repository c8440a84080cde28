// The REF backend's registration (hcq/backend.h): the reference interpreter as a device (hcq/ref/ref_device.h).
#include <stdexcept>

#include "hcq/backend.h"
#include "hcq/ref/ref_device.h"

namespace doorbell {
namespace {

[[maybe_unused]] const bool kRegistered = register_backend({
    .prefix = "REF",
    .description = "the reference interpreter: every kernel element by element on the host, with the IR's semantics",
    .renderers = {},
    .open = [](const DeviceName& name) -> std::unique_ptr<Device> {
      if (name.index != 0) throw std::invalid_argument("device " + name.canonical() + ": the REF backend has one device, REF");
      return std::make_unique<RefDevice>(name.canonical());
    },
});

}  // namespace
}  // namespace doorbell
