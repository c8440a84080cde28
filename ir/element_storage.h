// Element values in memory, in the storage format of a dtype: C++'s own representation, except bool (one byte,
// 0 or 1) and float16 / bfloat16 (their 16-bit patterns). Shared by everything that reads or writes buffers
// on the host: the frontend's data tensors, the reference interpreter, tests.
#pragma once
#include <cstddef>

#include "ir/uop.h"

namespace doorbell {

ConstValue load_element(DType dt, const std::byte* src);
// v must already be a value of dt (see convert_value in ir/exec_alu.h). Throws for dtypes without storage.
void store_element(DType dt, const ConstValue& v, std::byte* dst);

}  // namespace doorbell
