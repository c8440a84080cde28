// The only translation unit that includes LLVM headers (they are slow to compile; keep them here).
#include "compiler/gpu/llvm/amdgpu_compiler.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>

#include "compiler/subprocess.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Analysis/CGSCCPassManager.h"
#include "llvm/Analysis/LoopAnalysisManager.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PassManager.h"
#include "llvm/IR/Verifier.h"
#include "llvm/IRReader/IRReader.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"

namespace doorbell {
namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

constexpr const char* kTriple = "amdgcn-amd-amdhsa";

const llvm::Target& amdgpu_target() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeAMDGPUTargetInfo();
    LLVMInitializeAMDGPUTarget();
    LLVMInitializeAMDGPUTargetMC();
    LLVMInitializeAMDGPUAsmPrinter();
  });
  std::string err;
  const llvm::Target* t = llvm::TargetRegistry::lookupTarget(kTriple, err);
  if (!t) throw AmdgpuCompileError("compile_amdgpu: LLVM has no target for " + std::string(kTriple) + ": " + err);
  return *t;
}

std::string ir_line(const std::string& ir, int want) {
  std::istringstream in(ir);
  std::string line;
  for (int i = 1; std::getline(in, line); i++)
    if (i == want) return line;
  return "";
}

// ld.lld -shared in.o -o out.so: the HSA code object.
std::string link_shared(const std::string& lld, const std::string& relocatable) {
  try {
    ScratchDir dir("doorbell-lld");
    std::filesystem::path in = dir.path() / "kernel.o", out = dir.path() / "kernel.hsaco", log = dir.path() / "log.txt";
    {
      std::ofstream f(in, std::ios::binary);
      f << relocatable;
      if (!f) throw AmdgpuCompileError("compile_amdgpu: cannot write " + in.string());
    }
    std::vector<std::string> argv{lld, "-shared", "--no-undefined", in.string(), "-o", out.string()};
    ProcessResult r = run_process(argv, log);
    if (!r.ok()) throw AmdgpuCompileError("compile_amdgpu: " + command_line(argv) + " failed with " + r.how() + ": " + read_whole_file(log));
    std::string so = read_whole_file(out);
    if (so.empty()) throw AmdgpuCompileError("compile_amdgpu: " + lld + " succeeded but wrote no " + out.string());
    return so;
  } catch (const AmdgpuCompileError&) {
    throw;
  } catch (const std::runtime_error& e) {
    throw AmdgpuCompileError(std::string("compile_amdgpu: ") + e.what());
  }
}

}  // namespace

std::string find_ld_lld() { return find_executable({"ld.lld-19", "ld.lld"}, "/usr/lib/llvm-19/bin").value_or(""); }

AmdgpuCompiled compile_amdgpu(const std::string& ir, const std::string& arch, const AmdgpuCompileOptions& options) {
  const llvm::Target& target = amdgpu_target();
  AmdgpuCompiled out;
  auto t0 = Clock::now();
  llvm::LLVMContext ctx;
  llvm::SMDiagnostic diag;
  std::unique_ptr<llvm::Module> mod = llvm::parseIR(llvm::MemoryBufferRef(ir, "kernel.ll"), diag, ctx);
  if (!mod) {
    std::string msg;
    llvm::raw_string_ostream os(msg);
    diag.print("kernel.ll", os, false);
    throw AmdgpuCompileError("compile_amdgpu: the IR does not parse: " + msg + "\nline " + std::to_string(diag.getLineNo()) +
                             ": " + ir_line(ir, diag.getLineNo()));
  }
  {
    std::string msg;
    llvm::raw_string_ostream os(msg);
    if (llvm::verifyModule(*mod, &os)) throw AmdgpuCompileError("compile_amdgpu: the IR does not verify: " + msg);
  }
  llvm::TargetOptions topts;
  llvm::CodeGenOptLevel level = options.opt_level <= 0 ? llvm::CodeGenOptLevel::None
                                : options.opt_level == 1 ? llvm::CodeGenOptLevel::Less
                                : options.opt_level == 2 ? llvm::CodeGenOptLevel::Default
                                                         : llvm::CodeGenOptLevel::Aggressive;
  std::unique_ptr<llvm::TargetMachine> tm(
      target.createTargetMachine(kTriple, arch, "", topts, llvm::Reloc::PIC_, std::nullopt, level));
  if (!tm) throw AmdgpuCompileError("compile_amdgpu: LLVM cannot make a target machine for " + arch);
  // An unknown CPU name only warns in LLVM; reject it here with the name.
  if (!tm->getMCSubtargetInfo()->isCPUStringValid(arch))
    throw AmdgpuCompileError("compile_amdgpu: " + arch + " is not an AMDGPU processor LLVM 19 knows (expected e.g. gfx1100, gfx942)");
  if (mod->getDataLayout() != tm->createDataLayout())
    throw AmdgpuCompileError("compile_amdgpu: the IR's datalayout \"" + mod->getDataLayoutStr() + "\" differs from " + arch +
                             "'s \"" + tm->createDataLayout().getStringRepresentation() + "\"");
  mod->setTargetTriple(kTriple);
  out.parse_ms = ms_since(t0);

  auto t1 = Clock::now();
  if (options.opt_level > 0) {
    llvm::LoopAnalysisManager lam;
    llvm::FunctionAnalysisManager fam;
    llvm::CGSCCAnalysisManager cgam;
    llvm::ModuleAnalysisManager mam;
    llvm::PassBuilder pb(tm.get());
    pb.registerModuleAnalyses(mam);
    pb.registerCGSCCAnalyses(cgam);
    pb.registerFunctionAnalyses(fam);
    pb.registerLoopAnalyses(lam);
    pb.crossRegisterProxies(lam, fam, cgam, mam);
    llvm::OptimizationLevel ol = options.opt_level == 1 ? llvm::OptimizationLevel::O1
                                 : options.opt_level == 2 ? llvm::OptimizationLevel::O2
                                                          : llvm::OptimizationLevel::O3;
    llvm::ModulePassManager mpm = pb.buildPerModuleDefaultPipeline(ol);
    mpm.run(*mod, mam);
  }
  out.optimize_ms = ms_since(t1);

  auto t2 = Clock::now();
  auto emit = [&](llvm::CodeGenFileType type) {
    llvm::SmallVector<char, 0> buf;
    llvm::raw_svector_ostream os(buf);
    llvm::legacy::PassManager pm;
    if (tm->addPassesToEmitFile(pm, os, nullptr, type))
      throw AmdgpuCompileError("compile_amdgpu: the " + arch + " backend cannot emit this file type");
    pm.run(*mod);
    return std::string(buf.data(), buf.size());
  };
  out.relocatable = emit(llvm::CodeGenFileType::ObjectFile);
  out.codegen_ms = ms_since(t2);
  out.object = out.relocatable;
  if (!options.link) {
    out.linker = "linking not requested";
    return out;
  }
  std::string lld = find_ld_lld();
  if (lld.empty()) {
    out.linker = "no ld.lld-19 or ld.lld on PATH or in /usr/lib/llvm-19/bin: the object is relocatable, not loadable";
    return out;
  }
  auto t3 = Clock::now();
  out.object = link_shared(lld, out.relocatable);
  out.link_ms = ms_since(t3);
  out.linked = true;
  out.linker = lld;
  return out;
}

}  // namespace doorbell
