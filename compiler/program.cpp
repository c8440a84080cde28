#include "compiler/program.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <list>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <unordered_map>

#include "compiler/cpu/cpu_target.h"
#include "compiler/cpu/elf_loader.h"
#include "compiler/kernel_estimates.h"
#include "compiler/kernel_name.h"
#include "compiler/linearize.h"
#include "compiler/optimizer.h"
#include "ir/kernel_variables.h"
#include "ir/printer.h"

namespace doorbell {
namespace {

// The kernel's content key, the target's cache key and NOOPT. The target's key is hashed per request and compared by
// value (a pointer to the caller's string during a lookup, a copy in the entry), so a lookup copies no string.
struct CacheKey {
  ContentKey kernel;
  size_t target_hash;
  const std::string* target;
  bool noopt;
  bool operator==(const CacheKey& o) const {
    return kernel == o.kernel && target_hash == o.target_hash && noopt == o.noopt && *target == *o.target;
  }
};
struct CacheKeyHash {
  size_t operator()(const CacheKey& k) const noexcept {
    return static_cast<size_t>(k.kernel.hi ^ (k.kernel.lo * 0x9e3779b97f4a7c15ULL)) ^ k.target_hash ^ k.noopt;
  }
};
struct CacheEntry {
  std::unique_ptr<const std::string> target;  // what the entry's key points to
  CompiledProgram program;
  std::list<CacheKey>::iterator lru;
};

// LRU: a hit moves its key to the front, a compile past the limit drops the back. Dropping an entry only drops a
// handle: whoever holds the PROGRAM (a schedule, a device's loaded program) keeps it.
struct ProgramCache {
  std::mutex mu;
  std::unordered_map<CacheKey, CacheEntry, CacheKeyHash> entries;
  std::list<CacheKey> lru;  // most recently used first
  size_t limit = 0;         // 0 until read from the environment
  ProgramCacheStats stats;
};

constexpr size_t kDefaultProgramCacheLimit = 4096;

size_t limit_from_environment() {
  const char* v = std::getenv("DOORBELL_PROGRAM_CACHE");
  if (v == nullptr || *v == '\0') return kDefaultProgramCacheLimit;
  char* end = nullptr;
  errno = 0;
  const unsigned long long n = std::strtoull(v, &end, 10);
  if (*v == '-' || end == v || *end != '\0' || errno == ERANGE || n == 0)
    throw std::invalid_argument(std::string("DOORBELL_PROGRAM_CACHE: '") + v + "' is not a whole number of programs >= 1; expected e.g. 4096");
  return static_cast<size_t>(n);
}

// With c.mu held.
size_t limit_locked(ProgramCache& c) {
  if (c.limit == 0) c.limit = limit_from_environment();
  return c.limit;
}

void trim_locked(ProgramCache& c) {
  const size_t limit = limit_locked(c);
  while (c.entries.size() > limit) {
    c.entries.erase(c.lru.back());
    c.lru.pop_back();
    c.stats.evictions++;
  }
}

ProgramCache& cache() {
  static ProgramCache* c = new ProgramCache();  // never destroyed: programs are used until the process exits
  return *c;
}

std::atomic<KernelObserver> g_observer{nullptr};

UOp linear_of(const std::vector<Statement>& statements) {
  std::vector<UOp> src;
  src.reserve(statements.size());
  for (const Statement& s : statements)
    src.push_back(s.kind == StatementKind::END_LOOP ? UOp::make(Ops::END, dtypes::void_, {s.u}) : s.u);
  return UOp::make(Ops::LINEAR, dtypes::void_, std::move(src));
}

int64_t round_up(int64_t v, int64_t to) { return (v + to - 1) / to * to; }

// What the runtime needs from the kernel itself: its buffers, variables, which slots it writes and reads, its local
// memory, its estimates.
ProgramInfo info_of(const UOp& sink, const LoweredKernel& lowered, const std::string& name, const Target& target,
                    const CompiledBinary& binary) {
  ProgramInfo info;
  info.name = name;
  info.target = target.name();
  info.global_size = lowered.global_size;
  info.local_size = lowered.local_size;
  std::set<int64_t> outs, ins;
  for (const UOp& u : sink.toposort()) {
    if (u.op() == Ops::PARAM) {
      const ParamArg& p = u.arg_as<ParamArg>();
      if (p.addrspace == AddrSpace::GLOBAL) info.buffers = std::max(info.buffers, p.slot + 1);
    }
    if ((u.op() == Ops::STORE || u.op() == Ops::LOAD) && u.src(0).op() == Ops::INDEX && u.src(0).src(0).op() == Ops::PARAM) {
      const ParamArg& p = u.src(0).src(0).arg_as<ParamArg>();
      if (p.addrspace == AddrSpace::GLOBAL) (u.op() == Ops::STORE ? outs : ins).insert(p.slot);
    }
  }
  for (const UOp& u : lowered.sink.toposort())
    if (u.op() == Ops::PARAM && u.arg_as<ParamArg>().addrspace == AddrSpace::LOCAL)
      info.shared_bytes = round_up(info.shared_bytes, 16) + (u.arg_as<ParamArg>().vmax + 1) * u.dtype().itemsize();
  for (const UOp& v : kernel_variables(sink)) {
    const ParamArg& p = v.arg_as<ParamArg>();
    info.vars.push_back(KernelVariable{p.name, p.vmin, p.vmax});
  }
  info.outs.assign(outs.begin(), outs.end());
  info.ins.assign(ins.begin(), ins.end());
  info.registers = binary.registers;
  info.stack_bytes = binary.stack_bytes;
  KernelEstimates e = estimate_kernel(sink);
  info.ops = e.ops;
  info.bytes = e.bytes_read + e.bytes_written;
  info.iterations = e.global_size;
  return info;
}

CompiledProgram build(const UOp& sink, const Target& target, bool noopt) {
  LoweredKernel lowered = target.lower(sink, !noopt);
  std::vector<Statement> statements = linearize(lowered.sink);
  std::string name = kernel_name(sink, lowered, target.options().gpu != nullptr);
  std::string source = target.render(name, lowered, statements);
  CompiledBinary binary = target.compile(source, name);
  auto info = std::make_shared<const ProgramInfo>(info_of(sink, lowered, name, target, binary));
  UOp program = UOp::make(Ops::PROGRAM, dtypes::void_,
                          {sink, linear_of(statements), UOp::make(Ops::SOURCE, dtypes::void_, {}, std::move(source)),
                           UOp::make(Ops::BINARY, dtypes::uint8, {}, std::move(binary.bytes))},
                          ProgramInfoArg{std::move(info)});
  return CompiledProgram{program, binary.ms, binary.from_disk_cache, false};
}

const UOp& program_part(const UOp& program, size_t i, const char* what) {
  if (!program || program.op() != Ops::PROGRAM || program.src().size() != 4)
    throw std::invalid_argument(std::string("program ") + what + ": expected PROGRAM(SINK, LINEAR, SOURCE, BINARY), got " +
                                (program ? print_node(program) : std::string("a null UOp")));
  return program.src(i);
}

}  // namespace

void set_kernel_observer(KernelObserver observer) { g_observer.store(observer, std::memory_order_release); }

CompiledProgram compile_program(const UOp& kernel, const Target& target) {
  if (!kernel) throw std::invalid_argument("compile_program: expected a CALL or a kernel SINK, got a null UOp");
  UOp sink = kernel.op() == Ops::CALL && !kernel.src().empty() ? kernel.src(0) : kernel;
  if (sink.op() != Ops::SINK) throw std::invalid_argument("compile_program: expected a CALL or a kernel SINK, got " + print_node(kernel));
  if (KernelObserver observe = g_observer.load(std::memory_order_acquire)) observe(sink);
  const bool noopt = noopt_enabled();  // read once: the key and the code must agree
  const std::string& target_key = target.cache_key();
  CacheKey key{sink.key(), std::hash<std::string>()(target_key), &target_key, noopt};
  ProgramCache& c = cache();
  {
    std::lock_guard lock(c.mu);
    auto it = c.entries.find(key);
    if (it != c.entries.end()) {
      c.stats.hits++;
      c.lru.splice(c.lru.begin(), c.lru, it->second.lru);
      CompiledProgram p = it->second.program;
      p.cache_hit = true;
      return p;
    }
  }
  // Compiled outside the lock so that other kernels compile in parallel; a racing duplicate is dropped.
  CompiledProgram p = build(sink, target, noopt);
  CacheEntry entry{std::make_unique<const std::string>(target_key), p, {}};
  key.target = entry.target.get();
  std::lock_guard lock(c.mu);
  c.stats.misses++;
  auto [it, inserted] = c.entries.emplace(key, std::move(entry));
  if (inserted) {
    c.lru.push_front(key);
    it->second.lru = c.lru.begin();
    trim_locked(c);
  }
  return p;
}

const ProgramInfo& program_info(const UOp& program) {
  program_part(program, 0, "info");
  const auto* arg = std::get_if<ProgramInfoArg>(&program.arg());
  if (arg == nullptr || !arg->info) throw std::invalid_argument("program info: the PROGRAM has no ProgramInfo: " + print_node(program));
  return *arg->info;
}

const std::string& program_source(const UOp& program) { return program_part(program, 2, "source").arg_as<std::string>(); }
const std::string& program_binary(const UOp& program) { return program_part(program, 3, "binary").arg_as<std::string>(); }

CompiledKernel compile_kernel(const UOp& kernel) {
  CompiledProgram p = compile_program(kernel, cpu_c_target());
  const ProgramInfo& info = program_info(p.program);
  // The code stays mapped for the life of the process: a caller may hold the function pointer until exit.
  static std::mutex mu;
  static auto* loaded = new std::unordered_map<const UOpNode*, std::pair<UOp, std::shared_ptr<LoadedObject>>>();
  std::lock_guard lock(mu);
  auto it = loaded->find(p.program.get());
  if (it == loaded->end())
    it = loaded->emplace(p.program.get(), std::make_pair(p.program, LoadedObject::load(program_binary(p.program)))).first;
  auto fn = reinterpret_cast<CpuKernelFn>(it->second.second->symbol(info.name));
  return CompiledKernel{p.program, fn, info.name, p.compile_ms, p.from_disk_cache, p.cache_hit};
}

ProgramCacheStats program_cache_stats() {
  ProgramCache& c = cache();
  std::lock_guard lock(c.mu);
  ProgramCacheStats s = c.stats;
  s.entries = c.entries.size();
  return s;
}

size_t program_cache_limit() {
  ProgramCache& c = cache();
  std::lock_guard lock(c.mu);
  return limit_locked(c);
}

size_t set_program_cache_limit(size_t limit) {
  if (limit == 0) throw std::invalid_argument("set_program_cache_limit: 0 programs; expected at least 1");
  ProgramCache& c = cache();
  std::lock_guard lock(c.mu);
  const size_t previous = limit_locked(c);
  c.limit = limit;
  trim_locked(c);
  return previous;
}

}  // namespace doorbell
