#include "mockgpu/nv/ptx_decode.h"

#include <bit>
#include <cerrno>
#include <cstdlib>
#include <stdexcept>
#include <unordered_map>

namespace doorbell::mockgpu::nv {

void fail_at(uint32_t line, const std::string& what) {
  throw std::invalid_argument("ptx line " + std::to_string(line) + ": " + what);
}

PtxType type_of(std::string_view m) {
  static const std::unordered_map<std::string_view, PtxType> kTypes = {
      {"pred", {'p', 1, false}}, {"b8", {'b', 8, false}},   {"b16", {'b', 16, false}}, {"b32", {'b', 32, false}},
      {"b64", {'b', 64, false}}, {"u8", {'u', 8, false}},   {"u16", {'u', 16, false}}, {"u32", {'u', 32, false}},
      {"u64", {'u', 64, false}}, {"s8", {'s', 8, false}},   {"s16", {'s', 16, false}}, {"s32", {'s', 32, false}},
      {"s64", {'s', 64, false}}, {"f16", {'f', 16, false}}, {"bf16", {'f', 16, true}},  {"f32", {'f', 32, false}},
      {"f64", {'f', 64, false}}};
  auto it = kTypes.find(m);
  return it == kTypes.end() ? PtxType{} : it->second;
}

namespace {

class Decoder {
 public:
  explicit Decoder(EntrySlots& s) : s_(s) {}

  struct Mods {
    std::string base;
    std::vector<PtxType> types;
    std::vector<std::string> rest;  // every other modifier, without its dot
    bool has(std::string_view m) const {
      for (const std::string& r : rest)
        if (r == m) return true;
      return false;
    }
  };

  static Mods split_opcode(const std::string& op) {
    Mods m;
    size_t i = op.find('.');
    m.base = op.substr(0, i);
    while (i != std::string::npos) {
      size_t j = op.find('.', i + 1);
      std::string part = op.substr(i + 1, j == std::string::npos ? std::string::npos : j - i - 1);
      PtxType t = type_of(part);
      if (t.valid()) m.types.push_back(t);
      else m.rest.push_back(part);
      i = j;
    }
    return m;
  }

  // The bits of literal `o` as an operand of type `t` (PTX ISA "Constants": 0f/0d hex floats, decimal floats,
  // integers in decimal, hex 0x, octal 0 and binary 0b).
  static uint64_t literal_bits(const RawOperand& o, PtxType t, uint32_t line) {
    const std::string& s = o.text;
    if (s.size() == 10 && (s[1] == 'f' || s[1] == 'F') && s[0] == '0') {
      uint32_t b = static_cast<uint32_t>(std::strtoul(s.c_str() + 2, nullptr, 16));
      if (o.negative) b ^= 0x80000000u;
      if (t.is_float() && t.bits == 64) return std::bit_cast<uint64_t>(static_cast<double>(std::bit_cast<float>(b)));
      return b;
    }
    if (s.size() == 18 && (s[1] == 'd' || s[1] == 'D') && s[0] == '0') {
      uint64_t b = std::strtoull(s.c_str() + 2, nullptr, 16);
      if (o.negative) b ^= 0x8000000000000000ull;
      if (t.is_float() && t.bits == 32) return std::bit_cast<uint32_t>(static_cast<float>(std::bit_cast<double>(b)));
      return b;
    }
    bool is_float_text = s.find_first_of(".eE") != std::string::npos && s.rfind("0x", 0) != 0 && s.rfind("0X", 0) != 0;
    // ptxas rejects an integer literal where a float operand is expected ("Arguments mismatch")
    if (t.is_float() && !is_float_text) fail_at(line, "integer literal " + s + " where a ." + (t.bf ? std::string("bf16") : "f" + std::to_string(t.bits)) + " operand is expected (write 0f.../0d... or a decimal with a point)");
    if (is_float_text || t.is_float()) {
      char* end = nullptr;
      double v = is_float_text ? std::strtod(s.c_str(), &end) : static_cast<double>(std::strtoull(s.c_str(), &end, 0));
      if (end == s.c_str() || (*end && *end != 'U' && *end != 'u')) fail_at(line, "'" + s + "' is not a numeric literal");
      if (o.negative) v = -v;
      if (!t.is_float()) fail_at(line, "float literal " + s + " where an integer is expected");
      if (t.bits == 32) return std::bit_cast<uint32_t>(static_cast<float>(v));
      return std::bit_cast<uint64_t>(v);
    }
    char* end = nullptr;
    errno = 0;
    uint64_t v = s.rfind("0b", 0) == 0 ? std::strtoull(s.c_str() + 2, &end, 2) : std::strtoull(s.c_str(), &end, 0);
    if (*end == 'U' || *end == 'u') end++;
    if (errno || *end != 0) fail_at(line, "'" + s + "' is not an integer literal");
    return o.negative ? ~v + 1 : v;
  }

  // A source operand's slot: a register, a special register, a literal or a shared array's address.
  uint32_t src(const ParsedInstr& p, size_t i, PtxType t) {
    if (i >= p.ops.size()) fail_at(p.line, p.opcode + " expects at least " + std::to_string(i + 1) + " operands");
    const RawOperand& o = p.ops[i];
    switch (o.kind) {
      case RawOperand::Reg: return s_.register_slot(o.text, p.line, "source");
      case RawOperand::Imm: return s_.constant_slot(literal_bits(o, t, p.line));
      case RawOperand::Name:
        for (const PtxSharedArray& a : s_.entry().shared)
          if (a.name == o.text) return s_.shared_address_slot(a.name);
        for (const PtxLocalArray& a : s_.entry().local)
          if (a.name == o.text) return s_.local_address_slot(a.name);
        fail_at(p.line, "operand " + o.text + " of " + p.opcode + " is neither a register nor a shared or local array");
      case RawOperand::Addr: case RawOperand::Vec: break;
    }
    fail_at(p.line, "operand " + std::to_string(i + 1) + " of " + p.opcode + " must not be an address or a vector");
  }

  uint32_t dst(const ParsedInstr& p, size_t i) {
    if (i >= p.ops.size() || p.ops[i].kind != RawOperand::Reg)
      fail_at(p.line, p.opcode + ": operand " + std::to_string(i + 1) + " must be a register");
    return s_.register_slot(p.ops[i].text, p.line, "destination");
  }

  void expect_operands(const ParsedInstr& p, size_t n) {
    if (p.ops.size() != n)
      fail_at(p.line, p.opcode + " expects " + std::to_string(n) + " operands, got " + std::to_string(p.ops.size()));
  }

  [[noreturn]] static void unsupported(const ParsedInstr& p, const std::string& why = "") {
    fail_at(p.line, "unknown or unsupported instruction '" + p.opcode + "'" + (why.empty() ? "" : " (" + why + ")"));
  }

  static PtxType one_type(const ParsedInstr& p, const Mods& m) {
    if (m.types.size() != 1) unsupported(p, "expected exactly one type suffix");
    return m.types[0];
  }

  // Rejects modifiers that change results in ways the executor does not model.
  static void reject_mods(const ParsedInstr& p, const Mods& m, std::initializer_list<std::string_view> allowed) {
    for (const std::string& r : m.rest) {
      bool ok = false;
      for (std::string_view a : allowed) ok |= r == a;
      if (!ok) unsupported(p, "modifier ." + r);
    }
  }

  PtxInstr decode(const ParsedInstr& p) {
    PtxInstr in;
    if (!p.guard.empty()) {
      in.guard = s_.register_slot(p.guard, p.line, "guard");
      in.guard_negated = p.guard_negated;
    }
    Mods m = split_opcode(p.opcode);
    const std::string& b = m.base;
    auto binary = [&](PtxOp op, PtxType t) {
      expect_operands(p, 3);
      in.op = op;
      in.d = dst(p, 0);
      in.a = src(p, 1, t);
      in.b = src(p, 2, t);
    };
    auto unary = [&](PtxOp op, PtxType t) {
      expect_operands(p, 2);
      in.op = op;
      in.d = dst(p, 0);
      in.a = src(p, 1, t);
    };
    auto by_width = [&](const PtxType& t, PtxOp op32, PtxOp op64) {
      if (t.bits == 32) return op32;
      if (t.bits == 64) return op64;
      unsupported(p, std::to_string(t.bits) + "-bit integer form");
    };
    auto by_sign_width = [&](const PtxType& t, PtxOp s32, PtxOp u32, PtxOp s64, PtxOp u64) {
      if (t.bits == 32) return t.is_signed() ? s32 : u32;
      if (t.bits == 64) return t.is_signed() ? s64 : u64;
      unsupported(p, std::to_string(t.bits) + "-bit integer form");
    };
    auto float_op = [&](const PtxType& t, PtxOp f32, PtxOp f64) {
      if (t.bf || (t.bits != 32 && t.bits != 64)) unsupported(p, "only .f32 and .f64 forms");
      return t.bits == 32 ? f32 : f64;
    };

    if (b == "mov") {
      PtxType t = one_type(p, m);
      reject_mods(p, m, {});
      unary(PtxOp::Mov, t);
    } else if (b == "selp") {
      PtxType t = one_type(p, m);
      reject_mods(p, m, {});
      expect_operands(p, 4);
      in.op = PtxOp::Selp;
      in.d = dst(p, 0);
      in.a = src(p, 1, t);
      in.b = src(p, 2, t);
      in.c = src(p, 3, PtxType{'p', 1, false});
    } else if (b == "add" || b == "sub" || b == "mul" || b == "div" || b == "rem" || b == "min" || b == "max") {
      PtxType t = one_type(p, m);
      if (t.is_float()) {
        // PTX ISA "Floating Point Instructions": .rn is the default rounding; div.full/.approx are computed as
        // div.rn here (the approximations are within 2 ulp of it on hardware).
        reject_mods(p, m, {"rn", "full", "approx"});
        if (b == "add") binary(float_op(t, PtxOp::AddF32, PtxOp::AddF64), t);
        else if (b == "sub") binary(float_op(t, PtxOp::SubF32, PtxOp::SubF64), t);
        else if (b == "mul") binary(float_op(t, PtxOp::MulF32, PtxOp::MulF64), t);
        else if (b == "div") binary(float_op(t, PtxOp::DivF32, PtxOp::DivF64), t);
        else if (b == "min") binary(float_op(t, PtxOp::MinF32, PtxOp::MinF64), t);
        else if (b == "max") binary(float_op(t, PtxOp::MaxF32, PtxOp::MaxF64), t);
        else unsupported(p);
      } else if (t.is_int()) {
        if (b == "add") { reject_mods(p, m, {}); binary(by_width(t, PtxOp::Add32, PtxOp::Add64), t); }
        else if (b == "sub") { reject_mods(p, m, {}); binary(by_width(t, PtxOp::Sub32, PtxOp::Sub64), t); }
        else if (b == "mul") {
          reject_mods(p, m, {"lo", "hi", "wide"});
          if (m.has("lo")) binary(by_width(t, PtxOp::MulLo32, PtxOp::MulLo64), t);
          else if (m.has("hi")) binary(by_sign_width(t, PtxOp::MulHiS32, PtxOp::MulHiU32, PtxOp::MulHiS64, PtxOp::MulHiU64), t);
          else if (m.has("wide") && t.bits == 32) binary(t.is_signed() ? PtxOp::MulWideS32 : PtxOp::MulWideU32, t);
          else unsupported(p, "integer mul needs .lo, .hi or .wide (32-bit)");
        } else if (b == "div") { reject_mods(p, m, {}); binary(by_sign_width(t, PtxOp::DivS32, PtxOp::DivU32, PtxOp::DivS64, PtxOp::DivU64), t); }
        else if (b == "rem") { reject_mods(p, m, {}); binary(by_sign_width(t, PtxOp::RemS32, PtxOp::RemU32, PtxOp::RemS64, PtxOp::RemU64), t); }
        else if (b == "min") { reject_mods(p, m, {}); binary(by_sign_width(t, PtxOp::MinS32, PtxOp::MinU32, PtxOp::MinS64, PtxOp::MinU64), t); }
        else { reject_mods(p, m, {}); binary(by_sign_width(t, PtxOp::MaxS32, PtxOp::MaxU32, PtxOp::MaxS64, PtxOp::MaxU64), t); }
      } else {
        unsupported(p);
      }
    } else if (b == "mad" || b == "fma") {
      PtxType t = one_type(p, m);
      expect_operands(p, 4);
      if (t.is_float()) {
        reject_mods(p, m, {"rn"});
        if (!m.has("rn")) unsupported(p, "a fused multiply-add needs .rn");
        in.op = float_op(t, PtxOp::FmaF32, PtxOp::FmaF64);
      } else if (b == "mad" && t.is_int() && m.has("lo")) {
        reject_mods(p, m, {"lo"});
        in.op = by_width(t, PtxOp::MadLo32, PtxOp::MadLo64);
      } else {
        unsupported(p);
      }
      in.d = dst(p, 0);
      in.a = src(p, 1, t);
      in.b = src(p, 2, t);
      in.c = src(p, 3, t);
    } else if (b == "neg" || b == "abs") {
      PtxType t = one_type(p, m);
      reject_mods(p, m, {});
      if (t.is_float()) unary(b == "neg" ? float_op(t, PtxOp::NegF32, PtxOp::NegF64) : float_op(t, PtxOp::AbsF32, PtxOp::AbsF64), t);
      else if (t.is_int() && b == "neg") unary(by_width(t, PtxOp::Neg32, PtxOp::Neg64), t);
      else if (t.is_signed()) unary(by_width(t, PtxOp::AbsS32, PtxOp::AbsS64), t);
      else unsupported(p);
    } else if (b == "and" || b == "or" || b == "xor" || b == "not") {
      PtxType t = one_type(p, m);
      reject_mods(p, m, {});
      if (t.cls == 'p') {
        if (b == "not") unary(PtxOp::NotPred, t);
        else binary(b == "and" ? PtxOp::AndPred : b == "or" ? PtxOp::OrPred : PtxOp::XorPred, t);
      } else if (t.is_int()) {
        if (b == "not") unary(by_width(t, PtxOp::Not32, PtxOp::Not64), t);
        else if (b == "and") binary(by_width(t, PtxOp::And32, PtxOp::And64), t);
        else if (b == "or") binary(by_width(t, PtxOp::Or32, PtxOp::Or64), t);
        else binary(by_width(t, PtxOp::Xor32, PtxOp::Xor64), t);
      } else {
        unsupported(p);
      }
    } else if (b == "shl" || b == "shr") {
      PtxType t = one_type(p, m);
      reject_mods(p, m, {});
      if (!t.is_int()) unsupported(p);
      PtxOp op = b == "shl" ? by_width(t, PtxOp::Shl32, PtxOp::Shl64)
                            : by_sign_width(t, PtxOp::ShrS32, PtxOp::ShrU32, PtxOp::ShrS64, PtxOp::ShrU64);
      expect_operands(p, 3);
      in.op = op;
      in.d = dst(p, 0);
      in.a = src(p, 1, t);
      in.b = src(p, 2, PtxType{'u', 32, false});  // the shift amount is always .u32
    } else if (b == "sqrt" || b == "rcp") {
      PtxType t = one_type(p, m);
      reject_mods(p, m, {"rn", "approx"});
      unary(b == "sqrt" ? float_op(t, PtxOp::SqrtF32, PtxOp::SqrtF64) : float_op(t, PtxOp::RcpF32, PtxOp::RcpF64), t);
    } else if (b == "ex2" || b == "lg2" || b == "sin" || b == "cos" || b == "rsqrt") {
      PtxType t = one_type(p, m);
      reject_mods(p, m, {"approx"});
      if (!m.has("approx") || t.bits != 32 || !t.is_float() || t.bf) unsupported(p, "only the .approx.f32 form");
      unary(b == "ex2" ? PtxOp::Ex2F32 : b == "lg2" ? PtxOp::Lg2F32 : b == "sin" ? PtxOp::SinF32 : b == "cos" ? PtxOp::CosF32 : PtxOp::RsqrtF32, t);
    } else if (b == "setp") {
      decode_setp(p, m, in);
    } else if (b == "testp") {
      PtxType t = one_type(p, m);
      static const std::unordered_map<std::string, PtxTest> kTests = {
          {"finite", PtxTest::Finite}, {"infinite", PtxTest::Infinite}, {"number", PtxTest::Number},
          {"notanumber", PtxTest::NotANumber}, {"normal", PtxTest::Normal}, {"subnormal", PtxTest::Subnormal}};
      if (m.rest.size() != 1 || !kTests.count(m.rest[0])) unsupported(p, "expected one test such as .finite");
      in.cmp = static_cast<uint8_t>(kTests.at(m.rest[0]));
      unary(float_op(t, PtxOp::TestpF32, PtxOp::TestpF64), t);
    } else if (b == "cvt") {
      decode_cvt(p, m, in);
    } else if (b == "cvta") {
      // generic and global addresses are the same numbers here (PTX ISA "Generic Addressing")
      reject_mods(p, m, {"to", "global"});
      if (!m.has("global")) unsupported(p, "only the global state space");
      unary(PtxOp::Mov, one_type(p, m));
    } else if (b == "ld" || b == "st") {
      decode_memory(p, m, in);
    } else if (b == "bra") {
      reject_mods(p, m, {"uni"});
      expect_operands(p, 1);
      if (p.ops[0].kind != RawOperand::Name) fail_at(p.line, "bra needs a label");
      in.op = PtxOp::Bra;
      s_.branch_to(p.ops[0].text);
    } else if (b == "bar" || b == "barrier") {
      reject_mods(p, m, {"sync", "aligned"});
      if (!m.has("sync") && !m.rest.empty()) unsupported(p);
      if (p.ops.size() != 1) unsupported(p, "a barrier with a thread count");
      if (p.ops[0].kind != RawOperand::Imm) fail_at(p.line, "the barrier number must be a constant");
      in.op = PtxOp::Bar;
      in.imm = static_cast<int64_t>(literal_bits(p.ops[0], PtxType{'u', 32, false}, p.line));
      if (in.imm < 0 || in.imm > 15) fail_at(p.line, "barrier number " + std::to_string(in.imm) + " is outside 0..15");
      s_.entry().has_barrier = true;
    } else if (b == "ret" || b == "exit") {
      reject_mods(p, m, {"uni"});
      expect_operands(p, 0);
      in.op = PtxOp::Ret;
    } else {
      unsupported(p);
    }
    return in;
  }

  void decode_setp(const ParsedInstr& p, const Mods& m, PtxInstr& in) {
    static const std::unordered_map<std::string, PtxCmp> kCmp = {
        {"eq", PtxCmp::Eq},   {"ne", PtxCmp::Ne},   {"lt", PtxCmp::Lt},   {"le", PtxCmp::Le},   {"gt", PtxCmp::Gt},
        {"ge", PtxCmp::Ge},   {"lo", PtxCmp::Lo},   {"ls", PtxCmp::Ls},   {"hi", PtxCmp::Hi},   {"hs", PtxCmp::Hs},
        {"equ", PtxCmp::Equ}, {"neu", PtxCmp::Neu}, {"ltu", PtxCmp::Ltu}, {"leu", PtxCmp::Leu}, {"gtu", PtxCmp::Gtu},
        {"geu", PtxCmp::Geu}, {"num", PtxCmp::Num}, {"nan", PtxCmp::Nan}};
    PtxType t = one_type(p, m);
    if (m.rest.size() != 1 || !kCmp.count(m.rest[0])) unsupported(p, "expected one comparison; setp.cmp.bool forms are not supported");
    PtxCmp c = kCmp.at(m.rest[0]);
    if (t.is_float()) {
      if (t.bf || t.bits == 16) unsupported(p, "16-bit float comparison");
      in.op = t.bits == 32 ? PtxOp::SetpF32 : PtxOp::SetpF64;
      if (c >= PtxCmp::Lo && c <= PtxCmp::Hs) unsupported(p, "unsigned comparison of floats");
    } else if (t.is_int()) {
      if (t.bits != 32 && t.bits != 64) unsupported(p, "16- and 8-bit comparisons");
      if (c >= PtxCmp::Equ) unsupported(p, "unordered comparison of integers");
      if (t.cls == 'b' && c != PtxCmp::Eq && c != PtxCmp::Ne) unsupported(p, ".b types compare only with eq and ne");
      bool s = t.is_signed();
      if (c >= PtxCmp::Lo && c <= PtxCmp::Hs) s = false;
      if (s) in.op = t.bits == 32 ? PtxOp::SetpS32 : PtxOp::SetpS64;
      else in.op = t.bits == 32 ? PtxOp::SetpU32 : PtxOp::SetpU64;
      // unsigned orderings are the same as lt..ge on unsigned operands
      if (c == PtxCmp::Lo) c = PtxCmp::Lt;
      else if (c == PtxCmp::Ls) c = PtxCmp::Le;
      else if (c == PtxCmp::Hi) c = PtxCmp::Gt;
      else if (c == PtxCmp::Hs) c = PtxCmp::Ge;
    } else {
      unsupported(p);
    }
    in.cmp = static_cast<uint8_t>(c);
    expect_operands(p, 3);
    in.d = dst(p, 0);
    in.a = src(p, 1, t);
    in.b = src(p, 2, t);
  }

  static uint8_t int_code(const PtxType& t) { return static_cast<uint8_t>(t.bits | (t.is_signed() ? 0x80 : 0)); }

  // PTX ISA "cvt": d type first, then a type. Float-to-integer conversions saturate and take NaN to 0.
  void decode_cvt(const ParsedInstr& p, const Mods& m, PtxInstr& in) {
    if (m.types.size() != 2) unsupported(p, "cvt needs a destination and a source type");
    PtxType dt = m.types[0], at = m.types[1];
    std::string rnd;
    for (const std::string& r : m.rest) {
      if (r == "rn" || r == "rz" || r == "rm" || r == "rp" || r == "rni" || r == "rzi" || r == "rmi" || r == "rpi") {
        if (!rnd.empty()) unsupported(p, "two rounding modes");
        rnd = r;
      } else {
        unsupported(p, "modifier ." + r);
      }
    }
    expect_operands(p, 2);
    in.d = dst(p, 0);
    in.a = src(p, 1, at);
    auto int_round = [&]() {
      if (rnd == "rzi") return PtxRound::Zero;
      if (rnd == "rni") return PtxRound::Nearest;
      if (rnd == "rmi") return PtxRound::Down;
      if (rnd == "rpi") return PtxRound::Up;
      unsupported(p, "this conversion needs .rzi, .rni, .rmi or .rpi");
    };
    if (dt.is_int() && at.is_int()) {
      if (!rnd.empty()) unsupported(p, "integer-to-integer cvt takes no rounding mode");
      in.op = PtxOp::CvtInt;
      in.aux0 = int_code(at);
      in.aux1 = int_code(dt);
    } else if (dt.is_float() && at.is_int()) {
      if (rnd != "rn") unsupported(p, "integer-to-float cvt is supported with .rn only");
      if (dt.bf || (dt.bits != 32 && dt.bits != 64)) unsupported(p, "integer to 16-bit float");
      in.op = dt.bits == 32 ? PtxOp::CvtF32FromInt : PtxOp::CvtF64FromInt;
      in.aux0 = int_code(at);
    } else if (dt.is_int() && at.is_float()) {
      if (at.bf || (at.bits != 32 && at.bits != 64)) unsupported(p, "16-bit float to integer");
      in.op = PtxOp::CvtIntFromFloat;
      in.cmp = static_cast<uint8_t>(int_round());
      in.aux0 = int_code(dt);
      in.aux1 = at.bits == 64;
    } else if (dt.is_float() && at.is_float()) {
      auto key = [](const PtxType& t) { return t.bf ? std::string("bf16") : "f" + std::to_string(t.bits); };
      std::string k = key(dt) + "<-" + key(at);
      if (k == "f64<-f32" && rnd.empty()) in.op = PtxOp::CvtF64FromF32;
      else if (k == "f32<-f64" && rnd == "rn") in.op = PtxOp::CvtF32FromF64;
      else if (k == "f16<-f32" && rnd == "rn") in.op = PtxOp::CvtF16FromF32;
      else if (k == "bf16<-f32" && rnd == "rn") in.op = PtxOp::CvtBf16FromF32;
      else if (k == "f32<-f16" && rnd.empty()) in.op = PtxOp::CvtF32FromF16;
      else if (k == "f32<-bf16" && rnd.empty()) in.op = PtxOp::CvtF32FromBf16;
      else if ((k == "f32<-f32" || k == "f64<-f64") && rnd.empty()) in.op = PtxOp::Mov;
      else if ((k == "f32<-f32" || k == "f64<-f64") && rnd.size() == 3) {
        in.op = dt.bits == 32 ? PtxOp::CvtRoundF32 : PtxOp::CvtRoundF64;
        in.cmp = static_cast<uint8_t>(int_round());
      } else {
        unsupported(p, "conversion " + k + (rnd.empty() ? "" : " with ." + rnd));
      }
    } else {
      unsupported(p);
    }
  }

  void decode_memory(const ParsedInstr& p, const Mods& m, PtxInstr& in) {
    bool load = m.base == "ld";
    std::string space;
    int lanes = 1;
    for (const std::string& r : m.rest) {
      if (r == "global" || r == "shared" || r == "param" || r == "local" || r == "const") {
        if (!space.empty()) unsupported(p, "two state spaces");
        space = r;
      } else if (r == "v2" || r == "v4") {
        lanes = r == "v2" ? 2 : 4;
      } else if (r != "volatile" && r != "relaxed" && r != "weak" && r != "nc" && r != "ca" && r != "cg" && r != "cs" &&
                 r != "lu" && r != "cv" && r != "wb" && r != "wt" && r != "cta" && r != "gpu" && r != "sys" &&
                 r != "acquire" && r != "release") {
        unsupported(p, "modifier ." + r);
      }
    }
    PtxType t = one_type(p, m);
    if (t.cls == 'p') unsupported(p, "predicates cannot be loaded or stored");
    expect_operands(p, 2);
    const RawOperand& addr = p.ops[load ? 1 : 0];
    if (addr.kind != RawOperand::Addr) fail_at(p.line, p.opcode + ": expected an address [reg+offset]");
    in.aux0 = static_cast<uint8_t>(t.bits / 8);
    in.aux1 = t.is_signed();
    in.imm = addr.offset;
    if (space == "param") {
      if (!load) unsupported(p, "stores to kernel parameters");
      const PtxParam* param = nullptr;
      for (const PtxParam& q : s_.entry().params)
        if (q.name == addr.base) param = &q;
      if (!param) fail_at(p.line, "ld.param: " + (addr.base.empty() ? std::string("an absolute address") : addr.base) + " is not a parameter of " + s_.entry().name);
      if (addr.offset < 0 || static_cast<uint64_t>(addr.offset) + in.aux0 > param->size)
        fail_at(p.line, "ld.param reads past the end of parameter " + param->name);
      in.op = PtxOp::LdParam;
      in.imm = param->offset + addr.offset;
      in.a = s_.constant_slot(0);
    } else if (space.empty() || space == "global" || space == "shared") {
      // a generic address is a global one here: the emulated GPU has no generic window onto shared memory
      bool shared = space == "shared";
      in.op = load ? (shared ? PtxOp::LdShared : PtxOp::LdGlobal) : (shared ? PtxOp::StShared : PtxOp::StGlobal);
      if (addr.base.empty()) in.a = s_.constant_slot(0);
      else if (addr.base[0] == '%') in.a = s_.register_slot(addr.base, p.line, "address");
      else {
        bool found = false;
        for (const PtxSharedArray& a : s_.entry().shared) found |= a.name == addr.base;
        if (!found || !shared) fail_at(p.line, p.opcode + ": " + addr.base + " is not a shared array");
        in.a = s_.shared_address_slot(addr.base);
      }
    } else if (space == "local") {
      // addresses in a thread's own local memory: an array's name or a register holding an offset from `mov r, arr`
      in.op = load ? PtxOp::LdLocal : PtxOp::StLocal;
      // the SM models a thread's local memory as the entry's .local arrays (no stack, no generic local window)
      if (s_.entry().local.empty()) unsupported(p, "local memory in an entry that declares no .local array");
      if (addr.base.empty()) in.a = s_.constant_slot(0);
      else if (addr.base[0] == '%') in.a = s_.register_slot(addr.base, p.line, "address");
      else {
        bool found = false;
        for (const PtxLocalArray& a : s_.entry().local) found |= a.name == addr.base;
        if (!found) fail_at(p.line, p.opcode + ": " + addr.base + " is not a local array");
        in.a = s_.local_address_slot(addr.base);
      }
      if (lanes != 1) unsupported(p, "vector accesses to local memory");
    } else {
      unsupported(p, "state space ." + space);
    }
    if (lanes == 1) {
      if (load) in.d = dst(p, 0);
      else in.b = src(p, 1, t);
      return;
    }
    // PTX ISA "Vectors": .v2/.v4 of at most 16 bytes, the address aligned to the whole vector
    const RawOperand& v = p.ops[load ? 0 : 1];
    if (v.kind != RawOperand::Vec || v.items.size() != static_cast<size_t>(lanes))
      fail_at(p.line, p.opcode + ": expected a vector operand of " + std::to_string(lanes) + " registers");
    if (lanes * in.aux0 > 16) unsupported(p, "a vector of more than 16 bytes");
    if (in.op == PtxOp::LdParam) unsupported(p, "vector parameter loads");
    in.op = in.op == PtxOp::LdGlobal ? PtxOp::LdGlobalV : in.op == PtxOp::StGlobal ? PtxOp::StGlobalV
          : in.op == PtxOp::LdShared ? PtxOp::LdSharedV : PtxOp::StSharedV;
    in.cmp = static_cast<uint8_t>(lanes);
    uint32_t* slots[4] = {&in.d, &in.b, &in.c, &in.x};
    ParsedInstr lane = p;
    for (int i = 0; i < lanes; i++) {
      lane.ops = {v.items[i]};
      *slots[i] = load ? dst(lane, 0) : src(lane, 0, t);
    }
  }

 private:
  EntrySlots& s_;
};

}  // namespace

PtxInstr decode_instruction(const ParsedInstr& p, EntrySlots& slots) { return Decoder(slots).decode(p); }

}  // namespace doorbell::mockgpu::nv
