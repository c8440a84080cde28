// In-place assignment and contiguous. assign builds AFTER(target, STORE(target, value)): readers of the AFTER see
// the new value and readers of the buffer itself the old one, so `b = a + 1; a.assign(a * 2)` keeps b's meaning.
#include "frontend/lazy_uops.h"
#include "frontend/shape.h"
#include "frontend/state.h"
#include "scheduler/schedule.h"

namespace doorbell {

using frontend::fail;
using frontend::shape_str;

Tensor Tensor::assign(const Tensor& value) const {
  if (value.shape() != shape())
    fail("assign", "a tensor of shape " + shape_str(shape()) + " cannot take a value of shape " + shape_str(value.shape()) +
                       "; expected equal shapes");
  if (value.dtype() != dtype())
    fail("assign", "a " + dtype().name() + " tensor cannot take a value of dtype " + value.dtype().name() +
                       "; expected equal dtypes (cast the value first)");
  const UOp v = value.uop();
  // Another thread's realize may repoint this tensor between reading and writing it (when it stores an equal lazy
  // value): then the assign is built again on what it holds now, so the write never undoes that realize.
  for (;;) {
    const UOp target = uop();
    if (v == target) return *this;
    // Nothing stored yet (a constant or an unrealized computation): the tensor simply becomes the value.
    UOp next = base_buffer(target)
                   ? UOp::make(Ops::AFTER, target.dtype(), {target, UOp::make(Ops::STORE, dtypes::void_, {target, v})})
                   : v;
    if (state_->replace(target, std::move(next))) return *this;
  }
}

Tensor Tensor::assign(Scalar value) const { return assign(full_like(*this, value)); }

Tensor Tensor::contiguous() const {
  const UOp& u = uop();
  // Already stored contiguously, or already asked for: nothing to add.
  if (u.op() == Ops::CONTIGUOUS || frontend::plain_buffer(u)) return Tensor(u);
  return Tensor(UOp::make(Ops::CONTIGUOUS, u.dtype(), {u}));
}

}  // namespace doorbell
