// The emulated KFD's memory: ALLOC/FREE/MAP/UNMAP rules, handles, the render-node CPU view that shares bytes with
// the GPU's view, USERPTR, AVAILABLE_MEMORY.
#include <sys/mman.h>

#include <cstring>

#include "mock_kfd_fixture.h"

namespace doorbell::mockgpu::amd::testing {
namespace {

using Memory = MockKfdTest;

kfd_ioctl_alloc_memory_of_gpu_args alloc_args(uint64_t va, uint64_t size, uint32_t gpu_id, uint32_t flags) {
  kfd_ioctl_alloc_memory_of_gpu_args a{};
  a.va_addr = va;
  a.size = size;
  a.gpu_id = gpu_id;
  a.flags = flags;
  return a;
}

TEST_F(Memory, AllocRefusesWhatTheKernelRefuses) {
  open_kfd();
  const uint64_t va = ki::reserve_va(seam(), 0x10000, 4096);
  auto a = alloc_args(va, 0, gpu_id(), KFD_IOC_ALLOC_MEM_FLAGS_GTT);
  EXPECT_EQ(raw(AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &a), -EINVAL) << "size 0";
  a = alloc_args(va, 4096, 0x999, KFD_IOC_ALLOC_MEM_FLAGS_GTT);
  EXPECT_EQ(raw(AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &a), -EINVAL) << "unknown gpu_id";
  a = alloc_args(va, 4096, gpu_id(), KFD_IOC_ALLOC_MEM_FLAGS_WRITABLE);
  EXPECT_EQ(raw(AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &a), -EINVAL) << "no domain";
  a = alloc_args(va, 4096, gpu_id(), KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL);
  EXPECT_EQ(raw(AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &a), -EINVAL) << "a doorbell BO is the 8 KiB slice";
  a = alloc_args(va, 0x2000, gpu_id(), KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP);
  EXPECT_EQ(raw(AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &a), -EINVAL) << "MMIO_REMAP is one page";
  a = alloc_args(va, 4096, gpu_id(), KFD_IOC_ALLOC_MEM_FLAGS_USERPTR);
  a.mmap_offset = va + 8;
  EXPECT_EQ(raw(AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &a), -EINVAL) << "unaligned userptr";
  a = alloc_args(va, 0x8000, gpu_id(), KFD_IOC_ALLOC_MEM_FLAGS_GTT);
  EXPECT_EQ(raw(AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &a), 0);
  a = alloc_args(va + 0x7000, 0x1000, gpu_id(), KFD_IOC_ALLOC_MEM_FLAGS_VRAM);
  EXPECT_EQ(raw(AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &a), -EADDRINUSE) << "overlapping VA";
  a = alloc_args(va + 0x8000, gpu(0).vram_bytes + 4096, gpu_id(), KFD_IOC_ALLOC_MEM_FLAGS_VRAM);
  EXPECT_EQ(raw(AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &a), -ENOMEM) << "more VRAM than the GPU has";
}

TEST_F(Memory, HandlesCarryTheGpuIdAndFreeRefusesUnknownOnes) {
  open_kfd();
  const ki::KfdAllocation a = alloc(4096, ki::kAllocGtt);
  EXPECT_EQ(a.handle >> 32, gpu_id());
  kfd_ioctl_free_memory_of_gpu_args f{};
  f.handle = (uint64_t{0x777} << 32) | (a.handle & 0xFFFFFFFF);
  EXPECT_EQ(raw(AMDKFD_IOC_FREE_MEMORY_OF_GPU, &f), -EINVAL) << "a gpu_id the process has no device of";
  const uint32_t ids[] = {gpu_id()};
  kfd_ioctl_map_memory_to_gpu_args m{};
  m.handle = a.handle + 100;
  m.device_ids_array_ptr = reinterpret_cast<uint64_t>(ids);
  m.n_devices = 1;
  EXPECT_EQ(raw(AMDKFD_IOC_MAP_MEMORY_TO_GPU, &m), -ENOMEM) << "no such handle (translate_handle)";
  f.handle = a.handle;
  EXPECT_EQ(raw(AMDKFD_IOC_FREE_MEMORY_OF_GPU, &f), 0);
  EXPECT_EQ(raw(AMDKFD_IOC_FREE_MEMORY_OF_GPU, &f), -EINVAL) << "freed twice";
}

TEST_F(Memory, CpuViewThroughTheRenderNodeSharesBytesWithTheGpuView) {
  open_kfd();
  const ki::KfdAllocation a = alloc(0x3000, ki::kAllocVram | ki::kAllocPublic);
  auto* cpu = static_cast<uint32_t*>(ki::map_allocation_for_cpu(seam(), render(), a));
  ASSERT_EQ(reinterpret_cast<uint64_t>(cpu), a.va);  // GPU VA = CPU VA
  cpu[0x1000 / 4] = 0xC0FFEE;
  const GpuMemory* gpu_view = seam().kfd().process_memory(kfd().fd(), gpu_id());
  ASSERT_NE(gpu_view, nullptr);
  uint32_t* through_gpu = reinterpret_cast<uint32_t*>(gpu_view->translate(a.va + 0x1000, 4));
  EXPECT_NE(static_cast<void*>(through_gpu), static_cast<void*>(&cpu[0x1000 / 4]));  // two mappings
  EXPECT_EQ(*through_gpu, 0xC0FFEEu);
  *through_gpu = 7;
  EXPECT_EQ(cpu[0x1000 / 4], 7u);
  // Another DRM file of the same GPU is not allowed the BO; a length past the BO is not a BO.
  const int other = seam().open(render_path(), O_RDWR);
  int error = 0;
  EXPECT_EQ(seam().mmap(nullptr, 0x3000, PROT_READ, MAP_SHARED, other, static_cast<off_t>(a.mmap_offset), &error),
            MAP_FAILED);
  EXPECT_EQ(error, EACCES);
  EXPECT_EQ(seam().mmap(nullptr, 0x4000, PROT_READ, MAP_SHARED, render(), static_cast<off_t>(a.mmap_offset), &error),
            MAP_FAILED);
  EXPECT_EQ(error, EINVAL);
}

TEST_F(Memory, UnmappedMemoryFaultsOnTheGpuAndUnmapOfAnUnmappedBoFails) {
  open_kfd();
  const ki::KfdAllocation a = alloc(4096, ki::kAllocGtt);
  const GpuMemory* gpu_view = seam().kfd().process_memory(kfd().fd(), gpu_id());
  EXPECT_NO_THROW(gpu_view->translate(a.va, 4096));
  const uint32_t ids[] = {gpu_id()};
  kfd().unmap_from_gpu(a.handle, ids);
  EXPECT_THROW(gpu_view->translate(a.va, 4), std::runtime_error);
  kfd_ioctl_unmap_memory_from_gpu_args u{};
  u.handle = a.handle;
  u.device_ids_array_ptr = reinterpret_cast<uint64_t>(ids);
  u.n_devices = 1;
  EXPECT_EQ(raw(AMDKFD_IOC_UNMAP_MEMORY_FROM_GPU, &u), -EINVAL);
}

TEST_F(Memory, UserptrShowsTheUsersOwnPagesToTheGpu) {
  open_kfd();
  void* pages = mmap(nullptr, 0x2000, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(pages, MAP_FAILED);
  const uint64_t cpu = reinterpret_cast<uint64_t>(pages);
  const ki::KfdAllocation a = kfd().alloc(gpu_id(), cpu, 0x2000, ki::kAllocUserptr, cpu);
  const uint32_t ids[] = {gpu_id()};
  kfd().map_to_gpu(a.handle, ids);
  static_cast<uint32_t*>(pages)[1] = 0x5EED;
  const GpuMemory* gpu_view = seam().kfd().process_memory(kfd().fd(), gpu_id());
  EXPECT_EQ(gpu_view->translate(cpu + 4, 4), static_cast<uint8_t*>(pages) + 4);
  kfd().unmap_from_gpu(a.handle, ids);
  kfd().free(a.handle);
  // The user's pages must exist: freed ones are EFAULT.
  munmap(pages, 0x2000);
  kfd_ioctl_alloc_memory_of_gpu_args args = alloc_args(cpu, 0x2000, gpu_id(), KFD_IOC_ALLOC_MEM_FLAGS_USERPTR);
  args.mmap_offset = cpu;
  EXPECT_EQ(raw(AMDKFD_IOC_ALLOC_MEMORY_OF_GPU, &args), -EFAULT);
}

TEST_F(Memory, DoorbellAndMmioRemapAllocationsShowTheProcesssPagesToTheGpu) {
  open_kfd();
  // DOORBELL: the 8 KiB slice; mapped for the GPU it is the page the process maps from /dev/kfd.
  const ki::KfdAllocation doorbells = alloc(0x2000, ki::kAllocDoorbell);
  EXPECT_EQ(doorbells.mmap_offset >> 62, 3u);
  EXPECT_EQ((doorbells.mmap_offset >> 46) & 0xFFFF, gpu_id());
  auto* cpu = static_cast<uint64_t*>(kfd().mmap_kfd(0x2000, doorbells.mmap_offset));
  cpu[5] = 0xD00B;
  const GpuMemory* gpu_view = seam().kfd().process_memory(kfd().fd(), gpu_id());
  EXPECT_EQ(*reinterpret_cast<uint64_t*>(gpu_view->translate(doorbells.va + 40, 8)), 0xD00Bu);
  // MMIO_REMAP: one page, mmap offset KFD_MMAP_TYPE_MMIO | gpu_id, mapped from /dev/kfd exactly one page long.
  const ki::KfdAllocation mmio = alloc(0x1000, KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP);
  EXPECT_EQ(mmio.mmap_offset, uint64_t{gpu_id()} << 46);
  auto* hdp = static_cast<uint32_t*>(kfd().mmap_kfd(0x1000, mmio.mmap_offset));
  hdp[0] = 1;
  EXPECT_EQ(*reinterpret_cast<uint32_t*>(gpu_view->translate(mmio.va, 4)), 1u);
  int error = 0;
  EXPECT_EQ(seam().mmap(nullptr, 0x2000, PROT_READ, MAP_SHARED, kfd().fd(), static_cast<off_t>(mmio.mmap_offset),
                        &error),
            MAP_FAILED);
  EXPECT_EQ(error, EINVAL);
}

TEST_F(Memory, AvailableMemoryFallsByTheVramAllocated) {
  open_kfd();
  const uint64_t before = kfd().available_memory(gpu_id());
  EXPECT_EQ(before, gpu().vram_bytes);
  const ki::KfdAllocation a = alloc(0x5000, ki::kAllocVram);
  alloc(0x5000, ki::kAllocGtt);
  EXPECT_EQ(kfd().available_memory(gpu_id()), before - 0x5000);
  const uint32_t ids[] = {gpu_id()};
  kfd().unmap_from_gpu(a.handle, ids);
  kfd().free(a.handle);
  EXPECT_EQ(kfd().available_memory(gpu_id()), before);
  kfd_ioctl_get_available_memory_args args{};
  args.gpu_id = 0x31;
  EXPECT_EQ(raw(AMDKFD_IOC_AVAILABLE_MEMORY, &args), -EINVAL);
}

class TwoGpuMemory : public MockKfdTest {
 protected:
  TwoGpuMemory() : MockKfdTest(mock_amd_configs(2)) {}
};

TEST_F(TwoGpuMemory, MapResumesFromNSuccessAndNamesTheGpuItStoppedAt) {
  open_kfd({0, 1});
  const uint64_t va = ki::reserve_va(seam(), 4096, 4096);
  const ki::KfdAllocation a = kfd().alloc(gpu_id(0), va, 4096, ki::kAllocGtt);
  uint32_t ids[] = {gpu_id(0), 0xDEAD, gpu_id(1)};
  kfd_ioctl_map_memory_to_gpu_args m{};
  m.handle = a.handle;
  m.device_ids_array_ptr = reinterpret_cast<uint64_t>(ids);
  m.n_devices = 3;
  EXPECT_EQ(raw(AMDKFD_IOC_MAP_MEMORY_TO_GPU, &m), -EINVAL);
  EXPECT_EQ(m.n_success, 1u) << "the first GPU was mapped before the unknown one";
  ids[1] = gpu_id(1);
  EXPECT_EQ(raw(AMDKFD_IOC_MAP_MEMORY_TO_GPU, &m), 0);
  EXPECT_EQ(m.n_success, 3u);
  EXPECT_NO_THROW(seam().kfd().process_memory(kfd().fd(), gpu_id(1))->translate(va, 4));
  m.n_success = 4;
  EXPECT_EQ(raw(AMDKFD_IOC_MAP_MEMORY_TO_GPU, &m), -EINVAL) << "n_success past n_devices";
  m.n_success = 0;
  m.n_devices = 0;
  EXPECT_EQ(raw(AMDKFD_IOC_MAP_MEMORY_TO_GPU, &m), -EINVAL) << "no devices";
}

TEST_F(TwoGpuMemory, MappingOnAGpuWhoseVmIsNotAcquiredIsENODEV) {
  open_kfd({0});
  const uint64_t va = ki::reserve_va(seam(), 4096, 4096);
  const ki::KfdAllocation a = kfd().alloc(gpu_id(0), va, 4096, ki::kAllocGtt);
  const uint32_t ids[] = {gpu_id(1)};
  kfd_ioctl_map_memory_to_gpu_args m{};
  m.handle = a.handle;
  m.device_ids_array_ptr = reinterpret_cast<uint64_t>(ids);
  m.n_devices = 1;
  EXPECT_EQ(raw(AMDKFD_IOC_MAP_MEMORY_TO_GPU, &m), -ENODEV);
  EXPECT_EQ(m.n_success, 0u);
}

}  // namespace
}  // namespace doorbell::mockgpu::amd::testing
