#include "compiler/c_renderer.h"

#include <cmath>
#include <cstdio>
#include <set>
#include <map>
#include <stdexcept>
#include <unordered_map>

#include "ir/kernel_variables.h"
#include "ir/printer.h"
#include "ir/reduce_identity.h"

namespace doorbell {
namespace {

// Helpers shared by every kernel. static inline: clang emits only the ones a kernel uses.
// The float16 and bfloat16 conversions are ir/exec_alu.cpp's, line for line, so both round identically.
constexpr const char* kPrelude = R"C(#include <stdint.h>
static inline uint32_t db_f2u(float f) { uint32_t u; __builtin_memcpy(&u, &f, 4); return u; }
static inline float db_u2f(uint32_t u) { float f; __builtin_memcpy(&f, &u, 4); return f; }
static inline float db_h2f(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
  if (exp == 0x1f) return db_u2f(sign | 0x7f800000u | (man << 13));
  if (exp == 0) { float v = (float)man * 0x1p-24f; return sign ? -v : v; }
  return db_u2f(sign | ((exp - 15 + 127) << 23) | (man << 13));
}
static inline uint16_t db_f2h(float f) {
  uint32_t x = db_f2u(f);
  uint16_t sign = (x >> 16) & 0x8000;
  uint32_t exp = (x >> 23) & 0xff, man = x & 0x7fffff;
  if (exp == 0xff) return sign | 0x7c00 | (man ? 0x200 | (man >> 13) : 0);
  int e = (int)exp - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00;
  if (e <= 0) {
    if (e < -10) return sign;
    man |= 0x800000;
    int shift = 14 - e;
    uint32_t hm = man >> shift, rem = man & ((1u << shift) - 1), halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (hm & 1))) hm++;
    return sign | (uint16_t)hm;
  }
  uint32_t half = ((uint32_t)e << 10) | (man >> 13), rem = man & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (half & 1))) half++;
  return sign | (uint16_t)half;
}
static inline float db_bf2f(uint16_t b) { return db_u2f((uint32_t)b << 16); }
static inline uint16_t db_f2bf(float f) {
  uint32_t u = db_f2u(f);
  if (f != f) return (uint16_t)((u >> 16) | 0x40);
  u += 0x7fff + ((u >> 16) & 1);
  return (uint16_t)(u >> 16);
}
static inline float db_rh(float f) { return db_h2f(db_f2h(f)); }
static inline float db_rbf(float f) { return db_bf2f(db_f2bf(f)); }
static inline float db_maxf(float a, float b) { return (a != a || b != b) ? __builtin_nanf("") : (a < b ? b : a); }
static inline double db_maxd(double a, double b) { return (a != a || b != b) ? __builtin_nan("") : (a < b ? b : a); }
)C";

[[noreturn]] void fail(const std::string& what, const UOp& u) {
  throw std::invalid_argument("render_c: " + what + ": " + print_node(u));
}

bool is_half(DType d) { return d.scalar_type == ScalarType::Float16 || d.scalar_type == ScalarType::BFloat16; }
bool is_double(DType d) { return d.scalar_type == ScalarType::Float64 || d.scalar_type == ScalarType::WeakFloat; }

// A vector value (compiler/cpu/vectorize.h): a clang vector of 32-bit elements; bool lanes are int32 masks (0 or -1),
// what a vector comparison gives. The typedefs ending in `u` are the same vectors in memory, aligned as one element.
std::string vector_type(DType d) {
  switch (d.scalar_type) {
    case ScalarType::Float32: return "db_f32x" + std::to_string(d.lanes);
    case ScalarType::Int32: case ScalarType::Bool: return "db_i32x" + std::to_string(d.lanes);
    case ScalarType::UInt32: return "db_u32x" + std::to_string(d.lanes);
    default: throw std::invalid_argument("render_c: no vector type for " + d.name() + "; vectors hold 32-bit elements");
  }
}



// The C type that holds a value of `d` in a register.
std::string ctype(DType d) {
  if (d.lanes != 1) return vector_type(d);
  switch (d.scalar_type) {
    case ScalarType::Bool: case ScalarType::UInt8: return "uint8_t";
    case ScalarType::Int8: return "int8_t";
    case ScalarType::Int16: return "int16_t";
    case ScalarType::Int32: return "int32_t";
    case ScalarType::Int64: case ScalarType::WeakInt: return "int64_t";
    case ScalarType::UInt16: return "uint16_t";
    case ScalarType::UInt32: return "uint32_t";
    case ScalarType::UInt64: return "uint64_t";
    case ScalarType::Float16: case ScalarType::BFloat16: case ScalarType::Float32: return "float";
    case ScalarType::Float64: case ScalarType::WeakFloat: return "double";
    default: throw std::invalid_argument("render_c: dtype " + d.name() + " has no C type");
  }
}
std::string vector_typedefs(int lanes) {
  std::string out, n = std::to_string(lanes);
  for (ScalarType e : {ScalarType::Float32, ScalarType::Int32, ScalarType::UInt32}) {
    std::string c = ctype(DType(e)), t = vector_type(DType(e, static_cast<uint16_t>(lanes)));
    out += "typedef " + c + " " + t + " __attribute__((ext_vector_type(" + n + ")));\n";
    out += "typedef " + c + " " + t + "u __attribute__((ext_vector_type(" + n + "), aligned(4)));\n";
  }
  return out;
}

// The C type of an element in memory: 16-bit floats are stored as their bits.
std::string storage_type(DType d) { return is_half(d) ? "uint16_t" : ctype(d); }
std::string unsigned_type(DType d) {
  switch (d.bitsize() == 0 ? 64 : d.bitsize()) {
    case 8: return "uint8_t";
    case 16: return "uint16_t";
    case 32: return "uint32_t";
    default: return "uint64_t";
  }
}

// Rounds a float32 expression to a 16-bit float type; other types are already exact.
std::string round_to(DType d, const std::string& e) {
  if (d.scalar_type == ScalarType::Float16) return "db_rh(" + e + ")";
  if (d.scalar_type == ScalarType::BFloat16) return "db_rbf(" + e + ")";
  return e;
}

std::string float_literal(DType d, double v) {
  bool dbl = is_double(d);
  if (std::isnan(v)) return dbl ? "__builtin_nan(\"\")" : "__builtin_nanf(\"\")";
  if (std::isinf(v)) return std::string(v < 0 ? "(-" : "(") + (dbl ? "__builtin_inf())" : "__builtin_inff())");
  char buf[64];
  std::snprintf(buf, sizeof buf, "(%a%s)", v, dbl ? "" : "f");
  return buf;
}

std::string int_literal(DType d, __int128 v) {
  char buf[64];
  if (d.scalar_type == ScalarType::UInt64) {
    std::snprintf(buf, sizeof buf, "%lluull", static_cast<unsigned long long>(v));
    return buf;
  }
  if (v == INT64_MIN) return "(-9223372036854775807ll - 1)";
  // a weakint that fits is a plain C int, so index math on int32 values stays int32 (see value_ctype)
  if (d.scalar_type == ScalarType::WeakInt && v >= INT32_MIN && v <= INT32_MAX) {
    std::snprintf(buf, sizeof buf, v < 0 ? "(%lld)" : "%lld", static_cast<long long>(v));
    return buf;
  }
  std::snprintf(buf, sizeof buf, "((%s)%lldll)", ctype(d).c_str(), static_cast<long long>(v));
  return buf;
}

std::string const_literal(const UOp& u) {
  ConstValue v = u.const_value();
  DType d = u.dtype();
  if (d.is_bool()) return std::get<bool>(v) ? "1" : "0";
  if (d.is_float()) return float_literal(d, std::get<double>(v));
  if (d.scalar_type == ScalarType::UInt64) return int_literal(d, static_cast<uint64_t>(std::get<int64_t>(v)));
  return int_literal(d, std::get<int64_t>(v));
}

// A float op computed in double and rounded once to float32, as exec_alu does for the math library's functions.
std::string via_double(DType d, const std::string& call) { return is_double(d) ? call : "(float)" + call; }

std::string cast(DType out, const std::string& t, const std::string& a) {
  if (out.is_bool()) return "(uint8_t)(" + a + " != 0)";
  if (is_half(out)) return round_to(out, "(float)" + a);
  return "(" + t + ")" + a;
}

std::string bitcast(DType out, DType in, const std::string& a) {
  std::string s = storage_type(in), t = storage_type(out);
  std::string src = in.scalar_type == ScalarType::Float16 ? "db_f2h(" + a + ")" : in.scalar_type == ScalarType::BFloat16 ? "db_f2bf(" + a + ")" : a;
  std::string bits = "({ " + s + " s_ = " + src + "; " + t + " t_; __builtin_memcpy(&t_, &s_, sizeof t_); t_; })";
  if (out.scalar_type == ScalarType::Float16) return "db_h2f(" + bits + ")";
  if (out.scalar_type == ScalarType::BFloat16) return "db_bf2f(" + bits + ")";
  if (out.is_bool()) return "(uint8_t)(" + bits + " != 0)";
  return bits;
}

// One ALU op on rendered operands of C types `types`, giving C type `t`. `u` is only for error messages.
std::string alu(const UOp& u, Ops op, DType out, const std::string& t, std::vector<std::string> a,
                const std::vector<std::string>& types, const std::vector<DType>& in) {
  bool f = out.is_float(), b = out.is_bool();
  // Ring and bitwise ops commute with truncation: operands are converted to the result's C type first, so an
  // int32 operand of an int64 result is widened before it can overflow, and an int64 operand of an int32 result
  // (whose bounds fit) is narrowed without changing the result's low bits.
  if (!f && !b && (op == Ops::ADD || op == Ops::SUB || op == Ops::MUL || op == Ops::NEG || op == Ops::MULACC ||
                   op == Ops::AND || op == Ops::OR || op == Ops::XOR))
    for (size_t i = 0; i < a.size(); i++)
      if (types[i] != t) a[i] = "(" + t + ")" + a[i];
  auto bin = [&](const char* sym) { return "(" + a[0] + " " + sym + " " + a[1] + ")"; };
  auto wrap = [&](const std::string& e) { return "((" + t + ")" + e + ")"; };
  switch (op) {
    case Ops::ADD: return b ? bin("|") : f ? bin("+") : wrap(bin("+"));
    case Ops::SUB: return b ? bin("^") : f ? bin("-") : wrap(bin("-"));
    case Ops::MUL: return b ? bin("&") : f ? bin("*") : wrap(bin("*"));
    case Ops::FDIV:
      if (!f) fail("FDIV needs a float dtype", u);
      return bin("/");
    case Ops::MAX:
      if (f) return std::string(is_double(out) ? "db_maxd(" : "db_maxf(") + a[0] + ", " + a[1] + ")";
      return "(" + a[0] + " < " + a[1] + " ? " + a[1] + " : " + a[0] + ")";
    case Ops::NEG: return b ? a[0] : f ? "(-" + a[0] + ")" : wrap("(-" + a[0] + ")");
    case Ops::TRUNC: return !f ? a[0] : is_double(out) ? "__builtin_trunc(" + a[0] + ")" : "__builtin_truncf(" + a[0] + ")";
    case Ops::SQRT: case Ops::EXP2: case Ops::LOG2: case Ops::SIN: {
      if (!f) fail("a float dtype is required", u);
      const char* fn = op == Ops::SQRT ? "__builtin_sqrt" : op == Ops::EXP2 ? "__builtin_exp2" : op == Ops::LOG2 ? "__builtin_log2" : "__builtin_sin";
      return via_double(out, std::string(fn) + "((double)" + a[0] + ")");
    }
    case Ops::POW:
      if (!f) fail("POW needs a float dtype", u);
      return via_double(out, "__builtin_pow((double)" + a[0] + ", (double)" + a[1] + ")");
    case Ops::RECIPROCAL:
      if (!f) fail("RECIPROCAL needs a float dtype", u);
      return is_double(out) ? "(1.0 / " + a[0] + ")" : "(1.0f / " + a[0] + ")";
    case Ops::MULACC:
      if (f) return via_double(out, "((double)" + a[0] + " * (double)" + a[1] + " + (double)" + a[2] + ")");
      return b ? "((" + a[0] + " & " + a[1] + ") | " + a[2] + ")" : wrap("(" + a[0] + " * " + a[1] + " + " + a[2] + ")");
    case Ops::CMPLT: return "(uint8_t)" + bin("<");
    case Ops::CMPNE: return "(uint8_t)" + bin("!=");
    case Ops::CMPEQ: return "(uint8_t)" + bin("==");
    case Ops::AND: return wrap(bin("&"));
    case Ops::OR: return wrap(bin("|"));
    case Ops::XOR: return wrap(bin("^"));
    case Ops::SHL: {  // unsigned and at least 32 bits: a sub-word type would promote to int and overflow it
      std::string ut = out.bitsize() < 32 && out.scalar_type != ScalarType::WeakInt ? "uint32_t" : unsigned_type(out);
      return wrap("((" + ut + ")" + a[0] + " << " + a[1] + ")");  // lower_late has made the amount < the width
    }
    case Ops::SHR: return wrap(bin(">>"));
    case Ops::CDIV: case Ops::CMOD:  // lower_late has made the divisor nonzero (and not -1 for signed types)
      if (f || b) fail("integer division needs an integer dtype", u);
      return wrap(bin(op == Ops::CDIV ? "/" : "%"));
    case Ops::WHERE: return "(" + a[0] + " ? " + a[1] + " : " + a[2] + ")";
    case Ops::CAST: return cast(out, t, a[0]);
    case Ops::BITCAST: return bitcast(out, in[0], a[0]);
    default: fail("no C rendering for this op", u);
  }
}

class CRenderer {
 public:
  std::string render(const std::string& name, const UOp& sink, const std::vector<Statement>& statements) {
    out_ = kPrelude;
    std::set<int> widths;
    for (const Statement& st : statements)
      if (st.u.dtype().lanes > 1) widths.insert(st.u.dtype().lanes);
    for (int w : widths) out_ += vector_typedefs(w);
    if (!widths.empty())  // uses_ serves the vector ops' fusion only
      for (const UOp& u : sink.toposort())
        for (const UOp& x : u.src()) uses_[x.get()]++;
    out_ += "void " + name + "(void* const* bufs, const int64_t* vars, int32_t core_id, int32_t core_count) {\n";
    out_ += "  (void)vars; (void)core_id; (void)core_count;\n";
    std::map<int64_t, UOp> params;
    for (const UOp& u : sink.toposort())
      if (u.op() == Ops::PARAM && u.arg_as<ParamArg>().addrspace == AddrSpace::GLOBAL) params.emplace(u.arg_as<ParamArg>().slot, u);
    for (const auto& [slot, p] : params) {
      std::string t = storage_type(p.dtype()), n = "data" + std::to_string(slot);
      out_ += "  " + t + "* restrict " + n + " = (" + t + "*)bufs[" + std::to_string(slot) + "];\n";
      names_[p.get()] = n;
    }
    std::vector<UOp> variables = kernel_variables(sink);  // the scalar parameters, in ProgramInfo::vars' order
    for (size_t i = 0; i < variables.size(); i++) {
      std::string n = "var" + std::to_string(i);
      out_ += "  const " + ctype(variables[i].dtype()) + " " + n + " = (" + ctype(variables[i].dtype()) + ")vars[" + std::to_string(i) + "];\n";
      names_[variables[i].get()] = n;
    }
    bool any_split = false;
    for (const Statement& s : statements) any_split |= s.kind == StatementKind::BEGIN_LOOP && s.split;
    // Without a loop to divide, core 0 does all the work and the others have none.
    if (!any_split) out_ += "  if (core_id != 0) return;\n";
    depth_ = 1;
    for (const Statement& s : statements) statement(s, any_split);
    out_ += "}\n";
    return out_;
  }

 private:
  void line(const std::string& s) { out_ += std::string(2 * depth_, ' ') + s + "\n"; }

  std::string fresh(const char* prefix) { return prefix + std::to_string(counter_++); }

  const std::string& name(const UOp& u) {
    auto it = names_.find(u.get());
    if (it == names_.end()) fail("a value is used before it is defined", u);
    return it->second;
  }

  std::string expr(const UOp& u) { return u.op() == Ops::CONST ? const_literal(u) : name(u); }
  std::string expr_type(const UOp& u) {
    if (u.op() == Ops::CONST) return const_literal(u).find("int64_t") == std::string::npos && u.dtype().scalar_type == ScalarType::WeakInt ? "int" : ctype(u.dtype());
    auto it = types_.find(u.get());
    return it == types_.end() ? ctype(u.dtype()) : it->second;
  }
  // Index math is weakint (64-bit in the IR); a node whose bounds fit in int32 is computed in int32: cheaper
  // address arithmetic and more vectorization, with the same value.
  std::string value_ctype(const UOp& u) {
    if (u.dtype().lanes > 1) return ctype(u.dtype());
    if (u.dtype().scalar_type == ScalarType::WeakInt && u.has_bounds() && u.vmin() >= INT32_MIN && u.vmax() <= INT32_MAX)
      return "int32_t";
    return ctype(u.dtype());
  }

  std::string element(const UOp& index) { return name(index.src(0)) + "[" + expr(index.src(1)) + "]"; }

  std::string load(const UOp& u) {
    const UOp& index = u.src(0);
    DType d = index.src(0).dtype();
    std::string e = element(index);
    if (d.scalar_type == ScalarType::Float16) e = "db_h2f(" + e + ")";
    else if (d.scalar_type == ScalarType::BFloat16) e = "db_bf2f(" + e + ")";
    if (index.src().size() == 3) e = "(" + expr(index.src(2)) + " ? " + e + " : 0)";  // a false gate reads 0
    return e;
  }

  void statement(const Statement& s, bool any_split) {
    const UOp& u = s.u;
    switch (s.kind) {
      case StatementKind::BEGIN_LOOP: {
        std::string r = fresh("ridx"), t = value_ctype(u), end = expr(u.src(0));
        names_[u.get()] = r;
        types_[u.get()] = t;
        split_stack_.push_back(s.split);
        if (s.split) {
          line("{");
          depth_++;
          line("const " + t + " " + r + "_lo = (" + t + ")((__int128)" + end + " * core_id / core_count);");
          line("const " + t + " " + r + "_hi = (" + t + ")((__int128)" + end + " * (core_id + 1) / core_count);");
          line("for (" + t + " " + r + " = " + r + "_lo; " + r + " < " + r + "_hi; " + r + "++) {");
        } else {
          line("for (" + t + " " + r + " = 0; " + r + " < " + end + "; " + r + "++) {");
        }
        depth_++;
        return;
      }
      case StatementKind::END_LOOP:
        depth_--;
        line("}");
        if (split_stack_.back()) {
          depth_--;
          line("}");
        }
        split_stack_.pop_back();
        return;
      case StatementKind::VALUE: {
        if (u.op() == Ops::CAST && u.dtype() == dtypes::float32 && is_half(u.src(0).dtype())) {
          names_[u.get()] = expr(u.src(0));  // a 16-bit float already is its float32 value
          types_[u.get()] = "float";
          return;
        }
        std::string e;
        if (u.dtype().lanes > 1) {
          e = vector_value(u);
        } else if (u.op() == Ops::LOAD) {
          e = load(u);
        } else {
          std::vector<std::string> args, types;
          std::vector<DType> in;
          for (const UOp& x : u.src()) args.push_back(expr(x)), types.push_back(expr_type(x)), in.push_back(x.dtype());
          e = alu(u, u.op(), u.dtype(), value_ctype(u), args, types, in);
        }
        std::string n = fresh(u.op() == Ops::LOAD ? "val" : "alu"), t = u.op() == Ops::LOAD ? ctype(u.dtype()) : value_ctype(u);
        line("const " + t + " " + n + " = " + e + ";");
        names_[u.get()] = n;
        types_[u.get()] = t;
        return;
      }
      case StatementKind::ACC_INIT: {
        std::string n = fresh("acc");
        DType d = u.dtype().scalar();
        std::string id = const_literal(UOp::const_(d, accumulator_start(u.arg_as<ReduceArg>().op, d)));
        if (u.dtype().lanes > 1) id = "(" + ctype(u.dtype()) + ")" + id;
        line(ctype(u.dtype()) + " " + n + " = " + id + ";");
        names_[u.get()] = n;
        return;
      }
      case StatementKind::ACC_UPDATE: {
        const std::string& acc = name(u);
        Ops op = u.arg_as<ReduceArg>().op;
        std::string t = ctype(u.dtype());
        if (u.dtype().lanes > 1) return line(acc + " = " + vector_accumulate(u, op, acc) + ";");
        if (u.src(0).dtype().lanes > 1) {  // a vector's lanes folded into a scalar, left to right
          line("{");
          line("  const " + ctype(u.src(0).dtype()) + " f_ = " + expr(u.src(0)) + ";");
          for (int i = 0; i < u.src(0).dtype().lanes; i++)
            line("  " + acc + " = " + alu(u, op, u.dtype(), t, {acc, "f_[" + std::to_string(i) + "]"}, {t, t}, {u.dtype(), u.dtype()}) + ";");
          line("}");
          return;
        }
        std::string e = alu(u, op, u.dtype(), t, {acc, expr(u.src(0))}, {t, expr_type(u.src(0))}, {u.dtype(), u.src(0).dtype()});
        // a 16-bit float accumulator rounds after each sum or product, as lower_late's ops do (compiler/late_lowering.h)
        if (op != Ops::MAX) e = round_to(u.dtype(), e);
        line(acc + " = " + e + ";");
        return;
      }
      case StatementKind::BARRIER:  // a CPU kernel has no thread block to wait for (only GPU kernels group reduces)
        throw std::invalid_argument("render_c: a BARRIER needs a GPU thread block: " + print_node(u));
      case StatementKind::STORE: {
        const UOp& index = u.src(0);
        DType d = index.src(0).dtype();
        std::string v = expr(u.src(1));
        std::string st;
        if (u.src(1).dtype().lanes > 1) {  // a vector store at the index (compiler/cpu/vectorize.h)
          st = "*(" + ctype(u.src(1).dtype()) + "u*)&" + element(index) + " = " + v + ";";
        } else {
          if (d.scalar_type == ScalarType::Float16) v = "db_f2h(" + v + ")";
          else if (d.scalar_type == ScalarType::BFloat16) v = "db_f2bf(" + v + ")";
          else v = "(" + storage_type(d) + ")" + v;
          st = element(index) + " = " + v + ";";
        }
        if (index.src().size() == 3) st = "if (" + expr(index.src(2)) + ") " + st;
        // outside every divided loop, every core would store the same element: core 0 does it alone
        bool in_split = false;
        for (bool b : split_stack_) in_split |= b;
        if (any_split && !in_split) st = "if (core_id == 0) " + st;
        line(st);
        return;
      }
    }
  }

  // An operand of a vector op as a vector of `vt`: a scalar is broadcast (a bool as a mask).
  std::string as_vector(const UOp& x, DType vt) {
    if (x.dtype().lanes > 1) return expr(x);
    std::string t = ctype(vt);
    if (vt.is_bool()) return "((" + t + ")(-(int32_t)(" + expr(x) + " != 0)))";
    return "((" + t + ")(" + ctype(DType(vt.scalar_type)) + ")" + expr(x) + ")";
  }

  std::string vector_max(DType d, const std::string& a, const std::string& b) {
    std::string t = ctype(d);
    if (!d.is_float()) return "({ const " + t + " a_ = " + a + ", b_ = " + b + "; a_ < b_ ? b_ : a_; })";
    return "({ const " + t + " a_ = " + a + ", b_ = " + b + "; (a_ != a_ | b_ != b_) ? (" + t +
           ")__builtin_nanf(\"\") : (a_ < b_ ? b_ : a_); })";
  }

  // A vector ALU op, CAST, BITCAST or LOAD (compiler/cpu/vectorize.h has made only what is written here).
  std::string vector_value(const UOp& u) {
    DType d = u.dtype();
    std::string t = ctype(d);
    if (u.op() == Ops::LOAD) {  // a false gate reads zeros and touches no memory
      std::string load = "*(const " + t + "u*)&" + element(u.src(0));
      if (u.src(0).src().size() == 3) return "(" + expr(u.src(0).src(2)) + " ? " + load + " : (" + t + ")0)";
      return load;
    }
    const UOp& x0 = u.src(0);
    if (u.op() == Ops::CAST) {
      if (x0.dtype().lanes == 1) return as_vector(x0, d);
      DType s = DType(x0.dtype().scalar_type, d.lanes);
      if (d.is_bool()) return "(" + expr(x0) + " != 0)";
      if (s.is_bool()) return "__builtin_convertvector(-" + expr(x0) + ", " + t + ")";
      if (ctype(s) == t) return expr(x0);
      return "__builtin_convertvector(" + expr(x0) + ", " + t + ")";
    }
    if (u.op() == Ops::BITCAST) return "((" + t + ")" + expr(x0) + ")";
    // the operands' vector type: the result's, or for a comparison its operands' element type
    DType od = group::Binary.contains(u.op()) || group::Unary.contains(u.op()) ? DType(x0.dtype().scalar_type, d.lanes) : d;
    if (u.op() == Ops::SHL || u.op() == Ops::SHR) od = d;
    auto a = [&](size_t i) { return as_vector(u.src(i), od); };
    bool f = d.is_float(), b = d.is_bool();
    auto bin = [&](const char* sym) { return "(" + a(0) + " " + sym + " " + a(1) + ")"; };
    // a float product used only by this sum is fused into it: one rounding, the FMA units' rate (the C compiler
    // would contract a * b + c itself with -ffp-contract=fast; the scalar path keeps every rounding)
    if (u.op() == Ops::ADD && f)
      for (size_t i = 0; i < 2; i++) {
        const UOp& m = u.src(i);
        if (m.op() == Ops::MUL && m.dtype() == d && uses_[m.get()] == 1) return fused(m, a(1 - i));
      }
    switch (u.op()) {
      case Ops::ADD: return b ? bin("|") : bin("+");
      case Ops::SUB: return b ? bin("^") : bin("-");
      case Ops::MUL: return b ? bin("&") : bin("*");
      case Ops::FDIV: return bin("/");
      case Ops::MAX: return vector_max(d, a(0), a(1));
      case Ops::NEG: return b ? a(0) : "(-" + a(0) + ")";
      case Ops::RECIPROCAL: return "((" + t + ")1.0f / " + a(0) + ")";
      case Ops::TRUNC: return f ? "__builtin_elementwise_trunc(" + a(0) + ")" : a(0);
      case Ops::SQRT: return "__builtin_elementwise_sqrt(" + a(0) + ")";
      case Ops::CMPLT: return bin("<");
      case Ops::CMPNE: return bin("!=");
      case Ops::CMPEQ: return bin("==");
      case Ops::AND: return bin("&");
      case Ops::OR: return bin("|");
      case Ops::XOR: return bin("^");
      case Ops::SHL: {
        std::string ut = vector_type(DType(ScalarType::UInt32, d.lanes));
        return "((" + t + ")((" + ut + ")" + a(0) + " << (" + ut + ")" + a(1) + "))";
      }
      case Ops::SHR: return bin(">>");
      case Ops::WHERE: return "(" + expr(u.src(0)) + " ? " + as_vector(u.src(1), d) + " : " + as_vector(u.src(2), d) + ")";
      default: fail("no vector C rendering for this op", u);
    }
  }

  // mul's operands times each other plus `addend`, rounded once.
  std::string fused(const UOp& mul, const std::string& addend) {
    return "__builtin_elementwise_fma(" + as_vector(mul.src(0), mul.dtype()) + ", " + as_vector(mul.src(1), mul.dtype()) + ", " + addend + ")";
  }

  // A vector accumulator combined with its term; a float product is fused into a sum (one rounding, as BLAS
  // kernels do): what makes a register-tiled matmul run at the FMA units' rate.
  std::string vector_accumulate(const UOp& u, Ops op, const std::string& acc) {
    DType d = u.dtype();
    const UOp& x = u.src(0);
    if (op == Ops::ADD && d.is_float() && x.op() == Ops::MUL && x.dtype() == d) return fused(x, acc);
    std::string v = as_vector(x, d);
    if (op == Ops::MAX) return vector_max(d, acc, v);
    if (d.is_bool()) return "(" + acc + (op == Ops::MUL ? " & " : " | ") + v + ")";
    return "(" + acc + (op == Ops::MUL ? " * " : " + ") + v + ")";
  }

  std::string out_;
  int depth_ = 1;
  int counter_ = 0;
  std::vector<bool> split_stack_;
  std::unordered_map<const UOpNode*, std::string> names_;
  std::unordered_map<const UOpNode*, std::string> types_;  // C type of each named value
  std::unordered_map<const UOpNode*, int> uses_;  // how many nodes of the kernel read each node
};

}  // namespace

std::string c_kernel_name(const UOp& sink) { return "kernel_" + sink.key().hex().substr(0, 16); }

std::string render_c(const std::string& name, const UOp& sink, const std::vector<Statement>& statements) {
  return CRenderer().render(name, sink, statements);
}

}  // namespace doorbell
