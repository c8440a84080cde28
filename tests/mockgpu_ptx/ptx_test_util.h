// Helpers for the PTX interpreter tests: global memory over host buffers (device address = host address), and
// one-entry modules around hand-written instruction bodies.
#pragma once
#include <bit>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "mockgpu/nv/ptx_parser.h"
#include "mockgpu/nv/ptx_sm.h"

namespace doorbell::mockgpu::nv::test {

// Identity mapping of registered host ranges.
class HostMemory : public GlobalMemory {
 public:
  void add(const void* p, size_t bytes) { ranges_.push_back({reinterpret_cast<uint64_t>(p), bytes, static_cast<uint8_t*>(const_cast<void*>(p))}); }
  uint8_t* translate(uint64_t va, size_t bytes) override {
    Range r = mapped_range(va, bytes);
    return r.host + (va - r.va);
  }
  Range mapped_range(uint64_t va, size_t bytes) override {
    for (const Range& r : ranges_)
      if (va >= r.va && va - r.va < r.bytes && r.bytes - (va - r.va) >= bytes) return r;
    char buf[64];
    std::snprintf(buf, sizeof buf, "address 0x%llx is not mapped", static_cast<unsigned long long>(va));
    throw std::runtime_error(buf);
  }

 private:
  std::vector<Range> ranges_;
};

inline std::vector<uint8_t> pointer_params(const std::vector<const void*>& ptrs) {
  std::vector<uint8_t> p(ptrs.size() * 8);
  for (size_t i = 0; i < ptrs.size(); i++) {
    uint64_t v = reinterpret_cast<uint64_t>(ptrs[i]);
    std::memcpy(p.data() + 8 * i, &v, 8);
  }
  return p;
}

// A module with entry `k(.param .u64 data0..N-1)` and generous register declarations around `body`.
inline std::string module(const std::string& body, int params = 1, const std::string& decls = "") {
  std::string s = ".version 8.0\n.target sm_90\n.address_size 64\n\n.visible .entry k(";
  for (int i = 0; i < params; i++) s += std::string(i ? "," : "") + "\n\t.param .u64 data" + std::to_string(i);
  s += "\n)\n{\n\t.reg .pred %p<16>;\n\t.reg .b16 %h<16>;\n\t.reg .b32 %r<32>;\n\t.reg .b64 %rd<32>;\n\t.reg .f32 %f<32>;\n\t.reg .f64 %fd<16>;\n";
  s += decls + body + "\n\tret;\n}\n";
  return s;
}

// Runs `body` in one thread with data0 pointing at 16 zeroed 64-bit words (as %rd1 after the prologue) and
// returns the words.
inline std::vector<uint64_t> run_words(const std::string& body) {
  std::vector<uint64_t> out(16, 0);
  PtxProgram p = parse_ptx(module("\tld.param.u64 %rd1, [data0];\n" + body));
  HostMemory mem;
  mem.add(out.data(), out.size() * 8);
  std::vector<uint8_t> params = pointer_params({out.data()});
  run_kernel(p, "k", {1, 1, 1}, {1, 1, 1}, params, 0, mem);
  return out;
}

inline std::string f32_lit(float f) {
  char b[16];
  std::snprintf(b, sizeof b, "0f%08X", std::bit_cast<uint32_t>(f));
  return b;
}
inline std::string f32_lit_bits(uint32_t bits) { return f32_lit(std::bit_cast<float>(bits)); }
inline std::string f64_lit(double d) {
  char b[24];
  std::snprintf(b, sizeof b, "0d%016llX", static_cast<unsigned long long>(std::bit_cast<uint64_t>(d)));
  return b;
}

// The 32 result bits of `op %f3, x[, y]` on float32 operands.
inline uint32_t f32_op(const std::string& op, float x, float y = 0) {
  bool binary = op.rfind("add", 0) == 0 || op.rfind("sub", 0) == 0 || op.rfind("mul", 0) == 0 || op.rfind("div", 0) == 0 ||
                op.rfind("min", 0) == 0 || op.rfind("max", 0) == 0;
  std::string body = "\tmov.f32 %f1, " + f32_lit(x) + ";\n\tmov.f32 %f2, " + f32_lit(y) + ";\n\t" + op + " %f3, %f1" +
                     (binary ? ", %f2" : "") + ";\n\tst.global.f32 [%rd1], %f3;\n";
  return static_cast<uint32_t>(run_words(body)[0]);
}
inline float f32_val(const std::string& op, float x, float y = 0) { return std::bit_cast<float>(f32_op(op, x, y)); }

}  // namespace doorbell::mockgpu::nv::test
