#include "hcq/vk/vk_pipeline_cache_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <random>

#include <vulkan/vulkan.h>

#include "compiler/object_cache.h"

namespace doorbell::vk {
namespace {

// VkPipelineCacheHeaderVersionOne: headerSize, headerVersion (1), vendorID, deviceID (uint32 each), then
// pipelineCacheUUID[16] (Vulkan spec, "Pipeline Cache", vkGetPipelineCacheData).
constexpr size_t kHeaderBytes = 32;

uint32_t word_at(const std::vector<uint8_t>& d, size_t at) {
  uint32_t w;
  std::memcpy(&w, d.data() + at, 4);
  return w;
}

}  // namespace

std::optional<std::string> pipeline_cache_path(const PipelineCacheIdentity& id) {
  std::optional<std::string> dir = object_cache_dir();
  if (!dir) return std::nullopt;
  char head[64];
  std::snprintf(head, sizeof head, "vk-pipeline-cache-%x-%x-", id.vendor_id, id.device_id);
  std::string name = head;
  for (uint8_t b : id.uuid) {
    char hex[3];
    std::snprintf(hex, sizeof hex, "%02x", b);
    name += hex;
  }
  return *dir + "/" + name + ".bin";
}

std::vector<uint8_t> load_pipeline_cache(const std::string& path, const PipelineCacheIdentity& id) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return {};
  std::vector<uint8_t> data;
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == ::geteuid() && static_cast<uint64_t>(st.st_size) <= kObjectCacheMaxEntryBytes) {
    data.resize(static_cast<size_t>(st.st_size));
    size_t got = 0;
    while (got < data.size()) {
      const ssize_t n = ::read(fd, data.data() + got, data.size() - got);
      if (n <= 0) break;
      got += static_cast<size_t>(n);
    }
    data.resize(got);
  }
  ::close(fd);
  if (data.size() < kHeaderBytes || word_at(data, 0) < kHeaderBytes || word_at(data, 4) != static_cast<uint32_t>(VK_PIPELINE_CACHE_HEADER_VERSION_ONE) ||
      word_at(data, 8) != id.vendor_id || word_at(data, 12) != id.device_id || std::memcmp(data.data() + 16, id.uuid.data(), 16) != 0)
    return {};
  return data;
}

bool save_pipeline_cache_file(const std::string& path, const std::vector<uint8_t>& data) {
  const size_t slash = path.rfind('/');
  if (slash != std::string::npos) ::mkdir(path.substr(0, slash).c_str(), 0700);
  std::random_device rd;
  const std::string temp = path + ".tmp" + std::to_string(rd()) + std::to_string(::getpid());
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  size_t put = 0;
  while (put < data.size()) {
    const ssize_t n = ::write(fd, data.data() + put, data.size() - put);
    if (n <= 0) break;
    put += static_cast<size_t>(n);
  }
  const bool ok = put == data.size() && ::close(fd) == 0;
  if (!ok || ::rename(temp.c_str(), path.c_str()) != 0) {
    ::unlink(temp.c_str());
    return false;
  }
  return true;
}

}  // namespace doorbell::vk
