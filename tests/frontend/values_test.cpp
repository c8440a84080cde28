#include "frontend_test_util.h"
#include "hcq/run_linear.h"

namespace doorbell {
namespace {

TEST(Values, SeedScheduleLinear) {
  Tensor x = Tensor({1.f, 2.f, 3.f}).realize();
  Tensor y = (x + 1) * 2;
  UOp lin = y.schedule_linear();
  ASSERT_EQ(lin.op(), Ops::LINEAR);
  for (const UOp& c : lin.src()) EXPECT_EQ(c.op(), Ops::CALL);
  EXPECT_GT(lin.src().size(), 0u);
  run_linear(lin);
  EXPECT_EQ(y.tolist<float>(), (std::vector<float>{4, 6, 8}));
}

}  // namespace
}  // namespace doorbell
