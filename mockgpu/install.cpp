#include "mockgpu/install.h"

#include <cstdlib>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>

#include "kernel-interface/driver_seams.h"
#include "mockgpu/amd/mock_amd_seam.h"
#include "mockgpu/amd/queue_engine.h"
#include "mockgpu/amd/shader_core.h"
#include "mockgpu/nv/mock_nv_seam.h"

namespace doorbell::mockgpu {

namespace {
int gpu_count_from_environment(const char* variable, const char* vendor) {
  const char* text = std::getenv(variable);
  if (text == nullptr || *text == '\0') return 1;
  const std::string value = text;
  int count = 0;
  for (const char c : value) {
    if (c < '0' || c > '9' || count > 16) {
      count = -1;
      break;
    }
    count = count * 10 + (c - '0');
  }
  if (count < 1 || count > 16)
    throw std::invalid_argument(std::string(variable) + "=" + value + ": expected how many emulated " + vendor +
                                " GPUs, 1 to 16");
  return count;
}
}  // namespace

int nv_gpu_count_from_environment() { return gpu_count_from_environment("MOCKGPU_NV_GPUS", "NVIDIA"); }
int amd_gpu_count_from_environment() { return gpu_count_from_environment("MOCKGPU_AMD_GPUS", "AMD"); }

amd::MockKfdOptions amd_machine_options(int gpus) {
  amd::MockKfdOptions options;
  options.gpus = amd::mock_amd_configs(gpus);
  // The queue engines (mockgpu/amd/queue_engine.h) and the shader core (shader_core.h) of the emulated GPU.
  options.make_engine = amd::make_queue_engine;
  options.run_dispatch = amd::run_dispatch;
  return options;
}

void install() {
  kernel_interface::register_emulated_driver("nvidia", [] {
    // One machine for every device open at once, as one driver serves every GPU of a real machine: NV and NV:1 are
    // two GPUs of it. A new one is made once every device on the last one is gone.
    static std::mutex mutex;
    static std::weak_ptr<nv::MockNvSeam> current;
    std::lock_guard lock(mutex);
    std::shared_ptr<nv::MockNvSeam> machine = current.lock();
    if (machine == nullptr) {
      machine = std::make_shared<nv::MockNvSeam>(nv::mock_gpu_configs(nv_gpu_count_from_environment()));
      current = machine;
    }
    return std::make_unique<nv::SharedMockNvSeam>(std::move(machine));
  });
  kernel_interface::register_emulated_driver("amd", [] {
    // As for "nvidia": one machine (one KFD) for every device open at once; AMD:1 is its second GPU.
    static std::mutex mutex;
    static std::weak_ptr<amd::MockAmdSeam> current;
    std::lock_guard lock(mutex);
    std::shared_ptr<amd::MockAmdSeam> machine = current.lock();
    if (machine == nullptr) {
      machine = std::make_shared<amd::MockAmdSeam>(amd_machine_options(amd_gpu_count_from_environment()));
      current = machine;
    }
    return std::make_unique<amd::SharedMockAmdSeam>(std::move(machine));
  });
}

}  // namespace doorbell::mockgpu
