// Tensor::to: a tensor's value moved to another device, as one CALL(COPY, destination, source) that run_linear runs.
#include "frontend/jit_capture.h"
#include "frontend/lazy_uops.h"
#include "frontend/tensor.h"
#include "hcq/devices.h"
#include "hcq/run_linear.h"
#include "scheduler/schedule.h"

namespace doorbell {

Tensor Tensor::to(const std::string& device_name) const {
  Device& target = doorbell::device(device_name);  // throws for a name it cannot open
  if (&target == &doorbell::device(device())) return *this;
  // The source must be a whole buffer in row-major order: a view (permute, shrink...) or a constant is stored first.
  Tensor source = *this;
  if (!frontend::plain_buffer(source.uop())) source = source.contiguous();
  source.realize();
  const UOp from = frontend::plain_buffer(source.uop());
  const UOp to = new_buffer(dtype(), numel(), target.name());
  const UOp copy = UOp::make(Ops::CALL, dtypes::void_, {UOp::make(Ops::COPY, dtypes::void_, {}), to, from});
  const UOp linear = UOp::make(Ops::LINEAR, dtypes::void_, {copy});
  run_linear(linear);
  if (frontend::JitCapture* c = frontend::active_jit_capture()) c->linears.push_back(linear);  // a Jit's call 2
  return Tensor(frontend::reshape_uop(to, shape()));
}

}  // namespace doorbell
