#include "compiler/cpu/vectorize.h"

#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

#include "ir/graph_map.h"
#include "ir/graph_rewrite.h"
#include "ir/printer.h"

namespace doorbell {
namespace {

bool is_vector_range(const UOp& u) { return u.op() == Ops::RANGE && u.arg_as<RangeArg>().type == AxisType::VECTOR; }

// The element types a vector can hold: 32 bits, so one mask width serves every comparison.
bool element_ok(DType d) {
  if (d.lanes != 1) return false;
  switch (d.scalar_type) {
    case ScalarType::Float32: case ScalarType::Int32: case ScalarType::UInt32: case ScalarType::Bool: return true;
    default: return false;
  }
}

// The terms of an ADD tree, left to right, on an explicit stack (an address can be a long sum).
void add_terms(const UOp& u, std::vector<UOp>& out) {
  std::vector<const UOp*> stack{&u};
  while (!stack.empty()) {
    const UOp* n = stack.back();
    stack.pop_back();
    if (n->op() != Ops::ADD) {
      out.push_back(*n);
      continue;
    }
    for (auto it = n->src().rbegin(); it != n->src().rend(); ++it) stack.push_back(&*it);
  }
}

class Vectorizer {
 public:
  Vectorizer(const UOp& v, int64_t lanes) : v_(v), lanes_(static_cast<int>(lanes)) {}

  std::optional<UOp> run(const UOp& sink, std::string* why) {
    // visit() maps each node from its sources' vector forms (done_), or refuses it: the map stops there.
    UOp out = map_graph(sink, "vectorize", [&](const UOp& u, std::vector<UOp>&) -> UOp {
      if (visit(u)) return done_.at(u.get());
      if (why) *why = print_node(u);
      return UOp();
    });
    if (!out) return std::nullopt;
    return out;
  }

 private:
  bool dep(const UOp& u) const { return dep_.count(u.get()) > 0; }
  const UOp& mapped(const UOp& u) const { return done_.at(u.get()); }
  std::vector<UOp> mapped_src(const UOp& u) const {
    std::vector<UOp> s;
    for (const UOp& x : u.src()) s.push_back(mapped(x));
    return s;
  }
  void keep(const UOp& u, bool is_dep, UOp out) {
    if (is_dep) dep_.insert(u.get());
    done_[u.get()] = std::move(out);
  }
  UOp same(const UOp& u) const { return rebuilt(u, mapped_src(u)); }

  bool visit(const UOp& u) {
    if (u == v_) {  // only INDEX(b, base + v) and range lists may use it
      lane_index_.insert(u.get());
      keep(u, true, u);
      return true;
    }
    bool any_dep = false;
    for (const UOp& s : u.src()) any_dep |= dep(s);
    switch (u.op()) {
      case Ops::INDEX: return index(u);
      case Ops::LOAD: {
        if (!vindex_.count(u.src(0).get())) {
          keep(u, false, same(u));
          return true;
        }
        if (!element_ok(u.dtype()) || u.dtype().is_bool()) return false;
        keep(u, true, UOp::make(Ops::LOAD, u.dtype().vec(lanes_), mapped_src(u), u.arg(), u.tag()));
        return true;
      }
      case Ops::STORE: {
        bool vec_index = vindex_.count(u.src(0).get()) > 0;
        if (!vec_index) {
          if (any_dep) return false;  // a lane-dependent value into one element
          keep(u, false, same(u));
          return true;
        }
        if (lane_index_.count(u.src(1).get())) return false;
        UOp value = mapped(u.src(1));
        DType et = u.src(1).dtype();
        if (!element_ok(et) || et.is_bool()) return false;
        if (!dep(u.src(1))) value = UOp::make(Ops::CAST, et.vec(lanes_), {value});  // broadcast
        keep(u, false, UOp::make(Ops::STORE, u.dtype(), {mapped(u.src(0)), value}, u.arg(), u.tag()));
        return true;
      }
      case Ops::REDUCE: return reduce(u);
      case Ops::END: {
        std::vector<UOp> s{mapped(u.src(0))};
        for (size_t i = 1; i < u.src().size(); i++)
          if (!(u.src(i) == v_)) s.push_back(mapped(u.src(i)));
        keep(u, false, s.size() == 1 ? s[0] : UOp::make(Ops::END, u.dtype(), std::move(s), u.arg(), u.tag()));
        return true;
      }
      case Ops::GROUP: case Ops::SINK:
        keep(u, false, same(u));
        return true;
      default: break;
    }
    if (!any_dep) {
      keep(u, false, same(u));
      return true;
    }
    if (!group::Elementwise.contains(u.op())) return false;
    bool lane_index_src = false;
    for (const UOp& x : u.src()) lane_index_src |= lane_index_.count(x.get()) > 0;
    if (lane_index_src) {
      // index arithmetic on the lane index: fine inside an INDEX as base + v (checked there), a gather elsewhere
      if (u.dtype().scalar_type != ScalarType::WeakInt) return false;
      lane_index_.insert(u.get());
      keep(u, true, u);
      return true;
    }
    static constexpr OpSet kScalarOnly{Ops::CDIV, Ops::CMOD, Ops::FLOORDIV, Ops::FLOORMOD, Ops::POW, Ops::EXP2,
                                       Ops::LOG2, Ops::SIN, Ops::MULACC, Ops::THREEFRY};
    if (kScalarOnly.contains(u.op()) || !element_ok(u.dtype())) return false;
    if (u.op() == Ops::SQRT && u.dtype().scalar_type != ScalarType::Float32) return false;
    for (const UOp& s : u.src())
      if (dep(s) && !element_ok(s.dtype())) return false;
    if ((u.op() == Ops::CAST || u.op() == Ops::BITCAST) && !element_ok(u.src(0).dtype())) return false;
    if (u.op() == Ops::BITCAST && (u.dtype().is_bool() || u.src(0).dtype().is_bool())) return false;
    std::vector<UOp> src = mapped_src(u);
    if (u.op() != Ops::CAST && u.op() != Ops::BITCAST)  // the IR wants equal lanes: scalars are broadcast by a CAST
      for (size_t i = 0; i < src.size(); i++)
        if (!dep(u.src(i))) {
          if (!element_ok(u.src(i).dtype())) return false;
          src[i] = UOp::make(Ops::CAST, u.src(i).dtype().vec(lanes_), {src[i]});
        }
    keep(u, true, UOp::make(u.op(), u.dtype().vec(lanes_), std::move(src), u.arg(), u.tag()));
    return true;
  }

  // INDEX(b, base + v[, gate]): a contiguous vector access at base.
  bool index(const UOp& u) {
    if (u.src().size() < 2 || !dep(u.src(1))) {
      for (const UOp& s : u.src())
        if (dep(s)) return false;  // a lane-dependent gate
      keep(u, false, same(u));
      return true;
    }
    if (u.src().size() == 3 && dep(u.src(2))) return false;
    std::vector<UOp> terms;
    add_terms(u.src(1), terms);
    int lane_terms = 0;
    UOp base;
    for (const UOp& t : terms) {
      if (t == v_) {
        lane_terms++;
        continue;
      }
      if (dep(t)) return false;  // the lane index scaled or inside another expression: a gather
      base = base ? base + mapped(t) : mapped(t);
    }
    if (lane_terms != 1) return false;
    if (!base) base = UOp::const_(u.src(1).dtype(), int64_t{0});
    std::vector<UOp> s{mapped(u.src(0)), base};
    if (u.src().size() == 3) s.push_back(mapped(u.src(2)));
    vindex_.insert(u.get());
    keep(u, false, UOp::make(Ops::INDEX, u.dtype(), std::move(s), u.arg(), u.tag()));
    return true;
  }

  bool reduce(const UOp& u) {
    const UOp& x = u.src(0);
    if (lane_index_.count(x.get())) return false;
    bool over_lanes = false;
    std::vector<UOp> rest{mapped(x)};
    for (size_t i = 1; i < u.src().size(); i++) {
      if (u.src(i) == v_) over_lanes = true;
      else rest.push_back(mapped(u.src(i)));
    }
    if (!dep(x)) {
      if (over_lanes) return false;  // V copies of one scalar: left to the expander
      keep(u, false, same(u));
      return true;
    }
    if (!element_ok(u.dtype()) || u.dtype().is_bool()) return false;
    UOp acc = rest.size() == 1 ? rest[0] : UOp::make(Ops::REDUCE, u.dtype().vec(lanes_), std::move(rest), u.arg(), u.tag());
    if (!over_lanes) {
      keep(u, true, acc);
      return true;
    }
    keep(u, false, UOp::make(Ops::REDUCE, u.dtype(), {acc}, u.arg(), u.tag()));  // the lanes folded, in order
    return true;
  }

  UOp v_;
  int lanes_;
  std::unordered_map<const UOpNode*, UOp> done_;
  std::unordered_set<const UOpNode*> dep_;     // nodes whose value differs between lanes
  std::unordered_set<const UOpNode*> vindex_;
  std::unordered_set<const UOpNode*> lane_index_;  // v and integer index math on it: not vector values  // INDEX nodes that became contiguous vector accesses
};

}  // namespace

std::optional<UOp> vectorize_kernel(const UOp& sink, std::string* why) {
  if (!sink || sink.op() != Ops::SINK) throw std::invalid_argument("vectorize_kernel: expected a kernel SINK");
  UOp v;
  for (const UOp& u : sink.toposort()) {
    if (!is_vector_range(u)) continue;
    if (v) {  // one vector width per kernel
      if (why) *why = "a second VECTOR range " + print_node(u);
      return std::nullopt;
    }
    v = u;
  }
  if (!v) return sink;
  const UOp& end = v.src(0);
  if (end.op() != Ops::CONST || !std::holds_alternative<int64_t>(end.const_value()))
    throw std::invalid_argument("vectorize_kernel: expected a VECTOR range of constant size: " + print_node(v));
  int64_t lanes = std::get<int64_t>(end.const_value());
  if (lanes < 2 || lanes > 64) {
    if (why) *why = "a VECTOR range of " + std::to_string(lanes) + " lanes; expected 2 to 64";
    return std::nullopt;
  }
  return Vectorizer(v, lanes).run(sink, why);
}

UOp devectorize_ranges(const UOp& sink) {
  std::unordered_map<const UOpNode*, UOp> m;
  for (const UOp& u : sink.toposort())
    if (is_vector_range(u))
      m[u.get()] = UOp::make(Ops::RANGE, u.dtype(), u.src(), RangeArg{u.arg_as<RangeArg>().axis, AxisType::UPCAST}, u.tag());
  return m.empty() ? sink : substitute(sink, m);
}

}  // namespace doorbell
