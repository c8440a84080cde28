// Our SPIR-V assembler (assemble() in compiler/spirv/spirv_module.h): operands read by the grammar's operand kinds,
// literals by their result type, errors that name the line, the text and what was expected, and no crash on any text.
#include <gtest/gtest.h>

#include <random>

#include "compiler/spirv/spirv_module.h"
#include "tests/spirv/spirv_test_modules.h"

namespace doorbell::spirv {
namespace {

// The words of the instructions after the 5 header words.
std::vector<uint32_t> body(const std::vector<uint32_t>& words) {
  return std::vector<uint32_t>(words.begin() + 5, words.end());
}

std::string assembly_error(std::string_view text) {
  try {
    assemble(text);
  } catch (const SpirvAssemblyError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a SpirvAssemblyError for:\n" << text;
  return "";
}

TEST(SpirvAssembler, TheSameNameReadsByItsOperandKind) {
  // "Aligned" is a Decoration nowhere and a MemoryAccess bit in OpLoad; "Volatile" is both a Decoration and a
  // MemoryAccess bit, with different values.
  const auto words =
      body(assemble("OpDecorate %1 Volatile\n"
                    "%3 = OpLoad %2 %1 Volatile|Aligned 16\n"));
  const std::vector<uint32_t> expected{(3u << 16) | 71, 1, 0x15,               // OpDecorate %1 Volatile (21)
                                       (6u << 16) | 61, 2, 3,    1, 0x3, 16};  // OpLoad ... Volatile|Aligned 16
  EXPECT_EQ(words, expected);
  EXPECT_NE(assembly_error("OpDecorate %1 Aligned 4\n").find("unknown Decoration 'Aligned'"), std::string::npos);
}

TEST(SpirvAssembler, EnumerantParametersFollowTheirEnumerant) {
  const auto words =
      body(assemble("OpExecutionMode %1 LocalSize 8 4 2\n"
                    "OpDecorate %2 BuiltIn GlobalInvocationId\n"
                    "OpLoopMerge %3 %4 DontUnroll|DependencyLength|MinIterations 7 9\n"));
  const std::vector<uint32_t> expected{
      (6u << 16) | 16, 1, 0x11, 8, 4, 2, (4u << 16) | 71, 2, 0xb, 0x1c, (6u << 16) | 246, 3, 4, 0x2 | 0x8 | 0x10, 7, 9};
  EXPECT_EQ(words, expected);
}

TEST(SpirvAssembler, ConstantLiteralsTakeTheirWidthFromTheResultType) {
  const auto words =
      body(assemble("%1 = OpTypeInt 8 1\n"
                    "%2 = OpConstant %1 -128\n"
                    "%3 = OpTypeInt 64 0\n"
                    "%4 = OpConstant %3 0x1122334455667788\n"
                    "%5 = OpTypeFloat 16\n"
                    "%6 = OpConstant %5 -0x0p+0\n"
                    "%7 = OpTypeFloat 32\n"
                    "%8 = OpConstant %7 1.5\n"
                    "%9 = OpTypeInt 16 0\n"
                    "%10 = OpConstant %9 65535\n"));
  const std::vector<uint32_t> expected{(4u << 16) | 21,
                                       1,
                                       8,
                                       1,
                                       (4u << 16) | 43,
                                       1,
                                       2,
                                       0xffffff80u,
                                       (4u << 16) | 21,
                                       3,
                                       64,
                                       0,
                                       (5u << 16) | 43,
                                       3,
                                       4,
                                       0x55667788u,
                                       0x11223344u,
                                       (3u << 16) | 22,
                                       5,
                                       16,
                                       (4u << 16) | 43,
                                       5,
                                       6,
                                       0x8000u,
                                       (3u << 16) | 22,
                                       7,
                                       32,
                                       (4u << 16) | 43,
                                       7,
                                       8,
                                       0x3fc00000u,
                                       (4u << 16) | 21,
                                       9,
                                       16,
                                       0,
                                       (4u << 16) | 43,
                                       9,
                                       10,
                                       0xffffu};
  EXPECT_EQ(words, expected);
}

TEST(SpirvAssembler, StringsCommentsAndLinesAreReadAsSpirvAsReadsThem) {
  const auto words = assemble(
      "; a comment\n"
      "   OpName %1 \"a \\\"b\\\" \\\\ c\" ; after\n"
      "OpName %2\n \"two\nlines\"\n"
      "%3 = OpExtInstImport \"GLSL.std.450\" %4 = OpTypeFloat 32\n");
  Module m;
  m.name(1, "a \"b\" \\ c");
  m.name(2, "two\nlines");
  const auto names = body(m.words());
  const auto ours = body(words);
  ASSERT_GE(ours.size(), names.size());
  EXPECT_EQ(std::vector<uint32_t>(ours.begin(), ours.begin() + static_cast<std::ptrdiff_t>(names.size())), names);
  EXPECT_EQ(words[3], 5u);  // the bound: largest id 4, plus 1
}

TEST(SpirvAssembler, ExtendedInstructionsByNameOrNumber) {
  const auto words =
      body(assemble("%1 = OpExtInstImport \"GLSL.std.450\"\n"
                    "%4 = OpExtInst %2 %1 Sqrt %3\n"
                    "%5 = OpExtInst %2 %1 31 %3\n"));
  ASSERT_EQ(words.size(), 6u + 6 + 6);  // OpExtInstImport: 2 words and 4 of "GLSL.std.450"
  EXPECT_EQ(std::vector<uint32_t>(words.begin() + 6, words.begin() + 12),
            (std::vector<uint32_t>{(6u << 16) | 12, 2, 4, 1, 31, 3}));
  EXPECT_EQ(std::vector<uint32_t>(words.begin() + 12, words.end()),
            (std::vector<uint32_t>{(6u << 16) | 12, 2, 5, 1, 31, 3}));
  EXPECT_NE(assembly_error("%4 = OpExtInst %2 %1 Sqrt %3\n").find("unknown extended instruction 'Sqrt'"),
            std::string::npos);
}

struct ErrorCase {
  const char* text;
  int line;
  const char* expected;  // a part of the message
};

TEST(SpirvAssembler, ErrorsNameTheLineTheTextAndWhatWasExpected) {
  const ErrorCase cases[] = {
      {"OpCapability Shader\nOpFoo %1\n", 2, "unknown opcode 'OpFoo'"},
      {"%1 = OpTypeInt 32\n", 1, "too few operands: expected a literal integer of OpTypeInt before the end"},
      {"%1 = OpTypeInt 32\n%2 = OpTypeVoid\n", 1,
       "too few operands: expected a literal integer of OpTypeInt, got '%2'"},
      {"%1 = OpTypeInt 32 0 5\n", 1,
       "too many operands for OpTypeInt (operands 'R L L'); expected the next instruction, got '5'"},
      {"OpCapability Shadr\n", 1, "unknown Capability 'Shadr'"},
      {"OpMemoryModel Logical GLSL451\n", 1, "unknown MemoryModel 'GLSL451'"},
      {"%3 = OpLoad %2 %1 Volatile|Bogus\n", 1, "unknown MemoryAccess 'Bogus'"},
      {"%1 = OpTypeVoid\n%2 = OpConstant %1 5\n", 2,
       "OpConstant: result type %1 is not an OpTypeInt or OpTypeFloat defined earlier"},
      {"%2 = OpConstant %1 5\n", 1, "result type %1 is not an OpTypeInt or OpTypeFloat defined earlier"},
      {"OpExtension \"SPV_KHR_storage_buffer_storage_class\n", 1, "a string without its closing quote"},
      {"OpExtension SPV_KHR\n", 1, "expected a quoted string of OpExtension, got 'SPV_KHR'"},
      {"OpName \"x\" \"y\"\n", 1, "expected an id operand of OpName (an id %<number>), got a string"},
      {"OpName %1 \"x\"\"y\"\n", 1, "text right after a string's closing quote"},
      {"%1 OpTypeVoid\n", 1, "expected '=' after the result id %1"},
      {"%1 = OpReturn\n", 1, "OpReturn has no result; expected it without '%1 ='"},
      {"OpTypeVoid\n", 1, "OpTypeVoid makes a result; expected '%<id> = OpTypeVoid ...'"},
      {"%1 = OpTypeVoid\n%1 = OpTypeBool\n", 2, "%1 is defined twice"},
      {"%1 = OpTypeInt 8 1\n%2 = OpConstant %1 128\n", 2,
       "expected a signed 8-bit integer (an unsigned integer up to 127), got '128'"},
      {"%1 = OpTypeInt 8 1\n%2 = OpConstant %1 -129\n", 2,
       "expected a signed 8-bit integer (an unsigned integer up to 128), got '129'"},
      {"%1 = OpTypeInt 32 0\n%2 = OpConstant %1 -1\n", 2, "expected an unsigned 32-bit integer, got '-1'"},
      {"%1 = OpTypeFloat 32\n%2 = OpConstant %1 1.5x\n", 2, "expected a float literal"},
      {"%1 = OpTypeFloat 32\n%2 = OpConstant %1 0x1p+129\n", 2, "exponent 129 is past 128"},
      {"%1 = OpTypeFloat 16\n%2 = OpConstant %1 0.5\n", 2, "expected a hex float (0x1.8p+0) for a 16-bit float"},
      {"%abc = OpTypeVoid\n", 1, "expected a result id (an id %<number> from 1 to 4294967294), got '%abc'"},
      {"%0 = OpTypeVoid\n", 1, "got '%0'"},
      {"%1 = OpTypeInt 4294967296 0\n", 1, "(an unsigned integer up to 4294967295), got '4294967296'"},
      {"OpDecorate %1 LinkageAttributes \"f\" Export\n", 1, "operand kind LinkageType is not in the grammar tables"},
      {"\"lonely\"\n", 1, "expected an instruction ('OpX ...' or '%<id> = OpX ...'), got a string"},
      {"5\n", 1, "expected an instruction ('OpX ...' or '%<id> = OpX ...'), got '5'"},
      {"OpSwitch %9 %2 1 %3\n", 1, "OpSwitch: selector %9 has no OpTypeInt type defined earlier"},
      {"%1 = OpTypeInt 8 0\n%2 = OpConstant %1 1\nOpSwitch %2 %3 256 %4\n", 3,
       "expected an unsigned 8-bit integer (an unsigned integer up to 255), got '256'"},
  };
  for (const ErrorCase& c : cases) {
    const std::string message = assembly_error(c.text);
    const std::string line = "SPIR-V assembly line " + std::to_string(c.line) + " (`";
    EXPECT_EQ(message.rfind(line, 0), 0u) << "text:\n" << c.text << "message: " << message;
    EXPECT_NE(message.find(c.expected), std::string::npos) << "text:\n" << c.text << "message: " << message;
  }
  // The message quotes the offending line as written.
  EXPECT_NE(assembly_error("OpCapability Shader\n   OpFoo %1 ; x\n").find("line 2 (`OpFoo %1 ; x`)"),
            std::string::npos);
}

TEST(SpirvAssembler, MangledTextsAssembleOrThrowSpirvAssemblyErrorNeverAnythingElse) {
  std::vector<std::string> texts;
  for (const auto& named : testing::all_test_modules()) texts.push_back(named.module.text());
  std::mt19937 random(19);
  const std::string noise = "%=\"\\|;\n -0x1p.+9OpAligned{}";
  int assembled = 0, refused = 0;
  for (int round = 0; round < 1000; ++round) {
    std::string text = texts[static_cast<size_t>(round) % texts.size()];
    const int edits = 1 + static_cast<int>(random() % 4);
    for (int e = 0; e < edits && !text.empty(); ++e) {
      const size_t at = random() % text.size();
      switch (random() % 5) {
        case 0:
          text.erase(at, 1 + random() % 12);
          break;  // delete a run
        case 1:
          text.insert(at, 1, noise[random() % noise.size()]);
          break;  // insert a special character
        case 2:
          text[at] = static_cast<char>(random() % 256);
          break;  // any byte
        case 3:
          text.insert(at, text.substr(random() % text.size(), 1 + random() % 20));
          break;  // duplicate a run
        case 4:
          text.resize(at);
          break;  // truncate
      }
    }
    try {
      const auto words = assemble(text);
      ASSERT_GE(words.size(), 5u);
      ++assembled;
    } catch (const SpirvAssemblyError& e) {
      ASSERT_EQ(std::string(e.what()).rfind("SPIR-V assembly line ", 0), 0u) << e.what();
      ++refused;
    } catch (const std::exception& e) {
      FAIL() << "not a SpirvAssemblyError: " << e.what() << "\nfor:\n" << text;
    }
  }
  // Both outcomes occur: the mangling neither always breaks nor never breaks the text.
  EXPECT_GT(assembled, 0);
  EXPECT_GT(refused, 0);
}

}  // namespace
}  // namespace doorbell::spirv
