// UPat: a pattern over UOps. Matches op, dtype, arg and sources; binds names (a repeated name must bind the same
// UOp); sources match positionally, in any order (commutative ops), or all against one pattern.
#pragma once
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/uop.h"

namespace doorbell {

// The names a match bound, valid while the matched graph is alive.
class Bindings {
 public:
  const UOp* find(std::string_view name) const {
    for (size_t i = 0; i < size_; i++)
      if (at(i).first == name) return at(i).second;
    return nullptr;
  }
  const UOp& operator[](std::string_view name) const;  // throws naming the missing name
  size_t size() const { return size_; }
  void push(std::string_view name, const UOp* u) {
    if (size_ < kInline) inline_[size_] = {name, u};
    else more_.emplace_back(name, u);
    size_++;
  }
  void truncate(size_t n) {
    size_ = n;
    if (n <= kInline) more_.clear();
    else more_.resize(n - kInline);
  }

 private:
  // Matching runs for every node a pass visits: bindings live inline, so a match allocates nothing.
  static constexpr size_t kInline = 8;
  using Item = std::pair<std::string_view, const UOp*>;
  const Item& at(size_t i) const { return i < kInline ? inline_[i] : more_[i - kInline]; }
  Item inline_[kInline];
  std::vector<Item> more_;
  size_t size_ = 0;
};

// A non-owning reference to a callable: the matcher's continuations, without std::function's allocation.
class MatchCont {
 public:
  template <class F>
  MatchCont(const F& f) : obj_(&f), call_([](const void* o, Bindings& b) { return (*static_cast<const F*>(o))(b); }) {}  // NOLINT
  bool operator()(Bindings& b) const { return call_(obj_, b); }

 private:
  const void* obj_;
  bool (*call_)(const void*, Bindings&);
};

class UPat {
 public:
  enum class SrcMode : uint8_t { Any, Tuple, Permute, Repeat };

  UPat() = default;  // matches anything
  explicit UPat(Ops op) { ops_.add(op); }
  UPat(Ops op, std::vector<UPat> src, std::string name = "");
  UPat(OpSet ops, std::vector<UPat> src, std::string name = "");

  static UPat var(std::string name = "", std::optional<DType> dtype = std::nullopt);
  static UPat cvar(std::string name = "", std::optional<DType> dtype = std::nullopt);  // a CONST
  static UPat const_(double value);  // a CONST numerically equal to value (any dtype)
  static UPat any(std::vector<UPat> alternatives);
  static UPat ops(OpSet ops, std::string name = "") { UPat p; p.ops_ = ops; p.name_ = std::move(name); return p; }

  // Builders: each returns a copy with one more constraint.
  UPat named(std::string name) const;
  UPat dtype(std::vector<DType> dtypes) const;
  UPat dtype(DType d) const { return dtype(std::vector<DType>{d}); }
  UPat arg(Arg a) const;
  UPat where_pred(std::function<bool(const UOp&)> pred) const;  // any extra test on the node
  UPat src_any_order(std::vector<UPat> src) const;              // commutative sources
  UPat src_each(UPat each) const;                               // every source matches `each`
  UPat allow_any_len() const;

  // Operators build ALU patterns; commutative ops match their sources in any order.
  UPat alu(Ops op, const UPat& b) const;
  UPat alu(Ops op) const;
  UPat floordiv(const UPat& b) const { return alu(Ops::FLOORDIV, b); }
  UPat floormod(const UPat& b) const { return alu(Ops::FLOORMOD, b); }
  UPat lt(const UPat& b) const { return alu(Ops::CMPLT, b); }
  UPat ne(const UPat& b) const { return alu(Ops::CMPNE, b); }
  UPat eq(const UPat& b) const { return alu(Ops::CMPEQ, b); }
  UPat maximum(const UPat& b) const { return alu(Ops::MAX, b); }
  UPat where(const UPat& t, const UPat& f) const;
  UPat cast(std::optional<DType> dt = std::nullopt) const;

  // Calls `on_match` for each way the pattern matches u (permutations and alternatives), until it returns true.
  bool match(const UOp& u, Bindings& b, MatchCont on_match) const { return match_impl(u, b, on_match); }

  OpSet op_set() const { return ops_; }
  const std::vector<UPat>& alternatives() const { return any_; }
  // The ops every match's sources must include: the single-op source patterns (a cheap early reject).
  OpSet required_src_ops() const;
  std::string to_string() const;

 private:
  bool match_impl(const UOp& u, Bindings& b, MatchCont k) const;
  static bool match_seq(const UPat* const* pats, size_t n, const UOp* srcs, Bindings& b, MatchCont k);

  OpSet ops_;  // empty: any op
  std::vector<DType> dtypes_;
  std::optional<Arg> arg_;
  std::optional<double> const_value_;
  std::shared_ptr<const std::function<bool(const UOp&)>> pred_;
  std::string name_;
  SrcMode src_mode_ = SrcMode::Any;
  std::vector<UPat> src_;
  bool any_len_ = false;
  std::vector<UPat> any_;  // non-empty: an OR of these
};

UPat operator+(const UPat& a, const UPat& b);
UPat operator-(const UPat& a, const UPat& b);
UPat operator*(const UPat& a, const UPat& b);
UPat operator%(const UPat& a, const UPat& b);  // FLOORMOD
UPat operator&(const UPat& a, const UPat& b);
UPat operator|(const UPat& a, const UPat& b);
UPat operator^(const UPat& a, const UPat& b);
UPat operator-(const UPat& a);
inline UPat operator+(const UPat& a, double c) { return a + UPat::const_(c); }
inline UPat operator*(const UPat& a, double c) { return a * UPat::const_(c); }
inline UPat operator%(const UPat& a, double c) { return a % UPat::const_(c); }
inline UPat operator&(const UPat& a, double c) { return a & UPat::const_(c); }
inline UPat operator|(const UPat& a, double c) { return a | UPat::const_(c); }
inline UPat operator^(const UPat& a, double c) { return a ^ UPat::const_(c); }

}  // namespace doorbell
