#include "mockgpu/install.h"

#include <memory>

#include "kernel-interface/driver_seams.h"
#include "mockgpu/nv/mock_nv_seam.h"

namespace doorbell::mockgpu {

void install() {
  kernel_interface::register_emulated_driver("nvidia", [] { return std::make_unique<nv::MockNvSeam>(); });
}

}  // namespace doorbell::mockgpu
