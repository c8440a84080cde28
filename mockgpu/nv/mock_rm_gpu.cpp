#include "mockgpu/nv/mock_rm_gpu.h"

#include <stdexcept>
#include <string>

#include "kernel-interface/nvidia/rm_classes.h"

namespace doorbell::mockgpu::nv {

namespace ki = doorbell::kernel_interface::nvidia;

std::vector<MockGpuConfig> mock_gpu_configs(int count, const MockGpuConfig& first) {
  if (count < 1 || count > 16)
    throw std::invalid_argument("mockgpu: a machine of " + std::to_string(count) + " NVIDIA GPUs; expected 1 to 16");
  std::vector<MockGpuConfig> gpus;
  for (int i = 0; i < count; ++i) {
    MockGpuConfig gpu = first;
    gpu.pci_bus = static_cast<std::uint8_t>(first.pci_bus + i);
    gpu.gpu_id = static_cast<std::uint32_t>(gpu.pci_bus) << 8;
    gpu.uuid.back() = static_cast<std::uint8_t>(first.uuid.back() + i);
    gpus.push_back(std::move(gpu));
  }
  return gpus;
}

std::vector<std::uint32_t> gh100_class_list() {
  return {
      // with an engine
      ki::HOPPER_COMPUTE_A, ki::HOPPER_DMA_COPY_A, ki::HOPPER_CHANNEL_GPFIFO_A, ki::AMPERE_CHANNEL_GPFIFO_A,
      ki::TURING_CHANNEL_GPFIFO_A, ki::VOLTA_CHANNEL_GPFIFO_A, ki::HOPPER_USERMODE_A, ki::AMPERE_USERMODE_A,
      ki::TURING_USERMODE_A, ki::VOLTA_USERMODE_A, ki::KEPLER_CHANNEL_GROUP_A, ki::FERMI_CONTEXT_SHARE_A,
      ki::FERMI_VASPACE_A, ki::NV01_MEMORY_VIRTUAL, ki::NV1_MEMORY_USER, ki::HOPPER_A, ki::KEPLER_INLINE_TO_MEMORY_B,
      0xb8b0 /* NVB8B0_VIDEO_DECODER */, 0xb8d1 /* NVB8D1_VIDEO_NVJPG */, 0xb8fa /* NVB8FA_VIDEO_OFA */,
      // without an engine
      ki::NV1_MEMORY_SYSTEM, ki::NV01_MEMORY_SYSTEM_OS_DESCRIPTOR, ki::GT200_DEBUGGER,
      0xb2cc /* MAXWELL_PROFILER_DEVICE */,
  };
}

std::vector<std::uint32_t> ga10x_class_list() {
  return {
      ki::AMPERE_COMPUTE_B, ki::AMPERE_DMA_COPY_B, ki::AMPERE_CHANNEL_GPFIFO_A, ki::TURING_CHANNEL_GPFIFO_A,
      ki::VOLTA_CHANNEL_GPFIFO_A, ki::AMPERE_USERMODE_A, ki::TURING_USERMODE_A, ki::VOLTA_USERMODE_A,
      ki::KEPLER_CHANNEL_GROUP_A, ki::FERMI_CONTEXT_SHARE_A, ki::FERMI_VASPACE_A, ki::NV01_MEMORY_VIRTUAL,
      ki::NV1_MEMORY_USER, ki::KEPLER_INLINE_TO_MEMORY_B, ki::NV1_MEMORY_SYSTEM, ki::NV01_MEMORY_SYSTEM_OS_DESCRIPTOR,
      ki::GT200_DEBUGGER,
  };
}

}  // namespace doorbell::mockgpu::nv
