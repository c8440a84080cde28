// The memory planner (tinygrad schedule/memory.py): intermediates of a LINEAR share per-device arenas by lifetime.
//
// Allocator: a best-fit free list with coalescing, one per device. Free blocks below the arena's top are kept in
// two ordered sets (by offset, to merge neighbours; by (size, offset), to find the smallest block that fits), so
// every allocation and free is O(log n): 10,000 buffers cost milliseconds. Everything above the top is one endless
// free block; a freed block that reaches the top lowers it instead of entering the list, so the peak only grows
// when no hole fits. tinygrad uses TLSF here, an O(1) approximation of best fit; exact best fit is cheap enough at
// these sizes. The free set is always the set of maximal free ranges, so the order of frees at one call cannot
// change a plan; ties between equal holes go to the lowest offset.
#include "scheduler/memory_planner.h"

#include <algorithm>
#include <limits>
#include <set>
#include <stdexcept>
#include <unordered_map>
#include <utility>
#include <vector>

#include "scheduler/schedule.h"

namespace doorbell {
namespace {

constexpr int64_t kAlign = 256;

class BestFitArena {
 public:
  // size: a positive multiple of kAlign. Returns the offset.
  int64_t alloc(int64_t size) {
    auto it = by_size_.lower_bound({size, std::numeric_limits<int64_t>::min()});
    if (it == by_size_.end()) {  // no hole fits: grow from the top
      int64_t off = top_;
      top_ += size;
      peak_ = std::max(peak_, top_);
      return off;
    }
    auto [bsize, off] = *it;
    by_size_.erase(it);
    by_offset_.erase(off);
    // The remainder cannot touch another free block or the top: the block it came from did not.
    if (bsize > size) insert(off + size, bsize - size);
    return off;
  }

  void free(int64_t off, int64_t size) {
    auto next = by_offset_.lower_bound(off);
    if (next != by_offset_.begin()) {
      auto prev = std::prev(next);
      if (prev->first + prev->second == off) {
        off = prev->first;
        size += prev->second;
        erase(prev);
      }
    }
    if (next != by_offset_.end() && off + size == next->first) {
      size += next->second;
      erase(next);
    }
    if (off + size == top_) top_ = off;
    else insert(off, size);
  }

  int64_t peak() const { return peak_; }

 private:
  void insert(int64_t off, int64_t size) {
    by_offset_.emplace(off, size);
    by_size_.emplace(size, off);
  }
  void erase(std::map<int64_t, int64_t>::iterator it) {
    by_size_.erase({it->second, it->first});
    by_offset_.erase(it);
  }

  std::map<int64_t, int64_t> by_offset_;         // free blocks below top_: offset -> size
  std::set<std::pair<int64_t, int64_t>> by_size_;  // the same blocks as (size, offset): ties go to the lowest offset
  int64_t top_ = 0, peak_ = 0;
};

// CALL source j is the buffer bound to PARAM slot j-1 of the kernel.
std::string where_in(size_t call, size_t src) {
  return "call " + std::to_string(call) + " slot " + std::to_string(src - 1);
}

void expect_linear(const UOp& linear, const char* who) {
  if (!linear) throw std::invalid_argument(std::string(who) + ": got a null UOp, expected a LINEAR of CALLs");
  if (linear.op() != Ops::LINEAR)
    throw std::invalid_argument(std::string(who) + ": got " + std::string(op_name(linear.op())) +
                                ", expected a LINEAR of CALLs");
  for (size_t i = 0; i < linear.src().size(); i++) {
    const UOp& c = linear.src(i);
    if (c.op() != Ops::CALL || c.src().empty())
      throw std::invalid_argument(std::string(who) + ": LINEAR source " + std::to_string(i) + " is " +
                                  std::string(op_name(c.op())) +
                                  (c.op() == Ops::CALL ? " without a body" : "") + ", expected a CALL(body, buffers...)");
  }
}

bool is_unique_buffer(const UOp& u) {
  return u.op() == Ops::BUFFER && !u.src().empty() && u.src(0).op() == Ops::UNIQUE;
}

bool is_view(const UOp& u) {
  return u.op() == Ops::BUFFER && u.src().size() == 2 && u.src(0).op() == Ops::BUFFER;
}

// count * itemsize of a BUFFER, or throws E naming it.
template <class E>
int64_t buffer_bytes(const UOp& buf, const std::string& where) {
  const int64_t* count = std::get_if<int64_t>(&buf.arg());
  if (!count || *count < 0)
    throw E("BUFFER " + buf.dtype().name() + " at " + where + " has arg " + arg_to_string(buf.arg()) +
            ", expected an element count >= 0");
  if (buf.dtype().is_void() || buf.dtype().is_weak())
    throw E("BUFFER of " + std::to_string(*count) + " at " + where + " has dtype " + buf.dtype().name() +
            ", expected a dtype with storage");
  int64_t bytes;
  if (__builtin_mul_overflow(*count, int64_t{buf.dtype().itemsize()}, &bytes) || bytes > INT64_MAX - kAlign)
    throw E("BUFFER " + buf.dtype().name() + "[" + std::to_string(*count) + "] at " + where +
            " is larger than int64 bytes");
  return bytes;
}

int64_t round_up(int64_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; }

std::string device_of(const UOp& buf, const std::string& where) {
  if (buf.src().size() < 2 || buf.src(1).op() != Ops::DEVICE || !std::holds_alternative<std::string>(buf.src(1).arg()))
    throw std::invalid_argument("BUFFER " + buf.dtype().name() + "[" + arg_to_string(buf.arg()) + "] at " + where +
                                " has no DEVICE source, expected BUFFER(UNIQUE, DEVICE)");
  return std::get<std::string>(buf.src(1).arg());
}

struct Candidate {
  UOp buf;
  std::string device;
  int64_t bytes = 0;  // rounded up to kAlign
  size_t first = 0, last = 0;
  int64_t offset = 0;
};

}  // namespace

UOp memory_plan(const UOp& linear, const std::unordered_set<const UOpNode*>& held, MemoryPlanStats* stats) {
  expect_linear(linear, "memory_plan");
  if (stats) *stats = MemoryPlanStats{};
  const size_t n = linear.src().size();

  // Lifetimes, in order of first appearance (call, then argument position): this order makes plans deterministic.
  std::vector<Candidate> cands;
  std::unordered_map<const UOpNode*, size_t> index;
  // BUFFERs reachable from an argument that is not itself a BUFFER (or from a view): their uses there are not
  // visible as arguments, so planning them could free bytes that are still read. They are left as they are.
  std::unordered_set<const UOpNode*> opaque, seen;
  std::vector<UOp> stack;
  for (size_t i = 0; i < n; i++) {
    const UOp& call = linear.src(i);
    for (size_t j = 1; j < call.src().size(); j++) {
      const UOp& a = call.src(j);
      if (is_unique_buffer(a)) {
        if (held.count(a.get())) continue;
        auto [it, fresh] = index.try_emplace(a.get(), cands.size());
        if (fresh) {
          std::string where = where_in(i, j);
          Candidate c{a, device_of(a, where), round_up(buffer_bytes<std::invalid_argument>(a, where)), i, i, 0};
          cands.push_back(std::move(c));
        }
        cands[it->second].last = i;
        continue;
      }
      stack.push_back(a);
      while (!stack.empty()) {
        UOp u = std::move(stack.back());
        stack.pop_back();
        if (!seen.insert(u.get()).second) continue;
        if (u.op() == Ops::BUFFER) opaque.insert(u.get());
        if (u.op() == Ops::CALL || u.op() == Ops::FUNCTION) {  // bodies are not ours to read; their args are
          for (size_t k = 1; k < u.src().size(); k++) stack.push_back(u.src(k));
        } else {
          for (const UOp& s : u.src()) stack.push_back(s);
        }
      }
    }
  }
  if (!opaque.empty()) {
    std::vector<Candidate> kept;
    for (Candidate& c : cands)
      if (!opaque.count(c.buf.get())) kept.push_back(std::move(c));
    cands = std::move(kept);
  }
  if (cands.empty()) return linear;

  // Sweep over time: at call t, free what was last used at t-1, then place what is first used at t.
  std::vector<std::vector<size_t>> starts(n), ends(n + 1);
  for (size_t k = 0; k < cands.size(); k++) {
    starts[cands[k].first].push_back(k);
    ends[cands[k].last + 1].push_back(k);
  }
  std::map<std::string, BestFitArena> arenas;
  std::map<std::string, int64_t> unplanned;
  for (const Candidate& c : cands) {
    arenas.try_emplace(c.device);
    unplanned[c.device] += c.bytes;
  }
  for (size_t t = 0; t < n; t++) {
    for (size_t k : ends[t])
      if (cands[k].bytes > 0) arenas.at(cands[k].device).free(cands[k].offset, cands[k].bytes);
    for (size_t k : starts[t])  // an empty buffer occupies no bytes: offset 0 overlaps nothing
      if (cands[k].bytes > 0) cands[k].offset = arenas.at(cands[k].device).alloc(cands[k].bytes);
  }

  // One arena BUFFER per device, created in device-name order so that fresh ids are handed out deterministically.
  std::map<std::string, UOp> arena_buf;
  for (auto& [device, arena] : arenas) arena_buf[device] = new_buffer(dtypes::uint8, arena.peak(), device);
  // Two buffers of one dtype and count placed at one offset at different times would be one view node
  // (hash-consing), with the union of their lifetimes: a later buffer at an occupied place gets tag 1, 2, ...,
  // so that every planned buffer stays its own node and verify_memory_plan can see each lifetime.
  std::unordered_map<const UOpNode*, UOp> view_of;
  std::unordered_map<const UOpNode*, int64_t> tags_used;  // untagged view -> buffers already placed there
  for (const Candidate& c : cands) {
    UOp v = UOp::make(Ops::BUFFER, c.buf.dtype(), {arena_buf.at(c.device), UOp::const_(dtypes::int64, c.offset)},
                      c.buf.arg());
    int64_t tag = tags_used[v.get()]++;
    view_of[c.buf.get()] = tag == 0 ? v : v.with_tag(tag);
  }

  // Rebuild the CALLs directly: only their arguments change, their bodies (src[0]) are kept as they are.
  std::vector<UOp> calls;
  calls.reserve(n);
  for (const UOp& call : linear.src()) {
    std::vector<UOp> src = call.src();
    bool changed = false;
    for (size_t j = 1; j < src.size(); j++) {
      auto it = view_of.find(src[j].get());
      if (it == view_of.end()) continue;
      src[j] = it->second;
      changed = true;
    }
    calls.push_back(changed ? call.replace_src(std::move(src)) : call);
  }

  if (stats) {
    for (auto& [device, arena] : arenas) stats->peak_bytes[device] = arena.peak();
    stats->unplanned_bytes = std::move(unplanned);
    stats->buffers_planned = static_cast<int64_t>(cands.size());
  }
  return linear.replace_src(std::move(calls));
}

namespace {

struct View {
  UOp view;
  int64_t offset = 0, bytes = 0;  // bytes: count * itemsize, not rounded
  size_t first = 0, last = 0;
};

std::string describe(const View& v) {
  return "BUFFER " + v.view.dtype().name() + "[" + arg_to_string(v.view.arg()) + "] at byte offset " +
         std::to_string(v.offset) + " (bytes [" + std::to_string(v.offset) + ", " + std::to_string(v.offset + v.bytes) +
         "), calls " + std::to_string(v.first) + ".." + std::to_string(v.last) + ")";
}

std::string describe_arena(const UOp& arena) {
  std::string device = arena.src().size() >= 2 && arena.src(1).op() == Ops::DEVICE ? arg_to_string(arena.src(1).arg()) : "?";
  return "arena BUFFER " + arena.dtype().name() + "[" + arg_to_string(arena.arg()) + "] on " + device;
}

}  // namespace

void verify_memory_plan(const UOp& linear) {
  expect_linear(linear, "verify_memory_plan");
  const size_t n = linear.src().size();
  // A view is one node however many buffers it stands for: equal views (same arena, offset, dtype and count)
  // are one buffer here, with the union of their lifetimes, which is all the plan itself can show.
  std::vector<View> views;
  std::unordered_map<const UOpNode*, size_t> index;
  for (size_t i = 0; i < n; i++) {
    const UOp& call = linear.src(i);
    for (size_t j = 1; j < call.src().size(); j++) {
      const UOp& a = call.src(j);
      if (!is_view(a)) continue;
      auto [it, fresh] = index.try_emplace(a.get(), views.size());
      if (fresh) {
        std::string where = where_in(i, j);
        const UOp& arena = a.src(0);
        const UOp& off = a.src(1);
        if (off.op() != Ops::CONST || !off.dtype().is_int() || off.dtype().is_weak())
          throw std::logic_error("memory plan: view BUFFER " + a.dtype().name() + "[" + arg_to_string(a.arg()) + "] at " +
                                 where + " has offset " + std::string(op_name(off.op())) + " " + off.dtype().name() +
                                 ", expected an int64 CONST byte offset");
        View v{a, std::get<int64_t>(off.arg()), buffer_bytes<std::logic_error>(a, where), i, i};
        const int64_t* size = std::get_if<int64_t>(&arena.arg());
        if (!size || v.offset < 0 || v.offset > *size || v.bytes > *size - v.offset)
          throw std::logic_error("memory plan: " + describe(v) + " lies outside its " + describe_arena(arena) +
                                 ", expected 0 <= offset and offset + bytes <= arena bytes");
        views.push_back(std::move(v));
      }
      views[it->second].last = i;
    }
  }

  // Sweep over time as the planner does; per arena, the live views' byte ranges are disjoint (checked on every
  // insert), so only the neighbours of a new range can overlap it.
  std::vector<std::vector<size_t>> starts(n), ends(n + 1);
  for (size_t k = 0; k < views.size(); k++) {
    if (views[k].bytes == 0) continue;
    starts[views[k].first].push_back(k);
    ends[views[k].last + 1].push_back(k);
  }
  std::unordered_map<const UOpNode*, std::map<int64_t, size_t>> live;  // arena -> offset -> view
  for (size_t t = 0; t < n; t++) {
    for (size_t k : ends[t]) live[views[k].view.src(0).get()].erase(views[k].offset);
    for (size_t k : starts[t]) {
      const View& v = views[k];
      auto& ranges = live[v.view.src(0).get()];
      auto next = ranges.lower_bound(v.offset);
      const View* other = nullptr;
      if (next != ranges.end() && next->first < v.offset + v.bytes) other = &views[next->second];
      if (!other && next != ranges.begin()) {
        const View& p = views[std::prev(next)->second];
        if (p.offset + p.bytes > v.offset) other = &p;
      }
      if (other)
        throw std::logic_error("memory plan: at call " + std::to_string(t) + ", " + describe(*other) + " and " +
                               describe(v) + " are alive together and share bytes in " +
                               describe_arena(v.view.src(0)) + "; expected disjoint bytes");
      ranges.emplace(v.offset, k);
    }
  }
}

}  // namespace doorbell
