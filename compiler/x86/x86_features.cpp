#include "compiler/x86/x86_features.h"

namespace doorbell::x86 {

std::string X86Features::describe() const {
  std::string s;
  auto add = [&](bool has, const char* name) {
    if (!has) return;
    if (!s.empty()) s += ' ';
    s += name;
  };
  add(avx2, "avx2");
  add(fma, "fma");
  add(f16c, "f16c");
  add(bmi2, "bmi2");
  add(avx512f, "avx512f");
  add(avx512vl, "avx512vl");
  add(avx512dq, "avx512dq");
  add(avx512bw, "avx512bw");
  return s.empty() ? "none" : s;
}

const X86Features& host_x86_features() {
  static const X86Features f = [] {
    X86Features x;
    __builtin_cpu_init();
    x.avx2 = __builtin_cpu_supports("avx2");
    x.fma = __builtin_cpu_supports("fma");
    x.f16c = __builtin_cpu_supports("f16c");
    x.bmi2 = __builtin_cpu_supports("bmi2");
    x.avx512f = __builtin_cpu_supports("avx512f");
    x.avx512vl = __builtin_cpu_supports("avx512vl");
    x.avx512dq = __builtin_cpu_supports("avx512dq");
    x.avx512bw = __builtin_cpu_supports("avx512bw");
    return x;
  }();
  return f;
}

}  // namespace doorbell::x86
