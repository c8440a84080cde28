#include "ir/uop.h"

#include <algorithm>
#include <cmath>
#include <mutex>
#include <stdexcept>
#include <unordered_set>

#include "ir/bounds.h"
#include "ir/exec_alu.h"
#include "ir/node_map.h"
#include "ir/printer.h"

namespace doorbell {

// ---- the intern table --------------------------------------------------------------------------------------

namespace {

struct Probe {  // a node that may not exist yet
  Ops op;
  DType dtype;
  const std::vector<UOp>& src;
  const Arg& arg;
  int64_t tag;
  uint64_t hash;
};

bool same_src(const std::vector<UOp>& a, const std::vector<UOp>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); i++)
    if (a[i].get() != b[i].get()) return false;
  return true;
}

bool matches(const Probe& p, const UOpNode* n) {
  return p.op == n->op && p.dtype == n->dtype && p.tag == n->tag && same_src(p.src, n->src) && p.arg == n->arg;
}

// Open addressing with linear probing over (hash, node) slots: a lookup compares hashes in one flat array and
// touches a node only on a hash match, which keeps construction fast when millions of nodes are alive.
class NodeTable {
 public:
  UOpNode* find(const Probe& p) const {
    for (size_t i = p.hash & mask_; slots_[i].node; i = (i + 1) & mask_)
      if (slots_[i].hash == p.hash && matches(p, slots_[i].node)) return slots_[i].node;
    return nullptr;
  }
  void insert(UOpNode* n) {  // n must not be present
    if (2 * (size_ + 1) > slots_.size()) grow();
    place(n);
    size_++;
  }
  void erase(const UOpNode* n) {
    size_t i = n->intern_hash & mask_;
    while (slots_[i].node != n) i = (i + 1) & mask_;
    // Backward-shift deletion: move later members of the probe run into the hole, so no tombstones are needed.
    for (size_t j = (i + 1) & mask_; slots_[j].node; j = (j + 1) & mask_) {
      size_t home = slots_[j].hash & mask_;
      bool movable = i <= j ? (home <= i || home > j) : (home <= i && home > j);
      if (movable) { slots_[i] = slots_[j]; i = j; }
    }
    slots_[i] = Slot{};
    size_--;
  }

 private:
  struct Slot {
    uint64_t hash = 0;
    UOpNode* node = nullptr;
  };
  void place(UOpNode* n) {
    size_t i = n->intern_hash & mask_;
    while (slots_[i].node) i = (i + 1) & mask_;
    slots_[i] = Slot{n->intern_hash, n};
  }
  void grow() {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(std::max<size_t>(1024, old.size() * 2), Slot{});
    mask_ = slots_.size() - 1;
    for (const Slot& s : old)
      if (s.node) place(s.node);
  }
  std::vector<Slot> slots_ = std::vector<Slot>(1024);
  size_t mask_ = 1023, size_ = 0;
};

struct InternTable {
  std::mutex mu;
  NodeTable nodes;
};

InternTable& table() {
  static InternTable* t = new InternTable();  // never destroyed: handles in static objects outlive main
  return *t;
}

uint64_t name_hash(std::string_view s) {  // FNV-1a: stable, for op and dtype names
  uint64_t h = 0xcbf29ce484222325ULL;
  for (char c : s) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ULL;
  return h;
}

const uint64_t* op_name_hashes() {
  static const auto* t = [] {
    auto* a = new uint64_t[kOpCount];
    for (int i = 0; i < kOpCount; i++) a[i] = name_hash(op_name(static_cast<Ops>(i)));
    return a;
  }();
  return t;
}

ContentKey content_key(Ops op, DType dtype, const std::vector<UOp>& src, const Arg& arg) {
  static const uint64_t* dtype_hashes = [] {
    auto* a = new uint64_t[kScalarTypeCount];
    for (int i = 0; i < kScalarTypeCount; i++) a[i] = name_hash(DType(static_cast<ScalarType>(i)).name());
    return a;
  }();
  Hasher128 h;
  h.add_u64(op_name_hashes()[static_cast<int>(op)]);
  h.add_u64(dtype_hashes[static_cast<int>(dtype.scalar_type)] + dtype.lanes);
  hash_arg(arg, h);
  h.add_u64(src.size());
  for (const UOp& s : src) h.add_key(s.key());
  return h.finish();
}

bool try_acquire(const UOpNode* n) {  // a reference to a node whose count may be dropping to zero elsewhere
  uint32_t r = n->refs.load(std::memory_order_relaxed);
  while (r != 0)
    if (n->refs.compare_exchange_weak(r, r + 1, std::memory_order_acq_rel)) return true;
  return false;
}

std::atomic<size_t> g_live{0};
std::atomic<UniqueFreedHook> g_unique_freed{nullptr};

// Freed nodes release their sources iteratively: dropping the head of a million-node chain must not recurse.
void destroy(UOpNode* first) {
  thread_local std::vector<UOpNode*> pending;
  thread_local bool draining = false;
  pending.push_back(first);
  if (draining) return;
  draining = true;
  while (!pending.empty()) {
    UOpNode* n = pending.back();
    pending.pop_back();
    bool replaced;
    {
      std::lock_guard lock(table().mu);
      replaced = n->orphaned;  // an equal node was built meanwhile: the identity lives on in it
      if (!replaced) table().nodes.erase(n);
    }
    if (n->op == Ops::UNIQUE && !replaced)
      if (UniqueFreedHook hook = g_unique_freed.load(std::memory_order_acquire)) hook(std::get<int64_t>(n->arg));
    std::vector<UOp> src = std::move(n->src);
    delete n;
    g_live.fetch_sub(1, std::memory_order_relaxed);
    src.clear();  // each source whose count reaches zero is pushed onto `pending`, not freed recursively
  }
  draining = false;
}

}  // namespace

struct UOpInternals {
  static UOp adopt(UOpNode* n) { return UOp(n); }
  static void release(UOpNode* n) {
    if (n && n->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) destroy(n);
  }
};

UOp::~UOp() { UOpInternals::release(node_); }

UOp& UOp::operator=(const UOp& o) noexcept {
  if (o.node_) o.node_->refs.fetch_add(1, std::memory_order_relaxed);
  UOpInternals::release(node_);
  node_ = o.node_;
  return *this;
}

UOp& UOp::operator=(UOp&& o) noexcept {
  if (this != &o) {
    UOpInternals::release(node_);
    node_ = o.node_;
    o.node_ = nullptr;
  }
  return *this;
}

size_t live_uop_count() { return g_live.load(std::memory_order_relaxed); }
void set_unique_freed_hook(UniqueFreedHook hook) { g_unique_freed.store(hook, std::memory_order_release); }

// ---- validation and derivation ---------------------------------------------------------------------------

namespace {

std::string shape_str(const IntTuple& s) { return arg_to_string(Arg(s)); }

[[noreturn]] void fail(Ops op, const std::string& what) {
  throw std::invalid_argument(std::string(op_name(op)) + ": " + what);
}

void expect_srcs(Ops op, const std::vector<UOp>& src, size_t n) {
  if (src.size() != n)
    fail(op, "expected " + std::to_string(n) + " source" + (n == 1 ? "" : "s") + ", got " + std::to_string(src.size()));
  for (size_t i = 0; i < src.size(); i++)
    if (!src[i]) fail(op, "source " + std::to_string(i) + " is a null UOp");
}

template <class T> const T& expect_arg(Ops op, const Arg& arg, const char* what) {
  if (const T* p = std::get_if<T>(&arg)) return *p;
  fail(op, std::string("expected ") + what + " as arg, got " + arg_to_string(arg));
}

int64_t prod(const IntTuple& s) {
  int64_t p = 1;
  for (int64_t d : s) p *= d;
  return p;
}

// The element count of a requested shape: an error, not signed overflow (UB), when int64 cannot hold it.
int64_t elements(Ops op, const IntTuple& shape) {
  int64_t p = 1;
  for (int64_t d : shape) {
    if (d < 0) fail(op, "shape " + shape_str(shape) + " has a negative dimension");
    if (__builtin_mul_overflow(p, d, &p)) fail(op, "shape " + shape_str(shape) + " has more elements than int64 holds");
  }
  return p;
}

void validate_alu(Ops op, DType dtype, const std::vector<UOp>& src) {
  size_t n = group::Unary.contains(op) ? 1 : group::Binary.contains(op) ? 2 : 3;
  expect_srcs(op, src, n);
  auto dt = [&](size_t i) { return src[i].dtype(); };
  if (op == Ops::WHERE) {
    if (!dt(0).is_bool()) fail(op, "condition has dtype " + dt(0).name() + ", expected bool");
    if (dt(1) != dt(2)) fail(op, "branches have dtypes " + dt(1).name() + " and " + dt(2).name() + ", expected equal dtypes");
    if (dtype != dt(1)) fail(op, "dtype " + dtype.name() + " differs from its branches' " + dt(1).name());
    return;
  }
  bool shift = op == Ops::SHL || op == Ops::SHR;
  for (size_t i = 1; i < n; i++)
    if (dt(i) != dt(0) && !(shift && dt(i).is_int()))
      fail(op, "sources have dtypes " + dt(0).name() + " and " + dt(i).name() + ", expected equal dtypes");
  DType expect = group::Comparison.contains(op) ? DType(ScalarType::Bool, dt(0).lanes) : dt(0);
  if (dtype != expect) fail(op, "dtype " + dtype.name() + " given, the sources make " + expect.name());
  DType s = dt(0);
  if (s.is_void()) fail(op, "void sources have no value");
  switch (op) {
    case Ops::EXP2: case Ops::LOG2: case Ops::SIN: case Ops::SQRT: case Ops::RECIPROCAL: case Ops::FDIV: case Ops::POW:
      if (!s.is_float()) fail(op, "source dtype " + s.name() + ", expected a float dtype");
      break;
    case Ops::CDIV: case Ops::CMOD: case Ops::FLOORDIV: case Ops::FLOORMOD: case Ops::SHL: case Ops::SHR:
      if (!s.is_int()) fail(op, "source dtype " + s.name() + ", expected an integer dtype");
      break;
    case Ops::AND: case Ops::OR: case Ops::XOR:
      if (!s.is_int() && !s.is_bool()) fail(op, "source dtype " + s.name() + ", expected an integer or bool dtype");
      break;
    case Ops::THREEFRY:
      if (s != dtypes::uint64) fail(op, "source dtype " + s.name() + ", expected uint64");
      break;
    case Ops::NEG: case Ops::SUB:
      if (s.is_bool()) fail(op, "bool has no negation; use logical_not or XOR");
      break;
    default: break;
  }
}

void validate_const(DType dtype, const std::vector<UOp>& src, const Arg& arg) {
  expect_srcs(Ops::CONST, src, 0);
  if (std::holds_alternative<Invalid>(arg)) {
    if (!dtype.is_bool()) fail(Ops::CONST, "Invalid must have dtype bool, got " + dtype.name());
    return;
  }
  if (dtype.is_bool()) { expect_arg<bool>(Ops::CONST, arg, "a bool"); return; }
  if (dtype.is_float()) { expect_arg<Float>(Ops::CONST, arg, "a float"); return; }
  if (!dtype.is_int()) fail(Ops::CONST, "dtype " + dtype.name() + " holds no constants");
  int64_t v = expect_arg<int64_t>(Ops::CONST, arg, "an integer");
  if (dtype.scalar_type != ScalarType::UInt64 && (v < int_min(dtype) || v > int_max(dtype)))
    fail(Ops::CONST, std::to_string(v) + " is out of range for " + dtype.name());
}

std::vector<int64_t> pairs(Ops op, const IntTuple& arg, size_t ndim) {
  if (arg.size() != 2 * ndim)
    fail(op, "arg " + shape_str(arg) + " has " + std::to_string(arg.size()) + " numbers, expected 2 per axis of " +
                 std::to_string(ndim) + " axes");
  return arg;
}

// SHRINK(x, o_0, ..., o_{n-1}) with arg (b_0, e_0, ...): axis i keeps [b_i + o_i, e_i + o_i), where o_i is an integer
// scalar expression of bounded variables (a window at a symbolic offset: Tensor::narrow). The size e_i - b_i is static;
// every value the offsets can take must keep the window inside the source. Any other form has no tensor shape.
bool symbolic_shrink_shape(const std::vector<UOp>& src, const Arg& arg, IntTuple& out) {
  const IntTuple* in = src[0].shape();
  const IntTuple* a = std::get_if<IntTuple>(&arg);
  if (!in || !a || src.size() != in->size() + 1 || a->size() != 2 * in->size()) return false;
  out.resize(in->size());
  for (size_t i = 0; i < in->size(); i++) {
    const UOp& o = src[i + 1];
    if (!o.has_bounds() || !o.shape() || !o.shape()->empty() || !o.dtype().is_int())
      fail(Ops::SHRINK, "offset " + std::to_string(i) + " is not a bounded integer scalar; expected an expression of variables");
    const int64_t b = (*a)[2 * i], e = (*a)[2 * i + 1];
    if (b < 0 || b > e || b + o.vmin() < 0 || e + o.vmax() > (*in)[i])
      fail(Ops::SHRINK, "window [" + std::to_string(b) + ", " + std::to_string(e) + ") at offset " + std::to_string(static_cast<int64_t>(o.vmin())) +
                            ".." + std::to_string(static_cast<int64_t>(o.vmax())) + " leaves axis " + std::to_string(i) + " of size " +
                            std::to_string((*in)[i]) + " for some value of the offset");
    out[i] = e - b;
  }
  return true;
}

// The tensor shape of a new node, or false when it has none. Validates movement args against the source shape.
bool derive_shape(Ops op, const std::vector<UOp>& src, const Arg& arg, IntTuple& out) {
  const IntTuple* in = src.empty() ? nullptr : src[0].shape();
  switch (op) {
    case Ops::CONST: out = {}; return true;
    case Ops::PARAM:  // a buffer parameter: [vmin, vmax] are its valid element indices; a variable is a scalar
      if (const ParamArg* p = std::get_if<ParamArg>(&arg); p && p->addrspace == AddrSpace::GLOBAL) { out = {p->vmax + 1}; return true; }
      if (const ParamArg* p = std::get_if<ParamArg>(&arg); p && p->addrspace == AddrSpace::ALU) { out = {}; return true; }
      return false;
    case Ops::BUFFER:
      if (const int64_t* n = std::get_if<int64_t>(&arg)) {
        if (*n < 0) fail(op, "size " + std::to_string(*n) + " is negative, expected a size >= 0");
        out = {*n};
        return true;
      }
      return false;
    case Ops::CONTIGUOUS: case Ops::CONTIGUOUS_BACKWARD: case Ops::DETACH: case Ops::COPY: case Ops::CAST:
    case Ops::BITCAST: case Ops::AFTER:
      if (!in) return false;
      out = *in;
      return true;
    default: break;
  }
  if (group::ALU.contains(op)) {
    const IntTuple* common = nullptr;
    for (const UOp& s : src) {
      const IntTuple* sh = s.shape();
      if (!sh) continue;
      if (common && *common != *sh)
        fail(op, "source shapes " + shape_str(*common) + " and " + shape_str(*sh) + " differ; broadcast them first");
      common = sh;
    }
    if (!common) return false;
    out = *common;
    return true;
  }
  if (!group::Movement.contains(op) && op != Ops::REDUCE) return false;
  if (op == Ops::SHRINK && src.size() != 1) return symbolic_shrink_shape(src, arg, out);
  if (op == Ops::REDUCE) {
    const ReduceArg& r = expect_arg<ReduceArg>(op, arg, "a ReduceArg");
    if (!group::Reduce.contains(r.op)) fail(op, std::string(op_name(r.op)) + " is not a reduce op; expected ADD, MUL or MAX");
    if (src.size() != 1 || !in) return false;  // kernel form REDUCE(value, ranges...)
    out = *in;
    for (int64_t a : r.axes) {
      if (a < 0 || a >= static_cast<int64_t>(in->size()))
        fail(op, "axis " + std::to_string(a) + " is out of range for shape " + shape_str(*in));
      out[a] = 1;
    }
    return true;
  }
  expect_srcs(op, src, 1);
  const IntTuple& a = expect_arg<IntTuple>(op, arg, "a tuple of integers");
  if (!in) return false;
  size_t nd = in->size();
  switch (op) {
    case Ops::RESHAPE:
      if (elements(op, a) != prod(*in))
        fail(op, std::to_string(prod(*in)) + " elements cannot become shape " + shape_str(a));
      out = a;
      return true;
    case Ops::PERMUTE: {
      IntTuple sorted = a;
      std::sort(sorted.begin(), sorted.end());
      for (size_t i = 0; i < sorted.size(); i++)
        if (sorted[i] != static_cast<int64_t>(i) || sorted.size() != nd)
          fail(op, shape_str(a) + " is not a permutation of the " + std::to_string(nd) + " axes of shape " + shape_str(*in));
      if (sorted.size() != nd) fail(op, shape_str(a) + " is not a permutation of the " + std::to_string(nd) + " axes");
      out.resize(nd);
      for (size_t i = 0; i < nd; i++) out[i] = (*in)[a[i]];
      return true;
    }
    case Ops::EXPAND:
      if (a.size() != nd) fail(op, "shape " + shape_str(*in) + " cannot expand to " + shape_str(a) + ": ranks differ");
      elements(op, a);
      for (size_t i = 0; i < nd; i++)
        if ((*in)[i] != a[i] && (*in)[i] != 1)
          fail(op, "shape " + shape_str(*in) + " cannot expand to " + shape_str(a) + ": axis " + std::to_string(i) +
                       " is neither equal nor 1");
      out = a;
      return true;
    case Ops::PAD: {
      pairs(op, a, nd);
      out = *in;
      for (size_t i = 0; i < nd; i++) {
        if (a[2 * i] < 0 || a[2 * i + 1] < 0) fail(op, "padding " + shape_str(a) + " has a negative amount");
        if (__builtin_add_overflow(out[i], a[2 * i], &out[i]) || __builtin_add_overflow(out[i], a[2 * i + 1], &out[i]))
          fail(op, "padding " + shape_str(a) + " makes axis " + std::to_string(i) + " larger than int64 holds");
      }
      return true;
    }
    case Ops::SHRINK: {
      pairs(op, a, nd);
      out.resize(nd);
      for (size_t i = 0; i < nd; i++) {
        if (a[2 * i] < 0 || a[2 * i] > a[2 * i + 1] || a[2 * i + 1] > (*in)[i])
          fail(op, "bounds " + shape_str(a) + " are not 0 <= begin <= end <= size on axis " + std::to_string(i) +
                       " of shape " + shape_str(*in));
        out[i] = a[2 * i + 1] - a[2 * i];
      }
      return true;
    }
    case Ops::FLIP: {
      std::vector<bool> seen(nd, false);
      for (int64_t ax : a) {
        if (ax < 0 || ax >= static_cast<int64_t>(nd) || seen[ax])
          fail(op, "axes " + shape_str(a) + " are not distinct axes of shape " + shape_str(*in));
        seen[ax] = true;
      }
      out = *in;
      return true;
    }
    default: return false;
  }
}

void validate(Ops op, DType dtype, const std::vector<UOp>& src, const Arg& arg) {
  for (size_t i = 0; i < src.size(); i++)
    if (!src[i]) fail(op, "source " + std::to_string(i) + " is a null UOp");
  if (dtype.lanes == 0) fail(op, "a dtype with 0 lanes");
  if (group::ALU.contains(op)) return validate_alu(op, dtype, src);
  switch (op) {
    case Ops::CONST: return validate_const(dtype, src, arg);
    case Ops::CAST:
      expect_srcs(op, src, 1);
      if (dtype.is_void() || src[0].dtype().is_void()) fail(op, "cannot cast to or from void");
      return;
    case Ops::BITCAST:
      expect_srcs(op, src, 1);
      if (dtype.is_weak() || src[0].dtype().is_weak() || dtype.is_void() || src[0].dtype().is_void() ||
          dtype.itemsize() != src[0].dtype().itemsize())
        fail(op, "cannot reinterpret " + src[0].dtype().name() + " as " + dtype.name() + ": sizes differ or have no storage");
      return;
    case Ops::RANGE:
      expect_srcs(op, src, 1);
      expect_arg<RangeArg>(op, arg, "a RangeArg");
      if (!dtype.is_int() || src[0].dtype() != dtype)
        fail(op, "dtype " + dtype.name() + " with end of dtype " + src[0].dtype().name() + ", expected one integer dtype");
      return;
    case Ops::SPECIAL:
      expect_srcs(op, src, 1);
      expect_arg<std::string>(op, arg, "a name");
      if (!dtype.is_int()) fail(op, "dtype " + dtype.name() + ", expected an integer dtype");
      return;
    case Ops::PARAM: {
      const ParamArg& p = expect_arg<ParamArg>(op, arg, "a ParamArg");
      if (p.addrspace == AddrSpace::ALU) {
        if (!dtype.is_int()) fail(op, "variable '" + p.name + "' has dtype " + dtype.name() + ", expected an integer dtype");
        if (p.vmin > p.vmax) fail(op, "variable '" + p.name + "' has bounds [" + std::to_string(p.vmin) + ", " + std::to_string(p.vmax) + "], expected min <= max");
        if (p.vmin < int_min(dtype) || p.vmax > int_max(dtype)) fail(op, "variable '" + p.name + "' bounds exceed " + dtype.name());
      }
      return;
    }
    case Ops::SINK:
      if (!dtype.is_void()) fail(op, "dtype " + dtype.name() + ", expected void");
      return;
    case Ops::UNIQUE:  // a buffer's identity
      expect_srcs(op, src, 0);
      expect_arg<int64_t>(op, arg, "an integer id");
      return;
    case Ops::DEVICE:
      expect_srcs(op, src, 0);
      expect_arg<std::string>(op, arg, "a device name");
      return;
    case Ops::AFTER:
      if (src.empty()) fail(op, "expected the value it passes through as source 0");
      if (dtype != src[0].dtype()) fail(op, "dtype " + dtype.name() + " differs from its source's " + src[0].dtype().name());
      return;
    default: return;  // ops of later stages: their passes check them
  }
}

}  // namespace

DType UOp::derive_dtype(Ops op, const std::vector<UOp>& src, const Arg& arg) {
  (void)arg;
  for (size_t i = 0; i < src.size(); i++)
    if (!src[i]) fail(op, "source " + std::to_string(i) + " is a null UOp");
  if (group::Comparison.contains(op)) {
    if (src.empty()) fail(op, "expected 2 sources, got 0");
    return DType(ScalarType::Bool, src[0].dtype().lanes);
  }
  if (op == Ops::WHERE) {
    if (src.size() != 3) fail(op, "expected 3 sources, got " + std::to_string(src.size()));
    return src[1].dtype();
  }
  if (group::ALU.contains(op) || group::Movement.contains(op) || op == Ops::REDUCE || op == Ops::AFTER ||
      op == Ops::RANGE || op == Ops::SPECIAL || op == Ops::CONTIGUOUS || op == Ops::DETACH ||
      op == Ops::CONTIGUOUS_BACKWARD || op == Ops::COPY || op == Ops::INDEX || op == Ops::LOAD) {
    if (src.empty()) fail(op, "expected a source to take the dtype from");
    return src[0].dtype();
  }
  switch (op) {
    case Ops::SINK: case Ops::STORE: case Ops::UNIQUE: case Ops::DEVICE: case Ops::END: case Ops::ENDIF: case Ops::IF: case Ops::BARRIER: case Ops::NOOP:
    case Ops::GROUP: case Ops::LINEAR: case Ops::CALL: case Ops::PROGRAM:
      return dtypes::void_;
    default: fail(op, "cannot derive a dtype; pass one to UOp::make");
  }
}

UOp UOp::make(Ops op, DType dtype, std::vector<UOp> src, Arg arg, int64_t tag) {
  for (const UOp& s : src)
    if (!s) fail(op, "a source is a null UOp");
  ContentKey key = content_key(op, dtype, src, arg);
  uint64_t hash = key.hi ^ (key.lo * 0x9e3779b97f4a7c15ULL) ^ static_cast<uint64_t>(tag);
  InternTable& t = table();
  {
    std::lock_guard lock(t.mu);
    if (UOpNode* n = t.nodes.find(Probe{op, dtype, src, arg, tag, hash})) {
      if (try_acquire(n)) return UOp(n);
      n->orphaned = true;  // its last handle is going away: replace it; its releaser frees it
      t.nodes.erase(n);
    }
  }
  validate(op, dtype, src, arg);
  auto* n = new UOpNode();
  n->op = op;
  n->dtype = dtype;
  n->tag = tag;
  n->key = key;
  n->intern_hash = hash;
  try {
    n->has_shape = derive_shape(op, src, arg, n->shape);
    n->has_bounds = compute_bounds(op, dtype, src, arg, n->vmin, n->vmax);
  } catch (...) {
    delete n;
    throw;
  }
  n->src = std::move(src);
  n->arg = std::move(arg);
  g_live.fetch_add(1, std::memory_order_relaxed);
  std::vector<UOp> discard;  // destroyed after the lock is released: freeing sources takes the lock
  std::lock_guard lock(t.mu);
  if (UOpNode* other = t.nodes.find(Probe{op, dtype, n->src, n->arg, tag, hash})) {  // another thread built it meanwhile
    if (try_acquire(other)) {
      g_live.fetch_sub(1, std::memory_order_relaxed);
      discard = std::move(n->src);
      delete n;
      return UOp(other);
    }
    other->orphaned = true;
    t.nodes.erase(other);
  }
  t.nodes.insert(n);
  return UOp(n);
}

UOp UOp::infer(Ops op, std::vector<UOp> src, Arg arg) {
  DType dt = derive_dtype(op, src, arg);
  return make(op, dt, std::move(src), std::move(arg));
}

// ---- leaves --------------------------------------------------------------------------------------------

UOp UOp::const_(DType dtype, ConstValue value) {
  if (dtype.is_void()) fail(Ops::CONST, "void holds no constants");
  if (std::holds_alternative<double>(value) && !dtype.is_float() && !dtype.is_bool()) {
    double d = std::get<double>(value);
    if (d != std::trunc(d)) fail(Ops::CONST, "the float " + arg_to_string(Arg(Float(d))) + " is not a value of " + dtype.name());
  }
  std::optional<ConstValue> v = convert_value(dtype.scalar(), value);
  if (!v) fail(Ops::CONST, "the value is out of range for " + dtype.name());
  Arg arg = std::visit([](auto x) -> Arg {
    if constexpr (std::is_same_v<decltype(x), double>) return Float(x);
    else return x;
  }, *v);
  return make(Ops::CONST, dtype, {}, std::move(arg));
}

UOp UOp::invalid() { return make(Ops::CONST, dtypes::bool_, {}, Invalid{}); }

UOp UOp::variable(std::string name, int64_t vmin, int64_t vmax, DType dtype) {
  return make(Ops::PARAM, dtype, {}, ParamArg{-1, AddrSpace::ALU, std::move(name), vmin, vmax});
}

UOp UOp::bind(int64_t value) const {
  const ParamArg* p = node_ ? std::get_if<ParamArg>(&arg()) : nullptr;
  if (!p || op() != Ops::PARAM || p->addrspace != AddrSpace::ALU)
    throw std::invalid_argument("bind: expected a variable (UOp::variable), got " + (node_ ? to_string() : std::string("a null UOp")));
  if (value < p->vmin || value > p->vmax)
    throw std::invalid_argument("bind: " + std::to_string(value) + " is outside the bounds [" + std::to_string(p->vmin) + ", " +
                                std::to_string(p->vmax) + "] of variable '" + p->name + "'");
  return make(Ops::AFTER, dtype(), {*this, make(Ops::STORE, dtypes::void_, {*this, const_like(value)})});
}

bool UOp::is_bound_variable() const {
  if (!node_ || op() != Ops::AFTER || src().size() != 2) return false;
  const UOp& var = src(0);
  const UOp& store = src(1);
  const ParamArg* p = std::get_if<ParamArg>(&var.arg());
  return var.op() == Ops::PARAM && p && p->addrspace == AddrSpace::ALU && store.op() == Ops::STORE && store.src().size() == 2 &&
         store.src(0) == var && store.src(1).op() == Ops::CONST;
}

UOp UOp::range(UOp end, int64_t axis, AxisType type) {
  DType dt = end ? end.dtype() : dtypes::weakint;
  return make(Ops::RANGE, dt, {std::move(end)}, RangeArg{axis, type});
}

UOp UOp::range(int64_t end, int64_t axis, AxisType type, DType dtype) {
  return range(const_(dtype, end), axis, type);
}

UOp UOp::sink(std::vector<UOp> src) { return make(Ops::SINK, dtypes::void_, std::move(src)); }

// ---- accessors and rebuilding ----------------------------------------------------------------------------

void UOp::throw_bad_arg() const {
  throw std::invalid_argument(std::string(op_name(op())) + ": arg " + arg_to_string(arg()) + " is not of the type asked for");
}

__int128 UOp::vmin() const {
  if (!node_->has_bounds) throw std::logic_error(std::string(op_name(op())) + ": " + dtype().name() + " nodes have no integer bounds");
  return node_->vmin;
}

__int128 UOp::vmax() const {
  if (!node_->has_bounds) throw std::logic_error(std::string(op_name(op())) + ": " + dtype().name() + " nodes have no integer bounds");
  return node_->vmax;
}

ConstValue UOp::const_value() const {
  if (op() != Ops::CONST) throw std::logic_error(std::string(op_name(op())) + ": const_value of a non-CONST");
  return std::visit([&](const auto& a) -> ConstValue {
    using T = std::decay_t<decltype(a)>;
    if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, int64_t>) return a;
    else if constexpr (std::is_same_v<T, Float>) return a.value;
    else throw std::logic_error("CONST: " + arg_to_string(arg()) + " has no value");
  }, arg());
}

bool UOp::is_const_value(double v) const {
  if (op() != Ops::CONST) return false;
  if (const int64_t* i = std::get_if<int64_t>(&arg())) return static_cast<double>(int_value(dtype(), *i)) == v;
  if (const Float* f = std::get_if<Float>(&arg())) return f->value == v;
  if (const bool* b = std::get_if<bool>(&arg())) return (*b ? 1.0 : 0.0) == v;
  return false;
}

UOp UOp::replace_src(std::vector<UOp> src) const { return make(op(), dtype(), std::move(src), arg(), tag()); }
UOp UOp::with_arg(Arg a) const { return make(op(), dtype(), src(), std::move(a), tag()); }
UOp UOp::with_tag(int64_t t) const { return make(op(), dtype(), src(), arg(), t); }

std::vector<UOp> UOp::toposort() const {
  std::vector<UOp> order;
  NodeMap<char> visited(64);  // a flat table: a node-based set would allocate once per node
  std::vector<std::pair<const UOp*, size_t>> stack{{this, 0}};
  visited.get(node_);
  while (!stack.empty()) {
    auto& [u, i] = stack.back();
    if (i < u->src().size()) {
      const UOp* s = &u->src()[i++];
      bool fresh = false;
      visited.get(s->get(), &fresh);
      if (fresh) stack.push_back({s, 0});
    } else {
      order.push_back(*u);
      stack.pop_back();
    }
  }
  return order;
}

std::vector<UOp> UOp::backward_slice() const {
  std::vector<UOp> order = toposort();
  order.pop_back();
  return order;
}

std::string UOp::to_string() const { return print_graph(*this); }

// ---- arithmetic --------------------------------------------------------------------------------------------

UOp UOp::alu(Ops op, const UOp& b) const { return infer(op, {*this, b}); }
UOp UOp::alu(Ops op) const { return infer(op, {*this}); }
UOp UOp::cast(DType dt) const { return dt == dtype() ? *this : make(Ops::CAST, dt, {*this}); }
UOp UOp::bitcast(DType dt) const { return make(Ops::BITCAST, dt, {*this}); }
UOp UOp::logical_not() const {
  // on an integer, x != 1 would be built silently: a bug at the call site, so say so
  if (!dtype().is_bool()) fail(Ops::CMPNE, "logical_not of " + dtype().name() + ", expected bool");
  return ne(const_(dtype(), true));
}
UOp UOp::where(const UOp& t, const UOp& f) const { return infer(Ops::WHERE, {*this, t, f}); }
UOp UOp::minimum(const UOp& b) const {
  if (dtype().is_unsigned() || dtype().is_bool()) return lt(b).where(*this, b);
  return (-*this).maximum(-b).neg();
}

UOp operator+(const UOp& a, const UOp& b) { return a.alu(Ops::ADD, b); }
UOp operator-(const UOp& a, const UOp& b) { return a.alu(Ops::SUB, b); }
UOp operator*(const UOp& a, const UOp& b) { return a.alu(Ops::MUL, b); }
UOp operator/(const UOp& a, const UOp& b) { return a.alu(a.dtype().is_float() ? Ops::FDIV : Ops::FLOORDIV, b); }
UOp operator%(const UOp& a, const UOp& b) { return a.alu(Ops::FLOORMOD, b); }
UOp operator&(const UOp& a, const UOp& b) { return a.alu(Ops::AND, b); }
UOp operator|(const UOp& a, const UOp& b) { return a.alu(Ops::OR, b); }
UOp operator^(const UOp& a, const UOp& b) { return a.alu(Ops::XOR, b); }
UOp operator<<(const UOp& a, const UOp& b) { return a.alu(Ops::SHL, b); }
UOp operator>>(const UOp& a, const UOp& b) { return a.alu(Ops::SHR, b); }
UOp operator-(const UOp& a) { return a.neg(); }

}  // namespace doorbell
