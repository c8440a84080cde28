#include "compiler/x86/x86_features.h"

#include <cstdlib>
#include <stdexcept>

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

X86Features keep_x86_features(const X86Features& host, const std::string& keep) {
  X86Features out;
  struct Field {
    const char* name;
    bool X86Features::*flag;
  };
  static constexpr Field kFields[] = {{"avx2", &X86Features::avx2},         {"fma", &X86Features::fma},
                                      {"f16c", &X86Features::f16c},         {"bmi2", &X86Features::bmi2},
                                      {"avx512f", &X86Features::avx512f},   {"avx512vl", &X86Features::avx512vl},
                                      {"avx512dq", &X86Features::avx512dq}, {"avx512bw", &X86Features::avx512bw}};
  size_t at = 0;
  while (at <= keep.size()) {
    size_t end = keep.find(',', at);
    if (end == std::string::npos) end = keep.size();
    const std::string name = keep.substr(at, end - at);
    at = end + 1;
    if (name.empty()) continue;
    bool known = false;
    for (const Field& f : kFields)
      if (name == f.name) {
        out.*f.flag = host.*f.flag;
        known = true;
      }
    if (!known)
      throw std::invalid_argument("DOORBELL_X86_FEATURES: unknown feature '" + name +
                                  "'; expected a comma-separated list of avx2, fma, f16c, bmi2, avx512f, avx512vl, avx512dq, avx512bw");
  }
  return out;
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
    const char* keep = std::getenv("DOORBELL_X86_FEATURES");
    return keep != nullptr && *keep != '\0' ? keep_x86_features(x, keep) : x;
  }();
  return f;
}

}  // namespace doorbell::x86
