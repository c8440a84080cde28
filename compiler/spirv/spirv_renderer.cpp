#include "compiler/spirv/spirv_renderer.h"

#include <cmath>
#include <cstring>
#include <map>
#include <stdexcept>
#include <unordered_map>
#include <vector>

#include "compiler/linearize.h"
#include "compiler/spirv/spirv_kernel_abi.h"
#include "ir/kernel_variables.h"
#include "ir/printer.h"
#include "ir/reduce_identity.h"

namespace doorbell {
namespace {

using spirv::Id;
using spirv::Operand;
using spirv::Op;
using spirv::StorageClass;

[[noreturn]] void fail(const std::string& what, const UOp& u) {
  throw std::invalid_argument("render_spirv: " + what + ": " + print_node(u));
}

// Register kinds: sub-word integers live in 32-bit integers, 16-bit floats in float32.
enum class Kind : uint8_t { Bool, I32, I64, F32, F64 };

bool is_half(DType d) { return d.scalar_type == ScalarType::Float16 || d.scalar_type == ScalarType::BFloat16; }
bool is_f64(DType d) { return d.scalar_type == ScalarType::Float64 || d.scalar_type == ScalarType::WeakFloat; }
int int_bits(DType d) { return d.scalar_type == ScalarType::WeakInt ? 64 : d.bitsize(); }
bool is_signed_int(DType d) { return d.is_int() && !d.is_unsigned(); }

Kind kind_of(DType d, const UOp& u) {
  if (d.lanes != 1) fail("vector dtype " + d.name() + " is not supported", u);
  switch (d.scalar_type) {
    case ScalarType::Bool: return Kind::Bool;
    case ScalarType::Int8: case ScalarType::Int16: case ScalarType::Int32:
    case ScalarType::UInt8: case ScalarType::UInt16: case ScalarType::UInt32: return Kind::I32;
    case ScalarType::Int64: case ScalarType::UInt64: case ScalarType::WeakInt: return Kind::I64;
    case ScalarType::Float16: case ScalarType::BFloat16: case ScalarType::Float32: return Kind::F32;
    case ScalarType::Float64: case ScalarType::WeakFloat: return Kind::F64;
    default: fail("dtype " + d.name() + " has no SPIR-V type", u);
  }
}

class SpirvRenderer {
 public:
  SpirvRenderer(const GpuKernel& k, const SpirvDeviceCaps& caps) : k_(k), caps_(caps) {}

  spirv::Module render(const std::string& name) {
    if (name.empty()) throw std::invalid_argument("render_spirv: a kernel needs a name for its entry point");
    if (!caps_.int64) throw std::invalid_argument("render_spirv: kernel " + name + " needs 64-bit integers for its buffer addresses, but the device lacks shaderInt64");
    name_ = name;
    const std::vector<UOp> nodes = k_.sink.toposort();
    check_types(nodes);
    m_.capability(spirv::Capability::Shader);
    m_.capability(spirv::Capability::PhysicalStorageBufferAddresses);
    m_.capability(spirv::Capability::Int64);
    m_.memory_model(spirv::AddressingModel::PhysicalStorageBuffer64, spirv::MemoryModel::GLSL450);
    glsl_ = m_.ext_inst_import("GLSL.std.450");

    Id void_t = m_.type_void();
    Id fn = m_.begin_function(void_t, m_.type_function(void_t, {}));
    m_.name(fn, name);
    block_ = m_.label();

    // The argument block's address, from the push constant block (spirv_kernel_abi.h).
    Id u64 = type(Kind::I64);
    Id pc_struct = m_.type_struct({u64});
    m_.decorate(pc_struct, spirv::Decoration::Block);
    m_.member_decorate(pc_struct, 0, spirv::Decoration::Offset, {0});
    Id pc_var = m_.global_variable(m_.type_pointer(StorageClass::PushConstant, pc_struct), StorageClass::PushConstant);
    m_.name(pc_var, "db_args");
    interface_.push_back(pc_var);
    Id args_ptr = m_.op(Op::AccessChain, m_.type_pointer(StorageClass::PushConstant, u64),
                        {Operand::id(pc_var), Operand::id(u32c(0))});
    args_ = m_.op(Op::Load, u64, {Operand::id(args_ptr)});

    std::map<int64_t, UOp> params, locals;
    for (const UOp& u : nodes) {
      if (u.op() == Ops::PARAM) {
        const ParamArg& p = u.arg_as<ParamArg>();
        if (p.addrspace == AddrSpace::LOCAL) locals.emplace(p.slot, u);
        else if (p.addrspace == AddrSpace::GLOBAL) params.emplace(p.slot, u);
        else if (p.addrspace != AddrSpace::ALU) fail("only global and local buffers and variables can be rendered", u);
      }
      if (u.op() == Ops::SPECIAL) special(u);  // built-ins are read in the entry block, which dominates every use
    }
    for (const auto& [slot, p] : locals) {
      Id elem = type(kind_of(p.dtype(), p));
      Id arr = m_.type_array(elem, u32c(static_cast<uint32_t>(p.arg_as<ParamArg>().vmax + 1)));
      Id var = m_.global_variable(m_.type_pointer(StorageClass::Workgroup, arr), StorageClass::Workgroup);
      m_.name(var, "db_local" + std::to_string(slot));
      interface_.push_back(var);
      locals_[p.get()] = var;
    }
    for (const auto& [slot, p] : params) names_[p.get()] = argument_word(slot);
    int64_t slots = params.empty() ? 0 : params.rbegin()->first + 1;
    std::vector<UOp> variables = kernel_variables(k_.sink);
    for (size_t i = 0; i < variables.size(); i++) {
      Id wide = argument_word(slots + static_cast<int64_t>(i));
      names_[variables[i].get()] = kind_of(variables[i].dtype(), variables[i]) == Kind::I64
                                       ? wide : m_.op(Op::UConvert, type(Kind::I32), {Operand::id(wide)});
    }

    for (const Statement& s : linearize(k_.sink)) statement(s);
    m_.op_void(Op::Return);
    m_.end_function();

    m_.entry_point(spirv::ExecutionModel::GLCompute, fn, name, interface_);
    m_.execution_mode(fn, spirv::ExecutionMode::LocalSize,
                      {static_cast<uint32_t>(k_.local_size[0]), static_cast<uint32_t>(k_.local_size[1]),
                       static_cast<uint32_t>(k_.local_size[2])});
    // -0, inf and NaN kept exact where the device offers it (float16 values are computed in float32)
    bool preserve32 = used_f32_ && caps_.preserve_nan32, preserve64 = used_f64_ && caps_.preserve_nan64;
    if (preserve32 || preserve64) m_.capability(spirv::Capability::SignedZeroInfNanPreserve);
    if (preserve32) m_.execution_mode(fn, spirv::ExecutionMode::SignedZeroInfNanPreserve, {32});
    if (preserve64) m_.execution_mode(fn, spirv::ExecutionMode::SignedZeroInfNanPreserve, {64});
    return std::move(m_);
  }

 private:
  // ---- types, constants, refusals ----

  void check_types(const std::vector<UOp>& nodes) {
    auto need = [&](bool have, const std::string& type_name, const char* feature, const UOp& u) {
      if (!have)
        throw std::invalid_argument("render_spirv: kernel " + name_ + " uses " + type_name + ", but the device lacks " +
                                    feature + ": " + print_node(u));
    };
    for (const UOp& u : nodes) {
      DType d = u.dtype();
      if (is_f64(d)) need(caps_.float64, d.name(), "shaderFloat64", u);
      if (u.op() != Ops::PARAM || u.arg_as<ParamArg>().addrspace != AddrSpace::GLOBAL) continue;
      switch (d.scalar_type) {
        case ScalarType::Int8: case ScalarType::UInt8: case ScalarType::Bool:
          need(caps_.int8, d.name() + " buffers", "shaderInt8", u);
          need(caps_.storage8, d.name() + " buffers", "storageBuffer8BitAccess", u);
          break;
        case ScalarType::Int16: case ScalarType::UInt16: case ScalarType::Float16: case ScalarType::BFloat16:
          need(caps_.int16, d.name() + " buffers", "shaderInt16", u);
          need(caps_.storage16, d.name() + " buffers", "storageBuffer16BitAccess", u);
          break;
        default: break;
      }
    }
  }

  Id type(Kind k) {
    switch (k) {
      case Kind::Bool: return m_.type_bool();
      case Kind::I32: return m_.type_int(32, false);
      case Kind::I64: return m_.type_int(64, false);
      case Kind::F32: used_f32_ = true; return m_.type_float(32);
      case Kind::F64: used_f64_ = true; m_.capability(spirv::Capability::Float64); return m_.type_float(64);
    }
    return 0;
  }
  Id u32c(uint32_t v) { return m_.constant(type(Kind::I32), v); }
  Id u64c(uint64_t v) { return m_.constant(type(Kind::I64), v); }
  Id f32c(float v) { uint32_t b; std::memcpy(&b, &v, 4); return m_.constant(type(Kind::F32), b); }
  Id f64c(double v) { uint64_t b; std::memcpy(&b, &v, 8); return m_.constant(type(Kind::F64), b); }
  Id fconst(Kind k, double v) { return k == Kind::F64 ? f64c(v) : f32c(static_cast<float>(v)); }
  Id zero(Kind k) {
    switch (k) {
      case Kind::Bool: return m_.constant_bool(false);
      case Kind::I32: return u32c(0);
      case Kind::I64: return u64c(0);
      default: return fconst(k, 0);
    }
  }

  // The memory type of a global buffer's element: 8/16-bit integers (16-bit floats as their bits) where narrower
  // than a register.
  Id mem_type(DType d, const UOp& u) {
    switch (d.scalar_type) {
      case ScalarType::Int8: case ScalarType::UInt8:
        m_.capability(spirv::Capability::Int8);
        m_.capability(spirv::Capability::StorageBuffer8BitAccess);
        return m_.type_int(8, false);
      case ScalarType::Int16: case ScalarType::UInt16: case ScalarType::Float16: case ScalarType::BFloat16:
        m_.capability(spirv::Capability::Int16);
        m_.capability(spirv::Capability::StorageBuffer16BitAccess);
        return m_.type_int(16, false);
      case ScalarType::Int32: case ScalarType::UInt32: case ScalarType::Int64: case ScalarType::UInt64:
      case ScalarType::Float32: case ScalarType::Float64:
        return type(kind_of(d, u));
      default: fail("dtype " + d.name() + " cannot be stored in memory", u);
    }
  }

  // ---- emitting ----

  Id op(Op o, Kind k, std::initializer_list<Id> args) {
    std::vector<Operand> ops;
    for (Id a : args) ops.push_back(Operand::id(a));
    return m_.op(o, type(k), ops);
  }
  // A float add/sub/mul/div kept apart from its neighbours: NoContraction forbids fusing it into an fma (§5 of
  // firmware-notes/spirv-kernels.md).
  Id fop(Op o, Kind k, Id a, Id b) {
    Id r = op(o, k, {a, b});
    m_.decorate(r, spirv::Decoration::NoContraction);
    return r;
  }
  Id sel(Kind k, Id c, Id a, Id b) { return op(Op::Select, k, {c, a, b}); }
  Id glsl(spirv::GLSLstd450 f, Kind k, std::vector<Id> args) { return m_.glsl(f, type(k), args); }

  // The 64-bit word `i` of the argument block.
  Id argument_word(int64_t i) {
    Id addr = op(Op::IAdd, Kind::I64, {args_, u64c(static_cast<uint64_t>(i) * kSpirvArgumentWordBytes)});
    Id u64 = type(Kind::I64);
    Id ptr = m_.op(Op::ConvertUToPtr, m_.type_pointer(StorageClass::PhysicalStorageBuffer, u64), {Operand::id(addr)});
    std::vector<Operand> ops{Operand::id(ptr)};
    for (const Operand& o : aligned(kSpirvArgumentWordBytes)) ops.push_back(o);
    return m_.op(Op::Load, u64, ops);
  }
  // Memory operands "Aligned <bytes>": required on every PhysicalStorageBuffer load and store (firmware-notes/spirv-kernels.md §2).
  std::vector<Operand> aligned(uint32_t bytes) {
    return {Operand::mask(spirv::MemoryAccess::Aligned, static_cast<uint32_t>(spirv::MemoryAccess::Aligned)), Operand::word(bytes)};
  }

  Id val(const UOp& u) {
    if (auto it = accs_.find(u.get()); it != accs_.end()) return m_.op(Op::Load, type(kind_of(u.dtype(), u)), {Operand::id(it->second)});
    if (auto it = names_.find(u.get()); it != names_.end()) return it->second;
    if (u.op() == Ops::CONST) return constant(u);
    fail("a value is used before it is defined", u);
  }

  Id constant(const UOp& u) {
    if (std::holds_alternative<Invalid>(u.arg())) fail("Invalid cannot be rendered", u);
    return const_value(u.dtype(), u.const_value(), u);
  }
  Id const_value(DType d, const ConstValue& v, const UOp& u) {
    Kind k = kind_of(d, u);
    if (k == Kind::Bool) return m_.constant_bool(std::get<bool>(v));
    if (k == Kind::F32 || k == Kind::F64) return fconst(k, std::get<double>(v));
    int64_t x = std::get<int64_t>(v);
    return k == Kind::I32 ? u32c(static_cast<uint32_t>(x)) : u64c(static_cast<uint64_t>(x));
  }

  void special(const UOp& u) {
    const std::string& n = std::get<std::string>(u.arg());
    if (n.size() != 5 || (n.rfind("gidx", 0) != 0 && n.rfind("lidx", 0) != 0) || n[4] < '0' || n[4] > '2')
      fail("expected a SPECIAL named gidx0..2 or lidx0..2", u);
    spirv::BuiltIn b = n[0] == 'g' ? spirv::BuiltIn::WorkgroupId : spirv::BuiltIn::LocalInvocationId;
    Id& var = builtins_[static_cast<uint32_t>(b)];
    Id u32 = type(Kind::I32), v3 = m_.type_vector(u32, 3);
    if (!var) {
      var = m_.global_variable(m_.type_pointer(StorageClass::Input, v3), StorageClass::Input);
      m_.decorate(var, spirv::Decoration::BuiltIn, {static_cast<uint32_t>(b)});
      interface_.push_back(var);
    }
    Id vec = m_.op(Op::Load, v3, {Operand::id(var)});
    Id r = m_.op(Op::CompositeExtract, u32, {Operand::id(vec), Operand::word(static_cast<uint32_t>(n[4] - '0'))});
    if (kind_of(u.dtype(), u) == Kind::I64) r = op(Op::UConvert, Kind::I64, {r});
    names_[u.get()] = r;
  }

  // A sub-word integer in its 32-bit id sign- or zero-extended, as a C value of its type would be.
  Id normalize(Id r, DType d) {
    if (!d.is_int() || int_bits(d) >= 32) return r;
    int bits = int_bits(d);
    if (!is_signed_int(d)) return op(Op::BitwiseAnd, Kind::I32, {r, u32c(bits == 8 ? 0xffu : 0xffffu)});
    Id s = u32c(static_cast<uint32_t>(32 - bits));
    return op(Op::ShiftRightArithmetic, Kind::I32, {op(Op::ShiftLeftLogical, Kind::I32, {r, s}), s});
  }

  // ---- 16-bit floats: the C prelude's db_f2h / db_h2f / db_f2bf / db_bf2f on 32-bit integers ----

  Id i32op(Op o, Id a, Id b) { return op(o, Kind::I32, {a, b}); }
  Id and_(Id a, uint32_t m) { return i32op(Op::BitwiseAnd, a, u32c(m)); }
  Id or_(Id a, Id b) { return i32op(Op::BitwiseOr, a, b); }
  Id shr(Id a, uint32_t s) { return i32op(Op::ShiftRightLogical, a, u32c(s)); }
  Id shl(Id a, uint32_t s) { return i32op(Op::ShiftLeftLogical, a, u32c(s)); }
  Id cmp(Op o, Id a, Id b) { return op(o, Kind::Bool, {a, b}); }

  // db_f2h: float32 -> float16 bits (round to nearest even; NaN keeps sign and the top payload bits, quieted).
  Id f2h(Id f) {
    Id x = op(Op::Bitcast, Kind::I32, {f});
    Id sign = and_(shr(x, 16), 0x8000);
    Id exp = and_(shr(x, 23), 0xff), man = and_(x, 0x7fffff);
    // exp == 0xff: inf or NaN
    Id man_nonzero = cmp(Op::INotEqual, man, u32c(0));
    Id nan_bits = sel(Kind::I32, man_nonzero, or_(u32c(0x200), shr(man, 13)), u32c(0));
    Id special = or_(or_(sign, u32c(0x7c00)), nan_bits);
    // e = exp - 127 + 15, signed
    Id e = i32op(Op::ISub, exp, u32c(112));
    Id overflow = cmp(Op::SGreaterThanEqual, e, u32c(0x1f));
    Id inf = or_(sign, u32c(0x7c00));
    // subnormal result (e <= 0): shift = 14 - e in [14, 24] when e >= -10 (clamped so the shift is defined)
    Id e_clamped = glsl(spirv::GLSLstd450::SClamp, Kind::I32, {e, u32c(static_cast<uint32_t>(-10)), u32c(0)});
    Id shift = i32op(Op::ISub, u32c(14), e_clamped);
    Id m = or_(man, u32c(0x800000));
    Id hm = i32op(Op::ShiftRightLogical, m, shift);
    Id rem = i32op(Op::BitwiseAnd, m, i32op(Op::ISub, i32op(Op::ShiftLeftLogical, u32c(1), shift), u32c(1)));
    Id halfway = i32op(Op::ShiftLeftLogical, u32c(1), i32op(Op::ISub, shift, u32c(1)));
    Id up = op(Op::LogicalOr, Kind::Bool, {cmp(Op::UGreaterThan, rem, halfway),
                                           op(Op::LogicalAnd, Kind::Bool, {cmp(Op::IEqual, rem, halfway), cmp(Op::INotEqual, and_(hm, 1), u32c(0))})});
    Id sub = or_(sign, sel(Kind::I32, up, i32op(Op::IAdd, hm, u32c(1)), hm));
    Id tiny = cmp(Op::SLessThan, e, u32c(static_cast<uint32_t>(-10)));
    Id subnormal = sel(Kind::I32, tiny, sign, sub);
    // normal: (e << 10 | man >> 13), rounded on the 13 bits dropped
    Id half = or_(i32op(Op::ShiftLeftLogical, e, u32c(10)), shr(man, 13));
    Id nrem = and_(man, 0x1fff);
    Id nup = op(Op::LogicalOr, Kind::Bool, {cmp(Op::UGreaterThan, nrem, u32c(0x1000)),
                                            op(Op::LogicalAnd, Kind::Bool, {cmp(Op::IEqual, nrem, u32c(0x1000)), cmp(Op::INotEqual, and_(half, 1), u32c(0))})});
    Id normal = or_(sign, sel(Kind::I32, nup, i32op(Op::IAdd, half, u32c(1)), half));
    Id r = sel(Kind::I32, cmp(Op::SLessThanEqual, e, u32c(0)), subnormal, normal);
    r = sel(Kind::I32, overflow, inf, r);
    return sel(Kind::I32, cmp(Op::IEqual, exp, u32c(0xff)), special, r);
  }
  // db_h2f: float16 bits (low 16 of a 32-bit id) -> float32, exactly.
  Id h2f(Id h) {
    Id sign = shl(and_(h, 0x8000), 16);
    Id exp = and_(shr(h, 10), 0x1f), man = and_(h, 0x3ff);
    Id inf_nan = or_(or_(sign, u32c(0x7f800000)), shl(man, 13));
    Id normal = or_(or_(sign, shl(i32op(Op::IAdd, exp, u32c(112)), 23)), shl(man, 13));
    Id bits = sel(Kind::I32, cmp(Op::IEqual, exp, u32c(0x1f)), inf_nan, normal);
    Id as_float = op(Op::Bitcast, Kind::F32, {bits});
    // a subnormal is man * 2^-24 (exact in float32), negated when signed
    Id v = fop(Op::FMul, Kind::F32, op(Op::ConvertUToF, Kind::F32, {man}), f32c(0x1p-24f));
    Id sub = sel(Kind::F32, cmp(Op::INotEqual, sign, u32c(0)), op(Op::FNegate, Kind::F32, {v}), v);
    return sel(Kind::F32, cmp(Op::IEqual, exp, u32c(0)), sub, as_float);
  }
  // db_f2bf: float32 -> bfloat16 bits (round to nearest even; NaN: the top bits with the quiet bit set).
  Id f2bf(Id f) {
    Id u = op(Op::Bitcast, Kind::I32, {f});
    Id nan = or_(shr(u, 16), u32c(0x40));
    Id rounded = shr(i32op(Op::IAdd, u, i32op(Op::IAdd, u32c(0x7fff), and_(shr(u, 16), 1))), 16);
    return sel(Kind::I32, op(Op::IsNan, Kind::Bool, {f}), nan, rounded);
  }
  Id bf2f(Id b) { return op(Op::Bitcast, Kind::F32, {shl(b, 16)}); }

  Id half_bits(Id f, DType d) { return d.scalar_type == ScalarType::Float16 ? f2h(f) : f2bf(f); }
  Id half_value(Id bits, DType d) { return d.scalar_type == ScalarType::Float16 ? h2f(bits) : bf2f(bits); }
  // A float32 value rounded to the 16-bit float type d, kept as float32 (db_rh / db_rbf).
  Id round_half(Id f, DType d) { return half_value(half_bits(f, d), d); }

  // ---- conversions ----

  // C's (out)a for a value of dtype `in`.
  Id convert(Id a, DType in, DType out, const UOp& u) {
    if (in == out) return a;
    Kind ki = kind_of(in, u), ko = kind_of(out, u);
    if (is_half(in) && !is_half(out) && ko == Kind::F32) return a;  // a 16-bit float already is its float32 value
    if (out.is_bool()) {
      if (ki == Kind::Bool) return a;
      if (in.is_float()) return cmp(Op::FUnordNotEqual, a, fconst(ki, 0));  // NaN is true, as in C
      return cmp(Op::INotEqual, a, zero(ki));
    }
    if (in.is_bool()) {
      if (out.is_float()) return sel(ko, a, fconst(ko, 1), fconst(ko, 0));
      return sel(ko, a, ko == Kind::I32 ? u32c(1) : u64c(1), zero(ko));
    }
    if (in.is_int() && out.is_int()) {
      Id r = a;
      if (ki != ko) r = op(ko == Kind::I64 ? (is_signed_int(in) ? Op::SConvert : Op::UConvert) : Op::UConvert, ko, {a});
      return normalize(r, out);
    }
    if (in.is_int() && out.is_float()) {
      Id r = op(is_signed_int(in) ? Op::ConvertSToF : Op::ConvertUToF, ko, {a});
      return is_half(out) ? round_half(r, out) : r;
    }
    if (in.is_float() && out.is_int()) {
      // lower_late has clamped the value into the destination's range and NaN to 0 (spirv_lowering_options), so the
      // truncating conversion is defined; a sub-word destination converts to 32 bits, then keeps its width
      Id r = op(is_signed_int(out) ? Op::ConvertFToS : Op::ConvertFToU, ko, {a});
      return normalize(r, out);
    }
    if (in.is_float() && out.is_float()) {
      if (is_half(out)) {
        if (ki != Kind::F32) fail("a CAST to " + out.name() + " from " + in.name() + " should go through float32 (lower_late)", u);
        return round_half(a, out);
      }
      if (ki == ko) return a;
      return op(Op::FConvert, ko, {a});
    }
    fail("no SPIR-V conversion from " + in.name() + " to " + out.name(), u);
  }

  Id bitcast(Id a, DType in, DType out, const UOp& u) {
    if (in.is_bool() || out.is_bool()) fail("BITCAST of bool is not supported", u);
    if (in.bitsize() != out.bitsize()) fail("BITCAST between types of different sizes", u);
    Kind ki = kind_of(in, u), ko = kind_of(out, u);
    if (!is_half(in) && !is_half(out)) {
      Id r = ki == ko ? a : op(Op::Bitcast, ko, {a});
      return normalize(r, out);
    }
    Id bits = is_half(in) ? half_bits(a, in) : and_(a, 0xffff);
    if (is_half(out)) return half_value(bits, out);
    return normalize(bits, out);
  }

  // ---- ALU ----

  Id alu(const UOp& u, Ops o, DType out, const std::vector<Id>& a, const std::vector<DType>& in) {
    Kind ko = kind_of(out, u);
    if (o == Ops::CAST) return convert(a[0], in[0], out, u);
    if (o == Ops::BITCAST) return bitcast(a[0], in[0], out, u);
    if (o == Ops::CMPLT || o == Ops::CMPNE || o == Ops::CMPEQ) {
      DType d = in[0];
      if (d.is_bool()) return bool_alu(o, a, u);
      Id x = a[0], y = in[1] == d ? a[1] : convert(a[1], in[1], d, u);
      if (d.is_float()) return cmp(o == Ops::CMPLT ? Op::FOrdLessThan : o == Ops::CMPEQ ? Op::FOrdEqual : Op::FUnordNotEqual, x, y);
      return cmp(o == Ops::CMPLT ? (is_signed_int(d) ? Op::SLessThan : Op::ULessThan) : o == Ops::CMPEQ ? Op::IEqual : Op::INotEqual, x, y);
    }
    if (o == Ops::WHERE) {
      Id x = in[1] == out ? a[1] : convert(a[1], in[1], out, u), y = in[2] == out ? a[2] : convert(a[2], in[2], out, u);
      return sel(ko, a[0], x, y);
    }
    if (ko == Kind::Bool) return bool_alu(o, a, u);
    if (out.is_float()) return float_alu(o, out, a, u);
    if (out.is_int()) return int_alu(o, out, a, in, u);
    fail("no SPIR-V rendering for this op", u);
  }

  Id bool_alu(Ops o, const std::vector<Id>& a, const UOp& u) {
    switch (o) {
      case Ops::ADD: case Ops::OR: case Ops::MAX: return op(Op::LogicalOr, Kind::Bool, {a[0], a[1]});
      case Ops::SUB: case Ops::XOR: case Ops::CMPNE: return op(Op::LogicalNotEqual, Kind::Bool, {a[0], a[1]});
      case Ops::MUL: case Ops::AND: return op(Op::LogicalAnd, Kind::Bool, {a[0], a[1]});
      case Ops::CMPEQ: return op(Op::LogicalEqual, Kind::Bool, {a[0], a[1]});
      case Ops::CMPLT: return op(Op::LogicalAnd, Kind::Bool, {op(Op::LogicalNot, Kind::Bool, {a[0]}), a[1]});  // !a & b
      case Ops::NEG: case Ops::TRUNC: return a[0];
      case Ops::MULACC: return op(Op::LogicalOr, Kind::Bool, {op(Op::LogicalAnd, Kind::Bool, {a[0], a[1]}), a[2]});
      default: fail("no SPIR-V rendering of this op on bool", u);
    }
  }

  Id float_alu(Ops o, DType out, const std::vector<Id>& a, const UOp& u) {
    Kind k = kind_of(out, u);
    switch (o) {
      case Ops::ADD: {
        Id r = fop(Op::FAdd, k, a[0], a[1]);
        // x + 0.0 is x except that -0 + 0 is +0; lavapipe 22.3 folds it to x even with SignedZeroInfNanPreserve and
        // NoContraction (firmware-notes/spirv-kernels.md §7), also where the 0 appears only after its constant
        // folding (a WHERE with a constant condition: concatenation, padding). Where an operand may fold to a
        // constant zero, a zero sum gets its IEEE sign again: a sum is 0 only for x == -y, and its sign is then the
        // AND of the operands' signs (-0 for -0 + -0 alone).
        if (u.op() == Ops::ADD && (may_fold_to_zero(u.src(0)) || may_fold_to_zero(u.src(1)))) {
          Kind bits = k == Kind::F64 ? Kind::I64 : Kind::I32;
          Id sign_mask = bits == Kind::I64 ? u64c(uint64_t{1} << 63) : u32c(0x80000000u);
          Id both = op(Op::BitwiseAnd, bits, {op(Op::BitwiseAnd, bits, {op(Op::Bitcast, bits, {a[0]}), op(Op::Bitcast, bits, {a[1]})}), sign_mask});
          r = sel(k, cmp(Op::FOrdEqual, r, fconst(k, 0.0)), op(Op::Bitcast, k, {both}), r);
        }
        return r;
      }
      case Ops::SUB: return fop(Op::FSub, k, a[0], a[1]);
      case Ops::MUL: return fop(Op::FMul, k, a[0], a[1]);
      case Ops::FDIV: return fop(Op::FDiv, k, a[0], a[1]);
      case Ops::NEG: return op(Op::FNegate, k, {a[0]});
      case Ops::TRUNC: return glsl(spirv::GLSLstd450::Trunc, k, {a[0]});
      case Ops::SQRT: return glsl(spirv::GLSLstd450::Sqrt, k, {a[0]});
      case Ops::RECIPROCAL: return fop(Op::FDiv, k, fconst(k, 1), a[0]);
      case Ops::MAX: {  // db_maxf: NaN if either is NaN, else (a < b ? b : a)
        Id m = sel(k, cmp(Op::FOrdLessThan, a[0], a[1]), a[1], a[0]);
        Id nan = op(Op::LogicalOr, Kind::Bool, {op(Op::IsNan, Kind::Bool, {a[0]}), op(Op::IsNan, Kind::Bool, {a[1]})});
        return sel(k, nan, fconst(k, NAN), m);
      }
      case Ops::MULACC: {
        if (k == Kind::F64) return fop(Op::FAdd, k, fop(Op::FMul, k, a[0], a[1]), a[2]);
        if (!caps_.float64) return fop(Op::FAdd, k, fop(Op::FMul, k, a[0], a[1]), a[2]);  // rounds twice: see the note
        // computed in float64 and rounded once, as the C renderer does
        Id x = op(Op::FConvert, Kind::F64, {a[0]}), y = op(Op::FConvert, Kind::F64, {a[1]}), z = op(Op::FConvert, Kind::F64, {a[2]});
        return op(Op::FConvert, Kind::F32, {fop(Op::FAdd, Kind::F64, fop(Op::FMul, Kind::F64, x, y), z)});
      }
      case Ops::EXP2: case Ops::LOG2: case Ops::SIN: case Ops::POW:
        fail(is_f64(out) ? "float64 transcendentals have no exact SPIR-V instruction (GLSL.std.450's are approximate)"
                         : "transcendentals must be decomposed first (spirv_lowering_options)", u);
      default: fail("no SPIR-V rendering of this float op", u);
    }
  }

  // Whether a float operand may become a constant zero when the driver folds constants: a zero CONST, or a WHERE or
  // CAST that may pass one through.
  static bool may_fold_to_zero(const UOp& x) {
    switch (x.op()) {
      case Ops::CONST: return std::holds_alternative<double>(x.const_value()) && std::get<double>(x.const_value()) == 0.0;
      case Ops::WHERE: return may_fold_to_zero(x.src(1)) || may_fold_to_zero(x.src(2));
      case Ops::CAST: return may_fold_to_zero(x.src(0));
      default: return false;
    }
  }

  Id int_alu(Ops o, DType out, const std::vector<Id>& a, const std::vector<DType>& in, const UOp& u) {
    Kind k = kind_of(out, u);
    auto as_out = [&](size_t i) { return in[i] == out ? a[i] : convert(a[i], in[i], out, u); };
    bool s = is_signed_int(out);
    Id r = 0;
    switch (o) {
      case Ops::ADD: r = op(Op::IAdd, k, {as_out(0), as_out(1)}); break;
      case Ops::SUB: r = op(Op::ISub, k, {as_out(0), as_out(1)}); break;
      case Ops::MUL: r = op(Op::IMul, k, {as_out(0), as_out(1)}); break;
      case Ops::NEG: r = op(Op::SNegate, k, {as_out(0)}); break;  // two's complement: unsigned too
      case Ops::AND: r = op(Op::BitwiseAnd, k, {as_out(0), as_out(1)}); break;
      case Ops::OR: r = op(Op::BitwiseOr, k, {as_out(0), as_out(1)}); break;
      case Ops::XOR: r = op(Op::BitwiseXor, k, {as_out(0), as_out(1)}); break;
      case Ops::TRUNC: r = as_out(0); break;
      case Ops::MULACC: r = op(Op::IAdd, k, {op(Op::IMul, k, {as_out(0), as_out(1)}), as_out(2)}); break;
      case Ops::SHL: case Ops::SHR: {
        // lower_late has made the amount lie in [0, width) (a larger one is undefined in SPIR-V); it is taken in the
        // result's width
        Kind ka = kind_of(in[1], u);
        Id amount = ka == k ? a[1] : op(Op::UConvert, k, {a[1]});
        r = op(o == Ops::SHL ? Op::ShiftLeftLogical : s ? Op::ShiftRightArithmetic : Op::ShiftRightLogical, k, {as_out(0), amount});
        break;
      }
      case Ops::MAX: {
        Id x = as_out(0), y = as_out(1);
        return sel(k, cmp(s ? Op::SLessThan : Op::ULessThan, x, y), y, x);
      }
      // lower_late has made the divisor nonzero (and not -1 for a signed type): OpSDiv/OpSRem are then defined and
      // truncate, the remainder taking the dividend's sign as C's %
      case Ops::CDIV: r = op(s ? Op::SDiv : Op::UDiv, k, {as_out(0), as_out(1)}); break;
      case Ops::CMOD: r = op(s ? Op::SRem : Op::UMod, k, {as_out(0), as_out(1)}); break;
      default: fail("no SPIR-V rendering of this integer op", u);
    }
    return normalize(r, out);
  }

  // ---- memory ----

  // The pointer to INDEX's element: a PhysicalStorageBuffer pointer made from base + idx * itemsize (no array type,
  // so no ArrayStride is needed), or an element of a Workgroup array.
  struct Place {
    Id ptr;
    bool global;
    uint32_t align;
    DType dtype;
  };
  Place place(const UOp& index) {
    const UOp& buf = indexed_buffer(index);
    DType d = buf.dtype();
    DType id = index.src(1).dtype();
    if (!id.is_int()) fail("an index must be an integer", index);
    Id idx = val(index.src(1));
    if (auto it = locals_.find(buf.get()); it != locals_.end()) {
      if (kind_of(id, index) == Kind::I64) idx = op(Op::UConvert, Kind::I32, {idx});
      Id ptr = m_.op(Op::AccessChain, m_.type_pointer(StorageClass::Workgroup, type(kind_of(d, buf))),
                     {Operand::id(it->second), Operand::id(idx)});
      return {ptr, false, 0, d};
    }
    if (kind_of(id, index) != Kind::I64) idx = op(is_signed_int(id) ? Op::SConvert : Op::UConvert, Kind::I64, {idx});
    uint32_t size = static_cast<uint32_t>(d.itemsize());
    Id addr = op(Op::IAdd, Kind::I64, {val(buf), op(Op::IMul, Kind::I64, {idx, u64c(size)})});
    Id ptr = m_.op(Op::ConvertUToPtr, m_.type_pointer(StorageClass::PhysicalStorageBuffer, mem_type(d, buf)), {Operand::id(addr)});
    return {ptr, true, size, d};
  }

  Id load_place(const Place& p, const UOp& u) {
    Kind k = kind_of(p.dtype, u);
    if (!p.global) return m_.op(Op::Load, type(k), {Operand::id(p.ptr)});
    std::vector<Operand> ops{Operand::id(p.ptr)};
    for (const Operand& o : aligned(p.align)) ops.push_back(o);
    Id raw = m_.op(Op::Load, mem_type(p.dtype, u), ops);
    if (p.align >= 4) return raw;
    if (is_half(p.dtype)) return half_value(op(Op::UConvert, Kind::I32, {raw}), p.dtype);
    return op(is_signed_int(p.dtype) ? Op::SConvert : Op::UConvert, Kind::I32, {raw});
  }

  void store_place(const Place& p, Id v, const UOp& u) {
    if (!p.global) {
      m_.op_void(Op::Store, {Operand::id(p.ptr), Operand::id(v)});
      return;
    }
    if (is_half(p.dtype)) v = m_.op(Op::UConvert, mem_type(p.dtype, u), {Operand::id(half_bits(v, p.dtype))});
    else if (p.align < 4) v = m_.op(Op::UConvert, mem_type(p.dtype, u), {Operand::id(v)});
    std::vector<Operand> ops{Operand::id(p.ptr), Operand::id(v)};
    for (const Operand& o : aligned(p.align)) ops.push_back(o);
    m_.op_void(Op::Store, ops);
  }

  // if (gate) { body } as a structured selection; returns the block the body ended in.
  template <class F>
  Id gated(Id gate, F&& body) {
    Id then_block = m_.new_id(), merge = m_.new_id();
    m_.op_void(Op::SelectionMerge, {Operand::id(merge), Operand::mask(spirv::SelectionControl::None, 0)});
    m_.op_void(Op::BranchConditional, {Operand::id(gate), Operand::id(then_block), Operand::id(merge)});
    block_ = m_.label(then_block);
    body();
    Id end = block_;
    m_.op_void(Op::Branch, {Operand::id(merge)});
    block_ = m_.label(merge);
    return end;
  }

  Id load(const UOp& u) {
    const UOp& index = u.src(0);
    if (index.src().size() != 3) return load_place(place(index), u);
    // a gated load reads 0 where its gate is false
    Id before = block_, loaded = 0;
    Id end = gated(val(index.src(2)), [&] { loaded = load_place(place(index), u); });
    Kind k = kind_of(index.src(0).dtype(), u);
    return m_.op(Op::Phi, type(k), {Operand::id(loaded), Operand::id(end), Operand::id(zero(k)), Operand::id(before)});
  }

  void store(const UOp& u) {
    const UOp& index = u.src(0);
    DType d = indexed_buffer(index).dtype();
    Id v = convert(val(u.src(1)), u.src(1).dtype(), d, u);
    if (index.src().size() != 3) return store_place(place(index), v, u);
    gated(val(index.src(2)), [&] { store_place(place(index), v, u); });
  }

  // ---- statements ----

  struct Loop {
    Id counter_var, header, merge, cont;
  };

  void statement(const Statement& s) {
    const UOp& u = s.u;
    switch (s.kind) {
      case StatementKind::BEGIN_LOOP: {
        DType d = u.dtype();
        if (!d.is_int()) fail("a loop counter must be an integer", u);
        Kind k = kind_of(d, u);
        Id end = val(u.src(0));
        Id var = m_.function_variable(m_.type_pointer(StorageClass::Function, type(k)));
        m_.op_void(Op::Store, {Operand::id(var), Operand::id(zero(k))});
        Id header = m_.new_id(), body = m_.new_id(), cont = m_.new_id(), merge = m_.new_id();
        m_.op_void(Op::Branch, {Operand::id(header)});
        block_ = m_.label(header);
        Id c = m_.op(Op::Load, type(k), {Operand::id(var)});
        Id more = cmp(is_signed_int(d) ? Op::SLessThan : Op::ULessThan, c, end);
        m_.op_void(Op::LoopMerge, {Operand::id(merge), Operand::id(cont), Operand::mask(spirv::LoopControl::None, 0)});
        m_.op_void(Op::BranchConditional, {Operand::id(more), Operand::id(body), Operand::id(merge)});
        block_ = m_.label(body);
        names_[u.get()] = c;
        loops_.push_back({var, header, merge, cont});
        return;
      }
      case StatementKind::END_LOOP: {
        Loop l = loops_.back();
        loops_.pop_back();
        Kind k = kind_of(u.dtype(), u);
        m_.op_void(Op::Branch, {Operand::id(l.cont)});
        block_ = m_.label(l.cont);
        Id next = op(Op::IAdd, k, {names_.at(u.get()), k == Kind::I32 ? u32c(1) : u64c(1)});
        m_.op_void(Op::Store, {Operand::id(l.counter_var), Operand::id(next)});
        m_.op_void(Op::Branch, {Operand::id(l.header)});
        block_ = m_.label(l.merge);
        return;
      }
      case StatementKind::VALUE: {
        Id r;
        if (u.op() == Ops::LOAD) {
          r = load(u);
        } else {
          std::vector<Id> args;
          std::vector<DType> in;
          for (const UOp& x : u.src()) args.push_back(val(x)), in.push_back(x.dtype());
          r = alu(u, u.op(), u.dtype(), args, in);
        }
        names_[u.get()] = r;
        return;
      }
      case StatementKind::ACC_INIT: {
        Kind k = kind_of(u.dtype(), u);
        Id var = m_.function_variable(m_.type_pointer(StorageClass::Function, type(k)));
        Id start = const_value(u.dtype(), accumulator_start(u.arg_as<ReduceArg>().op, u.dtype()), u);
        m_.op_void(Op::Store, {Operand::id(var), Operand::id(start)});
        accs_[u.get()] = var;
        return;
      }
      case StatementKind::ACC_UPDATE: {
        Ops o = u.arg_as<ReduceArg>().op;
        Id acc = val(u);
        Id r = alu(u, o, u.dtype(), {acc, val(u.src(0))}, {u.dtype(), u.src(0).dtype()});
        // a 16-bit float accumulator rounds after each sum or product, as lower_late's ops do
        if (is_half(u.dtype()) && o != Ops::MAX) r = round_half(r, u.dtype());
        m_.op_void(Op::Store, {Operand::id(accs_.at(u.get())), Operand::id(r)});
        return;
      }
      case StatementKind::STORE: store(u); return;
      case StatementKind::BARRIER: {
        // every invocation of the workgroup, and its Workgroup-memory stores made visible to the others
        uint32_t semantics = static_cast<uint32_t>(spirv::MemorySemantics::AcquireRelease) |
                             static_cast<uint32_t>(spirv::MemorySemantics::WorkgroupMemory);
        Id wg = u32c(static_cast<uint32_t>(spirv::Scope::Workgroup));
        m_.op_void(Op::ControlBarrier, {Operand::id(wg), Operand::id(wg), Operand::id(u32c(semantics))});
        return;
      }
    }
  }

  const GpuKernel& k_;
  const SpirvDeviceCaps& caps_;
  std::string name_;
  spirv::Module m_;
  Id glsl_ = 0, args_ = 0, block_ = 0;
  bool used_f32_ = false, used_f64_ = false;
  std::vector<Id> interface_;
  std::map<uint32_t, Id> builtins_;
  std::vector<Loop> loops_;
  std::unordered_map<const UOpNode*, Id> names_, accs_, locals_;
};

}  // namespace

spirv::Module render_spirv(const std::string& name, const GpuKernel& k, const SpirvDeviceCaps& caps) {
  return SpirvRenderer(k, caps).render(name);
}

}  // namespace doorbell
