// The shared state behind Tensor handles, and the registry of live states (tinygrad's all_tensors). Scheduling
// repoints live tensors at the buffers that now hold their values, so the registry must see every state that
// some handle still holds; it holds them weakly, so a state dies with its last handle.
#pragma once
#include <memory>
#include <vector>

#include "frontend/tensor.h"

namespace doorbell {

struct Tensor::State : std::enable_shared_from_this<Tensor::State> {
  UOp uop;

  explicit State(UOp u);
  ~State();
  State(const State&) = delete;
  State& operator=(const State&) = delete;

  // Intrusive links of the registry, guarded by its mutex.
  State* prev = nullptr;
  State* next = nullptr;
};

namespace frontend {
// Every state that is still alive (held by at least one Tensor) when called.
std::vector<std::shared_ptr<Tensor::State>> live_states();
}  // namespace frontend

}  // namespace doorbell
