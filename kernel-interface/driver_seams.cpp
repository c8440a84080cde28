#include "kernel-interface/driver_seams.h"

#include <cstdlib>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>

namespace doorbell::kernel_interface {
namespace {

struct Registry {
  std::mutex mutex;
  std::map<std::string, DriverSeamFactory, std::less<>> emulators;
};

// Built on first use, so an installer running before main() finds it whatever the order of static initialisation.
Registry& registry() {
  static Registry* r = new Registry();  // never destroyed: devices live until exit and may outlive statics
  return *r;
}

}  // namespace

void register_emulated_driver(std::string_view driver, DriverSeamFactory factory) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  if (factory) {
    r.emulators.insert_or_assign(std::string(driver), std::move(factory));
  } else {
    r.emulators.erase(std::string(driver));
  }
}

bool emulated_driver_registered(std::string_view driver) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  return r.emulators.find(driver) != r.emulators.end();
}

bool mockgpu_requested() {
  const char* value = std::getenv("MOCKGPU");
  return value != nullptr && std::string_view(value) == "1";
}

std::unique_ptr<SyscallSeam> open_driver_seam(std::string_view driver) {
  if (!mockgpu_requested()) return std::make_unique<LinuxSyscalls>();
  DriverSeamFactory factory;
  {
    Registry& r = registry();
    std::lock_guard lock(r.mutex);
    auto it = r.emulators.find(driver);
    if (it != r.emulators.end()) factory = it->second;
  }
  if (!factory)
    throw std::runtime_error("MOCKGPU=1 asks for the emulated '" + std::string(driver) +
                             "' driver, but this program installed no emulator: link doorbell_mockgpu and call "
                             "doorbell::mockgpu::install() before opening a device, or unset MOCKGPU");
  std::unique_ptr<SyscallSeam> seam = factory();  // outside the lock: an emulated GPU takes a while to start
  if (seam == nullptr)
    throw std::runtime_error("MOCKGPU=1: the emulator installed for the '" + std::string(driver) + "' driver built no seam");
  return seam;
}

}  // namespace doorbell::kernel_interface
