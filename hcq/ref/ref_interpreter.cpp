#include "hcq/ref/ref_interpreter.h"

#include <atomic>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/element_storage.h"
#include "ir/exec_alu.h"
#include "ir/printer.h"
#include "ir/reduce_identity.h"

namespace doorbell {
namespace {

std::atomic<uint64_t> g_interpreted{0};

// A stored value must fit its dtype: convert it first (integers wrap, floats round).
void write_element(DType dt, std::byte* p, const ConstValue& v) {
  std::optional<ConstValue> c = convert_value(dt, v);
  if (!c) throw std::runtime_error("REF: a value out of range for " + dt.name() + " was stored");
  store_element(dt, *c, p);
}

int64_t as_index(const ConstValue& v) {
  if (const int64_t* i = std::get_if<int64_t>(&v)) return *i;
  if (const bool* b = std::get_if<bool>(&v)) return *b;
  throw std::runtime_error("REF: a float value used as an index");
}

// One kernel: the body is walked per element; RANGE values live in `env`, and values computed for the current
// range values are memoized until a range changes.
class KernelInterpreter {
 public:
  KernelInterpreter(const UOp& sink, void* const* buffers, std::span<const KernelVariable> variables, const int64_t* vars)
      : sink_(sink), buffers_(buffers) {
    for (size_t i = 0; i < variables.size(); i++) vars_[variables[i].name] = vars[i];
  }

  void run() { exec(sink_); }

 private:
  void exec(const UOp& u) {
    switch (u.op()) {
      case Ops::SINK: case Ops::GROUP: for (const UOp& s : u.src()) exec(s); return;
      case Ops::END: loop(u, 1, [&] { exec(u.src(0)); }); return;
      case Ops::STORE: {
        auto [dt, p] = element(u.src(0));
        if (p) write_element(dt, p, eval(u.src(1)));
        return;
      }
      default: throw std::runtime_error("REF: cannot execute " + print_node(u));
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
    int64_t count = p.vmax + 1;  // the PARAM's bounds are the buffer's valid element indices
    if (i < 0 || i >= count)
      throw std::runtime_error("REF: kernel index " + std::to_string(i) + " is outside buffer slot " + std::to_string(p.slot) +
                               " of " + std::to_string(count) + " elements");
    return {dt, static_cast<std::byte*>(buffers_[p.slot]) + i * dt.itemsize()};
  }

  ConstValue eval(const UOp& u) {
    if (u.op() == Ops::CONST) return u.const_value();
    if (u.op() == Ops::RANGE) return env_.at(u.get());
    if (u.op() == Ops::PARAM && u.arg_as<ParamArg>().addrspace == AddrSpace::ALU) {
      auto it = vars_.find(u.arg_as<ParamArg>().name);
      if (it == vars_.end()) throw std::runtime_error("REF: variable '" + u.arg_as<ParamArg>().name + "' has no value");
      return it->second;
    }
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
        return reduce_identity(op, u.dtype());  // an empty range, as the compiled kernels' accumulators start
      }
      default: break;
    }
    if (!group::Elementwise.contains(u.op())) throw std::runtime_error("REF: cannot evaluate " + print_node(u));
    std::vector<ConstValue> vals;
    std::vector<DType> dts;
    for (const UOp& s : u.src()) { vals.push_back(eval(s)); dts.push_back(s.dtype()); }
    std::optional<ConstValue> r = exec_alu(u.op(), u.dtype(), vals, dts);
    // exec_alu defines every op for every operand (division by zero, shifts out of range, float -> int out of
    // range: ir/exec_alu.h); what it does not evaluate is named
    if (!r) throw std::runtime_error("REF: cannot evaluate " + print_node(u));
    return *r;
  }

  UOp sink_;
  void* const* buffers_;
  std::unordered_map<std::string, int64_t> vars_;
  std::unordered_map<const UOpNode*, int64_t> env_;
  std::unordered_map<const UOpNode*, std::pair<uint64_t, ConstValue>> memo_;
  uint64_t generation_ = 0;
};

}  // namespace

void interpret_kernel(const UOp& sink, void* const* buffers, std::span<const KernelVariable> variables, const int64_t* vars) {
  g_interpreted.fetch_add(1, std::memory_order_relaxed);
  KernelInterpreter(sink, buffers, variables, vars).run();
}

uint64_t interpreted_kernels() { return g_interpreted.load(std::memory_order_relaxed); }

}  // namespace doorbell
