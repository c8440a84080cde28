#include "ir/environment.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <mutex>

namespace doorbell {
namespace {

struct DeviceSetting {
  std::mutex mu;
  std::string name = [] {
    const char* e = std::getenv("DEV");
    std::string s = e && *e ? e : "CPU";
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    return s;
  }();
};
DeviceSetting& device_setting() {
  static DeviceSetting* s = new DeviceSetting();
  return *s;
}

}  // namespace

std::string default_device_name() {
  DeviceSetting& s = device_setting();
  std::lock_guard lock(s.mu);
  return s.name;
}

void set_default_device_name(std::string name) {
  DeviceSetting& s = device_setting();
  std::lock_guard lock(s.mu);
  s.name = std::move(name);
}

}  // namespace doorbell
