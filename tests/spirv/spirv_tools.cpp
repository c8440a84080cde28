#include "tests/spirv/spirv_tools.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "compiler/spirv/spirv_module.h"
#include "tests/common/temp_tree.h"

namespace doorbell::testing {
namespace {

std::string read_all(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

int run(const std::string& command) {
  const int status = std::system(command.c_str());
  if (status == -1 || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

}  // namespace

std::optional<std::string> find_spirv_tool(std::string_view name) {
  const char* path = std::getenv("PATH");
  if (path == nullptr) return std::nullopt;
  std::string_view rest(path);
  while (!rest.empty()) {
    const size_t colon = rest.find(':');
    const std::string_view dir = rest.substr(0, colon);
    rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
    if (dir.empty()) continue;
    const std::filesystem::path candidate = std::filesystem::path(dir) / name;
    if (access(candidate.c_str(), X_OK) == 0) return candidate.string();
  }
  return std::nullopt;
}

SpirvToolResult spirv_val(const std::vector<uint32_t>& words) {
  TempTree tree;
  tree.write("module.spv", spirv::words_to_bytes(words));
  SpirvToolResult result;
  const auto tool = find_spirv_tool("spirv-val");
  if (!tool) {
    result.output = "spirv-val is not on PATH";
    return result;
  }
  result.exit_code = run("'" + *tool + "' --target-env vulkan1.2 '" + (tree.root() / "module.spv").string() + "' >'" +
                         (tree.root() / "out.txt").string() + "' 2>&1");
  result.output = read_all(tree.root() / "out.txt");
  return result;
}

SpirvToolResult spirv_as(std::string_view text) {
  TempTree tree;
  tree.write("module.spvasm", text);
  SpirvToolResult result;
  const auto tool = find_spirv_tool("spirv-as");
  if (!tool) {
    result.output = "spirv-as is not on PATH";
    return result;
  }
  result.exit_code =
      run("'" + *tool + "' --target-env vulkan1.2 --preserve-numeric-ids -o '" + (tree.root() / "module.spv").string() +
          "' '" + (tree.root() / "module.spvasm").string() + "' >'" + (tree.root() / "out.txt").string() + "' 2>&1");
  result.output = read_all(tree.root() / "out.txt");
  if (result.exit_code == 0) {
    const std::string bytes = read_all(tree.root() / "module.spv");
    try {
      result.words = spirv::bytes_to_words(bytes);
    } catch (const std::invalid_argument& e) {
      result.exit_code = -1;
      result.output += e.what();
    }
  }
  return result;
}

SpirvToolResult spirv_dis(const std::vector<uint32_t>& words) {
  TempTree tree;
  tree.write("module.spv", spirv::words_to_bytes(words));
  SpirvToolResult result;
  const auto tool = find_spirv_tool("spirv-dis");
  if (!tool) {
    result.output = "spirv-dis is not on PATH";
    return result;
  }
  result.exit_code =
      run("'" + *tool + "' --raw-id --no-color -o '" + (tree.root() / "module.spvasm").string() + "' '" +
          (tree.root() / "module.spv").string() + "' >'" + (tree.root() / "out.txt").string() + "' 2>&1");
  result.output = result.exit_code == 0 ? read_all(tree.root() / "module.spvasm") : read_all(tree.root() / "out.txt");
  return result;
}

}  // namespace doorbell::testing
