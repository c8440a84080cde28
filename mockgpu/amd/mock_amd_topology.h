// The emulated machine's KFD topology as the kernel shows it in sysfs (firmware-notes/amd-kfd.md §K9): node 0 is the
// CPU, nodes 1..N the GPUs, each with gpu_id, name, properties and mem_banks/0/properties, plus the queue buffer
// sizes the KFD computes for a node (kfd_queue.c; §K6), which CREATE_QUEUE enforces.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "mockgpu/amd/mock_amd_config.h"

namespace doorbell::mockgpu::amd {

inline constexpr char kKfdTopologyNodes[] = "/sys/devices/virtual/kfd/kfd/topology/nodes";

// The text of a sysfs file of the topology (or of /sys/class/drm/renderD<minor>/device/ip_discovery/...), or nullopt
// when the machine has no such file.
std::optional<std::string> topology_file(const std::vector<MockAmdGpuConfig>& gpus, const std::string& path);

// The GPU node's `properties` file ("key value" lines, decimal, in the kernel's order).
std::string gpu_node_properties(const MockAmdGpuConfig& gpu, int node_index);

struct NodeQueueSizes {
  uint32_t eop_bytes = 4096;
  uint32_t ctl_stack_bytes = 0;
  uint32_t cwsr_bytes = 0;  // per XCC: ctl_stack + work-group data
  uint32_t debug_memory_bytes = 0;
  uint64_t cwsr_allocation_bytes = 0;  // ALIGN((cwsr + debug) * num_xcc, 4096)
};
NodeQueueSizes node_queue_sizes(const MockAmdGpuConfig& gpu);

}  // namespace doorbell::mockgpu::amd
