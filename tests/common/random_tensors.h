// Random integer inputs for the renderer semantics tests (the AMDGPU IR on x86, the PTX on the interpreter): values
// of every integer dtype, and divisors that are never zero.
#pragma once
#include "frontend/tensor.h"

namespace doorbell::testing {

inline constexpr DType kIntDtypes[] = {dtypes::int8,  dtypes::int16,  dtypes::int32,  dtypes::int64,
                                       dtypes::uint8, dtypes::uint16, dtypes::uint32, dtypes::uint64};

// n integers in [lo, hi) cast to d, realized.
inline Tensor random_ints(DType d, int64_t n, int64_t lo, int64_t hi) { return Tensor::randint({n}, lo, hi).cast(d).realize(); }

// n integers in [-6, 6] with 0 replaced by 3, cast to d, realized.
inline Tensor random_nonzero(DType d, int64_t n) {
  Tensor b = Tensor::randint({n}, -6, 7).realize();
  return b.eq(0).where(3, b).cast(d).realize();
}

}  // namespace doorbell::testing
