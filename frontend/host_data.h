// Element values in host memory, in the storage format of a dtype: C++'s own representation, except float16 and
// bfloat16, which are stored as their 16-bit patterns. Used to fill data tensors and to read results back.
#pragma once
#include <cstddef>

#include "ir/element_storage.h"
#include "ir/uop.h"

namespace doorbell::frontend {

using doorbell::load_element;   // ir/element_storage.h
using doorbell::store_element;
// Converts `count` elements stored as src_dt into dst_dt (ints wrap, floats round, bool is != 0).
// Throws std::invalid_argument naming `op` for a float with no value in an integer dtype (NaN, out of range).
void convert_elements(const char* op, const std::byte* src, DType src_dt, size_t count, DType dst_dt, std::byte* dst);

}  // namespace doorbell::frontend
