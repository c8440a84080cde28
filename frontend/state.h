// The shared state behind Tensor handles, and the registry of live states (tinygrad's all_tensors). Scheduling
// repoints live tensors at the buffers that now hold their values, so the registry must see every state that
// some handle still holds; it holds them weakly, so a state dies with its last handle.
//
// Threads (README "Threads"): a realize on any thread rewrites every live state whose graph holds a value it
// stored, including states another thread is using (hash-consing makes equal lazy values one graph). So the UOp of
// a state is read and written only under the state's own lock; its shape and dtype never change (assign and the
// rewrite keep both) and are read without one.
#pragma once
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "frontend/tensor.h"

namespace doorbell {

struct Tensor::State {
  // A state linked into the registry. Made only here: the registry hands out shared_ptrs, so a state is linked
  // only after its control block exists.
  static std::shared_ptr<State> make(UOp u);
  ~State();
  State(const State&) = delete;
  State& operator=(const State&) = delete;

  UOp get() const {
    std::lock_guard lock(mu_);
    return uop_;
  }
  // Replaces the UOp only if it is still `expected` (another thread's rewrite may have come between the caller's
  // get() and this); returns whether it did.
  // The UOp replaced is released after the lock (freeing a graph may free buffers).
  bool replace(const UOp& expected, UOp desired) {
    std::lock_guard lock(mu_);
    if (!(uop_ == expected)) return false;
    std::swap(uop_, desired);
    return true;
  }
  // Rewrites the UOp with f under the lock; writes only when f changes it.
  template <class F> void rewrite(F&& f) {
    UOp old;  // destroyed after the lock is released
    std::lock_guard lock(mu_);
    if (!uop_) return;
    if (UOp next = f(uop_); !(next == uop_)) {
      old = std::move(uop_);
      uop_ = std::move(next);
    }
  }

  const std::optional<IntTuple> shape;  // nullopt for an empty handle
  const DType dtype;

  // Intrusive links of the registry, guarded by its mutex.
  State* prev = nullptr;
  State* next = nullptr;
  std::weak_ptr<State> self;  // set before the state is linked; read by live_states under the registry's mutex

 private:
  explicit State(UOp u);
  mutable std::mutex mu_;
  UOp uop_;
};

namespace frontend {
// Every state that is still alive (held by at least one Tensor) when called.
std::vector<std::shared_ptr<Tensor::State>> live_states();
}  // namespace frontend

}  // namespace doorbell
