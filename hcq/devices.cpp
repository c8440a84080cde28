#include "hcq/devices.h"

#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>

#include "hcq/backend.h"

namespace doorbell {
namespace {

struct Devices {
  std::mutex mu;
  std::map<std::string, Device*, std::less<>> by_text;                      // every spelling asked for
  std::map<std::string, std::unique_ptr<Device>, std::less<>> by_canonical;  // never destroyed
};

Devices& devices() {
  static Devices* d = new Devices();  // never destroyed: kernels may run until the process exits
  return *d;
}

}  // namespace

Device& device(const std::string& name) {
  Devices& d = devices();
  std::lock_guard lock(d.mu);
  if (auto it = d.by_text.find(name); it != d.by_text.end()) return *it->second;
  const DeviceName parsed = parse_device_name(name);
  const std::string canonical = parsed.canonical();
  auto it = d.by_canonical.find(canonical);
  if (it == d.by_canonical.end()) {
    // Opened under the lock: two threads asking for a new device must not open its hardware twice.
    std::unique_ptr<Device> opened = find_backend(parsed.prefix)->open(parsed);
    if (!opened) throw std::runtime_error("device " + canonical + ": its backend opened nothing");
    if (opened->name() != canonical)
      throw std::logic_error("device " + canonical + ": the backend named it " + opened->name() + "; expected the canonical name");
    it = d.by_canonical.emplace(canonical, std::move(opened)).first;
  }
  d.by_text.emplace(name, it->second.get());
  return *it->second;
}

}  // namespace doorbell
