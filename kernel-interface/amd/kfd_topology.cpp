#include "kernel-interface/amd/kfd_topology.h"

#include <fcntl.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <stdexcept>


namespace doorbell::kernel_interface::amd {

namespace {

// A KFD exposes one node per CPU socket and GPU partition; more than this means the directory listing loops.
constexpr int kMaxNodes = 4096;

std::string trimmed(const std::string& text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(" \t\r\n") + 1 - first);
}

bool parse_decimal_value(const std::string& text, uint64_t& value) {
  const char* end = text.data() + text.size();
  const auto [next, error] = std::from_chars(text.data(), end, value);
  return !text.empty() && error == std::errc{} && next == end;
}

// "key value" lines (amdkfd/kfd_topology.c node_show prints every property with sysfs_show_32bit_prop or
// sysfs_show_64bit_prop, "%s %u\n" / "%s %llu\n"); a value that is not decimal goes to non_decimal_properties.
void parse_properties(const std::string& text, const std::string& path, KfdNode& node) {
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string line = trimmed(text.substr(start, end - start));
    start = end + 1;
    if (line.empty()) continue;
    const auto space = line.find_first_of(" \t");
    if (space == std::string::npos) throw std::runtime_error(path + ": line '" + line + "' is not 'key value'");
    const std::string key = line.substr(0, space), value_text = trimmed(line.substr(space));
    uint64_t value = 0;
    if (parse_decimal_value(value_text, value)) {
      node.properties[key] = value;
    } else {
      node.non_decimal_properties[key] = value_text;
    }
  }
}

uint32_t as_u32(const KfdNode& node, const std::string& key) {
  const uint64_t value = node.property(key);
  if (value > UINT32_MAX) {
    throw std::invalid_argument("KFD node " + std::to_string(node.index) + ": property " + key + " = " +
                                std::to_string(value) + " does not fit 32 bits");
  }
  return static_cast<uint32_t>(value);
}

uint64_t align_up(uint64_t value, uint64_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

}  // namespace

uint64_t KfdNode::property(const std::string& key) const {
  const auto found = properties.find(key);
  if (found == properties.end()) {
    const auto text = non_decimal_properties.find(key);
    if (text != non_decimal_properties.end()) {
      throw std::runtime_error("KFD node " + std::to_string(index) + ": property " + key + " is '" + text->second +
                               "', not a decimal number");
    }
    throw std::runtime_error("KFD node " + std::to_string(index) + " has no property " + key);
  }
  return found->second;
}

std::string KfdNode::gfx_arch() const {
  // gfx_target_version = major*10000 + minor*100 + stepping (decimal); the target name writes minor and stepping
  // as one hex digit each: 90010 -> gfx90a, 100302 -> gfx1032 (firmware-notes/amd-kfd.md, Runtime side).
  const uint32_t version = gfx_target_version();
  const uint32_t major = version / 10000, minor = version / 100 % 100, stepping = version % 100;
  if (major == 0 || minor > 15 || stepping > 15) {
    throw std::runtime_error("KFD node " + std::to_string(index) + ": gfx_target_version " + std::to_string(version) +
                             " does not name a gfx target (major >= 1, minor and stepping 0-15)");
  }
  static constexpr char kHex[] = "0123456789abcdef";
  return "gfx" + std::to_string(major) + kHex[minor] + kHex[stepping];
}

std::vector<KfdNode> read_kfd_topology(SyscallSeam& seam, const std::string& root) {
  std::vector<KfdNode> nodes;
  for (int index = 0;; ++index) {
    if (index == kMaxNodes) throw std::runtime_error(root + ": more than " + std::to_string(kMaxNodes) + " nodes");
    const std::string dir = root + "/" + std::to_string(index);
    // The first node whose gpu_id is missing ends the list; any other failure is an error.
    const std::string gpu_id_path = dir + "/gpu_id";
    const int probe = seam.open(gpu_id_path, O_RDONLY);
    if (probe == -ENOENT) break;
    if (probe < 0) throw std::runtime_error("open of " + gpu_id_path + " failed: " + describe_errno(probe));
    seam.close(probe);
    KfdNode node;
    node.index = index;
    const std::string gpu_id_text = trimmed(read_text_file(seam, gpu_id_path));
    uint64_t gpu_id = 0;
    if (!parse_decimal_value(gpu_id_text, gpu_id) || gpu_id > UINT32_MAX) {
      throw std::runtime_error(gpu_id_path + ": gpu_id '" + gpu_id_text + "' is not a 32-bit decimal number");
    }
    node.gpu_id = static_cast<uint32_t>(gpu_id);
    node.name = trimmed(read_text_file(seam, dir + "/name"));
    parse_properties(read_text_file(seam, dir + "/properties"), dir + "/properties", node);
    nodes.push_back(std::move(node));
  }
  if (nodes.empty()) throw std::runtime_error("no KFD topology at " + root + " (" + root + "/0/gpu_id is missing)");
  return nodes;
}

std::vector<KfdNode> kfd_gpu_nodes(const std::vector<KfdNode>& nodes) {
  std::vector<KfdNode> gpus;
  std::copy_if(nodes.begin(), nodes.end(), std::back_inserter(gpus), [](const KfdNode& n) { return n.gpu_id != 0; });
  return gpus;
}

QueueBufferSizes queue_buffer_sizes(const KfdNode& node) {
  // amdkfd/kfd_queue.c kfd_queue_ctx_save_restore_size (firmware-notes/amd-kfd.md, Runtime side, "Queue buffer
  // sizes"): what CREATE_QUEUE checks ctl_stack_size, ctx_save_restore_size and the CWSR BO against.
  const auto need = [&](const std::string& key) {
    if (!node.properties.contains(key)) {
      throw std::invalid_argument("queue_buffer_sizes: KFD node " + std::to_string(node.index) +
                                  " lacks the property " + key);
    }
    return as_u32(node, key);
  };
  const uint32_t gfxv = need("gfx_target_version");
  if (gfxv < 80001) {
    throw std::invalid_argument("queue_buffer_sizes: KFD node " + std::to_string(node.index) +
                                " has gfx_target_version " + std::to_string(gfxv) +
                                "; the KFD sizes queue buffers only from 80001 (Carrizo) on");
  }
  const uint32_t simd_count = need("simd_count"), simd_per_cu = need("simd_per_cu");
  // num_xcc is printed by kernels with multi-XCC support (6.5+); older ones have one XCC per node.
  const uint32_t num_xcc = node.properties.contains("num_xcc") ? as_u32(node, "num_xcc") : 1;
  if (simd_per_cu == 0 || num_xcc == 0) {
    throw std::invalid_argument("queue_buffer_sizes: KFD node " + std::to_string(node.index) + " has simd_per_cu " +
                                std::to_string(simd_per_cu) + " and num_xcc " + std::to_string(num_xcc) +
                                "; both must be nonzero");
  }
  const uint64_t cu_num = simd_count / simd_per_cu / num_xcc;
  uint64_t wave_num = cu_num * 32;
  if (gfxv < 100100) {  // before gfx10.1 (Navi10): 40 waves per CU, capped by the shader engines
    const uint32_t arrays = need("array_count"), per_engine = need("simd_arrays_per_engine");
    if (per_engine == 0) {
      throw std::invalid_argument("queue_buffer_sizes: KFD node " + std::to_string(node.index) +
                                  " has simd_arrays_per_engine 0");
    }
    wave_num = std::min<uint64_t>(cu_num * 40, uint64_t{arrays} / per_engine * 512);
  }
  uint64_t vgpr_per_cu = 0x40000;
  if (gfxv == 90402 || gfxv == 90010 || gfxv == 90008 || gfxv == 90500) vgpr_per_cu = 0x80000;
  if (gfxv == 110000 || gfxv == 110001 || gfxv == 120000 || gfxv == 120001) vgpr_per_cu = 0x60000;
  const uint64_t lds_per_cu = gfxv == 90500 ? uint64_t{need("lds_size_in_kb")} << 10 : 0x10000;
  constexpr uint64_t kSgprPerCu = 0x4000, kHwregPerCu = 0x1000, kPage = 4096;
  constexpr uint64_t kSaveAreaHeader = 40;  // sizeof(HsaUserContextSaveAreaHeader)
  const uint64_t wg_data = align_up(cu_num * (vgpr_per_cu + kSgprPerCu + lds_per_cu + kHwregPerCu), kPage);
  const uint64_t bytes_per_wave = gfxv >= 100100 ? 12 : 8;
  uint64_t ctl_stack = align_up(kSaveAreaHeader + wave_num * bytes_per_wave + 8, kPage);
  if (gfxv / 10000 == 10) ctl_stack = std::min<uint64_t>(ctl_stack, 0x7000);  // gfx10.x hardware limit

  QueueBufferSizes sizes;
  sizes.eop_bytes = gfxv == 80002 ? 0x8000 : 4096;  // Tonga's EOP is 32 KiB
  sizes.ctl_stack_bytes = static_cast<uint32_t>(ctl_stack);
  sizes.cwsr_bytes = static_cast<uint32_t>(ctl_stack + wg_data);
  sizes.debug_memory_bytes = static_cast<uint32_t>(align_up(wave_num * 32, 64));
  sizes.cwsr_allocation_bytes = (uint64_t{sizes.cwsr_bytes} + sizes.debug_memory_bytes) * num_xcc;
  sizes.cwsr_allocation_bytes = (sizes.cwsr_allocation_bytes + kPage - 1) / kPage * kPage;
  return sizes;
}

}  // namespace doorbell::kernel_interface::amd
