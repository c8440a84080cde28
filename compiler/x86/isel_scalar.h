// The scalar half of x86 instruction selection (compiler/x86/isel.h), internal to compiler/x86: the statement
// dispatcher, loops, addresses and gates (isel.cpp) and the scalar values of every dtype (isel_scalar_alu.cpp).
// IselContext's value and memory methods forward here. Semantics choices and their sources:
// firmware-notes/x86-isel.md.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "compiler/x86/isel_context.h"

namespace doorbell::x86 {

// Condition codes in the order of the jcc / setcc / cmovcc mnemonic families.
enum class Cc : uint8_t { E, NE, L, LE, G, GE, B, BE, A, AE, P, NP };

// Where a comparison left its answer in the flags: `cc` alone, or for float compares after vucomiss (unordered sets
// ZF, PF and CF) `cc` and not-unordered (EQ) or `cc` or unordered (NE).
struct Flags {
  enum class Extra : uint8_t { NONE, AND_NP, OR_P };
  Cc cc = Cc::NE;
  Extra extra = Extra::NONE;
};

class ScalarSelector {
 public:
  ScalarSelector(IselContext& cx, const LoweredKernel& kernel, const std::vector<Statement>& statements);
  void run();

  // IselContext's services (isel_context.h says what each gives).
  Reg scalar(const UOp& u);
  Reg scalar_gpr32(const UOp& u);
  Mem element(const UOp& index, uint16_t access_bits);
  int32_t branch_unless_gate(const UOp& index);
  Reg combine(Ops op, DType d, Reg a, Reg b);
  int uses(const UOp& u) const;
  // A label other paths join at was placed (every place_label; a loop top is emitted without it): index sums made
  // before it are forgotten.
  void joined() { sum_cache_.clear(); }

 private:
  struct Loop {
    UOp range;
    Reg counter;
    std::optional<Operand> end;  // register or immediate
    int32_t top = -1, exit = -1;
    bool split = false;
    std::vector<std::pair<Reg, int64_t>> steps;  // induction registers and what each iteration adds (end_loop)
    std::vector<const UOpNode*> hoisted;         // the INDEX nodes whose address parts its preheader made
  };

  // --- isel.cpp: framework
  void entry();
  void statement(const Statement& s);
  void begin_loop(const Statement& s);
  void end_loop();
  void store(const UOp& st);
  void acc_init(const UOp& reduce);
  void acc_update(const UOp& reduce);
  void check_features(const UOp& u) const;
  // Emits `if (core_id != 0) goto label` when a STORE runs outside every split loop of a split kernel; -1 otherwise.
  int32_t core_zero_guard();
  bool remat_compare(const UOp& u) const { return remat_compares_.count(u.get()) != 0; }
  void analyze();
  struct RowOffset {
    UOp x;
    __int128 c = 0, scale = 0;
  };
  std::optional<RowOffset> row_offset(const UOp& u);
  void scaled_offset(const UOp& u, size_t k);
  void offset_terms(const UOp& off, int64_t size, int depth, __int128& disp, std::vector<UOp>& terms);
  void hoist_addresses(size_t begin, Loop& l);
  struct Linear {
    __int128 stride = 0, offset = 0;
  };
  std::optional<Linear> linear(const UOp& t, const UOp& c, __int128 n, int depth = 0);

  // --- isel_scalar_alu.cpp: values
 public:  // the framework and the value selector share these
  Reg value(const UOp& u);  // the register of a VALUE statement's scalar node
  Flags compare(const UOp& cmp);  // cmp/ucomiss of a CMPLT/CMPNE/CMPEQ node's operands
  Flags condition(const UOp& c);  // flags that say c (a bool) is true
  void branch_unless(const Flags& f, int32_t label);
  Reg materialize_compare(const UOp& cmp);
  Reg set_flag(Cc cc);
  Reg load_value(const UOp& load);
  void store_value(const UOp& st, const Mem& at);
  void combine_into(Ops op, DType d, Reg acc, Reg b, bool round_half);
  Reg constant_reg(DType d, const ConstValue& v, bool remat);

  // helpers
  // u's value when it is a CONST or an ALU op of constants (exec_alu's answer, what clang folds too); nullopt else.
  std::optional<ConstValue> folded(const UOp& u);
  bool is_const(const UOp& u) { return folded(u).has_value(); }
  Reg ext(const UOp& u, uint16_t bits);  // u's integer value sign- or zero-extended to 32 or 64 bits
  Reg sum_terms(const std::vector<UOp>& terms);  // the 64-bit sum of nonempty `terms`, each extended, by a lea chain
  Reg copy(Reg r);
  std::optional<Operand> imm(const UOp& u, uint16_t width) const;
  Operand float_src(const UOp& u);  // a register, or the pool constant
  Reg half_round(Reg x, DType to);  // float32 in x rounded to float16 / bfloat16, as float32
  Reg bf16_bits(Reg x);             // db_f2bf: the bfloat16 bits in a GPR's low 16 bits
  Reg f16_bits(Reg x);              // db_f2h through vcvtps2ph
  Reg int_to_float(const UOp& src, bool to_double);
  Reg float_to_int(Reg a, bool from_double, DType to);
  Reg select_cast(const UOp& u);
  Reg select_bitcast(const UOp& u);
  Reg select_where(const UOp& u);
  Reg select_int_alu(const UOp& u);
  Reg select_float_alu(const UOp& u);
  Reg float_max(Reg a, Reg b, bool dbl, std::optional<Reg> into);
  // A select's mask: a VEC register (VEX) or a k register (EVEX: any xmm may be 16-31); `covers_double` when its low
  // 64 bits are all set with the low 32.
  struct Sel {
    Reg r;
    bool covers_double = false;
  };
  Sel compare_mask(int pred, bool dbl, Reg a, const Operand& b);
  Sel bool_mask(const UOp& c);
  void blend_into(Reg d, Reg y, Reg x, Sel m, bool dbl);  // d = m ? x : y
  Reg libm_call(const char* fn, DType d, const std::vector<Reg>& args);

  IselContext& cx;
  const LoweredKernel& kernel;
  const std::vector<Statement>& statements;

 private:
  std::vector<Loop> loops_;
  bool any_split_ = false;
  int32_t return_label_ = -1;
  std::unordered_map<const UOpNode*, int> uses_;
  std::unordered_map<const UOpNode*, std::vector<std::pair<UOp, size_t>>> consumers_;  // consumer, source index
  std::unordered_set<const UOpNode*> remat_compares_;  // compares read only by gates and scalar WHEREs
  std::unordered_set<const UOpNode*> address_only_;    // integer sums read only as (parts of) INDEX offsets
  // (x + c) * s read only as (parts of) INDEX offsets, where (x + c') * s is a value of an enclosing scope made before
  // it: the address reads that register and (c - c') * s goes into the displacement (the rows of a matmul tile
  // share one register instead of one each)
  struct ScaledOffset {
    UOp base;      // (x + c') * s
    __int128 add;  // (c - c') * s
  };
  std::unordered_map<const UOpNode*, ScaledOffset> scaled_offsets_;
  std::map<std::vector<const UOpNode*>, Reg> sum_cache_;  // the index register of a set of offset terms
  std::unordered_map<const UOpNode*, std::optional<ConstValue>> folded_;
  std::unordered_map<int64_t, Reg> buffer_base_;       // PARAM slot -> base pointer register
  // Addresses of an innermost loop's body strength-reduced in its preheader (hoist_addresses): [base + size * index]
  // + disp where base = buffer + size * (the loop-invariant terms) and index = counter * stride, an induction register
  // advanced by the stride at the loop's end (or the counter itself for stride 1).
  struct Hoisted {
    Reg base, index;
    bool has_index = false;
    int32_t disp = 0;  // added to the offset's own constant terms: the induction's constant part
  };
  std::unordered_map<const UOpNode*, Hoisted> hoisted_;
  std::unordered_set<const UOpNode*> unmade_;  // c * stride read only by hoisted addresses: made where read, if ever
  size_t statement_ = 0;  // the index of the statement being selected
};

// Width helpers shared by both files.
bool is_double_dtype(DType d);  // float64, weakfloat
bool is_half_dtype(DType d);    // float16, bfloat16
uint16_t natural_bits(DType d); // register width of a scalar: bool 8, weakint 64, ints their bits
uint16_t op_bits(DType d);      // width integer arithmetic runs at: 64 for 64-bit types, else 32
Mn jcc(Cc c);
Mn setcc(Cc c);
Mn cmovcc(Cc c);
Cc negate(Cc c);
[[noreturn]] void isel_fail(const std::string& what, const UOp& u);

}  // namespace doorbell::x86
