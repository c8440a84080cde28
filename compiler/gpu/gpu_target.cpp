#include "compiler/gpu/gpu_target.h"

#include <stdexcept>

namespace doorbell {
namespace {

// Sources in gpu_target.h. AMD's grid limit is in work-items (2^32-1); in work-groups of up to 1024 it is at least
// 2^22 per dimension, the figure kept here so that any local size fits.
const GpuTarget kTargets[] = {
    {GpuVendor::NV, "sm_80", 32, 1024, {1024, 1024, 64}, {2147483647, 65535, 65535}, 48 * 1024},
    {GpuVendor::NV, "sm_90", 32, 1024, {1024, 1024, 64}, {2147483647, 65535, 65535}, 48 * 1024},
    {GpuVendor::AMD, "gfx1100", 32, 1024, {1024, 1024, 1024}, {4194304, 4194304, 4194304}, 64 * 1024},
    {GpuVendor::AMD, "gfx942", 64, 1024, {1024, 1024, 1024}, {4194304, 4194304, 4194304}, 64 * 1024},
};

}  // namespace

const GpuTarget& gpu_target(std::string_view arch) {
  for (const GpuTarget& t : kTargets)
    if (t.arch == arch) return t;
  std::string known;
  for (const GpuTarget& t : kTargets) known += (known.empty() ? "" : ", ") + t.arch;
  throw std::invalid_argument("gpu_target: no target '" + std::string(arch) + "'; expected one of " + known);
}

}  // namespace doorbell
