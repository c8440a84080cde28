#include "compiler/x86/x86_target.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string_view>

#include "compiler/cpu/cpu_optimizer.h"
#include "compiler/cpu/cpu_target.h"
#include "ir/debug.h"
#include "compiler/pipeline.h"
#include "compiler/x86/isel.h"
#include "compiler/x86/regalloc.h"
#include "compiler/x86/x86_encoder.h"
#include "compiler/x86/x86_features.h"

namespace doorbell {
namespace {

class CpuX86Target final : public Target {
 public:
  CpuX86Target() {
    const x86::X86Features& f = x86::host_x86_features();
    options_.renderer = "X86";
    options_.vector_lanes = cpu_vector_lanes();
    options_.threads = true;
    options_.late = x86_lowering_options();
    options_.split_leading_reduce = true;
    options_.pack_matmul_panels = true;
    isel_.vector_lanes = options_.vector_lanes;
    isel_.features = f;
    // zmm values are EVEX-encoded and so may use all 32 registers; ymm/xmm code stays VEX (AVX2 machines have 16)
    allocation_.vec_registers = options_.vector_lanes == 16 && f.avx512f ? 32 : 16;
    const char* isa = options_.vector_lanes == 16 ? "avx512" : options_.vector_lanes == 8 ? "avx2" : "sse";
    name_ = std::string("X86 doorbell x86-64 ") + isa;
    cache_key_ = "X86|1|lanes" + std::to_string(options_.vector_lanes) + "|" + f.describe();
  }

  const std::string& name() const override { return name_; }
  const std::string& cache_key() const override { return cache_key_; }
  const LoweringOptions& options() const override { return options_; }

  LoweredKernel lower(const UOp& sink, bool optimize) const override { return cpu_pipeline(sink, options_, optimize); }

  std::string render(const std::string& name, const LoweredKernel& kernel, const std::vector<Statement>& statements) const override {
    check_features();
    x86::MachineFunction mf = x86::select_instructions(name, kernel, statements, isel_);
    x86::allocate_registers(mf, allocation_);
    return x86::print_listing(mf);
  }

  // Assembles the listing render() made: microseconds, so nothing is cached on disk.
  CompiledBinary compile(const std::string& source, const std::string& name) const override {
    const auto t0 = std::chrono::steady_clock::now();
    x86::AssembledCode code = x86::assemble(source);
    if (code.name != name)
      throw std::invalid_argument("X86 compile: the listing defines " + code.name + "; expected the kernel " + name);
    CompiledBinary b;
    b.bytes = x86::write_elf_object(code);
    b.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    return b;
  }

 private:
  void check_features() const {
    const x86::X86Features& f = isel_.features;
    if (!f.avx2 || !f.fma)
      throw std::invalid_argument("X86 target: this CPU has " + f.describe() + "; expected at least avx2 and fma");
    if (options_.vector_lanes == 16 && !(f.avx512f && f.avx512vl && f.avx512dq))
      throw std::invalid_argument("X86 target: 16-lane vectors need avx512f, avx512vl and avx512dq; this CPU has " + f.describe());
  }

  LoweringOptions options_;
  x86::IselOptions isel_;
  x86::AllocationOptions allocation_;
  std::string name_, cache_key_;
};

constexpr std::string_view kListingStart = ".intel_syntax";
std::atomic<uint64_t> g_fallbacks{0};

class FallbackTarget final : public Target {
 public:
  FallbackTarget(const Target& first, const Target& second) : first_(first), second_(second) {
    name_ = first.name() + ", else " + second.name();
    cache_key_ = "FALLBACK|" + first.cache_key() + "|" + second.cache_key();
  }
  const std::string& name() const override { return name_; }
  const std::string& cache_key() const override { return cache_key_; }
  // Both lower alike (make_fallback_target checks): the kernel is lowered once, then rendered by either.
  const LoweringOptions& options() const override { return first_.options(); }
  LoweredKernel lower(const UOp& sink, bool optimize) const override { return first_.lower(sink, optimize); }

  std::string render(const std::string& name, const LoweredKernel& kernel, const std::vector<Statement>& statements) const override {
    try {
      return first_.render(name, kernel, statements);
    } catch (const std::invalid_argument& e) {
      g_fallbacks.fetch_add(1, std::memory_order_relaxed);
      if (debug_level() >= 2) std::fprintf(stderr, "fallback: %s compiled by %s: %s\n", name.c_str(), second_.name().c_str(), e.what());
      return second_.render(name, kernel, statements);
    }
  }
  CompiledBinary compile(const std::string& source, const std::string& name) const override {
    const bool listing = std::string_view(source).substr(0, kListingStart.size()) == kListingStart;
    return listing ? first_.compile(source, name) : second_.compile(source, name);
  }

 private:
  const Target& first_;
  const Target& second_;
  std::string name_, cache_key_;
};

}  // namespace

bool x86_fallback_enabled() {
  static const bool on = [] {
    const char* v = std::getenv("DOORBELL_X86_FALLBACK");
    if (v == nullptr || *v == '\0' || std::string_view(v) == "1") return true;
    if (std::string_view(v) == "0") return false;
    throw std::invalid_argument(std::string("DOORBELL_X86_FALLBACK: '") + v + "'; expected 0 (the x86 target alone) or 1 (clang for kernels it refuses)");
  }();
  return on;
}

uint64_t x86_fallback_count() { return g_fallbacks.load(std::memory_order_relaxed); }

std::unique_ptr<Target> make_fallback_target(const Target& first, const Target& second) {
  if (first.options().vector_lanes != second.options().vector_lanes || first.options().threads != second.options().threads)
    throw std::invalid_argument("fallback target: " + first.name() + " and " + second.name() +
                                " lower differently (vector lanes or threads); expected one CPU pipeline");
  return std::make_unique<FallbackTarget>(first, second);
}

const Target& cpu_x86_with_clang_fallback_target() {
  static const Target* t = make_fallback_target(cpu_x86_target(), cpu_c_target()).release();  // never destroyed
  return *t;
}

LateLoweringOptions x86_lowering_options() { return c_lowering_options(); }

const Target& cpu_x86_target() {
  static const CpuX86Target* t = new CpuX86Target();  // never destroyed: programs name it until the process exits
  return *t;
}

}  // namespace doorbell
