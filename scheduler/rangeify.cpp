#include "scheduler/rangeify.h"

#include <algorithm>
#include <optional>
#include <set>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

#include "ir/node_map.h"
#include "ir/printer.h"
#include "ir/reduce_identity.h"
#include "ir/symbolic.h"
#include "scheduler/schedule.h"

namespace doorbell {

bool is_storage(const UOp& u) {
  if (u.op() == Ops::BUFFER) return !u.src().empty() && u.src(0).op() == Ops::UNIQUE;
  if (u.op() == Ops::PARAM) {
    const ParamArg* p = std::get_if<ParamArg>(&u.arg());
    return p && p->addrspace == AddrSpace::GLOBAL;
  }
  return false;
}

namespace {

using Idx = std::vector<UOp>;

class NodeSet {
 public:
  void insert(const UOpNode* n) { map_.get(n) = 1; }
  size_t count(const UOpNode* n) { const char* v = map_.find(n); return v && *v; }

 private:
  NodeMap<char> map_;
};
constexpr int kNoOverride = -2;

UOp wconst(int64_t v) { return UOp::const_(dtypes::weakint, v); }

const IntTuple& shape_of(const UOp& u) {
  if (const IntTuple* s = u.shape()) return *s;
  throw std::runtime_error("rangeify: " + print_node(u) + " has no tensor shape");
}

int64_t prod(const IntTuple& s) {
  int64_t p = 1;
  for (int64_t d : s) p *= d;
  return p;
}

int64_t storage_count(const UOp& s) {
  if (s.op() == Ops::BUFFER) return s.arg_as<int64_t>();
  return std::get<ParamArg>(s.arg()).vmax + 1;
}

// Row-major flat index of idx in shape.
UOp flat_index(const Idx& idx, const IntTuple& shape) {
  UOp flat;  // built without +0 and *1 nodes: every node made here is one the simplifier need not remove
  int64_t stride = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    if (shape[i] != 1 && !idx[i].is_const_value(0)) {
      UOp term = stride == 1 ? idx[i] : idx[i] * stride;
      flat = flat ? term + flat : term;
    }
    stride *= shape[i];
  }
  return flat ? flat : wconst(0);
}

UOp and_valid(const UOp& a, const UOp& b) {
  if (a.is_const_value(1)) return b;
  if (b.is_const_value(1)) return a;
  return a & b;
}

// Index math needs the simplifier only where it divides, takes a remainder or compares (reshape splits, PAD
// validity); sums of ranges times strides are already as simple as they get, in a construction order that is
// the same every time the same graph is scheduled.
UOp simplify_index(const UOp& u) {
  static constexpr OpSet kNeedsRules{Ops::FLOORDIV, Ops::FLOORMOD, Ops::CMPLT, Ops::CMPNE, Ops::CMPEQ, Ops::AND,
                                     Ops::OR, Ops::WHERE, Ops::SUB, Ops::NEG, Ops::MAX};
  std::vector<const UOp*> stack{&u};
  while (!stack.empty()) {
    const UOp* n = stack.back();
    stack.pop_back();
    if (kNeedsRules.contains(n->op())) return simplify(u);
    for (const UOp& s : n->src()) stack.push_back(&s);
  }
  return u;
}

class Rangeifier {
 public:
  explicit Rangeifier(const std::vector<UOp>& outputs) : outputs_(outputs) {}

  KernelGraph run() {
    analyze();
    for (const UOp& n : order_)
      if (realized_.count(n.get())) build_kernel(n);
    for (const UOp& o : outputs_) {
      if (auto it = location_.find(o.get()); it != location_.end()) graph_.becomes.emplace_back(o, it->second.view);
      else graph_.becomes.emplace_back(o, o);  // already a view of storage
    }
    return std::move(graph_);
  }

 private:
  struct Location {
    UOp storage;
    int producer;  // kernel that writes it
    UOp view;      // the storage viewed in the value's shape
  };

  // ---- what is stored ---------------------------------------------------------------------------------

  // The device a storage node names: a BUFFER's DEVICE, a placeholder PARAM's name (scheduler/schedule.cpp).
  static const std::string* storage_device(const UOp& u) {
    if (!is_storage(u)) return nullptr;
    if (u.op() == Ops::PARAM) return &std::get<ParamArg>(u.arg()).name;
    return u.src().size() > 1 && u.src(1).op() == Ops::DEVICE ? &std::get<std::string>(u.src(1).arg()) : nullptr;
  }

  static bool is_plain_view_of_storage(const UOp& u) {  // a reshape chain over storage: nothing to compute
    UOp v = u;
    while (v.op() == Ops::RESHAPE) v = v.src(0);
    return is_storage(v);
  }

  void analyze() {
    for (const UOp& o : outputs_)
      if (!o.shape()) throw std::invalid_argument("schedule: output " + print_node(o) + " has no tensor shape");
    order_ = UOp::sink(outputs_).toposort();
    order_.pop_back();  // the SINK
    for (const UOp& n : order_) {
      // A value lives on the device of the storage it is computed from (the first one met): a result of NV buffers
      // is stored on NV whatever DEV says; only values made of constants alone go to the default device.
      const std::string* dev = storage_device(n);
      for (size_t i = 0; dev == nullptr && i < n.src().size(); i++)
        if (const std::string** d = device_of_.find(n.src(i).get())) dev = *d;
      if (dev != nullptr) device_of_.get(n.get()) = dev;
    }
    for (const UOp& n : order_) {
      if (is_storage(n) || n.op() == Ops::UNIQUE || n.op() == Ops::DEVICE) continue;
      if (n.op() == Ops::AFTER) {  // AFTER(target, STORE(target, value)): the kernel consumes value
        check_assign(n);
        add_consumer(n.src(1).src(1), n);
        realized_.insert(n.get());
        continue;
      }
      if (n.op() == Ops::STORE) continue;
      for (const UOp& s : n.src()) add_consumer(s, n);
      if (n.op() == Ops::CONTIGUOUS) realized_.insert(n.get());
    }
    for (const UOp& o : outputs_)
      if (!is_plain_view_of_storage(o)) realized_.insert(o.get());
    // Consumers first. A reduce is computed inside its consumer's kernel unless
    //  - its value is broadcast on the way to that kernel's output (softmax's max): each output element would
    //    redo the whole reduce. A reduce to a single element is the exception: it does not depend on the
    //    consumer's ranges, so it is computed once in the consumer's kernel, as tinygrad does (x / x.max());
    //  - its consumers index it differently (a movement op on some path): it would be computed once per way.
    NodeMap<char> broadcast_downstream(order_.size()), moved_downstream(order_.size());
    for (auto it = order_.rbegin(); it != order_.rend(); ++it) {
      const UOp& n = *it;
      bool broadcast = false, moved = false;
      const std::vector<const UOpNode*>& consumers = consumers_.get(n.get());
      for (const UOpNode* c : consumers) {
        if (realized_.count(c)) continue;
        broadcast |= c->op == Ops::EXPAND || broadcast_downstream.get(c);
        moved |= group::Movement.contains(c->op) || moved_downstream.get(c);
      }
      broadcast_downstream.get(n.get()) = broadcast;
      moved_downstream.get(n.get()) = moved;
      if (n.op() != Ops::REDUCE) continue;
      bool single_element = prod(shape_of(n)) == 1;
      if ((broadcast && !single_element) || (consumers.size() > 1 && moved)) realized_.insert(n.get());
    }
    bound_fused_depth();
    for (const UOp& n : order_)
      if (n.op() == Ops::AFTER) fix_store_hazard(n);
  }

  // Consumers are added in toposort order, each consumer's sources together: a repeated source (x + x) is the only
  // duplicate, and it is the last one added. (Searching the list made a constant shared by a million adds quadratic.)
  void add_consumer(const UOp& s, const UOp& n) {
    auto& v = consumers_.get(s.get());
    if (v.empty() || v.back() != n.get()) v.push_back(n.get());
  }

  // Sources that a kernel computing `n` lowers with it (a SHRINK's symbolic offsets are index math, not values).
  static size_t fused_sources(const UOp& n) {
    if (group::Elementwise.contains(n.op())) return n.src().size();
    if (group::Movement.contains(n.op()) || n.op() == Ops::REDUCE || n.op() == Ops::CONTIGUOUS || n.op() == Ops::DETACH ||
        n.op() == Ops::CONTIGUOUS_BACKWARD)
      return 1;
    return 0;
  }

  // EXP2, LOG2, SIN and POW become a few dozen ops of float arithmetic where the target has no instruction for them.
  static int64_t fused_cost(Ops op) {
    return op == Ops::EXP2 || op == Ops::LOG2 || op == Ops::SIN || op == Ops::POW ? 16 : 1;
  }

  // A value kMaxFusedDepth ops (weighted by fused_cost) above the nearest stored value is stored (rangeify.h): a
  // chain of a million ops becomes kernels of that many ops instead of one kernel no compiler takes in reasonable
  // time. Index math counts: each movement op adds to every address the kernel computes.
  void bound_fused_depth() {
    NodeMap<int64_t> depth(order_.size());
    for (const UOp& n : order_) {
      size_t fused = fused_sources(n);
      if (fused == 0 || realized_.count(n.get())) continue;  // a leaf or a stored value: its consumers load it
      int64_t base = 0;
      for (size_t i = 0; i < fused; i++)
        if (const int64_t* sd = depth.find(n.src(i).get()); sd && !realized_.count(n.src(i).get())) base = std::max(base, *sd);
      int64_t d = base + fused_cost(n.op());
      if (d >= kMaxFusedDepth) {
        realized_.insert(n.get());
        d = 0;
      }
      depth.get(n.get()) = d;
    }
  }

  static void check_assign(const UOp& after) {
    if (after.src().size() < 2 || after.src(1).op() != Ops::STORE || after.src(1).src().size() != 2 || !(after.src(1).src(0) == after.src(0)))
      throw std::invalid_argument("schedule: expected an assign as AFTER(target, STORE(target, value)), got " + print_node(after));
    for (UOp v = after.src(0);;) {
      if (is_storage(v)) break;
      if (v.op() == Ops::AFTER) { v = v.src(0); continue; }
      if (v.op() == Ops::PAD || v.op() == Ops::EXPAND || !group::Movement.contains(v.op()))
        throw std::invalid_argument("assign: the target must be a view of a buffer without PAD or EXPAND, got " + print_node(v));
      v = v.src(0);
    }
    const IntTuple& ts = shape_of(after.src(0));
    const IntTuple& vs = shape_of(after.src(1).src(1));
    if (ts != vs) throw std::invalid_argument("assign: value shape " + arg_to_string(Arg(vs)) + " differs from target shape " + arg_to_string(Arg(ts)));
  }

  // An assign whose value reads its own target's storage through another view (a permute, flip, shifted
  // shrink...) would read elements already overwritten: the value is stored to a temporary first.
  void fix_store_hazard(const UOp& after) {
    const UOp& target = after.src(0);
    const UOp& value = after.src(1).src(1);
    std::unordered_set<const UOpNode*> chain;  // the target and everything below it down to its storage
    for (UOp v = target;; v = v.src(0)) {
      chain.insert(v.get());
      if (is_storage(v)) break;
    }
    // Reading the target itself, element for element, is safe; reaching its storage any other way, or the
    // target through a movement op, is not.
    bool hazard = false;
    std::vector<std::pair<UOp, bool>> stack{{value, false}};
    std::set<std::pair<const UOpNode*, bool>> seen;
    while (!stack.empty() && !hazard) {
      auto [u, moved] = stack.back();
      stack.pop_back();
      if (!seen.insert({u.get(), moved}).second) continue;
      if (chain.count(u.get())) {
        hazard = moved || !(u == target);
        continue;
      }
      if (realized_.count(u.get()) && !(u == value)) continue;  // stored before this kernel runs
      if (is_storage(u)) continue;
      bool moves = group::Movement.contains(u.op());
      for (const UOp& s : u.src()) stack.push_back({s, moved || moves});
    }
    if (hazard) realized_.insert(value.get());
  }

  // ---- lowering one kernel ------------------------------------------------------------------------------

  UOp param(const UOp& storage) {
    auto [it, inserted] = slot_of_.emplace(storage.get(), static_cast<int64_t>(args_.size()));
    if (inserted) args_.push_back(storage);
    return UOp::make(Ops::PARAM, storage.dtype(), {}, ParamArg{it->second, AddrSpace::GLOBAL, "", 0, storage_count(storage) - 1});
  }

  void record_read(const UOp& storage, int producer) {
    for (const StateRead& r : reads_)
      if (r.storage == storage && r.producer == producer) return;
    reads_.push_back({storage, producer});
  }

  // Index math is simplified where it is made: the values around it need no symbolic rules, and simplifying
  // only addresses and validity keeps scheduling fast.
  UOp load(const UOp& storage, const UOp& raw_addr, const UOp& raw_valid, int producer) {
    UOp valid = simplify_index(raw_valid);
    if (valid.is_const_value(0)) return UOp::const_(storage.dtype(), int64_t{0});  // never read
    UOp addr = simplify_index(raw_addr);
    record_read(storage, producer);
    UOp p = param(storage);
    std::vector<UOp> src{p, addr};
    if (!valid.is_const_value(1)) src.push_back(valid);
    UOp index = UOp::make(Ops::INDEX, storage.dtype(), std::move(src));
    return UOp::make(Ops::LOAD, storage.dtype(), {index});
  }

  // Where a movement view of storage lands: the storage, its element index, validity, and the state read.
  struct Address {
    UOp storage, index, valid;
    int producer;
  };

  Address address(const UOp& view, const Idx& idx, int producer) {
    UOp v = view;
    Idx cur = idx;
    while (!is_storage(v)) {
      if (v.op() == Ops::AFTER) {
        if (producer == kNoOverride) producer = location_.at(v.get()).producer;
        v = v.src(0);
        continue;
      }
      cur = move_index(v, cur, nullptr);
      v = v.src(0);
    }
    return {v, cur[0], UOp::const_(dtypes::bool_, true), producer == kNoOverride ? -1 : producer};
  }

  // The index into node.src(0) for index idx into node; PAD also narrows `valid`.
  Idx move_index(const UOp& node, const Idx& idx, UOp* valid) {
    const IntTuple& out = shape_of(node);
    const IntTuple& in = shape_of(node.src(0));
    Idx r(in.size());
    switch (node.op()) {
      case Ops::RESHAPE: {
        // Adding or removing size-1 axes moves no element: the other axes keep their index (no div/mod to
        // simplify away, which is most of a matmul's or a broadcast's index math).
        IntTuple in_big, out_big;
        for (int64_t d : in) if (d != 1) in_big.push_back(d);
        for (int64_t d : out) if (d != 1) out_big.push_back(d);
        if (in_big == out_big) {
          size_t k = 0;
          for (size_t j = 0; j < in.size(); j++) {
            if (in[j] == 1) { r[j] = wconst(0); continue; }
            while (out[k] == 1) k++;
            r[j] = idx[k++];
          }
          return r;
        }
        UOp flat = flat_index(idx, out);
        int64_t stride = prod(in);
        for (size_t j = 0; j < in.size(); j++) {
          stride /= std::max<int64_t>(in[j], 1);
          if (in[j] == 1) { r[j] = wconst(0); continue; }
          UOp q = stride == 1 ? flat : flat.floordiv(stride);
          r[j] = j == 0 ? q : q.floormod(in[j]);
        }
        return r;
      }
      case Ops::PERMUTE: {
        const IntTuple& perm = node.arg_as<IntTuple>();
        for (size_t i = 0; i < perm.size(); i++) r[perm[i]] = idx[i];
        return r;
      }
      case Ops::EXPAND:
        for (size_t i = 0; i < in.size(); i++) r[i] = in[i] == out[i] ? idx[i] : wconst(0);
        return r;
      case Ops::SHRINK: {  // with symbolic offsets (Tensor::narrow) as sources 1..n: index + begin + offset
        const IntTuple& a = node.arg_as<IntTuple>();
        for (size_t i = 0; i < in.size(); i++) {
          r[i] = a[2 * i] ? idx[i] + a[2 * i] : idx[i];
          if (node.src().size() > 1 && !node.src(i + 1).is_const_value(0)) r[i] = r[i] + node.src(i + 1);
        }
        return r;
      }
      case Ops::FLIP: {
        r = idx;
        for (int64_t ax : node.arg_as<IntTuple>()) r[ax] = (in[ax] - 1) - idx[ax];
        return r;
      }
      case Ops::PAD: {
        const IntTuple& a = node.arg_as<IntTuple>();
        for (size_t i = 0; i < in.size(); i++) {
          int64_t before = a[2 * i], after = a[2 * i + 1];
          r[i] = before ? idx[i] - before : idx[i];
          if (!valid) {
            if (before || after) throw std::runtime_error("rangeify: PAD in a store target");
            continue;
          }
          if (before) *valid = and_valid(*valid, idx[i].ge(wconst(before)));
          if (after) *valid = and_valid(*valid, idx[i].lt(wconst(before + in[i])));
        }
        return r;
      }
      default: throw std::runtime_error("rangeify: " + print_node(node) + " is not a movement op");
    }
  }

  // ---- lowering, iterative: a chain of a million elementwise or movement ops is lowered on an explicit stack ----

  // Lowering `node` at index `idx` under validity `valid`, reading the state that kernel `producer` wrote.
  struct Request {
    UOp node;
    Idx idx;
    UOp valid;
    int producer;
  };
  using MemoKey = std::vector<const void*>;
  struct MemoKeyHash {
    size_t operator()(const MemoKey& k) const noexcept {
      uint64_t h = 0xcbf29ce484222325ULL;
      for (const void* p : k) h = (h ^ reinterpret_cast<uintptr_t>(p)) * 0x100000001b3ULL;
      return static_cast<size_t>(h ^ (h >> 29));
    }
  };
  // What a request needs: its value now, another request whose value is its own (a movement op, a realized view),
  // or the values of `children` combined by `finish`.
  enum class Finish { kNone, kElementwise, kPad, kReduce };
  struct Frame {
    Request req;
    std::vector<MemoKey> keys;  // the request and every request it was forwarded to share one value
    bool planned = false;
    Finish finish = Finish::kNone;
    std::vector<Request> children;
    std::vector<UOp> results;
    UOp pad_valid;              // kPad: where the padded value is the source's
    std::vector<UOp> ranges;    // kReduce: the reduce's ranges
  };

  MemoKey memo_key(const Request& r) {
    MemoKey key{r.node.get(), r.valid.get(), reinterpret_cast<const void*>(static_cast<intptr_t>(r.producer))};
    for (const UOp& i : r.idx) key.push_back(i.get());
    return key;
  }

  UOp lower(const UOp& node, const Idx& idx, const UOp& valid, int producer) {
    std::vector<Frame> stack;
    stack.push_back(Frame{Request{node, idx, valid, producer}, {}, false, Finish::kNone, {}, {}, UOp(), {}});
    UOp result;
    while (true) {
      Frame& f = stack.back();
      if (!f.planned) {
        MemoKey key = memo_key(f.req);
        if (auto it = memo_.find(key); it != memo_.end()) {
          result = it->second;
        } else {
          f.keys.push_back(std::move(key));
          // The key holds raw pointers: its nodes must outlive the memo, or a new node at a freed address would hit.
          memo_keys_alive_.push_back(f.req.valid);
          memo_keys_alive_.insert(memo_keys_alive_.end(), f.req.idx.begin(), f.req.idx.end());
          if (std::optional<UOp> value = plan(f)) result = std::move(*value);
          else continue;  // forwarded (plan rewrote f.req) or children to lower first
        }
      } else if (f.results.size() < f.children.size()) {
        Request next = f.children[f.results.size()];
        stack.push_back(Frame{std::move(next), {}, false, Finish::kNone, {}, {}, UOp(), {}});
        continue;
      } else {
        result = finish(f);
      }
      for (MemoKey& k : stack.back().keys) memo_.emplace(std::move(k), result);
      stack.pop_back();
      if (stack.empty()) return result;
      stack.back().results.push_back(result);
    }
  }

  // The value of f's request when it needs no other lowering; otherwise nullopt with f.req forwarded to the request
  // whose value is f's (f stays unplanned) or with f.children to lower and f.finish to combine them.
  std::optional<UOp> plan(Frame& f) {
    Request& r = f.req;
    const UOp node = r.node;
    if (!(node == root_) && realized_.count(node.get()) && r.producer == kNoOverride) {
      const Location& loc = location_.at(node.get());
      if (node.op() == Ops::AFTER) {  // through the target's view
        r = Request{node.src(0), std::move(r.idx), std::move(r.valid), loc.producer};
        return std::nullopt;
      }
      return load(loc.storage, flat_index(r.idx, shape_of(node)), r.valid, loc.producer);
    }
    if (is_storage(node)) return load(node, r.idx[0], r.valid, r.producer == kNoOverride ? -1 : r.producer);
    Ops op = node.op();
    if (op == Ops::CONST) return node;
    if (op == Ops::PARAM && node.arg_as<ParamArg>().addrspace == AddrSpace::ALU) return node;  // a variable: a kernel scalar
    f.planned = true;
    if (group::Elementwise.contains(op)) {
      f.finish = Finish::kElementwise;
      for (const UOp& s : node.src()) f.children.push_back(Request{s, r.idx, r.valid, r.producer});
      return std::nullopt;
    }
    // CONTIGUOUS and friends pass their source through; an AFTER here is reached through an overridden view.
    if (op == Ops::CONTIGUOUS || op == Ops::DETACH || op == Ops::CONTIGUOUS_BACKWARD || op == Ops::AFTER) {
      f.planned = false;
      r.node = node.src(0);
      return std::nullopt;
    }
    if (op == Ops::PAD) {
      UOp pad_valid = UOp::const_(dtypes::bool_, true);
      Idx in = move_index(node, r.idx, &pad_valid);
      pad_valid = simplify_index(pad_valid);
      if (pad_valid.is_const_value(0)) return UOp::const_(node.dtype(), int64_t{0});
      f.finish = Finish::kPad;
      f.pad_valid = pad_valid;
      f.children.push_back(Request{node.src(0), std::move(in), and_valid(r.valid, pad_valid), r.producer});
      return std::nullopt;
    }
    if (group::Movement.contains(op)) {
      f.planned = false;
      r.idx = move_index(node, r.idx, nullptr);
      r.node = node.src(0);
      return std::nullopt;
    }
    if (op == Ops::REDUCE) {
      const ReduceArg& ra = node.arg_as<ReduceArg>();
      const IntTuple& in = shape_of(node.src(0));
      Idx src_idx = r.idx;
      for (int64_t ax : ra.axes) {
        if (in[ax] == 0) return UOp::const_(node.dtype(), reduce_identity(ra.op, node.dtype()));  // an empty reduce is its identity
        if (in[ax] == 1) { src_idx[ax] = wconst(0); continue; }
        src_idx[ax] = UOp::range(wconst(in[ax]), next_axis_++, AxisType::REDUCE);
        f.ranges.push_back(src_idx[ax]);
      }
      f.finish = Finish::kReduce;
      f.children.push_back(Request{node.src(0), std::move(src_idx), r.valid, r.producer});
      return std::nullopt;
    }
    throw std::runtime_error("rangeify: cannot index " + print_node(node));
  }

  // f's value from its children's values.
  static UOp finish(Frame& f) {
    const UOp& node = f.req.node;
    switch (f.finish) {
      case Finish::kElementwise: return UOp::make(node.op(), node.dtype(), std::move(f.results), node.arg());
      case Finish::kPad:
        if (f.pad_valid.is_const_value(1)) return f.results[0];
        return f.pad_valid.where(f.results[0], UOp::const_(node.dtype(), int64_t{0}));
      case Finish::kReduce: {
        if (f.ranges.empty()) return f.results[0];
        std::vector<UOp> src{f.results[0]};
        src.insert(src.end(), f.ranges.begin(), f.ranges.end());
        return UOp::make(Ops::REDUCE, node.dtype(), std::move(src), ReduceArg{node.arg_as<ReduceArg>().op, {}});
      }
      case Finish::kNone: break;
    }
    throw std::logic_error("rangeify: " + print_node(node) + " finished without a plan");
  }

  // An assign's target with every earlier assign in it replaced by the view of the storage that assign wrote: a
  // tensor that held a chain of assigns becomes a view of its buffer, not the previous assign (which would run again).
  UOp stored_view(const UOp& target) {
    std::vector<UOp> views;  // the movement ops above the storage or the first stored assign, outermost first
    UOp base = target;
    while (!is_storage(base)) {
      if (base.op() == Ops::AFTER)
        if (auto it = location_.find(base.get()); it != location_.end()) {
          base = it->second.view;
          break;
        }
      views.push_back(base);
      base = base.src(0);
    }
    for (auto it = views.rbegin(); it != views.rend(); ++it) {
      if (it->op() == Ops::AFTER) continue;  // an assign not stored by this schedule: its target's view stands for it
      std::vector<UOp> src = it->src();
      src[0] = base;
      base = it->replace_src(std::move(src));
    }
    return base;
  }

  void build_kernel(const UOp& n) {
    args_.clear();
    slot_of_.clear();
    reads_.clear();
    memo_.clear();
    memo_keys_alive_.clear();
    next_axis_ = 0;
    root_ = n;
    const IntTuple& shape = shape_of(n);
    Idx idx;
    std::vector<UOp> ranges;
    for (int64_t d : shape) {
      if (d == 1) { idx.push_back(wconst(0)); continue; }
      idx.push_back(UOp::range(wconst(d), next_axis_++, AxisType::LOOP));
      ranges.push_back(idx.back());
    }
    int kernel_index = static_cast<int>(graph_.kernels.size());
    Kernel k;
    UOp value, storage, addr, view;
    if (n.op() == Ops::AFTER) {
      Address a = address(n.src(0), idx, kNoOverride);
      storage = a.storage;
      addr = a.index;
      k.prev_state = a.producer;
      k.is_assign = true;
      view = stored_view(n.src(0));
      param(storage);  // the written storage is slot 0
      value = lower(n.src(1).src(1), idx, UOp::const_(dtypes::bool_, true), kNoOverride);
    } else {
      const std::string** dev = device_of_.find(n.get());
      storage = new_buffer(strong_dtype(n.dtype()), prod(shape), dev ? **dev : default_device_name());
      addr = flat_index(idx, shape);
      view = shape.size() == 1 ? storage : UOp::make(Ops::RESHAPE, storage.dtype(), {storage}, shape);
      param(storage);
      value = lower(n, idx, UOp::const_(dtypes::bool_, true), kNoOverride);
      bool is_output = std::any_of(outputs_.begin(), outputs_.end(), [&](const UOp& o) { return o == n; });
      if (!is_output) graph_.intermediates.push_back(storage);
    }
    if (prod(shape) == 0) {  // nothing to compute: the storage exists, no kernel runs
      location_[n.get()] = Location{storage, -1, view};
      return;
    }
    location_[n.get()] = Location{storage, kernel_index, view};
    if (value.dtype() != storage.dtype()) value = value.cast(storage.dtype());
    UOp index = UOp::make(Ops::INDEX, storage.dtype(), {param(storage), simplify_index(addr)});
    UOp store = UOp::make(Ops::STORE, dtypes::void_, {index, value});
    std::vector<UOp> end_src{store};
    end_src.insert(end_src.end(), ranges.begin(), ranges.end());
    UOp end = ranges.empty() ? store : UOp::make(Ops::END, dtypes::void_, std::move(end_src));
    k.body = UOp::sink({end});
    k.args = args_;
    k.reads = reads_;
    graph_.kernels.push_back(std::move(k));
  }

  std::vector<UOp> outputs_;
  std::vector<UOp> order_;
  // Flat tables: a graph of a million nodes is looked up several million times.
  NodeMap<const std::string*> device_of_;  // into the storage nodes' args, alive meanwhile
  NodeMap<std::vector<const UOpNode*>> consumers_;
  NodeSet realized_;
  std::unordered_map<const UOpNode*, Location> location_;
  KernelGraph graph_;
  // the kernel being built
  UOp root_;
  std::vector<UOp> args_;
  std::unordered_map<const UOpNode*, int64_t> slot_of_;
  std::vector<StateRead> reads_;
  std::unordered_map<MemoKey, UOp, MemoKeyHash> memo_;
  std::vector<UOp> memo_keys_alive_;
  int64_t next_axis_ = 0;
};

}  // namespace

KernelGraph rangeify(const std::vector<UOp>& outputs) { return Rangeifier(outputs).run(); }

}  // namespace doorbell
