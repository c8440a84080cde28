#include "scheduler/schedule.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <unordered_set>

#include "ir/debug.h"
#include "ir/environment.h"
#include "ir/graph_map.h"
#include "ir/kernel_variables.h"
#include "ir/node_map.h"
#include "scheduler/create_schedule.h"
#include "scheduler/layout.h"
#include "scheduler/memory_planner.h"
#include "scheduler/rangeify.h"
#include "scheduler/schedule_cache.h"

namespace doorbell {
namespace {

struct CachedSchedule {
  UOp linear;                     // CALL args are placeholders, intermediates and arenas
  std::vector<UOp> output_views;  // in placeholder terms
  int64_t peak_bytes = 0;
  // What resolve() replaces, found once when the schedule is built: placeholders (by slot), storage made fresh for
  // each use (intermediates, arenas) and variables (bound to the caller's values).
  std::vector<UOp> placeholders, fresh, variables;
};

struct KeyHash {
  size_t operator()(const ContentKey& k) const { return static_cast<size_t>(k.hi ^ k.lo); }
};

struct Cache {
  std::mutex mu;
  // Shared: a hit resolves outside the lock, and clear_schedule_cache() on another thread must not free it then.
  std::unordered_map<ContentKey, std::shared_ptr<const CachedSchedule>, KeyHash> entries;
  bool enabled = [] {
    const char* e = std::getenv("SCACHE");
    return !(e && std::string(e) == "0");
  }();
};
Cache& cache() {
  static Cache* c = new Cache();
  return *c;
}

int64_t storage_count(const UOp& s) {
  return s.op() == Ops::BUFFER ? s.arg_as<int64_t>() : std::get<ParamArg>(s.arg()).vmax + 1;
}

std::string device_of(const UOp& s) {
  if (s.op() == Ops::BUFFER && s.src().size() > 1 && s.src(1).op() == Ops::DEVICE) return s.src(1).arg_as<std::string>();
  if (s.op() == Ops::PARAM) return std::get<ParamArg>(s.arg()).name;
  return default_device_name();  // a BUFFER that names no device: the default one
}

// Rebuilds schedule graphs with nodes replaced (GraphMap::set); CALL bodies (src[0]) are left as they are: a kernel's
// PARAMs are its own.
GraphMap replacer() {
  return GraphMap("", [](const UOp& u, std::vector<UOp>& src) { return rebuilt(u, std::move(src)); },
                  [](const UOp& u, size_t i) { return !(u.op() == Ops::CALL && i == 0); });
}

// Storage leaves in order of first appearance, and the outputs with each one replaced by a placeholder PARAM.
struct Normalized {
  std::vector<UOp> storages;
  std::unordered_map<const UOpNode*, UOp> bound;  // variable -> its bound node (AFTER(var, STORE(var, value)))
  ContentKey key;
  bool has_reduce = false;  // the layout passes rewrite reductions only: a graph without one skips them
};

UOp placeholder(const UOp& storage, int64_t slot) {
  return UOp::make(Ops::PARAM, storage.dtype(), {}, ParamArg{slot, AddrSpace::GLOBAL, device_of(storage), 0, storage_count(storage) - 1});
}

// The cache key and the storage leaves, computed without building the normalized graph (a hit never needs it):
// the content key of each node with every storage leaf keyed as its placeholder PARAM, and the options, which
// change the kernels the same graph schedules to.
Normalized normalize_key(const std::vector<UOp>& outputs, const ScheduleOptions& options) {
  Normalized n;
  NodeMap<ContentKey> keys(64);
  std::vector<UOp> order = UOp::sink(outputs).toposort();
  for (const UOp& u : order) {
    ContentKey& k = keys.get(u.get());
    if (u.is_bound_variable()) {  // keyed as the variable: a schedule serves every value (tinygrad's var_vals)
      k = u.src(0).key();
      auto [it, fresh] = n.bound.emplace(u.src(0).get(), u);
      if (!fresh && !(it->second == u))
        throw std::invalid_argument("schedule: variable '" + u.src(0).arg_as<ParamArg>().name + "' is bound to " +
                                    std::to_string(std::get<int64_t>(it->second.src(1).src(1).const_value())) + " and to " +
                                    std::to_string(std::get<int64_t>(u.src(1).src(1).const_value())) + " in one schedule; expected one value");
      continue;
    }
    if (is_storage(u)) {
      k = placeholder(u, static_cast<int64_t>(n.storages.size())).key();
      n.storages.push_back(u);
      continue;
    }
    if (u.op() == Ops::UNIQUE || u.op() == Ops::DEVICE) continue;  // only under storage, which is keyed whole
    n.has_reduce |= u.op() == Ops::REDUCE;
    Hasher128 h;  // the node's own op, dtype and arg, then its sources' normalized keys
    h.add_bytes(op_name(u.op()));
    h.add_u64(static_cast<uint64_t>(u.dtype().scalar_type) * 65536 + u.dtype().lanes);
    hash_arg(u.arg(), h);
    h.add_u64(u.src().size());
    for (const UOp& s : u.src()) h.add_key(*keys.find(s.get()));
    k = h.finish();
  }
  // Values computed from constants alone are stored on the default device, and the layout choices change the
  // kernels: both are part of what the schedule means.
  Hasher128 h;
  h.add_key(*keys.find(order.back().get()));
  h.add_bytes(default_device_name());
  h.add_u64(options.split_leading_reduce);
  h.add_u64(options.pack_matmul_panels);
  n.key = h.finish();
  return n;
}

// The outputs with every storage leaf replaced by its placeholder and every bound variable by the variable: what a
// cache miss schedules.
std::vector<UOp> normalized_outputs(const std::vector<UOp>& outputs, const Normalized& n) {
  GraphMap map = replacer();
  for (size_t i = 0; i < n.storages.size(); i++) map.set(n.storages[i], placeholder(n.storages[i], static_cast<int64_t>(i)));
  for (const auto& [var, bound] : n.bound) map.set(bound, bound.src(0));
  return map(UOp::sink(outputs)).src();
}

CachedSchedule build(const std::vector<UOp>& outputs, const ScheduleOptions& options, bool has_reduce) {
  // Outputs stay in order through the passes: output_views below pair with the caller's outputs by position.
  KernelGraph g = rangeify(has_reduce ? layout_passes(UOp::sink(outputs), options).src() : outputs);
  std::vector<int> order = order_kernels(g.kernels);
  std::vector<UOp> calls;
  for (int k : order) {
    std::vector<UOp> src{g.kernels[k].body};
    src.insert(src.end(), g.kernels[k].args.begin(), g.kernels[k].args.end());
    // The variables the kernel takes follow its buffers, by name (ProgramInfo::vars' order); resolve() binds them.
    for (const UOp& var : kernel_variables(g.kernels[k].body)) src.push_back(var);
    calls.push_back(UOp::make(Ops::CALL, dtypes::void_, std::move(src)));
  }
  UOp linear = UOp::make(Ops::LINEAR, dtypes::void_, std::move(calls));
  std::unordered_set<const UOpNode*> intermediates;
  for (const UOp& b : g.intermediates) intermediates.insert(b.get());
  std::unordered_set<const UOpNode*> held;
  for (const UOp& call : linear.src())
    for (size_t i = 1; i < call.src().size(); i++)
      if (!intermediates.count(call.src(i).get())) held.insert(call.src(i).get());
  MemoryPlanStats stats;
  CachedSchedule c;
  c.linear = memory_plan(linear, held, &stats);
  for (auto& [dev, bytes] : stats.peak_bytes) c.peak_bytes += bytes;
  for (auto& [value, view] : g.becomes) c.output_views.push_back(view);
  std::vector<UOp> nodes = c.output_views;  // kernel bodies have PARAMs of their own: only args are visited
  for (const UOp& call : c.linear.src()) nodes.insert(nodes.end(), call.src().begin() + 1, call.src().end());
  for (const UOp& u : UOp::sink(nodes).toposort()) {
    if (u.op() == Ops::PARAM && u.arg_as<ParamArg>().addrspace == AddrSpace::ALU) c.variables.push_back(u);
    else if (u.op() == Ops::PARAM && is_storage(u)) c.placeholders.push_back(u);
    else if (is_storage(u)) c.fresh.push_back(u);
  }
  return c;
}

// Binds a cached schedule to real storage: placeholders to the caller's buffers, every other storage (the
// intermediates and arenas) to fresh buffers.
ScheduleResult resolve(const CachedSchedule& c, const Normalized& n, const std::vector<UOp>& outputs) {
  GraphMap map = replacer();
  for (const UOp& v : c.variables)
    if (auto b = n.bound.find(v.get()); b != n.bound.end()) map.set(v, b->second);  // a variable: its value now
  for (const UOp& p : c.placeholders) map.set(p, n.storages.at(std::get<ParamArg>(p.arg()).slot));
  for (const UOp& f : c.fresh) map.set(f, new_buffer(f.dtype(), storage_count(f), device_of(f)));
  ScheduleResult r;
  r.linear = map(c.linear);
  for (size_t i = 0; i < outputs.size(); i++) r.becomes.emplace_back(outputs[i], map(c.output_views[i]));
  r.peak_bytes = c.peak_bytes;
  return r;
}

}  // namespace

size_t schedule_cache_size() {
  std::lock_guard lock(cache().mu);
  return cache().entries.size();
}
void clear_schedule_cache() {
  std::lock_guard lock(cache().mu);
  cache().entries.clear();
}
void set_schedule_cache_enabled(bool enabled) {
  std::lock_guard lock(cache().mu);
  cache().enabled = enabled;
}
bool schedule_cache_enabled() {
  std::lock_guard lock(cache().mu);
  return cache().enabled;
}

namespace {
// DEBUG=1: one line per schedule (tinygrad prints its schedule summary at the same level).
void print_summary(const ScheduleResult& r, std::chrono::steady_clock::time_point t0) {
  double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
  std::fprintf(stderr, "schedule: %zu kernels, %zu outputs, arena peak %lld bytes, %s, %.1f us\n", r.linear.src().size(),
               r.becomes.size(), static_cast<long long>(r.peak_bytes), r.cache_hit ? "cache hit" : "cache miss", us);
}
}  // namespace

ScheduleResult schedule(const std::vector<UOp>& outputs, const ScheduleOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  for (const UOp& o : outputs)
    if (!o) throw std::invalid_argument("schedule: an output is a null UOp");
  Normalized n = normalize_key(outputs, options);
  std::shared_ptr<const CachedSchedule> hit;
  {
    std::lock_guard lock(cache().mu);
    if (cache().enabled)
      if (auto it = cache().entries.find(n.key); it != cache().entries.end()) hit = it->second;
  }
  if (!hit) {
    // Built outside the lock so that other threads schedule meanwhile; two threads that miss on one key both
    // build it, and the first entry stays (equal keys schedule to equal kernels).
    hit = std::make_shared<const CachedSchedule>(build(normalized_outputs(outputs, n), options, n.has_reduce));
    {
      std::lock_guard lock(cache().mu);
      if (cache().enabled) hit = cache().entries.emplace(n.key, hit).first->second;
    }
    ScheduleResult r = resolve(*hit, n, outputs);
    if (debug_level() >= 1) print_summary(r, t0);
    return r;
  }
  ScheduleResult r = resolve(*hit, n, outputs);
  r.cache_hit = true;
  if (debug_level() >= 1) print_summary(r, t0);
  return r;
}

}  // namespace doorbell
