// What this CPU's instruction set has, as far as the x86 backend uses it (cpuid through the compiler's
// __builtin_cpu_supports). The vector width the backend emits follows the CPU optimizer's lanes
// (compiler/cpu/cpu_optimizer.h cpu_vector_lanes()): 16 float32 lanes need AVX-512F (zmm), 8 AVX2 (ymm), 4 SSE-width
// VEX (xmm). The backend needs AVX2 and FMA at least; F16C for the float16 conversions.
#pragma once
#include <string>

namespace doorbell::x86 {

struct X86Features {
  bool avx2 = false, fma = false, f16c = false, bmi2 = false;
  bool avx512f = false, avx512vl = false, avx512dq = false, avx512bw = false;
  // "avx2 fma f16c avx512f ...": part of the target's cache key.
  std::string describe() const;
};

// The CPU this process runs on (computed once), less what DOORBELL_X86_FEATURES leaves out: a comma-separated list
// of the features to keep ("avx2,fma,f16c,bmi2": the code of an AVX2 machine on an AVX-512 one, what CI's lanes8.*
// runs use with DOORBELL_CPU_VECTOR_LANES=8). A name not in X86Features throws std::invalid_argument naming it.
const X86Features& host_x86_features();
// The features of `host` that `keep` names (the parsing of DOORBELL_X86_FEATURES).
X86Features keep_x86_features(const X86Features& host, const std::string& keep);

}  // namespace doorbell::x86
