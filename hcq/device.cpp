#include "hcq/device.h"

namespace doorbell {

Device::Device(std::string name, bool host_signals) : name_(std::move(name)) {
  if (host_signals) create_timeline_signal();
}

void Device::create_timeline_signal() { timeline_signal_ = &new_signal("timeline", 0); }

Device::~Device() = default;

Signal& Device::new_signal(std::string name, uint64_t initial) {
  std::lock_guard lock(signals_mutex_);
  signals_.push_back(std::make_unique<Signal>(name_, std::move(name), place_signal(), initial));
  return *signals_.back();
}

void Device::synchronize(std::chrono::milliseconds timeout) { timeline_signal_->wait(timeline_value() - 1, timeout); }

}  // namespace doorbell
