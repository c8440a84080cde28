// The KFD topology reader and the queue buffer sizes (kernel-interface/amd/kfd_topology.h) on sysfs text served by a
// stand-in seam: a CPU node and a 7900 XTX node with the keys a real gfx1100 prints, and the kfd_queue.c formulas
// against worked examples (firmware-notes/amd-kfd.md, Runtime side).
#include <gtest/gtest.h>

#include <cerrno>
#include <string>

#include "kernel-interface/amd/kfd_topology.h"
#include "tests/common/error_of.h"
#include "tests/kernel-interface/amd_fake_seam.h"

namespace doorbell::kernel_interface::amd {
namespace {

using testing::FakeAmdSeam;
using doorbell::testing::error_of;

const std::string kRoot = "/sys/devices/virtual/kfd/kfd/topology/nodes";

// A CPU node as a KFD prints it: no SIMDs, gpu_id 0.
const char* const kCpuProperties =
    "cpu_cores_count 32\nsimd_count 0\nmem_banks_count 1\ncaches_count 0\nio_links_count 1\np2p_links_count 0\n"
    "cpu_core_id_base 0\nsimd_id_base 0\nmax_waves_per_simd 0\nlds_size_in_kb 0\ngds_size_in_kb 0\nnum_gws 0\n"
    "wave_front_size 0\narray_count 0\nsimd_arrays_per_engine 0\ncu_per_simd_array 0\nsimd_per_cu 0\n"
    "max_slots_scratch_cu 0\ngfx_target_version 0\nvendor_id 0\ndevice_id 0\nlocation_id 0\ndomain 0\n"
    "drm_render_minor 0\nhive_id 0\nnum_sdma_engines 0\nnum_sdma_xgmi_engines 0\nnum_sdma_queues_per_engine 0\n"
    "num_cp_queues 0\nmax_engine_clk_ccompute 4500\n";

// A 7900 XTX (gfx1100, 96 CUs) in the key order amdkfd prints.
const char* const kNavi31Properties =
    "cpu_cores_count 0\nsimd_count 192\nmem_banks_count 1\ncaches_count 206\nio_links_count 1\np2p_links_count 0\n"
    "cpu_core_id_base 0\nsimd_id_base 2147487744\nmax_waves_per_simd 16\nlds_size_in_kb 64\ngds_size_in_kb 0\n"
    "num_gws 64\nwave_front_size 32\narray_count 12\nsimd_arrays_per_engine 2\ncu_per_simd_array 8\n"
    "simd_per_cu 2\nmax_slots_scratch_cu 32\ngfx_target_version 110000\nvendor_id 4098\ndevice_id 29772\n"
    "location_id 768\ndomain 0\ndrm_render_minor 128\nhive_id 0\nnum_sdma_engines 2\nnum_sdma_xgmi_engines 0\n"
    "num_sdma_queues_per_engine 6\nnum_cp_queues 8\nmax_engine_clk_fcompute 2526\nlocal_mem_size 0\n"
    "fw_version 2150\ncapability 671588992\ndebug_prop 1495\nsdma_fw_version 21\nunique_id 9522541473931722584\n"
    "num_xcc 1\nmax_engine_clk_ccompute 4500\n";

void add_node(FakeAmdSeam& seam, int index, const std::string& gpu_id, const std::string& name,
              const std::string& properties) {
  const std::string dir = kRoot + "/" + std::to_string(index);
  seam.files[dir + "/gpu_id"] = gpu_id;
  seam.files[dir + "/name"] = name;
  seam.files[dir + "/properties"] = properties;
}

KfdNode node_with(std::map<std::string, uint64_t> properties) {
  KfdNode node;
  node.index = 1;
  node.gpu_id = 0x4A3F;
  node.properties = std::move(properties);
  return node;
}

TEST(AmdKfdTopology, ReadsNodesUntilOneIsMissingAndParsesTheirProperties) {
  FakeAmdSeam seam;
  add_node(seam, 0, "0\n", "\n", kCpuProperties);
  add_node(seam, 1, "19007\n", "ip discovery\n", kNavi31Properties);
  const std::vector<KfdNode> nodes = read_kfd_topology(seam);
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_EQ(nodes[0].index, 0);
  EXPECT_EQ(nodes[0].gpu_id, 0u);
  EXPECT_EQ(nodes[0].name, "");
  EXPECT_EQ(nodes[0].property("cpu_cores_count"), 32u);
  EXPECT_EQ(nodes[1].index, 1);
  EXPECT_EQ(nodes[1].gpu_id, 19007u);
  EXPECT_EQ(nodes[1].name, "ip discovery");
  EXPECT_EQ(nodes[1].properties.size(), 38u);
  EXPECT_EQ(nodes[1].gfx_target_version(), 110000u);
  EXPECT_EQ(nodes[1].drm_render_minor(), 128u);
  EXPECT_EQ(nodes[1].property("simd_count"), 192u);
  EXPECT_EQ(nodes[1].property("unique_id"), 9522541473931722584u);  // 64-bit values survive
  EXPECT_EQ(nodes[1].gfx_arch(), "gfx1100");
  EXPECT_EQ(seam.open_count(), 0) << "a file was left open";

  const std::vector<KfdNode> gpus = kfd_gpu_nodes(nodes);
  ASSERT_EQ(gpus.size(), 1u);
  EXPECT_EQ(gpus[0].index, 1);
}

TEST(AmdKfdTopology, AnotherRootIsReadTheSameWay) {
  FakeAmdSeam seam;
  seam.files["/tmp/t/0/gpu_id"] = "7";
  seam.files["/tmp/t/0/name"] = "gfx942";
  seam.files["/tmp/t/0/properties"] = "gfx_target_version 90402";
  const auto nodes = read_kfd_topology(seam, "/tmp/t");
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes[0].gfx_arch(), "gfx942");
}

TEST(AmdKfdTopology, ErrorsNameThePath) {
  FakeAmdSeam seam;
  EXPECT_EQ(error_of<std::runtime_error>([&] { read_kfd_topology(seam); }),
            "no KFD topology at " + kRoot + " (" + kRoot + "/0/gpu_id is missing)");
  add_node(seam, 0, "0", "", kCpuProperties);
  seam.open_errors[kRoot + "/1/gpu_id"] = EACCES;
  EXPECT_EQ(error_of<std::runtime_error>([&] { read_kfd_topology(seam); }),
            "open of " + kRoot + "/1/gpu_id failed: errno 13 (Permission denied)");
  seam.open_errors.clear();
  add_node(seam, 1, "12x", "", "");
  EXPECT_EQ(error_of<std::runtime_error>([&] { read_kfd_topology(seam); }),
            kRoot + "/1/gpu_id: gpu_id '12x' is not a 32-bit decimal number");
  add_node(seam, 1, "4294967296", "", "");
  EXPECT_EQ(error_of<std::runtime_error>([&] { read_kfd_topology(seam); }),
            kRoot + "/1/gpu_id: gpu_id '4294967296' is not a 32-bit decimal number");
  add_node(seam, 1, "12", "", "simd_count 192\nbroken\n");
  EXPECT_EQ(error_of<std::runtime_error>([&] { read_kfd_topology(seam); }),
            kRoot + "/1/properties: line 'broken' is not 'key value'");
  seam.files.erase(kRoot + "/1/properties");
  EXPECT_EQ(error_of<std::runtime_error>([&] { read_kfd_topology(seam); }),
            "open of " + kRoot + "/1/properties failed: errno 2 (No such file or directory)");
  EXPECT_EQ(seam.open_count(), 0) << "a file was left open after an error";
}

TEST(AmdKfdTopology, ANonDecimalValueIsKeptAsTextAndNamedWhenAskedFor) {
  FakeAmdSeam seam;
  add_node(seam, 0, "19007", "", "simd_count 192\nunique_id 8426a31c8f14d2e8\nsimd_per_cu -1\n");
  const KfdNode node = read_kfd_topology(seam)[0];
  EXPECT_EQ(node.property("simd_count"), 192u);
  EXPECT_EQ(node.non_decimal_properties.at("unique_id"), "8426a31c8f14d2e8");
  EXPECT_EQ(error_of<std::runtime_error>([&] { node.property("simd_per_cu"); }),
            "KFD node 0: property simd_per_cu is '-1', not a decimal number");
}

TEST(AmdKfdTopology, GfxArchWritesMinorAndSteppingAsHexDigits) {
  EXPECT_EQ(node_with({{"gfx_target_version", 110000}}).gfx_arch(), "gfx1100");
  EXPECT_EQ(node_with({{"gfx_target_version", 110001}}).gfx_arch(), "gfx1101");
  EXPECT_EQ(node_with({{"gfx_target_version", 90402}}).gfx_arch(), "gfx942");
  EXPECT_EQ(node_with({{"gfx_target_version", 100302}}).gfx_arch(), "gfx1032");
  EXPECT_EQ(node_with({{"gfx_target_version", 90010}}).gfx_arch(), "gfx90a");
  EXPECT_EQ(node_with({{"gfx_target_version", 90012}}).gfx_arch(), "gfx90c");
  EXPECT_EQ(error_of<std::runtime_error>([] { node_with({{"gfx_target_version", 91600}}).gfx_arch(); }),
            "KFD node 1: gfx_target_version 91600 does not name a gfx target (major >= 1, minor and stepping 0-15)");
  EXPECT_EQ(error_of<std::runtime_error>([] { node_with({{"gfx_target_version", 0}}).gfx_arch(); }),
            "KFD node 1: gfx_target_version 0 does not name a gfx target (major >= 1, minor and stepping 0-15)");
  EXPECT_EQ(error_of<std::runtime_error>([] { node_with({}).gfx_arch(); }),
            "KFD node 1 has no property gfx_target_version");
}

// kfd_queue_ctx_save_restore_size for the 7900 XTX: 96 CUs, wave_num 96*32 = 3072; control stack
// ALIGN(40 + 3072*12 + 8, 4096) = 0xA000; work-group data 96*(0x60000 + 0x4000 + 0x10000 + 0x1000) = 0x2BE0000.
TEST(AmdKfdTopology, QueueBufferSizesOfA7900Xtx) {
  FakeAmdSeam seam;
  add_node(seam, 0, "19007", "", kNavi31Properties);
  const QueueBufferSizes sizes = queue_buffer_sizes(read_kfd_topology(seam)[0]);
  EXPECT_EQ(sizes.eop_bytes, 4096u);
  EXPECT_EQ(sizes.ctl_stack_bytes, 0xA000u);
  EXPECT_EQ(sizes.cwsr_bytes, 0x2BEA000u);
  EXPECT_EQ(sizes.debug_memory_bytes, 0x18000u);      // 3072 waves * 32 bytes
  EXPECT_EQ(sizes.cwsr_allocation_bytes, 0x2C02000u);  // (0x2BEA000 + 0x18000) * 1 XCC
}

// MI300X: 1216 SIMDs, 4 per CU, 8 XCCs -> 38 CUs per XCC; gfx9 waves min(38*40, 32/1*512) = 1520; control stack
// ALIGN(40 + 1520*8 + 8, 4096) = 0x3000; work-group data 38*(0x80000 + 0x4000 + 0x10000 + 0x1000) = 0x161E000.
TEST(AmdKfdTopology, QueueBufferSizesOfAnMi300x) {
  const KfdNode node = node_with({{"gfx_target_version", 90402}, {"simd_count", 1216}, {"simd_per_cu", 4},
                                  {"num_xcc", 8}, {"array_count", 32}, {"simd_arrays_per_engine", 1}});
  const QueueBufferSizes sizes = queue_buffer_sizes(node);
  EXPECT_EQ(sizes.eop_bytes, 4096u);
  EXPECT_EQ(sizes.ctl_stack_bytes, 0x3000u);
  EXPECT_EQ(sizes.cwsr_bytes, 0x1621000u);
  EXPECT_EQ(sizes.debug_memory_bytes, 0xBE00u);
  EXPECT_EQ(sizes.cwsr_allocation_bytes, 0xB167000u);  // (0x1621000 + 0xBE00) * 8
}

// gfx9 with few shader engines: the wave count is capped at array_count / simd_arrays_per_engine * 512.
TEST(AmdKfdTopology, Gfx9WavesAreCappedByTheShaderEngines) {
  // 64 CUs (gfx906: 256 SIMDs / 4); 64*40 = 2560 > 4/1*512 = 2048 waves.
  const QueueBufferSizes sizes = queue_buffer_sizes(node_with(
      {{"gfx_target_version", 90006}, {"simd_count", 256}, {"simd_per_cu", 4}, {"array_count", 4},
       {"simd_arrays_per_engine", 1}}));
  EXPECT_EQ(sizes.ctl_stack_bytes, 0x5000u);             // ALIGN(40 + 2048*8 + 8, 4096) = ALIGN(16432)
  EXPECT_EQ(sizes.cwsr_bytes, 0x5000u + 0x1540000);      // 64*(0x40000 + 0x4000 + 0x10000 + 0x1000)
  EXPECT_EQ(sizes.debug_memory_bytes, 0x10000u);         // 2048*32
  EXPECT_EQ(sizes.cwsr_allocation_bytes, 0x5000u + 0x1540000 + 0x10000);  // num_xcc absent: one XCC
}

// gfx10.x caps the control stack at 0x7000: an 80-CU gfx1030 needs ALIGN(40 + 2560*12 + 8, 4096) = 0x8000.
TEST(AmdKfdTopology, Gfx10ControlStackIsCappedAt0x7000) {
  const QueueBufferSizes sizes = queue_buffer_sizes(
      node_with({{"gfx_target_version", 100300}, {"simd_count", 160}, {"simd_per_cu", 2}, {"num_xcc", 1}}));
  EXPECT_EQ(sizes.ctl_stack_bytes, 0x7000u);
  EXPECT_EQ(sizes.cwsr_bytes, 0x7000u + 0x1A90000);  // 80*(0x40000 + 0x4000 + 0x10000 + 0x1000)
  EXPECT_EQ(sizes.debug_memory_bytes, 0x14000u);     // 2560*32
  EXPECT_EQ(sizes.cwsr_allocation_bytes, 0x1AAB000u);
}

TEST(AmdKfdTopology, Gfx950SizesLdsFromTheNode) {
  // 0x80000 VGPRs + 0x4000 SGPRs + 160 KiB LDS + 0x1000 per CU; 32 CUs per XCC.
  const QueueBufferSizes sizes = queue_buffer_sizes(
      node_with({{"gfx_target_version", 90500}, {"simd_count", 256}, {"simd_per_cu", 4}, {"num_xcc", 2},
                 {"array_count", 16}, {"simd_arrays_per_engine", 1}, {"lds_size_in_kb", 160}}));
  EXPECT_EQ(sizes.cwsr_bytes - sizes.ctl_stack_bytes, 32u * (0x80000 + 0x4000 + 160 * 1024 + 0x1000));
}

TEST(AmdKfdTopology, QueueBufferSizesNameAMissingPropertyOrAnUnsupportedTarget) {
  EXPECT_EQ(error_of<std::invalid_argument>([] {
              queue_buffer_sizes(node_with({{"gfx_target_version", 110000}, {"simd_count", 192}}));
            }),
            "queue_buffer_sizes: KFD node 1 lacks the property simd_per_cu");
  EXPECT_EQ(error_of<std::invalid_argument>([] {
              queue_buffer_sizes(node_with({{"gfx_target_version", 90402}, {"simd_count", 1216},
                                            {"simd_per_cu", 4}, {"num_xcc", 8}}));
            }),
            "queue_buffer_sizes: KFD node 1 lacks the property array_count");
  EXPECT_EQ(error_of<std::invalid_argument>([] {
              queue_buffer_sizes(node_with({{"gfx_target_version", 70002}, {"simd_count", 32}, {"simd_per_cu", 4}}));
            }),
            "queue_buffer_sizes: KFD node 1 has gfx_target_version 70002; the KFD sizes queue buffers only from "
            "80001 (Carrizo) on");
  EXPECT_EQ(error_of<std::invalid_argument>([] {
              queue_buffer_sizes(node_with({{"gfx_target_version", 110000}, {"simd_count", 192}, {"simd_per_cu", 0}}));
            }),
            "queue_buffer_sizes: KFD node 1 has simd_per_cu 0 and num_xcc 1; both must be nonzero");
}

}  // namespace
}  // namespace doorbell::kernel_interface::amd
