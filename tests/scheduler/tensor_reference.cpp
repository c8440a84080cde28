#include "tensor_reference.h"

#include <cmath>
#include <stdexcept>
#include <unordered_map>

#include "hcq/host_buffers.h"
#include "ir/exec_alu.h"
#include "ir/printer.h"
#include "ir/element_storage.h"

namespace doorbell::testing {
namespace {

int64_t numel(const IntTuple& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

IntTuple unravel(int64_t flat, const IntTuple& shape) {
  IntTuple idx(shape.size());
  for (size_t i = shape.size(); i-- > 0;) {
    idx[i] = shape[i] ? flat % shape[i] : 0;
    flat = shape[i] ? flat / shape[i] : 0;
  }
  return idx;
}

int64_t ravel(const IntTuple& idx, const IntTuple& shape) {
  int64_t flat = 0;
  for (size_t i = 0; i < shape.size(); i++) flat = flat * shape[i] + idx[i];
  return flat;
}

ConstValue zero(DType dt) { return *convert_value(dt, int64_t{0}); }

class Evaluator {
 public:
  Dense eval(const UOp& u) {
    if (auto it = memo_.find(u.get()); it != memo_.end()) return it->second;
    Dense d = compute(u);
    memo_[u.get()] = d;
    return d;
  }

 private:
  Dense compute(const UOp& u) {
    Ops op = u.op();
    const IntTuple shape = u.shape() ? *u.shape() : IntTuple{};
    Dense out{shape, u.dtype(), std::vector<ConstValue>(numel(shape), zero(u.dtype().is_void() ? dtypes::float32 : u.dtype()))};
    if (op == Ops::BUFFER) {
      std::span<std::byte> b = buffer_bytes(u);
      for (int64_t i = 0; i < numel(shape); i++) out.data[i] = load_element(u.dtype(), b.data() + i * u.dtype().itemsize());
      return out;
    }
    if (op == Ops::CONST) { out.data = {u.const_value()}; return out; }
    if (op == Ops::CONTIGUOUS || op == Ops::DETACH || op == Ops::CONTIGUOUS_BACKWARD) return eval(u.src(0));
    if (op == Ops::AFTER) return eval(u.src(1).src(1));  // the target's new contents are the stored value
    if (group::Elementwise.contains(op)) {
      std::vector<Dense> srcs;
      for (const UOp& s : u.src()) srcs.push_back(eval(s));
      for (int64_t i = 0; i < numel(shape); i++) {
        std::vector<ConstValue> vals;
        std::vector<DType> dts;
        for (const Dense& s : srcs) { vals.push_back(s.data.size() == 1 ? s.data[0] : s.data[i]); dts.push_back(s.dtype); }
        std::optional<ConstValue> r = exec_alu(op, u.dtype(), vals, dts);
        if (!r) throw std::runtime_error("reference_eval: " + std::string(op_name(op)) + " undefined");
        out.data[i] = *r;
      }
      return out;
    }
    Dense in = eval(u.src(0));
    const IntTuple& ishape = in.shape;
    if (op == Ops::RESHAPE) { in.shape = shape; return in; }
    if (op == Ops::REDUCE) {
      const ReduceArg& r = u.arg_as<ReduceArg>();
      std::vector<bool> have(out.data.size(), false);
      for (int64_t i = 0; i < numel(ishape); i++) {
        IntTuple idx = unravel(i, ishape);
        for (int64_t ax : r.axes) idx[ax] = 0;
        int64_t o = ravel(idx, shape);
        if (!have[o]) { out.data[o] = in.data[i]; have[o] = true; continue; }
        ConstValue vals[2] = {out.data[o], in.data[i]};
        DType dts[2] = {u.dtype(), u.dtype()};
        out.data[o] = *exec_alu(r.op, u.dtype(), vals, dts);
      }
      for (size_t o = 0; o < have.size(); o++)  // empty reductions give the identity
        if (!have[o]) {
          if (r.op == Ops::ADD) out.data[o] = zero(u.dtype());
          else if (r.op == Ops::MUL) out.data[o] = *convert_value(u.dtype(), int64_t{1});
          else out.data[o] = u.dtype().is_float() ? ConstValue(-INFINITY) : *convert_value(u.dtype(), static_cast<int64_t>(int_min(u.dtype())));
        }
      return out;
    }
    const IntTuple& a = group::Movement.contains(op) ? u.arg_as<IntTuple>() : IntTuple{};
    for (int64_t i = 0; i < numel(shape); i++) {
      IntTuple idx = unravel(i, shape);
      bool valid = true;
      switch (op) {
        case Ops::PERMUTE: { IntTuple s(idx.size()); for (size_t k = 0; k < a.size(); k++) s[a[k]] = idx[k]; idx = s; break; }
        case Ops::EXPAND: for (size_t k = 0; k < idx.size(); k++) if (ishape[k] == 1) idx[k] = 0; break;
        case Ops::SHRINK: for (size_t k = 0; k < idx.size(); k++) idx[k] += a[2 * k]; break;
        case Ops::FLIP: for (int64_t ax : a) idx[ax] = ishape[ax] - 1 - idx[ax]; break;
        case Ops::PAD:
          for (size_t k = 0; k < idx.size(); k++) {
            idx[k] -= a[2 * k];
            valid &= idx[k] >= 0 && idx[k] < ishape[k];
          }
          break;
        default: throw std::runtime_error("reference_eval: cannot evaluate " + print_node(u));
      }
      if (valid) out.data[i] = in.data[ravel(idx, ishape)];
    }
    return out;
  }

  std::unordered_map<const UOpNode*, Dense> memo_;
};

}  // namespace

Dense reference_eval(const UOp& u) { return Evaluator().eval(u); }

std::vector<double> as_doubles(const Dense& d) {
  std::vector<double> out;
  for (const ConstValue& v : d.data) {
    if (const double* f = std::get_if<double>(&v)) out.push_back(*f);
    else if (const int64_t* i = std::get_if<int64_t>(&v)) out.push_back(static_cast<double>(int_value(d.dtype, *i)));
    else out.push_back(std::get<bool>(v));
  }
  return out;
}

}  // namespace doorbell::testing
