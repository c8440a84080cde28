#include "compiler/gpu/llvmir_renderer.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>
#include <stdexcept>
#include <unordered_map>
#include <vector>

#include "compiler/late_lowering.h"
#include "compiler/linearize.h"
#include "ir/graph_rewrite.h"
#include "ir/kernel_variables.h"
#include "ir/printer.h"
#include "ir/reduce_identity.h"

namespace doorbell {
namespace {

[[noreturn]] void fail(const std::string& what, const UOp& u) {
  throw std::invalid_argument("render_llvm_ir: " + what + ": " + print_node(u));
}

// AMDGPU data layout of LLVM 19 (what `clang-19 -target amdgcn-amd-amdhsa` writes; the compiler verifies it
// against the TargetMachine). A5: allocas live in the private address space 5.
constexpr const char* kAmdgpuDataLayout =
    "e-p:64:64-p1:64:64-p2:32:32-p3:32:32-p4:64:64-p5:32:32-p6:32:32-p7:160:256:256:32-p8:128:128-"
    "p9:192:256:256:32-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024-"
    "v2048:2048-n32:64-S32-A5-G1-ni:7:8:9";

// float16/bfloat16 conversions, written to give the bits of compiler/c_renderer.cpp's db_f2h/db_h2f/db_f2bf/db_bf2f.
// float -> float16 rounds in integer arithmetic, as the C helper does, and not with fptrunc: the AMDGPU backend
// folds fptrunc(fmul a, b) into v_fma_mixlo_f16, which rounds the exact product once to float16 instead of to
// float32 first (a different result at double-rounding ties). fpext is exact; NaNs are built by hand so their
// payload bits match (the hardware quiets them differently).
constexpr const char* kHalfHelpers = R"LL(
define internal i16 @db_f2h(float %f) #1 {
  %x = bitcast float %f to i32
  %hi = lshr i32 %x, 16
  %sign = and i32 %hi, 32768
  %exp8 = lshr i32 %x, 23
  %exp = and i32 %exp8, 255
  %man = and i32 %x, 8388607
  %isspecial = icmp eq i32 %exp, 255
  %mans = lshr i32 %man, 13
  %nanpay = or i32 %mans, 512
  %hasman = icmp ne i32 %man, 0
  %payload = select i1 %hasman, i32 %nanpay, i32 0
  %sp1 = or i32 %sign, 31744
  %special = or i32 %sp1, %payload
  %e = sub i32 %exp, 112
  %overflow = icmp sge i32 %e, 31
  %eshift = shl i32 %e, 10
  %nh = or i32 %eshift, %mans
  %rem = and i32 %man, 8191
  %gt = icmp ugt i32 %rem, 4096
  %eq = icmp eq i32 %rem, 4096
  %odd = and i32 %nh, 1
  %isodd = icmp ne i32 %odd, 0
  %tie = and i1 %eq, %isodd
  %up = or i1 %gt, %tie
  %upz = zext i1 %up to i32
  %nr = add i32 %nh, %upz
  %normal = or i32 %sign, %nr
  %tiny = icmp slt i32 %e, -10
  %mfull = or i32 %man, 8388608
  %shift0 = sub i32 14, %e
  %shift = and i32 %shift0, 31
  %hm = lshr i32 %mfull, %shift
  %one = shl i32 1, %shift
  %mask = sub i32 %one, 1
  %srem = and i32 %mfull, %mask
  %halfway = lshr i32 %one, 1
  %sgt = icmp ugt i32 %srem, %halfway
  %seq = icmp eq i32 %srem, %halfway
  %hodd = and i32 %hm, 1
  %hisodd = icmp ne i32 %hodd, 0
  %stie = and i1 %seq, %hisodd
  %sup = or i1 %sgt, %stie
  %supz = zext i1 %sup to i32
  %hmr = add i32 %hm, %supz
  %sub1 = or i32 %sign, %hmr
  %subn = select i1 %tiny, i32 %sign, i32 %sub1
  %issub = icmp sle i32 %e, 0
  %r1 = select i1 %issub, i32 %subn, i32 %normal
  %r2 = select i1 %overflow, i32 %sp1, i32 %r1
  %r3 = select i1 %isspecial, i32 %special, i32 %r2
  %r = trunc i32 %r3 to i16
  ret i16 %r
}
define internal float @db_h2f(i16 %h) #1 {
  %hf = bitcast i16 %h to half
  %f = fpext half %hf to float
  %hz = zext i16 %h to i32
  %exp = and i32 %hz, 31744
  %man = and i32 %hz, 1023
  %e31 = icmp eq i32 %exp, 31744
  %hasman = icmp ne i32 %man, 0
  %isnan = and i1 %e31, %hasman
  %s = and i32 %hz, 32768
  %sign = shl i32 %s, 16
  %m13 = shl i32 %man, 13
  %b1 = or i32 %sign, 2139095040
  %b2 = or i32 %b1, %m13
  %nf = bitcast i32 %b2 to float
  %r = select i1 %isnan, float %nf, float %f
  ret float %r
}
define internal i16 @db_f2bf(float %f) #1 {
  %u = bitcast float %f to i32
  %isnan = fcmp uno float %f, 0.0
  %hi = lshr i32 %u, 16
  %nanbits = or i32 %hi, 64
  %lsb = and i32 %hi, 1
  %bias = add i32 %lsb, 32767
  %r = add i32 %u, %bias
  %rh = lshr i32 %r, 16
  %sel = select i1 %isnan, i32 %nanbits, i32 %rh
  %t = trunc i32 %sel to i16
  ret i16 %t
}
define internal float @db_bf2f(i16 %b) #1 {
  %z = zext i16 %b to i32
  %s = shl i32 %z, 16
  %f = bitcast i32 %s to float
  ret float %f
}
define internal float @db_rh(float %f) #1 {
  %h = call i16 @db_f2h(float %f)
  %r = call float @db_h2f(i16 %h)
  ret float %r
}
define internal float @db_rbf(float %f) #1 {
  %h = call i16 @db_f2bf(float %f)
  %r = call float @db_bf2f(i16 %h)
  ret float %r
}
)LL";

bool is_half(DType d) { return d.scalar_type == ScalarType::Float16 || d.scalar_type == ScalarType::BFloat16; }
bool is_double(DType d) { return d.scalar_type == ScalarType::Float64 || d.scalar_type == ScalarType::WeakFloat; }
// Whether an integer of this dtype widens with zext (unsigned and bool) rather than sext.
bool zero_extends(DType d) { return d.is_unsigned() || d.is_bool(); }

bool is_int_type(const std::string& t) { return !t.empty() && t[0] == 'i'; }
int int_bits(const std::string& t) { return std::stoi(t.substr(1)); }

// The LLVM type of a value of `d` in a register. Weak ints whose bounds fit in int32 are i32.
std::string reg_type(DType d, const UOp* bounds_of = nullptr) {
  if (d.lanes != 1) throw std::invalid_argument("render_llvm_ir: vector dtype " + d.name() + " is not supported yet");
  switch (d.scalar_type) {
    case ScalarType::Bool: return "i1";
    case ScalarType::Int8: case ScalarType::UInt8: return "i8";
    case ScalarType::Int16: case ScalarType::UInt16: return "i16";
    case ScalarType::Int32: case ScalarType::UInt32: return "i32";
    case ScalarType::Int64: case ScalarType::UInt64: return "i64";
    case ScalarType::WeakInt:
      if (bounds_of && bounds_of->has_bounds() && bounds_of->vmin() >= INT32_MIN && bounds_of->vmax() <= INT32_MAX)
        return "i32";
      return "i64";
    case ScalarType::Float16: case ScalarType::BFloat16: case ScalarType::Float32: return "float";
    case ScalarType::Float64: case ScalarType::WeakFloat: return "double";
    default: throw std::invalid_argument("render_llvm_ir: dtype " + d.name() + " has no LLVM type");
  }
}
std::string reg_type(const UOp& u) { return reg_type(u.dtype(), &u); }

// The LLVM type of an element in memory: 16-bit floats are their bits.
std::string mem_type(DType d) { return is_half(d) ? "i16" : reg_type(d); }

std::string float_literal(const std::string& t, double v) {
  // LLVM writes float constants as the hex bits of the equal double; a float constant must be exact in float.
  double exact = t == "float" ? static_cast<double>(static_cast<float>(v)) : v;
  if (std::isnan(v)) exact = std::copysign(NAN, v);
  uint64_t bits;
  std::memcpy(&bits, &exact, 8);
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%016" PRIX64, bits);
  return buf;
}

// An integer value as a literal of `t`, wrapped to its width.
std::string int_literal(const std::string& t, __int128 v) {
  int bits = int_bits(t);
  if (bits == 1) return (v & 1) ? "true" : "false";
  unsigned __int128 mask = bits >= 64 ? ~static_cast<unsigned __int128>(0) >> 64 : (static_cast<unsigned __int128>(1) << bits) - 1;
  unsigned __int128 w = static_cast<unsigned __int128>(v) & mask;
  int64_t s = static_cast<int64_t>(static_cast<uint64_t>(w));
  if (bits < 64 && (w >> (bits - 1)) & 1) s = static_cast<int64_t>(static_cast<uint64_t>(w)) - (int64_t{1} << bits);
  return std::to_string(s);
}

std::string zero_of(const std::string& t) { return is_int_type(t) ? int_literal(t, 0) : float_literal(t, 0.0); }

// A rendered value: its text (a %name or a literal), LLVM type and IR dtype (for signedness).
struct V {
  std::string s, t;
  DType d;
};

class LlvmRenderer {
 public:
  explicit LlvmRenderer(const LlvmIrTarget& target) : target_(target) {}

  std::string render(const std::string& name, const GpuKernel& k) {
    const UOp sink = lower_late(k.sink, amdgpu_lowering_options());
    std::vector<Statement> statements = linearize(sink);
    std::map<int64_t, UOp> params;
    std::vector<UOp> specials;
    std::string globals;
    for (const UOp& u : sink.toposort()) {
      if (u.op() == Ops::PARAM && u.arg_as<ParamArg>().addrspace == AddrSpace::LOCAL) {
        const ParamArg& p = u.arg_as<ParamArg>();
        std::string g = "@" + name + "_db_local" + std::to_string(p.slot), lp = "ptr addrspace(" + std::to_string(target_.local_addrspace) + ")";
        std::string array = "[" + std::to_string(p.vmax + 1) + " x " + mem_type(u.dtype()) + "]";
        // LDS takes no initializer but undef (AMDGPUUsage "Address Spaces")
        globals += g + " = " + (target_.local_internal ? "internal " : "") + "addrspace(" + std::to_string(target_.local_addrspace) +
                   ") global " + array + (target_.local_internal ? " undef" : " zeroinitializer") + ", align 16\n";
        names_[u.get()] = {g, lp, u.dtype()};
        continue;
      }
      if (u.op() == Ops::PARAM) {
        const ParamArg& p = u.arg_as<ParamArg>();
        if (p.addrspace == AddrSpace::ALU) continue;  // a variable: a scalar parameter after the buffers, below
        if (p.addrspace != AddrSpace::GLOBAL) fail("only global and local buffers and variables are supported", u);
        if (p.slot < 0 || p.slot > 4096) fail("buffer slot out of range", u);
        params.emplace(p.slot, u);
      } else if (u.op() == Ops::SPECIAL) {
        specials.push_back(u);
      }
    }
    // One pointer per slot up to the highest used, so kernarg offsets are 8 * slot.
    const std::string gp = "ptr addrspace(" + std::to_string(target_.global_addrspace) + ")";
    ptr_type_ = gp;
    std::string sig;
    int64_t nslots = params.empty() ? 0 : params.rbegin()->first + 1;
    for (int64_t s = 0; s < nslots; s++) {
      if (s) sig += ", ";
      sig += gp + " noalias %data" + std::to_string(s);
    }
    for (const auto& [slot, p] : params) names_[p.get()] = {"%data" + std::to_string(slot), gp, p.dtype()};

    std::string entry;
    // Variables: 64-bit parameters after the buffers, in ProgramInfo::vars' order; narrowed where the value is i32.
    std::vector<UOp> variables = kernel_variables(sink);
    for (size_t i = 0; i < variables.size(); i++) {
      const std::string arg = "%var" + std::to_string(i), t = reg_type(variables[i]);
      sig += std::string(nslots || i ? ", " : "") + "i64 " + arg;
      if (t == "i64") {
        names_[variables[i].get()] = {arg, t, variables[i].dtype()};
      } else {
        entry += "  " + arg + "_v = trunc i64 " + arg + " to " + t + "\n";
        names_[variables[i].get()] = {arg + "_v", t, variables[i].dtype()};
      }
    }
    for (const UOp& sp : specials) {
      const std::string& n = sp.arg_as<std::string>();
      if (n.size() != 5 || (n.rfind("gidx", 0) != 0 && n.rfind("lidx", 0) != 0) || n[4] < '0' || n[4] > '2')
        fail("expected SPECIAL gidx0..2 or lidx0..2", sp);
      std::string fn = (n[0] == 'g' ? target_.group_id_intrinsic : target_.local_id_intrinsic) + "." + "xyz"[n[4] - '0'];
      declares_.insert("declare i32 @" + fn + "()");
      std::string v = "%" + n, t = reg_type(sp);
      entry += "  " + v + (t == "i32" ? "" : "_i32") + " = call i32 @" + fn + "()\n";
      if (t != "i32") entry += "  " + v + " = zext i32 " + v + "_i32 to " + t + "\n";
      names_[sp.get()] = {v, t, sp.dtype()};
    }
    cur_block_ = "entry";
    for (const Statement& s : statements) statement(s);
    body_ += "  ret void\n";

    int64_t threads = k.local_size[0] * k.local_size[1] * k.local_size[2];
    std::string out;
    out += "; doorbell kernel " + name + ": global_size " + dims(k.global_size) + ", local_size " + dims(k.local_size) + "\n";
    out += "target datalayout = \"" + target_.datalayout + "\"\n";
    out += "target triple = \"" + target_.triple + "\"\n\n";
    if (!globals.empty()) out += globals + "\n";
    out += "define " + target_.calling_convention + " void @" + name + "(" + sig + ") #0 {\nentry:\n";
    out += allocas_ + entry + body_ + "}\n";
    if (uses_half_helpers_) out += kHalfHelpers;
    out += "\n";
    for (const std::string& d : declares_) out += d + "\n";
    out += "\nattributes #0 = { nounwind \"amdgpu-flat-work-group-size\"=\"1," + std::to_string(threads) + "\"";
    if (!target_.extra_function_attributes.empty()) out += " " + target_.extra_function_attributes;
    out += " }\nattributes #1 = { alwaysinline nounwind }\n";
    return out;
  }

 private:
  static std::string dims(const std::array<int64_t, 3>& d) {
    return "(" + std::to_string(d[0]) + ", " + std::to_string(d[1]) + ", " + std::to_string(d[2]) + ")";
  }

  void line(const std::string& s) { body_ += "  " + s + "\n"; }
  void label(const std::string& l) {
    body_ += l + ":\n";
    cur_block_ = l;
  }
  std::string fresh() { return "%v" + std::to_string(counter_++); }
  std::string fresh_id() { return std::to_string(blocks_++); }

  // `inst` (without the "%x = " part) as a new value.
  std::string def(const std::string& inst) {
    std::string n = fresh();
    line(n + " = " + inst);
    return n;
  }

  std::string call_helper(const char* fn, const std::string& ret, const std::string& arg_t, const std::string& a) {
    uses_half_helpers_ = true;
    return def("call " + ret + " @" + fn + "(" + arg_t + " " + a + ")");
  }

  // A float register value rounded to a 16-bit float dtype (a no-op for float32/float64).
  std::string round_to(DType d, const std::string& f) {
    if (d.scalar_type == ScalarType::Float16) return call_helper("db_rh", "float", "float", f);
    if (d.scalar_type == ScalarType::BFloat16) return call_helper("db_rbf", "float", "float", f);
    return f;
  }

  std::string intrinsic(const std::string& base, const std::string& t, int nargs) {
    std::string fn = "llvm." + base + "." + (t == "float" ? "f32" : "f64");
    std::string params;
    for (int i = 0; i < nargs; i++) params += (i ? ", " : "") + t;
    declares_.insert("declare " + t + " @" + fn + "(" + params + ")");
    return fn;
  }

  // A value in another register type: ints extend by the value's signedness or truncate, floats fpext/fptrunc.
  std::string conv(const V& v, const std::string& to) {
    if (v.t == to) return v.s;
    if (is_int_type(v.t) && is_int_type(to)) {
      int fb = int_bits(v.t), tb = int_bits(to);
      if (fb < tb) return def(std::string(zero_extends(v.d) ? "zext " : "sext ") + v.t + " " + v.s + " to " + to);
      return def("trunc " + v.t + " " + v.s + " to " + to);
    }
    if (v.t == "float" && to == "double") return def("fpext float " + v.s + " to double");
    if (v.t == "double" && to == "float") return def("fptrunc double " + v.s + " to float");
    throw std::invalid_argument("render_llvm_ir: cannot convert a " + v.t + " (" + v.d.name() + ") value to " + to);
  }

  static std::string wider(const std::string& a, const std::string& b) {
    if (!is_int_type(a) || !is_int_type(b)) return a;
    return int_bits(a) >= int_bits(b) ? a : b;
  }

  // The rendered value of a node; a REDUCE reads its accumulator.
  V value(const UOp& u) {
    if (u.op() == Ops::CONST) {
      std::string t = reg_type(u);
      ConstValue c = u.const_value();
      if (t == "i1") return {std::get<bool>(c) ? "true" : "false", t, u.dtype()};
      if (is_int_type(t)) return {int_literal(t, std::get<int64_t>(c)), t, u.dtype()};
      return {float_literal(t, std::get<double>(c)), t, u.dtype()};
    }
    if (u.op() == Ops::REDUCE) {
      auto it = accs_.find(u.get());
      if (it == accs_.end()) fail("a reduce is used before its accumulator exists", u);
      return {def("load " + it->second.t + ", " + alloca_ptr() + " " + it->second.s), it->second.t, u.dtype()};
    }
    auto it = names_.find(u.get());
    if (it == names_.end()) fail("a value is used before it is defined", u);
    return it->second;
  }

  std::string alloca_ptr() const { return "ptr addrspace(" + std::to_string(target_.alloca_addrspace) + ")"; }

  // A register value of dtype `in` as the storage bits of `in` (iN).
  std::string to_bits(const V& v) {
    if (v.d.scalar_type == ScalarType::Float16) return call_helper("db_f2h", "i16", "float", conv(v, "float"));
    if (v.d.scalar_type == ScalarType::BFloat16) return call_helper("db_f2bf", "i16", "float", conv(v, "float"));
    if (v.d.is_bool()) return def("zext i1 " + v.s + " to i8");
    if (v.t == "float") return def("bitcast float " + v.s + " to i32");
    if (v.t == "double") return def("bitcast double " + v.s + " to i64");
    return v.s;
  }
  // Storage bits (type `bt`) of dtype `out` as its register value of type `t`.
  std::string from_bits(DType out, const std::string& t, const std::string& bits, const std::string& bt) {
    if (out.scalar_type == ScalarType::Float16) return call_helper("db_h2f", "float", "i16", bits);
    if (out.scalar_type == ScalarType::BFloat16) return call_helper("db_bf2f", "float", "i16", bits);
    if (out.is_bool()) return def("icmp ne " + bt + " " + bits + ", 0");
    if (t == "float" || t == "double") return bt == t ? bits : def("bitcast " + bt + " " + bits + " to " + t);
    return conv({bits, bt, out}, t);
  }

  std::string cast(const UOp& u, const V& a, DType out, const std::string& t) {
    DType in = a.d;
    if (out.is_bool()) {
      if (in.is_bool()) return a.s;
      if (in.is_float()) return def("fcmp une " + a.t + " " + a.s + ", " + zero_of(a.t));
      return def("icmp ne " + a.t + " " + a.s + ", " + zero_of(a.t));
    }
    if (out.is_float()) {
      // As C: (float)a or (double)a, then 16-bit types round from float.
      std::string f;
      if (in.is_float()) f = conv(a, t);
      else f = def(std::string(zero_extends(in) ? "uitofp " : "sitofp ") + a.t + " " + a.s + " to " + t);
      return round_to(out, f);
    }
    if (out.is_int()) {
      if (in.is_float()) return def(std::string(out.is_unsigned() ? "fptoui " : "fptosi ") + a.t + " " + a.s + " to " + t);
      return conv(a, t);
    }
    fail("no LLVM rendering for this CAST", u);
  }

  // One ALU op of `u`'s kind on rendered operands; `op` may differ from u.op() (a REDUCE's combining op).
  std::string alu(const UOp& u, Ops op, DType out, const std::string& t, std::vector<V> a) {
    const bool f = out.is_float(), b = out.is_bool();
    auto bin = [&](const std::string& inst) { return def(inst + " " + t + " " + conv(a[0], t) + ", " + conv(a[1], t)); };
    switch (op) {
      case Ops::CMPLT: case Ops::CMPNE: case Ops::CMPEQ: {
        const DType in = a[0].d;
        if (in.is_float()) {
          std::string ft = a[0].t == "double" || a[1].t == "double" ? "double" : "float";
          const char* pred = op == Ops::CMPLT ? "olt" : op == Ops::CMPNE ? "une" : "oeq";
          return def(std::string("fcmp ") + pred + " " + ft + " " + conv(a[0], ft) + ", " + conv(a[1], ft));
        }
        std::string wt = wider(a[0].t, a[1].t);
        const char* pred = op == Ops::CMPNE ? "ne" : op == Ops::CMPEQ ? "eq" : zero_extends(in) ? "ult" : "slt";
        return def(std::string("icmp ") + pred + " " + wt + " " + conv(a[0], wt) + ", " + conv(a[1], wt));
      }
      case Ops::WHERE:
        return def("select i1 " + conv(a[0], "i1") + ", " + t + " " + conv(a[1], t) + ", " + t + " " + conv(a[2], t));
      case Ops::CAST: return cast(u, a[0], out, t);
      case Ops::BITCAST: {
        std::string bits = to_bits(a[0]);
        return from_bits(out, t, bits, a[0].d.is_bool() ? "i8" : is_int_type(a[0].t) ? a[0].t : "i" + std::to_string(a[0].d.bitsize()));
      }
      default: break;
    }
    if (f) {
      switch (op) {
        case Ops::ADD: return bin("fadd");
        case Ops::SUB: return bin("fsub");
        case Ops::MUL: return bin("fmul");
        case Ops::FDIV: return bin("fdiv");
        case Ops::NEG: return def("fneg " + t + " " + conv(a[0], t));
        case Ops::MAX: {
          std::string x = conv(a[0], t), y = conv(a[1], t);
          std::string uno = def("fcmp uno " + t + " " + x + ", " + y);
          std::string lt = def("fcmp olt " + t + " " + x + ", " + y);
          std::string m = def("select i1 " + lt + ", " + t + " " + y + ", " + t + " " + x);
          return def("select i1 " + uno + ", " + t + " " + float_literal(t, NAN) + ", " + t + " " + m);
        }
        case Ops::TRUNC: return def("call " + t + " @" + intrinsic("trunc", t, 1) + "(" + t + " " + conv(a[0], t) + ")");
        case Ops::SQRT: return def("call " + t + " @" + intrinsic("sqrt", t, 1) + "(" + t + " " + conv(a[0], t) + ")");
        case Ops::RECIPROCAL: return def("fdiv " + t + " " + float_literal(t, 1.0) + ", " + conv(a[0], t));
        case Ops::MULACC: {  // in double, rounded once, as the C renderer
          std::string x = conv(a[0], "double"), y = conv(a[1], "double"), z = conv(a[2], "double");
          std::string p = def("fmul double " + x + ", " + y);
          std::string s = def("fadd double " + p + ", " + z);
          return conv({s, "double", dtypes::float64}, t);
        }
        case Ops::EXP2: case Ops::LOG2: case Ops::SIN: case Ops::POW:
          if (is_double(out)) fail("float64 " + std::string(op_name(op)) + " needs AMD's device libraries (ocml), which are not linked", u);
          fail("this transcendental should have been decomposed", u);
        default: fail("no LLVM rendering for this float op", u);
      }
    }
    if (b) {
      switch (op) {
        case Ops::ADD: case Ops::OR: case Ops::MAX: return bin("or");
        case Ops::SUB: case Ops::XOR: return bin("xor");
        case Ops::MUL: case Ops::AND: return bin("and");
        case Ops::NEG: return conv(a[0], "i1");
        case Ops::MULACC: {
          std::string p = def("and i1 " + conv(a[0], "i1") + ", " + conv(a[1], "i1"));
          return def("or i1 " + p + ", " + conv(a[2], "i1"));
        }
        default: fail("no LLVM rendering for this bool op", u);
      }
    }
    if (!out.is_int()) fail("no LLVM rendering for dtype " + out.name(), u);
    // Ring and bitwise ops commute with truncation: operands go to the result's type first.
    switch (op) {
      case Ops::ADD: return bin("add");
      case Ops::SUB: return bin("sub");
      case Ops::MUL: return bin("mul");
      case Ops::AND: return bin("and");
      case Ops::OR: return bin("or");
      case Ops::XOR: return bin("xor");
      case Ops::NEG: return def("sub " + t + " 0, " + conv(a[0], t));
      case Ops::TRUNC: return conv(a[0], t);
      case Ops::MULACC: {
        std::string p = def("mul " + t + " " + conv(a[0], t) + ", " + conv(a[1], t));
        return def("add " + t + " " + p + ", " + conv(a[2], t));
      }
      case Ops::SHL: return bin("shl");
      default: break;
    }
    // The rest are computed in the wider of the operands' types, then brought to the result's.
    std::string wt = wider(wider(a[0].t, a[1].t), t);
    std::string x = conv(a[0], wt), y = conv(a[1], wt), r;
    const bool uns = out.is_unsigned();
    switch (op) {
      case Ops::SHR: r = def(std::string(zero_extends(a[0].d) ? "lshr " : "ashr ") + wt + " " + x + ", " + y); break;
      case Ops::MAX: {
        std::string lt = def(std::string("icmp ") + (uns ? "ult " : "slt ") + wt + " " + x + ", " + y);
        r = def("select i1 " + lt + ", " + wt + " " + y + ", " + wt + " " + x);
        break;
      }
      case Ops::CDIV: case Ops::CMOD:  // lower_late has made the divisor nonzero (and not -1 for signed types)
        r = def(std::string(op == Ops::CDIV ? (uns ? "udiv " : "sdiv ") : (uns ? "urem " : "srem ")) + wt + " " + x + ", " + y);
        break;
      default: fail("no LLVM rendering for this op", u);
    }
    return conv({r, wt, out}, t);
  }

  // The element's pointer and its type (global or local address space) for INDEX(PARAM or AFTER(PARAM, BARRIER), i).
  std::pair<std::string, std::string> gep(const UOp& index) {
    const UOp& buf = indexed_buffer(index);
    V idx = value(index.src(1));
    if (!is_int_type(idx.t)) fail("an index must be an integer", index);
    V base = value(buf);
    return {def("getelementptr inbounds " + mem_type(buf.dtype()) + ", " + base.t + " " + base.s + ", " + idx.t + " " + idx.s), base.t};
  }

  void barrier() {
    if (target_.barrier_function.empty()) throw std::invalid_argument("render_llvm_ir: the target has no barrier function for a BARRIER");
    if (target_.barrier_fences) line("fence syncscope(\"workgroup\") release");
    line("call void @" + target_.barrier_function + "()");
    if (target_.barrier_fences) line("fence syncscope(\"workgroup\") acquire");
    declares_.insert("declare void @" + target_.barrier_function + "()");
  }

  void load(const UOp& u) {
    const UOp& index = u.src(0);
    DType d = index.src(0).dtype();
    std::string t = reg_type(u), mt = mem_type(d);
    auto do_load = [&]() {
      auto [p, pt] = gep(index);
      std::string raw = def("load " + mt + ", " + pt + " " + p + ", align " + std::to_string(d.itemsize()));
      return from_bits(d, t, raw, mt);
    };
    if (index.src().size() == 3) {  // a false gate reads 0 without touching memory
      std::string g = conv(value(index.src(2)), "i1");
      std::string id = fresh_id(), from = cur_block_;
      line("br i1 " + g + ", label %load" + id + ", label %load" + id + "_done");
      label("load" + id);
      std::string x = do_load();
      std::string loaded_in = cur_block_;
      line("br label %load" + id + "_done");
      label("load" + id + "_done");
      names_[u.get()] = {def("phi " + t + " [ " + x + ", %" + loaded_in + " ], [ " + zero_of(t) + ", %" + from + " ]"), t, u.dtype()};
      return;
    }
    names_[u.get()] = {do_load(), t, u.dtype()};
  }

  void store(const UOp& u) {
    const UOp& index = u.src(0);
    DType d = index.src(0).dtype();
    std::string mt = mem_type(d);
    std::string id;
    if (index.src().size() == 3) {
      std::string g = conv(value(index.src(2)), "i1");
      id = fresh_id();
      line("br i1 " + g + ", label %store" + id + ", label %store" + id + "_done");
      label("store" + id);
    }
    V v = value(u.src(1));
    std::string bits;
    if (is_half(d)) bits = call_helper(d.scalar_type == ScalarType::Float16 ? "db_f2h" : "db_f2bf", "i16", "float", conv(v, "float"));
    else bits = conv(v, mt);
    auto [p, pt] = gep(index);
    line("store " + mt + " " + bits + ", " + pt + " " + p + ", align " + std::to_string(d.itemsize()));
    if (!id.empty()) {
      line("br label %store" + id + "_done");
      label("store" + id + "_done");
    }
  }

  // The accumulator's first value as a literal of its register type `t`.
  std::string accumulator_literal(Ops op, DType d, const std::string& t) {
    ConstValue v = accumulator_start(op, d);
    if (const bool* b = std::get_if<bool>(&v)) return *b ? "true" : "false";
    if (const double* f = std::get_if<double>(&v)) return float_literal(t, *f);
    // a weakint accumulator held in i32 (its bounds fit) starts a max at i32's lowest value
    __int128 x = std::get<int64_t>(v);
    return int_literal(t, d.scalar_type == ScalarType::WeakInt && t == "i32" ? std::max<__int128>(x, INT32_MIN) : x);
  }

  void statement(const Statement& s) {
    const UOp& u = s.u;
    switch (s.kind) {
      case StatementKind::BEGIN_LOOP: {
        std::string id = fresh_id(), t = reg_type(u);
        V end = value(u.src(0));
        std::string e = conv(end, t);
        const std::string from = cur_block_;  // after the end value, which may emit instructions
        std::string r = "%ridx" + id;
        loops_.push_back({id, r, t});
        line("br label %loop" + id);
        label("loop" + id);
        line(r + " = phi " + t + " [ 0, %" + from + " ], [ " + r + "_next, %loop" + id + "_latch ]");
        line(r + "_cond = icmp slt " + t + " " + r + ", " + e);
        line("br i1 " + r + "_cond, label %loop" + id + "_body, label %loop" + id + "_exit");
        label("loop" + id + "_body");
        names_[u.get()] = {r, t, u.dtype()};
        return;
      }
      case StatementKind::END_LOOP: {
        Loop l = loops_.back();
        loops_.pop_back();
        line("br label %loop" + l.id + "_latch");
        label("loop" + l.id + "_latch");
        line(l.r + "_next = add " + l.t + " " + l.r + ", 1");
        line("br label %loop" + l.id);
        label("loop" + l.id + "_exit");
        return;
      }
      case StatementKind::VALUE: {
        if (u.op() == Ops::LOAD) return load(u);
        std::vector<V> args;
        for (const UOp& x : u.src()) args.push_back(value(x));
        std::string t = reg_type(u);
        names_[u.get()] = {alu(u, u.op(), u.dtype(), t, std::move(args)), t, u.dtype()};
        return;
      }
      case StatementKind::ACC_INIT: {
        std::string t = reg_type(u), p = "%acc" + std::to_string(accs_.size());
        int align = t == "i1" || t == "i8" ? 1 : t == "i16" ? 2 : t == "i64" || t == "double" ? 8 : 4;
        allocas_ += "  " + p + " = alloca " + t + ", align " + std::to_string(align) + ", addrspace(" +
                    std::to_string(target_.alloca_addrspace) + ")\n";
        accs_[u.get()] = {p, t, u.dtype()};
        line("store " + t + " " + accumulator_literal(u.arg_as<ReduceArg>().op, u.dtype(), t) + ", " + alloca_ptr() + " " + p);
        return;
      }
      case StatementKind::ACC_UPDATE: {
        const V acc = accs_.at(u.get());
        V cur{def("load " + acc.t + ", " + alloca_ptr() + " " + acc.s), acc.t, u.dtype()};
        Ops op = u.arg_as<ReduceArg>().op;
        std::string r = alu(u, op, u.dtype(), acc.t, {cur, value(u.src(0))});
        // a 16-bit float accumulator rounds after each sum or product, as lower_late's ops do (compiler/late_lowering.h)
        if (op != Ops::MAX) r = round_to(u.dtype(), r);
        line("store " + acc.t + " " + r + ", " + alloca_ptr() + " " + acc.s);
        return;
      }
      case StatementKind::STORE: return store(u);
      case StatementKind::BARRIER: return barrier();
    }
  }

  struct Loop {
    std::string id, r, t;
  };

  const LlvmIrTarget& target_;
  std::string body_, allocas_, cur_block_, ptr_type_;
  int counter_ = 0, blocks_ = 0;
  bool uses_half_helpers_ = false;
  std::vector<Loop> loops_;
  std::set<std::string> declares_;
  std::unordered_map<const UOpNode*, V> names_;
  std::unordered_map<const UOpNode*, V> accs_;  // REDUCE -> its alloca
};

}  // namespace

LlvmIrTarget amdgpu_llvm_target(const GpuTarget& t) {
  if (t.vendor != GpuVendor::AMD) throw std::invalid_argument("amdgpu_llvm_target: " + t.arch + " is not an AMD target");
  LlvmIrTarget r;
  r.triple = "amdgcn-amd-amdhsa";
  r.datalayout = kAmdgpuDataLayout;
  r.calling_convention = "amdgpu_kernel";
  r.global_addrspace = 1;  // AMDGPUUsage "Address Spaces": global 1, private 5
  r.alloca_addrspace = 5;
  r.local_addrspace = 3;  // LDS
  r.local_internal = true;
  r.barrier_function = "llvm.amdgcn.s.barrier";
  r.barrier_fences = true;
  r.group_id_intrinsic = "llvm.amdgcn.workgroup.id";
  r.local_id_intrinsic = "llvm.amdgcn.workitem.id";
  // Whole blocks only (lower_for_gpu), and no COV5 hidden kernargs: the kernels read nothing through the implicit
  // argument pointer, so kernarg_size is 8 bytes per buffer slot (without the attribute LLVM appends 256 bytes).
  r.extra_function_attributes = "\"uniform-work-group-size\"=\"true\" \"amdgpu-no-implicitarg-ptr\"";
  return r;
}

std::string render_llvm_ir(const std::string& name, const GpuKernel& k, const LlvmIrTarget& t) {
  return LlvmRenderer(t).render(name, k);
}

std::string render_llvm_ir(const std::string& name, const GpuKernel& k, const GpuTarget& t) {
  return render_llvm_ir(name, k, amdgpu_llvm_target(t));
}

}  // namespace doorbell
