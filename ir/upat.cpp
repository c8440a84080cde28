#include "ir/upat.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>

namespace doorbell {

const UOp& Bindings::operator[](std::string_view name) const {
  if (const UOp* u = find(name)) return *u;
  throw std::out_of_range("Bindings: no UOp is bound to '" + std::string(name) + "'");
}

UPat::UPat(Ops op, std::vector<UPat> src, std::string name) : name_(std::move(name)), src_mode_(SrcMode::Tuple), src_(std::move(src)) {
  ops_.add(op);
}
UPat::UPat(OpSet ops, std::vector<UPat> src, std::string name)
    : ops_(ops), name_(std::move(name)), src_mode_(SrcMode::Tuple), src_(std::move(src)) {}

UPat UPat::var(std::string name, std::optional<DType> dt) {
  UPat p;
  p.name_ = std::move(name);
  if (dt) p.dtypes_ = {*dt};
  return p;
}

UPat UPat::cvar(std::string name, std::optional<DType> dt) {
  UPat p = var(std::move(name), dt);
  p.ops_ = OpSet{Ops::CONST};
  return p;
}

UPat UPat::const_(double value) {
  UPat p(Ops::CONST);
  p.const_value_ = value;
  return p;
}

UPat UPat::any(std::vector<UPat> alternatives) {
  UPat p;
  p.any_ = std::move(alternatives);
  return p;
}

UPat UPat::named(std::string name) const { UPat p = *this; p.name_ = std::move(name); return p; }
UPat UPat::dtype(std::vector<DType> d) const { UPat p = *this; p.dtypes_ = std::move(d); return p; }
UPat UPat::arg(Arg a) const { UPat p = *this; p.arg_ = std::move(a); return p; }
UPat UPat::where_pred(std::function<bool(const UOp&)> pred) const {
  UPat p = *this;
  if (p.pred_) {
    auto prev = p.pred_;
    p.pred_ = std::make_shared<const std::function<bool(const UOp&)>>([prev, pred](const UOp& u) { return (*prev)(u) && pred(u); });
  } else {
    p.pred_ = std::make_shared<const std::function<bool(const UOp&)>>(std::move(pred));
  }
  return p;
}
UPat UPat::src_any_order(std::vector<UPat> src) const { UPat p = *this; p.src_mode_ = SrcMode::Permute; p.src_ = std::move(src); return p; }
UPat UPat::src_each(UPat each) const { UPat p = *this; p.src_mode_ = SrcMode::Repeat; p.src_ = {std::move(each)}; return p; }
UPat UPat::allow_any_len() const { UPat p = *this; p.any_len_ = true; return p; }

UPat UPat::alu(Ops op, const UPat& b) const {
  UPat p(op);
  p.src_ = {*this, b};
  p.src_mode_ = group::Commutative.contains(op) ? SrcMode::Permute : SrcMode::Tuple;
  return p;
}
UPat UPat::alu(Ops op) const { return UPat(op, {*this}); }
UPat UPat::where(const UPat& t, const UPat& f) const { return UPat(Ops::WHERE, {*this, t, f}); }
UPat UPat::cast(std::optional<DType> dt) const {
  UPat p(Ops::CAST, {*this});
  if (dt) p.dtypes_ = {*dt};
  return p;
}

UPat operator+(const UPat& a, const UPat& b) { return a.alu(Ops::ADD, b); }
UPat operator-(const UPat& a, const UPat& b) { return a.alu(Ops::SUB, b); }
UPat operator*(const UPat& a, const UPat& b) { return a.alu(Ops::MUL, b); }
UPat operator%(const UPat& a, const UPat& b) { return a.alu(Ops::FLOORMOD, b); }
UPat operator&(const UPat& a, const UPat& b) { return a.alu(Ops::AND, b); }
UPat operator|(const UPat& a, const UPat& b) { return a.alu(Ops::OR, b); }
UPat operator^(const UPat& a, const UPat& b) { return a.alu(Ops::XOR, b); }
UPat operator-(const UPat& a) { return a.alu(Ops::NEG); }

// Continuation-passing matcher: k(bindings) is called for every complete match; returning true stops the search.
// Recursive, but only as deep as the pattern (a rule's few nested UPats), however deep the graph it looks at.
bool UPat::match_impl(const UOp& u, Bindings& b, MatchCont k) const {
  if (!ops_.empty() && !ops_.contains(u.op())) return false;
  if (!dtypes_.empty() && std::find(dtypes_.begin(), dtypes_.end(), u.dtype()) == dtypes_.end()) return false;
  if (arg_ && !(u.arg() == *arg_)) return false;
  if (const_value_ && !u.is_const_value(*const_value_)) return false;
  size_t mark = b.size();
  if (!name_.empty()) {
    if (const UOp* prev = b.find(name_)) {
      if (!(*prev == u)) return false;
    } else {
      b.push(name_, &u);
    }
  }
  if (pred_ && !(*pred_)(u)) { b.truncate(mark); return false; }
  if (!any_.empty()) {  // an OR: each alternative, under this pattern's own name, dtype and predicate
    for (const UPat& alt : any_) {
      size_t alt_mark = b.size();
      if (alt.match_impl(u, b, k)) return true;
      b.truncate(alt_mark);
    }
    b.truncate(mark);
    return false;
  }
  bool ok = false;
  const std::vector<UOp>& srcs = u.src();
  switch (src_mode_) {
    case SrcMode::Any: ok = k(b); break;
    case SrcMode::Repeat: {
      std::vector<const UPat*> pats(srcs.size(), &src_[0]);
      ok = match_seq(pats.data(), pats.size(), srcs.data(), b, k);
      break;
    }
    case SrcMode::Tuple: {
      if (srcs.size() < src_.size() || (!any_len_ && srcs.size() != src_.size())) break;
      const UPat* pats[8];
      std::vector<const UPat*> many;
      const UPat** p = src_.size() <= 8 ? pats : (many.resize(src_.size()), many.data());
      for (size_t i = 0; i < src_.size(); i++) p[i] = &src_[i];
      ok = match_seq(p, src_.size(), srcs.data(), b, k);
      break;
    }
    case SrcMode::Permute: {
      if (srcs.size() != src_.size()) break;
      std::vector<size_t> perm(src_.size());
      std::iota(perm.begin(), perm.end(), 0);
      std::vector<const UPat*> pats(src_.size());
      do {
        for (size_t i = 0; i < perm.size(); i++) pats[i] = &src_[perm[i]];
        ok = match_seq(pats.data(), pats.size(), srcs.data(), b, k);
      } while (!ok && std::next_permutation(perm.begin(), perm.end()));
      break;
    }
  }
  if (!ok) b.truncate(mark);
  return ok;
}

bool UPat::match_seq(const UPat* const* pats, size_t n, const UOp* srcs, Bindings& b, MatchCont k) {
  if (n == 0) return k(b);
  size_t mark = b.size();
  auto next = [&](Bindings& b2) { return match_seq(pats + 1, n - 1, srcs + 1, b2, k); };
  if (pats[0]->match_impl(srcs[0], b, MatchCont(next))) return true;
  b.truncate(mark);
  return false;
}


OpSet UPat::required_src_ops() const {
  OpSet req;
  if (src_mode_ != SrcMode::Tuple && src_mode_ != SrcMode::Permute) return req;
  for (const UPat& s : src_) {
    OpSet o = s.ops_;
    if (s.any_.empty() && !o.empty() && (o.bits[0] & (o.bits[0] - 1)) == 0 && (o.bits[1] & (o.bits[1] - 1)) == 0 &&
        ((o.bits[0] == 0) != (o.bits[1] == 0)))
      req = req | o;
  }
  return req;
}

// Recursive over the pattern's nesting, which is a rule's few levels.
std::string UPat::to_string() const {
  if (!any_.empty()) {
    std::string s = "any(";
    for (size_t i = 0; i < any_.size(); i++) s += (i ? ", " : "") + any_[i].to_string();
    return s + ")";
  }
  std::string s;
  if (ops_.empty()) s = "*";
  for (int i = 0; i < kOpCount; i++)
    if (ops_.contains(static_cast<Ops>(i))) s += (s.empty() ? "" : "|") + std::string(op_name(static_cast<Ops>(i)));
  if (!name_.empty()) s += ":" + name_;
  if (const_value_) s += "=" + arg_to_string(Arg(Float(*const_value_)));
  if (arg_) s += "[" + arg_to_string(*arg_) + "]";
  if (src_mode_ == SrcMode::Tuple || src_mode_ == SrcMode::Permute) {
    s += src_mode_ == SrcMode::Permute ? "{" : "(";
    for (size_t i = 0; i < src_.size(); i++) s += (i ? ", " : "") + src_[i].to_string();
    s += src_mode_ == SrcMode::Permute ? "}" : ")";
  } else if (src_mode_ == SrcMode::Repeat) {
    s += "(" + src_[0].to_string() + "...)";
  }
  return s;
}

}  // namespace doorbell
