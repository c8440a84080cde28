// An emulated AMD machine for the AMD device's tests: the emulated KFD (mockgpu/amd/mock_kfd.h) with the PM4 and SDMA
// engines (queue_engine.h) and the shader core (shader_core.h) wired in, one 7900 XTX (gfx1100) unless told.
#pragma once
#include <memory>

#include "hcq/amd/amd_device.h"
#include "mockgpu/amd/mock_amd_config.h"
#include "mockgpu/amd/mock_amd_seam.h"
#include "mockgpu/amd/queue_engine.h"
#include "mockgpu/amd/shader_core.h"

namespace doorbell::amd {

inline mockgpu::amd::MockKfdOptions amd_test_machine(int gpus = 1) {
  namespace m = mockgpu::amd;
  m::MockKfdOptions o;
  o.gpus = m::mock_amd_configs(gpus);
  o.make_engine = [](const m::QueueDesc& q, m::EngineHooks hooks) -> std::unique_ptr<m::QueueEngine> {
    if (q.kind == m::QueueDesc::Kind::kPm4Compute) return m::make_pm4_engine(q, std::move(hooks));
    return m::make_sdma_engine(q, std::move(hooks));
  };
  o.run_dispatch = m::run_dispatch;
  return o;
}

inline std::unique_ptr<AmdDevice> open_amd_test_device() {
  return AmdDevice::open(std::make_unique<mockgpu::amd::MockAmdSeam>(amd_test_machine()));
}

}  // namespace doorbell::amd
