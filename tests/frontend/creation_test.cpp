// Creation: data tensors (a BUFFER written on the host), virtual constants (no buffer), host-generated ranges and
// random data. Everything here reads values back without running a kernel.
#include <cmath>
#include <cstring>
#include <set>

#include "frontend_test_util.h"
#include "hcq/host_buffers.h"

namespace doorbell {
namespace {

using testing::error_of;

bool has_op(const Tensor& t, Ops op) {
  for (const UOp& u : t.uop().toposort())
    if (u.op() == op) return true;
  return false;
}

TEST(Creation, FloatListIsAOneDimensionalBuffer) {
  Tensor t({1.f, 2.f, 3.f});
  EXPECT_EQ(t.shape(), (IntTuple{3}));
  EXPECT_EQ(t.dtype(), dtypes::float32);
  EXPECT_EQ(t.uop().op(), Ops::BUFFER);
  EXPECT_EQ(t.uop().arg_as<int64_t>(), 3);
  EXPECT_EQ(t.uop().src(0).op(), Ops::UNIQUE);
  EXPECT_EQ(t.uop().src(1).op(), Ops::DEVICE);
  EXPECT_EQ(t.device(), "CPU");
  EXPECT_EQ(t.numel(), 3);
  EXPECT_EQ(t.ndim(), 1);
  EXPECT_TRUE(t.is_realized());
  EXPECT_EQ(t.tolist<float>(), (std::vector<float>{1, 2, 3}));
}

TEST(Creation, DtypeFollowsTheCppType) {
  EXPECT_EQ(Tensor({1.0, 2.0}).dtype(), dtypes::float64);
  EXPECT_EQ(Tensor({1, 2}).dtype(), dtypes::int32);
  EXPECT_EQ(Tensor({int64_t{1}}).dtype(), dtypes::int64);
  EXPECT_EQ(Tensor({true, false}).dtype(), dtypes::bool_);
  EXPECT_EQ(Tensor({uint8_t{1}}).dtype(), dtypes::uint8);
  EXPECT_EQ(Tensor({int8_t{1}}).dtype(), dtypes::int8);
  EXPECT_EQ(Tensor({int16_t{1}}).dtype(), dtypes::int16);
  EXPECT_EQ(Tensor({uint16_t{1}}).dtype(), dtypes::uint16);
  EXPECT_EQ(Tensor({uint32_t{1}}).dtype(), dtypes::uint32);
  EXPECT_EQ(Tensor({uint64_t{1}}).dtype(), dtypes::uint64);
  EXPECT_EQ(dtype_of<float>(), dtypes::float32);
  EXPECT_EQ(dtype_of<long long>(), dtypes::int64);
}

TEST(Creation, ValuesRoundTripInEveryDtype) {
  EXPECT_EQ(Tensor({true, false, true}).tolist<bool>(), (std::vector<bool>{true, false, true}));
  EXPECT_EQ(Tensor({-1, 2, -3}).tolist<int>(), (std::vector<int>{-1, 2, -3}));
  EXPECT_EQ(Tensor({uint64_t{1} << 63}).tolist<uint64_t>(), (std::vector<uint64_t>{uint64_t{1} << 63}));
  EXPECT_EQ(Tensor({0.1, 1e300}).tolist<double>(), (std::vector<double>{0.1, 1e300}));
  EXPECT_EQ(Tensor({int8_t{-128}, int8_t{127}}).tolist<int>(), (std::vector<int>{-128, 127}));
}

TEST(Creation, ExplicitDtypeConvertsTheData) {
  Tensor h({1.5f, -2.25f, 65504.f}, dtypes::float16);
  EXPECT_EQ(h.dtype(), dtypes::float16);
  EXPECT_EQ(h.tolist<float>(), (std::vector<float>{1.5f, -2.25f, 65504.f}));
  Tensor b({1.f, 3.f}, dtypes::bfloat16);
  EXPECT_EQ(b.tolist<double>(), (std::vector<double>{1.0, 3.0}));
  EXPECT_EQ(Tensor({300, -1}, dtypes::uint8).tolist<int>(), (std::vector<int>{44, 255}));  // wraps
  EXPECT_EQ(Tensor({2.7f, -2.7f}, dtypes::int32).tolist<int>(), (std::vector<int>{2, -2}));  // truncates
  EXPECT_EQ(Tensor({0, 5}, dtypes::bool_).tolist<bool>(), (std::vector<bool>{false, true}));
}

TEST(Creation, HalfFloatsAreStoredAsTheirBitPatterns) {
  Tensor h({1.0f, -2.0f}, dtypes::float16);
  std::span<std::byte> bytes = buffer_bytes(h.uop());
  ASSERT_EQ(bytes.size(), 4u);
  uint16_t bits[2];
  std::memcpy(bits, bytes.data(), 4);
  EXPECT_EQ(bits[0], 0x3c00);
  EXPECT_EQ(bits[1], 0xc000);
  Tensor b({1.0f}, dtypes::bfloat16);
  std::memcpy(bits, buffer_bytes(b.uop()).data(), 2);
  EXPECT_EQ(bits[0], 0x3f80);
}

TEST(Creation, TwoDimensionalInitializerLists) {
  Tensor t({{1, 2, 3}, {4, 5, 6}});
  EXPECT_EQ(t.shape(), (IntTuple{2, 3}));
  EXPECT_EQ(t.dtype(), dtypes::int32);
  EXPECT_EQ(t.uop().op(), Ops::RESHAPE);
  EXPECT_EQ(t.uop().src(0).op(), Ops::BUFFER);
  EXPECT_TRUE(t.is_realized());
  EXPECT_EQ(t.tolist<int>(), (std::vector<int>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(error_of([] { Tensor({{1, 2}, {3}}); }), "Tensor: rows have 2 and 1 values; expected equal rows");
}

TEST(Creation, VectorAndShape) {
  Tensor t(std::vector<float>{1, 2, 3, 4, 5, 6}, {3, 2});
  EXPECT_EQ(t.shape(), (IntTuple{3, 2}));
  Tensor s(std::vector<int>{7}, IntTuple{});
  EXPECT_EQ(s.shape(), IntTuple{});
  EXPECT_EQ(s.item<int>(), 7);
  EXPECT_EQ(error_of([] { Tensor(std::vector<float>{1, 2, 3, 4, 5, 6}, {4, 2}); }),
            "Tensor: 6 values cannot fill shape (4, 2) of 8 elements");
  EXPECT_EQ(error_of([] { Tensor(std::vector<float>{}, {-1}); }),
            "Tensor: shape (-1,) has a negative dimension; expected sizes >= 0");
}

TEST(Creation, EmptyTensorsHaveZeroElements) {
  Tensor e(std::vector<float>{}, {0, 3});
  EXPECT_EQ(e.numel(), 0);
  EXPECT_TRUE(e.tolist<float>().empty());
  EXPECT_EQ(Tensor::empty({0}).numel(), 0);
}

TEST(Creation, ScalarConstructorIsAVirtualZeroDimensionalConstant) {
  Tensor s(3.5);
  EXPECT_EQ(s.shape(), IntTuple{});
  EXPECT_EQ(s.dtype(), dtypes::float32);  // a weak float literal becomes the default float
  EXPECT_EQ(s.uop().op(), Ops::CONST);
  EXPECT_EQ(s.item<double>(), 3.5);
  EXPECT_EQ(Tensor(7).dtype(), dtypes::int32);
  EXPECT_EQ(Tensor(true).dtype(), dtypes::bool_);
  EXPECT_EQ(Tensor(7, dtypes::int8).dtype(), dtypes::int8);
}

TEST(Creation, FullZerosOnesAreVirtualConstants) {
  Tensor z = Tensor::zeros({2, 3});
  EXPECT_EQ(z.shape(), (IntTuple{2, 3}));
  EXPECT_EQ(z.dtype(), dtypes::float32);
  EXPECT_EQ(z.uop().op(), Ops::EXPAND);
  EXPECT_EQ(z.uop().src(0).op(), Ops::RESHAPE);
  EXPECT_EQ(*z.uop().src(0).shape(), (IntTuple{1, 1}));
  EXPECT_EQ(z.uop().src(0).src(0).op(), Ops::CONST);
  EXPECT_FALSE(has_op(z, Ops::BUFFER));
  EXPECT_TRUE(z.is_realized());
  EXPECT_EQ(z.tolist<float>(), std::vector<float>(6, 0.f));
  EXPECT_EQ(Tensor::ones({2}, dtypes::int8).tolist<int>(), (std::vector<int>{1, 1}));
  Tensor f = Tensor::full({2, 2}, 2.5);
  EXPECT_EQ(f.dtype(), dtypes::float32);
  EXPECT_EQ(f.tolist<float>(), std::vector<float>(4, 2.5f));
  EXPECT_EQ(Tensor::full({3}, 7).dtype(), dtypes::int32);
  EXPECT_EQ(Tensor::full({3}, true).dtype(), dtypes::bool_);
  EXPECT_EQ(Tensor::full({2}, 2.9, dtypes::int32).tolist<int>(), (std::vector<int>{2, 2}));
  EXPECT_EQ(Tensor::full({1}, 300, dtypes::uint8).tolist<int>(), (std::vector<int>{44}));
  EXPECT_EQ(error_of([] { Tensor::full({1}, 1e30, dtypes::int32); }),
            "full: the value 1000000000000000019884624838656.000000 has no int32 value; expected a finite number in range");
}

TEST(Creation, RealizeOfAConstantDoesNothing) {
  Tensor z = Tensor::ones({4});
  UOp before = z.uop();
  z.realize();
  EXPECT_EQ(z.uop(), before);
}

TEST(Creation, LikeVariantsTakeShapeAndDtype) {
  Tensor t({{1, 2, 3}, {4, 5, 6}}, dtypes::int16);
  EXPECT_EQ(Tensor::zeros_like(t).shape(), (IntTuple{2, 3}));
  EXPECT_EQ(Tensor::zeros_like(t).dtype(), dtypes::int16);
  EXPECT_EQ(Tensor::ones_like(t, dtypes::float32).dtype(), dtypes::float32);
  EXPECT_EQ(Tensor::full_like(t, 9).tolist<int>(), std::vector<int>(6, 9));
  Tensor e = Tensor::empty_like(t);
  EXPECT_EQ(e.dtype(), dtypes::int16);
  EXPECT_EQ(e.uop().op(), Ops::RESHAPE);
  EXPECT_EQ(e.uop().src(0).op(), Ops::BUFFER);
  EXPECT_EQ(Tensor::rand_like(Tensor::zeros({3, 1})).shape(), (IntTuple{3, 1}));
  EXPECT_EQ(Tensor::randn_like(Tensor::zeros({2}), dtypes::float64).dtype(), dtypes::float64);
}

TEST(Creation, EmptyIsABufferWithoutData) {
  Tensor e = Tensor::empty({2, 5}, dtypes::int32);
  EXPECT_EQ(e.shape(), (IntTuple{2, 5}));
  EXPECT_EQ(e.uop().src(0).op(), Ops::BUFFER);
  EXPECT_EQ(e.uop().src(0).arg_as<int64_t>(), 10);
  EXPECT_TRUE(e.is_realized());
  EXPECT_EQ(error_of([] { Tensor::empty({2}, dtypes::weakint); }),
            "empty: cannot store dtype weakint; expected a scalar storage dtype");
}

TEST(Creation, Arange) {
  Tensor a = Tensor::arange(5);
  EXPECT_EQ(a.dtype(), dtypes::int32);
  EXPECT_EQ(a.tolist<int>(), (std::vector<int>{0, 1, 2, 3, 4}));
  EXPECT_EQ(Tensor::arange(2, 11, 3).tolist<int>(), (std::vector<int>{2, 5, 8}));
  EXPECT_EQ(Tensor::arange(5, 0, -2).tolist<int>(), (std::vector<int>{5, 3, 1}));
  EXPECT_EQ(Tensor::arange(3, 3).numel(), 0);
  EXPECT_EQ(Tensor::arange(5, 0).numel(), 0);
  Tensor f = Tensor::arange(0, 1, 0.25);
  EXPECT_EQ(f.dtype(), dtypes::float32);
  EXPECT_EQ(f.tolist<float>(), (std::vector<float>{0, 0.25f, 0.5f, 0.75f}));
  EXPECT_EQ(Tensor::arange(0.5, 3).tolist<float>(), (std::vector<float>{0.5f, 1.5f, 2.5f}));
  EXPECT_EQ(Tensor::arange(0, 4, 1, dtypes::int64).dtype(), dtypes::int64);
  EXPECT_EQ(error_of([] { Tensor::arange(0, 4, 0); }), "arange: step is 0; expected a non-zero step");
}

TEST(Creation, Linspace) {
  Tensor l = Tensor::linspace(0, 1, 5);
  EXPECT_EQ(l.dtype(), dtypes::float32);
  EXPECT_EQ(l.tolist<float>(), (std::vector<float>{0, 0.25f, 0.5f, 0.75f, 1}));
  EXPECT_EQ(Tensor::linspace(-1, 1, 3, dtypes::float64).tolist<double>(), (std::vector<double>{-1, 0, 1}));
  EXPECT_EQ(Tensor::linspace(2, 9, 1).tolist<float>(), (std::vector<float>{2}));
  EXPECT_EQ(Tensor::linspace(0, 10, 4, dtypes::int32).tolist<int>(), (std::vector<int>{0, 3, 6, 10}));
  EXPECT_EQ(Tensor::linspace(0, 1, 0).numel(), 0);
  EXPECT_EQ(error_of([] { Tensor::linspace(0, 1, -2); }), "linspace: steps is -2; expected steps >= 0");
}

TEST(Creation, Eye) {
  EXPECT_EQ(Tensor::eye(3).tolist<float>(), (std::vector<float>{1, 0, 0, 0, 1, 0, 0, 0, 1}));
  Tensor r = Tensor::eye(2, 3, dtypes::int32);
  EXPECT_EQ(r.shape(), (IntTuple{2, 3}));
  EXPECT_EQ(r.tolist<int>(), (std::vector<int>{1, 0, 0, 0, 1, 0}));
  EXPECT_EQ(Tensor::eye(0).numel(), 0);
}

TEST(Creation, RandIsDeterministicPerSeed) {
  Tensor::manual_seed(42);
  std::vector<float> a = Tensor::rand({64}).tolist<float>();
  std::vector<float> b = Tensor::rand({64}).tolist<float>();
  Tensor::manual_seed(42);
  EXPECT_EQ(Tensor::rand({64}).tolist<float>(), a);  // the same seed restarts the sequence
  EXPECT_EQ(Tensor::rand({64}).tolist<float>(), b);
  EXPECT_NE(a, b);  // successive calls draw fresh counters
  Tensor::manual_seed(43);
  EXPECT_NE(Tensor::rand({64}).tolist<float>(), a);
}

TEST(Creation, RandIsUniformInTheUnitInterval) {
  Tensor::manual_seed(0);
  for (DType dt : {dtypes::float32, dtypes::float16, dtypes::bfloat16, dtypes::float64}) {
    Tensor r = Tensor::rand({4096}, dt);
    EXPECT_EQ(r.dtype(), dt);
    std::vector<double> v = r.tolist<double>();
    double sum = 0;
    for (double x : v) {
      ASSERT_GE(x, 0.0);
      ASSERT_LT(x, 1.0) << dt.name();
      sum += x;
    }
    EXPECT_NEAR(sum / v.size(), 0.5, 0.03) << dt.name();
  }
  EXPECT_EQ(error_of([] { Tensor::rand({2}, dtypes::int32); }), "rand: dtype int32; expected a float dtype");
}

TEST(Creation, RandnHasUnitVariance) {
  Tensor::manual_seed(1);
  std::vector<double> v = Tensor::randn({20000}, dtypes::float64).tolist<double>();
  double mean = 0, sq = 0;
  for (double x : v) mean += x;
  mean /= v.size();
  for (double x : v) sq += (x - mean) * (x - mean);
  EXPECT_NEAR(mean, 0.0, 0.03);
  EXPECT_NEAR(sq / v.size(), 1.0, 0.05);
}

TEST(Creation, RandintStaysInRange) {
  Tensor::manual_seed(5);
  Tensor r = Tensor::randint({1000}, -3, 4);
  EXPECT_EQ(r.dtype(), dtypes::int32);
  std::set<int> seen;
  for (int x : r.tolist<int>()) {
    ASSERT_GE(x, -3);
    ASSERT_LT(x, 4);
    seen.insert(x);
  }
  EXPECT_EQ(seen.size(), 7u);
  EXPECT_EQ(error_of([] { Tensor::randint({2}, 3, 3); }), "randint: low 3 is not below high 3; expected low < high");
  EXPECT_EQ(error_of([] { Tensor::randint({2}, 0, 3, dtypes::float32); }), "randint: dtype float32; expected an integer dtype");
}

TEST(Creation, ItemNeedsOneElement) {
  EXPECT_EQ(Tensor({4.5f}).item<float>(), 4.5f);
  EXPECT_EQ(Tensor({4.5f}).item<int>(), 4);
  EXPECT_EQ(error_of([] { Tensor({1.f, 2.f}).item<float>(); }),
            "item: a tensor of shape (2,) has 2 elements; expected exactly 1");
}

TEST(Creation, TolistConvertsToTheAskedType) {
  Tensor t({1.5f, -2.5f, 0.f});
  EXPECT_EQ(t.tolist<int>(), (std::vector<int>{1, -2, 0}));
  EXPECT_EQ(t.tolist<bool>(), (std::vector<bool>{true, true, false}));
  EXPECT_EQ(t.tolist<double>(), (std::vector<double>{1.5, -2.5, 0}));
  EXPECT_EQ(error_of([] { Tensor({NAN}).tolist<int>(); }).rfind("tolist: the float32 value nan", 0), 0u);
}

TEST(Creation, DefaultConstructedTensorIsEmpty) {
  Tensor t;
  EXPECT_EQ(error_of([&] { (void)t.shape(); }), "Tensor: this handle is empty (default-constructed); expected a tensor");
}

}  // namespace
}  // namespace doorbell
