#include "mockgpu/amd/engine_thread.h"

#include <utility>

namespace doorbell::mockgpu::amd {

EngineThread::EngineThread(std::function<Step()> step, Options options)
    : step_(std::move(step)), options_(options), thread_([this] { run(); }) {}

EngineThread::~EngineThread() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void EngineThread::run() {
  unsigned quiet_polls = 0;
  for (;;) {
    {
      std::lock_guard lock(mutex_);
      if (stop_) return;
    }
    const Step step = step_();
    if (step == Step::kDone) return;
    if (step == Step::kProgressed) {
      quiet_polls = 0;
      continue;
    }
    if (quiet_polls < options_.spin_polls) {
      ++quiet_polls;
    } else if (quiet_polls < options_.spin_polls + options_.yield_polls) {
      ++quiet_polls;
      std::this_thread::yield();
    } else {
      // Sleep on the condition variable, not sleep_for, so that destruction does not wait out a slice.
      std::unique_lock lock(mutex_);
      wake_.wait_for(lock, options_.sleep_slice, [this] { return stop_; });
    }
  }
}

}  // namespace doorbell::mockgpu::amd
