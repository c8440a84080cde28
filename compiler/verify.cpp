#include "compiler/verify.h"

#include <algorithm>
#include <string>
#include <vector>

#include "ir/node_map.h"
#include "ir/printer.h"

namespace doorbell {
namespace {

using RangeSet = std::vector<const UOpNode*>;  // sorted

RangeSet merged(const RangeSet& a, const RangeSet& b) {
  RangeSet out;
  std::set_union(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

RangeSet without(RangeSet s, const UOp& closer) {
  for (size_t i = 1; i < closer.src().size(); i++) {
    auto it = std::lower_bound(s.begin(), s.end(), closer.src(i).get());
    if (it != s.end() && *it == closer.src(i).get()) s.erase(it);
  }
  return s;
}

class Verifier {
 public:
  Verifier(KernelStage stage, const char* after, const LateLoweringOptions* late) : stage_(stage), after_(after), late_(late) {}

  void check(const UOp& sink) {
    if (!sink || sink.op() != Ops::SINK) fail("the kernel's root is a SINK", sink);
    for (const UOp& out : sink.src()) check_output(out);
    for (const UOp& u : sink.toposort()) check_node(u);
    free_ranges(sink);  // one walk fills every node's set, the outputs' included
    for (const UOp& out : sink.src()) {
      RangeSet open = *free_.find(out.get());
      // A GROUP_REDUCE lane range is a thread index before the launch dims make it one: open across the kernel.
      std::erase_if(open, [&](const UOpNode* r) { return range_named(r).arg_as<RangeArg>().type == AxisType::GROUP_REDUCE; });
      if (!open.empty()) {
        fail("every range a value uses is closed by an END or REDUCE around it; range " +
                 print_node(range_named(open.front())) + " is not",
             out);
      }
    }
  }

 private:
  [[noreturn]] void fail(const std::string& what, const UOp& u) const {
    throw VerifyError("DOORBELL_VERIFY: after pass " + std::string(after_) + ": expected " + what + ": " +
                      (u ? print_node(u) : std::string("a null UOp")));
  }

  // A range node by pointer, for messages: found again among the ranges already visited.
  UOp range_named(const UOpNode* n) const {
    for (const UOp& r : ranges_seen_)
      if (r.get() == n) return r;
    return UOp();
  }

  void check_output(const UOp& out) {
    switch (out.op()) {
      case Ops::STORE: return;
      case Ops::GROUP:
        for (const UOp& s : out.src()) check_output(s);
        return;
      case Ops::END:
        if (out.src().empty()) fail("END(value, RANGE...)", out);
        if (out.src(0).op() != Ops::STORE && out.src(0).op() != Ops::GROUP) fail("an END around a STORE or a GROUP of STOREs", out);
        for (size_t i = 1; i < out.src().size(); i++)
          if (out.src(i).op() != Ops::RANGE) fail("an END to list RANGEs after its value", out);
        check_output(out.src(0));
        return;
      default: fail("a kernel output: STORE, GROUP of STOREs or END(STORE, RANGE...)", out);
    }
  }

  void check_memory(const UOp& u) const {
    if (u.src().empty() || u.src(0).op() != Ops::INDEX) fail(std::string(op_name(u.op())) + " through an INDEX", u);
    const UOp& index = u.src(0);
    if (index.src().size() < 2 || index.src().size() > 3) fail("INDEX(buffer, index[, valid])", index);
    UOp b = index.src(0);
    if (b.op() == Ops::AFTER) b = b.src(0);
    if (b.op() != Ops::PARAM) fail("an INDEX into a PARAM buffer", index);
    const AddrSpace space = b.arg_as<ParamArg>().addrspace;
    if (space != AddrSpace::GLOBAL && space != AddrSpace::LOCAL) fail("an INDEX into GLOBAL or LOCAL memory", index);
  }

  void check_node(const UOp& u) {
    switch (u.op()) {
      case Ops::LOAD: case Ops::STORE: check_memory(u); break;
      case Ops::REDUCE:
        for (size_t i = 1; i < u.src().size(); i++)
          if (u.src(i).op() != Ops::RANGE) fail("a REDUCE to list RANGEs after its value", u);
        break;
      case Ops::RANGE: {
        ranges_seen_.push_back(u);
        const AxisType t = u.arg_as<RangeArg>().type;
        if (stage_ == KernelStage::SCHEDULED && t != AxisType::LOOP && t != AxisType::REDUCE)
          fail("only LOOP and REDUCE ranges in the scheduler's kernel", u);
        if (stage_ >= KernelStage::EXPANDED && (t == AxisType::UPCAST || t == AxisType::UNROLL))
          fail("no UPCAST or UNROLL range after expand", u);
        if (stage_ >= KernelStage::LAUNCHED && stage_ != KernelStage::LOWERED && t == AxisType::LOOP)
          fail("no LOOP range after the launch dims", u);
        break;
      }
      case Ops::SPECIAL:
        if (stage_ == KernelStage::SCHEDULED) fail("no SPECIAL thread index in the scheduler's kernel", u);
        break;
      default: break;
    }
    if (stage_ == KernelStage::LOWERED) check_lowered(u);
  }

  static bool is_half(DType d) { return d.scalar_type == ScalarType::Float16 || d.scalar_type == ScalarType::BFloat16; }

  // What lower_late leaves for the renderer (compiler/late_lowering.h).
  void check_lowered(const UOp& u) const {
    const Ops op = u.op();
    const bool transcendental = op == Ops::EXP2 || op == Ops::LOG2 || op == Ops::SIN;
    if (late_ == nullptr) {
      if (transcendental && u.dtype().lanes == 1 && (u.dtype().scalar_type == ScalarType::Float32 || is_half(u.dtype())))
        fail("float32/float16/bfloat16 transcendentals decomposed by late_lowering", u);
      return;
    }
    if (u.dtype().lanes != 1) return;  // vectors are made after late_lowering, of what it left
    if ((op == Ops::FLOORDIV || op == Ops::FLOORMOD) && !late_->floor_division)
      fail("floor division and modulo lowered to CDIV / CMOD by late_lowering", u);
    if (transcendental && !late_->transcendentals.contains(u.dtype()))
      fail(std::string(op_name(op)) + " of " + u.dtype().name() + " decomposed by late_lowering (the renderer has no instruction)", u);
    if (op == Ops::POW && !late_->pow.contains(u.dtype()))
      fail("POW of " + u.dtype().name() + " decomposed by late_lowering (the renderer has no instruction)", u);
    const bool rounds = op == Ops::ADD || op == Ops::SUB || op == Ops::MUL || op == Ops::FDIV || op == Ops::SQRT ||
                        op == Ops::RECIPROCAL || op == Ops::MULACC || transcendental || op == Ops::POW;
    if (rounds && is_half(u.dtype()) && !late_->half_arithmetic)
      fail("16-bit float arithmetic computed in float32 by late_lowering", u);
    if ((op == Ops::LOAD || op == Ops::STORE) && !late_->bool_memory) {
      const UOp& b = u.src(0).src(0);
      if ((b.op() == Ops::AFTER ? b.src(0) : b).dtype().is_bool()) fail("bool buffers read and written as bytes by late_lowering", u);
    }
  }

  // The ranges a node's value varies with that nothing below it closed.
  const RangeSet& free_ranges(const UOp& root) {
    for (const UOp& u : root.toposort()) {
      if (free_.find(u.get())) continue;
      RangeSet s;
      if (u.op() == Ops::RANGE) s.push_back(u.get());
      for (const UOp& src : u.src()) s = merged(s, *free_.find(src.get()));
      if (u.op() == Ops::REDUCE || u.op() == Ops::END) {
        RangeSet inner = without(*free_.find(u.src(0).get()), u);
        for (size_t i = 1; i < u.src().size(); i++) inner = merged(inner, *free_.find(u.src(i).src(0).get()));
        s = std::move(inner);
      }
      free_.get(u.get()) = std::move(s);
    }
    return *free_.find(root.get());
  }

  KernelStage stage_;
  const char* after_;
  const LateLoweringOptions* late_;
  NodeMap<RangeSet> free_;
  std::vector<UOp> ranges_seen_;
};

}  // namespace

void verify_kernel(const UOp& sink, KernelStage stage, const char* after, const LateLoweringOptions* late) {
  Verifier(stage, after, late).check(sink);
}

}  // namespace doorbell
