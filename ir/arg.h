// Arg: the closed set of values a UOp's arg may hold. Equality is exact: floats compare by bits
// (-0.0 != 0.0, NaN == NaN), so hash-consing never merges constants that differ.
#pragma once
#include <cstdint>
#include <cstring>
#include <string>
#include <variant>
#include <vector>

#include "ir/content_hash.h"
#include "ir/ops.h"
#include "ir/program_info.h"

namespace doorbell {

struct Float {
  double value = 0;
  Float() = default;
  explicit Float(double v);  // canonicalizes NaN so that every NaN is one arg
  uint64_t bits() const { uint64_t b; std::memcpy(&b, &value, 8); return b; }
  bool operator==(const Float& o) const { return bits() == o.bits(); }
};

// The value of an index that is out of bounds: poison, a bool CONST (tinygrad's Invalid).
struct Invalid {
  bool operator==(const Invalid&) const { return true; }
};

using IntTuple = std::vector<int64_t>;

struct ReduceArg {  // REDUCE: the combining op and the reduced axes
  Ops op = Ops::ADD;
  IntTuple axes;
  bool operator==(const ReduceArg&) const = default;
};

struct RangeArg {  // RANGE: a unique axis number and what the optimizer may do with it
  int64_t axis = 0;
  AxisType type = AxisType::LOOP;
  bool operator==(const RangeArg&) const = default;
};

struct ParamArg {  // PARAM: a kernel parameter, or with AddrSpace::ALU a bounded integer variable
  int64_t slot = 0;
  AddrSpace addrspace = AddrSpace::GLOBAL;
  std::string name;
  int64_t vmin = 0, vmax = 0;
  bool operator==(const ParamArg&) const = default;
};

using Arg = std::variant<std::monostate, bool, int64_t, Float, Invalid, std::string, IntTuple, Ops, ReduceArg,
                         RangeArg, ParamArg, ProgramInfoArg>;

// Feeds a canonical serialization of the arg (type tag, then fields) into h.
void hash_arg(const Arg& arg, Hasher128& h);
// A readable form: 3, 1.5, "x", (1, 2), ADD, x[0..9].
std::string arg_to_string(const Arg& arg);

}  // namespace doorbell
