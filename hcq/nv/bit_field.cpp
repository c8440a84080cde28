#include "hcq/nv/bit_field.h"

#include <cstdio>
#include <stdexcept>
#include <string>

namespace doorbell::nv {
namespace {

void check_fits(const BitField& field, uint64_t value) {
  if (field.hi < field.lo || field.width() > 64) {
    throw std::invalid_argument(std::string(field.name) + ": malformed bit range " + std::to_string(field.hi) + ":" +
                                std::to_string(field.lo));
  }
  if (value > field.max_value()) {
    throw std::invalid_argument(std::string(field.name) + ": value " + hex(value) + " does not fit in " +
                                std::to_string(field.width()) + " bits (" + std::to_string(field.hi) + ":" +
                                std::to_string(field.lo) + "); expected at most " + hex(field.max_value()));
  }
}

void check_inside(std::span<const uint32_t> words, const BitField& field) {
  if (field.hi / 32 >= words.size()) {
    throw std::invalid_argument(std::string(field.name) + ": bit " + std::to_string(field.hi) + " lies outside a " +
                                std::to_string(words.size()) + "-word structure");
  }
}

}  // namespace

uint32_t field_bits(const BitField& field, uint64_t value) {
  check_fits(field, value);
  if (field.hi > 31) {
    throw std::invalid_argument(std::string(field.name) + ": bit range " + std::to_string(field.hi) + ":" +
                                std::to_string(field.lo) + " is not inside one 32-bit word");
  }
  return static_cast<uint32_t>(value << field.lo);
}

void set_field(std::span<uint32_t> words, const BitField& field, uint64_t value) {
  check_fits(field, value);
  check_inside(words, field);
  // Bit by bit keeps fields that straddle a word boundary (and 64-bit-wide ones) as simple as the rest; QMDs are a
  // few hundred bits, so speed does not matter here.
  for (uint32_t bit = field.lo; bit <= field.hi; ++bit) {
    const uint32_t mask = uint32_t{1} << (bit % 32);
    if ((value >> (bit - field.lo)) & 1) {
      words[bit / 32] |= mask;
    } else {
      words[bit / 32] &= ~mask;
    }
  }
}

uint64_t get_field(std::span<const uint32_t> words, const BitField& field) {
  check_fits(field, 0);
  check_inside(words, field);
  uint64_t value = 0;
  for (uint32_t bit = field.lo; bit <= field.hi; ++bit) {
    value |= static_cast<uint64_t>((words[bit / 32] >> (bit % 32)) & 1) << (bit - field.lo);
  }
  return value;
}

std::string hex(uint64_t value) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(value));
  return text;
}

void require_aligned(std::string_view what, uint64_t value, uint64_t alignment) {
  if (value % alignment != 0) {
    throw std::invalid_argument(std::string(what) + ": " + hex(value) + " is not " + std::to_string(alignment) +
                                "-byte aligned");
  }
}

}  // namespace doorbell::nv
