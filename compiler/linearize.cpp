#include "compiler/linearize.h"

#include <algorithm>
#include <list>
#include <map>
#include <memory>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

#include "ir/printer.h"

namespace doorbell {
namespace {

// Statements are first placed in a tree of blocks (one per loop) so that a value can be hoisted into an outer
// loop after an inner loop has been opened: it goes right before the open inner loop. The tree is then flattened.
struct Block;
struct Item {
  Statement stmt;
  std::unique_ptr<Block> body;  // for BEGIN_LOOP
};
struct Block {
  std::list<Item> items;
  std::list<Item>::iterator insert_at = items.end();  // hoisted statements go before the open inner loop
};
struct Frame {
  UOp range;  // null for the kernel's top level
  Block* block;
};

[[noreturn]] void fail(const std::string& what, const UOp& u) {
  throw std::invalid_argument("linearize: " + what + ": " + print_node(u));
}

class Linearizer {
 public:
  explicit Linearizer(const UOp& sink) {
    if (!sink || sink.op() != Ops::SINK) throw std::invalid_argument("linearize: expected a kernel SINK");
    for (const UOp& u : sink.toposort())
      if (u.op() == Ops::RANGE) {
        if (range_bit_.size() == 64) fail("more than 64 ranges in one kernel are not supported", u);
        range_bit_[u.get()] = uint64_t{1} << range_bit_.size();
      } else if (u.op() == Ops::REDUCE) {
        siblings_[range_list(u)].push_back(u);
      }
    path_.push_back({UOp(), &root_});
    for (const UOp& s : sink.src()) emit_output(s);
  }

  std::vector<Statement> statements() const {
    std::vector<Statement> out;
    flatten(root_, out);
    return out;
  }

 private:
  // The ranges a node's value changes with, as a bit mask (a REDUCE no longer varies with the ranges it closes).
  uint64_t mask(const UOp& u) {
    auto it = masks_.find(u.get());
    if (it != masks_.end()) return it->second;
    uint64_t m = 0;
    for (const UOp& s : u.src()) m |= mask(s);
    if (u.op() == Ops::RANGE) m |= range_bit_.at(u.get());
    if (u.op() == Ops::REDUCE)
      for (size_t i = 1; i < u.src().size(); i++) m &= ~range_bit_.at(u.src(i).get());
    masks_[u.get()] = m;
    return m;
  }

  // The innermost open loop that a node with ranges `m` can live in.
  size_t depth_of(uint64_t m, const UOp& u) const {
    uint64_t open = 0;
    for (size_t d = 1; d < path_.size(); d++) open |= range_bit_.at(path_[d].range.get());
    if (m & ~open) fail("a value uses a range outside of that range's loop", u);
    for (size_t d = path_.size() - 1; d > 0; d--)
      if (m & range_bit_.at(path_[d].range.get())) return d;
    return 0;
  }

  void insert(size_t depth, Statement s) {
    Block* b = path_[depth].block;
    b->items.insert(b->insert_at, Item{std::move(s), nullptr});
  }

  // Opens a loop over `range` inside the block at `depth`; the path is cut to that depth first.
  void open_loop(size_t depth, const UOp& range, bool split) {
    if (range.op() != Ops::RANGE) fail("expected a RANGE to loop over", range);
    if (range_bit_.at(range.get()) & open_mask()) fail("a range is opened twice in one loop nest", range);
    emit(range.src(0));
    path_.resize(depth + 1);
    Block* parent = path_[depth].block;
    auto body = std::make_unique<Block>();
    Block* child = body.get();
    auto it = parent->items.insert(parent->insert_at, Item{{StatementKind::BEGIN_LOOP, range, split}, std::move(body)});
    saved_inserts_.push_back({parent, parent->insert_at});
    parent->insert_at = it;
    path_.push_back({range, child});
  }

  void close_loop() {
    const UOp range = path_.back().range;
    for (auto it = defined_.begin(); it != defined_.end();)
      it = it->second == range.get() ? defined_.erase(it) : std::next(it);
    path_.pop_back();
    auto [block, at] = saved_inserts_.back();
    saved_inserts_.pop_back();
    block->insert_at = at;
  }

  uint64_t open_mask() const {
    uint64_t open = 0;
    for (size_t d = 1; d < path_.size(); d++) open |= range_bit_.at(path_[d].range.get());
    return open;
  }

  // A STORE, or a GROUP of STOREs (the expander's copies of one output) that share the open loop nest.
  bool emit_stores(const UOp& u) {
    if (u.op() == Ops::STORE) {
      emit_store(u);
      return true;
    }
    if (u.op() != Ops::GROUP) return false;
    for (const UOp& s : u.src())
      if (s.op() != Ops::STORE) fail("expected a GROUP of STOREs", u);
    for (const UOp& s : u.src()) emit_store(s);
    return true;
  }

  void emit_output(const UOp& out) {
    if (out.op() == Ops::STORE || out.op() == Ops::GROUP) {
      emit_stores(out);
      return;
    }
    if (out.op() != Ops::END || out.src().empty() || (out.src(0).op() != Ops::STORE && out.src(0).op() != Ops::GROUP))
      fail("expected END(STORE or GROUP(STORE...), ranges...) or STORE as a kernel output", out);
    for (size_t i = 1; i < out.src().size(); i++) {
      const UOp& r = out.src(i);
      bool split = path_.size() == 1 && r.op() == Ops::RANGE && r.arg_as<RangeArg>().type == AxisType::LOOP;
      open_loop(path_.size() - 1, r, split);
    }
    emit_stores(out.src(0));
    for (size_t i = 1; i < out.src().size(); i++) close_loop();
  }

  void emit_store(const UOp& store) {
    if (store.src().size() != 2 || store.src(0).op() != Ops::INDEX) fail("expected STORE(INDEX, value)", store);
    emit_index(store.src(0));
    emit(store.src(1));
    insert(path_.size() - 1, {StatementKind::STORE, store, false});
  }

  void emit_index(const UOp& index) {
    const UOp& buf = index.src().empty() ? index : index.src(0);
    bool local_after_barrier = buf.op() == Ops::AFTER && buf.src().size() == 2 && buf.src(0).op() == Ops::PARAM &&
                               buf.src(1).op() == Ops::BARRIER;
    if (index.src().size() < 2 || index.src().size() > 3 || (buf.op() != Ops::PARAM && !local_after_barrier))
      fail("expected INDEX(PARAM or AFTER(PARAM, BARRIER), index[, valid])", index);
    if (local_after_barrier) emit_barrier(buf.src(1));
    for (size_t i = 1; i < index.src().size(); i++) emit(index.src(i));
  }

  // The stores a barrier waits for, then the barrier, at the depth the stores need: every thread of a block must
  // reach it, so it is never placed inside a loop that only some threads run (loops here have uniform bounds).
  void emit_barrier(const UOp& barrier) {
    if (defined_.count(barrier.get())) return;
    size_t depth = 0;
    for (const UOp& st : barrier.src()) {
      if (st.op() != Ops::STORE || st.src().size() != 2 || st.src(0).op() != Ops::INDEX) fail("expected BARRIER(STORE(INDEX, value)...)", barrier);
      emit_index(st.src(0));
      emit(st.src(1));
      size_t d = depth_of(mask(st), st);
      insert(d, {StatementKind::STORE, st, false});
      depth = std::max(depth, d);
    }
    insert(depth, {StatementKind::BARRIER, barrier, false});
    defined_[barrier.get()] = path_[depth].range.get();
  }

  void emit(const UOp& u) {
    switch (u.op()) {
      case Ops::CONST:
        if (std::holds_alternative<Invalid>(u.arg())) fail("Invalid cannot be rendered", u);
        return;
      case Ops::SPECIAL:  // a GPU thread index (compiler/gpu/gpu_dims.h): defined once at the kernel's entry
        return;
      case Ops::RANGE:
        if (!(range_bit_.at(u.get()) & open_mask())) fail("a range is used outside of its loop", u);
        return;
      case Ops::PARAM:  // a buffer, or a variable: a scalar parameter, defined at the kernel's entry
        return;
      default: break;
    }
    if (defined_.count(u.get())) return;
    if (u.op() == Ops::REDUCE) return emit_reduce(u);
    if (u.op() == Ops::LOAD) {
      if (u.src().size() != 1 || u.src(0).op() != Ops::INDEX) fail("expected LOAD(INDEX)", u);
      emit_index(u.src(0));
    } else if (group::Elementwise.contains(u.op())) {
      for (const UOp& s : u.src()) emit(s);
    } else {
      fail("cannot linearize this op", u);
    }
    size_t d = depth_of(mask(u), u);
    insert(d, {StatementKind::VALUE, u, false});
    defined_[u.get()] = path_[d].range.get();
  }

  // Whether `a` is computed from `b`.
  bool depends_on(const UOp& a, const UOp& b) {
    auto it = reaches_.find(a.get());
    if (it == reaches_.end()) {
      std::unordered_set<const UOpNode*> set;
      for (const UOp& x : a.backward_slice()) set.insert(x.get());
      it = reaches_.emplace(a.get(), std::move(set)).first;
    }
    return it->second.count(b.get()) > 0;
  }

  // REDUCEs over the same ranges as `u` (the expander's copies of one upcast reduce) that can share its loops:
  // not yet defined, living at the same depth and independent of each other. One loop then updates several
  // accumulators, which the C compiler can interleave.
  std::vector<UOp> reduce_group(const UOp& u, size_t d) {
    std::vector<UOp> group{u};
    auto it = siblings_.find(range_list(u));
    if (it == siblings_.end()) return group;
    uint64_t open = open_mask();
    for (const UOp& s : it->second) {
      if (s == u || defined_.count(s.get()) || (mask(s) & ~open) || depth_of(mask(s), s) != d) continue;
      bool independent = true;
      for (const UOp& g : group) independent &= !depends_on(s, g) && !depends_on(g, s);
      if (independent) group.push_back(s);
    }
    return group;
  }

  static std::vector<const UOpNode*> range_list(const UOp& reduce) {
    std::vector<const UOpNode*> r;
    for (size_t i = 1; i < reduce.src().size(); i++) r.push_back(reduce.src(i).get());
    return r;
  }

  void emit_reduce(const UOp& u) {
    if (u.src().empty()) fail("expected REDUCE(value, ranges...)", u);  // no ranges: a vector's lanes folded
    for (size_t i = 1; i < u.src().size(); i++) emit(u.src(i).src(0));
    size_t d = depth_of(mask(u), u);
    std::vector<UOp> group = reduce_group(u, d);
    for (const UOp& g : group) insert(d, {StatementKind::ACC_INIT, g, false});
    std::vector<Frame> saved = path_;
    for (size_t i = 1; i < u.src().size(); i++) open_loop(i == 1 ? d : path_.size() - 1, u.src(i), false);
    for (const UOp& g : group) {
      emit(g.src(0));
      insert(path_.size() - 1, {StatementKind::ACC_UPDATE, g, false});
    }
    for (size_t i = 1; i < u.src().size(); i++) close_loop();
    path_ = std::move(saved);
    for (const UOp& g : group) defined_[g.get()] = path_[d].range.get();
  }

  static void flatten(const Block& b, std::vector<Statement>& out) {
    for (const Item& it : b.items) {
      out.push_back(it.stmt);
      if (it.body) {
        flatten(*it.body, out);
        out.push_back({StatementKind::END_LOOP, it.stmt.u, false});
      }
    }
  }

  Block root_;
  std::vector<Frame> path_;
  std::vector<std::pair<Block*, std::list<Item>::iterator>> saved_inserts_;
  std::unordered_map<const UOpNode*, uint64_t> range_bit_;
  std::unordered_map<const UOpNode*, uint64_t> masks_;
  std::unordered_map<const UOpNode*, const UOpNode*> defined_;  // value -> the range of the loop it lives in
  std::map<std::vector<const UOpNode*>, std::vector<UOp>> siblings_;  // REDUCEs by their ranges, in toposort order
  std::unordered_map<const UOpNode*, std::unordered_set<const UOpNode*>> reaches_;  // a REDUCE -> what it reads
};

}  // namespace

std::vector<Statement> linearize(const UOp& sink) { return Linearizer(sink).statements(); }

}  // namespace doorbell
