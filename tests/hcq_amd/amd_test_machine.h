// An emulated AMD machine for the AMD device's tests: what MOCKGPU=1 installs (mockgpu/install.h
// amd_machine_options: the emulated KFD with the PM4 and SDMA engines and the shader core), on a seam of the test's own.
#pragma once
#include <memory>

#include "hcq/amd/amd_device.h"
#include "mockgpu/amd/mock_amd_seam.h"
#include "mockgpu/install.h"

namespace doorbell::amd {

inline std::unique_ptr<AmdDevice> open_amd_test_device() {
  return AmdDevice::open(std::make_unique<mockgpu::amd::MockAmdSeam>(mockgpu::amd_machine_options(1)));
}

}  // namespace doorbell::amd
