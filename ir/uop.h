// UOp: an immutable, hash-consed node (op, dtype, src, arg, tag). Building a structurally equal UOp returns the
// same node, so equality is pointer equality and CSE is free. A node is freed when its last handle goes.
// Construction validates the op's source count, dtypes and arg, and derives shape and integer bounds.
#pragma once
#include <atomic>
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "ir/arg.h"
#include "ir/content_hash.h"
#include "ir/dtype.h"
#include "ir/ops.h"

namespace doorbell {

// A constant's value: bool for bool, int64_t for integer dtypes (uint64 keeps its bit pattern), double for floats.
using ConstValue = std::variant<bool, int64_t, double>;

struct UOpNode;

class UOp {
 public:
  static constexpr int64_t kNoTag = INT64_MIN;

  UOp() noexcept = default;
  UOp(const UOp& o) noexcept;
  UOp(UOp&& o) noexcept : node_(o.node_) { o.node_ = nullptr; }
  UOp& operator=(const UOp& o) noexcept;
  UOp& operator=(UOp&& o) noexcept;
  ~UOp();

  explicit operator bool() const noexcept { return node_ != nullptr; }
  bool operator==(const UOp& o) const noexcept { return node_ == o.node_; }
  const UOpNode* get() const noexcept { return node_; }

  // The constructor of every UOp. Throws std::invalid_argument naming the op and what was expected.
  static UOp make(Ops op, DType dtype, std::vector<UOp> src = {}, Arg arg = {}, int64_t tag = kNoTag);
  // As make, with the dtype derived from the op and its sources (comparisons give bool, ALU its operands').
  static UOp infer(Ops op, std::vector<UOp> src, Arg arg = {});
  static DType derive_dtype(Ops op, const std::vector<UOp>& src, const Arg& arg);

  // Leaves.
  static UOp const_(DType dtype, ConstValue value);  // value converted to dtype (wrapped or rounded)
  static UOp invalid();                              // the bool CONST Invalid
  static UOp variable(std::string name, int64_t vmin, int64_t vmax, DType dtype = dtypes::weakint);
  // A variable bound to a value for one realize (tinygrad's bind): AFTER(var, STORE(var, CONST value)). Kernels take
  // the variable; the value travels with the schedule, so one compiled kernel serves every value. Throws
  // std::invalid_argument for a non-variable or a value outside the variable's bounds.
  UOp bind(int64_t value) const;
  bool is_bound_variable() const;  // AFTER(var, STORE(var, CONST)); src(0) is the variable, src(1).src(1) the value
  static UOp range(UOp end, int64_t axis, AxisType type = AxisType::LOOP);
  static UOp range(int64_t end, int64_t axis, AxisType type = AxisType::LOOP, DType dtype = dtypes::weakint);
  static UOp sink(std::vector<UOp> src);

  // Fields.
  Ops op() const;
  DType dtype() const;
  const std::vector<UOp>& src() const;
  const UOp& src(size_t i) const;
  const Arg& arg() const;
  int64_t tag() const;
  template <class T> const T& arg_as() const {
    if (const T* p = std::get_if<T>(&arg())) return *p;
    throw_bad_arg();
  }

  // Derived, computed once at construction.
  const ContentKey& key() const;        // stable across processes; excludes the tag
  const IntTuple* shape() const;        // nullptr when the node has no tensor shape
  bool has_bounds() const;              // integer and bool nodes carry [vmin, vmax]
  __int128 vmin() const;                // throws when !has_bounds()
  __int128 vmax() const;

  // Constants.
  bool is_const() const { return op() == Ops::CONST; }
  ConstValue const_value() const;       // throws unless CONST with a value (not Invalid)
  bool is_const_value(double v) const;  // CONST numerically equal to v (0 matches 0.0 and false)

  // Rebuilding.
  UOp replace_src(std::vector<UOp> src) const;
  UOp with_arg(Arg arg) const;
  UOp with_tag(int64_t tag) const;

  // Graph walks, iterative (a chain of millions of nodes is fine).
  std::vector<UOp> toposort() const;        // every node reachable, sources before users, this node last
  std::vector<UOp> backward_slice() const;  // toposort without this node

  // Arithmetic. Mixing with a number makes a CONST of this node's dtype.
  UOp alu(Ops op, const UOp& b) const;
  UOp alu(Ops op) const;
  UOp neg() const { return alu(Ops::NEG); }
  UOp cast(DType dt) const;
  UOp bitcast(DType dt) const;
  UOp floordiv(const UOp& b) const { return alu(Ops::FLOORDIV, b); }
  UOp floordiv(int64_t b) const { return floordiv(const_like(b)); }
  UOp floormod(const UOp& b) const { return alu(Ops::FLOORMOD, b); }
  UOp floormod(int64_t b) const { return floormod(const_like(b)); }
  UOp maximum(const UOp& b) const { return alu(Ops::MAX, b); }
  UOp minimum(const UOp& b) const;  // -max(-a, -b) for signed and floats, as tinygrad
  UOp lt(const UOp& b) const { return alu(Ops::CMPLT, b); }
  UOp lt(int64_t b) const { return lt(const_like(b)); }
  UOp ge(const UOp& b) const { return lt(b).logical_not(); }
  UOp ge(int64_t b) const { return ge(const_like(b)); }
  UOp ne(const UOp& b) const { return alu(Ops::CMPNE, b); }
  UOp eq(const UOp& b) const { return alu(Ops::CMPEQ, b); }
  UOp logical_not() const;  // bool only: x != True
  UOp where(const UOp& t, const UOp& f) const;
  UOp const_like(ConstValue v) const { return const_(dtype(), v); }

  // Printing (ir/printer.h has the full printers).
  std::string to_string() const;

 private:
  friend struct UOpInternals;
  explicit UOp(UOpNode* n) noexcept : node_(n) {}  // adopts one reference
  [[noreturn]] void throw_bad_arg() const;
  UOpNode* node_ = nullptr;
};

UOp operator+(const UOp& a, const UOp& b);
UOp operator-(const UOp& a, const UOp& b);
UOp operator*(const UOp& a, const UOp& b);
UOp operator/(const UOp& a, const UOp& b);  // FDIV for floats, FLOORDIV (Python //) for integers
UOp operator%(const UOp& a, const UOp& b);  // FLOORMOD (Python %) for integers
UOp operator&(const UOp& a, const UOp& b);
UOp operator|(const UOp& a, const UOp& b);
UOp operator^(const UOp& a, const UOp& b);
UOp operator<<(const UOp& a, const UOp& b);
UOp operator>>(const UOp& a, const UOp& b);
UOp operator-(const UOp& a);
// With a number on either side: the number becomes a CONST of the UOp's dtype.
#define DOORBELL_UOP_NUMBER_OPERATORS(OP)                                                  \
  inline UOp operator OP(const UOp& a, int64_t b) { return a OP a.const_like(b); }        \
  inline UOp operator OP(int64_t a, const UOp& b) { return b.const_like(a) OP b; }        \
  inline UOp operator OP(const UOp& a, int b) { return a OP a.const_like(int64_t{b}); }   \
  inline UOp operator OP(int a, const UOp& b) { return b.const_like(int64_t{a}) OP b; }   \
  inline UOp operator OP(const UOp& a, double b) { return a OP a.const_like(b); }         \
  inline UOp operator OP(double a, const UOp& b) { return b.const_like(a) OP b; }
DOORBELL_UOP_NUMBER_OPERATORS(+)
DOORBELL_UOP_NUMBER_OPERATORS(-)
DOORBELL_UOP_NUMBER_OPERATORS(*)
DOORBELL_UOP_NUMBER_OPERATORS(/)
DOORBELL_UOP_NUMBER_OPERATORS(%)
DOORBELL_UOP_NUMBER_OPERATORS(&)
DOORBELL_UOP_NUMBER_OPERATORS(|)
DOORBELL_UOP_NUMBER_OPERATORS(^)
DOORBELL_UOP_NUMBER_OPERATORS(<<)
DOORBELL_UOP_NUMBER_OPERATORS(>>)
#undef DOORBELL_UOP_NUMBER_OPERATORS

struct UOpNode {
  mutable std::atomic<uint32_t> refs{1};
  Ops op;
  DType dtype;
  bool orphaned = false;   // dropped from the intern table while its last handle was going away
  bool has_shape = false;
  bool has_bounds = false;
  int64_t tag;
  std::vector<UOp> src;
  Arg arg;
  ContentKey key;
  uint64_t intern_hash;
  IntTuple shape;
  __int128 vmin = 0, vmax = 0;
};

inline Ops UOp::op() const { return node_->op; }
inline DType UOp::dtype() const { return node_->dtype; }
inline const std::vector<UOp>& UOp::src() const { return node_->src; }
inline const UOp& UOp::src(size_t i) const { return node_->src[i]; }
inline const Arg& UOp::arg() const { return node_->arg; }
inline int64_t UOp::tag() const { return node_->tag; }
inline const ContentKey& UOp::key() const { return node_->key; }
inline const IntTuple* UOp::shape() const { return node_->has_shape ? &node_->shape : nullptr; }
inline bool UOp::has_bounds() const { return node_->has_bounds; }
inline UOp::UOp(const UOp& o) noexcept : node_(o.node_) {
  if (node_) node_->refs.fetch_add(1, std::memory_order_relaxed);
}

// How many UOp nodes are alive in this process (for leak tests and statistics).
size_t live_uop_count();

// Called with the id of a UNIQUE node when its last handle goes: no buffer with that identity exists any more,
// so storage kept for it can be released (hcq/host_buffers registers one). One hook; nullptr removes it.
using UniqueFreedHook = void (*)(int64_t id);
void set_unique_freed_hook(UniqueFreedHook hook);

struct UOpHash {
  size_t operator()(const UOp& u) const noexcept { return std::hash<const void*>()(u.get()); }
};

}  // namespace doorbell
