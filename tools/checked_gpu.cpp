#include "tools/checked_gpu.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <unordered_map>
#include <vector>

#include "hcq/amd/amd_device.h"
#include "hcq/json_text.h"
#include "hcq/nv/nv_device.h"
#if DOORBELL_HAVE_VULKAN
#include "hcq/vk/vk_device.h"
#endif

namespace doorbell {
namespace {

std::string hex(uint64_t v) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(v));
  return text;
}

// The GPU's model as the NVIDIA driver names it (/proc/driver/nvidia/gpus/<bus id>/information, "Model:"), in bus order.
std::string nv_gpu_model(bool emulated, int index) {
  if (emulated) return "emulated GPU (mockgpu)";
  std::vector<std::filesystem::path> gpus;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/driver/nvidia/gpus", ec)) gpus.push_back(entry.path());
  std::sort(gpus.begin(), gpus.end());
  if (index >= static_cast<int>(gpus.size())) return "unknown";
  std::ifstream info(gpus[index] / "information");
  for (std::string line; std::getline(info, line);)
    if (line.rfind("Model:", 0) == 0) return line.substr(line.find_first_not_of(" \t", 6));
  return "unknown";
}

class CheckedNv final : public CheckedGpu {
 public:
  CheckedNv(nv::NvDevice& d, std::string canonical, int index) : d_(d), canonical_(std::move(canonical)), index_(index) {}
  Device& device() override { return d_; }
  CheckedMemory alloc(uint64_t bytes, bool host_memory) override {
    const nv::NvMemory m = d_.alloc(bytes, host_memory);
    live_[m.va] = m;
    return {m.cpu, m.va};
  }
  void free(const CheckedMemory& memory) override {
    d_.free(live_.at(memory.va));
    live_.erase(memory.va);
  }
  ClockCalibration calibrate_clock() override { return d_.calibrate_clock(); }
  bool emulated() const override { return d_.emulated(); }
  std::string fault_report() const override { return d_.fault_report(); }
  std::string describe() const override {
    return canonical_ + ", " + nv_gpu_model(d_.emulated(), index_) + ", " + d_.arch() + ", " +
           (d_.emulated() ? "emulated (MOCKGPU=1)" : "hardware") + ", driver " + d_.session().driver_version();
  }
  std::string identity_json() const override {
    return ", \"gpu\": " + json_quote(nv_gpu_model(d_.emulated(), index_)) + ", \"arch\": " + json_quote(d_.arch()) +
           ", \"compute_class\": " + json_quote(hex(d_.session().classes().compute)) + ", \"driver_version\": " +
           json_quote(d_.session().driver_version()) + ", \"emulated\": " + (d_.emulated() ? "true" : "false");
  }

 private:
  nv::NvDevice& d_;
  std::string canonical_;
  int index_;
  std::unordered_map<uint64_t, nv::NvMemory> live_;
};

class CheckedAmd final : public CheckedGpu {
 public:
  CheckedAmd(amd::AmdDevice& d, std::string canonical) : d_(d), canonical_(std::move(canonical)) {}
  Device& device() override { return d_; }
  CheckedMemory alloc(uint64_t bytes, bool host_memory) override {
    const amd::AmdMemory m = d_.alloc(bytes, host_memory ? amd::AmdDomain::kGttUncached : amd::AmdDomain::kVram);
    live_[m.va] = m;
    return {m.cpu, m.va};
  }
  void free(const CheckedMemory& memory) override {
    d_.free(live_.at(memory.va));
    live_.erase(memory.va);
  }
  ClockCalibration calibrate_clock() override { return d_.calibrate_clock(); }
  bool emulated() const override { return d_.emulated(); }
  std::string fault_report() const override { return d_.fault_report(); }
  std::string describe() const override {
    return canonical_ + ", " + model() + ", " + d_.arch() + ", " + (d_.emulated() ? "emulated (MOCKGPU=1)" : "hardware") +
           ", KFD " + kfd_version();
  }
  std::string identity_json() const override {
    return ", \"gpu\": " + json_quote(model()) + ", \"arch\": " + json_quote(d_.arch()) + ", \"gfx_target_version\": " +
           std::to_string(session().node().gfx_target_version()) + ", \"kfd_version\": " + json_quote(kfd_version()) +
           ", \"emulated\": " + (d_.emulated() ? "true" : "false");
  }

 private:
  amd::AmdSession& session() const { return const_cast<amd::AmdDevice&>(d_).session(); }
  // The topology's marketing-free identity: the node's name and PCI device id (sysfs names no model).
  std::string model() const {
    if (d_.emulated()) return "emulated GPU (mockgpu)";
    return session().node().name + " (device " + hex(session().device_info().device_id) + ")";
  }
  std::string kfd_version() const {
    const kernel_interface::amd::KfdVersion v = session().kfd().version();
    return std::to_string(v.major) + "." + std::to_string(v.minor);
  }
  amd::AmdDevice& d_;
  std::string canonical_;
  std::unordered_map<uint64_t, amd::AmdMemory> live_;
};

#if DOORBELL_HAVE_VULKAN
// Mesa's driverInfo is "Mesa 22.3.6 (LLVM 15.0.6)" or "Mesa 22.3.6": the version part; another driver's as it is.
std::string driver_text(const vk::VulkanDeviceProperties& p) {
  std::string info = p.driver_info;
  if (info.rfind("Mesa ", 0) == 0)
    if (const size_t paren = info.find(" ("); paren != std::string::npos) info.resize(paren);
  return info.empty() ? p.driver_name : info;
}

class CheckedVk final : public CheckedGpu {
 public:
  CheckedVk(vk::VulkanDevice& d, std::string canonical) : d_(d), canonical_(std::move(canonical)) {}
  Device& device() override { return d_; }
  // Device memory is storage mapped for the host (DEVICE_LOCAL|HOST_VISIBLE, vk_device.h allocate_storage); where
  // storage is not mapped (DOORBELL_VK_STAGING=1, a GPU without such memory) and for `host_memory`, HOST_VISIBLE
  // memory with a device address (allocate_host_visible): the check fills and reads its buffers from the host.
  CheckedMemory alloc(uint64_t bytes, bool host_memory) override {
    const bool host_visible = host_memory || d_.staging();
    const Device::Storage m = host_visible ? d_.allocate_host_visible(bytes) : d_.allocate_storage(bytes);
    live_[m.address] = {m, host_visible};
    return {static_cast<uint8_t*>(m.host), m.address};
  }
  void free(const CheckedMemory& memory) override {
    const auto& [m, host_visible] = live_.at(memory.va);
    if (host_visible) d_.release_host_visible(m);
    else d_.release_storage(m);
    live_.erase(memory.va);
  }
  ClockCalibration calibrate_clock() override { return d_.clock_calibration(); }
  bool emulated() const override { return false; }
  std::string fault_report() const override { return d_.fault(); }
  std::string describe() const override {
    return canonical_ + ", " + d_.physical_name() + ", " + driver_text(d_.properties()) + ", Vulkan " + d_.properties().api_version_text;
  }
  std::string identity_json() const override {
    const vk::VulkanDeviceProperties& p = d_.properties();
    return ", \"gpu\": " + json_quote(p.device_name) + ", \"driver_name\": " + json_quote(p.driver_name) +
           ", \"driver_info\": " + json_quote(p.driver_info) + ", \"api_version\": " + json_quote(p.api_version_text) +
           ", \"validation\": " + (d_.validation() ? "true" : "false") + ", \"clock\": " +
           json_quote(d_.calibrated_by_extension() ? "VK_EXT_calibrated_timestamps" : "bracketed timestamps") +
           ", \"staging\": " + (d_.staging() ? "true" : "false") + ", \"emulated\": false";
  }
  std::vector<CheckDifference> documented_differences() const override {
    return {{kSignalValueInMemory,
             "a VK signal is a timeline semaphore, whose value only the driver knows (vkGetSemaphoreCounterValue; Vulkan "
             "specification, Synchronization and Cache Control, Semaphores): its 16 bytes hold nothing, and another device's queue cannot wait on it by "
             "address (hcq/signal.h SignalPlacement::read_value; VK queues wait on foreign signals through a host thread)"}};
  }

 private:
  vk::VulkanDevice& d_;
  std::string canonical_;
  std::unordered_map<uint64_t, std::pair<Device::Storage, bool>> live_;  // by address: the memory, host-visible or storage
};
#endif

}  // namespace

std::unique_ptr<CheckedGpu> checked_gpu(Device& device, int index) {
  if (auto* nv = dynamic_cast<nv::NvDevice*>(&device)) return std::make_unique<CheckedNv>(*nv, device.name(), index);
  if (auto* amd = dynamic_cast<amd::AmdDevice*>(&device)) return std::make_unique<CheckedAmd>(*amd, device.name());
#if DOORBELL_HAVE_VULKAN
  if (auto* vk = dynamic_cast<vk::VulkanDevice*>(&device)) return std::make_unique<CheckedVk>(*vk, device.name());
#endif
  throw std::invalid_argument("device " + device.name() + " is not a GPU doorbell can check; expected an NV, AMD or VK device");
}

}  // namespace doorbell
