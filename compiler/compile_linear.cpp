#include "compiler/compile_linear.h"

#include <stdexcept>

#include "compiler/program.h"
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
    src[0] = compile_kernel(call).program;
    calls.push_back(call.replace_src(std::move(src)));
  }
  return linear.replace_src(std::move(calls));
}

}  // namespace doorbell
