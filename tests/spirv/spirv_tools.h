// SPIRV-Tools (Debian package spirv-tools) as the tests' reference: spirv-val judges a module, spirv-as assembles
// our text independently of our assembler. Found on PATH; tests skip (naming the package) when a tool is absent.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace doorbell::testing {

// The tool's full path when it is on PATH.
std::optional<std::string> find_spirv_tool(std::string_view name);

struct SpirvToolResult {
  int exit_code = -1;
  std::string output;           // stdout and stderr together
  std::vector<uint32_t> words;  // spirv-as: the module it wrote
};

// `spirv-val --target-env vulkan1.2` of the words.
SpirvToolResult spirv_val(const std::vector<uint32_t>& words);
// `spirv-as --target-env vulkan1.2 --preserve-numeric-ids` of the text.
SpirvToolResult spirv_as(std::string_view text);
// `spirv-dis --raw-id` of the words: its text in `output`.
SpirvToolResult spirv_dis(const std::vector<uint32_t>& words);

}  // namespace doorbell::testing

// In a TEST: skips it, naming the package, unless the tool is on PATH.
#define DOORBELL_REQUIRE_SPIRV_TOOL(name)                                                                 \
  do {                                                                                                    \
    if (!::doorbell::testing::find_spirv_tool(name)) {                                                    \
      GTEST_SKIP() << name << " is not on PATH; install the Debian package spirv-tools to run this test"; \
    }                                                                                                     \
  } while (0)
