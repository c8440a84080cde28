#include "mockgpu/install.h"

#include <cstdlib>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>

#include "kernel-interface/driver_seams.h"
#include "mockgpu/nv/mock_nv_seam.h"

namespace doorbell::mockgpu {

int nv_gpu_count_from_environment() {
  const char* text = std::getenv("MOCKGPU_NV_GPUS");
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
    throw std::invalid_argument("MOCKGPU_NV_GPUS=" + value + ": expected how many emulated NVIDIA GPUs, 1 to 16");
  return count;
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
}

}  // namespace doorbell::mockgpu
