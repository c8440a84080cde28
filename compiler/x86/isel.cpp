// Instruction selection's framework (compiler/x86/isel.h): IselContext, the entry (buffers, variables, core guard),
// the statement dispatcher, loops (split ones through a 128-bit product as the C renderer's), addresses with their
// constant part folded into the displacement, gates, stores and accumulators. Scalar values: isel_scalar_alu.cpp;
// vector values: isel_vector.cpp. Facts relied on: firmware-notes/x86-isel.md.
#include <algorithm>
#include <cstring>
#include <map>
#include <stdexcept>

#include "compiler/x86/isel.h"
#include "compiler/x86/isel_scalar.h"
#include "ir/exec_alu.h"
#include "ir/kernel_variables.h"
#include "ir/printer.h"
#include "ir/reduce_identity.h"

namespace doorbell::x86 {

// ---------------------------------------------------------------------------------------------------------------
// Shared helpers

void isel_fail(const std::string& what, const UOp& u) {
  throw std::invalid_argument("x86 isel: " + what + ": " + print_node(u));
}

bool is_double_dtype(DType d) { return d.scalar_type == ScalarType::Float64 || d.scalar_type == ScalarType::WeakFloat; }
bool is_half_dtype(DType d) { return d.scalar_type == ScalarType::Float16 || d.scalar_type == ScalarType::BFloat16; }
uint16_t natural_bits(DType d) {
  if (d.is_bool()) return 8;
  if (d.scalar_type == ScalarType::WeakInt) return 64;
  return static_cast<uint16_t>(d.bitsize());
}
uint16_t op_bits(DType d) { return natural_bits(d) == 64 ? 64 : 32; }

namespace {
constexpr Mn kJcc[] = {Mn::je, Mn::jne, Mn::jl, Mn::jle, Mn::jg, Mn::jge, Mn::jb, Mn::jbe, Mn::ja, Mn::jae, Mn::jp, Mn::jnp};
constexpr Mn kSetcc[] = {Mn::sete, Mn::setne, Mn::setl, Mn::setle, Mn::setg, Mn::setge,
                         Mn::setb, Mn::setbe, Mn::seta, Mn::setae, Mn::setp, Mn::setnp};
constexpr Mn kCmovcc[] = {Mn::cmove, Mn::cmovne, Mn::cmovl, Mn::cmovle, Mn::cmovg, Mn::cmovge,
                          Mn::cmovb, Mn::cmovbe, Mn::cmova, Mn::cmovae, Mn::cmovp, Mn::cmovnp};
constexpr Cc kNegate[] = {Cc::NE, Cc::E, Cc::GE, Cc::G, Cc::LE, Cc::L, Cc::AE, Cc::A, Cc::BE, Cc::B, Cc::NP, Cc::P};
}  // namespace

Mn jcc(Cc c) { return kJcc[static_cast<int>(c)]; }
Mn setcc(Cc c) { return kSetcc[static_cast<int>(c)]; }
Mn cmovcc(Cc c) { return kCmovcc[static_cast<int>(c)]; }
Cc negate(Cc c) { return kNegate[static_cast<int>(c)]; }

namespace {

Mem arg_slot(int slot, uint16_t bits) { return frame_slot(MemBase::ARG, slot, bits); }

Mem at(Reg base, int32_t disp, uint16_t bits) {
  Mem m;
  m.base = with_bits(base, 64);
  m.disp = disp;
  m.bits = bits;
  return m;
}

bool fits_i32(__int128 v) { return v >= INT32_MIN && v <= INT32_MAX; }

}  // namespace

// ---------------------------------------------------------------------------------------------------------------
// IselContext

IselContext::IselContext(MachineFunction& f, const IselOptions& o) : mf(f), options(o) {
  if (o.vector_lanes != 4 && o.vector_lanes != 8 && o.vector_lanes != 16)
    throw std::invalid_argument("x86 isel: vector_lanes is " + std::to_string(o.vector_lanes) + "; expected 4, 8 or 16");
  vector_bits = static_cast<uint16_t>(32 * o.vector_lanes);
  evex = o.vector_lanes == 16;
}

Inst& IselContext::emit(Mn op, std::initializer_list<Operand> operands) {
  mf.code.push_back(make_inst(op, operands));
  return mf.code.back();
}

void IselContext::place_label(int32_t label) {
  emit(Mn::LABEL, {op_label(label)});
  if (selector_) selector_->joined();  // values made before the label may not exist on every path into it
}

Mem IselContext::constant(const std::string& bytes, uint32_t align, uint16_t access_bits) {
  std::string key = std::to_string(align) + ":" + bytes;
  auto it = constants_.find(key);
  int32_t label;
  if (it != constants_.end()) {
    label = it->second;
  } else {
    label = new_label();
    mf.constants.push_back(ConstantData{label, align, bytes});
    constants_.emplace(key, label);
  }
  Mem m;
  m.kind = MemBase::RIP;
  m.has_base = false;
  m.label = label;
  m.bits = access_bits;
  return m;
}

Mem IselContext::local_slot(uint32_t bytes, uint16_t access_bits) {
  Mem m = frame_slot(MemBase::LOCAL, static_cast<int32_t>(mf.locals.size()), access_bits);
  mf.locals.push_back(bytes);
  return m;
}

int32_t IselContext::extern_symbol(const std::string& name) {
  for (size_t i = 0; i < mf.externs.size(); i++)
    if (mf.externs[i] == name) return static_cast<int32_t>(i);
  mf.externs.push_back(name);
  return static_cast<int32_t>(mf.externs.size() - 1);
}

Reg IselContext::reg_of(const UOp& u) const {
  auto it = values_.find(u.get());
  if (it == values_.end()) throw std::invalid_argument("x86 isel: a value is used before it is defined: " + print_node(u));
  return it->second;
}

Reg IselContext::scalar(const UOp& u) { return selector_->scalar(u); }
Reg IselContext::scalar_gpr32(const UOp& u) { return selector_->scalar_gpr32(u); }
int IselContext::uses(const UOp& u) const { return selector_->uses(u); }
Mem IselContext::element(const UOp& index, uint16_t access_bits) { return selector_->element(index, access_bits); }
int32_t IselContext::branch_unless_gate(const UOp& index) { return selector_->branch_unless_gate(index); }
Reg IselContext::scalar_combine(Ops op, DType d, Reg a, Reg b) { return selector_->combine(op, d, a, b); }

// ---------------------------------------------------------------------------------------------------------------
// ScalarSelector: framework

ScalarSelector::ScalarSelector(IselContext& c, const LoweredKernel& k, const std::vector<Statement>& s)
    : cx(c), kernel(k), statements(s) {
  cx.selector_ = this;
}

int ScalarSelector::uses(const UOp& u) const {
  auto it = uses_.find(u.get());
  return it == uses_.end() ? 0 : it->second;
}

// Which nodes need no register of their own: compares read only as gates and by scalar WHEREs (re-emitted as
// cmp + jcc / cmovcc there), and integer sums read only as INDEX offsets or by such sums (their terms go into the
// address: constants into the displacement, the rest summed once per loop body and shared by the addresses).
void ScalarSelector::analyze() {
  for (const UOp& u : kernel.sink.toposort())
    for (size_t i = 0; i < u.src().size(); i++) {
      uses_[u.src(i).get()]++;
      consumers_[u.src(i).get()].emplace_back(u, i);
    }
  for (size_t k = statements.size(); k-- > 0;) {  // consumers before their sources
    const Statement& s = statements[k];
    const UOp& u = s.u;
    if (s.kind != StatementKind::VALUE || u.dtype().lanes != 1) continue;
    auto it = consumers_.find(u.get());
    if (it == consumers_.end()) continue;
    const auto& cons = it->second;
    if (u.op() == Ops::CMPLT || u.op() == Ops::CMPNE || u.op() == Ops::CMPEQ) {
      bool ok = !cons.empty();
      for (const auto& [c, i] : cons)
        ok &= (c.op() == Ops::WHERE && i == 0 && c.dtype().lanes == 1) || (c.op() == Ops::INDEX && i == 2);
      if (ok) remat_compares_.insert(u.get());
    } else if (u.op() == Ops::ADD && u.dtype().is_int()) {
      bool ok = !cons.empty();
      for (const auto& [c, i] : cons)
        ok &= (c.op() == Ops::INDEX && i == 1 && indexed_buffer(c).op() == Ops::PARAM) || address_only_.count(c.get()) != 0 ||
              scaled_offsets_.count(c.get()) != 0;
      if (ok) address_only_.insert(u.get());
    } else if (u.op() == Ops::MUL && u.dtype().is_int()) {
      bool ok = !cons.empty();
      for (const auto& [c, i] : cons)
        ok &= (c.op() == Ops::INDEX && i == 1 && indexed_buffer(c).op() == Ops::PARAM) || address_only_.count(c.get()) != 0;
      if (ok) scaled_offset(u, k);
    }
  }
}

// An integer u = (x + c) * s or x * s (either operand order, c and s constants) as {x, c, s}.
std::optional<ScalarSelector::RowOffset> ScalarSelector::row_offset(const UOp& u) {
  if (u.op() != Ops::MUL || !u.dtype().is_int() || u.dtype().lanes != 1) return std::nullopt;
  for (size_t si = 0; si < 2; si++) {
    std::optional<ConstValue> sv = is_const(u.src(si)) ? folded(u.src(si)) : std::nullopt;
    if (!sv || !std::holds_alternative<int64_t>(*sv)) continue;
    const UOp& sum = u.src(1 - si);
    __int128 scale = int_value(u.dtype(), std::get<int64_t>(*sv));
    if (sum.op() == Ops::ADD && sum.dtype() == u.dtype())
      for (size_t ci = 0; ci < 2; ci++) {
        std::optional<ConstValue> cv = is_const(sum.src(ci)) ? folded(sum.src(ci)) : std::nullopt;
        if (cv && std::holds_alternative<int64_t>(*cv))
          return RowOffset{sum.src(1 - ci), int_value(u.dtype(), std::get<int64_t>(*cv)), scale};
      }
    if (!is_const(sum)) return RowOffset{sum, 0, scale};
  }
  return std::nullopt;
}

// u = (x + c) * s at statement k: recorded when an earlier VALUE (x + c') * s (or x * s) whose scope is still open at
// k (no END_LOOP closes it in between) gives it a register: u's address is that register + (c - c') * s.
void ScalarSelector::scaled_offset(const UOp& u, size_t k) {
  std::optional<RowOffset> r = row_offset(u);
  if (!r) return;
  for (size_t j = 0; j < k; j++) {
    const Statement& b = statements[j];
    if (b.kind != StatementKind::VALUE || b.u == u) continue;
    std::optional<RowOffset> o = row_offset(b.u);
    if (!o || !(o->x == r->x) || o->scale != r->scale || !(b.u.dtype() == u.dtype())) continue;
    int depth = 0;
    bool open = true;
    for (size_t i = j + 1; i < k && open; i++) {
      if (statements[i].kind == StatementKind::BEGIN_LOOP) depth++;
      if (statements[i].kind == StatementKind::END_LOOP) open = --depth >= 0;
    }
    __int128 add = (r->c - o->c) * r->scale;
    if (!open || !fits_i32(add)) continue;
    scaled_offsets_[u.get()] = ScaledOffset{b.u, add};
    return;
  }
}

void ScalarSelector::run() {
  analyze();
  for (const Statement& s : statements) any_split_ |= s.kind == StatementKind::BEGIN_LOOP && s.split;
  return_label_ = cx.new_label();
  entry();
  for (statement_ = 0; statement_ < statements.size(); statement_++) statement(statements[statement_]);
  if (!loops_.empty()) isel_fail("a loop is not closed", loops_.back().range);
  cx.place_label(return_label_);
  cx.emit(Mn::vzeroupper, {});  // vector code may have dirtied the upper halves; SysV callers expect them clean
  cx.emit(Mn::ret, {});
}

// The C renderer's prologue: dataN = bufs[N] for each GLOBAL PARAM, varN = vars[N] in kernel_variables order, and
// `if (core_id != 0) return` when no loop is divided among the cores.
void ScalarSelector::entry() {
  std::map<int64_t, UOp> params;
  for (const UOp& u : kernel.sink.toposort())
    if (u.op() == Ops::PARAM && u.arg_as<ParamArg>().addrspace == AddrSpace::GLOBAL) params.emplace(u.arg_as<ParamArg>().slot, u);
  if (!params.empty()) {
    Reg bufs = cx.new_gpr();
    cx.emit(Mn::mov, {op_reg(bufs), op_mem(arg_slot(0, 64))});
    for (const auto& [slot, p] : params) {
      if (!fits_i32(static_cast<__int128>(slot) * 8) || slot < 0) isel_fail("a buffer slot out of range", p);
      Reg base = cx.new_gpr();
      cx.emit(Mn::mov, {op_reg(base), op_mem(at(bufs, static_cast<int32_t>(slot * 8), 64))});
      buffer_base_[slot] = base;
      cx.define(p, base);
    }
  }
  std::vector<UOp> vars = kernel_variables(kernel.sink);
  if (!vars.empty()) {
    Reg vp = cx.new_gpr();
    cx.emit(Mn::mov, {op_reg(vp), op_mem(arg_slot(1, 64))});
    for (size_t i = 0; i < vars.size(); i++) {
      DType d = vars[i].dtype();
      Mem m = at(vp, static_cast<int32_t>(i * 8), 64);
      if (d.is_float()) {  // (double)vars[i] or (float)vars[i]: the int64 converted
        Reg r = cx.new_vec(128), z = cx.new_vec(128);
        cx.emit(Mn::vmovss, {op_reg(z), op_mem(cx.constant(std::string(4, '\0'), 4, 32))}).remat = true;
        cx.emit(is_double_dtype(d) ? Mn::vcvtsi2sd : Mn::vcvtsi2ss, {op_reg(r), op_reg(z), op_mem(m)});
        cx.define(vars[i], r);
      } else {  // the low bits of the int64: the C cast's value
        Reg r = cx.new_gpr();
        cx.emit(Mn::mov, {op_reg(r), op_mem(m)});
        cx.define(vars[i], with_bits(r, natural_bits(d)));
      }
    }
  }
  if (!any_split_) {
    cx.emit(Mn::cmp, {op_mem(arg_slot(2, 32)), op_imm(0)});
    cx.emit(Mn::jne, {op_label(return_label_)});
  }
}

// float16 converts with F16C (vcvtph2ps / vcvtps2ph): a kernel that touches it needs the feature.
void ScalarSelector::check_features(const UOp& u) const {
  if (cx.options.features.f16c) return;
  auto half = [](const UOp& x) { return x.dtype().scalar_type == ScalarType::Float16; };
  bool uses = half(u);
  for (const UOp& x : u.src()) uses |= half(x) || (x.op() == Ops::INDEX && half(indexed_buffer(x)));
  if (uses) isel_fail("float16 needs F16C (vcvtph2ps, vcvtps2ph), which the options' features lack", u);
}

void ScalarSelector::statement(const Statement& s) {
  const UOp& u = s.u;
  if (s.kind == StatementKind::VALUE || s.kind == StatementKind::STORE || s.kind == StatementKind::ACC_UPDATE) check_features(u);
  switch (s.kind) {
    case StatementKind::BEGIN_LOOP: return begin_loop(s);
    case StatementKind::END_LOOP:
      if (loops_.empty() || !(loops_.back().range == u)) isel_fail("END_LOOP of a loop that is not the innermost open one", u);
      return end_loop();
    case StatementKind::VALUE:
      if (u.dtype().lanes > 1) return select_vector_value(cx, u);
      // emitted where they are read: re-emitted compares, address sums, constants (immediates where they fit)
      if (remat_compare(u) || address_only_.count(u.get()) || scaled_offsets_.count(u.get()) || unmade_.count(u.get()) ||
          is_const(u))
        return;
      cx.define(u, value(u));
      return;
    case StatementKind::ACC_INIT:
      if (u.dtype().lanes > 1) return select_vector_acc_init(cx, u);
      return acc_init(u);
    case StatementKind::ACC_UPDATE: {
      if (u.op() != Ops::REDUCE || u.src().empty()) isel_fail("ACC_UPDATE of a node that is not a REDUCE", u);
      if (u.dtype().lanes == 1 && u.src(0).dtype().lanes == 1) return acc_update(u);
      // the accumulator must stay in its register across iterations: a fold that left it elsewhere is moved back
      Reg before = cx.reg_of(u);
      select_vector_acc_update(cx, u);
      Reg after = cx.reg_of(u);
      if (!(after == before)) {
        Mn mv = before.cls == RegClass::GPR ? Mn::mov : Mn::vmovaps;
        cx.emit(mv, {op_reg(with_bits(before, before.cls == RegClass::GPR ? op_bits(u.dtype()) : before.bits)), op_reg(with_bits(after, before.cls == RegClass::GPR ? op_bits(u.dtype()) : before.bits))});
        cx.define(u, before);
      }
      return;
    }
    case StatementKind::STORE: {
      if (u.op() != Ops::STORE || u.src().size() < 2 || u.src(0).op() != Ops::INDEX || u.src(0).src().size() < 2)
        isel_fail("a STORE must write INDEX(buffer, offset[, gate]) with a value", u);
      int32_t skip = core_zero_guard();
      if (u.src(1).dtype().lanes > 1) select_vector_store(cx, u);
      else store(u);
      if (skip >= 0) cx.place_label(skip);
      return;
    }
    case StatementKind::BARRIER:  // as the C renderer: only GPU kernels have thread blocks
      isel_fail("a BARRIER needs a GPU thread block", u);
  }
  isel_fail("unknown statement kind", u);
}

int32_t ScalarSelector::core_zero_guard() {
  if (!any_split_) return -1;
  for (const Loop& l : loops_)
    if (l.split) return -1;
  int32_t skip = cx.new_label();
  cx.emit(Mn::cmp, {op_mem(arg_slot(2, 32)), op_imm(0)});
  cx.emit(Mn::jne, {op_label(skip)});
  return skip;
}

// for (c = lo; c < hi; c++): the counter in a 64-bit register, the end as an immediate where it is a constant; the
// body is entered only when the range is not empty and closed by `cmp; jl top` (a backward jump: the allocator's
// loop marker).
void ScalarSelector::begin_loop(const Statement& s) {
  const UOp& r = s.u;
  if (r.op() != Ops::RANGE) isel_fail("BEGIN_LOOP of a node that is not a RANGE", r);
  if (!r.dtype().is_int()) isel_fail("a loop counter must be an integer", r);
  const UOp& end = r.src(0);
  Loop l;
  l.range = r;
  l.split = s.split;
  l.counter = cx.new_gpr();
  l.top = cx.new_label();
  l.exit = cx.new_label();
  std::optional<Operand> end_op;
  if (s.split) {
    // lo = (__int128)end * core_id / core_count, hi likewise with core_id + 1: one-operand imul gives rdx:rax, idiv
    // divides it (the quotient lies between 0 and end: it fits)
    Reg e = ext(end, 64);
    Reg lo = cx.new_gpr(), hi = cx.new_gpr();
    const Reg rax = gpr(RAX), rcx = gpr(RCX);
    for (int part = 0; part < 2; part++) {
      cx.emit(Mn::mov, {op_reg(rax), op_reg(e)});
      cx.emit(Mn::movsxd, {op_reg(rcx), op_mem(arg_slot(2, 32))});
      if (part == 1) cx.emit(Mn::add, {op_reg(rcx), op_imm(1)});
      cx.emit(Mn::imul, {op_reg(rcx)});
      cx.emit(Mn::movsxd, {op_reg(rcx), op_mem(arg_slot(3, 32))});
      cx.emit(Mn::idiv, {op_reg(rcx)});
      cx.emit(Mn::mov, {op_reg(part == 0 ? lo : hi), op_reg(rax)});
    }
    cx.emit(Mn::mov, {op_reg(l.counter), op_reg(lo)});
    end_op = op_reg(hi);
    cx.emit(Mn::cmp, {op_reg(l.counter), *end_op});
    cx.emit(Mn::jge, {op_label(l.exit)});
  } else {
    cx.emit(Mn::mov, {op_reg(with_bits(l.counter, 32)), op_imm(0)});
    if (std::optional<ConstValue> ev = folded(end); ev && std::holds_alternative<int64_t>(*ev)) {
      __int128 n = int_value(end.dtype(), std::get<int64_t>(*ev));
      if (fits_i32(n)) end_op = op_imm(static_cast<int64_t>(n));
      else end_op = op_reg(ext(end, 64));
      if (n <= 0) cx.emit(Mn::jmp, {op_label(l.exit)});  // an empty loop: its body is never entered
    } else {
      end_op = op_reg(ext(end, 64));
      cx.emit(Mn::cmp, {op_reg(l.counter), *end_op});
      cx.emit(Mn::jge, {op_label(l.exit)});
    }
  }
  l.end = end_op;
  if (!s.split) hoist_addresses(statement_ + 1, l);
  // the top is reached from just above and from the body's end: what was made before it dominates it, so the index
  // sums stay known (a plain LABEL, not place_label, which forgets them)
  cx.emit(Mn::LABEL, {op_label(l.top)});
  cx.define(r, with_bits(l.counter, natural_bits(r.dtype())));
  loops_.push_back(l);
}

// t as stride * c + offset in a loop 0 <= c < n, through products by constants and sums with constants of signed
// integers of 32 or 64 bits, every one of which stays within 32 bits on the whole range (so the C's int32 arithmetic
// and the 64-bit induction agree); nullopt otherwise.
std::optional<ScalarSelector::Linear> ScalarSelector::linear(const UOp& t, const UOp& c, __int128 n, int depth) {
  if (t == c) return Linear{1, 0};
  const DType d = t.dtype();
  if (depth > 8 || d.lanes != 1 || !d.is_int() || d.is_unsigned() || natural_bits(d) < 32) return std::nullopt;
  if (t.op() != Ops::MUL && t.op() != Ops::ADD) return std::nullopt;
  for (size_t i = 0; i < 2; i++) {
    std::optional<ConstValue> k = is_const(t.src(1 - i)) ? folded(t.src(1 - i)) : std::nullopt;
    if (!k || !std::holds_alternative<int64_t>(*k)) continue;
    std::optional<Linear> x = linear(t.src(i), c, n, depth + 1);
    if (!x) return std::nullopt;
    const __int128 v = int_value(d, std::get<int64_t>(*k));
    Linear r = t.op() == Ops::MUL ? Linear{x->stride * v, x->offset * v} : Linear{x->stride, x->offset + v};
    if (!fits_i32(v) || !fits_i32(r.stride) || !fits_i32(r.offset) || !fits_i32(r.stride * (n - 1) + r.offset))
      return std::nullopt;
    return r;
  }
  return std::nullopt;
}

// Strength reduction of an innermost loop's addresses (clang's loop-strength-reduce does the like): in the body of a
// loop 0 <= c < n with a constant n and no loop inside, an address whose offset terms are `c * stride` (or `c`) and
// values made before the loop is [P + size * I + disp] with P = buffer + size * (those values), made once here, and I
// = c * stride, an induction register that starts at 0 and grows by the stride each iteration (the counter itself
// for stride 1): one add per iteration instead of an imul and leas per row. Exact when (n - 1) * stride fits in 32
// bits: the C's int32 product and its sign-extension then equal the 64-bit induction.
void ScalarSelector::hoist_addresses(size_t begin, Loop& l) {
  std::optional<ConstValue> ev = folded(l.range.src(0));
  if (!ev || !std::holds_alternative<int64_t>(*ev)) return;
  const __int128 n = int_value(l.range.src(0).dtype(), std::get<int64_t>(*ev));
  if (n <= 0) return;
  std::vector<UOp> indexes;
  for (size_t k = begin; k < statements.size(); k++) {
    const Statement& s = statements[k];
    if (s.kind == StatementKind::BEGIN_LOOP) return;  // not innermost: values across an inner loop cost registers
    if (s.kind == StatementKind::END_LOOP) break;
    bool access = (s.kind == StatementKind::VALUE && s.u.op() == Ops::LOAD) || s.kind == StatementKind::STORE;
    if (access && !s.u.src().empty() && s.u.src(0).op() == Ops::INDEX && s.u.src(0).src().size() >= 2 &&
        indexed_buffer(s.u.src(0)).op() == Ops::PARAM && indexed_buffer(s.u.src(0)).arg_as<ParamArg>().addrspace == AddrSpace::GLOBAL)
      indexes.push_back(s.u.src(0));
  }
  constexpr int kMaxRegisters = 6;  // live across the whole loop: more would crowd the body's own values
  int registers = 0;
  std::map<std::pair<int64_t, std::vector<const UOpNode*>>, Reg> bases;  // (buffer slot, invariant terms) -> P
  std::map<int64_t, Reg> steps;                                          // stride -> I
  for (const UOp& index : indexes) {
    if (hoisted_.count(index.get())) continue;
    const UOp& buf = indexed_buffer(index);
    const int64_t slot = buf.arg_as<ParamArg>().slot;
    const int64_t size = buf.dtype().scalar().itemsize();
    auto base_it = buffer_base_.find(slot);
    if (base_it == buffer_base_.end() || !(size == 1 || size == 2 || size == 4 || size == 8)) continue;
    __int128 disp = 0;
    std::vector<UOp> terms, invariant;
    offset_terms(index.src(1), size, 0, disp, terms);
    std::optional<int64_t> stride;
    __int128 offset = 0;  // the linear term's constant part, scaled: into the displacement
    bool ok = true;
    for (const UOp& t : terms) {
      const DType d = t.dtype();
      if (!d.is_int() || d.lanes != 1) ok = false;
      else if (std::optional<Linear> lin = linear(t, l.range, n)) {
        if (stride || !fits_i32(disp + lin->offset * size) || !fits_i32(lin->offset * size)) ok = false;
        else stride = static_cast<int64_t>(lin->stride), disp += lin->offset * size, offset = lin->offset * size;
      } else if (cx.defined(t) && !is_const(t)) invariant.push_back(t);
      else ok = false;
    }
    if (!ok || (invariant.empty() && !stride)) continue;
    std::sort(invariant.begin(), invariant.end(), [](const UOp& a, const UOp& b) { return a.get() < b.get(); });
    std::vector<const UOpNode*> key;
    for (const UOp& t : invariant) key.push_back(t.get());
    const bool new_base = !invariant.empty() && !bases.count({slot, key});
    const bool new_step = stride && *stride != 1 && !steps.count(*stride);
    if (registers + new_base + new_step > kMaxRegisters) continue;
    registers += new_base + new_step;
    Hoisted h;
    h.base = base_it->second;
    h.disp = static_cast<int32_t>(offset);
    if (new_base) {
      Reg sum = sum_terms(invariant);
      Reg p = cx.new_gpr();
      Mem a;
      a.bits = 0;
      a.base = with_bits(base_it->second, 64);
      a.has_index = true;
      a.index = with_bits(sum, 64);
      a.scale = static_cast<uint8_t>(size);
      cx.emit(Mn::lea, {op_reg(p), op_mem(a)});
      bases[{slot, key}] = p;
    }
    if (!invariant.empty()) h.base = bases[{slot, key}];
    if (stride) {
      h.has_index = true;
      if (*stride == 1) {
        h.index = l.counter;
      } else {
        if (new_step) {
          Reg r = cx.new_gpr();
          cx.emit(Mn::mov, {op_reg(with_bits(r, 32)), op_imm(0)});
          steps[*stride] = r;
          l.steps.emplace_back(r, *stride);
        }
        h.index = steps[*stride];
      }
    }
    hoisted_[index.get()] = h;
    l.hoisted.push_back(index.get());
  }
  // integer sums and products in the body are not made when only hoisted addresses read them (through address sums)
  std::unordered_map<const UOpNode*, bool> covered;
  auto is_covered = [&](auto&& self, const UOp& u, int depth) -> bool {
    if (auto it = covered.find(u.get()); it != covered.end()) return it->second;
    auto cons = consumers_.find(u.get());
    bool ok = cons != consumers_.end() && !cons->second.empty() && depth < 8;
    if (ok)
      for (const auto& [c, i] : cons->second)
        ok &= (c.op() == Ops::INDEX && i == 1 && hoisted_.count(c.get())) ||
              ((address_only_.count(c.get()) || unmade_.count(c.get())) && self(self, c, depth + 1));
    return covered[u.get()] = ok;
  };
  std::vector<UOp> candidates;
  for (size_t k = begin; k < statements.size() && statements[k].kind != StatementKind::END_LOOP; k++) {
    const UOp& u = statements[k].u;
    if (statements[k].kind == StatementKind::VALUE && (u.op() == Ops::MUL || u.op() == Ops::ADD) && u.dtype().lanes == 1 &&
        u.dtype().is_int())
      candidates.push_back(u);
  }
  for (size_t k = candidates.size(); k-- > 0;)  // readers before what they read
    if (is_covered(is_covered, candidates[k], 0)) unmade_.insert(candidates[k].get());
}

void ScalarSelector::end_loop() {
  Loop l = loops_.back();
  loops_.pop_back();
  for (const auto& [r, step] : l.steps) cx.emit(Mn::add, {op_reg(r), op_imm(step)});
  for (const UOpNode* n : l.hoisted) hoisted_.erase(n);
  cx.emit(Mn::add, {op_reg(l.counter), op_imm(1)});
  cx.emit(Mn::cmp, {op_reg(l.counter), *l.end});
  cx.emit(Mn::jl, {op_label(l.top)});
  cx.place_label(l.exit);
}

// The terms of an INDEX offset (see element): constants summed into `disp` (scaled by the element size), the rest
// appended to `terms`.
Reg ScalarSelector::sum_terms(const std::vector<UOp>& terms) {
  Reg sum = ext(terms[0], 64);
  for (size_t i = 1; i < terms.size(); i++) {
    Reg t = ext(terms[i], 64), next = cx.new_gpr();
    Mem a;
    a.bits = 0;
    a.base = with_bits(sum, 64);
    a.has_index = true;
    a.index = with_bits(t, 64);
    cx.emit(Mn::lea, {op_reg(next), op_mem(a)});
    sum = next;
  }
  return sum;
}

void ScalarSelector::offset_terms(const UOp& off, int64_t size, int depth, __int128& disp, std::vector<UOp>& terms) {
  if (std::optional<ConstValue> cv = folded(off); cv && std::holds_alternative<int64_t>(*cv)) {
    __int128 c = int_value(off.dtype(), std::get<int64_t>(*cv));
    if (fits_i32(disp + c * size)) {
      disp += c * size;
      return;
    }
  }
  if (auto so = scaled_offsets_.find(off.get()); so != scaled_offsets_.end() && depth < 8 &&
                                                 fits_i32(disp + so->second.add * size)) {
    disp += so->second.add * size;
    offset_terms(so->second.base, size, depth + 1, disp, terms);
    return;
  }
  bool with_const = off.op() == Ops::ADD && (is_const(off.src(0)) || is_const(off.src(1)));
  if (off.op() == Ops::ADD && off.dtype().is_int() && depth < 8 && (address_only_.count(off.get()) || with_const)) {
    offset_terms(off.src(0), size, depth + 1, disp, terms);
    offset_terms(off.src(1), size, depth + 1, disp, terms);
    return;
  }
  terms.push_back(off);
}

// [base + offset * size + disp]: the offset's constant terms go into the displacement; its other terms (through the
// sums only addresses read, and ADD(x, CONST)) are summed into one index register, which the addresses of a loop
// body share (sum_cache_, cleared at every join label: a sum made on one path is not reused past it), sign-extended
// to 64 bits when narrower and scaled by the element size.
Mem ScalarSelector::element(const UOp& index, uint16_t access_bits) {
  if (index.op() != Ops::INDEX) isel_fail("an address must be an INDEX", index);
  const UOp& buf = indexed_buffer(index);
  if (buf.op() != Ops::PARAM || buf.arg_as<ParamArg>().addrspace != AddrSpace::GLOBAL)
    isel_fail("only global buffers (PARAM) can be addressed on the CPU", index);
  auto base_it = buffer_base_.find(buf.arg_as<ParamArg>().slot);
  if (base_it == buffer_base_.end()) isel_fail("a buffer without a base register", buf);
  const int64_t size = buf.dtype().scalar().itemsize();
  Mem m = at(base_it->second, 0, access_bits);
  __int128 disp = 0;
  std::vector<UOp> terms;
  offset_terms(index.src(1), size, 0, disp, terms);
  if (auto hoisted = hoisted_.find(index.get()); hoisted != hoisted_.end()) {  // the loop's preheader made its parts
    m.base = with_bits(hoisted->second.base, 64);
    if (!fits_i32(disp + hoisted->second.disp)) isel_fail("an address displacement out of 32 bits", index);
    m.disp = static_cast<int32_t>(disp + hoisted->second.disp);
    if (hoisted->second.has_index) {
      m.has_index = true;
      m.index = with_bits(hoisted->second.index, 64);
      m.scale = static_cast<uint8_t>(size);
    }
    return m;
  }
  m.disp = static_cast<int32_t>(disp);
  if (terms.empty()) return m;
  std::sort(terms.begin(), terms.end(), [](const UOp& a, const UOp& b) { return a.get() < b.get(); });
  std::vector<const UOpNode*> key;
  for (const UOp& t : terms) key.push_back(t.get());
  auto cached = sum_cache_.find(key);
  Reg idx;
  if (cached != sum_cache_.end()) {
    idx = cached->second;
  } else {
    idx = sum_terms(terms);
    if (!(size == 1 || size == 2 || size == 4 || size == 8)) {
      Reg scaled = cx.new_gpr();
      cx.emit(Mn::imul, {op_reg(scaled), op_reg(with_bits(idx, 64)), op_imm(size)});
      idx = scaled;
    }
    sum_cache_.emplace(key, idx);
  }
  m.scale = static_cast<uint8_t>(size == 1 || size == 2 || size == 4 || size == 8 ? size : 1);
  m.has_index = true;
  m.index = with_bits(idx, 64);
  return m;
}

int32_t ScalarSelector::branch_unless_gate(const UOp& index) {
  if (index.op() != Ops::INDEX) isel_fail("a gate belongs to an INDEX", index);
  if (index.src().size() < 3) return -1;
  int32_t label = cx.new_label();
  branch_unless(condition(index.src(2)), label);
  return label;
}

// The C renderer's store: `if (gate) data[offset] = (storage type)value`, the core guard already emitted.
void ScalarSelector::store(const UOp& st) {
  const UOp& index = st.src(0);
  DType d = indexed_buffer(index).dtype().scalar();
  uint16_t bits = static_cast<uint16_t>(d.itemsize() * 8);
  Mem m = element(index, bits);
  int32_t skip = branch_unless_gate(index);
  store_value(st, m);
  if (skip >= 0) cx.place_label(skip);
}

void ScalarSelector::acc_init(const UOp& reduce) {
  if (reduce.op() != Ops::REDUCE) isel_fail("ACC_INIT of a node that is not a REDUCE", reduce);
  DType d = reduce.dtype();
  // not remat: the register is redefined by every update
  cx.define(reduce, constant_reg(d, accumulator_start(reduce.arg_as<ReduceArg>().op, d.scalar()), false));
}

void ScalarSelector::acc_update(const UOp& reduce) {
  Ops op = reduce.arg_as<ReduceArg>().op;
  DType d = reduce.dtype();
  Reg acc = cx.reg_of(reduce);
  const UOp& term = reduce.src(0);
  if (d.is_float()) {
    combine_into(op, d, acc, scalar(term), is_half_dtype(d) && op != Ops::MAX);
    return;
  }
  // integer and bool terms may be immediates
  uint16_t w = op_bits(d);
  if (auto i = imm(term, w); i && (op == Ops::ADD || (op == Ops::MUL && d.is_bool()))) {
    Mn mn = d.is_bool() ? (op == Ops::ADD ? Mn::or_ : Mn::and_) : Mn::add;
    cx.emit(mn, {op_reg(with_bits(acc, w)), *i});
    return;
  }
  combine_into(op, d, acc, d.is_bool() ? scalar(term) : ext(term, w), false);
}

// ---------------------------------------------------------------------------------------------------------------

MachineFunction select_instructions(const std::string& name, const LoweredKernel& kernel,
                                    const std::vector<Statement>& statements, const IselOptions& options) {
  if (!kernel.sink) throw std::invalid_argument("x86 isel: the kernel has no SINK");
  MachineFunction mf;
  mf.name = name;
  IselContext cx(mf, options);
  ScalarSelector sel(cx, kernel, statements);
  sel.run();
  return mf;
}

}  // namespace doorbell::x86
