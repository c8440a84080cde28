// UOp: hash-consing, lifetime, content keys, graph walks, validation, shape inference, operators and bounds.
#include "ir/uop.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "tests/ir/ir_test_util.h"

namespace doorbell {
namespace {

using testing::error_of;

UOp i32(int64_t v) { return UOp::const_(dtypes::int32, v); }
UOp buffer6() { return UOp::make(Ops::BUFFER, dtypes::float32, {}, int64_t{6}); }
UOp mov(Ops op, const UOp& src, IntTuple arg) { return UOp::make(op, src.dtype(), {src}, Arg(std::move(arg))); }
std::string invalid_arg(auto&& f) { return error_of<std::invalid_argument>(f); }
IntTuple shape_of(const UOp& u) {
  EXPECT_NE(u.shape(), nullptr);
  return u.shape() ? *u.shape() : IntTuple{-1};
}

// ---- hash-consing and lifetime ----------------------------------------------------------------------------

TEST(UOpTest, StructurallyEqualNodesAreTheSameNode) {
  UOp x = UOp::variable("x", 0, 10);
  UOp a = x + 3, b = x + 3;
  EXPECT_EQ(a, b);
  EXPECT_EQ(a.get(), b.get());
  EXPECT_EQ(UOp::make(Ops::ADD, dtypes::weakint, {x, UOp::const_(dtypes::weakint, 3)}), a);
  EXPECT_EQ(i32(7), UOp::make(Ops::CONST, dtypes::int32, {}, int64_t{7}));
  EXPECT_NE(x + 3, x + 4);
  EXPECT_NE(x + 3, UOp::const_(dtypes::weakint, 3) + x) << "source order is structure";
  EXPECT_NE(i32(7), UOp::const_(dtypes::int64, 7)) << "dtype is structure";
  EXPECT_NE(UOp::variable("x", 0, 10), UOp::variable("x", 0, 11)) << "the arg is structure";
}

TEST(UOpTest, TagIsIdentityButNotContent) {
  UOp x = UOp::variable("x", 0, 10);
  UOp a = x + 3;
  UOp tagged = a.with_tag(1);
  EXPECT_NE(tagged, a);
  EXPECT_EQ(tagged.tag(), 1);
  EXPECT_EQ(a.tag(), UOp::kNoTag);
  EXPECT_EQ(tagged, a.with_tag(1));
  EXPECT_NE(tagged, a.with_tag(2));
  EXPECT_EQ(tagged.key(), a.key()) << "the content key excludes the tag";
  EXPECT_EQ(tagged.with_tag(UOp::kNoTag), a);
  EXPECT_EQ((tagged + 1).key(), (a + 1).key());
}

TEST(UOpTest, LiveCountFollowsHandles) {
  size_t before = live_uop_count();
  {
    UOp v = UOp::variable("live_count_probe", 0, 5);
    UOp e = v * 7 + 11;  // v, 7, MUL, 11, ADD
    EXPECT_EQ(live_uop_count(), before + 5);
    UOp again = v * 7 + 11;
    EXPECT_EQ(live_uop_count(), before + 5) << "an equal node is shared, not built again";
    v = UOp();
    EXPECT_EQ(live_uop_count(), before + 5) << "e still holds v";
  }
  EXPECT_EQ(live_uop_count(), before);
}

TEST(UOpTest, CopiesAndMovesKeepCountsRight) {
  size_t before = live_uop_count();
  {
    UOp a = UOp::variable("copy_probe", 0, 1);
    UOp b = a;
    UOp c = std::move(b);
    EXPECT_FALSE(b);  // NOLINT(bugprone-use-after-move): a moved-from handle is null
    b = c;
    b = b;  // self-assignment keeps the node
    c = std::move(c);
    EXPECT_EQ(b, a);
    EXPECT_EQ(live_uop_count(), before + 1);
  }
  EXPECT_EQ(live_uop_count(), before);
}

TEST(UOpTest, FloatArgsCompareByBits) {
  UOp pz = UOp::const_(dtypes::float32, 0.0), nz = UOp::const_(dtypes::float32, -0.0);
  EXPECT_NE(pz, nz);
  EXPECT_NE(pz.key(), nz.key());
  EXPECT_EQ(UOp::const_(dtypes::float32, NAN), UOp::const_(dtypes::float32, -NAN));
  EXPECT_EQ(UOp::const_(dtypes::float64, std::numeric_limits<double>::quiet_NaN()),
            UOp::const_(dtypes::float64, std::numeric_limits<double>::signaling_NaN()));
  EXPECT_EQ(Float(NAN), Float(-NAN));
  EXPECT_FALSE(Float(0.0) == Float(-0.0));
}

TEST(UOpTest, ConstantsConvertToTheirDtype) {
  EXPECT_EQ(std::get<int64_t>(UOp::const_(dtypes::int8, int64_t{200}).const_value()), -56);
  EXPECT_EQ(std::get<double>(UOp::const_(dtypes::float32, 0.1).const_value()), static_cast<double>(0.1f));
  EXPECT_EQ(std::get<double>(UOp::const_(dtypes::float16, int64_t{2049}).const_value()), 2048.0);
  EXPECT_EQ(std::get<bool>(UOp::const_(dtypes::bool_, int64_t{3}).const_value()), true);
  EXPECT_EQ(std::get<int64_t>(UOp::const_(dtypes::int32, 3.0).const_value()), 3);
  EXPECT_TRUE(UOp::const_(dtypes::float32, 0.0).is_const_value(0));
  EXPECT_TRUE(UOp::const_(dtypes::uint64, int64_t{-1}).is_const_value(18446744073709551615.0));
  EXPECT_TRUE(UOp::const_(dtypes::bool_, false).is_const_value(0));
  EXPECT_FALSE(UOp::invalid().is_const_value(0));
  EXPECT_EQ(invalid_arg([] { UOp::const_(dtypes::int32, 1.5); }), "CONST: the float 1.5 is not a value of int32");
  EXPECT_EQ(invalid_arg([] { UOp::const_(dtypes::int32, 1e10); }), "CONST: the value is out of range for int32");
  EXPECT_EQ(invalid_arg([] { UOp::const_(dtypes::void_, int64_t{0}); }), "CONST: void holds no constants");
  EXPECT_THROW(UOp::invalid().const_value(), std::logic_error);
  EXPECT_THROW(UOp::variable("x", 0, 1).const_value(), std::logic_error);
}

// ---- content keys -------------------------------------------------------------------------------------------

// The pinned key below guards the canonical serialization behind every cache key (schedule cache, program cache):
// if this test fails, the serialization changed, and every persisted key changes with it. Change the literal only
// on purpose.
TEST(UOpTest, ContentKeyOfAFixedGraphIsPinned) {
  UOp x = UOp::variable("x", 0, 10);
  UOp e = (x * 4 + 3) / 2;  // FLOORDIV for weakint
  ASSERT_EQ(e.op(), Ops::FLOORDIV);
  EXPECT_EQ(e.key().hex(), "87ca2458f3f050a567dd355e972ba877");
}

// Every kind of arg in one graph, pinned for the same reason as above.
TEST(UOpTest, ContentKeyOfEveryArgKindIsPinned) {
  UOp buf = UOp::make(Ops::BUFFER, dtypes::float32, {}, int64_t{6});                            // int64_t
  UOp r = UOp::make(Ops::RESHAPE, dtypes::float32, {buf}, IntTuple{2, 3});                      // IntTuple
  UOp red = UOp::make(Ops::REDUCE, dtypes::float32, {r}, ReduceArg{Ops::MAX, {1}});             // ReduceArg
  UOp rng = UOp::range(4, 2, AxisType::REDUCE, dtypes::int32);                                  // RangeArg
  UOp special = UOp::make(Ops::SPECIAL, dtypes::int32, {UOp::const_(dtypes::int32, 8)}, std::string("gidx0"));
  UOp param = UOp::make(Ops::PARAM, dtypes::float32, {}, ParamArg{1, AddrSpace::GLOBAL, "out", 0, 0});
  UOp sink = UOp::sink({red, rng, special, param, UOp::const_(dtypes::float16, -1.5), UOp::const_(dtypes::bool_, true),
                        UOp::invalid(), UOp::make(Ops::NOOP, dtypes::void_, {}, Ops::ADD),
                        UOp::const_(dtypes::float32.vec(4), 0.0)});
  EXPECT_EQ(sink.key().hex(), "b40e24ee1c175a27ed6cd07ee73445b8");
  EXPECT_EQ(sink.with_tag(9).key(), sink.key());
}

TEST(UOpTest, ContentKeyDoesNotDependOnConstructionOrder) {
  ContentKey k1, k2;
  {
    UOp x = UOp::variable("order_probe", 0, 10);
    k1 = ((x * 4 + 3) / 2).key();
  }
  {  // the leaves first, then the tree from raw makes
    UOp two = UOp::const_(dtypes::weakint, 2), three = UOp::const_(dtypes::weakint, 3);
    UOp four = UOp::const_(dtypes::weakint, 4);
    UOp x = UOp::make(Ops::PARAM, dtypes::weakint, {}, ParamArg{-1, AddrSpace::ALU, "order_probe", 0, 10});
    UOp mul = UOp::make(Ops::MUL, dtypes::weakint, {x, four});
    k2 = UOp::make(Ops::FLOORDIV, dtypes::weakint, {UOp::make(Ops::ADD, dtypes::weakint, {mul, three}), two}).key();
  }
  EXPECT_EQ(k1, k2);
}

TEST(UOpTest, ContentKeysSeparateSimilarGraphs) {
  UOp x = UOp::variable("x", 0, 10), y = UOp::variable("y", 0, 10);
  EXPECT_NE((x + y).key(), (y + x).key());
  EXPECT_NE((x + y).key(), (x * y).key());
  EXPECT_NE(i32(1).key(), UOp::const_(dtypes::int64, 1).key());
  EXPECT_NE(i32(1).key(), UOp::const_(dtypes::bool_, true).key());
  EXPECT_NE(UOp::const_(dtypes::float32, 1.0).key(), UOp::const_(dtypes::float32.vec(2), 1.0).key());
  EXPECT_NE(UOp::variable("a", 0, 1).key(), UOp::variable("b", 0, 1).key());
}

// ---- graph walks --------------------------------------------------------------------------------------------

TEST(UOpTest, ToposortPutsSourcesFirstAndVisitsSharedNodesOnce) {
  UOp x = UOp::variable("x", 0, 10), y = UOp::variable("y", 0, 10);
  UOp s = x + y;
  UOp root = s * s;
  std::vector<UOp> order = root.toposort();
  ASSERT_EQ(order.size(), 4u);
  EXPECT_EQ(order[0], x);
  EXPECT_EQ(order[1], y);
  EXPECT_EQ(order[2], s);
  EXPECT_EQ(order[3], root);
  std::vector<UOp> slice = root.backward_slice();
  ASSERT_EQ(slice.size(), 3u);
  EXPECT_EQ(slice[2], s);
  EXPECT_TRUE(x.backward_slice().empty());
  EXPECT_EQ(x.toposort().size(), 1u);
}

TEST(UOpTest, MillionNodeChainWalksAndFreesWithoutRecursion) {
  constexpr int kChain = 1'000'000;
  UOp x = UOp::variable("chain_x", 0, 10);
  UOp one = UOp::const_(dtypes::weakint, 1);
  size_t before = live_uop_count();
  {
    UOp prev = x;
    for (int i = 0; i < kChain; i++) prev = UOp::make(Ops::ADD, dtypes::weakint, {prev, one});
    EXPECT_EQ(live_uop_count(), before + kChain);
    EXPECT_EQ(prev.vmin(), kChain);
    EXPECT_EQ(prev.vmax(), kChain + 10);
    std::vector<UOp> order = prev.toposort();
    EXPECT_EQ(order.size(), static_cast<size_t>(kChain) + 2);
    EXPECT_EQ(order.front(), x);
    EXPECT_EQ(order.back(), prev);
  }  // the last handle of the chain's head goes here: every node is freed, iteratively
  EXPECT_EQ(live_uop_count(), before);
}

// ---- validation ---------------------------------------------------------------------------------------------

TEST(UOpTest, AluSourcesMustShareADtype) {
  UOp a = i32(1), f = UOp::const_(dtypes::float32, 1.0);
  EXPECT_EQ(invalid_arg([&] { UOp::infer(Ops::ADD, {a, f}); }),
            "ADD: sources have dtypes int32 and float32, expected equal dtypes");
  EXPECT_EQ(invalid_arg([&] { a + UOp::const_(dtypes::int64, 1); }),
            "ADD: sources have dtypes int32 and int64, expected equal dtypes");
  EXPECT_EQ(invalid_arg([&] { UOp::make(Ops::ADD, dtypes::float32, {a, a}); }),
            "ADD: dtype float32 given, the sources make int32");
  EXPECT_EQ(invalid_arg([&] { UOp::make(Ops::CMPLT, dtypes::int32, {a, a}); }),
            "CMPLT: dtype int32 given, the sources make bool");
  // a shift amount may have any integer dtype
  EXPECT_EQ((a << UOp::const_(dtypes::uint8, 2)).dtype(), dtypes::int32);
}

TEST(UOpTest, WrongSourceCountIsRejected) {
  UOp a = i32(1);
  EXPECT_EQ(invalid_arg([&] { UOp::make(Ops::ADD, dtypes::int32, {a}); }), "ADD: expected 2 sources, got 1");
  EXPECT_EQ(invalid_arg([&] { UOp::make(Ops::NEG, dtypes::int32, {a, a}); }), "NEG: expected 1 source, got 2");
  EXPECT_EQ(invalid_arg([&] { UOp::make(Ops::WHERE, dtypes::int32, {a, a}); }), "WHERE: expected 3 sources, got 2");
  EXPECT_EQ(invalid_arg([&] { UOp::make(Ops::CONST, dtypes::int32, {a}, int64_t{1}); }),
            "CONST: expected 0 sources, got 1");
  EXPECT_EQ(invalid_arg([&] { UOp::infer(Ops::ADD, {}); }), "ADD: expected a source to take the dtype from");
  EXPECT_EQ(invalid_arg([&] { UOp::make(Ops::ADD, dtypes::int32, {a, UOp()}); }), "ADD: a source is a null UOp");
}

TEST(UOpTest, WhereNeedsABoolCondition) {
  UOp a = i32(1), b = i32(2);
  EXPECT_EQ(invalid_arg([&] { a.where(a, b); }), "WHERE: condition has dtype int32, expected bool");
  UOp c = a.lt(b);
  EXPECT_EQ(invalid_arg([&] { c.where(a, UOp::const_(dtypes::int64, 2)); }),
            "WHERE: branches have dtypes int32 and int64, expected equal dtypes");
  EXPECT_EQ(c.where(a, b).dtype(), dtypes::int32);
}

TEST(UOpTest, ConstArgsMustFitTheDtype) {
  EXPECT_EQ(invalid_arg([] { UOp::make(Ops::CONST, dtypes::int8, {}, int64_t{200}); }),
            "CONST: 200 is out of range for int8");
  EXPECT_EQ(invalid_arg([] { UOp::make(Ops::CONST, dtypes::uint8, {}, int64_t{-1}); }),
            "CONST: -1 is out of range for uint8");
  EXPECT_EQ(invalid_arg([] { UOp::make(Ops::CONST, dtypes::int32, {}, Float(1.5)); }),
            "CONST: expected an integer as arg, got 1.5");
  EXPECT_EQ(invalid_arg([] { UOp::make(Ops::CONST, dtypes::float32, {}, int64_t{1}); }),
            "CONST: expected a float as arg, got 1");
  EXPECT_EQ(invalid_arg([] { UOp::make(Ops::CONST, dtypes::bool_, {}, int64_t{1}); }),
            "CONST: expected a bool as arg, got 1");
  EXPECT_EQ(invalid_arg([] { UOp::make(Ops::CONST, dtypes::int32, {}, Invalid{}); }),
            "CONST: Invalid must have dtype bool, got int32");
  // uint64 stores its bit pattern: every int64_t is a valid uint64 constant
  EXPECT_EQ(UOp::make(Ops::CONST, dtypes::uint64, {}, int64_t{-1}).vmax(), int_max(dtypes::uint64));
}

TEST(UOpTest, OpDtypeRequirements) {
  UOp a = i32(1), f = UOp::const_(dtypes::float32, 1.0), t = UOp::const_(dtypes::bool_, true);
  EXPECT_EQ(invalid_arg([&] { a.alu(Ops::EXP2); }), "EXP2: source dtype int32, expected a float dtype");
  EXPECT_EQ(invalid_arg([&] { UOp::infer(Ops::FDIV, {a, a}); }), "FDIV: source dtype int32, expected a float dtype");
  EXPECT_EQ(invalid_arg([&] { f.floordiv(f); }), "FLOORDIV: source dtype float32, expected an integer dtype");
  EXPECT_EQ(invalid_arg([&] { f % f; }), "FLOORMOD: source dtype float32, expected an integer dtype");
  EXPECT_EQ(invalid_arg([&] { f& f; }), "AND: source dtype float32, expected an integer or bool dtype");
  EXPECT_EQ(invalid_arg([&] { -t; }), "NEG: bool has no negation; use logical_not or XOR");
  EXPECT_EQ(invalid_arg([&] { UOp::infer(Ops::THREEFRY, {a, a}); }), "THREEFRY: source dtype int32, expected uint64");
  EXPECT_EQ(invalid_arg([&] { UOp::make(Ops::SINK, dtypes::int32, {a}); }), "SINK: dtype int32, expected void");
}

TEST(UOpTest, BitcastNeedsEqualSizes) {
  UOp f = UOp::const_(dtypes::float32, 1.0);
  EXPECT_EQ(invalid_arg([&] { f.bitcast(dtypes::int16); }),
            "BITCAST: cannot reinterpret float32 as int16: sizes differ or have no storage");
  EXPECT_EQ(invalid_arg([] { UOp::const_(dtypes::weakint, 1).bitcast(dtypes::int64); }),
            "BITCAST: cannot reinterpret weakint as int64: sizes differ or have no storage");
  EXPECT_EQ(f.bitcast(dtypes::uint32).dtype(), dtypes::uint32);
}

TEST(UOpTest, VariablesAndRangesAreValidated) {
  EXPECT_EQ(invalid_arg([] { UOp::variable("x", 5, 1); }),
            "PARAM: variable 'x' has bounds [5, 1], expected min <= max");
  EXPECT_EQ(invalid_arg([] { UOp::variable("x", 0, 300, dtypes::int8); }), "PARAM: variable 'x' bounds exceed int8");
  EXPECT_EQ(invalid_arg([] { UOp::variable("x", 0, 3, dtypes::float32); }),
            "PARAM: variable 'x' has dtype float32, expected an integer dtype");
  EXPECT_EQ(invalid_arg([] { UOp::make(Ops::RANGE, dtypes::int32, {UOp::const_(dtypes::int64, 4)}, RangeArg{0}); }),
            "RANGE: dtype int32 with end of dtype int64, expected one integer dtype");
  EXPECT_EQ(invalid_arg([] { UOp::make(Ops::RANGE, dtypes::int32, {i32(4)}, int64_t{0}); }),
            "RANGE: expected a RangeArg as arg, got 0");
}

TEST(UOpTest, ArgAsChecksTheType) {
  UOp x = UOp::variable("x", 0, 10);
  EXPECT_EQ(x.arg_as<ParamArg>().name, "x");
  EXPECT_EQ(invalid_arg([&] { x.arg_as<int64_t>(); }), "PARAM: arg x[0..10] is not of the type asked for");
}

// ---- shapes -------------------------------------------------------------------------------------------------

TEST(UOpTest, MovementShapes) {
  UOp buf = buffer6();
  EXPECT_EQ(shape_of(buf), (IntTuple{6}));
  UOp r = mov(Ops::RESHAPE, buf, {2, 3});
  EXPECT_EQ(shape_of(r), (IntTuple{2, 3}));
  EXPECT_EQ(shape_of(mov(Ops::PERMUTE, r, {1, 0})), (IntTuple{3, 2}));
  EXPECT_EQ(shape_of(mov(Ops::EXPAND, mov(Ops::RESHAPE, buf, {1, 6}), {4, 6})), (IntTuple{4, 6}));
  EXPECT_EQ(shape_of(mov(Ops::PAD, buf, {1, 2})), (IntTuple{9}));
  EXPECT_EQ(shape_of(mov(Ops::PAD, r, {0, 0, 1, 1})), (IntTuple{2, 5}));
  EXPECT_EQ(shape_of(mov(Ops::SHRINK, buf, {1, 4})), (IntTuple{3}));
  EXPECT_EQ(shape_of(mov(Ops::SHRINK, r, {0, 2, 3, 3})), (IntTuple{2, 0}));
  EXPECT_EQ(shape_of(mov(Ops::FLIP, r, {0, 1})), (IntTuple{2, 3}));
  UOp red = UOp::make(Ops::REDUCE, dtypes::float32, {r}, ReduceArg{Ops::ADD, {1}});
  EXPECT_EQ(shape_of(red), (IntTuple{2, 1}));
  EXPECT_EQ(shape_of(UOp::infer(Ops::REDUCE, {r}, ReduceArg{Ops::MAX, {0, 1}})), (IntTuple{1, 1}));
  EXPECT_EQ(shape_of(buf.cast(dtypes::float16)), (IntTuple{6}));
  EXPECT_EQ(shape_of(UOp::infer(Ops::EXP2, {buf})), (IntTuple{6}));
  EXPECT_EQ(shape_of(r + r), (IntTuple{2, 3}));
  EXPECT_EQ(shape_of(UOp::variable("x", 0, 1)), IntTuple{}) << "a variable is a scalar value, like a CONST";
  EXPECT_EQ(shape_of(i32(1)), IntTuple{});
}

TEST(UOpTest, ShrinkAtASymbolicOffsetKeepsItsStaticSizeAndStaysInsideForEveryValue) {
  UOp buf = buffer6();
  UOp v = UOp::variable("v", 0, 2);
  UOp window = UOp::make(Ops::SHRINK, dtypes::float32, {buf, v}, IntTuple{1, 4});  // [1 + v, 4 + v): v <= 2 keeps it in 6
  EXPECT_EQ(shape_of(window), (IntTuple{3}));
  EXPECT_THROW(UOp::make(Ops::SHRINK, dtypes::float32, {buf, UOp::variable("w", 0, 3)}, IntTuple{1, 4}), std::invalid_argument)
      << "w = 3 would read element 6 of 6";
  EXPECT_THROW(UOp::make(Ops::SHRINK, dtypes::float32, {buf, UOp::const_(dtypes::float32, 1.0)}, IntTuple{0, 2}), std::invalid_argument)
      << "an offset is an integer";
  EXPECT_EQ(v.bind(2).src(1).src(1).const_value(), ConstValue{int64_t{2}});
  EXPECT_TRUE(v.bind(2).is_bound_variable());
  EXPECT_FALSE(v.is_bound_variable());
  EXPECT_THROW(v.bind(3), std::invalid_argument);
  EXPECT_THROW(buf.bind(0), std::invalid_argument) << "only a variable binds";
}

TEST(UOpTest, BadReshapeAndPermute) {
  UOp buf = buffer6(), r = mov(Ops::RESHAPE, buffer6(), {2, 3});
  EXPECT_EQ(invalid_arg([&] { mov(Ops::RESHAPE, buf, {4, 2}); }), "RESHAPE: 6 elements cannot become shape (4, 2)");
  EXPECT_EQ(invalid_arg([&] { mov(Ops::RESHAPE, buf, {-2, -3}); }),
            "RESHAPE: shape (-2, -3) has a negative dimension");
  EXPECT_EQ(invalid_arg([&] { UOp::make(Ops::RESHAPE, dtypes::float32, {buf}, int64_t{6}); }),
            "RESHAPE: expected a tuple of integers as arg, got 6");
  EXPECT_EQ(invalid_arg([&] { mov(Ops::PERMUTE, r, {0, 0}); }),
            "PERMUTE: (0, 0) is not a permutation of the 2 axes of shape (2, 3)");
  EXPECT_EQ(invalid_arg([&] { mov(Ops::PERMUTE, r, {0, 1, 2}); }),
            "PERMUTE: (0, 1, 2) is not a permutation of the 2 axes of shape (2, 3)");
  EXPECT_EQ(invalid_arg([&] { mov(Ops::PERMUTE, r, {0}); }),
            "PERMUTE: (0,) is not a permutation of the 2 axes of shape (2, 3)");
  EXPECT_EQ(invalid_arg([&] { UOp::make(Ops::RESHAPE, dtypes::float32, {buf, buf}, IntTuple{6}); }),
            "RESHAPE: expected 1 source, got 2");
}

TEST(UOpTest, BadExpandPadShrinkFlip) {
  UOp buf = buffer6();
  EXPECT_EQ(invalid_arg([&] { mov(Ops::EXPAND, buf, {3}); }),
            "EXPAND: shape (6,) cannot expand to (3,): axis 0 is neither equal nor 1");
  EXPECT_EQ(invalid_arg([&] { mov(Ops::EXPAND, buf, {2, 6}); }),
            "EXPAND: shape (6,) cannot expand to (2, 6): ranks differ");
  EXPECT_EQ(invalid_arg([&] { mov(Ops::PAD, buf, {1}); }),
            "PAD: arg (1,) has 1 numbers, expected 2 per axis of 1 axes");
  EXPECT_EQ(invalid_arg([&] { mov(Ops::PAD, buf, {-1, 0}); }), "PAD: padding (-1, 0) has a negative amount");
  EXPECT_EQ(invalid_arg([&] { mov(Ops::SHRINK, buf, {4, 2}); }),
            "SHRINK: bounds (4, 2) are not 0 <= begin <= end <= size on axis 0 of shape (6,)");
  EXPECT_EQ(invalid_arg([&] { mov(Ops::SHRINK, buf, {0, 7}); }),
            "SHRINK: bounds (0, 7) are not 0 <= begin <= end <= size on axis 0 of shape (6,)");
  EXPECT_EQ(invalid_arg([&] { mov(Ops::SHRINK, buf, {-1, 2}); }),
            "SHRINK: bounds (-1, 2) are not 0 <= begin <= end <= size on axis 0 of shape (6,)");
  EXPECT_EQ(invalid_arg([&] { mov(Ops::FLIP, buf, {1}); }), "FLIP: axes (1,) are not distinct axes of shape (6,)");
  EXPECT_EQ(invalid_arg([&] { mov(Ops::FLIP, buf, {0, 0}); }),
            "FLIP: axes (0, 0) are not distinct axes of shape (6,)");
}

TEST(UOpTest, ShapesBeyondInt64AreErrorsNotOverflow) {
  UOp buf = buffer6(), one = mov(Ops::RESHAPE, buffer6(), {1, 6});
  int64_t big = int64_t{1} << 32;
  EXPECT_EQ(invalid_arg([&] { mov(Ops::RESHAPE, buf, {big, big, 4}); }),
            "RESHAPE: shape (4294967296, 4294967296, 4) has more elements than int64 holds");
  EXPECT_EQ(invalid_arg([&] { mov(Ops::EXPAND, one, {int64_t{1} << 62, 6}); }),
            "EXPAND: shape (4611686018427387904, 6) has more elements than int64 holds");
  EXPECT_EQ(invalid_arg([&] { mov(Ops::EXPAND, one, {-4, 6}); }), "EXPAND: shape (-4, 6) has a negative dimension");
  EXPECT_EQ(invalid_arg([&] { mov(Ops::PAD, buf, {INT64_MAX, 0}); }),
            "PAD: padding (9223372036854775807, 0) makes axis 0 larger than int64 holds");
  EXPECT_EQ(invalid_arg([] { UOp::make(Ops::BUFFER, dtypes::float32, {}, int64_t{-6}); }),
            "BUFFER: size -6 is negative, expected a size >= 0");
}

TEST(UOpTest, BadReduce) {
  UOp r = mov(Ops::RESHAPE, buffer6(), {2, 3});
  EXPECT_EQ(invalid_arg([&] { UOp::make(Ops::REDUCE, dtypes::float32, {r}, ReduceArg{Ops::ADD, {2}}); }),
            "REDUCE: axis 2 is out of range for shape (2, 3)");
  EXPECT_EQ(invalid_arg([&] { UOp::make(Ops::REDUCE, dtypes::float32, {r}, ReduceArg{Ops::ADD, {-1}}); }),
            "REDUCE: axis -1 is out of range for shape (2, 3)");
  EXPECT_EQ(invalid_arg([&] { UOp::make(Ops::REDUCE, dtypes::float32, {r}, ReduceArg{Ops::SUB, {0}}); }),
            "REDUCE: SUB is not a reduce op; expected ADD, MUL or MAX");
  EXPECT_EQ(invalid_arg([&] { UOp::make(Ops::REDUCE, dtypes::float32, {r}, int64_t{0}); }),
            "REDUCE: expected a ReduceArg as arg, got 0");
}

TEST(UOpTest, ElementwiseSourcesMustShareAShape) {
  UOp buf = buffer6(), r = mov(Ops::RESHAPE, buffer6(), {2, 3});
  EXPECT_EQ(invalid_arg([&] { buf + r; }), "ADD: source shapes (6,) and (2, 3) differ; broadcast them first");
}

TEST(UOpTest, FailedConstructionLeaksNothing) {
  UOp buf = buffer6();
  size_t before = live_uop_count();
  EXPECT_THROW(mov(Ops::RESHAPE, buf, {4, 2}), std::invalid_argument);
  EXPECT_THROW(UOp::make(Ops::CONST, dtypes::int8, {}, int64_t{200}), std::invalid_argument);
  EXPECT_EQ(live_uop_count(), before);
}

// ---- operators ----------------------------------------------------------------------------------------------

TEST(UOpTest, OperatorsBuildTheExpectedOps) {
  UOp x = UOp::variable("x", 0, 10, dtypes::int32);
  UOp f = UOp::const_(dtypes::float32, 2.0);
  EXPECT_EQ((x + 1).op(), Ops::ADD);
  EXPECT_EQ((x - 1).op(), Ops::SUB);
  EXPECT_EQ((x * 2).op(), Ops::MUL);
  EXPECT_EQ((x / 2).op(), Ops::FLOORDIV) << "integer / is Python's //";
  EXPECT_EQ((x % 2).op(), Ops::FLOORMOD);
  EXPECT_EQ((f / 2.0).op(), Ops::FDIV);
  EXPECT_EQ((f / 2.0).dtype(), dtypes::float32);
  EXPECT_EQ((x & 3).op(), Ops::AND);
  EXPECT_EQ((x | 3).op(), Ops::OR);
  EXPECT_EQ((x ^ 3).op(), Ops::XOR);
  EXPECT_EQ((x << 3).op(), Ops::SHL);
  EXPECT_EQ((x >> 3).op(), Ops::SHR);
  EXPECT_EQ((-x).op(), Ops::NEG);
  EXPECT_EQ(x.maximum(x + 1).op(), Ops::MAX);
  EXPECT_EQ((3 - x).src(0), i32(3)) << "a number on the left becomes the first source";
  EXPECT_EQ((x + 1).src(1).dtype(), dtypes::int32) << "numbers take the UOp's dtype";
  EXPECT_EQ((f * 3).src(1), UOp::const_(dtypes::float32, 3.0));
  UOp lt = x.lt(5);
  EXPECT_EQ(lt.op(), Ops::CMPLT);
  EXPECT_EQ(lt.dtype(), dtypes::bool_);
  UOp ge = x.ge(5);
  EXPECT_EQ(ge.op(), Ops::CMPNE);
  EXPECT_EQ(ge.src(0), lt);
  EXPECT_EQ(ge.src(1), UOp::const_(dtypes::bool_, true));
  EXPECT_EQ(x.ne(x).dtype(), dtypes::bool_);
  EXPECT_EQ(x.eq(x).op(), Ops::CMPEQ);
  EXPECT_EQ(invalid_arg([&] { x.logical_not(); }), "CMPNE: logical_not of int32, expected bool");
  EXPECT_EQ(x.cast(dtypes::int32), x) << "a cast to the own dtype is the node itself";
  EXPECT_EQ(x.cast(dtypes::int64).op(), Ops::CAST);
  // minimum: -max(-a, -b) for signed, a < b ? a : b for unsigned
  EXPECT_EQ(x.minimum(i32(3)), (-(-x).maximum(-i32(3))));
  UOp u = UOp::variable("u", 0, 10, dtypes::uint32);
  UOp m = u.minimum(UOp::const_(dtypes::uint32, 3));
  EXPECT_EQ(m.op(), Ops::WHERE);
  EXPECT_EQ(m.src(0), u.lt(UOp::const_(dtypes::uint32, 3)));
}

TEST(UOpTest, ReplaceSrcAndWithArgKeepTheRest) {
  UOp x = UOp::variable("x", 0, 10), y = UOp::variable("y", 0, 10);
  UOp a = (x + 1).with_tag(5);
  UOp b = a.replace_src({y, a.src(1)});
  EXPECT_EQ(b, (y + 1).with_tag(5));
  EXPECT_EQ(x.with_arg(ParamArg{-1, AddrSpace::ALU, "y", 0, 10}), y);
}

// ---- bounds -------------------------------------------------------------------------------------------------

struct Bounds {
  __int128 lo, hi;
  bool operator==(const Bounds&) const = default;
};
std::ostream& operator<<(std::ostream& os, const Bounds& b) {
  return os << "[" << static_cast<long double>(b.lo) << ", " << static_cast<long double>(b.hi) << "]";
}
Bounds bounds(const UOp& u) {
  EXPECT_TRUE(u.has_bounds());
  return {u.vmin(), u.vmax()};
}

TEST(UOpBoundsTest, LeavesAndRanges) {
  EXPECT_EQ(bounds(UOp::variable("x", -3, 5)), (Bounds{-3, 5}));
  EXPECT_EQ(bounds(i32(7)), (Bounds{7, 7}));
  EXPECT_EQ(bounds(UOp::const_(dtypes::bool_, true)), (Bounds{1, 1}));
  EXPECT_EQ(bounds(UOp::const_(dtypes::uint64, int64_t{-1})), (Bounds{int_max(dtypes::uint64), int_max(dtypes::uint64)}));
  EXPECT_EQ(bounds(UOp::range(10, 0)), (Bounds{0, 9}));
  EXPECT_EQ(bounds(UOp::range(UOp::variable("n", 1, 8, dtypes::int32), 1)), (Bounds{0, 7}));
  EXPECT_EQ(bounds(UOp::invalid()), (Bounds{0, 1}));
  EXPECT_EQ(bounds(UOp::variable("big", 0, 1, dtypes::int32).cast(dtypes::float32).cast(dtypes::int32)),
            (Bounds{INT32_MIN, INT32_MAX}))
      << "a float source has no bounds: anything the dtype holds";
}

TEST(UOpBoundsTest, AddSubMulWithNegatives) {
  UOp x = UOp::variable("x", -3, 5), y = UOp::variable("y", 2, 4);
  EXPECT_EQ(bounds(x + y), (Bounds{-1, 9}));
  EXPECT_EQ(bounds(x - y), (Bounds{-7, 3}));
  EXPECT_EQ(bounds(y - x), (Bounds{-3, 7}));
  EXPECT_EQ(bounds(x * y), (Bounds{-12, 20}));
  EXPECT_EQ(bounds(x * -2), (Bounds{-10, 6}));
  EXPECT_EQ(bounds(x * x), (Bounds{-15, 25})) << "interval arithmetic does not know both are x";
  EXPECT_EQ(bounds(-x), (Bounds{-5, 3}));
  EXPECT_EQ(bounds(x.maximum(y)), (Bounds{2, 5}));
}

TEST(UOpBoundsTest, FloorDivAndModByConstants) {
  UOp x = UOp::variable("x", -3, 5);
  EXPECT_EQ(bounds(x / 2), (Bounds{-2, 2}));
  EXPECT_EQ(bounds(x / -2), (Bounds{-3, 1}));
  EXPECT_EQ(bounds(x % 4), (Bounds{0, 3}));
  EXPECT_EQ(bounds(x % -4), (Bounds{-3, 0}));
  EXPECT_EQ(bounds(UOp::variable("a", 4, 6) % 4), (Bounds{0, 2})) << "no wrap inside [4, 6]";
  EXPECT_EQ(bounds(UOp::variable("b", -3, -1) % 4), (Bounds{1, 3}));
  EXPECT_EQ(bounds(UOp::variable("c", 0, 3) % 8), (Bounds{0, 3}));
  EXPECT_EQ(bounds(x / UOp::variable("d", -1, 1)), (Bounds{INT64_MIN, INT64_MAX})) << "the divisor may be 0";
  EXPECT_EQ(bounds(UOp::infer(Ops::CDIV, {x, UOp::const_(dtypes::weakint, 2)})), (Bounds{-1, 2}));
  EXPECT_EQ(bounds(UOp::infer(Ops::CMOD, {x, UOp::const_(dtypes::weakint, 4)})), (Bounds{-3, 3}));
}

TEST(UOpBoundsTest, ComparisonsDecidedByBounds) {
  UOp x = UOp::variable("x", 0, 3);
  EXPECT_EQ(bounds(x.lt(5)), (Bounds{1, 1}));
  EXPECT_EQ(bounds(x.lt(0)), (Bounds{0, 0}));
  EXPECT_EQ(bounds(x.lt(2)), (Bounds{0, 1}));
  EXPECT_EQ(bounds(x.ne(UOp::const_(dtypes::weakint, 7))), (Bounds{1, 1}));
  EXPECT_EQ(bounds(x.eq(UOp::const_(dtypes::weakint, 7))), (Bounds{0, 0}));
  UOp f = UOp::const_(dtypes::float32, 1.0);
  EXPECT_EQ(bounds(f.lt(f)), (Bounds{0, 1})) << "float comparisons are not decided";
  EXPECT_FALSE(f.has_bounds());
  EXPECT_THROW((void)f.vmin(), std::logic_error);
}

TEST(UOpBoundsTest, BitwiseAndShifts) {
  UOp x = UOp::variable("x", -100, 100);
  EXPECT_EQ(bounds(x & 7), (Bounds{0, 7})) << "a non-negative mask bounds the result";
  EXPECT_EQ(bounds(UOp::variable("p", 0, 5) & UOp::variable("q", 0, 9)), (Bounds{0, 5}));
  EXPECT_EQ(bounds(UOp::variable("p", 1, 5) | UOp::variable("q", 2, 9)), (Bounds{2, 15}));
  EXPECT_EQ(bounds(UOp::variable("p", 0, 5) ^ UOp::variable("q", 0, 9)), (Bounds{0, 15}));
  EXPECT_EQ(bounds(UOp::variable("s", 0, 3) << 2), (Bounds{0, 12}));
  EXPECT_EQ(bounds(UOp::variable("t", -8, 16) >> 2), (Bounds{-2, 4}));
  UOp small = UOp::variable("s", 0, 3, dtypes::int8);
  EXPECT_EQ(bounds(small << UOp::const_(dtypes::int8, 6)), (Bounds{-128, 127})) << "3 << 6 does not fit int8";
}

TEST(UOpBoundsTest, Where) {
  UOp x = UOp::variable("x", 0, 10), y = UOp::variable("y", 20, 30);
  EXPECT_EQ(bounds(x.lt(5).where(x, y)), (Bounds{0, 30}));
  EXPECT_EQ(bounds(x.lt(11).where(x, y)), (Bounds{0, 10})) << "the condition is always true";
  EXPECT_EQ(bounds(x.lt(0).where(x, y)), (Bounds{20, 30})) << "the condition is always false";
}

TEST(UOpBoundsTest, CastToANarrowerInt) {
  EXPECT_EQ(bounds(UOp::variable("x", 0, 100, dtypes::int32).cast(dtypes::int8)), (Bounds{0, 100}));
  EXPECT_EQ(bounds(UOp::variable("x", 0, 300, dtypes::int32).cast(dtypes::int8)), (Bounds{-128, 127}));
  EXPECT_EQ(bounds(UOp::variable("x", -1, 5, dtypes::int32).cast(dtypes::uint8)), (Bounds{0, 255}));
  EXPECT_EQ(bounds(UOp::variable("x", 0, 5, dtypes::int32).cast(dtypes::bool_)), (Bounds{0, 1}));
}

TEST(UOpBoundsTest, OverflowWidensToTheDtypeRange) {
  UOp x = UOp::variable("x", 0, INT32_MAX, dtypes::int32);
  EXPECT_EQ(bounds(x + 1), (Bounds{INT32_MIN, INT32_MAX}));
  EXPECT_EQ(bounds(x + 0), (Bounds{0, INT32_MAX}));
  UOp u = UOp::variable("u", 0, 5, dtypes::uint32);
  EXPECT_EQ(bounds(u - UOp::const_(dtypes::uint32, 1)), (Bounds{0, 4294967295})) << "may wrap below 0";
  EXPECT_EQ(bounds(-u), (Bounds{0, 4294967295}));
}

TEST(UOpBoundsTest, Uint64ProductsOfLargeBoundsDoNotOverflowTheComputation) {
  UOp a = UOp::variable("a", 0, INT64_MAX, dtypes::uint64), b = UOp::variable("b", 0, INT64_MAX, dtypes::uint64);
  UOp ab = a * b;  // up to ~2^126: fits the 128-bit computation, not uint64
  EXPECT_EQ(bounds(ab), (Bounds{0, int_max(dtypes::uint64)}));
  UOp sq = ab * ab;  // up to ~2^128: beyond 128 bits, saturated
  EXPECT_EQ(bounds(sq), (Bounds{0, int_max(dtypes::uint64)}));
  UOp c = UOp::variable("c", 0, 1000, dtypes::uint64);
  EXPECT_EQ(bounds(c * c), (Bounds{0, 1000000}));
  UOp big = UOp::const_(dtypes::uint64, int64_t{-1});
  EXPECT_EQ(bounds(big * big), (Bounds{0, int_max(dtypes::uint64)}));
  EXPECT_EQ(bounds(UOp::infer(Ops::MULACC, {big, big, big})), (Bounds{0, int_max(dtypes::uint64)}));
}

}  // namespace
}  // namespace doorbell
