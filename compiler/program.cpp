#include "compiler/program.h"

#include <atomic>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <unordered_map>

#include "compiler/c_renderer.h"
#include "compiler/cpu/clang_compiler.h"
#include "compiler/cpu/cpu_optimizer.h"
#include "compiler/cpu/elf_loader.h"
#include "compiler/expander.h"
#include "compiler/linearize.h"
#include "compiler/optimizer.h"
#include "compiler/transcendental.h"
#include "ir/printer.h"

namespace doorbell {
namespace {

struct CacheEntry {
  CompiledKernel kernel;
  std::shared_ptr<LoadedObject> code;  // keeps kernel.fn mapped
};

struct ProgramCache {
  std::mutex mu;
  std::unordered_map<std::string, CacheEntry> entries;
  ProgramCacheStats stats;
};

ProgramCache& cache() {
  static ProgramCache* c = new ProgramCache();  // never destroyed: kernels may run until the process exits
  return *c;
}

UOp linear_of(const std::vector<Statement>& statements) {
  std::vector<UOp> src;
  for (const Statement& s : statements)
    src.push_back(s.kind == StatementKind::END_LOOP ? UOp::make(Ops::END, dtypes::void_, {s.u}) : s.u);
  return UOp::make(Ops::LINEAR, dtypes::void_, std::move(src));
}

CacheEntry build(const UOp& sink, bool noopt) {
  // The optimized kernel is what runs; the PROGRAM still names the original SINK, the kernel it computes.
  UOp opt = lower_for_cpu(sink, noopt);  // vectorized for this CPU where it can be (compiler/cpu/cpu_optimizer.h)
  std::vector<Statement> statements = linearize(opt);
  std::string name = c_kernel_name(sink);
  std::string source = render_c(name, opt, statements);
  CompiledObject obj = compile_c(source);
  std::shared_ptr<LoadedObject> code = LoadedObject::load(obj.object);
  auto fn = reinterpret_cast<CpuKernelFn>(code->symbol(name));
  UOp program = UOp::make(Ops::PROGRAM, dtypes::void_,
                          {sink, linear_of(statements), UOp::make(Ops::SOURCE, dtypes::void_, {}, source),
                           UOp::make(Ops::BINARY, dtypes::uint8, {}, obj.object)});
  return CacheEntry{CompiledKernel{program, fn, name, obj.compile_ms, obj.from_disk_cache, false}, std::move(code)};
}

}  // namespace

namespace {
std::atomic<KernelObserver> g_observer{nullptr};
}  // namespace

void set_kernel_observer(KernelObserver observer) { g_observer.store(observer, std::memory_order_release); }

CompiledKernel compile_kernel(const UOp& kernel) {
  if (!kernel) throw std::invalid_argument("compile_kernel: expected a CALL or a kernel SINK, got a null UOp");
  UOp sink = kernel.op() == Ops::CALL && !kernel.src().empty() ? kernel.src(0) : kernel;
  if (sink.op() != Ops::SINK) throw std::invalid_argument("compile_kernel: expected a CALL or a kernel SINK, got " + print_node(kernel));
  if (KernelObserver observe = g_observer.load(std::memory_order_acquire)) observe(sink);
  // Looked up once: a PATH scan on every call would cost more than a warm kernel launch.
  static const std::string settings = std::string(kCpuRendererTarget) + "|" + find_c_compiler().value_or("") + "|" + c_compile_flags();
  const bool noopt = noopt_enabled();  // read once: the key and the code must agree
  std::string key = sink.key().hex() + "|" + settings + (noopt ? "|noopt" : "");
  ProgramCache& c = cache();
  {
    std::lock_guard lock(c.mu);
    auto it = c.entries.find(key);
    if (it != c.entries.end()) {
      c.stats.hits++;
      CompiledKernel k = it->second.kernel;
      k.cache_hit = true;
      return k;
    }
  }
  // Compiled outside the lock so that other kernels compile in parallel; a racing duplicate is dropped.
  CacheEntry e = build(sink, noopt);
  std::lock_guard lock(c.mu);
  c.stats.misses++;
  auto [it, inserted] = c.entries.emplace(key, std::move(e));
  (void)inserted;
  return it->second.kernel;
}

ProgramCacheStats program_cache_stats() {
  ProgramCache& c = cache();
  std::lock_guard lock(c.mu);
  ProgramCacheStats s = c.stats;
  s.entries = c.entries.size();
  return s;
}

}  // namespace doorbell
