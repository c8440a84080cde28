// The fusion corpus's programs (tests/scheduler/fusion_corpus_test.cpp): tensor programs with the number of
// kernels each must schedule to. Shared with the GPU code generation tests, which render every kernel.
#pragma once
#include <functional>
#include <ostream>
#include <vector>

#include "frontend/tensor.h"

namespace doorbell::fusion_corpus {

struct Case {
  const char* name;
  int kernels;
  int tinygrad;
  // Builds the outputs; inputs are realized data tensors made inside.
  std::function<std::vector<Tensor>()> build;
};

inline void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

inline Tensor R(IntTuple shape) { return Tensor::randn(std::move(shape)); }

inline std::vector<Case> corpus() {
  return {
      {"add_mul", 1, 1, [] { return std::vector{(Tensor({1.f, 2.f, 3.f}) + 1) * 2}; }},
      {"elementwise_chain", 1, 1, [] { Tensor a = R({4, 4}), b = R({4, 4}); return std::vector{((a * b + a).relu() * 2 - 1).exp()}; }},
      {"reduce_then_elementwise", 1, 1, [] { return std::vector{R({4, 4}).sum(1) + 1}; }},
      {"sum_all", 1, 1, [] { return std::vector{R({4, 4}).sum()}; }},
      {"softmax", 3, 3, [] { return std::vector{R({4, 4}).softmax(-1)}; }},
      {"log_softmax", 3, 3, [] { return std::vector{R({4, 4}).log_softmax(-1)}; }},
      {"matmul", 1, 1, [] { return std::vector{R({4, 4}).matmul(R({4, 4}))}; }},
      {"matmul_bias_relu", 1, 1, [] { return std::vector{(R({4, 4}).matmul(R({4, 4})) + R({4})).relu()}; }},
      {"two_consumers_recomputed", 1, 1, [] { Tensor c = R({4, 4}) + 1; return std::vector{c * 2 + c.exp()}; }},
      {"two_outputs_share_value", 2, 2, [] { Tensor c = R({4, 4}) + 1; return std::vector{c * 2, c * 3}; }},
      {"contiguous_forces_store", 2, 2, [] { return std::vector{(R({4, 4}) + 1).contiguous() * 2}; }},
      {"assign_elementwise", 1, 1, [] { Tensor a = R({4, 4}); return std::vector{a.assign(a * 2)}; }},
      {"assign_through_permute", 2, 2, [] { Tensor a = R({4, 4}); return std::vector{a.assign(a.transpose() + 1)}; }},
      {"assign_through_flip", 2, 2, [] { Tensor a = R({4, 4}); return std::vector{a.assign(a.flip(0) + 0)}; }},
      {"write_after_read", 2, 2, [] { Tensor a = R({4}); Tensor b = a + 1; a.assign(a * 2); return std::vector{b, a}; }},
      {"reduce_of_reduce", 1, 1, [] { return std::vector{R({4, 4}).sum(1).sum(0)}; }},
      {"pad_shrink_chain", 1, 1, [] { return std::vector{R({6}).pad({{7, 7}}).shrink({{5, 10}}) + 1}; }},
      {"flip_chain", 1, 1, [] { return std::vector{R({4, 4}).flip(0).flip(1) + 1}; }},
      {"cat", 1, 1, [] { return std::vector{Tensor::cat({R({4, 4}), R({4, 4})})}; }},
      {"broadcast_after_reduce", 2, 2, [] { Tensor a = R({4, 4}); return std::vector{a - a.mean(1, true)}; }},
      {"var", 2, 2, [] { return std::vector{R({4, 4}).var(1)}; }},
      {"divide_by_max", 1, 1, [] { Tensor a = R({4, 4}); return std::vector{a / a.max()}; }},
      {"expand_input", 1, 1, [] { return std::vector{R({16}).reshape({1, 16}).expand({4, 16}) + 1}; }},
      {"permute_then_reduce", 1, 1, [] { return std::vector{R({4, 4}).transpose().sum(1)}; }},
      {"cumsum", 1, 1, [] { return std::vector{R({16}).cumsum()}; }},
      {"argmax", 2, 2, [] { return std::vector{R({4, 4}).argmax(1)}; }},
      {"stack", 1, 1, [] { return std::vector{Tensor::stack({R({4, 4}), R({4, 4})})}; }},
      {"repeat", 1, 1, [] { return std::vector{R({4, 4}).repeat({2, 2}) + 1}; }},
      {"strided_slice", 1, 1, [] { return std::vector{R({16})[{slice(std::nullopt, std::nullopt, 2)}] + 1}; }},
      {"mlp_two_layers", 2, 2, [] { return std::vector{R({8, 16}).matmul(R({16, 16})).relu().matmul(R({16, 4}))}; }},
      {"matmul_chain", 2, 2, [] { return std::vector{R({4, 4}).matmul(R({4, 4})).matmul(R({4, 4}))}; }},
      {"where", 1, 1, [] { Tensor a = R({4, 4}), b = R({4, 4}); return std::vector{a.gt(0).where(a, b)}; }},
      {"mean_all", 1, 1, [] { return std::vector{R({4, 4}).mean()}; }},
      {"std", 2, 2, [] { return std::vector{R({4, 4}).std(1)}; }},
      {"reduce_used_twice", 1, 1, [] { Tensor s = R({4, 4}).sum(1); return std::vector{s * s + s}; }},
      {"nested_reduce_matmul_relu_sum", 1, 1, [] { return std::vector{(R({8, 8}).matmul(R({8, 8})).relu() + 1).sum(0)}; }},
      {"shrink_then_pad", 1, 1, [] { return std::vector{R({8})[{slice(2, 6)}].pad({{1, 1}}) * 2}; }},
      {"flip_reduce", 1, 1, [] { return std::vector{R({4, 4}).flip(1).max(1)}; }},
  };
}

}  // namespace doorbell::fusion_corpus
