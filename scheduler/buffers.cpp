#include <atomic>

#include "scheduler/schedule.h"

namespace doorbell {

UOp new_buffer(DType dtype, int64_t count, const std::string& device) {
  static std::atomic<int64_t> next_id{1};
  if (count < 0) throw std::invalid_argument("new_buffer: count " + std::to_string(count) + " is negative");
  if (dtype.is_weak() || dtype.is_void()) throw std::invalid_argument("new_buffer: cannot store " + dtype.name() + "; expected a storage dtype");
  UOp unique = UOp::make(Ops::UNIQUE, dtypes::void_, {}, next_id.fetch_add(1));
  UOp dev = UOp::make(Ops::DEVICE, dtypes::void_, {}, device);
  return UOp::make(Ops::BUFFER, dtype, {unique, dev}, count);
}

UOp base_buffer(const UOp& view) {
  UOp u = view;
  while (u) {
    if (u.op() == Ops::BUFFER) return u;
    if (group::Movement.contains(u.op()) || u.op() == Ops::AFTER || u.op() == Ops::DETACH || u.op() == Ops::CONTIGUOUS_BACKWARD) u = u.src(0);
    else return UOp();
  }
  return UOp();
}

}  // namespace doorbell
