// What a GPU device's bound queue (HWQueue::bind into device memory: hcq/hw_queue.h BoundQueue) shares across
// backends: the life of the device it is bound to (the queue may outlive the device), the progress signal of the
// device queue it runs on and the submission count of its last run, so that a patch rewrites the queue's words only
// once the GPU has passed that run.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

#include "hcq/device.h"
#include "hcq/hw_queue.h"
#include "hcq/signal.h"

namespace doorbell {

struct GpuBoundQueue : BoundQueue {
  Signal* progress = nullptr;                 // the device queue's: released with its submission count
  std::atomic<uint64_t> last_submission{0};   // the count of the submission that last ran this queue
  std::shared_ptr<const DeviceLife> device_life;

  // Waits until the device queue passed the last run of this one (the GPU reads its words while a run is in flight).
  // Throws std::logic_error when the device is gone, and std::runtime_error naming the run when the wait fails
  // (a faulted or stalled device queue). `what` names the patch ("patch_value").
  void wait_for_previous_run(const char* what) const {
    if (!device_life->alive.load(std::memory_order_acquire))
      throw std::logic_error(std::string("HWQueue::") + what + ": the queue was bound to " + device_life->name +
                             ", which has been destroyed (and its bound copy with it)");
    const uint64_t last = last_submission.load(std::memory_order_acquire);
    try {
      progress->wait(last);
    } catch (const std::runtime_error& e) {
      throw std::runtime_error(std::string("HWQueue::") + what + " on " + device_life->name + ": the previous run of the bound queue (" +
                               progress->name() + " submission " + std::to_string(last) +
                               ") has not completed, so its words cannot be rewritten under the GPU: " + e.what());
    }
  }
};

}  // namespace doorbell
