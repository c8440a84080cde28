// The state of instruction selection for one kernel (compiler/x86/isel.h), shared by the scalar selector and
// framework (isel.cpp: statements, loops, scalar values, addresses, gates) and the vector selector (isel_vector.cpp:
// values of DType lanes > 1). Internal to compiler/x86.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <unordered_map>

#include "compiler/x86/isel.h"
#include "ir/uop.h"

namespace doorbell::x86 {

class ScalarSelector;

class IselContext {
 public:
  IselContext(MachineFunction& mf, const IselOptions& options);

  MachineFunction& mf;
  const IselOptions& options;
  uint16_t vector_bits = 256;  // width of a vector value's register: 32 * lanes (128, 256, 512)
  bool evex = false;           // vector values are zmm: AVX-512 instructions (compares into k registers, ...)

  // --- emission
  Inst& emit(Mn op, std::initializer_list<Operand> operands);  // the appended instruction (set mask / tied / remat)
  Reg new_gpr(uint16_t bits = 64) { return mf.new_vreg(RegClass::GPR, bits); }
  Reg new_vec(uint16_t bits) { return mf.new_vreg(RegClass::VEC, bits); }
  Reg new_mask() { return mf.new_vreg(RegClass::MASK, 16); }
  int32_t new_label() { return mf.new_label(); }
  void place_label(int32_t label);
  // [rip + label] of a pool constant (identical bytes share one), read at `access_bits`.
  Mem constant(const std::string& bytes, uint32_t align, uint16_t access_bits);
  // A fresh LOCAL frame slot of `bytes` (64-byte aligned), read or written at `access_bits`.
  Mem local_slot(uint32_t bytes, uint16_t access_bits);
  // The libm function's SYMBOL index (CALL_EXTERN's operand).
  int32_t extern_symbol(const std::string& name);

  // --- values
  bool defined(const UOp& u) const { return values_.count(u.get()) != 0; }
  // u's value is in r from here on (an accumulator update redefines its REDUCE).
  void define(const UOp& u, Reg r) { values_[u.get()] = r; }
  // The register holding u, defined earlier; throws std::invalid_argument naming u when it is not.
  Reg reg_of(const UOp& u) const;
  // A register holding the scalar value of u at its natural width (GPR: dtype bits, bool 8; VEC 128 for floats);
  // a CONST is materialized here (a remat mov, or a pool load for floats).
  Reg scalar(const UOp& u);
  // A GPR whose low 32 bits hold the scalar u (int32, uint32; bool as 0 or 1 zero-extended to 32 bits).
  Reg scalar_gpr32(const UOp& u);
  // How many nodes of the kernel read u (a product read only by a sum fuses into it).
  int uses(const UOp& u) const;

  // --- memory
  // The address of the element INDEX(buffer, offset[, gate]) addresses, for an access of `access_bits`
  // ([base + offset * element size], the offset folded into a displacement where constant).
  Mem element(const UOp& index, uint16_t access_bits);
  // When the INDEX has a gate: emits the branch taken when it is false and returns its target label (the caller
  // places it after the access); -1 when there is no gate.
  int32_t branch_unless_gate(const UOp& index);

  // --- scalar arithmetic, for the vector selector's folds
  // A new register with `op` (ADD, MUL, MAX) of two scalars of dtype `d` (float32, int32, uint32, bool) combined as
  // exec_alu does (MAX of floats propagates NaN).
  Reg scalar_combine(Ops op, DType d, Reg a, Reg b);

  // The vector selector's own bookkeeping across statements (isel_vector.cpp; opaque here): the float products and
  // loads it has not emitted yet because their one reader may fuse them (vfmadd231ps) or read them from memory.
  std::shared_ptr<void> vector_state;

 private:  // isel.cpp shapes these
  friend class ScalarSelector;
  std::unordered_map<const UOpNode*, Reg> values_;
  std::unordered_map<const UOpNode*, int> uses_;
  std::unordered_map<std::string, int32_t> constants_;  // pool bytes -> label
  ScalarSelector* selector_ = nullptr;  // the scalar selector (compiler/x86/isel_scalar.h) the value methods use
};

// Implemented in isel_vector.cpp: the statements whose values are vectors. Each throws std::invalid_argument naming
// the node ("x86 isel: ...") for a vector op it cannot express.
// VALUE statements with u.dtype().lanes > 1: ALU ops (a float MUL read only by an ADD is fused into a vfmadd),
// CAST, BITCAST, LOAD (gated: zeros when the gate is false).
void select_vector_value(IselContext& cx, const UOp& u);
// ACC_INIT of a REDUCE whose dtype has lanes > 1: the identity broadcast.
void select_vector_acc_init(IselContext& cx, const UOp& reduce);
// ACC_UPDATE of a REDUCE with a vector accumulator (a product fused into the sum), or of a scalar accumulator whose
// term is a vector: the lanes folded into it left to right (cx.scalar_combine).
void select_vector_acc_update(IselContext& cx, const UOp& reduce);
// STORE of a vector value (the split-loop core guard is the caller's; the gate is handled here).
void select_vector_store(IselContext& cx, const UOp& store);

}  // namespace doorbell::x86
