// The emulated KFD's memory ioctls: ALLOC/FREE_MEMORY_OF_GPU, MAP/UNMAP_MEMORY_TO/FROM_GPU, AVAILABLE_MEMORY
// (amdkfd/kfd_chardev.c and amdgpu_amdkfd_gpuvm.c; firmware-notes/amd-kfd.md §K3).
#include <linux/kfd_ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "mockgpu/amd/mock_kfd.h"
#include "mockgpu/amd/mock_kfd_state.h"

namespace doorbell::mockgpu::amd {

namespace {
constexpr uint32_t kDomainFlags = KFD_IOC_ALLOC_MEM_FLAGS_VRAM | KFD_IOC_ALLOC_MEM_FLAGS_GTT |
                                  KFD_IOC_ALLOC_MEM_FLAGS_USERPTR | KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL |
                                  KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP;
// The BO mmap offsets on the render node: DRM fake offsets, page-aligned and distinct per BO of the DRM file.
constexpr uint64_t kRenderOffsetBase = uint64_t{1} << 32;

bool ranges_overlap(uint64_t a, uint64_t a_size, uint64_t b, uint64_t b_size) {
  return a < b + b_size && b < a + a_size;
}
}  // namespace

int MockKfd::alloc_memory(Process& p, void* args) {
  auto* a = static_cast<kfd_ioctl_alloc_memory_of_gpu_args*>(args);
  if (a->size == 0) return -EINVAL;
  const int gpu = gpu_index(a->gpu_id);
  if (gpu < 0) return -EINVAL;  // kfd_process_device_data_by_id: no such device in the process
  const uint32_t flags = a->flags;
  GpuProcessState& state = p.gpus[static_cast<std::size_t>(gpu)];
  if (state.render_fd < 0) return -ENODEV;  // kfd_bind_process_to_device: the VM is not acquired
  // The domain, in the order the kernel tests the flags; DOORBELL is the process's 8 KiB slice, MMIO_REMAP one page.
  if ((flags & KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL) != 0 && a->size != kDoorbellSliceBytes) return -EINVAL;
  if ((flags & KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL) == 0 && (flags & KFD_IOC_ALLOC_MEM_FLAGS_MMIO_REMAP) != 0 &&
      a->size != kPageBytes) {
    return -EINVAL;
  }
  if ((flags & kDomainFlags) == 0) return -EINVAL;
  const bool userptr = (flags & (KFD_IOC_ALLOC_MEM_FLAGS_VRAM | KFD_IOC_ALLOC_MEM_FLAGS_GTT)) == 0 &&
                       (flags & KFD_IOC_ALLOC_MEM_FLAGS_USERPTR) != 0;
  if (userptr && (a->mmap_offset == 0 || (a->mmap_offset % kPageBytes) != 0)) return -EINVAL;
  const uint64_t size = page_align(a->size);
  if (a->va_addr + size < a->va_addr) return -EINVAL;
  for (const auto& [id, other] : p.bos) {
    if (other.gpu_id == a->gpu_id && ranges_overlap(other.va, other.size, a->va_addr, size)) return -EADDRINUSE;
  }
  const MockAmdGpuConfig& config = options_.gpus[static_cast<std::size_t>(gpu)];
  const bool vram = (flags & KFD_IOC_ALLOC_MEM_FLAGS_VRAM) != 0;
  if (vram && size > config.vram_bytes - vram_used_[static_cast<std::size_t>(gpu)]) return -ENOMEM;

  Bo bo;
  bo.id = p.next_bo_id++;
  bo.gpu_id = a->gpu_id;
  bo.flags = flags;
  bo.va = a->va_addr;
  bo.size = size;
  if ((flags & (KFD_IOC_ALLOC_MEM_FLAGS_VRAM | KFD_IOC_ALLOC_MEM_FLAGS_GTT)) != 0) {
    bo.memory = make_shared_memory(size, vram ? "kfd-vram-bo" : "kfd-gtt-bo");
    bo.mmap_offset = kRenderOffsetBase + (uint64_t{bo.id} << 32);  // room for any BO size below 4 GiB apart
  } else if (userptr) {
    // The user's pages must exist (amdgpu_ttm_tt_get_user_pages: EFAULT); the GPU sees them directly.
    if (msync(reinterpret_cast<void*>(a->mmap_offset), size, MS_ASYNC) != 0) return -EFAULT;
    bo.memory.host = reinterpret_cast<uint8_t*>(a->mmap_offset);
    bo.memory.bytes = size;
    bo.mmap_offset = a->mmap_offset;
  } else if ((flags & KFD_IOC_ALLOC_MEM_FLAGS_DOORBELL) != 0) {
    // The process's doorbell slice; the kernel answers its bus address, the mock the /dev/kfd doorbell offset.
    if (state.doorbells.memfd < 0) state.doorbells = make_shared_memory(kDoorbellSliceBytes, "kfd-doorbells");
    bo.memory.host = state.doorbells.host;
    bo.memory.bytes = kDoorbellSliceBytes;
    bo.mmap_offset = (kMmapTypeDoorbell << kMmapTypeShift) | (uint64_t{a->gpu_id} << kMmapGpuIdShift);
  } else {
    // MMIO_REMAP: the HDP flush page; mmap_offset = KFD_MMAP_TYPE_MMIO | KFD_MMAP_GPU_ID(gpu_id).
    if (state.mmio.memfd < 0) state.mmio = make_shared_memory(kPageBytes, "kfd-mmio-remap");
    bo.memory.host = state.mmio.host;
    bo.memory.bytes = kPageBytes;
    bo.mmap_offset = (kMmapTypeMmio << kMmapTypeShift) | (uint64_t{a->gpu_id} << kMmapGpuIdShift);
  }
  if (vram) vram_used_[static_cast<std::size_t>(gpu)] += size;
  a->handle = (uint64_t{a->gpu_id} << 32) | bo.id;  // MAKE_HANDLE(gpu_id, idr_handle)
  a->mmap_offset = bo.mmap_offset;
  p.bos.emplace(bo.id, std::move(bo));
  return 0;
}

int MockKfd::free_memory(Process& p, void* args) {
  const auto* a = static_cast<const kfd_ioctl_free_memory_of_gpu_args*>(args);
  const uint32_t gpu_id = static_cast<uint32_t>(a->handle >> 32);  // GET_GPU_ID
  if (p.signal_page_bo != 0 && a->handle == ((uint64_t{p.bos.at(p.signal_page_bo).gpu_id} << 32) | p.signal_page_bo))
    return -EPERM;  // "Free signal BO is not allowed"
  const int gpu = gpu_index(gpu_id);
  if (gpu < 0) return -EINVAL;
  auto it = p.bos.find(static_cast<uint32_t>(a->handle));  // GET_IDR_HANDLE
  if (it == p.bos.end() || it->second.gpu_id != gpu_id) return -EINVAL;
  Bo& bo = it->second;
  if (bo.queue_refs > 0) return -EBUSY;          // a queue's ring, pointers, EOP or CWSR
  for (const uint32_t peer : bo.mapped_on) p.gpus[static_cast<std::size_t>(gpu_index(peer))].memory->unmap(bo.va);
  if ((bo.flags & KFD_IOC_ALLOC_MEM_FLAGS_VRAM) != 0) vram_used_[static_cast<std::size_t>(gpu)] -= bo.size;
  if (bo.memory.memfd >= 0) {
    // The process's CPU view keeps the pages (the memfd's mapping); the driver's GPU view goes once no engine can
    // hold a pointer into it.
    ::close(bo.memory.memfd);
    p.retired.emplace_back(bo.memory.host, bo.memory.bytes);
    release_retired_locked(p);
  }
  p.bos.erase(it);
  return 0;
}

int MockKfd::map_memory(Process& p, void* args, bool map) {
  // kfd_ioctl_map_memory_to_gpu / kfd_ioctl_unmap_memory_from_gpu: resume at n_success, count each device done.
  auto* a = static_cast<kfd_ioctl_map_memory_to_gpu_args*>(args);  // the unmap struct has the same layout
  static_assert(sizeof(kfd_ioctl_map_memory_to_gpu_args) == sizeof(kfd_ioctl_unmap_memory_from_gpu_args));
  if (a->n_devices == 0 || a->n_success > a->n_devices) return -EINVAL;
  const uint32_t gpu_id = static_cast<uint32_t>(a->handle >> 32);
  if (gpu_index(gpu_id) < 0) return -EINVAL;
  if (a->device_ids_array_ptr == 0) return -EFAULT;
  const auto* ids = reinterpret_cast<const uint32_t*>(a->device_ids_array_ptr);
  if (map && p.gpus[static_cast<std::size_t>(gpu_index(gpu_id))].render_fd < 0) return -ENODEV;
  auto it = p.bos.find(static_cast<uint32_t>(a->handle));
  if (it == p.bos.end() || it->second.gpu_id != gpu_id) return -ENOMEM;  // kfd_process_device_translate_handle
  Bo& bo = it->second;
  if (map && bo.va % kPageBytes != 0) return -EINVAL;  // amdgpu_vm_bo_map: the VA must be page-aligned
  for (uint32_t i = a->n_success; i < a->n_devices; ++i) {
    const int peer = gpu_index(ids[i]);
    if (peer < 0) return -EINVAL;
    GpuProcessState& state = p.gpus[static_cast<std::size_t>(peer)];
    if (map) {
      if (state.render_fd < 0) return -ENODEV;
      // Mapping the same BO again is a no-op; a range another BO maps conflicts (amdgpu_vm_bo_map: EINVAL).
      if (!state.memory->map(bo.va, bo.memory.host, bo.size, bo.id)) return -EINVAL;
      bo.mapped_on.insert(ids[i]);
    } else {
      if (bo.mapped_on.count(ids[i]) == 0) return -EINVAL;  // not attached to that VM
      if (bo.queue_refs > 0) return -EBUSY;                  // bo_va->queue_refcount
      state.memory->unmap(bo.va);
      bo.mapped_on.erase(ids[i]);
    }
    a->n_success = i + 1;
  }
  return 0;
}

int MockKfd::available_memory(Process& p, void* args) {
  (void)p;
  auto* a = static_cast<kfd_ioctl_get_available_memory_args*>(args);
  const int gpu = gpu_index(a->gpu_id);
  if (gpu < 0) return -EINVAL;
  a->available = options_.gpus[static_cast<std::size_t>(gpu)].vram_bytes - vram_used_[static_cast<std::size_t>(gpu)];
  return 0;
}

}  // namespace doorbell::mockgpu::amd
