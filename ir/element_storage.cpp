#include "ir/element_storage.h"

#include <cstring>
#include <stdexcept>
#include <string>

#include "ir/exec_alu.h"

namespace doorbell {
namespace {

template <class T> T read(const std::byte* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}
template <class T> void write(std::byte* p, T v) { std::memcpy(p, &v, sizeof(T)); }

}  // namespace

ConstValue load_element(DType dt, const std::byte* p) {
  switch (dt.scalar_type) {
    case ScalarType::Bool: return read<uint8_t>(p) != 0;
    case ScalarType::Int8: return int64_t{read<int8_t>(p)};
    case ScalarType::Int16: return int64_t{read<int16_t>(p)};
    case ScalarType::Int32: return int64_t{read<int32_t>(p)};
    case ScalarType::Int64: return read<int64_t>(p);
    case ScalarType::UInt8: return int64_t{read<uint8_t>(p)};
    case ScalarType::UInt16: return int64_t{read<uint16_t>(p)};
    case ScalarType::UInt32: return int64_t{read<uint32_t>(p)};
    case ScalarType::UInt64: return static_cast<int64_t>(read<uint64_t>(p));  // the bit pattern, as ConstValue keeps it
    case ScalarType::Float16: return static_cast<double>(half_bits_to_float(read<uint16_t>(p)));
    case ScalarType::BFloat16: return static_cast<double>(bfloat16_bits_to_float(read<uint16_t>(p)));
    case ScalarType::Float32: return static_cast<double>(read<float>(p));
    case ScalarType::Float64: return read<double>(p);
    default: throw std::invalid_argument("load_element: " + dt.name() + " has no storage format");
  }
}

void store_element(DType dt, const ConstValue& v, std::byte* p) {
  auto i = [&] { return std::holds_alternative<int64_t>(v) ? std::get<int64_t>(v) : int64_t{std::get<bool>(v)}; };
  auto f = [&] { return std::get<double>(v); };
  switch (dt.scalar_type) {
    case ScalarType::Bool: write<uint8_t>(p, std::get<bool>(v) ? 1 : 0); return;
    case ScalarType::Int8: case ScalarType::UInt8: write<uint8_t>(p, static_cast<uint8_t>(i())); return;
    case ScalarType::Int16: case ScalarType::UInt16: write<uint16_t>(p, static_cast<uint16_t>(i())); return;
    case ScalarType::Int32: case ScalarType::UInt32: write<uint32_t>(p, static_cast<uint32_t>(i())); return;
    case ScalarType::Int64: case ScalarType::UInt64: write<int64_t>(p, i()); return;
    case ScalarType::Float16: write<uint16_t>(p, float_to_half_bits(static_cast<float>(f()))); return;
    case ScalarType::BFloat16: write<uint16_t>(p, float_to_bfloat16_bits(static_cast<float>(f()))); return;
    case ScalarType::Float32: write<float>(p, static_cast<float>(f())); return;
    case ScalarType::Float64: write<double>(p, f()); return;
    default: throw std::invalid_argument("store_element: " + dt.name() + " has no storage format");
  }
}

}  // namespace doorbell
