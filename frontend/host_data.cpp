#include "frontend/host_data.h"

#include <cstring>
#include <stdexcept>
#include <string>

#include "ir/element_storage.h"
#include "ir/exec_alu.h"

namespace doorbell::frontend {

void convert_elements(const char* op, const std::byte* src, DType src_dt, size_t count, DType dst_dt, std::byte* dst) {
  size_t in = src_dt.itemsize(), out = dst_dt.itemsize();
  if (src_dt == dst_dt) {
    if (count) std::memcpy(dst, src, count * in);
    return;
  }
  for (size_t k = 0; k < count; k++) {
    ConstValue v = load_element(src_dt, src + k * in);
    std::optional<ConstValue> c = convert_value(dst_dt, v);
    if (!c) {
      double d = std::holds_alternative<double>(v) ? std::get<double>(v) : 0;
      throw std::invalid_argument(std::string(op) + ": the " + src_dt.name() + " value " + std::to_string(d) + " at element " +
                                  std::to_string(k) + " has no " + dst_dt.name() + " value; expected a finite value in range");
    }
    store_element(dst_dt, *c, dst + k * out);
  }
}

}  // namespace doorbell::frontend
