// The polling thread behind each emulated AMD queue engine (PM4 and SDMA, queue_engine.h). The engine's step()
// reads the doorbell and runs what it finds; this thread calls it again and again. When a step makes no progress
// (the ring is empty, or a wait packet is unsatisfied) the thread spins a few polls, then yields the core, then
// sleeps in short slices, as the NV emulator's command processor does (mockgpu/nv/mock_gpu.cpp): the machine running
// tests is small and shared. Destruction wakes a sleeping thread at once and joins it.
#pragma once
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace doorbell::mockgpu::amd {

class EngineThread {
 public:
  enum class Step {
    kProgressed,  // ran packets; call again at once
    kIdle,        // nothing new behind the doorbell
    kStalled,     // a wait packet is unsatisfied: re-poll it
    kDone,        // the queue stopped (a fault): the thread ends
  };
  struct Options {
    unsigned spin_polls = 16;                    // polls that only re-check
    unsigned yield_polls = 256;                  // then polls that yield the core
    std::chrono::microseconds sleep_slice{100};  // then sleeps of this length
  };

  // Starts the thread at once; `step` must stay callable until the destructor returns.
  EngineThread(std::function<Step()> step, Options options);
  explicit EngineThread(std::function<Step()> step) : EngineThread(std::move(step), Options{}) {}
  ~EngineThread();  // stops and joins; a step already running finishes first
  EngineThread(const EngineThread&) = delete;
  EngineThread& operator=(const EngineThread&) = delete;

 private:
  void run();

  std::function<Step()> step_;
  Options options_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;  // guarded by mutex_
  std::thread thread_;
};

}  // namespace doorbell::mockgpu::amd
