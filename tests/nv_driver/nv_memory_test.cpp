// Memory objects: GPU VA mapping, CPU mmap, host memory, and what freeing does to them.
#include <gtest/gtest.h>

#include <sys/mman.h>

#include <cstring>
#include <numeric>
#include <vector>

#include "nv_bringup.h"

namespace doorbell::nv_driver_test {
namespace {

class NvMemoryOnMock : public ::testing::Test {
 protected:
  void SetUp() override {
    nv.open_driver();
    nv.device();
  }
  NvBringUp nv;
};

TEST_F(NvMemoryOnMock, CpuWritesAreSeenByTheGpuAtTheMappedVa) {
  const NvU64 va = 0x2000000000;
  const GpuBuffer buffer = nv.alloc(0x200000, va);
  EXPECT_EQ(buffer.va, va);
  std::vector<std::uint8_t> pattern(4096);
  std::iota(pattern.begin(), pattern.end(), std::uint8_t{7});
  std::memcpy(buffer.cpu + 0x1000, pattern.data(), pattern.size());
  EXPECT_EQ(std::memcmp(nv.driver.gpu_memory().translate(va + 0x1000, pattern.size()), pattern.data(), pattern.size()),
            0);
}

TEST_F(NvMemoryOnMock, GpuWritesAreSeenThroughASecondCpuMapping) {
  const NvU64 va = 0x2000000000;
  const GpuBuffer buffer = nv.alloc(0x10000, va);
  const std::uint64_t value = 0xfeedfacecafebeefull;
  std::memcpy(nv.driver.gpu_memory().translate(va + 0x40, 8), &value, 8);
  SeamFd map_fd(nv.driver, "/dev/nvidia0", O_RDWR);
  auto* again = static_cast<std::uint8_t*>(nv.rm.map_memory(nv.nvdevice, buffer.memory, 0x10000, map_fd.get()));
  EXPECT_EQ(std::memcmp(again + 0x40, &value, 8), 0);
  EXPECT_EQ(std::memcmp(buffer.cpu + 0x40, &value, 8), 0);
  nv.rm.unmap_memory(nv.nvdevice, buffer.memory, again, 0x10000);
}

TEST_F(NvMemoryOnMock, CpuMappingAtAFixedAddressAliasesTheSameBytes) {
  const GpuBuffer buffer = nv.alloc(0x10000, 0x2000000000);
  int error = 0;
  void* reserved = nv.driver.mmap(nullptr, 0x10000, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0, &error);
  ASSERT_NE(reserved, MAP_FAILED);
  SeamFd map_fd(nv.driver, "/dev/nvidia0", O_RDWR);
  CpuMapOptions options;
  options.address = reserved;
  auto* fixed =
      static_cast<std::uint8_t*>(nv.rm.map_memory(nv.nvdevice, buffer.memory, 0x10000, map_fd.get(), options));
  EXPECT_EQ(fixed, reserved);
  fixed[123] = 0x5a;
  EXPECT_EQ(buffer.cpu[123], 0x5a);
  nv.driver.munmap(fixed, 0x10000);
}

TEST_F(NvMemoryOnMock, UnfixedDmaMappingGetsAVaInsideTheVirtualObject) {
  NV_MEMORY_ALLOCATION_PARAMS params{};
  params.owner = nv.root;
  params.size = 0x3000;
  const NvHandle memory = nv.rm.alloc(nv.nvdevice, NV1_MEMORY_USER, params);
  const NvU64 va = nv.rm.map_memory_dma(nv.nvdevice, nv.virtmem, memory, 0x3000, 0);
  EXPECT_NE(va, 0u);
  EXPECT_LE(va + 0x3000, 0x2000000000000ull);
  EXPECT_NO_THROW(nv.driver.gpu_memory().translate(va + 0x2ff8, 8));
  nv.rm.unmap_memory_dma(nv.nvdevice, nv.virtmem, memory, va, 0x3000);
  EXPECT_THROW(nv.driver.gpu_memory().translate(va, 8), std::runtime_error);
}

TEST_F(NvMemoryOnMock, HostMemoryDescriptorMapsTheCallersOwnPages) {
  int error = 0;
  auto* host = static_cast<std::uint8_t*>(
      nv.driver.mmap(nullptr, 0x4000, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0, &error));
  ASSERT_NE(static_cast<void*>(host), MAP_FAILED);
  const NvU32 flags = (NVOS02_FLAGS_PHYSICALITY_NONCONTIGUOUS << NVOS02_FLAGS_PHYSICALITY_SHIFT) |
                      (NVOS02_FLAGS_COHERENCY_CACHED << NVOS02_FLAGS_COHERENCY_SHIFT) |
                      (NVOS02_FLAGS_MAPPING_NO_MAP << NVOS02_FLAGS_MAPPING_SHIFT);
  EXPECT_EQ(flags, 0x40001010u);  // tinygrad ops_nv.py:488-489; firmware-notes/nvidia-hopper.md §5
  const NvHandle memory = nv.rm.alloc_memory(nv.dev_fd.get(), nv.nvdevice, NV01_MEMORY_SYSTEM_OS_DESCRIPTOR, flags,
                                             nv_p64(host), 0x4000 - 1, 0x1001);
  EXPECT_EQ(memory, 0x1001u);
  const NvU64 va = 0x3000000000;
  nv.uvm.create_external_range(va, 0x4000);
  nv.rm.map_memory_dma(nv.nvdevice, nv.virtmem, memory, 0x4000,
                       NVOS46_FLAGS_DMA_OFFSET_FIXED_TRUE | NVOS46_FLAGS_CACHE_SNOOP_ENABLE, va);
  nv.uvm.map_external_allocation(va, 0x4000, nv.uuid, nv.ctl.get(), nv.root, memory);
  EXPECT_EQ(nv.driver.gpu_memory().translate(va + 0x10, 4), host + 0x10);
  nv.rm.free(memory, nv.nvdevice);
  nv.uvm.free(va, 0x4000);
  nv.driver.munmap(host, 0x4000);
}

TEST_F(NvMemoryOnMock, FreeingMemoryRemovesItsGpuMappingButCpuViewStaysValid) {
  const NvU64 va = 0x2000000000;
  const GpuBuffer buffer = nv.alloc(0x10000, va);
  nv.rm.free(buffer.memory, nv.nvdevice);
  try {
    nv.driver.gpu_memory().translate(va, 4);
    ADD_FAILURE() << "freed memory still translates";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("0x2000000000"), std::string::npos) << e.what();
  }
  buffer.cpu[0] = 1;  // the CPU mapping keeps its pages, as a real mmap would
}

TEST_F(NvMemoryOnMock, MappingAVideoAllocationBiggerThanTheGpuFailsWithNoMemory) {
  NV_MEMORY_ALLOCATION_PARAMS params{};
  params.owner = nv.root;
  params.size = 200ull << 30;
  try {
    nv.rm.alloc(nv.nvdevice, NV1_MEMORY_USER, params);
    ADD_FAILURE() << "allocating 200 GiB did not fail";
  } catch (const NvStatusError& e) {
    EXPECT_EQ(e.status(), NV_ERR_NO_MEMORY) << e.what();
  }
}

TEST_F(NvMemoryOnMock, MmapWithoutRmMapMemoryIsRefused) {
  SeamFd map_fd(nv.driver, "/dev/nvidia0", O_RDWR);
  int error = 0;
  EXPECT_EQ(nv.driver.mmap(nullptr, 0x1000, PROT_READ, MAP_SHARED, map_fd.get(), 0, &error), MAP_FAILED);
  EXPECT_EQ(error, EINVAL);
}

// The driver keeps one mmap context per fd for the fd's whole life (ogkm kernel-open/nvidia/nv-usermap.c:53-57): a
// second RM_MAP_MEMORY naming the same fd answers NV_ERR_STATE_IN_USE, while mmap does not use the context up.
TEST_F(NvMemoryOnMock, ASecondRmMapMemoryOnOneFdAnswersStateInUse) {
  const GpuBuffer first = nv.alloc(0x1000, 0x2000000000, /*system_memory=*/true);
  const GpuBuffer second = nv.alloc(0x1000, 0x2000200000, /*system_memory=*/true);
  SeamFd ctl_fd(nv.driver, "/dev/nvidiactl", O_RDWR);
  void* mapped = nv.rm.map_memory(nv.nvdevice, first.memory, 0x1000, ctl_fd.get());
  int error = 0;
  void* again = nv.driver.mmap(nullptr, 0x1000, PROT_READ, MAP_SHARED, ctl_fd.get(), 0, &error);
  ASSERT_NE(again, MAP_FAILED) << "mmap consumed the fd's context; errno " << error;
  first.cpu[5] = 0x42;
  EXPECT_EQ(static_cast<std::uint8_t*>(again)[5], 0x42);
  try {
    nv.rm.map_memory(nv.nvdevice, second.memory, 0x1000, ctl_fd.get());
    ADD_FAILURE() << "a second RM_MAP_MEMORY on one fd succeeded";
  } catch (const NvStatusError& e) {
    EXPECT_EQ(e.status(), NV_ERR_STATE_IN_USE) << e.what();
    EXPECT_NE(std::string(e.what()).find("NV_ERR_STATE_IN_USE (0x63)"), std::string::npos) << e.what();
  }
  nv.driver.munmap(again, 0x1000);
  nv.driver.munmap(mapped, 0x1000);
}

// System memory maps through a /dev/nvidiactl fd, video memory through a /dev/nvidiaN fd (ogkm osapi.c:2277, :2341).
TEST_F(NvMemoryOnMock, SystemMemoryMappedThroughAGpuFdIsAnInvalidArgument) {
  const GpuBuffer host = nv.alloc(0x1000, 0x2000000000, /*system_memory=*/true);
  SeamFd gpu_fd = nv.new_gpu_fd();
  try {
    nv.rm.map_memory(nv.nvdevice, host.memory, 0x1000, gpu_fd.get());
    ADD_FAILURE() << "system memory mapped through /dev/nvidia0";
  } catch (const NvStatusError& e) {
    EXPECT_EQ(e.status(), NV_ERR_INVALID_ARGUMENT) << e.what();
  }
}

}  // namespace
}  // namespace doorbell::nv_driver_test
