// Instruction selection for vector values (compiler/x86/isel_context.h, the functions at its end): the bits of the C
// renderer's vector code (compiler/c_renderer.cpp vector_value, vector_accumulate, as_vector, vector_max, fused),
// with AVX2/FMA VEX forms for xmm and ymm and AVX-512 EVEX forms for zmm. The choices and their sources are in
// firmware-notes/x86-vector.md.
#include <bit>
#include <cmath>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "compiler/x86/isel_context.h"
#include "ir/printer.h"
#include "ir/reduce_identity.h"

namespace doorbell::x86 {
namespace {

// vcmpps predicates (firmware-notes/x86-vector.md §2): C's < and == are false on NaN, != is true.
constexpr int64_t kCmpEqOq = 0x00, kCmpUnordQ = 0x03, kCmpNeqUq = 0x04, kCmpNltUs = 0x05, kCmpLtOq = 0x11;
// vpcmpd / vpcmpud predicates (§2): EQ, LT, NE.
constexpr int64_t kIntEq = 0, kIntLt = 1, kIntNe = 4;
// vroundps / vrndscaleps: round toward zero (bits 1:0 = 11), the immediate's mode (bit 2 = 0), no precision
// exception (bit 3); vrndscaleps' scale bits 7:4 = 0 (§6).
constexpr int64_t kRoundTrunc = 0x0B;
constexpr uint32_t kNanBits = 0x7FC00000;  // __builtin_nanf(""): vector_max's NaN

// A vector load read by one node, not emitted yet: its reader takes the memory operand
// (firmware-notes/x86-vector.md §10).
struct PendingLoad {
  Mem mem;
  size_t at = 0;  // where in MachineFunction::code its vmovups goes when the reader cannot take memory
};

// A vector comparison not emitted yet (firmware-notes/x86-vector.md §4): a WHERE reading it selects with its k
// register directly, or becomes vminps / vmaxps; any other reader gets the 0 / -1 vector made where it reads it.
struct PendingCompare {
  Reg a, b;     // its operands, read where the comparison was (SSA: they hold the same values at every reader)
  size_t at = 0;  // code position of the comparison: a 0 / -1 vector made with no label since is kept for later readers
};

// The selector's state across statements (IselContext::vector_state).
struct VectorState {
  // float vector products read by one node, not emitted yet: an ADD or a sum's update fuses them
  std::unordered_set<const UOpNode*> pending_products;
  std::unordered_map<const UOpNode*, PendingLoad> pending_loads;
  std::unordered_map<const UOpNode*, PendingCompare> pending_compares;
  // AVX-512: bool OR / AND of pending compares (or of such), not emitted yet: a WHERE reading one selects twice under
  // the compares' k registers; any other reader gets the 0 / -1 vector made where it reads it. The code position as
  // PendingCompare::at.
  std::unordered_map<const UOpNode*, size_t> pending_logic;
};

[[noreturn]] void fail(const std::string& what, const UOp& u) {
  throw std::invalid_argument("x86 isel: " + what + ": " + print_node(u));
}

bool is_f32(DType d) { return d.scalar_type == ScalarType::Float32; }
bool is_u32(DType d) { return d.scalar_type == ScalarType::UInt32; }

class VectorSelector {
 public:
  explicit VectorSelector(IselContext& cx) : cx_(cx), w_(cx.vector_bits), evex_(cx.evex) {
    if (!cx.vector_state) cx.vector_state = std::make_shared<VectorState>();
    st_ = static_cast<VectorState*>(cx.vector_state.get());
  }

  // ---------------------------------------------------------------- statements
  void value(const UOp& u) {
    check_vector(u.dtype(), u);
    DType d = u.dtype();
    if (u.op() == Ops::LOAD) return load(u);
    const UOp& x0 = u.src(0);
    if (u.op() == Ops::BITCAST) {
      if (x0.dtype().lanes != d.lanes) fail("a BITCAST between different lane counts", u);
      return cx_.define(u, vec(x0, DType(x0.dtype().scalar_type, d.lanes), u));
    }
    if (u.op() == Ops::CAST) {
      if (x0.dtype().lanes == 1) return cx_.define(u, broadcast(x0, d, u));
      if (x0.dtype().lanes != d.lanes) fail("a CAST between different lane counts", u);
      return cx_.define(u, convert(get(x0), x0.dtype().scalar(), d.scalar(), u));
    }
    // a float product read by one node only waits for it: a sum fuses it (vector_value's `fused`)
    if (u.op() == Ops::MUL && is_f32(d) && cx_.uses(u) == 1) {
      st_->pending_products.insert(u.get());
      return;
    }
    // (a sum reading one product twice counts it twice in the C renderer's uses: never fused)
    if (u.op() == Ops::ADD && is_f32(d) && !(u.src(0) == u.src(1)))
      for (size_t i = 0; i < 2; i++) {
        const UOp& m = u.src(i);
        if (m.op() == Ops::MUL && m.dtype() == d && cx_.uses(m) == 1) {
          Reg addend = vec(u.src(1 - i), d, u);
          Reg r = new_vec();
          fma_into(r, m, addend, true);
          return cx_.define(u, r);
        }
      }
    if (evex_ && (u.op() == Ops::OR || u.op() == Ops::AND) && d.is_bool() && deferred_mask(x0) &&
        deferred_mask(u.src(1))) {
      st_->pending_logic[u.get()] = cx_.mf.code.size();
      return;
    }
    if (u.op() == Ops::CMPLT || u.op() == Ops::CMPNE || u.op() == Ops::CMPEQ) {  // made where it is read
      DType od(x0.dtype().scalar_type, d.lanes);
      Reg p = vec(x0, od, u), q = vec(u.src(1), od, u);
      st_->pending_compares[u.get()] = PendingCompare{p, q, cx_.mf.code.size()};
      return;
    }
    cx_.define(u, alu(u));
  }

  void acc_init(const UOp& reduce) {
    check_vector(reduce.dtype(), reduce);
    DType d = reduce.dtype().scalar();
    if (!(is_f32(d) || d.scalar_type == ScalarType::Int32 || is_u32(d) || d.is_bool()))
      fail("a vector accumulator of " + d.name() + "; expected float32, int32, uint32 or bool lanes", reduce);
    uint32_t bits = scalar_bits(d, accumulator_start(reduce.arg_as<ReduceArg>().op, d));
    // not remat: the updates redefine this register
    Reg r = new_vec();
    if (bits == 0) zero_into(r);
    else emit(Mn::vmovups, {op_reg(r), op_mem(splat(bits))});
    cx_.define(reduce, r);
  }

  void acc_update(const UOp& reduce) {
    Ops op = reduce.arg_as<ReduceArg>().op;
    const UOp& x = reduce.src(0);
    DType d = reduce.dtype();
    if (d.lanes == 1) return fold_lanes(reduce, op);
    check_vector(d, reduce);
    Reg acc = cx_.reg_of(reduce);
    if (op == Ops::ADD && is_f32(d) && x.op() == Ops::MUL && x.dtype() == d) {  // vector_accumulate's `fused`
      fma_into(acc, x, acc, false);
      return;
    }
    DType s = d.scalar();
    switch (op) {  // the term is the second source: a load read only here is its memory operand
      case Ops::ADD:
        if (s.is_bool()) bitwise_into(acc, Mn::vpor, Mn::vpord, acc, rm(x, d, reduce));
        else emit(is_f32(s) ? Mn::vaddps : Mn::vpaddd, {op_reg(acc), op_reg(acc), rm(x, d, reduce)});
        return;
      case Ops::MUL:
        if (s.is_bool()) bitwise_into(acc, Mn::vpand, Mn::vpandd, acc, rm(x, d, reduce));
        else emit(is_f32(s) ? Mn::vmulps : Mn::vpmulld, {op_reg(acc), op_reg(acc), rm(x, d, reduce)});
        return;
      case Ops::MAX: return max_into(acc, s, acc, vec(x, d, reduce), true);
      default: fail("a vector accumulator of op " + std::string(op_name(op)) + "; expected ADD, MUL or MAX", reduce);
    }
  }

  void store(const UOp& u) {
    const UOp& index = u.src(0);
    const UOp& x = u.src(1);
    DType et = x.dtype().scalar();
    if (!(is_f32(et) || et.scalar_type == ScalarType::Int32 || is_u32(et)))
      fail("a vector store of " + x.dtype().name() + "; expected float32, int32 or uint32 lanes", u);
    Reg v = vec(x, DType(et.scalar_type, static_cast<uint16_t>(w_ / 32)), u);
    Mem m = cx_.element(index, w_);
    int32_t skip = cx_.branch_unless_gate(index);
    emit(Mn::vmovups, {op_mem(m), op_reg(v)});
    if (skip >= 0) cx_.place_label(skip);
  }

 private:
  // ---------------------------------------------------------------- helpers
  Inst& emit(Mn op, std::initializer_list<Operand> o) { return cx_.emit(op, o); }
  Reg new_vec() { return cx_.new_vec(w_); }
  uint16_t lanes() const { return static_cast<uint16_t>(w_ / 32); }

  void check_vector(DType d, const UOp& u) const {
    if (d.lanes * 32 != w_)
      fail(std::to_string(d.lanes) + " lanes of " + d.scalar().name() + "; expected " + std::to_string(w_ / 32) +
               " lanes of 32 bits (" + std::to_string(w_) + "-bit registers)", u);
    switch (d.scalar_type) {
      case ScalarType::Float32: case ScalarType::Int32: case ScalarType::UInt32: case ScalarType::Bool: return;
      default: fail("a vector of " + d.scalar().name() + "; expected float32, int32, uint32 or bool lanes", u);
    }
  }

  // A pool constant of the register's width holding `bits` in every lane.
  Mem splat(uint32_t bits) {
    std::string bytes(w_ / 8, '\0');
    for (size_t i = 0; i < bytes.size(); i += 4) std::memcpy(&bytes[i], &bits, 4);
    return cx_.constant(bytes, w_ / 8, w_);
  }
  Reg splat_reg(uint32_t bits) {
    Reg r = new_vec();
    if (bits == 0) {
      zero_into(r);
    } else {
      emit(Mn::vmovups, {op_reg(r), op_mem(splat(bits))}).remat = true;
    }
    return r;
  }
  void zero_into(Reg r) {
    // VEX vxorps needs no AVX-512; zmm takes the EVEX integer form (AVX512F)
    emit(evex_ ? Mn::vpxord : Mn::vxorps, {op_reg(r), op_reg(r), op_reg(r)});
  }
  // AVX2 has VEX vpand/vpor/vpxor for ymm; zmm needs the EVEX dword forms.
  void bitwise_into(Reg d, Mn vex, Mn evex, Reg a, Operand b) { emit(evex_ ? evex : vex, {op_reg(d), op_reg(a), b}); }
  Reg bitwise(Mn vex, Mn evex, Reg a, Operand b) {
    Reg r = new_vec();
    bitwise_into(r, vex, evex, a, b);
    return r;
  }

  // The register of a vector value; a pending product is emitted now, a pending load where it was deferred.
  Reg get(const UOp& x) {
    if (auto it = st_->pending_loads.find(x.get()); it != st_->pending_loads.end()) {
      PendingLoad p = it->second;
      st_->pending_loads.erase(it);
      Reg r = new_vec();
      Inst load;
      load.op = Mn::vmovups;
      load.n = 2;
      load.o[0] = op_reg(r);
      load.o[1] = op_mem(p.mem);
      cx_.mf.code.insert(cx_.mf.code.begin() + static_cast<std::ptrdiff_t>(p.at), load);
      for (auto& [node, q] : st_->pending_loads)
        if (q.at >= p.at) q.at++;
      cx_.define(x, r);
    }
    if (auto it = st_->pending_compares.find(x.get()); it != st_->pending_compares.end()) {
      PendingCompare c = it->second;
      Reg r = compare(x, DType(x.src(0).dtype().scalar_type, x.dtype().lanes), c.a, c.b);
      // made in the comparison's own block (no label since): it dominates every later reader, which keeps it
      if (!has_label_since(c.at)) {
        st_->pending_compares.erase(it);
        cx_.define(x, r);
      }
      return r;
    }
    if (auto it = st_->pending_logic.find(x.get()); it != st_->pending_logic.end()) {
      size_t at = it->second;
      Reg r = alu(x);  // its operands' vectors made here, then vpord / vpandd
      if (!has_label_since(at)) {
        st_->pending_logic.erase(x.get());
        cx_.define(x, r);
      }
      return r;
    }
    if (st_->pending_products.erase(x.get())) {
      Reg a = vec(x.src(0), x.dtype(), x);
      Operand b = rm(x.src(1), x.dtype(), x);
      Reg r = new_vec();
      emit(Mn::vmulps, {op_reg(r), op_reg(a), b});
      cx_.define(x, r);
    }
    return cx_.reg_of(x);
  }

  // A vector operand that may be memory: a pending load whose address still reads the same data here (no store,
  // label, jump or call since, and its address registers unchanged) is the memory operand itself.
  Operand rm(const UOp& x, DType vt, const UOp& user) {
    auto it = st_->pending_loads.find(x.get());
    if (it == st_->pending_loads.end() || !still_valid(it->second)) return op_reg(vec(x, vt, user));
    Mem m = it->second.mem;
    st_->pending_loads.erase(it);
    return op_mem(m);
  }
  bool still_valid(const PendingLoad& p) const { return reads_same_data(p.mem, p.at, nullptr); }
  bool deferred_mask(const UOp& x) const {
    return st_->pending_compares.count(x.get()) != 0 || st_->pending_logic.count(x.get()) != 0;
  }
  // AVX-512: cond ? yes : no for a deferred cond, under k registers: a compare's own; c1 | c2 as
  // c1 ? yes : (c2 ? yes : no), c1 & c2 as c1 ? (c2 ? yes : no) : no (each lane takes the same value).
  Reg select_under(const UOp& c, Reg yes, Reg no) {
    if (auto it = st_->pending_compares.find(c.get()); it != st_->pending_compares.end()) {
      PendingCompare cmp = it->second;
      Reg k = compare_mask(c, DType(c.src(0).dtype().scalar_type, c.dtype().lanes), cmp.a, cmp.b);
      Reg r = new_vec();
      Inst& i = emit(Mn::vpblendmd, {op_reg(r), op_reg(no), op_reg(yes)});
      i.masked = true;
      i.mask = k;
      return r;
    }
    if (st_->pending_logic.count(c.get())) {
      if (c.op() == Ops::OR) return select_under(c.src(0), yes, select_under(c.src(1), yes, no));
      return select_under(c.src(0), select_under(c.src(1), yes, no), no);
    }
    Reg cond = get(c), k = cx_.new_mask(), r = new_vec();
    emit(Mn::vpmovd2m, {op_reg(k), op_reg(cond)});
    Inst& i = emit(Mn::vpblendmd, {op_reg(r), op_reg(no), op_reg(yes)});
    i.masked = true;
    i.mask = k;
    return r;
  }
  bool has_label_since(size_t at) const {
    for (size_t k = at; k < cx_.mf.code.size(); k++)
      if (cx_.mf.code[k].op == Mn::LABEL) return true;
    return false;
  }

  // Whether [mem], read at code position `at`, still reads the same data at the end of the code: no store, label,
  // jump or call since, and its address registers not redefined. `also`: a register nothing since may mention.
  bool reads_same_data(const Mem& mem, size_t at, const Reg* also) const {
    const std::vector<Inst>& code = cx_.mf.code;
    for (size_t k = at; k < code.size(); k++) {
      const Inst& i = code[k];
      switch (i.op) {
        case Mn::LABEL: case Mn::CALL_EXTERN: case Mn::call: case Mn::ret: case Mn::jmp: case Mn::je: case Mn::jne:
        case Mn::jl: case Mn::jle: case Mn::jg: case Mn::jge: case Mn::jb: case Mn::jbe: case Mn::ja: case Mn::jae:
        case Mn::jp: case Mn::jnp: case Mn::js: case Mn::jns:
          return false;
        default: break;
      }
      if (i.n > 0 && i.o[0].kind == Operand::Kind::MEM) return false;  // a store
      Role roles[4];
      operand_roles(i, roles);
      for (int o = 0; o < i.n; o++) {
        const Operand& op = i.o[o];
        if (also && ((op.kind == Operand::Kind::REG && op.reg == *also) ||
                     (op.kind == Operand::Kind::MEM && ((op.mem.has_base && op.mem.base == *also) ||
                                                        (op.mem.has_index && op.mem.index == *also)))))
          return false;
        if (roles[o] != Role::DEF && roles[o] != Role::USE_DEF) continue;
        if (op.kind != Operand::Kind::REG) continue;
        if ((mem.has_base && op.reg == mem.base) || (mem.has_index && op.reg == mem.index)) return false;
      }
    }
    return true;
  }

  // A broadcast of a scalar float32 / int32 / uint32 LOAD read only by it: the scalar selector's load
  // (vmovss xmm, dword [m] or mov r32, dword [m]) becomes vbroadcastss / vpbroadcastd r, dword [m] in its place, when
  // the memory still holds the same data here and nothing else read the scalar register.
  std::optional<Reg> broadcast_load(const UOp& x) {
    if (x.op() != Ops::LOAD || x.src(0).src().size() != 2 || cx_.uses(x) != 1 || !cx_.defined(x)) return std::nullopt;
    Reg s = cx_.reg_of(x);
    std::vector<Inst>& code = cx_.mf.code;
    for (size_t k = code.size(); k-- > 0;) {
      Inst& i = code[k];
      bool defines_s = i.n == 2 && i.o[0].kind == Operand::Kind::REG && i.o[0].reg == s &&
                       i.o[1].kind == Operand::Kind::MEM && i.o[1].mem.bits == 32 && !i.masked &&
                       ((i.op == Mn::vmovss && s.cls == RegClass::VEC) ||
                        (i.op == Mn::mov && s.cls == RegClass::GPR && i.o[0].reg.bits == 32));
      if (!defines_s) {
        if (i.op == Mn::LABEL || k + 64 < code.size()) return std::nullopt;  // not in this block's recent code
        continue;
      }
      Mem m = i.o[1].mem;
      if (!reads_same_data(m, k + 1, &s)) return std::nullopt;
      Reg r = new_vec();
      Inst b;
      b.op = s.cls == RegClass::VEC ? Mn::vbroadcastss : Mn::vpbroadcastd;
      b.n = 2;
      b.o[0] = op_reg(r);
      b.o[1] = op_mem(m);
      i = b;
      return r;
    }
    return std::nullopt;
  }

  // An operand of a vector op as a vector of vt (as_vector): a vector value, or a scalar broadcast.
  Reg vec(const UOp& x, DType vt, const UOp& user) {
    if (x.dtype().lanes > 1) {
      if (x.dtype().lanes != vt.lanes)
        fail("an operand of " + std::to_string(x.dtype().lanes) + " lanes; expected " + std::to_string(vt.lanes), user);
      return get(x);
    }
    return broadcast(x, vt, user);
  }

  // dst = a * b + addend, rounded once (§8): vfmadd231ps (dst = src2 * src3 + dst). `fresh`: dst is a new register
  // and addend another (a tied three-address form), else dst is the addend (a sum's accumulator).
  void fma_into(Reg dst, const UOp& mul, Reg addend, bool fresh) {
    st_->pending_products.erase(mul.get());  // fused here: never emitted on its own
    for (size_t k = 0; k < 2 && fresh && !(mul.src(0) == mul.src(1)); k++) {
      const UOp& x = mul.src(k);
      if (x.dtype().lanes == 1 || cx_.uses(x) != 1 || pending_load(x)) continue;
      // a * b + addend with a factor read only here: vfmadd213ps (dst = dst * src2 + src3) ties dst to that factor,
      // whose register is free after it, where 231 would copy the addend (often a constant kept across the loop)
      // into dst first. The product is exact before the one rounding, so its operand order does not matter.
      Reg t = get(x);
      Reg o = vec(mul.src(1 - k), mul.dtype(), mul);
      Inst& i = emit(Mn::vfmadd213ps, {op_reg(dst), op_reg(t), op_reg(o), op_reg(addend)});
      i.tied = true;
      return;
    }
    Reg a = vec(mul.src(0), mul.dtype(), mul);
    Operand b = rm(mul.src(1), mul.dtype(), mul);
    if (fresh) {
      Inst& i = emit(Mn::vfmadd231ps, {op_reg(dst), op_reg(addend), op_reg(a), b});
      i.tied = true;
    } else {
      emit(Mn::vfmadd231ps, {op_reg(dst), op_reg(a), b});
    }
  }

  // A scalar constant's 32 bits as a lane of `d` (bool: the 0 / -1 mask).
  static uint32_t scalar_bits(DType d, const ConstValue& v) {
    if (d.is_bool()) {
      bool t = std::visit([](auto x) { return x != 0; }, v);
      return t ? 0xFFFFFFFFu : 0u;
    }
    if (is_f32(d)) {
      double x = std::visit([](auto y) { return static_cast<double>(y); }, v);
      return std::bit_cast<uint32_t>(static_cast<float>(x));
    }
    int64_t x = std::visit([](auto y) { return static_cast<int64_t>(y); }, v);
    return static_cast<uint32_t>(x);
  }

  // A scalar x of float32, int32, uint32 or bool as a vector of vt: converted to vt's element type first, a bool
  // target as -(x != 0) (as_vector).
  Reg broadcast(const UOp& x, DType vt, const UOp& user) {
    DType s = x.dtype();
    DType t = vt.scalar();
    if (!(is_f32(s) || s.scalar_type == ScalarType::Int32 || is_u32(s) || s.is_bool()))
      fail("a broadcast of a " + s.name() + " scalar; expected float32, int32, uint32 or bool", user);
    if (x.is_const()) {
      // folded where the conversion is the one the vector code computes: exact, or a float in the target's range
      ConstValue v = x.const_value();
      std::optional<uint32_t> bits;
      if (s == t || t.is_bool() || is_f32(t)) {
        if (t.is_bool()) bits = scalar_bits(t, v);
        else if (s.is_bool()) bits = scalar_bits(t, ConstValue{int64_t{std::get<bool>(v) ? 1 : 0}});
        else bits = scalar_bits(t, v);
      } else if (!is_f32(s)) {
        bits = scalar_bits(t, v);  // int32 <-> uint32, bool -> int: the same bits as the C conversion
        if (s.is_bool()) bits = std::get<bool>(v) ? 1u : 0u;
      } else {
        double f = std::get<double>(v);
        double lo = is_u32(t) ? 0.0 : -2147483648.0, hi = is_u32(t) ? 4294967296.0 : 2147483648.0;
        if (f > lo - 1 && f < hi) bits = static_cast<uint32_t>(static_cast<int64_t>(std::trunc(f)));
      }
      if (bits) return splat_reg(*bits);
      return convert(splat_reg(scalar_bits(s, v)), s, t, user);
    }
    if (!s.is_bool())
      if (std::optional<Reg> r = broadcast_load(x)) return s == t ? *r : convert(*r, s, t, user);
    Reg r = new_vec();
    if (is_f32(s)) {
      Reg f = cx_.scalar(x);
      emit(Mn::vbroadcastss, {op_reg(r), op_reg(with_bits(f, 128))});
    } else {
      Reg g = with_bits(cx_.scalar_gpr32(x), 32);
      if (s.is_bool()) {  // 0/1 -> 0/-1
        Reg m = cx_.new_gpr(32);
        emit(Mn::mov, {op_reg(m), op_reg(g)});
        emit(Mn::neg, {op_reg(m)});
        g = m;
      }
      if (evex_) {
        emit(Mn::vpbroadcastd, {op_reg(r), op_reg(g)});  // EVEX: from a GPR (AVX512F)
      } else {
        Reg t1 = cx_.new_vec(128);
        emit(Mn::vmovd, {op_reg(t1), op_reg(g)});
        emit(Mn::vpbroadcastd, {op_reg(r), op_reg(t1)});
      }
    }
    return s == t ? r : convert(r, s, t, user);
  }

  // A vector of element type s converted to t as the C renderer's CAST does: bool -> x: convertvector(-mask);
  // x -> bool: x != 0; int32 <-> uint32: the same bits; float <-> integers as vcvt* (uint32 through exact sequences
  // without AVX-512: firmware-notes/x86-vector.md §5).
  Reg convert(Reg v, DType s, DType t, const UOp& user) {
    s = s.scalar();
    t = t.scalar();
    if (s == t) return v;
    if (t.is_bool()) return nonzero(v, s);
    if (s.is_bool()) {
      Reg r = new_vec();
      // -mask is 0 or 1; as a float, 0 or 1.0f: the mask ands with 1.0f's bits
      if (is_f32(t)) bitwise_into(r, Mn::vpand, Mn::vpandd, v, op_mem(splat(0x3F800000u)));
      else emit(Mn::vpsrld, {op_reg(r), op_reg(v), op_imm(31)});
      return r;
    }
    if (!is_f32(s) && !is_f32(t)) return v;  // int32 <-> uint32
    Reg r = new_vec();
    if (is_f32(t)) {
      if (!is_u32(s)) {
        emit(Mn::vcvtdq2ps, {op_reg(r), op_reg(v)});
      } else if (evex_) {
        emit(Mn::vcvtudq2ps, {op_reg(r), op_reg(v)});
      } else {
        // hi16 * 2^16 + lo16 with one rounding: (2^39 + hi*2^16) - (2^39 + 2^23) is exact, + (2^23 + lo) rounds once
        Reg lo = bitwise(Mn::vpand, Mn::vpandd, v, op_mem(splat(0x0000FFFFu)));
        bitwise_into(lo, Mn::vpor, Mn::vpord, lo, op_mem(splat(0x4B000000u)));
        Reg hi = new_vec();
        emit(Mn::vpsrld, {op_reg(hi), op_reg(v), op_imm(16)});
        bitwise_into(hi, Mn::vpor, Mn::vpord, hi, op_mem(splat(0x53000000u)));
        emit(Mn::vsubps, {op_reg(hi), op_reg(hi), op_mem(splat(0x53000080u))});
        emit(Mn::vaddps, {op_reg(r), op_reg(hi), op_reg(lo)});
      }
      return r;
    }
    if (!is_u32(t)) {
      emit(Mn::vcvttps2dq, {op_reg(r), op_reg(v)});
    } else if (evex_) {
      emit(Mn::vcvttps2udq, {op_reg(r), op_reg(v)});
    } else {
      // below 2^31 vcvttps2dq is exact; from 2^31 the value less 2^31 (exact there) converts, its top bit set back
      Reg lo = new_vec(), hi = new_vec(), big = new_vec();
      Mn cvt = Mn::vcvttps2dq;
      emit(cvt, {op_reg(lo), op_reg(v)});
      emit(Mn::vsubps, {op_reg(hi), op_reg(v), op_mem(splat(0x4F000000u))});
      emit(cvt, {op_reg(hi), op_reg(hi)});
      bitwise_into(hi, Mn::vpxor, Mn::vpxord, hi, op_mem(splat(0x80000000u)));
      emit(Mn::vcmpps, {op_reg(big), op_reg(v), op_mem(splat(0x4F000000u)), op_imm(kCmpNltUs)});
      emit(Mn::vblendvps, {op_reg(r), op_reg(lo), op_reg(hi), op_reg(big)});
    }
    (void)user;
    return r;
  }

  // A compare's k register as a 0 / -1 vector (vpmovm2d, AVX512DQ).
  Reg from_mask(Reg k) {
    Reg r = new_vec();
    emit(Mn::vpmovm2d, {op_reg(r), op_reg(k)});
    return r;
  }

  // x != 0 as a mask; a float NaN is != 0, -0.0 is not.
  Reg nonzero(Reg v, DType s) {
    if (evex_) {
      Reg k = cx_.new_mask();
      if (is_f32(s)) emit(Mn::vcmpps, {op_reg(k), op_reg(v), op_mem(splat(0)), op_imm(kCmpNeqUq)});
      else emit(Mn::vptestmd, {op_reg(k), op_reg(v), op_reg(v)});
      return from_mask(k);
    }
    Reg r = new_vec();
    if (is_f32(s)) {
      emit(Mn::vcmpps, {op_reg(r), op_reg(v), op_mem(splat(0)), op_imm(kCmpNeqUq)});
    } else {  // (x == 0) == 0
      Reg z = splat_reg(0), e = new_vec();
      emit(Mn::vpcmpeqd, {op_reg(e), op_reg(v), op_reg(z)});
      emit(Mn::vpcmpeqd, {op_reg(r), op_reg(e), op_reg(z)});
    }
    return r;
  }

  // d = vector_max(a, b) (§3): NaN if either is NaN, else a < b ? b : a. vmaxps(src1, src2) gives src1 > src2 ? src1 :
  // src2, so vmaxps(b, a) is a < b ? b : a (ties and -0/+0 give a); the NaN lanes are replaced by 0x7FC00000.
  // Integers: C's a < b ? b : a on the element type (bool lanes are int32 masks there).
  // `a_is_acc`: a is a vector MAX accumulator, which starts at -inf and is only ever written here, so its only NaN
  // is 0x7FC00000 itself: vmaxps(b, a) keeps it (src2 on NaN) and only b's NaN lanes need replacing. The compare then
  // reads b alone (a spilled accumulator is read once per update, and the compare does not wait for it).
  void max_into(Reg d, DType s, Reg a, Reg b, bool a_is_acc = false) {
    if (!is_f32(s)) {
      emit(is_u32(s) ? Mn::vpmaxud : Mn::vpmaxsd, {op_reg(d), op_reg(a), op_reg(b)});
      return;
    }
    if (evex_) {
      Reg k = cx_.new_mask();
      emit(Mn::vcmpps, {op_reg(k), op_reg(a_is_acc ? b : a), op_reg(b), op_imm(kCmpUnordQ)});
      Reg m = new_vec();
      emit(Mn::vmaxps, {op_reg(m), op_reg(b), op_reg(a)});
      Inst& i = emit(Mn::vblendmps, {op_reg(d), op_reg(m), op_mem(splat(kNanBits))});
      i.masked = true;
      i.mask = k;
      return;
    }
    Reg un = new_vec(), m = new_vec();
    emit(Mn::vcmpps, {op_reg(un), op_reg(a_is_acc ? b : a), op_reg(b), op_imm(kCmpUnordQ)});
    emit(Mn::vmaxps, {op_reg(m), op_reg(b), op_reg(a)});
    Reg nan = splat_reg(kNanBits);
    emit(Mn::vblendvps, {op_reg(d), op_reg(m), op_reg(nan), op_reg(un)});
  }

  // A lane-wise shift amount known at compile time: a broadcast CONST in [0, 32).
  static std::optional<int64_t> constant_amount(const UOp& x) {
    const UOp* c = &x;
    if (x.op() == Ops::CAST && x.dtype().lanes > 1) c = &x.src(0);
    if (!c->is_const() || c->dtype().lanes != 1 || c->dtype().is_bool() || c->dtype().is_float()) return std::nullopt;
    int64_t v = std::get<int64_t>(c->const_value());
    if (v < 0 || v >= 32) return std::nullopt;
    return v;
  }

  // AVX-512: the comparison's lanes as a k register.
  Reg compare_mask(const UOp& u, DType od, Reg a, Reg b) {
    Ops op = u.op();
    DType s = od.scalar();
    Reg k = cx_.new_mask();
    if (is_f32(s)) {
      int64_t p = op == Ops::CMPLT ? kCmpLtOq : op == Ops::CMPEQ ? kCmpEqOq : kCmpNeqUq;
      emit(Mn::vcmpps, {op_reg(k), op_reg(a), op_reg(b), op_imm(p)});
    } else {
      int64_t p = op == Ops::CMPLT ? kIntLt : op == Ops::CMPEQ ? kIntEq : kIntNe;
      emit(is_u32(s) ? Mn::vpcmpud : Mn::vpcmpd, {op_reg(k), op_reg(a), op_reg(b), op_imm(p)});
    }
    return k;
  }

  // WHERE(a < b, a, b) and WHERE(a < b, b, a), the clamps of the exp decomposition: vminps(a, b) is a < b ? a : b and
  // vmaxps(b, a) is b > a ? b : a, with the second source on NaN and on -0/+0 ties, as the C selects give
  // (firmware-notes/x86-vector.md §3); vpmin/vpmax for int32 and uint32 lanes. Nullopt when the WHERE is another.
  std::optional<Reg> min_max(const UOp& c, const UOp& w, const PendingCompare& cmp) {
    const UOp &p = c.src(0), &q = c.src(1), &yes = w.src(1), &no = w.src(2);
    bool min = yes == p && no == q, max = yes == q && no == p;
    if (!(min || max) || p.dtype().lanes != w.dtype().lanes) return std::nullopt;
    DType s = w.dtype().scalar();
    Mn m;
    if (is_f32(s)) m = min ? Mn::vminps : Mn::vmaxps;
    else if (s.scalar_type == ScalarType::Int32) m = min ? Mn::vpminsd : Mn::vpmaxsd;
    else if (is_u32(s)) m = min ? Mn::vpminud : Mn::vpmaxud;
    else return std::nullopt;
    Reg r = new_vec();
    if (min) emit(m, {op_reg(r), op_reg(cmp.a), op_reg(cmp.b)});
    else emit(m, {op_reg(r), op_reg(cmp.b), op_reg(cmp.a)});
    return r;
  }

  Reg compare(const UOp& u, DType od, Reg a, Reg b) {
    Ops op = u.op();
    DType s = od.scalar();
    bool f = is_f32(s), un = is_u32(s);
    if (evex_) return from_mask(compare_mask(u, od, a, b));
    Reg r = new_vec();
    if (f) {
      int64_t p = op == Ops::CMPLT ? kCmpLtOq : op == Ops::CMPEQ ? kCmpEqOq : kCmpNeqUq;
      emit(Mn::vcmpps, {op_reg(r), op_reg(a), op_reg(b), op_imm(p)});
      return r;
    }
    if (op == Ops::CMPLT) {
      if (un) {  // AVX2 compares are signed: flipping both sign bits orders unsigned values as signed ones
        Mem sign = splat(0x80000000u);
        a = bitwise(Mn::vpxor, Mn::vpxord, a, op_mem(sign));
        b = bitwise(Mn::vpxor, Mn::vpxord, b, op_mem(sign));
      }
      emit(Mn::vpcmpgtd, {op_reg(r), op_reg(b), op_reg(a)});  // a < b is b > a
      return r;
    }
    emit(Mn::vpcmpeqd, {op_reg(r), op_reg(a), op_reg(b)});
    if (op == Ops::CMPNE) bitwise_into(r, Mn::vpxor, Mn::vpxord, r, op_mem(splat(0xFFFFFFFFu)));
    return r;
  }

  Reg alu(const UOp& u) {
    DType d = u.dtype();
    const UOp& x0 = u.src(0);
    Ops op = u.op();
    // the operands' vector type: the result's, or for a comparison its operands' element type (vector_value's od)
    DType od = group::Binary.contains(op) || group::Unary.contains(op) ? DType(x0.dtype().scalar_type, d.lanes) : d;
    if (op == Ops::SHL || op == Ops::SHR) od = d;
    auto a = [&](size_t i) { return vec(u.src(i), od, u); };
    DType s = d.scalar();
    bool f = is_f32(s), b = s.is_bool();
    // the second source may be memory; integer ops commute, so a load read as the first source swaps (float ops
    // keep their order: with two NaNs the first one's payload is the result)
    auto operands = [&](bool commutes) {
      if (commutes && pending_load(u.src(0)) && !pending_load(u.src(1))) return std::pair{a(1), rm(u.src(0), od, u)};
      Reg p = a(0);
      return std::pair{p, rm(u.src(1), od, u)};
    };
    auto bin = [&](Mn m) {
      Reg r = new_vec();
      auto [p, q] = operands(!is_f32(od) && op != Ops::SUB);
      emit(m, {op_reg(r), op_reg(p), q});
      return r;
    };
    // a float product emitted here has other readers: a sum's update may fuse it too and read its operands again,
    // so they stay in registers
    auto product = [&] {
      Reg p = a(0), q = a(1), r = new_vec();
      emit(Mn::vmulps, {op_reg(r), op_reg(p), op_reg(q)});
      return r;
    };
    auto bitwise_op = [&](Mn vex, Mn ev) {
      auto [p, q] = operands(true);
      return bitwise(vex, ev, p, q);
    };
    switch (op) {
      case Ops::ADD: return b ? bitwise_op(Mn::vpor, Mn::vpord) : bin(f ? Mn::vaddps : Mn::vpaddd);
      case Ops::SUB: return b ? bitwise_op(Mn::vpxor, Mn::vpxord) : bin(f ? Mn::vsubps : Mn::vpsubd);
      case Ops::MUL: return b ? bitwise_op(Mn::vpand, Mn::vpandd) : f ? product() : bin(Mn::vpmulld);
      case Ops::FDIV:
        if (!f) fail("FDIV of " + d.name() + "; expected float32 lanes", u);
        return bin(Mn::vdivps);
      case Ops::MAX: {
        Reg p = a(0), q = a(1), r = new_vec();
        max_into(r, s, p, q);
        return r;
      }
      case Ops::NEG: {
        Reg p = a(0);
        if (b) return p;
        if (f) return bitwise(Mn::vxorps, Mn::vpxord, p, op_mem(splat(0x80000000u)));  // the sign bit flipped
        Reg z = splat_reg(0), r = new_vec();
        emit(Mn::vpsubd, {op_reg(r), op_reg(z), op_reg(p)});
        return r;
      }
      case Ops::RECIPROCAL: {
        if (!f) fail("RECIPROCAL of " + d.name() + "; expected float32 lanes", u);
        Reg p = a(0), one = splat_reg(0x3F800000u), r = new_vec();
        emit(Mn::vdivps, {op_reg(r), op_reg(one), op_reg(p)});
        return r;
      }
      case Ops::TRUNC: {
        if (!f) return a(0);
        Operand p = rm(u.src(0), od, u);
        Reg r = new_vec();
        emit(evex_ ? Mn::vrndscaleps : Mn::vroundps, {op_reg(r), p, op_imm(kRoundTrunc)});
        return r;
      }
      case Ops::SQRT: {
        if (!f) fail("SQRT of " + d.name() + "; expected float32 lanes", u);
        Operand p = rm(u.src(0), od, u);
        Reg r = new_vec();
        emit(Mn::vsqrtps, {op_reg(r), p});
        return r;
      }
      case Ops::AND: return bitwise_op(Mn::vpand, Mn::vpandd);
      case Ops::OR: return bitwise_op(Mn::vpor, Mn::vpord);
      case Ops::XOR: return bitwise_op(Mn::vpxor, Mn::vpxord);
      case Ops::SHL: case Ops::SHR: {
        if (f) fail(std::string(op_name(op)) + " of float32 lanes; expected integer lanes", u);
        bool logical = op == Ops::SHL || is_u32(s);
        Mn imm_form = op == Ops::SHL ? Mn::vpslld : logical ? Mn::vpsrld : Mn::vpsrad;
        Mn var_form = op == Ops::SHL ? Mn::vpsllvd : logical ? Mn::vpsrlvd : Mn::vpsravd;
        Reg p = a(0), r = new_vec();
        if (auto n = constant_amount(u.src(1))) {
          emit(imm_form, {op_reg(r), op_reg(p), op_imm(*n)});
        } else {
          Reg q = a(1);
          emit(var_form, {op_reg(r), op_reg(p), op_reg(q)});
        }
        return r;
      }
      case Ops::WHERE: {
        const UOp& c = u.src(0);
        if (c.dtype().lanes > 1 && !c.dtype().is_bool())
          fail("a WHERE condition of " + c.dtype().name() + "; expected bool lanes", u);
        auto pc = st_->pending_compares.find(c.get());
        if (pc != st_->pending_compares.end() && c.op() == Ops::CMPLT && c.src(0).dtype() == d)
          if (std::optional<Reg> r = min_max(c, u, pc->second)) return *r;
        if (evex_ && deferred_mask(c)) {  // the comparisons' k registers select
          Reg yes = vec(u.src(1), d, u), no = vec(u.src(2), d, u);
          return select_under(c, yes, no);
        }
        Reg cond = vec(c, DType(ScalarType::Bool, d.lanes), u);
        Reg yes = vec(u.src(1), d, u), no = vec(u.src(2), d, u), r = new_vec();
        if (evex_) {  // the mask's lanes as a k register select between the two
          Reg k = cx_.new_mask();
          emit(Mn::vpmovd2m, {op_reg(k), op_reg(cond)});
          Inst& i = emit(Mn::vpblendmd, {op_reg(r), op_reg(no), op_reg(yes)});
          i.masked = true;
          i.mask = k;
        } else {  // vblendvps takes src3 where the mask lane's sign bit is set (§4)
          emit(Mn::vblendvps, {op_reg(r), op_reg(no), op_reg(yes), op_reg(cond)});
        }
        return r;
      }
      default: fail("a vector " + std::string(op_name(op)) + "; expected an op the CPU vectorizer makes", u);
    }
  }

  bool pending_load(const UOp& x) const { return st_->pending_loads.count(x.get()) != 0; }

  void load(const UOp& u) {
    DType d = u.dtype();
    if (d.is_bool()) fail("a vector load of bool lanes; expected float32, int32 or uint32", u);
    const UOp& index = u.src(0);
    bool gated = index.src().size() == 3;
    Mem m = cx_.element(index, w_);
    if (!gated && cx_.uses(u) == 1) {  // its one reader may take it as a memory operand
      st_->pending_loads[u.get()] = PendingLoad{m, cx_.mf.code.size()};
      return;
    }
    Reg r = new_vec();
    if (!gated) {
      emit(Mn::vmovups, {op_reg(r), op_mem(m)});
      return cx_.define(u, r);
    }
    // a false gate reads zeros and touches no memory
    zero_into(r);
    int32_t skip = cx_.branch_unless_gate(index);
    emit(Mn::vmovups, {op_reg(r), op_mem(m)});
    if (skip >= 0) cx_.place_label(skip);
    cx_.define(u, r);
  }

  // The lanes of a vector term folded into a scalar accumulator, lane 0 first (c_renderer's ACC_UPDATE; §9).
  void fold_lanes(const UOp& reduce, Ops op) {
    const UOp& x = reduce.src(0);
    check_vector(x.dtype(), reduce);
    DType s = reduce.dtype();
    if (x.dtype().scalar() != s)
      fail("a fold of " + x.dtype().name() + " lanes into a " + s.name() + " accumulator", reduce);
    if (s.is_bool()) fail("a fold of bool lanes; expected float32, int32 or uint32", reduce);
    Reg v = get(x);
    Reg acc = cx_.reg_of(reduce);
    Reg cur = acc;
    for (int c = 0; c < w_ / 128; c++) {
      Reg chunk = with_bits(v, 128);
      if (c > 0) {
        chunk = cx_.new_vec(128);
        if (evex_) emit(Mn::vextractf32x4, {op_reg(chunk), op_reg(v), op_imm(c)});
        else emit(Mn::vextractf128, {op_reg(chunk), op_reg(v), op_imm(c)});
      }
      for (int j = 0; j < 4; j++) {
        Reg lane;
        if (is_f32(s)) {
          lane = chunk;
          if (j > 0) {  // lane j into lane 0
            lane = cx_.new_vec(128);
            emit(Mn::vpermilps, {op_reg(lane), op_reg(chunk), op_imm(j)});
          }
        } else {
          lane = cx_.new_gpr(32);
          if (j == 0) emit(Mn::vmovd, {op_reg(lane), op_reg(chunk)});
          else emit(Mn::vpextrd, {op_reg(lane), op_reg(chunk), op_imm(j)});
        }
        cur = cx_.scalar_combine(op, s, cur, lane);
      }
    }
    // the accumulator keeps its register (a fold inside a loop reads it again next iteration)
    if (is_f32(s)) emit(Mn::vmovaps, {op_reg(with_bits(acc, 128)), op_reg(with_bits(cur, 128))});
    else emit(Mn::mov, {op_reg(acc), op_reg(with_bits(cur, acc.bits))});
    cx_.define(reduce, acc);
  }

  IselContext& cx_;
  uint16_t w_;
  bool evex_;
  VectorState* st_ = nullptr;
};

}  // namespace

void select_vector_value(IselContext& cx, const UOp& u) { VectorSelector(cx).value(u); }
void select_vector_acc_init(IselContext& cx, const UOp& reduce) { VectorSelector(cx).acc_init(reduce); }
void select_vector_acc_update(IselContext& cx, const UOp& reduce) { VectorSelector(cx).acc_update(reduce); }
void select_vector_store(IselContext& cx, const UOp& store) { VectorSelector(cx).store(store); }

}  // namespace doorbell::x86
