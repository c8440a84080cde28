// The KFD topology in sysfs (/sys/devices/virtual/kfd/kfd/topology/nodes/<n>/: gpu_id, name, properties), read
// through the syscall seam, and the queue buffer sizes the KFD requires of a node (firmware-notes/amd-kfd.md: the
// EOP size, the control stack and context save area formulas of amdkfd/kfd_queue.c).
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "kernel-interface/syscall_seam.h"

namespace doorbell::kernel_interface::amd {

struct KfdNode {
  int index = 0;          // <n> in the sysfs path
  uint32_t gpu_id = 0;    // 0 for a CPU node
  std::string name;       // "gfx1100"? as the node's name file says
  std::map<std::string, uint64_t> properties;  // the properties file's "key value" lines with decimal values
  // Lines whose value is not decimal (a kernel patch once printed unique_id in hex), kept as text so that one odd
  // property does not make the node unreadable.
  std::map<std::string, std::string> non_decimal_properties;
  // A property; throws std::runtime_error naming the node and the key when absent (or not decimal).
  uint64_t property(const std::string& key) const;
  uint32_t gfx_target_version() const { return static_cast<uint32_t>(property("gfx_target_version")); }
  uint32_t drm_render_minor() const { return static_cast<uint32_t>(property("drm_render_minor")); }
  // "gfx1100", "gfx942": from gfx_target_version (major, minor, stepping as hex digits).
  std::string gfx_arch() const;
};

// Every node (nodes 0, 1, ... until one's gpu_id file is missing). Throws naming the path when the topology is
// unreadable, including when node 0 is missing (no KFD).
std::vector<KfdNode> read_kfd_topology(SyscallSeam& seam,
                                       const std::string& root = "/sys/devices/virtual/kfd/kfd/topology/nodes");
// The GPU nodes (gpu_id != 0), in node order.
std::vector<KfdNode> kfd_gpu_nodes(const std::vector<KfdNode>& nodes);

struct QueueBufferSizes {
  uint32_t eop_bytes = 4096;
  uint32_t ctl_stack_bytes = 0;     // CREATE_QUEUE ctl_stack_size
  uint32_t cwsr_bytes = 0;          // CREATE_QUEUE ctx_save_restore_size (per XCC)
  uint32_t debug_memory_bytes = 0;
  uint64_t cwsr_allocation_bytes = 0;  // ALIGN((cwsr + debug) * num_xcc, 4096)
};
// Throws std::invalid_argument naming the property when the node lacks one the formula needs.
QueueBufferSizes queue_buffer_sizes(const KfdNode& node);

}  // namespace doorbell::kernel_interface::amd
