// A PTX module decoded for execution (mockgpu/nv/ptx_sm.h runs it): every instruction is a fixed-size record
// whose operands are indices into a thread's flat uint64 slot array, so the executor never looks at text.
// Slot layout of a thread: kSlotTrue, the special registers, the declared registers, then the module's
// constants (immediates, shared array addresses); a thread starts from PtxEntry::slot_template.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace doorbell::mockgpu::nv {

// Every (operation, type) pair the executor knows, fixed at decode time.
enum class PtxOp : uint16_t {
  // moves and selects: copy a whole slot
  Mov, Selp,
  // integer arithmetic; 32-bit forms read and write the low 32 bits
  Add32, Add64, Sub32, Sub64, MulLo32, MulLo64, MulHiS32, MulHiU32, MulHiS64, MulHiU64, MulWideS32, MulWideU32,
  MadLo32, MadLo64, DivS32, DivU32, DivS64, DivU64, RemS32, RemU32, RemS64, RemU64,
  Neg32, Neg64, AbsS32, AbsS64, MinS32, MinU32, MinS64, MinU64, MaxS32, MaxU32, MaxS64, MaxU64,
  And32, And64, Or32, Or64, Xor32, Xor64, Not32, Not64,
  Shl32, Shl64, ShrU32, ShrS32, ShrU64, ShrS64,
  AndPred, OrPred, XorPred, NotPred,
  // float arithmetic (round to nearest even)
  AddF32, AddF64, SubF32, SubF64, MulF32, MulF64, DivF32, DivF64, FmaF32, FmaF64,
  NegF32, NegF64, AbsF32, AbsF64, MinF32, MinF64, MaxF32, MaxF64, SqrtF32, SqrtF64, RcpF32, RcpF64,
  Ex2F32, Lg2F32, SinF32, CosF32, RsqrtF32,
  // comparisons into a predicate: PtxInstr::cmp holds a PtxCmp
  SetpS32, SetpU32, SetpS64, SetpU64, SetpF32, SetpF64, TestpF32, TestpF64,
  // conversions: aux0/aux1 carry widths and signedness (see the executor)
  CvtInt, CvtF32FromInt, CvtF64FromInt, CvtIntFromFloat, CvtF32FromF64, CvtF64FromF32,
  CvtF16FromF32, CvtBf16FromF32, CvtF32FromF16, CvtF32FromBf16, CvtRoundF32, CvtRoundF64,
  // memory: aux0 = access bytes, aux1 = 1 when the loaded value is sign-extended; the vector forms (.v2/.v4)
  // move cmp lanes of aux0 bytes each between memory and the slots d, b, c, x in order
  LdParam, LdGlobal, StGlobal, LdShared, StShared, LdGlobalV, StGlobalV, LdSharedV, StSharedV,
  LdLocal, StLocal,  // a thread's own .local memory (scalar forms only)
  // control
  Bra, Bar, Ret,
};

// setp's comparison (PTX ISA "Comparisons": integer and floating point; u = unordered, true when a NaN is compared).
enum class PtxCmp : uint8_t { Eq, Ne, Lt, Le, Gt, Ge, Lo, Ls, Hi, Hs, Equ, Neu, Ltu, Leu, Gtu, Geu, Num, Nan };

// testp's test (PTX ISA "testp").
enum class PtxTest : uint8_t { Finite, Infinite, Number, NotANumber, Normal, Subnormal };

// A rounding mode of cvt to an integer (value) or an integer-valued float: .rzi .rni .rmi .rpi.
enum class PtxRound : uint8_t { Zero, Nearest, Down, Up };

// Slot indices that every program shares.
inline constexpr uint32_t kSlotTrue = 0;  // always 1: the guard of an unpredicated instruction
inline constexpr uint32_t kSlotTid = 1;   // %tid.x, .y, .z
inline constexpr uint32_t kSlotNtid = 4;  // %ntid.x, .y, .z
inline constexpr uint32_t kSlotCtaid = 7;
inline constexpr uint32_t kSlotNctaid = 10;
inline constexpr uint32_t kSlotLaneid = 13;
inline constexpr uint32_t kSlotWarpid = 14;
inline constexpr uint32_t kFirstRegSlot = 15;

struct PtxInstr {
  PtxOp op = PtxOp::Ret;
  uint8_t cmp = 0;         // PtxCmp, PtxTest or PtxRound
  uint8_t aux0 = 0, aux1 = 0;
  uint8_t guard_negated = 0;
  uint32_t guard = kSlotTrue;  // executes when (slot[guard] != 0) != guard_negated
  uint32_t d = 0, a = 0, b = 0, c = 0, x = 0;
  int64_t imm = 0;         // address offset, branch target (instruction index) or barrier id
};

struct PtxParam {
  std::string name;
  uint32_t offset = 0, size = 0;  // bytes in the parameter buffer
};

struct PtxSharedArray {
  std::string name;
  uint32_t align = 1, size = 0;  // size 0 and dynamic: the launch's dynamic shared memory
  bool dynamic = false;
  uint32_t offset = 0;           // in the block's shared window (dynamic arrays: after every static byte)
};

// A .local array of an entry (PTX ISA "State Spaces": per-thread memory): at `offset` of every thread's local memory.
struct PtxLocalArray {
  std::string name;
  uint32_t align = 1, size = 0, offset = 0;
};

struct PtxEntry {
  std::string name;
  std::vector<PtxParam> params;
  uint32_t param_bytes = 0;
  std::vector<PtxSharedArray> shared;
  uint32_t static_shared_bytes = 0;
  uint32_t dynamic_shared_offset = 0;        // where dynamic shared memory starts (static bytes, aligned)
  std::vector<PtxLocalArray> local;
  uint32_t local_bytes = 0;                  // per thread, every .local array laid out
  std::array<uint32_t, 3> maxntid{0, 0, 0};  // 0: not declared
  std::vector<PtxInstr> code;                 // ends in Ret
  std::vector<uint32_t> line;                 // source line of each instruction
  std::vector<std::string> text;              // source text of each instruction, for error messages
  std::vector<uint64_t> slot_template;        // a fresh thread's slots: constants filled, registers zero
  bool has_barrier = false;
};

struct PtxProgram {
  std::string version, target;
  std::vector<PtxEntry> entries;
  // The entry named `name`; throws std::invalid_argument listing the entries when there is none.
  const PtxEntry& entry(const std::string& name) const;
};

}  // namespace doorbell::mockgpu::nv
