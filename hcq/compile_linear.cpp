#include "hcq/compile_linear.h"

#include <cstdio>
#include <stdexcept>

#include "compiler/program.h"
#include "hcq/devices.h"
#include "hcq/trace.h"
#include "ir/debug.h"
#include "ir/environment.h"
#include "ir/printer.h"

namespace doorbell {
namespace {

// A CALL's buffer argument's own BUFFER (through views into an arena) and the device it names, or null.
const UOp* device_node(const UOp& buffer) {
  const UOp* b = &buffer;
  while (b->op() == Ops::BUFFER && !b->src().empty() && b->src(0).op() == Ops::BUFFER) b = &b->src(0);
  if (b->op() != Ops::BUFFER || b->src().size() < 2 || b->src(1).op() != Ops::DEVICE) return nullptr;
  return &b->src(1);
}

}  // namespace

Device& call_device(const UOp& call) {
  Device* found = nullptr;
  const UOpNode* found_node = nullptr;
  for (size_t i = 1; i < call.src().size(); i++) {
    const UOp* d = device_node(call.src(i));
    if (d == nullptr || d->get() == found_node) continue;  // the same DEVICE node: no second lookup
    found_node = d->get();
    Device& dev = device(d->arg_as<std::string>());  // throws for a device that does not exist
    if (found != nullptr && found != &dev)
      throw std::invalid_argument("run_linear: a call with buffers on " + found->name() + " and " + dev.name() +
                                  "; expected every buffer of a kernel on one device");
    found = &dev;
  }
  return found != nullptr ? *found : device(default_device_name());  // no buffer names one: DEV
}

UOp compile_call(const UOp& call, Device& d) {
  const UOp& body = call.src(0);
  const Target& target = d.target();
  if (body.op() == Ops::PROGRAM && program_info(body).target == target.name()) return body;
  UOp sink = body.op() == Ops::PROGRAM ? body.src(0) : body;
  trace::Scope span("compile", "compile");
  CompiledProgram p = compile_program(sink, target);
  if (p.cache_hit) span.cancel();  // a lookup, not a compile
  if (!p.cache_hit) {
    if (span.active()) span.set_name("compile " + program_info(p.program).name);
    span.add("device", d.name());
    span.add("disk_cache", p.from_disk_cache ? "hit" : "miss");
    if (debug_level() >= 2)  // DEBUG=2: what each compile cost (the target's compiler is most of it)
      std::fprintf(stderr, "compile: %-4s %-24s %9.2f ms%s\n", d.name().c_str(), program_info(p.program).name.c_str(), p.compile_ms,
                   p.from_disk_cache ? " (disk cache)" : "");
    if (debug_level() >= 4)  // DEBUG=4: the source that runs
      std::fprintf(stderr, "%s\n", program_source(p.program).c_str());
  }
  return p.program;
}

UOp compile_linear(const UOp& linear, const std::string& device_name) {
  if (!linear || linear.op() != Ops::LINEAR)
    throw std::invalid_argument("compile_linear: expected a LINEAR, got " + (linear ? print_node(linear) : std::string("a null UOp")));
  Device* override = device_name.empty() ? nullptr : &device(device_name);
  std::vector<UOp> calls;
  calls.reserve(linear.src().size());
  for (const UOp& call : linear.src()) {
    if (call.op() != Ops::CALL || call.src().empty())
      throw std::invalid_argument("compile_linear: expected CALL(body, buffers...), got " + print_node(call));
    Ops body = call.src(0).op();
    if (body != Ops::SINK && body != Ops::PROGRAM) {
      calls.push_back(call);
      continue;
    }
    std::vector<UOp> src = call.src();
    src[0] = compile_call(call, override != nullptr ? *override : call_device(call));
    calls.push_back(src[0] == call.src(0) ? call : call.replace_src(std::move(src)));
  }
  return linear.replace_src(std::move(calls));
}

}  // namespace doorbell
