#include "compiler/gpu/ptx_renderer.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <tuple>
#include <unordered_set>
#include <stdexcept>
#include <unordered_map>
#include <vector>

#include "compiler/gpu/gpu_optimizer.h"
#include "compiler/late_lowering.h"
#include "compiler/linearize.h"
#include "compiler/optimizer.h"
#include "compiler/pipeline.h"
#include "ir/graph_rewrite.h"
#include "ir/kernel_variables.h"
#include "ir/printer.h"
#include "ir/reduce_identity.h"

namespace doorbell {
namespace {

[[noreturn]] void fail(const std::string& what, const UOp& u) {
  throw std::invalid_argument("render_ptx: " + what + ": " + print_node(u));
}

// Register classes. Sub-word integers live in 32-bit registers, 16-bit floats in float32 registers; B16 holds
// 16-bit float bits only on their way to and from memory.
enum class Kind : uint8_t { Pred, B16, B32, B64, F32, F64 };

bool is_half(DType d) { return d.scalar_type == ScalarType::Float16 || d.scalar_type == ScalarType::BFloat16; }
bool is_f64(DType d) { return d.scalar_type == ScalarType::Float64 || d.scalar_type == ScalarType::WeakFloat; }

void check_scalar(DType d, const UOp& u) {
  if (d.lanes != 1) fail("vector dtype " + d.name() + " is not supported", u);
}

Kind kind_of(DType d, const UOp& u) {
  check_scalar(d, u);
  switch (d.scalar_type) {
    case ScalarType::Bool: return Kind::Pred;
    case ScalarType::Int8: case ScalarType::Int16: case ScalarType::Int32:
    case ScalarType::UInt8: case ScalarType::UInt16: case ScalarType::UInt32: return Kind::B32;
    case ScalarType::Int64: case ScalarType::UInt64: case ScalarType::WeakInt: return Kind::B64;
    case ScalarType::Float16: case ScalarType::BFloat16: case ScalarType::Float32: return Kind::F32;
    case ScalarType::Float64: case ScalarType::WeakFloat: return Kind::F64;
    default: fail("dtype " + d.name() + " has no PTX register type", u);
  }
}

// Width in bits of an integer type's values (weakint is 64-bit here: index math never narrows).
int int_bits(DType d) { return d.scalar_type == ScalarType::WeakInt ? 64 : d.bitsize(); }
bool is_signed_int(DType d) { return d.is_int() && !d.is_unsigned(); }

// The PTX type an integer or float register op uses for `d`: s32/u32/s64/u64/f32/f64.
std::string op_type(DType d) {
  if (d.is_float()) return is_f64(d) ? "f64" : "f32";
  std::string bits = int_bits(d) == 64 ? "64" : "32";
  return (is_signed_int(d) ? "s" : "u") + bits;
}

// The PTX type of an element in memory.
std::string mem_type(DType d, const UOp& u) {
  switch (d.scalar_type) {
    case ScalarType::UInt8: return "u8";
    case ScalarType::Int8: return "s8";
    case ScalarType::Int16: return "s16";
    case ScalarType::UInt16: return "u16";
    case ScalarType::Float16: case ScalarType::BFloat16: return "b16";
    case ScalarType::Int32: return "s32";
    case ScalarType::UInt32: return "u32";
    case ScalarType::Float32: return "f32";
    case ScalarType::Int64: return "s64";
    case ScalarType::UInt64: return "u64";
    case ScalarType::Float64: return "f64";
    default: fail("dtype " + d.name() + " cannot be stored in memory", u);
  }
}

std::string f32_literal(double v) {
  float f = static_cast<float>(v);
  uint32_t b;
  std::memcpy(&b, &f, 4);
  char buf[16];
  std::snprintf(buf, sizeof buf, "0f%08X", b);
  return buf;
}
std::string f64_literal(double v) {
  uint64_t b;
  std::memcpy(&b, &v, 8);
  char buf[24];
  std::snprintf(buf, sizeof buf, "0d%016llX", static_cast<unsigned long long>(b));
  return buf;
}
std::string float_literal(DType d, double v) { return is_f64(d) ? f64_literal(v) : f32_literal(v); }
std::string int_literal(int64_t v) { return std::to_string(v); }

class PtxRenderer {
 public:
  PtxRenderer(const GpuKernel& k, const GpuTarget& t) : k_(k), t_(t) {}

  std::string render(const std::string& name) {
    if (t_.vendor != GpuVendor::NV) throw std::invalid_argument("render_ptx: target " + t_.arch + " is not an NVIDIA GPU");
    // a PTX identifier: a letter, _ or $ first, then letters, digits, _ or $ (PTX ISA "Identifiers")
    bool ok = !name.empty() && !std::isdigit(static_cast<unsigned char>(name[0]));
    for (char ch : name) ok &= std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '$';
    if (!ok) throw std::invalid_argument("render_ptx: kernel name '" + name + "' is not a PTX identifier (letters, digits, _ and $, not starting with a digit)");
    std::map<int64_t, UOp> params, locals;
    for (const UOp& u : k_.sink.toposort()) {
      if (u.op() == Ops::PARAM) {
        const ParamArg& p = u.arg_as<ParamArg>();
        if (p.addrspace == AddrSpace::LOCAL) locals.emplace(p.slot, u);
        else if (p.addrspace == AddrSpace::GLOBAL) params.emplace(p.slot, u);
        else if (p.addrspace != AddrSpace::ALU) fail("only global and local buffers and variables can be rendered", u);
      }
    }
    // Local buffers: one .shared array each, addressed like a global buffer through its base in the shared window.
    std::string shared_decls;
    for (const auto& [slot, p] : locals) {
      std::string name = "db_local" + std::to_string(slot), base = reg(Kind::B64);
      int64_t bytes = (p.arg_as<ParamArg>().vmax + 1) * p.dtype().itemsize();
      shared_decls += "\t.shared .align 16 .b8 " + name + "[" + std::to_string(bytes) + "];\n";
      entry_.push_back("mov.u64 " + base + ", " + name);
      names_[p.get()] = base;
    }
    int64_t slots = params.empty() ? 0 : params.rbegin()->first + 1;
    for (const auto& [slot, p] : params) {
      std::string raw = reg(Kind::B64), base = reg(Kind::B64);
      entry_.push_back("ld.param.u64 " + raw + ", [data" + std::to_string(slot) + "]");
      entry_.push_back("cvta.to.global.u64 " + base + ", " + raw);
      names_[p.get()] = base;
    }
    // Variables: 64-bit scalar parameters after the buffers, in ProgramInfo::vars' order.
    std::vector<UOp> variables = kernel_variables(k_.sink);
    for (size_t i = 0; i < variables.size(); i++) {
      const Kind k = kind_of(variables[i].dtype(), variables[i]);
      std::string wide = reg(Kind::B64);
      entry_.push_back("ld.param.s64 " + wide + ", [var" + std::to_string(i) + "]");
      if (k == Kind::B64) {
        names_[variables[i].get()] = wide;
      } else {  // a 32-bit (or narrower) variable: its low word
        std::string r = reg(k);
        entry_.push_back("cvt.u32.u64 " + r + ", " + wide);
        names_[variables[i].get()] = r;
      }
    }
    std::vector<Statement> statements = linearize(k_.sink);
    plan_vector_loads(statements);
    for (const Statement& s : statements) statement(s);

    std::string out = "//\n// Generated by doorbell render_ptx\n//\n\n";
    out += std::string(".version ") + kPtxVersion + "\n.target " + t_.arch + "\n.address_size 64\n\n";
    out += ".visible .entry " + name + "(";
    for (int64_t i = 0; i < slots; i++) out += std::string(i ? "," : "") + "\n\t.param .u64 data" + std::to_string(i);
    for (size_t i = 0; i < variables.size(); i++) out += std::string(i || slots ? "," : "") + "\n\t.param .s64 var" + std::to_string(i);
    out += slots || !variables.empty() ? "\n)\n" : ")\n";
    out += ".maxntid " + std::to_string(k_.local_size[0]) + ", " + std::to_string(k_.local_size[1]) + ", " +
           std::to_string(k_.local_size[2]) + "\n{\n";
    static const char* kDecl[] = {".pred", ".b16", ".b32", ".b64", ".f32", ".f64"};
    static const char* kPrefix[] = {"%p", "%h", "%r", "%rd", "%f", "%fd"};
    for (int i = 0; i < 6; i++)
      if (counts_[i]) out += "\t.reg " + std::string(kDecl[i]) + " \t" + kPrefix[i] + "<" + std::to_string(counts_[i] + 1) + ">;\n";
    out += shared_decls + "\n";
    for (const std::string& l : entry_) out += "\t" + l + ";\n";
    for (const std::string& l : body_) out += (l.back() == ':' ? l : "\t" + l + ";") + "\n";
    out += "\tret;\n}\n";
    return out;
  }

 private:
  std::string reg(Kind k) {
    static const char* kPrefix[] = {"%p", "%h", "%r", "%rd", "%f", "%fd"};
    int& c = counts_[static_cast<int>(k)];
    return kPrefix[static_cast<int>(k)] + std::to_string(++c);
  }
  void ins(std::string s) { body_.push_back(std::move(s)); }

  // The register holding u's value; constants and thread indices are defined once at the entry.
  std::string val(const UOp& u) {
    if (auto it = names_.find(u.get()); it != names_.end()) return it->second;
    if (u.op() == Ops::CONST) return constant(u);
    if (u.op() == Ops::SPECIAL) return special(u);
    fail("a value is used before it is defined", u);
  }

  // A CONST as an immediate operand: 0/1 for a predicate, float bits, a 32-bit register's integer as int32.
  std::string immediate(const UOp& u) {
    if (std::holds_alternative<Invalid>(u.arg())) fail("Invalid cannot be rendered", u);
    DType d = u.dtype();
    Kind k = kind_of(d, u);
    ConstValue v = u.const_value();
    if (k == Kind::Pred) return std::get<bool>(v) ? "1" : "0";
    if (k == Kind::F32 || k == Kind::F64) return float_literal(d, std::get<double>(v));
    int64_t x = std::get<int64_t>(v);
    if (k == Kind::B32) x = static_cast<int32_t>(static_cast<uint32_t>(x));
    return int_literal(x);
  }

  std::string constant(const UOp& u) {
    std::string imm = immediate(u);
    Kind k = kind_of(u.dtype(), u);
    std::string r = reg(k);
    if (k == Kind::Pred) {
      std::string t = reg(Kind::B32);
      entry_.push_back("mov.u32 " + t + ", " + imm);
      entry_.push_back("setp.ne.u32 " + r + ", " + t + ", 0");
    } else {
      static const char* kMov[] = {"", "", "mov.b32 ", "mov.b64 ", "mov.f32 ", "mov.f64 "};
      entry_.push_back(kMov[static_cast<int>(k)] + r + ", " + imm);
    }
    names_[u.get()] = r;
    return r;
  }

  std::string special(const UOp& u) {
    const std::string& n = std::get<std::string>(u.arg());
    if (n.size() != 5 || (n.rfind("gidx", 0) != 0 && n.rfind("lidx", 0) != 0) || n[4] < '0' || n[4] > '2')
      fail("expected a SPECIAL named gidx0..2 or lidx0..2", u);
    std::string sreg = std::string(n[0] == 'g' ? "%ctaid." : "%tid.") + "xyz"[n[4] - '0'];
    std::string r32 = reg(Kind::B32), r = reg(Kind::B64);
    entry_.push_back("mov.u32 " + r32 + ", " + sreg);
    if (u.dtype() == dtypes::weakint || int_bits(u.dtype()) == 64) {
      entry_.push_back("cvt.u64.u32 " + r + ", " + r32);
    } else {
      r = r32;
    }
    names_[u.get()] = r;
    return r;
  }

  // Keeps a sub-word integer in its 32-bit register sign- or zero-extended, as a C value of its type would be.
  void normalize(const std::string& r, DType d) {
    if (!d.is_int()) return;
    int bits = int_bits(d);
    if (bits >= 32) return;
    if (is_signed_int(d)) ins("cvt.s32.s" + std::to_string(bits) + " " + r + ", " + r);
    else ins("and.b32 " + r + ", " + r + ", " + (bits == 8 ? "255" : "65535"));
  }

  // Rounds a float32 register to a 16-bit float type into `dst` (round to nearest even).
  void round_half(const std::string& dst, const std::string& src, DType d) {
    std::string h = reg(Kind::B16);
    if (d.scalar_type == ScalarType::Float16) {
      ins("cvt.rn.f16.f32 " + h + ", " + src);
      ins("cvt.f32.f16 " + dst + ", " + h);
    } else {
      std::string r = reg(Kind::B32);
      ins("cvt.rn.bf16.f32 " + h + ", " + src);
      ins("cvt.u32.u16 " + r + ", " + h);
      ins("shl.b32 " + r + ", " + r + ", 16");
      ins("mov.b32 " + dst + ", " + r);
    }
  }
  // After a float op computed in float32 into `r`: round it when the type is 16-bit.
  void finish_float(const std::string& r, DType d) {
    if (is_half(d)) round_half(r, r, d);
  }

  // C's (out)a for a value of dtype `in` in register `a`.
  std::string convert(const std::string& a, DType in, DType out, const UOp& u) {
    if (in == out) return a;
    Kind ki = kind_of(in, u), ko = kind_of(out, u);
    // a 16-bit float already is its float32 value in a float32 register: widening it is free
    if (is_half(in) && !is_half(out) && ko == Kind::F32) return a;
    std::string r = reg(ko);
    if (out.is_bool()) {
      if (ki == Kind::Pred) return a;
      if (in.is_float()) ins("setp.neu." + op_type(in) + " " + r + ", " + a + ", " + float_literal(in, 0));
      else ins("setp.ne." + op_type(in) + " " + r + ", " + a + ", 0");
      return r;
    }
    if (in.is_bool()) {
      if (out.is_float()) ins("selp." + op_type(out) + " " + r + ", " + float_literal(out, 1) + ", " + float_literal(out, 0) + ", " + a);
      else ins("selp." + op_type(out) + " " + r + ", 1, 0, " + a);
      return r;
    }
    if (in.is_int() && out.is_int()) {
      if (ki == ko) ins(std::string(ko == Kind::B32 ? "mov.b32 " : "mov.b64 ") + r + ", " + a);
      else if (ko == Kind::B64) ins("cvt." + std::string(is_signed_int(in) ? "s64.s32 " : "u64.u32 ") + r + ", " + a);
      else ins("cvt.u32.u64 " + r + ", " + a);
      normalize(r, out);
      return r;
    }
    if (in.is_int() && out.is_float()) {
      ins("cvt.rn." + op_type(out) + "." + op_type(in) + " " + r + ", " + a);
      finish_float(r, out);
      return r;
    }
    if (in.is_float() && out.is_int()) {
      // PTX ISA "cvt": a float-to-integer conversion clamps to the destination type's range and takes NaN to 0,
      // the IR's definition (ir/exec_alu.h); a sub-word destination type fills its 32-bit register sign- or
      // zero-extended ("Operand Size Exceeding Instruction-Type Size": cvt may write a wider register)
      const std::string to = (is_signed_int(out) ? "s" : "u") + std::to_string(int_bits(out));
      ins("cvt.rzi." + to + "." + op_type(in) + " " + r + ", " + a);
      return r;
    }
    if (in.is_float() && out.is_float()) {
      if (is_half(out) && ki == Kind::F32) {  // narrowing rounds
        round_half(r, a, out);
        return r;
      }
      if (ki == Kind::F32 && ko == Kind::F64) ins("cvt.f64.f32 " + r + ", " + a);
      else if (ki == Kind::F64 && ko == Kind::F32) ins("cvt.rn.f32.f64 " + r + ", " + a);
      else ins(std::string(ko == Kind::F64 ? "mov.f64 " : "mov.f32 ") + r + ", " + a);
      finish_float(r, out);
      return r;
    }
    fail("no PTX conversion from " + in.name() + " to " + out.name(), u);
  }

  // The 16 or 32/64 bits of a value as an unsigned integer register of the same class as out's.
  std::string bitcast(const std::string& a, DType in, DType out, const UOp& u) {
    if (in.is_bool() || out.is_bool()) fail("BITCAST of bool is not supported", u);
    if (in.bitsize() != out.bitsize()) fail("BITCAST between types of different sizes", u);
    Kind ki = kind_of(in, u), ko = kind_of(out, u);
    std::string r = reg(ko);
    if (!is_half(in) && !is_half(out)) {
      ins(std::string(ki == Kind::B64 || ki == Kind::F64 ? "mov.b64 " : "mov.b32 ") + r + ", " + a);
      normalize(r, out);
      return r;
    }
    // 16-bit: through the bits in a 32-bit register, low half
    std::string bits = reg(Kind::B32);
    if (in.scalar_type == ScalarType::Float16) {
      std::string h = reg(Kind::B16);
      ins("cvt.rn.f16.f32 " + h + ", " + a);
      ins("cvt.u32.u16 " + bits + ", " + h);
      // cvt gives the canonical NaN; a bitcast keeps a NaN's payload as the C helper db_f2h does: sign, 0x7e00 and
      // the top 10 payload bits
      std::string x = reg(Kind::B32), m = reg(Kind::B32), sign = reg(Kind::B32), nan = reg(Kind::Pred);
      ins("mov.b32 " + x + ", " + a);
      ins("and.b32 " + m + ", " + x + ", 2147483647");
      ins("setp.gt.u32 " + nan + ", " + m + ", 2139095040");
      ins("shr.u32 " + sign + ", " + x + ", 16");
      ins("and.b32 " + sign + ", " + sign + ", 32768");
      ins("and.b32 " + m + ", " + x + ", 8388607");
      ins("shr.u32 " + m + ", " + m + ", 13");
      ins("or.b32 " + m + ", " + m + ", 32256");
      ins("or.b32 " + m + ", " + m + ", " + sign);
      ins("selp.b32 " + bits + ", " + m + ", " + bits + ", " + nan);
    } else if (in.scalar_type == ScalarType::BFloat16) {
      ins("mov.b32 " + bits + ", " + a);
      ins("shr.u32 " + bits + ", " + bits + ", 16");
    } else {
      ins("and.b32 " + bits + ", " + a + ", 65535");
    }
    if (out.scalar_type == ScalarType::Float16) {
      std::string h = reg(Kind::B16);
      ins("cvt.u16.u32 " + h + ", " + bits);
      ins("cvt.f32.f16 " + r + ", " + h);
      // a NaN's payload moves to the top of the float32 mantissa as db_h2f does (cvt would canonicalize it)
      std::string e = reg(Kind::B32), sign = reg(Kind::B32), f = reg(Kind::F32), nan = reg(Kind::Pred);
      ins("and.b32 " + e + ", " + bits + ", 32767");
      ins("setp.gt.u32 " + nan + ", " + e + ", 31744");
      ins("and.b32 " + sign + ", " + bits + ", 32768");
      ins("shl.b32 " + sign + ", " + sign + ", 16");
      ins("and.b32 " + e + ", " + bits + ", 1023");
      ins("shl.b32 " + e + ", " + e + ", 13");
      ins("or.b32 " + e + ", " + e + ", 2139095040");
      ins("or.b32 " + e + ", " + e + ", " + sign);
      ins("mov.b32 " + f + ", " + e);
      ins("selp.f32 " + r + ", " + f + ", " + r + ", " + nan);
    } else if (out.scalar_type == ScalarType::BFloat16) {
      ins("shl.b32 " + bits + ", " + bits + ", 16");
      ins("mov.b32 " + r + ", " + bits);
    } else {
      ins("mov.b32 " + r + ", " + bits);
      normalize(r, out);
    }
    return r;
  }

  std::string pred_alu(Ops op, const std::vector<std::string>& a, const UOp& u, std::string r) {
    switch (op) {
      case Ops::ADD: case Ops::OR: case Ops::MAX: ins("or.pred " + r + ", " + a[0] + ", " + a[1]); return r;
      case Ops::SUB: case Ops::XOR: case Ops::CMPNE: ins("xor.pred " + r + ", " + a[0] + ", " + a[1]); return r;
      case Ops::MUL: case Ops::AND: ins("and.pred " + r + ", " + a[0] + ", " + a[1]); return r;
      case Ops::CMPEQ:
        ins("xor.pred " + r + ", " + a[0] + ", " + a[1]);
        ins("not.pred " + r + ", " + r);
        return r;
      case Ops::CMPLT: {  // a < b for 0/1: !a & b
        std::string n = reg(Kind::Pred);
        ins("not.pred " + n + ", " + a[0]);
        ins("and.pred " + r + ", " + n + ", " + a[1]);
        return r;
      }
      case Ops::NEG: case Ops::TRUNC: ins("mov.pred " + r + ", " + a[0]); return r;
      case Ops::MULACC: {
        std::string t = reg(Kind::Pred);
        ins("and.pred " + t + ", " + a[0] + ", " + a[1]);
        ins("or.pred " + r + ", " + t + ", " + a[2]);
        return r;
      }
      default: fail("no PTX rendering of this op on bool", u);
    }
  }

  // CDIV/CMOD: lower_late has made the divisor nonzero (and not -1 for signed types), so div and rem are defined.
  std::string int_div(Ops op, DType d, const std::string& a, const std::string& b, const std::string& r) {
    ins(std::string(op == Ops::CDIV ? "div." : "rem.") + op_type(d) + " " + r + ", " + a + ", " + b);
    return r;
  }

  std::string float_alu(Ops op, DType out, const std::vector<std::string>& a, const UOp& u, const std::string& r) {
    std::string t = op_type(out);
    switch (op) {
      case Ops::ADD: ins("add.rn." + t + " " + r + ", " + a[0] + ", " + a[1]); return r;
      case Ops::SUB: ins("sub.rn." + t + " " + r + ", " + a[0] + ", " + a[1]); return r;
      case Ops::MUL: ins("mul.rn." + t + " " + r + ", " + a[0] + ", " + a[1]); return r;
      case Ops::FDIV: ins("div.rn." + t + " " + r + ", " + a[0] + ", " + a[1]); return r;
      case Ops::NEG: ins("neg." + t + " " + r + ", " + a[0]); return r;
      case Ops::TRUNC: ins("cvt.rzi." + t + "." + t + " " + r + ", " + a[0]); return r;
      case Ops::SQRT: ins("sqrt.rn." + t + " " + r + ", " + a[0]); return r;
      case Ops::RECIPROCAL: ins("rcp.rn." + t + " " + r + ", " + a[0]); return r;
      case Ops::MAX: {  // db_maxf: NaN if either is NaN, else (a < b ? b : a)
        std::string lt = reg(Kind::Pred), nan = reg(Kind::Pred), m = reg(kind_of(out, u));
        ins("setp.lt." + t + " " + lt + ", " + a[0] + ", " + a[1]);
        ins("selp." + t + " " + m + ", " + a[1] + ", " + a[0] + ", " + lt);
        ins("setp.nan." + t + " " + nan + ", " + a[0] + ", " + a[1]);
        ins("selp." + t + " " + r + ", " + float_literal(out, NAN) + ", " + m + ", " + nan);
        return r;
      }
      case Ops::MULACC: {  // computed in double and rounded once, as the C renderer does
        if (is_f64(out)) {
          std::string p = reg(Kind::F64);
          ins("mul.rn.f64 " + p + ", " + a[0] + ", " + a[1]);
          ins("add.rn.f64 " + r + ", " + p + ", " + a[2]);
          return r;
        }
        std::string x = reg(Kind::F64), y = reg(Kind::F64), z = reg(Kind::F64);
        ins("cvt.f64.f32 " + x + ", " + a[0]);
        ins("cvt.f64.f32 " + y + ", " + a[1]);
        ins("cvt.f64.f32 " + z + ", " + a[2]);
        ins("mul.rn.f64 " + x + ", " + x + ", " + y);
        ins("add.rn.f64 " + x + ", " + x + ", " + z);
        ins("cvt.rn.f32.f64 " + r + ", " + x);
        return r;
      }
      case Ops::EXP2: case Ops::LOG2: case Ops::SIN: case Ops::POW:
        fail(is_f64(out) ? "float64 transcendentals have no PTX instruction" : "transcendentals must be decomposed first (prepare_gpu_kernel)", u);
      default: fail("no PTX rendering of this float op", u);
    }
  }

  static bool fits_int32(const UOp& x) { return x.has_bounds() && x.vmin() > INT32_MIN && x.vmax() <= INT32_MAX; }

  std::string int_alu(Ops op, DType out, std::vector<std::string> a, const std::vector<DType>& in, const UOp& u, const std::string& r) {
    std::string t = op_type(out), b = t.substr(1);  // "32" or "64"
    auto as_out = [&](size_t i) { return in[i] == out ? a[i] : convert(a[i], in[i], out, u); };
    switch (op) {
      case Ops::ADD: ins("add." + t + " " + r + ", " + as_out(0) + ", " + as_out(1)); break;
      case Ops::SUB: ins("sub." + t + " " + r + ", " + as_out(0) + ", " + as_out(1)); break;
      case Ops::MUL: ins("mul.lo." + t + " " + r + ", " + as_out(0) + ", " + as_out(1)); break;
      case Ops::NEG: ins("neg.s" + b + " " + r + ", " + as_out(0)); break;  // two's complement: unsigned too
      case Ops::AND: ins("and.b" + b + " " + r + ", " + as_out(0) + ", " + as_out(1)); break;
      case Ops::OR: ins("or.b" + b + " " + r + ", " + as_out(0) + ", " + as_out(1)); break;
      case Ops::XOR: ins("xor.b" + b + " " + r + ", " + as_out(0) + ", " + as_out(1)); break;
      case Ops::TRUNC: ins("mov.b" + b + " " + r + ", " + as_out(0)); break;
      case Ops::MULACC: {
        std::string p = reg(kind_of(out, u));
        ins("mul.lo." + t + " " + p + ", " + as_out(0) + ", " + as_out(1));
        ins("add." + t + " " + r + ", " + p + ", " + as_out(2));
        break;
      }
      case Ops::SHL: case Ops::SHR: {
        // PTX reads the amount as .u32 and clamps it to the width (PTX ISA "shl", "shr"): the IR's result for any
        // amount, a negative one too. A 64-bit amount is clamped before it is narrowed, or 2^32 + 1 would shift by 1.
        std::string amount = a[1];
        if (kind_of(in[1], u) == Kind::B64) {
          std::string clamped = reg(Kind::B64);
          amount = reg(Kind::B32);
          ins("min.u64 " + clamped + ", " + a[1] + ", 64");
          ins("cvt.u32.u64 " + amount + ", " + clamped);
        }
        if (op == Ops::SHL) ins("shl.b" + b + " " + r + ", " + as_out(0) + ", " + amount);
        else ins("shr." + t + " " + r + ", " + as_out(0) + ", " + amount);
        break;
      }
      case Ops::MAX: {
        std::string lt = reg(Kind::Pred), x = as_out(0), y = as_out(1);
        ins("setp.lt." + t + " " + lt + ", " + x + ", " + y);
        ins("selp." + t + " " + r + ", " + y + ", " + x + ", " + lt);
        return r;
      }
      case Ops::CDIV: case Ops::CMOD:
        if (int_bits(out) == 64 && is_signed_int(out) && u.op() == op && fits_int32(u.src(0)) && fits_int32(u.src(1))) {
          // index math: 64-bit division is a long subroutine on the GPU, and with both operands within
          // (INT32_MIN, INT32_MAX] the 32-bit quotient and remainder are the same numbers
          std::string a32 = reg(Kind::B32), b32 = reg(Kind::B32), r32 = reg(Kind::B32);
          ins("cvt.u32.u64 " + a32 + ", " + as_out(0));
          ins("cvt.u32.u64 " + b32 + ", " + as_out(1));
          int_div(op, dtypes::int32, a32, b32, r32);
          ins("cvt.s64.s32 " + r + ", " + r32);
          return r;
        }
        int_div(op, out, as_out(0), as_out(1), r);
        break;
      default: fail("no PTX rendering of this integer op", u);
    }
    normalize(r, out);
    return r;
  }

  // One op on registers `a` of dtypes `in`, into `dst` (a fresh register when empty).
  std::string alu(const UOp& u, Ops op, DType out, const std::vector<std::string>& a, const std::vector<DType>& in, std::string dst = "") {
    Kind ko = kind_of(out, u);
    if (op == Ops::CAST) {
      std::string c = convert(a[0], in[0], out, u);
      if (dst.empty()) return c;
      copy(dst, c, ko);
      return dst;
    }
    if (op == Ops::BITCAST) {
      std::string c = bitcast(a[0], in[0], out, u);
      if (dst.empty()) return c;
      copy(dst, c, ko);
      return dst;
    }
    std::string r = dst.empty() ? reg(ko) : dst;
    if (op == Ops::CMPLT || op == Ops::CMPNE || op == Ops::CMPEQ) {
      DType d = in[0];
      if (d.is_bool()) return pred_alu(op, a, u, r);
      std::string y = in[1] == d ? a[1] : convert(a[1], in[1], d, u);
      std::string cmp = op == Ops::CMPLT ? "lt" : op == Ops::CMPEQ ? "eq" : d.is_float() ? "neu" : "ne";
      ins("setp." + cmp + "." + op_type(d) + " " + r + ", " + a[0] + ", " + y);
      return r;
    }
    if (op == Ops::WHERE) {
      if (ko == Kind::Pred) {
        std::string x = reg(Kind::Pred), nc = reg(Kind::Pred), y = reg(Kind::Pred);
        ins("and.pred " + x + ", " + a[0] + ", " + a[1]);
        ins("not.pred " + nc + ", " + a[0]);
        ins("and.pred " + y + ", " + nc + ", " + a[2]);
        ins("or.pred " + r + ", " + x + ", " + y);
        return r;
      }
      std::string x = in[1] == out ? a[1] : convert(a[1], in[1], out, u), y = in[2] == out ? a[2] : convert(a[2], in[2], out, u);
      ins("selp." + op_type(out) + " " + r + ", " + x + ", " + y + ", " + a[0]);
      return r;
    }
    if (ko == Kind::Pred) return pred_alu(op, a, u, r);
    if (out.is_float()) return float_alu(op, out, a, u, r);
    if (out.is_int()) return int_alu(op, out, a, in, u, r);
    fail("no PTX rendering for this op", u);
  }

  void copy(const std::string& dst, const std::string& src, Kind k) {
    static const char* kMov[] = {"mov.pred ", "mov.b16 ", "mov.b32 ", "mov.b64 ", "mov.f32 ", "mov.f64 "};
    ins(kMov[static_cast<int>(k)] + dst + ", " + src);
  }

  // Vector loads (PTX ISA "Vectors": .v2/.v4 of up to 16 bytes, aligned to their size). The expander's copies of an
  // upcast load read base + o, base + o + 1, ...: w of them in one loop scope, from a global buffer the kernel never
  // stores to (so reading lanes early cannot pass a store), ungated, become one ld.global.v<w> when base is a known
  // multiple of w and o too; with the buffer's base 256-byte aligned (every NV allocation is), the address is then
  // aligned to w elements.
  struct VectorLoad {
    std::vector<UOp> lanes;  // in element order
    UOp base;                // lanes[i] reads base + offset + i
    int64_t offset = 0;
  };

  // The largest number known to divide u's value (0: the value is 0). Sums and selects keep common divisors,
  // products multiply them.
  static int64_t known_divisor(const UOp& u) {
    auto gcd = [](int64_t a, int64_t b) { while (b) { int64_t t = a % b; a = b; b = t; } return a < 0 ? -a : a; };
    switch (u.op()) {
      case Ops::CONST: {
        if (!std::holds_alternative<int64_t>(u.const_value())) return 1;
        int64_t v = std::get<int64_t>(u.const_value());
        return v < 0 ? -v : v;
      }
      case Ops::ADD: return gcd(known_divisor(u.src(0)), known_divisor(u.src(1)));
      case Ops::MUL: {
        int64_t a = known_divisor(u.src(0)), b = known_divisor(u.src(1));
        return a == 0 || b == 0 ? 0 : std::min<int64_t>(a * b, int64_t{1} << 20);
      }
      case Ops::WHERE: return gcd(known_divisor(u.src(1)), known_divisor(u.src(2)));
      case Ops::CAST: return u.src(0).dtype().is_int() ? known_divisor(u.src(0)) : 1;
      default: return 1;
    }
  }

  // index = base + offset, the constant addends of a chain of ADDs summed: ((x + j) + 1) is x + (j + 1).
  static std::pair<UOp, int64_t> base_and_offset(UOp index) {
    int64_t offset = 0;
    while (index.op() == Ops::ADD && index.src(1).op() == Ops::CONST && std::holds_alternative<int64_t>(index.src(1).const_value())) {
      offset += std::get<int64_t>(index.src(1).const_value());
      index = index.src(0);
    }
    return {index, offset};
  }

  void plan_vector_loads(const std::vector<Statement>& statements) {
    std::unordered_set<const UOpNode*> stored;
    for (const UOp& u : k_.sink.toposort())
      if (u.op() == Ops::STORE) stored.insert(u.src(0).src(0).get());
    // candidate loads by (scope, buffer, base), each with its offset, in statement order
    std::map<std::tuple<int, const UOpNode*, const UOpNode*>, std::map<int64_t, UOp>> groups;
    std::vector<int> scopes{-1};
    for (size_t i = 0; i < statements.size(); i++) {
      const Statement& st = statements[i];
      if (st.kind == StatementKind::BEGIN_LOOP) scopes.push_back(static_cast<int>(i));
      if (st.kind == StatementKind::END_LOOP) scopes.pop_back();
      if (st.kind != StatementKind::VALUE || st.u.op() != Ops::LOAD) continue;
      const UOp& index = st.u.src(0);
      const UOp& buf = index.src(0);
      if (index.src().size() != 2 || buf.op() != Ops::PARAM || stored.count(buf.get())) continue;
      int size = buf.dtype().itemsize();
      if (size != 2 && size != 4 && size != 8) continue;
      if (size == 2 && !is_half(buf.dtype())) continue;  // 16-bit integers load into 32-bit registers
      auto [base, offset] = base_and_offset(index.src(1));
      groups[{scopes.back(), buf.get(), base.get()}].emplace(offset, st.u);
    }
    for (auto& [key, by_offset] : groups) {
      const UOp& any = by_offset.begin()->second;
      UOp base = base_and_offset(any.src(0).src(1)).first;
      int64_t divisor = known_divisor(base);
      int size = any.src(0).src(0).dtype().itemsize();
      for (auto it = by_offset.begin(); it != by_offset.end();) {
        int64_t o = it->first;
        int w = 0;
        for (int cand : {4, 2}) {
          if (cand * size > 16 || o % cand != 0 || (divisor != 0 && divisor % cand != 0)) continue;
          bool all = true;
          for (int j = 1; j < cand; j++) all &= by_offset.count(o + j) > 0;
          if (all) { w = cand; break; }
        }
        if (!w) { ++it; continue; }
        VectorLoad v{{}, base, o};
        for (int j = 0; j < w; j++) v.lanes.push_back(by_offset.at(o + j));
        auto leader = std::make_shared<VectorLoad>(std::move(v));
        for (const UOp& l : leader->lanes) vector_of_[l.get()] = leader;
        it = by_offset.find(o + w);
      }
    }
  }

  // The lanes' registers: one ld.global.v<w>, then each lane widened as a scalar load would be.
  void vector_load(const VectorLoad& v) {
    const UOp& index = v.lanes[0].src(0);
    DType d = index.src(0).dtype();
    std::string idx = val(v.base);
    DType id = v.base.dtype();
    if (int_bits(id) != 64 || id.is_unsigned()) idx = convert(idx, id, dtypes::int64, index);
    if (v.offset) {
      std::string shifted = reg(Kind::B64);
      ins("add.s64 " + shifted + ", " + idx + ", " + std::to_string(v.offset));
      idx = shifted;
    }
    std::string addr = element_address(idx, index);
    bool half = is_half(d);
    Kind k = half ? Kind::B16 : kind_of(d, index);
    std::vector<std::string> regs;
    for (size_t i = 0; i < v.lanes.size(); i++) regs.push_back(reg(k));
    std::string list;
    for (const std::string& r : regs) list += (list.empty() ? "{" : ", ") + r;
    ins("ld.global.v" + std::to_string(v.lanes.size()) + "." + (half ? std::string("b16") : mem_type(d, index)) + " " + list + "}, [" + addr + "]");
    for (size_t i = 0; i < v.lanes.size(); i++) names_[v.lanes[i].get()] = half ? widen_half(regs[i], d) : regs[i];
  }

  std::string widen_half(const std::string& h, DType d) {
    std::string r = reg(Kind::F32);
    if (d.scalar_type == ScalarType::Float16) {
      ins("cvt.f32.f16 " + r + ", " + h);
    } else {
      std::string w = reg(Kind::B32);
      ins("cvt.u32.u16 " + w + ", " + h);
      ins("shl.b32 " + w + ", " + w + ", 16");
      ins("mov.b32 " + r + ", " + w);
    }
    return r;
  }

  // The state space of INDEX(PARAM, ...) or INDEX(AFTER(PARAM(LOCAL), BARRIER), ...): "global" or "shared".
  static std::string space(const UOp& index) {
    return indexed_buffer(index).arg_as<ParamArg>().addrspace == AddrSpace::LOCAL ? "shared" : "global";
  }

  // The address of INDEX(buffer, idx) in its state space: base + idx * itemsize.
  std::string address(const UOp& index) {
    std::string idx = val(index.src(1));
    DType id = index.src(1).dtype();
    if (!id.is_int()) fail("an index must be an integer", index);
    if (int_bits(id) != 64 || id.is_unsigned()) idx = convert(idx, id, dtypes::int64, index);
    return element_address(idx, index);
  }

  // base + idx * itemsize of INDEX's buffer for a 64-bit element index register.
  std::string element_address(const std::string& idx, const UOp& index) {
    const UOp& buf = indexed_buffer(index);
    int size = buf.dtype().itemsize();
    std::string off = reg(Kind::B64), addr = reg(Kind::B64);
    int shift = 0;
    while ((1 << shift) < size) shift++;
    if ((1 << shift) != size) fail("element size is not a power of two", index);
    if (shift == 0) {
      ins("add.s64 " + addr + ", " + val(buf) + ", " + idx);
      return addr;
    }
    ins("shl.b64 " + off + ", " + idx + ", " + std::to_string(shift));
    ins("add.s64 " + addr + ", " + val(buf) + ", " + off);
    return addr;
  }

  std::string load(const UOp& u) {
    const UOp& index = u.src(0);
    DType d = index.src(0).dtype();
    std::string addr = address(index), mt = mem_type(d, u), sp = space(index);
    std::string gate = index.src().size() == 3 ? val(index.src(2)) : "";
    std::string pre = gate.empty() ? "" : "@" + gate + " ";
    if (is_half(d)) {  // 16 bits into a b16 register, widened to float32
      std::string h = reg(Kind::B16);
      if (!gate.empty()) ins("mov.b16 " + h + ", 0");
      ins(pre + "ld." + sp + ".b16 " + h + ", [" + addr + "]");
      return widen_half(h, d);
    }
    Kind k = kind_of(d, u);
    std::string r = reg(k);
    if (!gate.empty()) ins(std::string(k == Kind::F32 ? "mov.f32 " : k == Kind::F64 ? "mov.f64 " : k == Kind::B32 ? "mov.b32 " : "mov.b64 ") + r + ", " +
                          (k == Kind::F32 ? f32_literal(0) : k == Kind::F64 ? f64_literal(0) : "0"));
    ins(pre + "ld." + sp + "." + mt + " " + r + ", [" + addr + "]");
    return r;
  }

  void store(const UOp& u) {
    const UOp& index = u.src(0);
    DType d = index.src(0).dtype();
    std::string addr = address(index), mt = mem_type(d, u);
    std::string v = convert(val(u.src(1)), u.src(1).dtype(), d, u);
    std::string pre = index.src().size() == 3 ? "@" + val(index.src(2)) + " " : "";
    if (is_half(d)) {
      std::string h = reg(Kind::B16);
      ins(std::string(d.scalar_type == ScalarType::Float16 ? "cvt.rn.f16.f32 " : "cvt.rn.bf16.f32 ") + h + ", " + v);
      v = h;
    }
    ins(pre + "st." + space(index) + "." + mt + " [" + addr + "], " + v);
  }

  void statement(const Statement& s) {
    const UOp& u = s.u;
    switch (s.kind) {
      case StatementKind::BEGIN_LOOP: {
        DType d = u.dtype();
        if (!d.is_int()) fail("a loop counter must be an integer", u);
        std::string end = val(u.src(0)), r = reg(kind_of(d, u)), done = reg(Kind::Pred);
        int id = labels_++;
        names_[u.get()] = r;
        loops_.push_back(id);
        ins(std::string(int_bits(d) == 64 ? "mov.b64 " : "mov.b32 ") + r + ", 0");
        body_.push_back("$L__loop" + std::to_string(id) + ":");
        ins("setp.ge." + op_type(d) + " " + done + ", " + r + ", " + end);
        ins("@" + done + " bra $L__end" + std::to_string(id));  // not .uni: a loop bound may differ per thread
        return;
      }
      case StatementKind::END_LOOP: {
        int id = loops_.back();
        loops_.pop_back();
        const std::string& r = names_.at(u.get());
        ins("add." + op_type(u.dtype()) + " " + r + ", " + r + ", 1");
        ins("bra.uni $L__loop" + std::to_string(id));
        body_.push_back("$L__end" + std::to_string(id) + ":");
        return;
      }
      case StatementKind::VALUE: {
        std::string r;
        if (auto v = vector_of_.find(u.get()); v != vector_of_.end()) {
          if (!names_.count(u.get())) vector_load(*v->second);  // the first lane loads them all
          return;
        }
        if (u.op() == Ops::LOAD) {
          r = load(u);
        } else {
          std::vector<std::string> args;
          std::vector<DType> in;
          for (const UOp& x : u.src()) args.push_back(val(x)), in.push_back(x.dtype());
          r = alu(u, u.op(), u.dtype(), args, in);
        }
        names_[u.get()] = r;
        return;
      }
      case StatementKind::ACC_INIT: {
        Kind k = kind_of(u.dtype(), u);
        std::string r = reg(k), id = immediate(UOp::const_(u.dtype(), accumulator_start(u.arg_as<ReduceArg>().op, u.dtype())));
        if (k == Kind::Pred) {
          std::string w = reg(Kind::B32);
          ins("mov.b32 " + w + ", " + id);
          ins("setp.ne.u32 " + r + ", " + w + ", 0");
        } else {
          copy(r, id, k);
        }
        names_[u.get()] = r;
        return;
      }
      case StatementKind::ACC_UPDATE: {
        std::string acc = names_.at(u.get());
        Ops op = u.arg_as<ReduceArg>().op;
        alu(u, op, u.dtype(), {acc, val(u.src(0))}, {u.dtype(), u.src(0).dtype()}, acc);
        // a 16-bit float accumulator rounds after each sum or product, as lower_late's ops do (compiler/late_lowering.h)
        if (is_half(u.dtype()) && op != Ops::MAX) round_half(acc, acc, u.dtype());
        return;
      }
      case StatementKind::STORE: store(u); return;
      case StatementKind::BARRIER: ins("bar.sync 0"); return;  // barrier 0 with every thread of the block
    }
  }

  const GpuKernel& k_;
  const GpuTarget& t_;
  int counts_[6] = {0, 0, 0, 0, 0, 0};
  int labels_ = 0;
  std::vector<int> loops_;
  std::vector<std::string> entry_, body_;
  std::unordered_map<const UOpNode*, std::string> names_;
  std::unordered_map<const UOpNode*, std::shared_ptr<VectorLoad>> vector_of_;  // each vectorized LOAD -> its vector
};

}  // namespace

GpuKernel prepare_gpu_kernel(const UOp& sink, const GpuTarget& target, const GpuDimsOptions& options) {
  return gpu_pipeline(sink, target, {.optimize = !noopt_enabled(), .dims = options, .late_lowering = true});
}

std::string render_ptx(const std::string& name, const GpuKernel& k, const GpuTarget& t) {
  return PtxRenderer(k, t).render(name);
}

}  // namespace doorbell
