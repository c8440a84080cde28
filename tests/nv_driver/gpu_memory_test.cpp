#include "mockgpu/nv/gpu_memory.h"

#include <gtest/gtest.h>

#include <array>
#include <stdexcept>
#include <string>

namespace doorbell::mockgpu::nv {
namespace {

std::string error_of(const GpuMemory& memory, std::uint64_t va, std::size_t bytes) {
  try {
    memory.translate(va, bytes);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  ADD_FAILURE() << "translate did not throw";
  return "";
}

TEST(GpuMemory, TranslatesAnAddressInsideAMapping) {
  std::array<std::uint8_t, 0x2000> host{};
  GpuMemory memory;
  ASSERT_TRUE(memory.map(0x10000, host.data(), host.size(), 1));
  EXPECT_EQ(memory.translate(0x10000, 4), host.data());
  EXPECT_EQ(memory.translate(0x11ff0, 16), host.data() + 0x1ff0);
}

TEST(GpuMemory, UnmappedAddressThrowsNamingTheAddress) {
  GpuMemory memory;
  const std::string message = error_of(memory, 0xdead000, 8);
  EXPECT_NE(message.find("0xdead000"), std::string::npos) << message;
  EXPECT_NE(message.find("not mapped"), std::string::npos) << message;
}

TEST(GpuMemory, AccessCrossingTheEndOfAMappingThrowsNamingTheMapping) {
  std::array<std::uint8_t, 0x1000> host{};
  GpuMemory memory;
  ASSERT_TRUE(memory.map(0x20000, host.data(), host.size(), 1));
  const std::string message = error_of(memory, 0x20ffc, 8);
  EXPECT_NE(message.find("0x20ffc"), std::string::npos) << message;
  EXPECT_NE(message.find("[0x20000, 0x21000)"), std::string::npos) << message;
}

TEST(GpuMemory, OverlappingMappingIsRefusedButTheSameMappingAgainIsANoOp) {
  std::array<std::uint8_t, 0x2000> host{};
  GpuMemory memory;
  ASSERT_TRUE(memory.map(0x10000, host.data(), 0x2000, 1));
  EXPECT_TRUE(memory.map(0x10000, host.data(), 0x2000, 1));
  EXPECT_FALSE(memory.map(0x11000, host.data(), 0x1000, 2));
  EXPECT_FALSE(memory.map(0xf000, host.data(), 0x2000, 2));
  EXPECT_EQ(memory.mappings().size(), 1u);
}

TEST(GpuMemory, UnmapOwnerRemovesOnlyThatOwnersMappings) {
  std::array<std::uint8_t, 0x3000> host{};
  GpuMemory memory;
  ASSERT_TRUE(memory.map(0x10000, host.data(), 0x1000, 7));
  ASSERT_TRUE(memory.map(0x20000, host.data() + 0x1000, 0x1000, 8));
  ASSERT_TRUE(memory.map(0x30000, host.data() + 0x2000, 0x1000, 7));
  EXPECT_EQ(memory.unmap_owner(7), 2u);
  EXPECT_THROW(memory.translate(0x10000, 1), std::runtime_error);
  EXPECT_EQ(memory.translate(0x20000, 1), host.data() + 0x1000);
}

}  // namespace
}  // namespace doorbell::mockgpu::nv
