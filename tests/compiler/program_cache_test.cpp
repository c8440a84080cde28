// PROGRAM UOps and the program cache: one compile per kernel content.
#include <gtest/gtest.h>

#include "compiler/cpu/clang_compiler.h"
#include "compiler/program.h"
#include "frontend/tensor.h"
#include "hcq/host_buffers.h"

namespace doorbell {
namespace {

TEST(ProgramCache, TheSameKernelCompilesOnce) {
  if (!find_c_compiler()) GTEST_SKIP() << "no C compiler (clang-19, clang or cc) on PATH";
  Tensor x(std::vector<float>{1, 2, 3, 4, 5, 6, 7});
  UOp linear = (x * 3 - 1).schedule_linear();
  ASSERT_EQ(linear.src().size(), 1u);
  ProgramCacheStats before = program_cache_stats();
  CompiledKernel first = compile_kernel(linear.src(0));
  CompiledKernel second = compile_kernel(linear.src(0).src(0));  // the SINK itself: the same kernel
  ProgramCacheStats after = program_cache_stats();
  EXPECT_EQ(after.misses - before.misses, 1u) << "compiled once";
  EXPECT_EQ(after.hits - before.hits, 1u);
  EXPECT_FALSE(first.cache_hit);
  EXPECT_TRUE(second.cache_hit);
  EXPECT_EQ(first.fn, second.fn);
  EXPECT_TRUE(first.program == second.program);

  const UOp& p = first.program;
  ASSERT_EQ(p.op(), Ops::PROGRAM);
  ASSERT_EQ(p.src().size(), 4u);
  EXPECT_TRUE(p.src(0) == linear.src(0).src(0));
  EXPECT_EQ(p.src(1).op(), Ops::LINEAR);
  EXPECT_EQ(p.src(2).op(), Ops::SOURCE);
  EXPECT_NE(p.src(2).arg_as<std::string>().find("void " + first.name + "("), std::string::npos);
  EXPECT_EQ(p.src(3).op(), Ops::BINARY);
  EXPECT_EQ(p.src(3).dtype(), dtypes::uint8);
  EXPECT_EQ(p.src(3).arg_as<std::string>().substr(0, 4), "\x7f" "ELF");
  EXPECT_GT(first.compile_ms, 0.0);

  const UOp& call = linear.src(0);
  std::vector<void*> bufs;
  for (size_t i = 1; i < call.src().size(); i++) bufs.push_back(buffer_bytes(call.src(i)).data());
  second.fn(bufs.data(), nullptr, 0, 1);
  const float* out = reinterpret_cast<const float*>(bufs[0]);
  for (int i = 0; i < 7; i++) EXPECT_EQ(out[i], 3.f * static_cast<float>(i + 1) - 1.f) << i;
}

TEST(ProgramCache, ANonKernelIsRejectedWithItsName) {
  try {
    compile_kernel(UOp::const_(dtypes::int32, 1));
    FAIL() << "a CONST compiled";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("CONST"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace doorbell
