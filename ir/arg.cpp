#include "ir/arg.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

namespace doorbell {

Float::Float(double v) : value(std::isnan(v) ? std::numeric_limits<double>::quiet_NaN() : v) {}

namespace {
template <class... F> struct Overload : F... { using F::operator()...; };
template <class... F> Overload(F...) -> Overload<F...>;

void hash_tuple(const IntTuple& t, Hasher128& h) {
  h.add_u64(t.size());
  for (int64_t v : t) h.add_i64(v);
}

std::string tuple_to_string(const IntTuple& t) {
  std::string s = "(";
  for (size_t i = 0; i < t.size(); i++) s += (i ? ", " : "") + std::to_string(t[i]);
  return s + (t.size() == 1 ? ",)" : ")");
}

std::string float_to_string(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  // Shortest form that reads back exactly: try fewer digits first. Like Python's repr, plain digits for
  // magnitudes in [1e-4, 1e16) (%g alone would print 100.0 as 1e+02), an exponent outside.
  double mag = std::fabs(v);
  bool plain = mag == 0 || (mag >= 1e-4 && mag < 1e16);
  for (int p = plain ? 0 : 1; p <= (plain ? 24 : 17); p++) {
    char tmp[48];
    std::snprintf(tmp, sizeof tmp, plain ? "%.*f" : "%.*g", p, v);
    if (std::strtod(tmp, nullptr) == v) { std::snprintf(buf, sizeof buf, "%s", tmp); break; }
  }
  std::string s = buf;
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s;
}
void hash_program_info(const ProgramInfoArg& a, Hasher128& h) {
  if (!a.info) { h.add_u64(0); return; }
  const ProgramInfo& p = *a.info;
  h.add_u64(1);
  h.add_bytes(p.name);
  h.add_bytes(p.target);
  for (int64_t v : p.global_size) h.add_i64(v);
  for (int64_t v : p.local_size) h.add_i64(v);
  h.add_i64(p.buffers);
  h.add_u64(p.vars.size());
  for (const KernelVariable& v : p.vars) { h.add_bytes(v.name); h.add_i64(v.vmin); h.add_i64(v.vmax); }
  hash_tuple(p.outs, h);
  hash_tuple(p.ins, h);
  h.add_i64(p.shared_bytes);
  h.add_i64(p.registers);
  h.add_i64(p.stack_bytes);
  h.add_i64(p.ops);
  h.add_i64(p.bytes);
  h.add_i64(p.iterations);
}
}  // namespace

std::string ProgramInfo::launch_string() const {
  const bool gpu = local_size != std::array<int64_t, 3>{1, 1, 1} || global_size[1] != 1 || global_size[2] != 1;
  if (!gpu) return "[" + std::to_string(global_size[0]) + " x " + std::to_string(iterations) + "]";
  auto three = [](const std::array<int64_t, 3>& a) {
    return std::to_string(a[0]) + "," + std::to_string(a[1]) + "," + std::to_string(a[2]);
  };
  return "[" + three(global_size) + " x " + three(local_size) + "]";
}

// Type tags are fixed numbers, not variant indices, so reordering the variant cannot change keys.
void hash_arg(const Arg& arg, Hasher128& h) {
  std::visit(Overload{
                 [&](std::monostate) { h.add_u64(0); },
                 [&](bool b) { h.add_u64(1); h.add_u64(b); },
                 [&](int64_t v) { h.add_u64(2); h.add_i64(v); },
                 [&](const Float& f) { h.add_u64(3); h.add_u64(f.bits()); },
                 [&](const Invalid&) { h.add_u64(4); },
                 [&](const std::string& s) { h.add_u64(5); h.add_bytes(s); },
                 [&](const IntTuple& t) { h.add_u64(6); hash_tuple(t, h); },
                 [&](Ops op) { h.add_u64(7); h.add_bytes(op_name(op)); },
                 [&](const ReduceArg& r) { h.add_u64(8); h.add_bytes(op_name(r.op)); hash_tuple(r.axes, h); },
                 [&](const RangeArg& r) { h.add_u64(9); h.add_i64(r.axis); h.add_bytes(axis_type_name(r.type)); },
                 [&](const ParamArg& p) {
                   h.add_u64(10); h.add_i64(p.slot); h.add_bytes(addr_space_name(p.addrspace)); h.add_bytes(p.name);
                   h.add_i64(p.vmin); h.add_i64(p.vmax);
                 },
                 [&](const ProgramInfoArg& p) { h.add_u64(11); hash_program_info(p, h); },
             },
             arg);
}

std::string arg_to_string(const Arg& arg) {
  return std::visit(Overload{
                        [](std::monostate) -> std::string { return "None"; },
                        [](bool b) -> std::string { return b ? "True" : "False"; },
                        [](int64_t v) { return std::to_string(v); },
                        [](const Float& f) { return float_to_string(f.value); },
                        [](const Invalid&) -> std::string { return "Invalid"; },
                        [](const std::string& s) { return "\"" + s + "\""; },
                        [](const IntTuple& t) { return tuple_to_string(t); },
                        [](Ops op) { return std::string(op_name(op)); },
                        [](const ReduceArg& r) { return std::string(op_name(r.op)) + " " + tuple_to_string(r.axes); },
                        [](const RangeArg& r) { return std::to_string(r.axis) + " " + std::string(axis_type_name(r.type)); },
                        [](const ParamArg& p) {
                          if (p.addrspace == AddrSpace::ALU)
                            return p.name + "[" + std::to_string(p.vmin) + ".." + std::to_string(p.vmax) + "]";
                          return "param" + std::to_string(p.slot) + " " + std::string(addr_space_name(p.addrspace)) +
                                 (p.name.empty() ? "" : " " + p.name);
                        },
                        [](const ProgramInfoArg& p) -> std::string {
                          if (!p.info) return "ProgramInfo(none)";
                          return p.info->name + " " + p.info->launch_string() + " " + p.info->target;
                        },
                    },
                    arg);
}

}  // namespace doorbell
