#include "compiler/compile_linear.h"

#include <cstdio>
#include <stdexcept>

#include "compiler/program.h"
#include "ir/debug.h"
#include "ir/printer.h"

namespace doorbell {

UOp compile_linear(const UOp& linear) {
  if (!linear || linear.op() != Ops::LINEAR)
    throw std::invalid_argument("compile_linear: expected a LINEAR, got " + (linear ? print_node(linear) : std::string("a null UOp")));
  std::vector<UOp> calls;
  calls.reserve(linear.src().size());
  for (const UOp& call : linear.src()) {
    if (call.op() != Ops::CALL || call.src().empty())
      throw std::invalid_argument("compile_linear: expected CALL(body, buffers...), got " + print_node(call));
    if (call.src(0).op() != Ops::SINK) {
      calls.push_back(call);
      continue;
    }
    std::vector<UOp> src = call.src();
    CompiledKernel k = compile_kernel(call);
    src[0] = k.program;
    if (debug_level() >= 2 && !k.cache_hit)  // DEBUG=2: what each compile cost (clang is most of it)
      std::fprintf(stderr, "compile: %-24s %9.2f ms%s\n", k.name.c_str(), k.compile_ms, k.from_disk_cache ? " (disk cache)" : "");
    if (debug_level() >= 4)  // DEBUG=4: the generated source of every kernel
      for (const UOp& part : k.program.src())
        if (part.op() == Ops::SOURCE) std::fprintf(stderr, "%s\n", part.arg_as<std::string>().c_str());
    calls.push_back(call.replace_src(std::move(src)));
  }
  return linear.replace_src(std::move(calls));
}

}  // namespace doorbell
