#include "frontend_test_util.h"

namespace doorbell {
namespace {

TEST(Creation, FloatListIsAOneDimensionalBuffer) {
  Tensor t({1.f, 2.f, 3.f});
  EXPECT_EQ(t.shape(), (IntTuple{3}));
  EXPECT_EQ(t.dtype(), dtypes::float32);
  EXPECT_EQ(t.uop().op(), Ops::BUFFER);
  EXPECT_EQ(t.tolist<float>(), (std::vector<float>{1, 2, 3}));
}

}  // namespace
}  // namespace doorbell
