// Ops: every operation a UOp can carry, grouped by stage. The enum order is the toposort and canonical-order
// tie-break, as in tinygrad (tinygrad tinygrad/uop/__init__.py:12-13).
#pragma once
#include <cstdint>
#include <string_view>

namespace doorbell {

// X(name): one entry per op, in stage order.
#define DOORBELL_OPS(X)                                                                                   \
  /* defines */ X(SPECIAL) X(BUFFER) X(UNIQUE) X(DEVICE)                                                   \
  /* structure */ X(NOOP) X(REWRITE_ERROR) X(PARAM) X(FUNCTION) X(CALL)                                   \
  /* program level */ X(PROGRAM) X(LINEAR) X(SOURCE) X(BINARY)                                            \
  /* ordering */ X(SINK) X(AFTER) X(GROUP)                                                                \
  /* data structure */ X(STACK) X(TUPLE) X(GETTUPLE) X(GETADDR)                                           \
  /* memory */ X(INDEX) X(SHRINK) X(LOAD) X(STORE)                                                        \
  /* math */ X(WMMA)                                                                                      \
  /* unary */ X(CAST) X(BITCAST) X(EXP2) X(LOG2) X(SIN) X(SQRT) X(RECIPROCAL) X(NEG) X(TRUNC)             \
  /* binary */ X(ADD) X(MUL) X(SHL) X(SHR) X(CDIV) X(MAX) X(CMOD) X(CMPLT) X(CMPNE) X(CMPEQ) X(XOR) X(OR) \
      X(AND) X(THREEFRY) X(SUB) X(FDIV) X(POW) X(FLOORDIV) X(FLOORMOD)                                    \
  /* ternary */ X(WHERE) X(MULACC)                                                                        \
  /* control flow */ X(BARRIER) X(RANGE) X(IF) X(END) X(ENDIF) X(WAIT) X(CONST) X(CUSTOM) X(CUSTOMI) X(INS) \
  /* tensor and scheduler */ X(CONTIGUOUS) X(CONTIGUOUS_BACKWARD) X(DETACH) X(STAGE) X(COPY) X(MSELECT)   \
      X(MSTACK) X(CUSTOM_FUNCTION) X(RESHAPE) X(PERMUTE) X(EXPAND) X(PAD) X(FLIP) X(UNSHARD) X(REDUCE)    \
      X(ALLREDUCE)

enum class Ops : uint8_t {
#define DOORBELL_OP_ENUM(name) name,
  DOORBELL_OPS(DOORBELL_OP_ENUM)
#undef DOORBELL_OP_ENUM
};

#define DOORBELL_OP_COUNT(name) +1
inline constexpr int kOpCount = 0 DOORBELL_OPS(DOORBELL_OP_COUNT);
#undef DOORBELL_OP_COUNT

std::string_view op_name(Ops op);
// Throws naming the text when it is not an op name.
Ops op_from_name(std::string_view name);

// A set of ops as a 128-bit mask: constexpr, so groups are compile-time constants.
struct OpSet {
  uint64_t bits[2] = {0, 0};
  constexpr OpSet() = default;
  constexpr OpSet(std::initializer_list<Ops> ops) {
    for (Ops op : ops) add(op);
  }
  constexpr void add(Ops op) { bits[static_cast<int>(op) >> 6] |= uint64_t{1} << (static_cast<int>(op) & 63); }
  constexpr bool contains(Ops op) const { return (bits[static_cast<int>(op) >> 6] >> (static_cast<int>(op) & 63)) & 1; }
  constexpr bool empty() const { return bits[0] == 0 && bits[1] == 0; }
  constexpr OpSet operator|(OpSet o) const { OpSet r; r.bits[0] = bits[0] | o.bits[0]; r.bits[1] = bits[1] | o.bits[1]; return r; }
  constexpr OpSet operator&(OpSet o) const { OpSet r; r.bits[0] = bits[0] & o.bits[0]; r.bits[1] = bits[1] & o.bits[1]; return r; }
  constexpr bool subset_of(OpSet o) const { return (bits[0] & ~o.bits[0]) == 0 && (bits[1] & ~o.bits[1]) == 0; }
  constexpr bool operator==(const OpSet&) const = default;
};

// Op groups (tinygrad GroupOp).
namespace group {
inline constexpr OpSet Unary{Ops::EXP2, Ops::LOG2, Ops::SIN, Ops::SQRT, Ops::RECIPROCAL, Ops::NEG, Ops::TRUNC};
inline constexpr OpSet Binary{Ops::ADD, Ops::MUL, Ops::SHL, Ops::SHR, Ops::CDIV, Ops::MAX, Ops::CMOD,
                              Ops::CMPLT, Ops::CMPNE, Ops::CMPEQ, Ops::XOR, Ops::OR, Ops::AND, Ops::THREEFRY,
                              Ops::SUB, Ops::FDIV, Ops::POW, Ops::FLOORDIV, Ops::FLOORMOD};
inline constexpr OpSet Ternary{Ops::WHERE, Ops::MULACC};
inline constexpr OpSet ALU = Unary | Binary | Ternary;
inline constexpr OpSet Elementwise = ALU | OpSet{Ops::CAST, Ops::BITCAST};
inline constexpr OpSet Commutative{Ops::ADD, Ops::MUL, Ops::MAX, Ops::CMPNE, Ops::CMPEQ, Ops::XOR, Ops::AND, Ops::OR};
inline constexpr OpSet Associative{Ops::ADD, Ops::MUL, Ops::AND, Ops::OR, Ops::MAX};
inline constexpr OpSet Idempotent{Ops::OR, Ops::AND, Ops::MAX};
inline constexpr OpSet Comparison{Ops::CMPLT, Ops::CMPNE, Ops::CMPEQ};
inline constexpr OpSet Movement{Ops::RESHAPE, Ops::EXPAND, Ops::PERMUTE, Ops::PAD, Ops::SHRINK, Ops::FLIP};
inline constexpr OpSet Irreducible{Ops::CONST, Ops::SPECIAL, Ops::RANGE, Ops::PARAM, Ops::GETADDR};
inline constexpr OpSet Reduce{Ops::ADD, Ops::MUL, Ops::MAX};  // the ops a REDUCE may carry
}  // namespace group

// Where a RANGE's axis goes in the optimizer (tinygrad AxisType, uop/ops.py).
// VECTOR (doorbell's, not tinygrad's): lanes of one SIMD value on the CPU (compiler/cpu/vectorize.h), where tinygrad's
// expander turns an UPCAST into a vector dtype.
enum class AxisType : uint8_t { DEVICE, GLOBAL, WARP, LOCAL, WEAK, GROUP_REDUCE, REDUCE, UPCAST, UNROLL, THREAD, PLACEHOLDER, LOOP, VECTOR };
std::string_view axis_type_name(AxisType t);

// Where a buffer or parameter lives; ALU marks a scalar variable (tinygrad AddrSpace).
enum class AddrSpace : uint8_t { GLOBAL, LOCAL, REG, ALU };
std::string_view addr_space_name(AddrSpace a);

}  // namespace doorbell
