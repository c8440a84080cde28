// PROGRAM UOps and the program cache: one compile per kernel content.
#include <gtest/gtest.h>

#include <cstdlib>

#include "compiler/cpu/clang_compiler.h"
#include "compiler/program.h"
#include "compiler/ref_target.h"
#include "frontend/tensor.h"
#include "hcq/device.h"
#include "hcq/devices.h"
#include "hcq/host_buffers.h"
#include "hcq/hw_queue.h"

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

// The program cache's limit for one test.
class LimitScope {
 public:
  explicit LimitScope(size_t limit) : saved_(set_program_cache_limit(limit)) {}
  ~LimitScope() { set_program_cache_limit(saved_); }

 private:
  size_t saved_;
};

UOp scaled_kernel(const Tensor& x, float k) {
  UOp linear = (x * k).schedule_linear();
  EXPECT_EQ(linear.src().size(), 1u);
  return linear.src(0);
}

// Issue 14: the program cache never evicted.
TEST(ProgramCache, KeepsAtMostItsLimitAndDropsTheLeastRecentlyUsed) {
  LimitScope scope(2);
  Tensor x(std::vector<float>{1, 2, 3});
  UOp a = scaled_kernel(x, 5), b = scaled_kernel(x, 6), c = scaled_kernel(x, 7);
  compile_program(a, ref_target());
  compile_program(b, ref_target());
  ProgramCacheStats before = program_cache_stats();
  EXPECT_EQ(before.entries, 2u);
  EXPECT_TRUE(compile_program(a, ref_target()).cache_hit);  // a is now the most recently used
  EXPECT_FALSE(compile_program(c, ref_target()).cache_hit);  // drops b
  ProgramCacheStats after = program_cache_stats();
  EXPECT_EQ(after.entries, 2u);
  EXPECT_EQ(after.evictions - before.evictions, 1u);
  EXPECT_TRUE(compile_program(a, ref_target()).cache_hit);
  EXPECT_FALSE(compile_program(b, ref_target()).cache_hit);
  EXPECT_THROW(set_program_cache_limit(0), std::invalid_argument);
}

// A queue carries a bare pointer to the loaded program: evicting it must not free it under queued work.
TEST(ProgramCache, AnEvictedLoadedProgramOutlivesTheQueuedWorkThatUsesIt) {
  if (!find_c_compiler()) GTEST_SKIP() << "no C compiler (clang-19, clang or cc) on PATH";
  Device& d = device("CPU");
  LimitScope scope(1);
  Tensor x(std::vector<float>{1, 2, 3});
  UOp call_a = scaled_kernel(x, 5);
  UOp program_a = compile_program(call_a, d.target()).program;
  const LoadedProgram& loaded_a = d.program(program_a);
  const size_t held_elsewhere = d.retired_programs();  // evicted by the limit, still held by other tests' state
  const ProgramInfo& info = program_info(program_a);
  std::vector<uint64_t> addresses;
  for (int64_t i = 1; i <= info.buffers; i++)
    addresses.push_back(reinterpret_cast<uintptr_t>(buffer_bytes(call_a.src(static_cast<size_t>(i))).data()));
  Signal& gate = d.new_signal("program-cache-test-gate");
  HWQueue q;
  q.wait(gate, 1).exec(loaded_a, addresses, {1, 1, 1}, {1, 1, 1}).signal(d.timeline_signal(), d.next_timeline()).submit(d);

  // Another program takes a's place in both caches, and nothing but the device holds a's PROGRAM any more.
  program_a = UOp();
  UOp program_b = compile_program(scaled_kernel(x, 6), d.target()).program;
  d.program(program_b);
  EXPECT_EQ(d.loaded_programs(), 1u);
  EXPECT_EQ(d.retired_programs(), held_elsewhere + 1) << "freed while a queued exec still points at it";

  gate.set(1);
  d.synchronize();
  const float* out = reinterpret_cast<const float*>(buffer_bytes(call_a.src(1)).data());
  for (int i = 0; i < 3; i++) EXPECT_EQ(out[i], 5.f * static_cast<float>(i + 1)) << i;
  d.program(program_b);
  EXPECT_EQ(d.retired_programs(), held_elsewhere) << "the work is done: the evicted program goes";
}

TEST(ProgramCache, AnEvictedProgramStillHeldIsKeptAndReusedWithoutReloading) {
  if (!find_c_compiler()) GTEST_SKIP() << "no C compiler (clang-19, clang or cc) on PATH";
  Device& d = device("CPU");
  LimitScope scope(1);
  Tensor x(std::vector<float>{1, 2, 3});
  UOp program_a = compile_program(scaled_kernel(x, 8), d.target()).program;
  const LoadedProgram* first = &d.program(program_a);
  const size_t held_elsewhere = d.retired_programs();
  d.program(compile_program(scaled_kernel(x, 9), d.target()).program);
  EXPECT_EQ(d.retired_programs(), held_elsewhere + 1);  // program_a is still held here
  EXPECT_EQ(&d.program(program_a), first);
  EXPECT_EQ(d.loaded_programs(), 1u);
}

}  // namespace
}  // namespace doorbell
