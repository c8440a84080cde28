#include "mockgpu/amd/mock_amd_topology.h"

#include <algorithm>
#include <string_view>

namespace doorbell::mockgpu::amd {

namespace {
uint64_t align_up(uint64_t value, uint64_t alignment) { return (value + alignment - 1) / alignment * alignment; }

std::string key_lines(const std::vector<std::pair<std::string, uint64_t>>& pairs) {
  std::string text;
  for (const auto& [key, value] : pairs) text += key + " " + std::to_string(value) + "\n";
  return text;
}

std::string cpu_node_properties() {
  // A CPU node: no SIMDs, gpu_id 0 (firmware-notes/amd-kfd.md §K9). No io_links are emulated.
  return key_lines({{"cpu_cores_count", 16}, {"simd_count", 0}, {"mem_banks_count", 1}, {"caches_count", 0},
                    {"io_links_count", 0}, {"p2p_links_count", 0}, {"cpu_core_id_base", 0},
                    {"simd_id_base", 0}, {"max_waves_per_simd", 0}, {"lds_size_in_kb", 0}, {"gds_size_in_kb", 0},
                    {"num_gws", 0}, {"wave_front_size", 0}, {"array_count", 0}, {"simd_arrays_per_engine", 0},
                    {"cu_per_simd_array", 0}, {"simd_per_cu", 0}, {"max_slots_scratch_cu", 0},
                    {"gfx_target_version", 0}, {"vendor_id", 0}, {"device_id", 0}, {"location_id", 0}, {"domain", 0},
                    {"drm_render_minor", 0}, {"hive_id", 0}, {"num_sdma_engines", 0}, {"num_sdma_xgmi_engines", 0},
                    {"num_sdma_queues_per_engine", 0}, {"num_cp_queues", 0}, {"max_engine_clk_ccompute", 3000}});
}
}  // namespace

std::string gpu_node_properties(const MockAmdGpuConfig& g, int node_index) {
  // Key order and names of a real gfx1100 dump (firmware-notes/amd-kfd.md §K9).
  return key_lines({{"cpu_cores_count", 0}, {"simd_count", g.simd_count}, {"mem_banks_count", 1}, {"caches_count", 0},
                    {"io_links_count", 0}, {"p2p_links_count", 0}, {"cpu_core_id_base", 0},
                    {"simd_id_base", 0x80000000u + static_cast<uint64_t>(node_index) * 0x1000},
                    {"max_waves_per_simd", g.max_waves_per_simd}, {"lds_size_in_kb", g.lds_size_in_kb},
                    {"gds_size_in_kb", g.gds_size_in_kb}, {"num_gws", 0}, {"wave_front_size", g.wave_front_size},
                    {"array_count", g.array_count}, {"simd_arrays_per_engine", g.simd_arrays_per_engine},
                    {"cu_per_simd_array", g.cu_per_simd_array}, {"simd_per_cu", g.simd_per_cu},
                    {"max_slots_scratch_cu", g.max_slots_scratch_cu}, {"gfx_target_version", g.gfx_target_version},
                    {"vendor_id", g.vendor_id}, {"device_id", g.device_id}, {"location_id", g.location_id},
                    {"domain", g.domain}, {"drm_render_minor", g.drm_render_minor}, {"hive_id", 0},
                    {"num_sdma_engines", g.num_sdma_engines}, {"num_sdma_xgmi_engines", g.num_sdma_xgmi_engines},
                    {"num_sdma_queues_per_engine", g.num_sdma_queues_per_engine}, {"num_cp_queues", g.num_cp_queues},
                    {"max_engine_clk_fcompute", g.max_engine_clk_fcompute}, {"local_mem_size", 0},
                    {"fw_version", 0}, {"capability", 0}, {"debug_prop", 0}, {"sdma_fw_version", 0},
                    {"unique_id", 0x1000 + static_cast<uint64_t>(g.gpu_id)}, {"num_xcc", g.num_xcc},
                    {"max_engine_clk_ccompute", g.max_engine_clk_ccompute}});
}

std::optional<std::string> topology_file(const std::vector<MockAmdGpuConfig>& gpus, const std::string& path) {
  const std::string_view nodes = kKfdTopologyNodes;
  if (path.rfind(nodes, 0) == 0 && path.size() > nodes.size() + 1 && path[nodes.size()] == '/') {
    const std::string rest = path.substr(nodes.size() + 1);
    const auto slash = rest.find('/');
    if (slash == std::string::npos || slash == 0) return std::nullopt;
    const std::string number = rest.substr(0, slash), file = rest.substr(slash + 1);
    if (!std::all_of(number.begin(), number.end(), [](char c) { return c >= '0' && c <= '9'; }) ||
        number.size() > 3) {
      return std::nullopt;
    }
    const int node = std::stoi(number);
    if (node > static_cast<int>(gpus.size())) return std::nullopt;
    if (node == 0) {
      if (file == "gpu_id") return "0\n";
      if (file == "name") return "\n";
      if (file == "properties") return cpu_node_properties();
      if (file == "mem_banks/0/properties") return key_lines({{"heap_type", 0}, {"size_in_bytes", 64ull << 30},
                                                               {"flags", 0}, {"width", 64}, {"mem_clk_max", 4800}});
      return std::nullopt;
    }
    const MockAmdGpuConfig& g = gpus[static_cast<std::size_t>(node - 1)];
    if (file == "gpu_id") return std::to_string(g.gpu_id) + "\n";
    if (file == "name") return g.name + "\n";
    if (file == "properties") return gpu_node_properties(g, node);
    // heap_type 1: HSA_HEAPTYPE_FRAME_BUFFER_PRIVATE (local VRAM).
    if (file == "mem_banks/0/properties")
      return key_lines({{"heap_type", 1}, {"size_in_bytes", g.vram_bytes}, {"flags", 0}, {"width", 384},
                        {"mem_clk_max", 1250}});
    return std::nullopt;
  }
  // IP versions: /sys/class/drm/renderD<minor>/device/ip_discovery/die/0/<HWID>/0/{major,minor,revision}, GC = 11.
  for (const MockAmdGpuConfig& g : gpus) {
    const std::string gc = "/sys/class/drm/renderD" + std::to_string(g.drm_render_minor) +
                           "/device/ip_discovery/die/0/11/0/";
    const uint32_t v = g.gfx_target_version;  // GC major.minor.stepping from the target version
    if (path == gc + "major") return std::to_string(v / 10000) + "\n";
    if (path == gc + "minor") return std::to_string(v / 100 % 100) + "\n";
    if (path == gc + "revision") return std::to_string(v % 100) + "\n";
  }
  return std::nullopt;
}

NodeQueueSizes node_queue_sizes(const MockAmdGpuConfig& g) {
  // kfd_queue.c kfd_queue_ctx_save_restore_size (firmware-notes/amd-kfd.md §K6).
  const uint32_t v = g.gfx_target_version;
  const uint64_t cu_num = g.simd_count / g.simd_per_cu / g.num_xcc;
  const uint64_t wave_num = v < 100100 ? std::min<uint64_t>(cu_num * 40, g.array_count / g.simd_arrays_per_engine * 512)
                                       : cu_num * 32;
  uint64_t vgpr_per_cu = 0x40000;
  if (v == 90402 || v == 90010 || v == 90008 || v == 90500) vgpr_per_cu = 0x80000;
  if (v == 110000 || v == 110001 || v == 120000 || v == 120001) vgpr_per_cu = 0x60000;
  const uint64_t lds_per_cu = v == 90500 ? uint64_t{g.lds_size_in_kb} << 10 : 0x10000;
  const uint64_t wg_data = align_up(cu_num * (vgpr_per_cu + 0x4000 + lds_per_cu + 0x1000), 4096);
  uint64_t ctl_stack = align_up(40 + wave_num * (v >= 100100 ? 12 : 8) + 8, 4096);
  if (v >= 100100 && v < 110000) ctl_stack = std::min<uint64_t>(ctl_stack, 0x7000);
  NodeQueueSizes sizes;
  sizes.eop_bytes = 4096;
  sizes.ctl_stack_bytes = static_cast<uint32_t>(ctl_stack);
  sizes.cwsr_bytes = static_cast<uint32_t>(ctl_stack + wg_data);
  sizes.debug_memory_bytes = static_cast<uint32_t>(align_up(wave_num * 32, 64));
  sizes.cwsr_allocation_bytes = align_up((uint64_t{sizes.cwsr_bytes} + sizes.debug_memory_bytes) * g.num_xcc, 4096);
  return sizes;
}

}  // namespace doorbell::mockgpu::amd
