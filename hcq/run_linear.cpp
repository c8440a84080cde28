#include "hcq/run_linear.h"

#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <unordered_map>

#include "compiler/program.h"
#include "hcq/devices.h"
#include "hcq/host_buffers.h"
#include "hcq/hw_queue.h"
#include "ir/debug.h"
#include "ir/element_storage.h"
#include "ir/exec_alu.h"
#include "ir/printer.h"

namespace doorbell {
namespace {

// A stored value must fit its dtype: convert it first (integers wrap, floats round).
void write_element(DType dt, std::byte* p, const ConstValue& v) {
  std::optional<ConstValue> c = convert_value(dt, v);
  if (!c) throw std::runtime_error("run_linear: a value out of range for " + dt.name() + " was stored");
  store_element(dt, *c, p);
}

int64_t as_index(const ConstValue& v) {
  if (const int64_t* i = std::get_if<int64_t>(&v)) return *i;
  if (const bool* b = std::get_if<bool>(&v)) return *b;
  throw std::runtime_error("run_linear: a float value used as an index");
}

// One kernel: the body is walked per element; RANGE values live in `env`, and values computed for the current
// range values are memoized until a range changes.
class KernelInterpreter {
 public:
  KernelInterpreter(const UOp& call) : call_(call) {
    for (size_t i = 1; i < call.src().size(); i++) buffers_.push_back(buffer_bytes(call.src(i)));
  }

  void run() { exec(call_.src(0)); }

 private:
  void exec(const UOp& u) {
    switch (u.op()) {
      case Ops::SINK: for (const UOp& s : u.src()) exec(s); return;
      case Ops::END: loop(u, 1, [&] { exec(u.src(0)); }); return;
      case Ops::STORE: {
        auto [dt, p] = element(u.src(0));
        if (p) write_element(dt, p, eval(u.src(1)));
        return;
      }
      default: throw std::runtime_error("run_linear: cannot execute " + print_node(u));
    }
  }

  template <class F> void loop(const UOp& u, size_t first, const F& body) {
    if (first == u.src().size()) { body(); return; }
    const UOp& r = u.src(first);
    int64_t end = as_index(eval(r.src(0)));
    for (int64_t i = 0; i < end; i++) {
      env_[r.get()] = i;
      generation_++;
      loop(u, first + 1, body);
    }
    env_.erase(r.get());
    generation_++;
  }

  // The element an INDEX names, or a null pointer when its validity is false.
  std::pair<DType, std::byte*> element(const UOp& index) {
    const ParamArg& p = std::get<ParamArg>(index.src(0).arg());
    DType dt = index.src(0).dtype();
    if (index.src().size() > 2 && !std::get<bool>(eval(index.src(2)))) return {dt, nullptr};
    int64_t i = as_index(eval(index.src(1)));
    std::span<std::byte> bytes = buffers_.at(p.slot);
    int64_t count = static_cast<int64_t>(bytes.size()) / dt.itemsize();
    if (i < 0 || i >= count)
      throw std::runtime_error("run_linear: kernel index " + std::to_string(i) + " is outside buffer slot " + std::to_string(p.slot) +
                               " of " + std::to_string(count) + " elements");
    return {dt, bytes.data() + i * dt.itemsize()};
  }

  ConstValue eval(const UOp& u) {
    if (u.op() == Ops::CONST) return u.const_value();
    if (u.op() == Ops::RANGE) return env_.at(u.get());
    auto it = memo_.find(u.get());
    if (it != memo_.end() && it->second.first == generation_) return it->second.second;
    ConstValue v = compute(u);
    memo_[u.get()] = {generation_, v};
    return v;
  }

  ConstValue compute(const UOp& u) {
    switch (u.op()) {
      case Ops::LOAD: {
        auto [dt, p] = element(u.src(0));
        return p ? load_element(dt, p) : *convert_value(dt, int64_t{0});
      }
      case Ops::REDUCE: {
        Ops op = u.arg_as<ReduceArg>().op;
        std::optional<ConstValue> acc;
        DType dts[2] = {u.dtype(), u.dtype()};
        loop(u, 1, [&] {
          ConstValue x = eval(u.src(0));
          if (!acc) { acc = x; return; }
          ConstValue vals[2] = {*acc, x};
          acc = exec_alu(op, u.dtype(), vals, dts);
        });
        if (acc) return *acc;
        throw std::runtime_error("run_linear: REDUCE over an empty range");
      }
      default: break;
    }
    if (!group::Elementwise.contains(u.op())) throw std::runtime_error("run_linear: cannot evaluate " + print_node(u));
    std::vector<ConstValue> vals;
    std::vector<DType> dts;
    for (const UOp& s : u.src()) { vals.push_back(eval(s)); dts.push_back(s.dtype()); }
    std::optional<ConstValue> r = exec_alu(u.op(), u.dtype(), vals, dts);
    if (!r) throw std::runtime_error("run_linear: " + std::string(op_name(u.op())) + " is undefined for its operands (division by zero or a shift out of range)");
    return *r;
  }

  UOp call_;
  std::vector<std::span<std::byte>> buffers_;
  std::unordered_map<const UOpNode*, int64_t> env_;
  std::unordered_map<const UOpNode*, std::pair<uint64_t, ConstValue>> memo_;
  uint64_t generation_ = 0;
};

// A compiled kernel is submitted to the CPU HCQ device, which splits it across its workers; the device's ring is
// in order, so kernels run in schedule order without host waits between them. At DEBUG=2 each kernel is
// bracketed by timestamps the queue writes and waited for, and one line per kernel gives its kernel-only time.
void run_program(const UOp& call, Device& dev) {
  CompiledKernel k = compile_kernel(call.src(0).src(0));  // a program cache hit: the same SINK compiled it
  std::vector<void*> buffers;
  for (size_t i = 1; i < call.src().size(); i++) buffers.push_back(buffer_bytes(call.src(i)).data());
  HWQueue q;
  bool timed = debug_level() >= 2;
  Signal* start = nullptr;
  Signal* end = nullptr;
  if (timed) {  // one pair on the CPU device, made once
    static Signal* s = &dev.new_signal("kernel start");
    static Signal* e = &dev.new_signal("kernel end");
    start = s;
    end = e;
    q.timestamp(*start);
  }
  q.exec(k.fn, std::span<void* const>(buffers.data(), buffers.size()));
  if (timed) q.timestamp(*end);
  q.signal(dev.timeline_signal(), dev.next_timeline()).submit(dev);
  if (!timed) return;
  dev.synchronize();
  double us = static_cast<double>(end->timestamp() - start->timestamp()) / 1e3;
  std::fprintf(stderr, "%-28s %2zu buffers  %10.2f us\n", k.name.c_str(), buffers.size(), us);
}

}  // namespace

void run_linear(const UOp& linear) {
  if (!linear || linear.op() != Ops::LINEAR)
    throw std::invalid_argument("run_linear: expected a LINEAR, got " + (linear ? print_node(linear) : std::string("a null UOp")));
  Device* dev = nullptr;  // created on the first compiled kernel
  for (const UOp& call : linear.src()) {
    if (call.op() != Ops::CALL || call.src().empty())
      throw std::invalid_argument("run_linear: expected CALL(SINK or PROGRAM, buffers...), got " + print_node(call));
    switch (call.src(0).op()) {
      case Ops::SINK:  // the reference, element by element on this thread: after what the device still runs
        if (dev) dev->synchronize();
        KernelInterpreter(call).run();
        break;
      case Ops::PROGRAM:  // compiled by compile_linear
        if (!dev) dev = &device("CPU");
        run_program(call, *dev);
        break;
      default: throw std::invalid_argument("run_linear: no handler for a CALL of " + print_node(call.src(0)));
    }
  }
  if (dev) dev->synchronize();  // results are readable when run_linear returns
}

}  // namespace doorbell
