#include "hcq/device.h"

#include <stdexcept>

namespace doorbell {

Device::Device(std::string name, bool host_signals) : name_(std::move(name)), life_(std::make_shared<DeviceLife>(name_)) {
  if (host_signals) create_timeline_signal();
}

void Device::create_timeline_signal() { timeline_signal_ = &new_signal("timeline", 0); }

Device::~Device() { life_->alive.store(false, std::memory_order_release); }

Signal& Device::new_signal(std::string name, uint64_t initial) {
  std::lock_guard lock(signals_mutex_);
  signals_.push_back(std::make_unique<Signal>(name_, std::move(name), place_signal(), initial));
  return *signals_.back();
}

const Target& Device::target() const {
  if (target_ == nullptr) throw std::logic_error("device " + name_ + " has no compile target; expected its backend to set one");
  return *target_;
}

std::shared_ptr<const LoadedProgram> Device::load(const UOp& program) {
  (void)program;
  throw std::logic_error("device " + name_ + " loads no programs");
}

const LoadedProgram& Device::program(const UOp& program) {
  {
    std::lock_guard lock(programs_mutex_);
    auto it = programs_.find(program.get());
    if (it != programs_.end()) return *it->second.loaded;
  }
  // Loaded outside the lock (a GPU upload can take a while); a racing duplicate is dropped.
  std::shared_ptr<const LoadedProgram> loaded = load(program);
  std::lock_guard lock(programs_mutex_);
  return *programs_.emplace(program.get(), Loaded{program, std::move(loaded)}).first->second.loaded;
}

void Device::synchronize(std::chrono::milliseconds timeout) {
  const uint64_t target = timeline_value() - 1;
  uint64_t last = 0;
  if (!timeline_signal_->wait_for(target, timeout, &last)) {
    std::string message = timeline_signal_->timeout_message(target, timeout, last);
    if (const std::string blocked = blockage(); !blocked.empty()) message += "; " + blocked;
    throw std::runtime_error(message);
  }
  std::string error;
  size_t more = 0;
  {
    std::lock_guard lock(errors_mutex_);
    if (error_count_ == 0) return;
    error = std::move(first_error_);
    more = error_count_ - 1;
    first_error_.clear();
    error_count_ = 0;
  }
  if (more != 0) error += " (and " + std::to_string(more) + " more failed " + (more == 1 ? "queue" : "queues") + ")";
  throw std::runtime_error(error);
}

void Device::report_queue_error(std::string message) {
  std::lock_guard lock(errors_mutex_);
  if (error_count_++ == 0) first_error_ = std::move(message);
}

}  // namespace doorbell
