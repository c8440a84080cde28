// A GpuMemory backed by host buffers and a mapped program, for the shader core tests (shader_core_*_test.cpp).
#pragma once
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "mockgpu/amd/shader_core.h"

namespace doorbell::mockgpu::amd {

struct ShaderCoreFixture {
  GpuMemory memory;
  ShaderCoreOptions options;
  uint64_t code_va = 0;
  uint64_t next_va = 0x100000000ull;
  std::vector<std::unique_ptr<uint8_t[]>> buffers;

  // Maps `bytes` zeroed bytes at a fresh 64 KiB-aligned VA (instruction fetch reads up to 12 bytes ahead, so
  // code buffers get 16 spare bytes).
  uint64_t map_bytes(std::size_t bytes) {
    buffers.push_back(std::make_unique<uint8_t[]>(bytes));
    std::memset(buffers.back().get(), 0, bytes);
    uint64_t va = next_va;
    next_va += (bytes + 0xffff) & ~uint64_t{0xffff};
    next_va += 0x10000;  // a gap: running off the end of a buffer faults
    memory.map(va, buffers.back().get(), bytes, 1);
    return va;
  }
  uint64_t map_words(const std::vector<uint32_t>& words) {
    uint64_t va = map_bytes(words.size() * 4);
    std::memcpy(memory.translate(va, words.size() * 4), words.data(), words.size() * 4);
    return va;
  }
  template <typename T>
  void read_back(uint64_t va, std::vector<T>& out) {
    std::memcpy(out.data(), memory.translate(va, out.size() * sizeof(T)), out.size() * sizeof(T));
  }
  // A one-wave dispatch of `program` with s[0:1] = arg (the user SGPRs RSRC2 enables).
  DispatchState state(const std::vector<uint32_t>& program, uint32_t rsrc2, uint64_t arg) {
    std::vector<uint32_t> padded = program;
    padded.resize(program.size() + 4, 0);
    code_va = map_words(padded);
    DispatchState st;
    st.code_va = code_va;
    st.rsrc2 = rsrc2;
    st.user_data[0] = static_cast<uint32_t>(arg);
    st.user_data[1] = static_cast<uint32_t>(arg >> 32);
    return st;
  }
};

}  // namespace doorbell::mockgpu::amd
