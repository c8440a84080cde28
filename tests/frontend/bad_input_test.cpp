// The bad-input suite: every public entry point of the Tensor frontend called with what it must refuse (an empty
// handle, shapes that do not broadcast, axes out of range, dtypes it does not take, sizes past 2^63-1, negative
// sizes, devices that do not exist or do not match) and checked for a clear error: an exception (never a crash, an
// abort or a hang) whose text names the entry point and what was wrong, after which the process still computes.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "frontend/tensor.h"
#include "ir/environment.h"

namespace doorbell {
namespace {

struct BadCall {
  std::string what;                       // the entry point and the bad input, for the failure message
  std::function<void()> call;
  std::vector<std::string> must_contain;  // pieces of the error text
};

// Runs each call, expects an exception whose text holds every piece; then checks the process still computes.
void expect_refused(const std::vector<BadCall>& calls) {
  for (const BadCall& c : calls) {
    std::string message;
    bool threw = false;
    try {
      c.call();
    } catch (const std::exception& e) {
      threw = true;
      message = e.what();
    }
    if (!threw) {
      ADD_FAILURE() << c.what << ": no error";
      continue;
    }
    for (const std::string& piece : c.must_contain)
      EXPECT_NE(message.find(piece), std::string::npos) << c.what << ": the error does not say '" << piece << "':\n  " << message;
  }
  // still usable: a fresh program computes
  std::vector<float> v = (Tensor({1.0f, 2.0f, 3.0f}) * 2 + 1).tolist<float>();
  EXPECT_EQ(v, (std::vector<float>{3, 5, 7}));
}

using Unary = std::function<Tensor(const Tensor&)>;
using Binary = std::function<Tensor(const Tensor&, const Tensor&)>;

const std::vector<std::pair<std::string, Unary>>& unary_ops() {
  static const std::vector<std::pair<std::string, Unary>> ops = {
      {"neg", [](const Tensor& t) { return t.neg(); }},         {"abs", [](const Tensor& t) { return t.abs(); }},
      {"sign", [](const Tensor& t) { return t.sign(); }},       {"relu", [](const Tensor& t) { return t.relu(); }},
      {"sigmoid", [](const Tensor& t) { return t.sigmoid(); }}, {"tanh", [](const Tensor& t) { return t.tanh(); }},
      {"gelu", [](const Tensor& t) { return t.gelu(); }},       {"silu", [](const Tensor& t) { return t.silu(); }},
      {"exp", [](const Tensor& t) { return t.exp(); }},         {"exp2", [](const Tensor& t) { return t.exp2(); }},
      {"log", [](const Tensor& t) { return t.log(); }},         {"log2", [](const Tensor& t) { return t.log2(); }},
      {"sqrt", [](const Tensor& t) { return t.sqrt(); }},       {"rsqrt", [](const Tensor& t) { return t.rsqrt(); }},
      {"sin", [](const Tensor& t) { return t.sin(); }},         {"cos", [](const Tensor& t) { return t.cos(); }},
      {"tan", [](const Tensor& t) { return t.tan(); }},         {"reciprocal", [](const Tensor& t) { return t.reciprocal(); }},
      {"trunc", [](const Tensor& t) { return t.trunc(); }},     {"floor", [](const Tensor& t) { return t.floor(); }},
      {"ceil", [](const Tensor& t) { return t.ceil(); }},       {"logical_not", [](const Tensor& t) { return t.logical_not(); }},
      {"contiguous", [](const Tensor& t) { return t.contiguous(); }},
      {"realize", [](const Tensor& t) { return t.realize(); }},
  };
  return ops;
}

const std::vector<std::pair<std::string, Binary>>& binary_ops() {
  static const std::vector<std::pair<std::string, Binary>> ops = {
      {"add", [](const Tensor& a, const Tensor& b) { return a.add(b); }},
      {"sub", [](const Tensor& a, const Tensor& b) { return a.sub(b); }},
      {"mul", [](const Tensor& a, const Tensor& b) { return a.mul(b); }},
      {"div", [](const Tensor& a, const Tensor& b) { return a.div(b); }},
      {"floordiv", [](const Tensor& a, const Tensor& b) { return a.floordiv(b); }},
      {"mod", [](const Tensor& a, const Tensor& b) { return a.mod(b); }},
      {"pow", [](const Tensor& a, const Tensor& b) { return a.pow(b); }},
      {"maximum", [](const Tensor& a, const Tensor& b) { return a.maximum(b); }},
      {"minimum", [](const Tensor& a, const Tensor& b) { return a.minimum(b); }},
      {"lt", [](const Tensor& a, const Tensor& b) { return a.lt(b); }},
      {"le", [](const Tensor& a, const Tensor& b) { return a.le(b); }},
      {"gt", [](const Tensor& a, const Tensor& b) { return a.gt(b); }},
      {"ge", [](const Tensor& a, const Tensor& b) { return a.ge(b); }},
      {"eq", [](const Tensor& a, const Tensor& b) { return a.eq(b); }},
      {"ne", [](const Tensor& a, const Tensor& b) { return a.ne(b); }},
      {"bitwise_and", [](const Tensor& a, const Tensor& b) { return a.bitwise_and(b); }},
      {"bitwise_or", [](const Tensor& a, const Tensor& b) { return a.bitwise_or(b); }},
      {"bitwise_xor", [](const Tensor& a, const Tensor& b) { return a.bitwise_xor(b); }},
      {"lshift", [](const Tensor& a, const Tensor& b) { return a.lshift(b); }},
      {"rshift", [](const Tensor& a, const Tensor& b) { return a.rshift(b); }},
      {"where", [](const Tensor& a, const Tensor& b) { return a.gt(0).where(a, b); }},
      {"dot", [](const Tensor& a, const Tensor& b) { return a.dot(b); }},
      {"assign", [](const Tensor& a, const Tensor& b) { return a.assign(b); }},
  };
  return ops;
}

using Reduce = std::function<Tensor(const Tensor&, int64_t axis)>;
const std::vector<std::pair<std::string, Reduce>>& reduce_ops() {
  static const std::vector<std::pair<std::string, Reduce>> ops = {
      {"sum", [](const Tensor& t, int64_t a) { return t.sum(a); }},
      {"prod", [](const Tensor& t, int64_t a) { return t.prod(a); }},
      {"max", [](const Tensor& t, int64_t a) { return t.max(a); }},
      {"min", [](const Tensor& t, int64_t a) { return t.min(a); }},
      {"mean", [](const Tensor& t, int64_t a) { return t.mean(a); }},
      {"var", [](const Tensor& t, int64_t a) { return t.var(a); }},
      {"std", [](const Tensor& t, int64_t a) { return t.std(a); }},
      {"argmax", [](const Tensor& t, int64_t a) { return t.argmax(a); }},
      {"argmin", [](const Tensor& t, int64_t a) { return t.argmin(a); }},
      {"any", [](const Tensor& t, int64_t a) { return t.any(a); }},
      {"all", [](const Tensor& t, int64_t a) { return t.all(a); }},
      {"softmax", [](const Tensor& t, int64_t a) { return t.softmax(a); }},
      {"log_softmax", [](const Tensor& t, int64_t a) { return t.log_softmax(a); }},
      {"logsumexp", [](const Tensor& t, int64_t a) { return t.logsumexp(a); }},
      {"cumsum", [](const Tensor& t, int64_t a) { return t.cumsum(a); }},
      {"flip", [](const Tensor& t, int64_t a) { return t.flip(a); }},
      {"squeeze", [](const Tensor& t, int64_t a) { return t.squeeze(a); }},
      {"unsqueeze", [](const Tensor& t, int64_t a) { return t.unsqueeze(a); }},
      {"size", [](const Tensor& t, int64_t a) { return Tensor(t.size(a)); }},
      {"transpose", [](const Tensor& t, int64_t a) { return t.transpose(a, 0); }},
      {"flatten", [](const Tensor& t, int64_t a) { return t.flatten(a); }},
      {"narrow", [](const Tensor& t, int64_t a) { return t.narrow(a, 0, 1); }},
  };
  return ops;
}

TEST(BadInput, EveryOpOnAnEmptyHandleThrowsInsteadOfCrashing) {
  std::vector<BadCall> calls;
  const Tensor empty;
  for (const auto& [name, f] : unary_ops()) calls.push_back({name + "(empty handle)", [f] { f(Tensor()); }, {"empty"}});
  for (const auto& [name, f] : binary_ops()) {
    calls.push_back({name + "(empty, x)", [f] { f(Tensor(), Tensor({1.0f})); }, {"empty"}});
    calls.push_back({name + "(x, empty)", [f] { f(Tensor({1}), Tensor()); }, {"empty"}});
  }
  for (const auto& [name, f] : reduce_ops()) calls.push_back({name + "(empty handle)", [f] { f(Tensor(), 0); }, {"empty"}});
  calls.push_back({"reshape(empty)", [] { Tensor().reshape({1}); }, {"empty"}});
  calls.push_back({"tolist(empty)", [] { Tensor().tolist<float>(); }, {"empty"}});
  calls.push_back({"item(empty)", [] { Tensor().item<float>(); }, {"empty"}});
  calls.push_back({"shape(empty)", [] { (void)Tensor().shape(); }, {"empty"}});
  calls.push_back({"cast(empty)", [] { Tensor().cast(dtypes::int32); }, {"empty"}});
  calls.push_back({"cat(empty)", [] { Tensor::cat({Tensor({1.0f}), Tensor()}); }, {"empty"}});
  expect_refused(calls);
}

TEST(BadInput, BinaryOpsOnShapesThatDoNotBroadcastNameTheOpAndBothShapes) {
  std::vector<BadCall> calls;
  for (const auto& [name, f] : binary_ops()) {
    if (name == "dot") continue;  // matmul's shapes have their own rule, below
    std::string op = name == "where" ? "where" : name;
    calls.push_back({name + "((2, 3), (4, 5))", [f] { f(Tensor::ones({2, 3}, dtypes::int32), Tensor::ones({4, 5}, dtypes::int32)); },
                     {op, "(2, 3)", "(4, 5)"}});
  }
  calls.push_back({"dot((2, 3), (4, 5))", [] { Tensor::ones({2, 3}).dot(Tensor::ones({4, 5})); }, {"(2, 3)", "(4, 5)"}});
  calls.push_back({"dot(0-d)", [] { Tensor(1.0f).dot(Tensor::ones({2})); }, {"dot"}});
  expect_refused(calls);
}

TEST(BadInput, AxesOutOfRangeNameTheOpTheAxisAndTheRank) {
  std::vector<BadCall> calls;
  for (const auto& [name, f] : reduce_ops()) {
    calls.push_back({name + "(axis 5 of rank 2)", [f] { f(Tensor::ones({2, 3}), 5); }, {"5"}});
    calls.push_back({name + "(axis -4 of rank 2)", [f] { f(Tensor::ones({2, 3}), -4); }, {"-4"}});
  }
  calls.push_back({"permute(repeated axis)", [] { Tensor::ones({2, 3}).permute({0, 0}); }, {"permute", "(0, 0)"}});
  calls.push_back({"permute(wrong length)", [] { Tensor::ones({2, 3}).permute({0}); }, {"permute"}});
  calls.push_back({"sum(repeated axis)", [] { Tensor::ones({2, 3}).sum({0, 0}); }, {"sum"}});
  expect_refused(calls);
}

TEST(BadInput, MovementOpsWithImpossibleShapesNameTheOpAndTheShapes) {
  expect_refused({
      {"reshape(6 -> 4x2)", [] { Tensor::ones({2, 3}).reshape({4, 2}); }, {"reshape", "(4, 2)"}},
      {"reshape(two -1)", [] { Tensor::ones({2, 3}).reshape({-1, -1}); }, {"reshape"}},
      {"reshape(negative)", [] { Tensor::ones({2, 3}).reshape({-2, -3}); }, {"reshape"}},
      {"expand(3 -> 4)", [] { Tensor::ones({2, 3}).expand({2, 4}); }, {"expand", "(2, 4)"}},
      {"expand(fewer axes)", [] { Tensor::ones({2, 3}).expand({3}); }, {"expand"}},
      {"pad(wrong axis count)", [] { Tensor::ones({2, 3}).pad({{1, 1}, {1, 1}, {1, 1}}); }, {"pad"}},
      {"pad(crop past the size)", [] { Tensor::ones({2, 3}).pad({{-3, 0}, {0, 0}}); }, {"pad"}},
      {"shrink(end past size)", [] { Tensor::ones({2, 3}).shrink({{0, 2}, {0, 4}}); }, {"shrink"}},
      {"shrink(begin after end)", [] { Tensor::ones({2, 3}).shrink({{1, 0}, {0, 3}}); }, {"shrink"}},
      {"repeat(wrong length)", [] { Tensor::ones({2, 3}).repeat({2}); }, {"repeat"}},
      {"repeat(negative)", [] { Tensor::ones({2, 3}).repeat({-1, 1}); }, {"repeat"}},
      {"cat(no tensors)", [] { Tensor::cat({}); }, {"cat"}},
      {"cat(mismatched)", [] { Tensor::cat({Tensor::ones({2, 3}), Tensor::ones({2, 4})}, 0); }, {"cat"}},
      {"cat(dtype mix ok, rank mix)", [] { Tensor::cat({Tensor::ones({2, 3}), Tensor::ones({3})}, 0); }, {"cat"}},
      {"stack(mismatched)", [] { Tensor::stack({Tensor::ones({2, 3}), Tensor::ones({3, 2})}); }, {"stack"}},
      {"narrow(past the end)", [] { Tensor::ones({2, 3}).narrow(1, 2, 2); }, {"narrow"}},
      {"narrow(negative length)", [] { Tensor::ones({2, 3}).narrow(1, 0, -1); }, {"narrow"}},
      {"getitem(index 2 of size 2)", [] { Tensor::ones({2, 3})[2]; }, {"2"}},
      {"getitem(too many indices)", [] { Tensor::ones({2, 3}).getitem({0, 0, 0}); }, {"getitem", "3 indices", "(2, 3)"}},
      {"getitem(step 0)", [] { Tensor::ones({2, 3}).getitem({slice(0, 2, 0)}); }, {"step"}},
      {"getitem(two ellipses)", [] { Tensor::ones({2, 3}).getitem({Ellipsis{}, Ellipsis{}}); }, {"getitem", "ellipsis"}},
      {"pool(kernel larger than input)", [] { Tensor::ones({2, 3}).pool({4}); }, {"pool"}},
      {"pool(zero stride)", [] { Tensor::ones({2, 3}).pool({2}, {0}); }, {"pool"}},
  });
}

TEST(BadInput, DtypesAnOpCannotTakeNameTheOpAndTheDtype) {
  std::vector<BadCall> calls;
  for (std::string name : {"bitwise_and", "bitwise_or", "bitwise_xor", "lshift", "rshift"}) {
    Binary f;
    for (const auto& [n, g] : binary_ops())
      if (n == name) f = g;
    calls.push_back({name + "(float32)", [f] { f(Tensor::ones({2}), Tensor::ones({2})); }, {name, "float32"}});
  }
  calls.push_back({"bitwise_not(float32)", [] { Tensor::ones({2}).bitwise_not(); }, {"bitwise_not", "float32"}});
  calls.push_back({"pow(int ** -1)", [] { Tensor::ones({2}, dtypes::int32).pow(-1); }, {"pow", "int32"}});
  calls.push_back({"bitcast(4 bytes -> 2 bytes)", [] { Tensor::ones({2}).bitcast(dtypes::int16); }, {"bitcast", "float32", "int16"}});
  calls.push_back({"cast(void)", [] { Tensor::ones({2}).cast(dtypes::void_); }, {"cast"}});
  calls.push_back({"item(3 elements)", [] { Tensor::ones({3}).item<float>(); }, {"item", "(3,)"}});
  calls.push_back({"full(1e30 as int32)", [] { Tensor::full({1}, 1e30, dtypes::int32); }, {"full", "int32"}});
  calls.push_back({"randint(range past int32)", [] { Tensor::randint({2}, int64_t{1} << 40, int64_t{1} << 41, dtypes::int32); }, {"randint", "int32"}});
  calls.push_back({"randint(empty range)", [] { Tensor::randint({2}, 5, 5); }, {"randint"}});
  calls.push_back({"randint(float dtype)", [] { Tensor::randint({2}, 0, 5, dtypes::float32); }, {"randint", "float32"}});
  expect_refused(calls);
}

TEST(BadInput, SizesPastTheLimitsOrNegativeNameTheEntryPointAndTheShape) {
  const int64_t big = int64_t{1} << 62;
  expect_refused({
      {"full(2^62)", [=] { Tensor::full({big}, 1.0f); }, {"full", "4611686018427387904"}},
      {"empty(2^62 float32)", [=] { Tensor::empty({big}); }, {"empty", "4611686018427387904"}},
      {"empty(2^61 float64)", [=] { Tensor::empty({big / 2}, dtypes::float64); }, {"empty"}},
      {"zeros(2^31 x 2^31 x 4)", [] { Tensor::zeros({int64_t{1} << 31, int64_t{1} << 31, 4}); }, {"zeros"}},
      {"ones(negative)", [] { Tensor::ones({2, -3}); }, {"ones", "-3"}},
      {"empty(negative)", [] { Tensor::empty({-1}); }, {"empty", "-1"}},
      {"rand(negative)", [] { Tensor::rand({-1}); }, {"rand"}},
      {"randn(2^62)", [=] { Tensor::randn({big}); }, {"randn"}},
      {"eye(negative)", [] { Tensor::eye(-1); }, {"eye"}},
      {"arange(step 0)", [] { Tensor::arange(0, 10, 0); }, {"arange"}},
      {"linspace(negative steps)", [] { Tensor::linspace(0, 1, -1); }, {"linspace"}},
      {"pad(2^62)", [=] { Tensor::ones({2}).pad({{big, big}}); }, {"pad"}},
      {"expand(2^62 x 4)", [=] { Tensor::ones({1, 1}).expand({big, 4}); }, {"expand"}},
      {"repeat(2^62)", [=] { Tensor::ones({4}).repeat({big}); }, {"repeat"}},
      {"reshape(2^62 x 4)", [=] { Tensor::ones({4}).reshape({big, 4, 0}).reshape({big, 4}); }, {"reshape"}},
      {"from_data(count != shape)", [] { Tensor(std::vector<float>{1, 2, 3}, {2, 2}); }, {"(2, 2)"}},
  });
}

TEST(BadInput, DeviceNamesThatDoNotExistAndMixedDevicesAreRefusedByName) {
  const std::string before = default_device_name();
  auto on = [](const std::string& dev, auto f) {
    std::string prev = default_device_name();
    set_default_device_name(dev);
    try {
      f();
    } catch (...) {
      set_default_device_name(prev);
      throw;
    }
    set_default_device_name(prev);
  };
  expect_refused({
      {"realize on DEV=NOSUCH", [&] { on("NOSUCH", [] { Tensor::ones({2}).add(1).realize(); }); }, {"NOSUCH"}},
      {"realize on DEV=CPU:LLVM", [&] { on("CPU:LLVM", [] { Tensor::ones({2}).add(1).realize(); }); }, {"CPU:LLVM", "LLVM"}},
      {"realize on DEV=CPU:-1", [&] { on("CPU:-1", [] { Tensor::ones({2}).add(1).realize(); }); }, {"CPU:-1"}},
      {"add(REF tensor, CPU tensor)",
       [&] {
         Tensor r;
         on("REF", [&] { r = Tensor({1.0f, 2.0f}); });
         Tensor c({1.0f, 2.0f});
         r.add(c).realize();
       },
       {"REF", "CPU"}},
  });
  EXPECT_EQ(default_device_name(), before);
}

}  // namespace
}  // namespace doorbell
