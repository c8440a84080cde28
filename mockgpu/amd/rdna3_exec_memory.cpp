// Vector memory instructions of the emulated RDNA3 shader core: DS (LDS), GLOBAL, FLAT and SCRATCH (AMD RDNA3 ISA
// guide, chapters "Data Share Operations" and "Flat, Scratch and Global Instructions"). Every access completes before
// the instruction retires, so s_waitcnt has nothing to wait for (firmware-notes/amd-rdna3-exec.md, "Memory").
#include <algorithm>
#include <bit>
#include <cstring>
#include <string>

#include "mockgpu/amd/rdna3_exec_float.h"
#include "mockgpu/amd/wave_state.h"

namespace doorbell::mockgpu::amd {
namespace {

std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

// The widest span of lane addresses translated at once (a wave's coalesced access is at most 32 x 16 bytes apart in
// the usual case; strided ones up to this bound still take one translation).
constexpr uint64_t kCoalesceLimit = uint64_t{1} << 20;

template <typename Fn>
void for_active(uint32_t exec, Fn fn) {
  for (uint32_t m = exec; m; m &= m - 1) fn(static_cast<uint32_t>(std::countr_zero(m)));
}

// How a load or store moves its data: bytes, sign extension, and which half a D16 form touches.
struct Access {
  uint32_t bytes = 4;      // per lane
  bool sign = false;       // sign-extend a sub-dword load
  int d16 = 0;             // 0: full dwords, 1: low half of vdst (high kept), 2: high half (low kept)
};

void load_into(Wave& w, uint16_t vdst, uint32_t lane, const uint8_t* p, const Access& a) {
  uint32_t* d = w.vreg(vdst);
  if (a.bytes >= 4) {
    for (uint32_t i = 0; i < a.bytes / 4; ++i) std::memcpy(&w.vreg(vdst + i)[lane], p + 4 * i, 4);
    return;
  }
  uint32_t v = 0;
  std::memcpy(&v, p, a.bytes);
  if (a.sign) v = a.bytes == 1 ? static_cast<uint32_t>(static_cast<int8_t>(v)) : static_cast<uint32_t>(static_cast<int16_t>(v));
  if (a.d16 == 1) d[lane] = (d[lane] & 0xffff0000u) | (v & 0xffff);
  else if (a.d16 == 2) d[lane] = (d[lane] & 0xffffu) | (v << 16);
  else d[lane] = v;
}

void store_from(Wave& w, uint16_t data, uint32_t lane, uint8_t* p, const Access& a) {
  if (a.bytes >= 4) {
    for (uint32_t i = 0; i < a.bytes / 4; ++i) std::memcpy(p + 4 * i, &w.vreg(data + i)[lane], 4);
    return;
  }
  uint32_t v = w.vreg(data)[lane];
  if (a.d16 == 2) v >>= 16;
  std::memcpy(p, &v, a.bytes);
}

// Atomic read-modify-write on 32 or 64 bits: returns the old value (written to vdst when GLC asks for it).
template <typename T>
T atomic_apply(const char* kind, T old, T src, T cmp) {
  using S = std::make_signed_t<T>;
  std::string k(kind);
  if (k == "swap") return src;
  if (k == "cmpswap") return old == cmp ? src : old;
  if (k == "add") return old + src;
  if (k == "sub") return old - src;
  if (k == "smin") return static_cast<T>(std::min(static_cast<S>(old), static_cast<S>(src)));
  if (k == "umin") return std::min(old, src);
  if (k == "smax") return static_cast<T>(std::max(static_cast<S>(old), static_cast<S>(src)));
  if (k == "umax") return std::max(old, src);
  if (k == "and") return old & src;
  if (k == "or") return old | src;
  if (k == "xor") return old ^ src;
  if (k == "inc") return old >= src ? 0 : old + 1;
  if (k == "dec") return (old == 0 || old > src) ? src : old - 1;
  if constexpr (sizeof(T) == 4) {
    if (k == "fadd") return bits_of(f32_of(old) + f32_of(src));
    if (k == "fmin") return bits_of(std::min(f32_of(old), f32_of(src)));
    if (k == "fmax") return bits_of(std::max(f32_of(old), f32_of(src)));
  }
  return old;
}

// The atomic kind of a FLAT/GLOBAL opcode (51-86 share one numbering, rdna3_opcodes.h); 0 bits for non-atomics.
struct AtomicOp { const char* kind = nullptr; bool b64 = false; };
AtomicOp flat_atomic(uint16_t op) {
  switch (op) {
    case 51: return {"swap"}; case 52: return {"cmpswap"}; case 53: return {"add"}; case 54: return {"sub"};
    case 56: return {"smin"}; case 57: return {"umin"}; case 58: return {"smax"}; case 59: return {"umax"};
    case 60: return {"and"}; case 61: return {"or"}; case 62: return {"xor"}; case 63: return {"inc"}; case 64: return {"dec"};
    case 65: return {"swap", true}; case 66: return {"cmpswap", true}; case 67: return {"add", true}; case 68: return {"sub", true};
    case 69: return {"smin", true}; case 70: return {"umin", true}; case 71: return {"smax", true}; case 72: return {"umax", true};
    case 73: return {"and", true}; case 74: return {"or", true}; case 75: return {"xor", true}; case 76: return {"inc", true};
    case 77: return {"dec", true}; case 81: return {"fmin"}; case 82: return {"fmax"}; case 86: return {"fadd"};
    default: return {};
  }
}

// FLAT/GLOBAL/SCRATCH loads and stores share opcodes 16-37 (rdna3_opcodes.h).
bool flat_access(uint16_t op, Access& a, bool& store) {
  store = false;
  switch (op) {
    case 16: a = {1, false, 0}; return true;   // LOAD_U8
    case 17: a = {1, true, 0}; return true;    // LOAD_I8
    case 18: a = {2, false, 0}; return true;   // LOAD_U16
    case 19: a = {2, true, 0}; return true;    // LOAD_I16
    case 20: a = {4}; return true;
    case 21: a = {8}; return true;
    case 22: a = {12}; return true;
    case 23: a = {16}; return true;
    case 24: a = {1}; store = true; return true;
    case 25: a = {2}; store = true; return true;
    case 26: a = {4}; store = true; return true;
    case 27: a = {8}; store = true; return true;
    case 28: a = {12}; store = true; return true;
    case 29: a = {16}; store = true; return true;
    case 30: a = {1, false, 1}; return true;   // LOAD_D16_U8
    case 31: a = {1, true, 1}; return true;    // LOAD_D16_I8
    case 32: a = {2, false, 1}; return true;   // LOAD_D16_B16
    case 33: a = {1, false, 2}; return true;   // LOAD_D16_HI_U8
    case 34: a = {1, true, 2}; return true;    // LOAD_D16_HI_I8
    case 35: a = {2, false, 2}; return true;   // LOAD_D16_HI_B16
    case 36: a = {1, false, 2}; store = true; return true;  // STORE_D16_HI_B8
    case 37: a = {2, false, 2}; store = true; return true;  // STORE_D16_HI_B16
    default: return false;
  }
}

uint8_t* lds_at(WaveContext& ctx, uint64_t address, uint32_t bytes) {
  if (address + bytes > ctx.lds.size()) {
    throw ExecError{"LDS access at " + hex(address) + " (" + std::to_string(bytes) + " bytes) is outside the workgroup's " +
                        std::to_string(ctx.lds.size()) + " bytes of LDS",
                    address};
  }
  return ctx.lds.data() + address;
}

// The host bytes of a flat/global address: the shared aperture reaches LDS, the private one is refused.
uint8_t* flat_at(WaveContext& ctx, uint64_t va, uint32_t bytes, bool flat) {
  if (flat && va >= kSharedApertureBase && va < kSharedApertureBase + kApertureSize) return lds_at(ctx, va - kSharedApertureBase, bytes);
  if (flat && va >= kPrivateApertureBase && va < kPrivateApertureBase + kApertureSize) {
    throw ExecError{"flat access to the private aperture at " + hex(va) + " is not emulated (scratch_* instructions are)", va};
  }
  return translate_or_fault(ctx.memory, va, bytes);
}

void exec_global(Wave& w, const Rdna3Inst& in, WaveContext& ctx, bool flat) {
  const uint32_t exec = w.exec();
  const uint32_t* vlo = w.vreg(in.addr);
  const bool scalar_base = !flat && in.saddr != operand::kNull && in.saddr != 0x7f;
  const uint64_t sbase = scalar_base ? read_scalar64(w, in.saddr, 0, false) : 0;
  auto address = [&](uint32_t l) -> uint64_t {
    // With SADDR: SGPR pair + 32-bit VGPR offset; without: a 64-bit VGPR address (ISA guide, "Global").
    uint64_t base = scalar_base ? sbase + vlo[l] : (vlo[l] | (uint64_t{w.vreg(in.addr + 1)[l]} << 32));
    return base + static_cast<int64_t>(in.offset);
  };
  Access a;
  bool store = false;
  if (flat_access(in.op, a, store)) {
    // One translation for the whole wave when its lanes' bytes lie in one mapping (the usual coalesced access);
    // otherwise lane by lane, so a fault names the first lane address that is not mapped.
    uint64_t lo = ~uint64_t{0}, hi = 0;
    for_active(exec, [&](uint32_t l) { uint64_t va = address(l); lo = std::min(lo, va); hi = std::max(hi, va + a.bytes); });
    uint8_t* window = nullptr;
    if (exec != 0 && hi - lo <= kCoalesceLimit && hi <= kSharedApertureBase) {
      try {
        window = ctx.memory.translate(lo, static_cast<std::size_t>(hi - lo));
      } catch (const std::exception&) {
        window = nullptr;
      }
    }
    for_active(exec, [&](uint32_t l) {
      uint8_t* p = window ? window + (address(l) - lo) : flat_at(ctx, address(l), a.bytes, flat);
      if (store) store_from(w, in.data0, l, p, a);
      else load_into(w, in.vdst, l, p, a);
    });
    return;
  }
  AtomicOp at = flat_atomic(in.op);
  if (!at.kind) unimplemented(in);
  for_active(exec, [&](uint32_t l) {
    uint32_t bytes = at.b64 ? 8 : 4;
    uint8_t* p = flat_at(ctx, address(l), bytes, flat);
    if (at.b64) {
      uint64_t old, src = w.vreg(in.data0)[l] | (uint64_t{w.vreg(in.data0 + 1)[l]} << 32), cmp = 0;
      std::memcpy(&old, p, 8);
      if (std::string(at.kind) == "cmpswap") cmp = w.vreg(in.data0 + 2)[l] | (uint64_t{w.vreg(in.data0 + 3)[l]} << 32);
      uint64_t r = atomic_apply<uint64_t>(at.kind, old, src, cmp);
      std::memcpy(p, &r, 8);
      if (in.glc) { w.vreg(in.vdst)[l] = static_cast<uint32_t>(old); w.vreg(in.vdst + 1)[l] = static_cast<uint32_t>(old >> 32); }
    } else {
      uint32_t old, src = w.vreg(in.data0)[l], cmp = 0;
      std::memcpy(&old, p, 4);
      // CMPSWAP data: DATA[0] = the new value, DATA[1] = the compare value (ISA guide, FLAT_ATOMIC_CMPSWAP_B32).
      if (std::string(at.kind) == "cmpswap") cmp = w.vreg(in.data0 + 1)[l];
      uint32_t r = atomic_apply<uint32_t>(at.kind, old, src, cmp);
      std::memcpy(p, &r, 4);
      if (in.glc) w.vreg(in.vdst)[l] = old;
    }
  });
}

// Private memory: each lane owns scratch_wave_bytes / 32 contiguous bytes of its wave's slice (the layout is the
// emulator's own: only the emulated scratch instructions read it; firmware-notes/amd-rdna3-exec.md, "Scratch").
void exec_scratch(Wave& w, const Rdna3Inst& in, WaveContext& ctx) {
  Access a;
  bool store = false;
  if (!flat_access(in.op, a, store)) unimplemented(in);
  const uint64_t per_lane = ctx.state.scratch_wave_bytes / kWaveLanes;
  if (w.scratch_va == 0 || per_lane == 0) throw ExecError{"scratch access but the dispatch has no scratch (scratch_va/scratch_wave_bytes 0)"};
  const uint32_t sbase = in.saddr != operand::kNull ? read_scalar32(w, in.saddr, 0) : 0;
  for_active(w.exec(), [&](uint32_t l) {
    uint64_t off = uint64_t{sbase} + (in.sve ? w.vreg(in.addr)[l] : 0) + static_cast<int64_t>(in.offset);
    off &= 0xffffffffu;
    if (off + a.bytes > per_lane) {
      throw ExecError{"scratch offset " + hex(off) + " (+" + std::to_string(a.bytes) + " bytes) is past the " +
                          std::to_string(per_lane) + " private bytes of a lane",
                      off};
    }
    uint8_t* p = translate_or_fault(ctx.memory, w.scratch_va + l * per_lane + off, a.bytes);
    if (store) store_from(w, in.data0, l, p, a);
    else load_into(w, in.vdst, l, p, a);
  });
}

void exec_ds(Wave& w, const Rdna3Inst& in, WaveContext& ctx) {
  const uint32_t exec = w.exec();
  const uint32_t* addr = w.vreg(in.addr);
  auto at = [&](uint32_t l, uint32_t off, uint32_t bytes) { return lds_at(ctx, uint64_t{addr[l]} + off, bytes); };
  const uint32_t off16 = static_cast<uint32_t>(in.offset);
  auto single_load = [&](Access a) { for_active(exec, [&](uint32_t l) { load_into(w, in.vdst, l, at(l, off16, a.bytes), a); }); };
  auto single_store = [&](Access a) { for_active(exec, [&](uint32_t l) { store_from(w, in.data0, l, at(l, off16, a.bytes), a); }); };
  auto two_addr = [&](uint32_t elem, uint32_t stride, bool store) {
    for_active(exec, [&](uint32_t l) {
      uint8_t* p0 = at(l, in.offset0 * elem * stride, elem);
      uint8_t* p1 = at(l, in.offset1 * elem * stride, elem);
      Access a{elem};
      if (store) {
        store_from(w, in.data0, l, p0, a);
        store_from(w, in.data1, l, p1, a);
      } else {
        load_into(w, in.vdst, l, p0, a);
        load_into(w, static_cast<uint16_t>(in.vdst + elem / 4), l, p1, a);
      }
    });
  };
  auto atomic32 = [&](const char* kind, bool rtn) {
    for_active(exec, [&](uint32_t l) {
      uint8_t* p = at(l, off16, 4);
      uint32_t old;
      std::memcpy(&old, p, 4);
      uint32_t cmp = 0, src = w.vreg(in.data0)[l];
      // DS_CMPSTORE: DATA0 is the compare value, DATA1 the new one (ISA guide, DS_CMPSTORE_B32).
      if (std::string(kind) == "cmpswap") { cmp = src; src = w.vreg(in.data1)[l]; }
      uint32_t r = atomic_apply<uint32_t>(kind, old, src, cmp);
      std::memcpy(p, &r, 4);
      if (rtn) w.vreg(in.vdst)[l] = old;
    });
  };
  switch (static_cast<Ds>(in.op)) {
    case Ds::DS_LOAD_B32: return single_load({4});
    case Ds::DS_LOAD_B64: return single_load({8});
    case Ds::DS_LOAD_B96: return single_load({12});
    case Ds::DS_LOAD_B128: return single_load({16});
    case Ds::DS_LOAD_U8: return single_load({1, false, 0});
    case Ds::DS_LOAD_I8: return single_load({1, true, 0});
    case Ds::DS_LOAD_U16: return single_load({2, false, 0});
    case Ds::DS_LOAD_I16: return single_load({2, true, 0});
    case Ds::DS_LOAD_U8_D16: return single_load({1, false, 1});
    case Ds::DS_LOAD_U8_D16_HI: return single_load({1, false, 2});
    case Ds::DS_LOAD_I8_D16: return single_load({1, true, 1});
    case Ds::DS_LOAD_I8_D16_HI: return single_load({1, true, 2});
    case Ds::DS_LOAD_U16_D16: return single_load({2, false, 1});
    case Ds::DS_LOAD_U16_D16_HI: return single_load({2, false, 2});
    case Ds::DS_STORE_B32: return single_store({4});
    case Ds::DS_STORE_B64: return single_store({8});
    case Ds::DS_STORE_B96: return single_store({12});
    case Ds::DS_STORE_B128: return single_store({16});
    case Ds::DS_STORE_B8: return single_store({1});
    case Ds::DS_STORE_B16: return single_store({2});
    case Ds::DS_STORE_B8_D16_HI: return single_store({1, false, 2});
    case Ds::DS_STORE_B16_D16_HI: return single_store({2, false, 2});
    case Ds::DS_LOAD_2ADDR_B32: return two_addr(4, 1, false);
    case Ds::DS_LOAD_2ADDR_STRIDE64_B32: return two_addr(4, 64, false);
    case Ds::DS_LOAD_2ADDR_B64: return two_addr(8, 1, false);
    case Ds::DS_LOAD_2ADDR_STRIDE64_B64: return two_addr(8, 64, false);
    case Ds::DS_STORE_2ADDR_B32: return two_addr(4, 1, true);
    case Ds::DS_STORE_2ADDR_STRIDE64_B32: return two_addr(4, 64, true);
    case Ds::DS_STORE_2ADDR_B64: return two_addr(8, 1, true);
    case Ds::DS_STORE_2ADDR_STRIDE64_B64: return two_addr(8, 64, true);
    case Ds::DS_ADD_U32: return atomic32("add", false);
    case Ds::DS_ADD_RTN_U32: return atomic32("add", true);
    case Ds::DS_SUB_U32: return atomic32("sub", false);
    case Ds::DS_SUB_RTN_U32: return atomic32("sub", true);
    case Ds::DS_MIN_I32: return atomic32("smin", false);
    case Ds::DS_MIN_RTN_I32: return atomic32("smin", true);
    case Ds::DS_MAX_I32: return atomic32("smax", false);
    case Ds::DS_MAX_RTN_I32: return atomic32("smax", true);
    case Ds::DS_MIN_U32: return atomic32("umin", false);
    case Ds::DS_MIN_RTN_U32: return atomic32("umin", true);
    case Ds::DS_MAX_U32: return atomic32("umax", false);
    case Ds::DS_MAX_RTN_U32: return atomic32("umax", true);
    case Ds::DS_AND_B32: return atomic32("and", false);
    case Ds::DS_AND_RTN_B32: return atomic32("and", true);
    case Ds::DS_OR_B32: return atomic32("or", false);
    case Ds::DS_OR_RTN_B32: return atomic32("or", true);
    case Ds::DS_XOR_B32: return atomic32("xor", false);
    case Ds::DS_XOR_RTN_B32: return atomic32("xor", true);
    case Ds::DS_STOREXCHG_RTN_B32: return atomic32("swap", true);
    case Ds::DS_CMPSTORE_B32: return atomic32("cmpswap", false);
    case Ds::DS_CMPSTORE_RTN_B32: return atomic32("cmpswap", true);
    case Ds::DS_ADD_F32: return atomic32("fadd", false);
    case Ds::DS_ADD_RTN_F32: return atomic32("fadd", true);
    case Ds::DS_MIN_F32: return atomic32("fmin", false);
    case Ds::DS_MAX_F32: return atomic32("fmax", false);
    default: unimplemented(in);
  }
}

}  // namespace

void exec_memory(Wave& w, const Rdna3Inst& inst, WaveContext& ctx) {
  switch (inst.format) {
    case Rdna3Format::DS:
      if (inst.gds) throw ExecError{"GDS access: the emulated GPU has no global data share"};
      return exec_ds(w, inst, ctx);
    case Rdna3Format::GLOBAL: return exec_global(w, inst, ctx, false);
    case Rdna3Format::FLAT: return exec_global(w, inst, ctx, true);
    case Rdna3Format::SCRATCH: return exec_scratch(w, inst, ctx);
    default: unimplemented(inst);
  }
}

}  // namespace doorbell::mockgpu::amd
