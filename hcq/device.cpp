#include "hcq/device.h"

#include "hcq/hw_queue.h"

#include <cstring>
#include <stdexcept>

#include "compiler/program.h"

namespace doorbell {

Device::Device(std::string name, bool host_signals) : name_(std::move(name)), life_(std::make_shared<DeviceLife>(name_)) {
  if (host_signals) create_timeline_signal();
}

void Device::create_timeline_signal() { timeline_signal_ = &new_signal("timeline", 0); }

Device::~Device() { life_->alive.store(false, std::memory_order_release); }

void Device::copy_in(const Storage& storage, uint64_t offset, const void* src, size_t bytes) {
  if (bytes != 0) std::memcpy(static_cast<std::byte*>(storage.host) + offset, src, bytes);
}

void Device::copy_out(void* dst, const Storage& storage, uint64_t offset, size_t bytes) {
  if (bytes != 0) std::memcpy(dst, static_cast<const std::byte*>(storage.host) + offset, bytes);
}

Signal& Device::new_signal(std::string name, uint64_t initial) {
  std::lock_guard lock(signals_mutex_);
  signals_.push_back(std::make_unique<Signal>(name_, std::move(name), place_signal(), initial));
  return *signals_.back();
}

const Target& Device::target() const {
  if (target_ == nullptr && !no_target_reason_.empty()) throw std::logic_error("device " + name_ + " has no compile target: " + no_target_reason_);
  if (target_ == nullptr) throw std::logic_error("device " + name_ + " has no compile target; expected its backend to set one");
  return *target_;
}

std::shared_ptr<const LoadedProgram> Device::load(const UOp& program) {
  (void)program;
  throw std::logic_error("device " + name_ + " loads no programs");
}

const LoadedProgram& Device::program(const UOp& program) {
  std::vector<Retired> dead;  // destroyed after the lock is released
  {
    std::lock_guard lock(programs_mutex_);
    auto it = programs_.find(program.get());
    if (it != programs_.end()) {
      programs_lru_.splice(programs_lru_.begin(), programs_lru_, it->second.lru);
      if (!retired_.empty()) dead = collect_programs_locked();
      return *it->second.loaded;
    }
    // Evicted but not freed yet: back into the cache, no reload.
    for (size_t i = 0; i < retired_.size(); i++) {
      if (retired_[i].program.get() != program.get()) continue;
      programs_lru_.push_front(program.get());
      Loaded& l = programs_.emplace(program.get(), Loaded{program, std::move(retired_[i].loaded), programs_lru_.begin()}).first->second;
      retired_.erase(retired_.begin() + static_cast<std::ptrdiff_t>(i));
      dead = collect_programs_locked();
      return *l.loaded;
    }
  }
  // Loaded outside the lock (a GPU upload can take a while); a racing duplicate is dropped.
  std::shared_ptr<const LoadedProgram> loaded = load(program);
  std::lock_guard lock(programs_mutex_);
  auto [it, inserted] = programs_.emplace(program.get(), Loaded{program, std::move(loaded), {}});
  if (inserted) {
    programs_lru_.push_front(program.get());
    it->second.lru = programs_lru_.begin();
  } else {
    programs_lru_.splice(programs_lru_.begin(), programs_lru_, it->second.lru);
  }
  const LoadedProgram& result = *it->second.loaded;
  dead = collect_programs_locked();  // never the one just used: it is at the front
  return result;
}

std::vector<Device::Retired> Device::collect_programs_locked() {
  const size_t limit = program_cache_limit();
  while (programs_.size() > limit) {
    auto victim = programs_.find(programs_lru_.back());
    retired_.push_back(Retired{std::move(victim->second.program), std::move(victim->second.loaded), std::nullopt});
    programs_.erase(victim);
    programs_lru_.pop_back();
  }
  // A queue carries only the LoadedProgram's address, and whoever records one holds the PROGRAM until it submitted
  // (run_linear holds the schedule). So once the device holds the last handle, every submission that can use the
  // program is on the timeline below timeline_value(): freed when the timeline reaches it.
  std::vector<Retired> dead;
  const uint64_t reached = timeline_signal_ != nullptr ? timeline_signal_->value() : 0;
  for (size_t i = 0; i < retired_.size();) {
    Retired& r = retired_[i];
    if (r.program.get()->refs.load(std::memory_order_acquire) != 1) r.done_at.reset();  // held again
    else if (!r.done_at) r.done_at = timeline_value() - 1;
    if (r.done_at && reached >= *r.done_at) {
      dead.push_back(std::move(r));
      retired_.erase(retired_.begin() + static_cast<std::ptrdiff_t>(i));
    } else {
      i++;
    }
  }
  return dead;
}

size_t Device::loaded_programs() {
  std::lock_guard lock(programs_mutex_);
  return programs_.size();
}

size_t Device::retired_programs() {
  std::lock_guard lock(programs_mutex_);
  return retired_.size();
}

void Device::submit_on_timeline(HWQueue& q) {
  std::lock_guard lock(timeline_submit_mu_);
  q.signal(timeline_signal(), next_timeline()).submit(*this);
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
