// The Vulkan pipeline cache on disk: $DOORBELL_CACHE_DIR (compiler/object_cache.h's directory) /
// vk-pipeline-cache-<vendorID>-<deviceID>-<pipelineCacheUUID hex>.bin. The data is the driver's
// (vkGetPipelineCacheData), whose header names the vendor, device and UUID it is for (Vulkan spec, "Pipeline Cache":
// VkPipelineCacheHeaderVersionOne); a file whose header does not match is not handed to the driver. Saved atomically
// (a temporary file renamed over the old one), so a reader never sees half a file.
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace doorbell::vk {

struct PipelineCacheIdentity {
  uint32_t vendor_id = 0, device_id = 0;
  std::array<uint8_t, 16> uuid{};
};

// The file's path, or nullopt when the disk cache is off.
std::optional<std::string> pipeline_cache_path(const PipelineCacheIdentity& id);
// The file's bytes when its header is for `id` (else empty: a stale or foreign file is ignored).
std::vector<uint8_t> load_pipeline_cache(const std::string& path, const PipelineCacheIdentity& id);
// Best effort: returns false when the directory cannot be written.
bool save_pipeline_cache_file(const std::string& path, const std::vector<uint8_t>& data);

}  // namespace doorbell::vk
