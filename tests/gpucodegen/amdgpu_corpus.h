// Tensor programs whose kernels the AMDGPU tests render and compile: elementwise ops over every dtype, casts
// between every pair, movement ops, reductions over each axis, matmuls, softmax, integer division. Inputs are
// Tensor::empty buffers, so building a program runs nothing.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "compiler/gpu/gpu_dims.h"
#include "frontend/tensor.h"

namespace doorbell::amdgpu_test {

struct Program {
  std::string name;
  std::vector<Tensor> outputs;
};

inline const std::vector<DType>& corpus_dtypes() {
  static const std::vector<DType> d{dtypes::bool_,  dtypes::int8,    dtypes::int16,    dtypes::int32, dtypes::int64,
                                    dtypes::uint8,  dtypes::uint16,  dtypes::uint32,   dtypes::uint64, dtypes::float16,
                                    dtypes::bfloat16, dtypes::float32, dtypes::float64};
  return d;
}

inline Tensor E(IntTuple shape, DType d = dtypes::float32) { return Tensor::empty(std::move(shape), d); }

inline std::vector<Program> corpus_programs() {
  std::vector<Program> p;
  auto add = [&](std::string name, std::vector<Tensor> outs) { p.push_back({std::move(name), std::move(outs)}); };
  for (DType d : corpus_dtypes()) {
    const std::string n = d.name();
    Tensor a = E({37, 5}, d), b = E({37, 5}, d);
    if (d.is_bool()) {
      add(n + "_logic", {a.bitwise_and(b).bitwise_or(a.bitwise_xor(b)), a.where(b, a.logical_not())});
      add(n + "_any_all", {a.any(1), a.all(0)});
      continue;
    }
    add(n + "_arith", {a + b, a * b - a, a.maximum(b), a.lt(b).where(a, b), a.eq(b), a.ne(b)});
    add(n + "_sum_max", {a.sum(1), a.max(0)});
    if (d.is_int()) {
      add(n + "_floordiv_mod", {a.floordiv(b), a.mod(b)});
      add(n + "_bitwise", {a.bitwise_and(b), a.bitwise_or(b), a.bitwise_xor(b), a.lshift(1), a.rshift(1)});
    } else {
      add(n + "_div_sqrt_recip", {a / b, a.sqrt(), a.reciprocal(), a.trunc(), -a});
      if (d != dtypes::float64) {
        add(n + "_transcendental", {a.exp(), a.log(), a.sin(), a.exp2()});
        add(n + "_pow", {a.pow(b), a.pow(3.0)});
      }
    }
  }
  for (DType from : corpus_dtypes())
    for (DType to : corpus_dtypes())
      if (!(from == to)) add("cast_" + from.name() + "_to_" + to.name(), {E({33}, from).cast(to)});
  add("bitcast_f32_i32", {E({64}).bitcast(dtypes::int32), E({64}, dtypes::int32).bitcast(dtypes::float32)});
  add("bitcast_f16_i16", {E({64}, dtypes::float16).bitcast(dtypes::int16), E({64}, dtypes::uint16).bitcast(dtypes::bfloat16)});
  // Movement and broadcast.
  add("broadcast_row_col", {E({17, 1}) + E({1, 23})});
  add("broadcast_expand_3d", {E({4, 1, 6}).expand({4, 5, 6}) * E({5, 1})});
  add("pad", {E({6, 7}).pad({{1, 2}, {3, 0}}) + 1});
  add("pad_value", {E({10}).pad({{2, 2}}, -1.5)});
  add("shrink", {E({10, 10}).shrink({{2, 7}, {1, 9}}) * 2});
  add("flip", {E({5, 6}).flip({0, 1}) + 1});
  add("permute", {E({3, 4, 5}).permute({2, 0, 1}) + 0});
  add("cat", {Tensor::cat({E({4, 3}), E({2, 3})})});
  add("strided", {E({32})[{slice(std::nullopt, std::nullopt, 3)}] + 1});
  // Reductions over each axis.
  for (int64_t axis = 0; axis < 3; axis++) {
    Tensor x = E({6, 7, 8});
    add("sum_axis" + std::to_string(axis), {x.sum(axis)});
    add("max_axis" + std::to_string(axis), {x.max(axis)});
    add("prod_axis" + std::to_string(axis), {E({6, 7, 8}, dtypes::int32).prod(axis)});
  }
  add("sum_all", {E({1000}).sum()});
  add("mean_keepdim", {E({8, 9}).mean(1, true)});
  add("argmax", {E({8, 9}).argmax(1)});
  add("cumsum", {E({33}).cumsum()});
  // Matmuls.
  for (auto [m, k, n] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{{4, 4, 4}, {17, 33, 9}, {1, 64, 1}, {128, 128, 128}, {3, 1, 5}})
    add("matmul_" + std::to_string(m) + "x" + std::to_string(k) + "x" + std::to_string(n), {E({m, k}).matmul(E({k, n}))});
  add("matmul_f16", {E({16, 32}, dtypes::float16).matmul(E({32, 8}, dtypes::float16))});
  add("matmul_bf16", {E({16, 32}, dtypes::bfloat16).matmul(E({32, 8}, dtypes::bfloat16))});
  add("softmax", {E({7, 33}).softmax(-1)});
  add("log_softmax_f16", {E({5, 12}, dtypes::float16).log_softmax(-1)});
  add("int_floordiv_mod_const", {E({50}, dtypes::int32).floordiv(-7), E({50}, dtypes::int64).mod(5)});
  add("relu_gelu_sigmoid", {E({40}).relu(), E({40}).gelu(), E({40}).sigmoid()});
  add("where_mixed", {E({20}).gt(0).where(E({20}, dtypes::float16).cast(dtypes::float32), 1.0)});
  return p;
}

// The kernel SINKs a program schedules (CALLs whose body is a SINK).
inline std::vector<UOp> kernels_of(const std::vector<Tensor>& outputs) {
  std::vector<UOp> ks;
  UOp linear = Tensor::schedule_linear(outputs);
  for (const UOp& call : linear.src())
    if (call.src().size() > 0 && call.src(0).op() == Ops::SINK) ks.push_back(call.src(0));
  return ks;
}

}  // namespace doorbell::amdgpu_test
