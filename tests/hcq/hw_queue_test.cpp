// HWQueue recording and patching, without a device.
#include <gtest/gtest.h>

#include <array>
#include <stdexcept>

#include "hcq/hw_queue.h"
#include "hcq/signal.h"

namespace doorbell {
namespace {

void nop_kernel(void* const*, const int64_t*, int32_t, int32_t) {}

TEST(HWQueue, RecordsCommandsInOrderAsData) {
  Signal s("CPU", "s");
  int a = 0;
  int b = 0;
  std::array<void*, 2> bufs{&a, &b};
  std::array<int64_t, 1> scalars{42};
  HWQueue q;
  q.wait(s, 1).exec(nop_kernel, bufs, scalars, 3).copy(&a, &b, sizeof a).memory_barrier().timestamp(s).signal(s, 2);
  ASSERT_EQ(q.size(), 6u);
  const auto c = q.commands();
  EXPECT_EQ(c[0].kind, CommandKind::kWait);
  EXPECT_EQ(c[0].signal, &s);
  EXPECT_EQ(c[0].value, 1u);
  EXPECT_EQ(c[1].kind, CommandKind::kExec);
  EXPECT_EQ(c[1].kernel, &nop_kernel);
  EXPECT_EQ(c[1].core_count, 3);
  EXPECT_EQ(c[1].buffers_count, 2u);
  EXPECT_EQ(q.buffers()[c[1].buffers_begin], &a);
  EXPECT_EQ(q.buffers()[c[1].buffers_begin + 1], &b);
  EXPECT_EQ(c[1].scalars_count, 1u);
  EXPECT_EQ(q.scalars()[c[1].scalars_begin], 42);
  EXPECT_EQ(c[2].kind, CommandKind::kCopy);
  EXPECT_EQ(c[2].dst, &a);
  EXPECT_EQ(c[2].src, &b);
  EXPECT_EQ(c[2].bytes, sizeof a);
  EXPECT_EQ(c[3].kind, CommandKind::kMemoryBarrier);
  EXPECT_EQ(c[4].kind, CommandKind::kTimestamp);
  EXPECT_EQ(c[5].kind, CommandKind::kSignal);
  EXPECT_EQ(c[5].value, 2u);
}

TEST(HWQueue, PatchesValuesBuffersAndScalarsInPlace) {
  Signal s("CPU", "s");
  int a = 0;
  int b = 0;
  std::array<int64_t, 2> scalars{1, 2};
  HWQueue q;
  std::array<void*, 2> bufs{&a, &a};
  q.exec(nop_kernel, bufs, scalars).signal(s, 1).wait(s, 1);
  q.patch_value(1, 10);
  q.patch_value(2, 11);
  q.patch_buffer(0, 1, &b);
  q.patch_scalar(0, 0, -5);
  EXPECT_EQ(q.commands()[1].value, 10u);
  EXPECT_EQ(q.commands()[2].value, 11u);
  EXPECT_EQ(q.buffers()[0], &a);
  EXPECT_EQ(q.buffers()[1], &b);
  EXPECT_EQ(q.scalars()[0], -5);
  EXPECT_EQ(q.scalars()[1], 2);
}

TEST(HWQueue, PatchOfWrongKindOrIndexNamesTheCommand) {
  Signal s("CPU", "s");
  int a = 0;
  HWQueue q;
  q.exec(nop_kernel, {&a}).signal(s, 1);
  try {
    q.patch_value(0, 3);
    FAIL() << "expected invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "HWQueue::patch_value: command 0 is exec; expected signal or wait");
  }
  try {
    q.patch_value(5, 3);
    FAIL() << "expected out_of_range";
  } catch (const std::out_of_range& e) {
    EXPECT_STREQ(e.what(), "HWQueue::patch_value: command 5 does not exist; the queue has 2");
  }
  EXPECT_THROW(q.patch_buffer(1, 0, &a), std::invalid_argument);
  EXPECT_THROW(q.patch_buffer(0, 1, &a), std::out_of_range);
  EXPECT_THROW(q.patch_scalar(0, 0, 1), std::out_of_range);
}

TEST(HWQueue, RejectsNullKernelNegativeCoresAndNullCopy) {
  int a = 0;
  HWQueue q;
  EXPECT_THROW(q.exec(nullptr, {&a}), std::invalid_argument);
  EXPECT_THROW(q.exec(nop_kernel, {&a}, -1), std::invalid_argument);
  EXPECT_THROW(q.copy(nullptr, &a, 4), std::invalid_argument);
  EXPECT_NO_THROW(q.copy(nullptr, nullptr, 0));
  EXPECT_EQ(q.size(), 1u);
}

}  // namespace
}  // namespace doorbell
