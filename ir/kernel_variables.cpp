#include "ir/kernel_variables.h"

#include <map>
#include <stdexcept>
#include <string>

namespace doorbell {

std::vector<UOp> kernel_variables(const UOp& sink) {
  std::map<std::string, UOp> by_name;
  for (const UOp& u : sink.toposort())
    if (u.op() == Ops::PARAM && u.arg_as<ParamArg>().addrspace == AddrSpace::ALU) {
      auto [it, fresh] = by_name.emplace(u.arg_as<ParamArg>().name, u);
      if (!fresh && !(it->second == u))
        throw std::invalid_argument("kernel variables: two variables named '" + it->first + "' with other bounds or dtypes in one kernel");
    }
  std::vector<UOp> out;
  for (auto& [name, u] : by_name) out.push_back(u);
  return out;
}

}  // namespace doorbell
