// Tensor handles, queries, scheduling and realization, and reading values back to the host.
#include <cstring>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

#include "frontend/host_data.h"
#include "frontend/jit_capture.h"
#include "frontend/lazy_uops.h"
#include "frontend/shape.h"
#include "frontend/state.h"
#include "hcq/devices.h"
#include "hcq/host_buffers.h"
#include "hcq/run_linear.h"
#include "hcq/trace.h"
#include "ir/graph_map.h"
#include "ir/node_map.h"
#include "scheduler/schedule.h"

namespace doorbell {

using frontend::fail;
using frontend::shape_str;

double Scalar::as_double() const {
  return std::visit([](auto v) { return static_cast<double>(v); }, value_);
}

void throw_item(int64_t numel, const IntTuple& shape) {
  fail("item", "a tensor of shape " + shape_str(shape) + " has " + std::to_string(numel) + " elements; expected exactly 1");
}

void Tensor::throw_ragged(int64_t expected, int64_t got) {
  fail("Tensor", "rows have " + std::to_string(expected) + " and " + std::to_string(got) + " values; expected equal rows");
}

Tensor::Tensor() : state_(State::make(UOp())) {}

Tensor::Tensor(UOp uop) {
  if (!uop) fail("Tensor", "a null UOp has no value");
  if (!uop.shape()) fail("Tensor", std::string(op_name(uop.op())) + " has no tensor shape; expected a tensor-graph value");
  // A scalar expression of (bound) variables, tinygrad's Tensor(v.bind(3)): an int32 scalar whose value is bound per
  // realize, so one compiled kernel serves every value.
  if (uop.dtype() == dtypes::weakint && uop.shape()->empty()) uop = uop.cast(dtypes::int32);
  if (uop.dtype().is_weak() || uop.dtype().is_void())
    fail("Tensor", "cannot hold dtype " + uop.dtype().name() + "; expected a storage dtype");
  state_ = State::make(std::move(uop));
}

// ---- queries ------------------------------------------------------------------------------------------------

namespace {
[[noreturn]] void throw_empty() { fail("Tensor", "this handle is empty (default-constructed); expected a tensor"); }
}  // namespace

UOp Tensor::uop() const {
  UOp u = state_->get();
  if (!u) throw_empty();
  return u;
}
// Neither changes over a state's life (assign and realize keep both), so neither needs the state's lock.
const IntTuple& Tensor::shape() const {
  if (!state_->shape) throw_empty();
  return *state_->shape;
}
DType Tensor::dtype() const {
  if (!state_->shape) throw_empty();
  return state_->dtype;
}
int64_t Tensor::numel() const { return frontend::prod(shape()); }
int64_t Tensor::ndim() const { return static_cast<int64_t>(shape().size()); }
int64_t Tensor::size(int64_t axis) const { return shape()[frontend::resolve_axis("size", axis, shape())]; }

std::string Tensor::device() const {
  // The device of the first buffer the value is computed from (a result of NV buffers is NV's, as the scheduler
  // stores it there); a value of constants alone goes to the default device.
  const UOp root = uop();
  std::vector<const UOp*> stack{&root};
  NodeMap<char> seen(64);
  while (!stack.empty()) {
    const UOp& u = *stack.back();
    stack.pop_back();
    if (u.op() == Ops::BUFFER) {
      if (u.src().size() > 1 && u.src(1).op() == Ops::DEVICE) return u.src(1).arg_as<std::string>();
      continue;
    }
    for (auto it = u.src().rbegin(); it != u.src().rend(); ++it) {
      bool fresh = false;
      seen.get(it->get(), &fresh);
      if (fresh) stack.push_back(&*it);
    }
  }
  return default_device_name();
}

// ---- scheduling ---------------------------------------------------------------------------------------------

void Tensor::apply_map_to_tensors(const std::vector<std::pair<UOp, UOp>>& becomes) {
  if (becomes.empty()) return;
  // One map for every tensor: graphs share most of their nodes, and each is rebuilt once.
  GraphMap map("becomes", [](const UOp& u, std::vector<UOp>& src) { return rebuilt(u, std::move(src)); });
  for (const auto& [from, to] : becomes) map.set(from, to);
  // Each state is rewritten under its own lock, and written only when its graph holds a value stored here: a
  // tensor another thread uses is touched only when it shares that value (equal lazy graphs are one graph).
  for (const std::shared_ptr<State>& s : frontend::live_states()) s->rewrite([&](const UOp& u) { return map(u); });
}

ScheduleOptions schedule_options_for(const std::string& device_name) {
  const LoweringOptions& target = device(device_name).target().options();
  return {.split_leading_reduce = target.split_leading_reduce, .pack_matmul_panels = target.pack_matmul_panels};
}

namespace {

ScheduleResult schedule_outputs(const std::vector<Tensor>& outputs) {
  trace::Scope span("schedule", "schedule");  // PROFILE=1: the host's scheduling on the timeline
  std::vector<UOp> uops;
  uops.reserve(outputs.size());
  for (const Tensor& t : outputs) uops.push_back(t.uop());
  // Every assign (AFTER) and CONTIGUOUS the outputs depend on is stored by this schedule anyway; scheduling them
  // as outputs too maps them to their buffers, so a live tensor that holds one does not run its store a second
  // time later (tinygrad tags them for realization as well).
  std::unordered_set<const UOpNode*> seen;
  for (const UOp& u : uops) seen.insert(u.get());
  for (const UOp& u : UOp::sink(uops).toposort())
    if (((u.op() == Ops::AFTER && !u.is_bound_variable()) || u.op() == Ops::CONTIGUOUS) && seen.insert(u.get()).second) uops.push_back(u);
  // One option set per schedule: the first output's device's (a value is stored on the device of its inputs, and
  // schedules that mix devices are rare today).
  ScheduleResult r = schedule(uops, outputs.empty() ? ScheduleOptions{} : schedule_options_for(outputs.front().device()));
  span.add("calls", static_cast<int64_t>(r.linear.src().size()));
  span.add("cache", r.cache_hit ? "hit" : "miss");
  return r;
}

}  // namespace

UOp Tensor::schedule_linear(const std::vector<Tensor>& outputs) {
  ScheduleResult r = schedule_outputs(outputs);
  apply_map_to_tensors(r.becomes);
  return r.linear;
}

UOp Tensor::schedule_linear() const { return schedule_linear(std::vector<Tensor>{*this}); }

bool Tensor::is_realized() const {
  return frontend::plain_buffer(uop()) || frontend::virtual_const_value(uop()).has_value();
}

void Tensor::realize(const std::vector<Tensor>& tensors) {
  std::vector<Tensor> todo;
  for (const Tensor& t : tensors)
    if (!t.is_realized()) todo.push_back(t);
  if (todo.empty()) return;
  // run_linear compiles each kernel for its device's target (program cache) and runs it there. The tensors are
  // repointed to their buffers only after the kernels ran: the rewrite reaches every live tensor holding these
  // values, also another thread's, and a tensor that looks realized must hold its values (README "Threads"). If a
  // kernel fails the tensors stay lazy.
  ScheduleResult r = schedule_outputs(todo);
  run_linear(r.linear);
  if (frontend::JitCapture* c = frontend::active_jit_capture()) c->linears.push_back(r.linear);  // a Jit's call 2
  apply_map_to_tensors(r.becomes);
}

Tensor Tensor::realize() const {
  realize(std::vector<Tensor>{*this});
  return *this;
}

// ---- reading values -----------------------------------------------------------------------------------------

std::vector<std::byte> Tensor::host_values(DType as) const {
  frontend::refuse_during_jit_capture("tolist/item");
  size_t n = static_cast<size_t>(numel());
  std::vector<std::byte> out(n * as.itemsize());
  if (std::optional<ConstValue> c = frontend::virtual_const_value(uop())) {  // no buffer: every element is c
    std::vector<std::byte> one(dtype().itemsize());
    frontend::store_element(dtype(), *c, one.data());
    std::vector<std::byte> conv(as.itemsize());
    frontend::convert_elements("tolist", one.data(), dtype(), 1, as, conv.data());
    for (size_t i = 0; i < n; i++) std::memcpy(out.data() + i * conv.size(), conv.data(), conv.size());
    return out;
  }
  Tensor t = *this;
  // A view that is not a plain reshape of a buffer (permute, shrink, expand...) is copied out by a kernel first;
  // a computed value is realized in place so this tensor keeps its buffer.
  if (!frontend::plain_buffer(t.uop()) && group::Movement.contains(t.uop().op())) t = t.contiguous();
  t.realize();
  UOp buffer = frontend::plain_buffer(t.uop());
  if (!buffer) fail("tolist", "after realize the tensor is " + std::string(op_name(t.uop().op())) + ", expected a view of a BUFFER");
  // Out of the buffer through its device (read_buffer: a GPU's copy engine for large data), converted after if need be.
  if (dtype() == as) {
    read_buffer(buffer, out);
    return out;
  }
  std::vector<std::byte> stored(n * dtype().itemsize());
  read_buffer(buffer, stored);
  frontend::convert_elements("tolist", stored.data(), dtype(), n, as, out.data());
  return out;
}

}  // namespace doorbell
