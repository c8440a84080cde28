#pragma once
// The emulated GPU's virtual address space: GPU VA ranges mapped to host bytes. The mock RM and UVM drivers add and
// remove mappings; the emulated command processor and SMs translate addresses through it. One address space per
// emulated GPU (tinygrad's flow uses one FERMI_VASPACE_A per device).
// Thread-safe: translate() may run on a GPU thread while ioctls change the mappings. A pointer returned by translate()
// stays valid until the memory object behind it is freed.

#include <cstddef>
#include <cstdint>
#include <map>
#include <shared_mutex>
#include <vector>

namespace doorbell::mockgpu::nv {

class GpuMemory {
 public:
  struct Mapping {
    std::uint64_t va = 0;
    std::uint64_t size = 0;
    std::uint8_t* host = nullptr;
    std::uint64_t owner = 0;  // who may remove it in bulk (the mock RM tags each memory object)
  };

  // Maps [va, va + size). Mapping the same range to the same host bytes again is a no-op (RM_MAP_MEMORY_DMA and
  // UVM_MAP_EXTERNAL_ALLOCATION both map what tinygrad allocates). Returns false, changing nothing, when the range
  // overlaps a different mapping.
  bool map(std::uint64_t va, std::uint8_t* host, std::uint64_t size, std::uint64_t owner);
  // Removes the mapping that starts at va; false when there is none.
  bool unmap(std::uint64_t va);
  // Removes every mapping that lies inside [va, va + size); returns how many.
  std::size_t unmap_range(std::uint64_t va, std::uint64_t size);
  // Removes every mapping with this owner; returns how many.
  std::size_t unmap_owner(std::uint64_t owner);
  // True when any byte of [va, va + size) is mapped.
  bool overlaps(std::uint64_t va, std::uint64_t size) const;

  // The host address of `bytes` bytes at GPU VA `va`. Throws std::runtime_error naming the address when it is not
  // mapped or when the access crosses the end of its mapping.
  std::uint8_t* translate(std::uint64_t va, std::size_t bytes) const;

  std::vector<Mapping> mappings() const;

 private:
  bool overlaps_locked(std::uint64_t va, std::uint64_t size) const;

  mutable std::shared_mutex mutex_;
  std::map<std::uint64_t, Mapping> by_va_;
};

}  // namespace doorbell::mockgpu::nv
