#include "mockgpu/nv/ptx_sm.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <vector>

namespace doorbell::mockgpu::nv {
namespace {

// ---- value helpers -----------------------------------------------------------------------------------------

inline uint32_t lo32(uint64_t v) { return static_cast<uint32_t>(v); }
inline int32_t s32(uint64_t v) { return static_cast<int32_t>(static_cast<uint32_t>(v)); }
inline int64_t s64(uint64_t v) { return static_cast<int64_t>(v); }
inline float f32(uint64_t v) { return std::bit_cast<float>(static_cast<uint32_t>(v)); }
inline double f64(uint64_t v) { return std::bit_cast<double>(v); }

// NVIDIA GPUs have one single-precision NaN, 0x7FFFFFFF (CUDA's math_constants.h CUDART_NAN_F): every float32
// result that is NaN is that one. Double precision propagates payloads as x86 does, and its generated NaN is
// 0xFFF8000000000000 (CUDART_NAN), x86's default NaN too.
inline uint64_t put_f32(float f) { return f != f ? 0x7FFFFFFFu : std::bit_cast<uint32_t>(f); }
inline uint64_t put_f64(double d) { return std::bit_cast<uint64_t>(d); }
constexpr uint64_t kCanonicalNan64 = 0xFFF8000000000000ull;

// Sign- or zero-extends the low `bits` of v (aux codes: bits | 0x80 for signed).
inline uint64_t extend(uint64_t v, uint8_t code) {
  unsigned bits = code & 0x7F;
  if (bits >= 64) return v;
  unsigned sh = 64 - bits;
  return (code & 0x80) ? static_cast<uint64_t>(static_cast<int64_t>(v << sh) >> sh) : (v << sh) >> sh;
}

// cvt.rn.f16.f32 (PTX ISA "cvt"): round to nearest even; overflow to infinity, NaN to the canonical 0x7FFF.
uint16_t f16_from_f32(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  uint32_t sign = (x >> 16) & 0x8000u, ax = x & 0x7FFFFFFFu;
  if (ax > 0x7F800000u) return 0x7FFF;
  if (ax >= 0x477FF000u) return static_cast<uint16_t>(sign | 0x7C00u);  // >= 65520 rounds up to infinity
  if (ax >= 0x38800000u) {                                             // normal: >= 2^-14
    ax += 0xFFFu + ((ax >> 13) & 1u);
    ax -= 112u << 23;
    return static_cast<uint16_t>(sign | (ax >> 13));
  }
  // subnormal: units of 2^-24, scaled exactly and rounded to nearest even
  float scaled = std::bit_cast<float>(ax) * 16777216.0f;
  return static_cast<uint16_t>(sign | static_cast<uint32_t>(std::nearbyint(scaled)));
}

// cvt.f32.f16: exact; a NaN becomes the canonical single-precision NaN.
float f32_from_f16(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16, exp = (h >> 10) & 0x1F, mant = h & 0x3FFu;
  if (exp == 31) return std::bit_cast<float>(mant ? 0x7FFFFFFFu : (sign | 0x7F800000u));
  if (exp == 0) {
    float v = static_cast<float>(mant) * 5.9604644775390625e-8f;  // 2^-24
    return sign ? -v : v;
  }
  return std::bit_cast<float>(sign | ((exp + 112) << 23) | (mant << 13));
}

// cvt.rn.bf16.f32: round to nearest even on the top 16 bits; NaN to the canonical 0x7FFF.
uint16_t bf16_from_f32(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7FFFFFFFu) > 0x7F800000u) return 0x7FFF;
  return static_cast<uint16_t>((x + 0x7FFFu + ((x >> 16) & 1u)) >> 16);
}

double round_mode(double v, uint8_t mode) {
  switch (static_cast<PtxRound>(mode)) {
    case PtxRound::Zero: return std::trunc(v);
    case PtxRound::Nearest: return std::nearbyint(v);  // default environment: ties to even
    case PtxRound::Down: return std::floor(v);
    case PtxRound::Up: return std::ceil(v);
  }
  return v;
}

// cvt.{rzi,rni,rmi,rpi}.<int>.<float> (PTX ISA "cvt"): float-to-integer conversions saturate to the destination
// range and NaN converts to 0.
uint64_t int_from_float(double v, uint8_t mode, uint8_t code) {
  if (v != v) return 0;
  v = round_mode(v, mode);
  unsigned bits = code & 0x7F;
  if (code & 0x80) {
    double lim = std::ldexp(1.0, static_cast<int>(bits) - 1);
    int64_t r;
    if (v < -lim) r = bits == 64 ? INT64_MIN : -(int64_t{1} << (bits - 1));
    else if (v >= lim) r = bits == 64 ? INT64_MAX : (int64_t{1} << (bits - 1)) - 1;
    else r = static_cast<int64_t>(v);
    return extend(static_cast<uint64_t>(r), code);
  }
  double hi = std::ldexp(1.0, static_cast<int>(bits));
  if (v <= 0) return 0;
  if (v >= hi) return bits == 64 ? UINT64_MAX : (uint64_t{1} << bits) - 1;
  return static_cast<uint64_t>(v);
}

template <typename F>
inline F fmin_ptx(F a, F b) {  // PTX ISA "min": a NaN operand yields the other; -0 < +0
  if (a != a) return b;
  if (b != b) return a;
  if (a == b) return std::signbit(a) ? a : b;
  return a < b ? a : b;
}
template <typename F>
inline F fmax_ptx(F a, F b) {
  if (a != a) return b;
  if (b != b) return a;
  if (a == b) return std::signbit(a) ? b : a;
  return a > b ? a : b;
}

template <typename F>
bool float_cmp(F a, F b, uint8_t cmp) {
  bool nan = a != a || b != b;
  switch (static_cast<PtxCmp>(cmp)) {
    case PtxCmp::Eq: return !nan && a == b;
    case PtxCmp::Ne: return !nan && a != b;
    case PtxCmp::Lt: return a < b;
    case PtxCmp::Le: return a <= b;
    case PtxCmp::Gt: return a > b;
    case PtxCmp::Ge: return a >= b;
    case PtxCmp::Equ: return nan || a == b;
    case PtxCmp::Neu: return nan || a != b;
    case PtxCmp::Ltu: return nan || a < b;
    case PtxCmp::Leu: return nan || a <= b;
    case PtxCmp::Gtu: return nan || a > b;
    case PtxCmp::Geu: return nan || a >= b;
    case PtxCmp::Num: return !nan;
    case PtxCmp::Nan: return nan;
    default: return false;
  }
}

template <typename I>
bool int_cmp(I a, I b, uint8_t cmp) {
  switch (static_cast<PtxCmp>(cmp)) {
    case PtxCmp::Eq: return a == b;
    case PtxCmp::Ne: return a != b;
    case PtxCmp::Lt: return a < b;
    case PtxCmp::Le: return a <= b;
    case PtxCmp::Gt: return a > b;
    case PtxCmp::Ge: return a >= b;
    default: return false;
  }
}

template <typename F>
bool float_test(F a, uint8_t test) {
  switch (static_cast<PtxTest>(test)) {
    case PtxTest::Finite: return std::isfinite(a);
    case PtxTest::Infinite: return std::isinf(a);
    case PtxTest::Number: return a == a;
    case PtxTest::NotANumber: return a != a;
    case PtxTest::Normal: return std::isnormal(a);
    case PtxTest::Subnormal: return std::fpclassify(a) == FP_SUBNORMAL;
  }
  return false;
}

// PTX ISA "div" / "rem" (integer): division by zero gives an unspecified value; we give what the hardware's
// division sequence gives: all ones for the quotient and the dividend for the remainder. MIN / -1 wraps to MIN.
template <typename S>
S sdiv(S a, S b) {
  if (b == 0) return S(-1);
  if (b == -1) return static_cast<S>(~static_cast<std::make_unsigned_t<S>>(a) + 1);
  return a / b;
}
template <typename S>
S srem(S a, S b) {
  if (b == 0) return a;
  if (b == -1) return 0;
  return a % b;
}

uint64_t mulhi_u64(uint64_t a, uint64_t b) { return static_cast<uint64_t>((static_cast<unsigned __int128>(a) * b) >> 64); }
int64_t mulhi_s64(int64_t a, int64_t b) { return static_cast<int64_t>((static_cast<__int128>(a) * b) >> 64); }

std::string dim_text(uint32_t x, uint32_t y, uint32_t z) {
  return "(" + std::to_string(x) + "," + std::to_string(y) + "," + std::to_string(z) + ")";
}
std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

enum class ThreadState : uint8_t { Running, AtBarrier, Exited };

class Launch {
 public:
  Launch(const PtxEntry& e, PtxDim3 grid, PtxDim3 block, std::span<const uint8_t> params, uint32_t dyn_shared,
         GlobalMemory& mem, const PtxRunOptions& opt)
      : e_(e), grid_(grid), block_(block), params_(params), mem_(mem), opt_(opt) {
    shared_.assign(dyn_shared ? static_cast<size_t>(e.dynamic_shared_offset) + dyn_shared : e.static_shared_bytes, 0);
    shared_size_ = shared_.size();
    slots_ = e.slot_template.size();
  }

  void run() {
    size_t threads = block_.count();
    regs_.resize((e_.has_barrier ? threads : 1) * slots_);
    pcs_.resize(threads);
    state_.resize(threads);
    branches_.resize(threads);
    std::vector<uint64_t> tmpl = e_.slot_template;
    tmpl[kSlotNtid] = block_.x, tmpl[kSlotNtid + 1] = block_.y, tmpl[kSlotNtid + 2] = block_.z;
    tmpl[kSlotNctaid] = grid_.x, tmpl[kSlotNctaid + 1] = grid_.y, tmpl[kSlotNctaid + 2] = grid_.z;
    for (uint32_t bz = 0; bz < grid_.z; bz++)
      for (uint32_t by = 0; by < grid_.y; by++)
        for (uint32_t bx = 0; bx < grid_.x; bx++) {
          tmpl[kSlotCtaid] = bx, tmpl[kSlotCtaid + 1] = by, tmpl[kSlotCtaid + 2] = bz;
          check_preempt();
          run_block(tmpl);
          if (opt_.blocks_completed != nullptr) opt_.blocks_completed->fetch_add(1, std::memory_order_relaxed);
        }
  }

  uint64_t instructions = 0;

 private:
  void check_preempt() const {
    if (opt_.preempt != nullptr && opt_.preempt->load(std::memory_order_relaxed)) throw PtxPreempted{};
  }

  void init_thread(uint64_t* s, const std::vector<uint64_t>& tmpl, size_t t) const {
    std::memcpy(s, tmpl.data(), slots_ * sizeof(uint64_t));
    s[kSlotTid] = t % block_.x;
    s[kSlotTid + 1] = (t / block_.x) % block_.y;
    s[kSlotTid + 2] = t / (uint64_t{block_.x} * block_.y);
    s[kSlotLaneid] = t % 32;
    s[kSlotWarpid] = t / 32;
  }

  void run_block(const std::vector<uint64_t>& tmpl) {
    std::fill(shared_.begin(), shared_.end(), kSharedPoison);
    size_t threads = block_.count();
    if (!e_.has_barrier) {  // each thread runs to its end: one slot array, reused (cache-friendly)
      for (size_t t = 0; t < threads; t++) {
        thread_ = t;
        cur_ = regs_.data();
        init_thread(cur_, tmpl, t);
        uint32_t pc = 0;
        uint64_t branches = 0;
        if (run_thread(cur_, pc, branches) == ThreadState::AtBarrier) fault("a barrier in an entry without one", pc);
      }
      return;
    }
    for (size_t t = 0; t < threads; t++) {
      init_thread(&regs_[t * slots_], tmpl, t);
      pcs_[t] = 0;
      state_[t] = ThreadState::Running;
      branches_[t] = 0;
    }
    while (true) {
      for (size_t t = 0; t < threads; t++) {
        if (state_[t] != ThreadState::Running) continue;
        thread_ = t;
        cur_ = &regs_[t * slots_];
        state_[t] = run_thread(cur_, pcs_[t], branches_[t]);
      }
      size_t waiting = 0;
      for (size_t t = 0; t < threads; t++) waiting += state_[t] == ThreadState::AtBarrier;
      if (waiting == 0) return;
      // some thread waits at a barrier: every thread must be at one, and at the same barrier number
      size_t first_wait = 0;
      while (state_[first_wait] != ThreadState::AtBarrier) first_wait++;
      const PtxInstr& bar = e_.code[pcs_[first_wait]];
      for (size_t t = 0; t < threads; t++) {
        if (state_[t] == ThreadState::Exited) {
          thread_ = first_wait;
          cur_ = &regs_[first_wait * slots_];
          fault("barrier " + std::to_string(bar.imm) + " waits for thread " + thread_text(t) +
                    ", which has exited: the block would hang on hardware",
                pcs_[first_wait]);
        }
        if (e_.code[pcs_[t]].imm != bar.imm) {
          thread_ = t;
          cur_ = &regs_[t * slots_];
          fault("thread waits at barrier " + std::to_string(e_.code[pcs_[t]].imm) + " while thread " +
                    thread_text(first_wait) + " waits at barrier " + std::to_string(bar.imm),
                pcs_[t]);
        }
      }
      for (size_t t = 0; t < threads; t++) {
        state_[t] = ThreadState::Running;
        pcs_[t]++;
      }
    }
  }

  std::string thread_text(size_t t) const {
    return dim_text(static_cast<uint32_t>(t % block_.x), static_cast<uint32_t>((t / block_.x) % block_.y),
                    static_cast<uint32_t>(t / (uint64_t{block_.x} * block_.y)));
  }

  std::string fault_text(const std::string& what, uint32_t pc) const {
    const uint64_t* s = cur_;
    return "ptx fault in " + e_.name + ": " + what + "; at `" + e_.text[pc] + "` (line " + std::to_string(e_.line[pc]) +
           "), block " + dim_text(lo32(s[kSlotCtaid]), lo32(s[kSlotCtaid + 1]), lo32(s[kSlotCtaid + 2])) + " thread " +
           thread_text(thread_);
  }
  [[noreturn]] void fault(const std::string& what, uint32_t pc) const { throw PtxFault(fault_text(what, pc)); }

  // Host pointer for a global access, through a small cache of ranges the memory handed out.
  uint8_t* global(uint64_t va, unsigned size, uint32_t pc, bool write) {
    if (va & (size - 1)) fault("unaligned global address " + hex(va) + " for a " + std::to_string(size) + "-byte access", pc);
    for (const GlobalMemory::Range& r : tlb_)
      if (va - r.va < r.bytes && r.bytes - (va - r.va) >= size) return r.host + (va - r.va);
    GlobalMemory::Range r;
    try {
      r = mem_.mapped_range(va, size);
    } catch (const std::exception& ex) {
      throw PtxFault(fault_text(std::string("global address ") + hex(va) + " is not mapped (" + ex.what() + ")", pc),
                     PtxUnmappedAccess{va, write});
    }
    if (!r.host || va - r.va >= r.bytes || r.bytes - (va - r.va) < size)
      fault("global memory returned a range that does not hold address " + hex(va), pc);
    tlb_[tlb_next_] = r;
    tlb_next_ = (tlb_next_ + 1) % kTlbEntries;
    return r.host + (va - r.va);
  }

  uint8_t* shared(uint64_t addr, unsigned size, uint32_t pc) {
    if (addr & (size - 1)) fault("unaligned shared address " + hex(addr) + " for a " + std::to_string(size) + "-byte access", pc);
    if (addr >= shared_size_ || shared_size_ - addr < size)
      fault("shared address " + hex(addr) + " is outside the block's " + std::to_string(shared_size_) + " bytes of shared memory", pc);
    return shared_.data() + addr;
  }

  // A thread's .local memory lives in device memory (PtxRunOptions::local_base/stride); an access outside the
  // entry's .local arrays is a fault, as the hardware's local window bounds are.
  uint8_t* local(uint64_t addr, unsigned size, uint32_t pc, bool write) {
    if (addr & (size - 1)) fault("unaligned local address " + hex(addr) + " for a " + std::to_string(size) + "-byte access", pc);
    if (addr >= e_.local_bytes || e_.local_bytes - addr < size)
      fault("local address " + hex(addr) + " is outside the thread's " + std::to_string(e_.local_bytes) + " bytes of .local arrays", pc);
    return global(opt_.local_base + thread_ * opt_.local_stride + addr, size, pc, write);
  }

  static uint64_t load(const uint8_t* p, unsigned size, bool sign) {
    switch (size) {
      case 1: return sign ? static_cast<uint64_t>(static_cast<int8_t>(*p)) : *p;
      case 2: {
        uint16_t v;
        std::memcpy(&v, p, 2);
        return sign ? static_cast<uint64_t>(static_cast<int16_t>(v)) : v;
      }
      case 4: {
        uint32_t v;
        std::memcpy(&v, p, 4);
        return sign ? static_cast<uint64_t>(static_cast<int32_t>(v)) : v;
      }
      default: {
        uint64_t v;
        std::memcpy(&v, p, 8);
        return v;
      }
    }
  }
  static void store(uint8_t* p, unsigned size, uint64_t v) {
    switch (size) {
      case 1: *p = static_cast<uint8_t>(v); break;
      case 2: { uint16_t x = static_cast<uint16_t>(v); std::memcpy(p, &x, 2); break; }
      case 4: { uint32_t x = static_cast<uint32_t>(v); std::memcpy(p, &x, 4); break; }
      default: std::memcpy(p, &v, 8); break;
    }
  }

  // Runs one thread from `pc` until it exits or reaches a barrier (pc then points at the bar).
  ThreadState run_thread(uint64_t* s, uint32_t& pc_ref, uint64_t& branches) {
    const PtxInstr* code = e_.code.data();
    uint32_t pc = pc_ref;
    uint64_t count = 0;
    while (true) {
      const PtxInstr& in = code[pc];
      count++;
      if ((s[in.guard] != 0) == static_cast<bool>(in.guard_negated)) {
        pc++;
        continue;
      }
      const uint64_t a = s[in.a], b = s[in.b];
      uint64_t& d = s[in.d];
      switch (in.op) {
        case PtxOp::Mov: d = a; break;
        case PtxOp::Selp: d = s[in.c] ? a : b; break;

        case PtxOp::Add32: d = lo32(a + b); break;
        case PtxOp::Add64: d = a + b; break;
        case PtxOp::Sub32: d = lo32(a - b); break;
        case PtxOp::Sub64: d = a - b; break;
        case PtxOp::MulLo32: d = lo32(a) * lo32(b); break;
        case PtxOp::MulLo64: d = a * b; break;
        case PtxOp::MulHiS32: d = lo32(static_cast<uint64_t>((int64_t{s32(a)} * s32(b)) >> 32)); break;
        case PtxOp::MulHiU32: d = (uint64_t{lo32(a)} * lo32(b)) >> 32; break;
        case PtxOp::MulHiS64: d = static_cast<uint64_t>(mulhi_s64(s64(a), s64(b))); break;
        case PtxOp::MulHiU64: d = mulhi_u64(a, b); break;
        case PtxOp::MulWideS32: d = static_cast<uint64_t>(int64_t{s32(a)} * s32(b)); break;
        case PtxOp::MulWideU32: d = uint64_t{lo32(a)} * lo32(b); break;
        case PtxOp::MadLo32: d = lo32(lo32(a) * lo32(b) + lo32(s[in.c])); break;
        case PtxOp::MadLo64: d = a * b + s[in.c]; break;
        case PtxOp::DivS32: d = lo32(static_cast<uint32_t>(sdiv(s32(a), s32(b)))); break;
        case PtxOp::DivU32: d = lo32(b) ? lo32(a) / lo32(b) : 0xFFFFFFFFu; break;
        case PtxOp::DivS64: d = static_cast<uint64_t>(sdiv(s64(a), s64(b))); break;
        case PtxOp::DivU64: d = b ? a / b : UINT64_MAX; break;
        case PtxOp::RemS32: d = lo32(static_cast<uint32_t>(srem(s32(a), s32(b)))); break;
        case PtxOp::RemU32: d = lo32(b) ? lo32(a) % lo32(b) : lo32(a); break;
        case PtxOp::RemS64: d = static_cast<uint64_t>(srem(s64(a), s64(b))); break;
        case PtxOp::RemU64: d = b ? a % b : a; break;
        case PtxOp::Neg32: d = lo32(0u - lo32(a)); break;
        case PtxOp::Neg64: d = 0 - a; break;
        case PtxOp::AbsS32: d = s32(a) < 0 ? lo32(0u - lo32(a)) : lo32(a); break;
        case PtxOp::AbsS64: d = s64(a) < 0 ? 0 - a : a; break;
        case PtxOp::MinS32: d = lo32(static_cast<uint32_t>(std::min(s32(a), s32(b)))); break;
        case PtxOp::MinU32: d = std::min(lo32(a), lo32(b)); break;
        case PtxOp::MinS64: d = static_cast<uint64_t>(std::min(s64(a), s64(b))); break;
        case PtxOp::MinU64: d = std::min(a, b); break;
        case PtxOp::MaxS32: d = lo32(static_cast<uint32_t>(std::max(s32(a), s32(b)))); break;
        case PtxOp::MaxU32: d = std::max(lo32(a), lo32(b)); break;
        case PtxOp::MaxS64: d = static_cast<uint64_t>(std::max(s64(a), s64(b))); break;
        case PtxOp::MaxU64: d = std::max(a, b); break;
        case PtxOp::And32: d = lo32(a & b); break;
        case PtxOp::And64: d = a & b; break;
        case PtxOp::Or32: d = lo32(a | b); break;
        case PtxOp::Or64: d = a | b; break;
        case PtxOp::Xor32: d = lo32(a ^ b); break;
        case PtxOp::Xor64: d = a ^ b; break;
        case PtxOp::Not32: d = lo32(~a); break;
        case PtxOp::Not64: d = ~a; break;
        // PTX ISA "shl", "shr": shift amounts larger than the width act as the width (zeros, or sign fill)
        case PtxOp::Shl32: d = lo32(b) >= 32 ? 0 : lo32(lo32(a) << lo32(b)); break;
        case PtxOp::Shl64: d = lo32(b) >= 64 ? 0 : a << lo32(b); break;
        case PtxOp::ShrU32: d = lo32(b) >= 32 ? 0 : lo32(a) >> lo32(b); break;
        case PtxOp::ShrS32: d = lo32(static_cast<uint32_t>(s32(a) >> std::min(lo32(b), 31u))); break;
        case PtxOp::ShrU64: d = lo32(b) >= 64 ? 0 : a >> lo32(b); break;
        case PtxOp::ShrS64: d = static_cast<uint64_t>(s64(a) >> std::min(lo32(b), 63u)); break;
        case PtxOp::AndPred: d = (a != 0) & (b != 0); break;
        case PtxOp::OrPred: d = (a != 0) | (b != 0); break;
        case PtxOp::XorPred: d = (a != 0) ^ (b != 0); break;
        case PtxOp::NotPred: d = a == 0; break;

        // PTX ISA "Floating Point Instructions": .rn rounds to nearest even in the instruction's precision;
        // subnormals are kept (no .ftz). C++ float arithmetic on x86-64 (SSE, default MXCSR) does exactly that.
        case PtxOp::AddF32: d = put_f32(f32(a) + f32(b)); break;
        case PtxOp::AddF64: d = put_f64(f64(a) + f64(b)); break;
        case PtxOp::SubF32: d = put_f32(f32(a) - f32(b)); break;
        case PtxOp::SubF64: d = put_f64(f64(a) - f64(b)); break;
        case PtxOp::MulF32: d = put_f32(f32(a) * f32(b)); break;
        case PtxOp::MulF64: d = put_f64(f64(a) * f64(b)); break;
        case PtxOp::DivF32: d = put_f32(f32(a) / f32(b)); break;
        case PtxOp::DivF64: d = put_f64(f64(a) / f64(b)); break;
        case PtxOp::FmaF32: d = put_f32(std::fma(f32(a), f32(b), f32(s[in.c]))); break;
        case PtxOp::FmaF64: d = put_f64(std::fma(f64(a), f64(b), f64(s[in.c]))); break;
        // neg and abs flip or clear the sign bit, NaN included
        case PtxOp::NegF32: d = lo32(a) ^ 0x80000000u; break;
        case PtxOp::NegF64: d = a ^ 0x8000000000000000ull; break;
        case PtxOp::AbsF32: d = lo32(a) & 0x7FFFFFFFu; break;
        case PtxOp::AbsF64: d = a & 0x7FFFFFFFFFFFFFFFull; break;
        case PtxOp::MinF32: d = put_f32(fmin_ptx(f32(a), f32(b))); break;
        case PtxOp::MinF64: { double x = fmin_ptx(f64(a), f64(b)); d = x != x ? kCanonicalNan64 : put_f64(x); break; }
        case PtxOp::MaxF32: d = put_f32(fmax_ptx(f32(a), f32(b))); break;
        case PtxOp::MaxF64: { double x = fmax_ptx(f64(a), f64(b)); d = x != x ? kCanonicalNan64 : put_f64(x); break; }
        case PtxOp::SqrtF32: d = put_f32(std::sqrt(f32(a))); break;
        case PtxOp::SqrtF64: d = put_f64(std::sqrt(f64(a))); break;
        case PtxOp::RcpF32: d = put_f32(1.0f / f32(a)); break;
        case PtxOp::RcpF64: d = put_f64(1.0 / f64(a)); break;
        // the .approx forms: the correctly rounded value stands in for the hardware's approximation
        case PtxOp::Ex2F32: d = put_f32(std::exp2(f32(a))); break;
        case PtxOp::Lg2F32: d = put_f32(std::log2(f32(a))); break;
        case PtxOp::SinF32: d = put_f32(std::sin(f32(a))); break;
        case PtxOp::CosF32: d = put_f32(std::cos(f32(a))); break;
        case PtxOp::RsqrtF32: d = put_f32(1.0f / std::sqrt(f32(a))); break;

        case PtxOp::SetpS32: d = int_cmp(s32(a), s32(b), in.cmp); break;
        case PtxOp::SetpU32: d = int_cmp(lo32(a), lo32(b), in.cmp); break;
        case PtxOp::SetpS64: d = int_cmp(s64(a), s64(b), in.cmp); break;
        case PtxOp::SetpU64: d = int_cmp(a, b, in.cmp); break;
        case PtxOp::SetpF32: d = float_cmp(f32(a), f32(b), in.cmp); break;
        case PtxOp::SetpF64: d = float_cmp(f64(a), f64(b), in.cmp); break;
        case PtxOp::TestpF32: d = float_test(f32(a), in.cmp); break;
        case PtxOp::TestpF64: d = float_test(f64(a), in.cmp); break;

        // PTX ISA "cvt": integer conversions chop or extend; a destination register wider than the destination
        // type holds the value sign- or zero-extended per that type
        case PtxOp::CvtInt: d = extend(extend(a, in.aux0), in.aux1); break;
        case PtxOp::CvtF32FromInt: {
          uint64_t v = extend(a, in.aux0);
          d = put_f32((in.aux0 & 0x80) ? static_cast<float>(s64(v)) : static_cast<float>(v));
          break;
        }
        case PtxOp::CvtF64FromInt: {
          uint64_t v = extend(a, in.aux0);
          d = put_f64((in.aux0 & 0x80) ? static_cast<double>(s64(v)) : static_cast<double>(v));
          break;
        }
        case PtxOp::CvtIntFromFloat: d = int_from_float(in.aux1 ? f64(a) : static_cast<double>(f32(a)), in.cmp, in.aux0); break;
        case PtxOp::CvtF32FromF64: d = put_f32(static_cast<float>(f64(a))); break;
        case PtxOp::CvtF64FromF32: d = put_f64(static_cast<double>(f32(a))); break;
        case PtxOp::CvtF16FromF32: d = f16_from_f32(f32(a)); break;
        case PtxOp::CvtBf16FromF32: d = bf16_from_f32(f32(a)); break;
        case PtxOp::CvtF32FromF16: d = put_f32(f32_from_f16(static_cast<uint16_t>(a))); break;
        case PtxOp::CvtF32FromBf16: d = put_f32(std::bit_cast<float>(static_cast<uint32_t>(a & 0xFFFF) << 16)); break;
        case PtxOp::CvtRoundF32: d = put_f32(static_cast<float>(round_mode(f32(a), in.cmp))); break;
        case PtxOp::CvtRoundF64: d = put_f64(round_mode(f64(a), in.cmp)); break;

        case PtxOp::LdParam: {
          uint64_t off = static_cast<uint64_t>(in.imm);
          if (off + in.aux0 > params_.size())
            fault("parameter bytes " + std::to_string(off) + ".." + std::to_string(off + in.aux0) +
                      " are past the end of the " + std::to_string(params_.size()) + "-byte parameter buffer",
                  pc);
          d = load(params_.data() + off, in.aux0, in.aux1);
          break;
        }
        case PtxOp::LdGlobal: d = load(global(a + static_cast<uint64_t>(in.imm), in.aux0, pc, false), in.aux0, in.aux1); break;
        case PtxOp::StGlobal: store(global(a + static_cast<uint64_t>(in.imm), in.aux0, pc, true), in.aux0, b); break;
        case PtxOp::LdShared: d = load(shared(a + static_cast<uint64_t>(in.imm), in.aux0, pc), in.aux0, in.aux1); break;
        case PtxOp::LdLocal: d = load(local(a + static_cast<uint64_t>(in.imm), in.aux0, pc, false), in.aux0, in.aux1); break;
        case PtxOp::StLocal: store(local(a + static_cast<uint64_t>(in.imm), in.aux0, pc, true), in.aux0, b); break;
        case PtxOp::StShared: store(shared(a + static_cast<uint64_t>(in.imm), in.aux0, pc), in.aux0, b); break;

        case PtxOp::LdGlobalV: case PtxOp::LdSharedV: {
          unsigned lanes = in.cmp, size = in.aux0;
          uint64_t va = a + static_cast<uint64_t>(in.imm);
          const uint8_t* p = in.op == PtxOp::LdGlobalV ? global(va, lanes * size, pc, false) : shared(va, lanes * size, pc);
          uint64_t v[4];
          for (unsigned i = 0; i < lanes; i++) v[i] = load(p + i * size, size, in.aux1);
          const uint32_t dst[4] = {in.d, in.b, in.c, in.x};
          for (unsigned i = 0; i < lanes; i++) s[dst[i]] = v[i];
          break;
        }
        case PtxOp::StGlobalV: case PtxOp::StSharedV: {
          unsigned lanes = in.cmp, size = in.aux0;
          uint64_t va = a + static_cast<uint64_t>(in.imm);
          uint8_t* p = in.op == PtxOp::StGlobalV ? global(va, lanes * size, pc, true) : shared(va, lanes * size, pc);
          const uint32_t src[4] = {in.d, in.b, in.c, in.x};
          for (unsigned i = 0; i < lanes; i++) store(p + i * size, size, s[src[i]]);
          break;
        }
        case PtxOp::Bra:
          if (++branches > opt_.max_branches_per_thread)
            fault("the thread took more than " + std::to_string(opt_.max_branches_per_thread) + " branches (a loop that does not end?)", pc);
          check_preempt();
          pc = static_cast<uint32_t>(in.imm);
          continue;
        case PtxOp::Bar:
          pc_ref = pc;
          instructions += count;
          return ThreadState::AtBarrier;
        case PtxOp::Ret:
          pc_ref = pc;
          instructions += count;
          return ThreadState::Exited;
      }
      pc++;
    }
  }

  static constexpr size_t kTlbEntries = 8;

  const PtxEntry& e_;
  PtxDim3 grid_, block_;
  std::span<const uint8_t> params_;
  GlobalMemory& mem_;
  const PtxRunOptions& opt_;
  std::vector<uint8_t> shared_;
  uint64_t shared_size_ = 0;
  size_t slots_ = 0, thread_ = 0;
  std::vector<uint64_t> regs_;  // every thread's slots (one thread's when the entry has no barrier)
  uint64_t* cur_ = nullptr;     // the running thread's slots
  std::vector<uint32_t> pcs_;
  std::vector<ThreadState> state_;
  std::vector<uint64_t> branches_;
  GlobalMemory::Range tlb_[kTlbEntries] = {};
  size_t tlb_next_ = 0;
};

}  // namespace

PtxRunStats run_kernel(const PtxProgram& program, const std::string& entry, PtxDim3 grid, PtxDim3 block,
                       std::span<const uint8_t> params, uint32_t dynamic_shared_bytes, GlobalMemory& mem,
                       const PtxRunOptions& options) {
  const PtxEntry& e = program.entry(entry);
  auto bad = [&](const std::string& what) { throw std::invalid_argument("run_kernel " + entry + ": " + what); };
  if (grid.count() == 0 || block.count() == 0) bad("grid " + dim_text(grid.x, grid.y, grid.z) + " and block " + dim_text(block.x, block.y, block.z) + " must not be empty");
  // CUDA limits for sm_90: 1024 threads per block, block.z <= 64, grid.y and grid.z <= 65535
  if (block.count() > 1024 || block.z > 64) bad("block " + dim_text(block.x, block.y, block.z) + " exceeds 1024 threads or z > 64");
  if (grid.y > 65535 || grid.z > 65535) bad("grid " + dim_text(grid.x, grid.y, grid.z) + " exceeds 65535 in y or z");
  // PTX ISA ".maxntid": the maximum number of threads is the product of the declared extents
  if (e.maxntid[0] && block.count() > uint64_t{e.maxntid[0]} * e.maxntid[1] * e.maxntid[2])
    bad("block " + dim_text(block.x, block.y, block.z) + " exceeds the entry's .maxntid " + dim_text(e.maxntid[0], e.maxntid[1], e.maxntid[2]));
  if (params.size() < e.param_bytes)
    bad("the parameter buffer has " + std::to_string(params.size()) + " bytes; the entry's parameters take " + std::to_string(e.param_bytes));
  constexpr uint64_t kMaxShared = 227 * 1024;  // sm_90's per-block maximum
  uint64_t shared_bytes = dynamic_shared_bytes ? uint64_t{e.dynamic_shared_offset} + dynamic_shared_bytes : e.static_shared_bytes;
  if (shared_bytes > kMaxShared)
    bad("shared memory of " + std::to_string(shared_bytes) + " bytes exceeds the 227 KiB a block may have");
  if (e.local_bytes > options.local_stride)
    bad("the entry's .local arrays take " + std::to_string(e.local_bytes) + " bytes per thread; the launch gives " +
        std::to_string(options.local_stride));
  Launch l(e, grid, block, params, dynamic_shared_bytes, mem, options);
  l.run();
  return PtxRunStats{l.instructions};
}

}  // namespace doorbell::mockgpu::nv
