// The registry of live tensor states: an intrusive list, so registering and dropping a state are O(1) and
// a state is never kept alive by the registry.
#include <mutex>

#include "frontend/state.h"

namespace doorbell {
namespace {

struct Registry {
  std::mutex mu;
  Tensor::State* head = nullptr;
  size_t count = 0;
};

Registry& registry() {
  static Registry* r = new Registry();  // never destroyed: tensors in static objects may outlive main
  return *r;
}

}  // namespace

Tensor::State::State(UOp u)
    : shape(u && u.shape() ? std::optional<IntTuple>(*u.shape()) : std::nullopt),
      dtype(u ? u.dtype() : dtypes::void_),
      uop_(std::move(u)) {}

std::shared_ptr<Tensor::State> Tensor::State::make(UOp u) {
  std::shared_ptr<State> s(new State(std::move(u)));
  // Linked only now: live_states() on another thread reads `self` as soon as the state is in the list.
  s->self = s;
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  s->next = r.head;
  if (s->next) s->next->prev = s.get();
  r.head = s.get();
  r.count++;
  return s;
}

Tensor::State::~State() {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  if (prev) prev->next = next;
  else r.head = next;
  if (next) next->prev = prev;
  r.count--;
}

namespace frontend {

std::vector<std::shared_ptr<Tensor::State>> live_states() {
  Registry& r = registry();
  std::vector<std::shared_ptr<Tensor::State>> out;
  std::lock_guard lock(r.mu);
  out.reserve(r.count);
  // A state whose last handle is going away is still linked until its destructor takes the lock; lock() then
  // gives null and it is skipped.
  for (Tensor::State* s = r.head; s; s = s->next)
    if (auto sp = s->self.lock()) out.push_back(std::move(sp));
  return out;
}

}  // namespace frontend

size_t Tensor::live_tensor_count() {
  Registry& r = registry();
  std::lock_guard lock(r.mu);
  return r.count;
}

}  // namespace doorbell
