// The SPIR-V module builder (compiler/spirv/spirv_module.h): the header, the instruction words, dedup of types and
// constants, the section order, function variables, and complete modules that spirv-val accepts.
#include "compiler/spirv/spirv_module.h"

#include <gtest/gtest.h>

#include <bit>
#include <cstring>
#include <random>

#include "compiler/spirv/spirv_kernel_abi.h"
#include "compiler/spirv/spirv_literal.h"
#include "tests/common/error_of.h"
#include "tests/spirv/spirv_test_modules.h"
#include "tests/spirv/spirv_tools.h"

namespace doorbell::spirv {
namespace {

using testing::error_of;
using testing::minimal_kernel;

// The instructions of a module's words, as (opcode, word count) in order.
std::vector<std::pair<uint32_t, uint32_t>> instructions(const std::vector<uint32_t>& words) {
  std::vector<std::pair<uint32_t, uint32_t>> out;
  for (size_t i = 5; i < words.size();) {
    const uint32_t count = words[i] >> 16;
    EXPECT_GT(count, 0u) << "a zero word count at word " << i;
    if (count == 0) break;
    out.emplace_back(words[i] & 0xffff, count);
    i += count;
  }
  return out;
}

TEST(SpirvModule, HeaderIsMagicVersionGeneratorBoundSchema) {
  const auto words = minimal_kernel().words();
  ASSERT_GE(words.size(), 5u);
  EXPECT_EQ(words[0], 0x07230203u);
  EXPECT_EQ(words[1], kSpirvVersionWord);
  EXPECT_EQ(words[2], 0u);
  EXPECT_EQ(words[4], 0u);
  // The bound is one more than the largest id used.
  uint32_t largest = 0;
  const auto insts = instructions(words);
  size_t at = 5;
  for (const auto& [opcode, count] : insts) {
    const char* operands = op_operands(static_cast<Op>(opcode));
    ASSERT_NE(operands, nullptr) << "opcode " << opcode;
    if (std::strncmp(operands, "T R", 3) == 0)
      largest = std::max({largest, words[at + 1], words[at + 2]});
    else if (operands[0] == 'R')
      largest = std::max(largest, words[at + 1]);
    at += count;
  }
  EXPECT_EQ(at, words.size()) << "the last instruction's word count overruns the module";
  EXPECT_EQ(words[3], largest + 1);
}

TEST(SpirvModule, InstructionWordIsCountAndOpcodeAndStringsArePaddedWithANul) {
  Module m;
  m.extension("SPV_KHR_a");  // 9 bytes: 3 words with the nul and padding
  m.extension("abc");        // 3 bytes and the nul: exactly 1 word
  m.extension("abcd");       // 4 bytes: a second word holds only the nul
  const auto words = m.words();
  ASSERT_EQ(words.size(), 5u + 4 + 2 + 3);
  EXPECT_EQ(words[5], (4u << 16) | 10u);
  EXPECT_EQ(words[6], 0x5f565053u);  // "SPV_"
  EXPECT_EQ(words[7], 0x5f52484bu);  // "KHR_"
  EXPECT_EQ(words[8], 0x00000061u);  // "a" + nul + padding
  EXPECT_EQ(words[9], (2u << 16) | 10u);
  EXPECT_EQ(words[10], 0x00636261u);  // "abc" + nul
  EXPECT_EQ(words[11], (3u << 16) | 10u);
  EXPECT_EQ(words[12], 0x64636261u);  // "abcd"
  EXPECT_EQ(words[13], 0u);           // the nul, padded
}

TEST(SpirvModule, TypesAreMadeOnceAndStructsAlwaysNew) {
  Module m;
  const Id u32 = m.type_int(32, false);
  EXPECT_EQ(m.type_int(32, false), u32);
  EXPECT_NE(m.type_int(32, true), u32);
  const Id f32 = m.type_float(32);
  EXPECT_EQ(m.type_float(32), f32);
  EXPECT_EQ(m.type_pointer(StorageClass::Workgroup, f32), m.type_pointer(StorageClass::Workgroup, f32));
  EXPECT_NE(m.type_pointer(StorageClass::Workgroup, f32), m.type_pointer(StorageClass::Function, f32));
  EXPECT_EQ(m.type_vector(f32, 4), m.type_vector(f32, 4));
  EXPECT_EQ(m.type_function(m.type_void(), {u32}), m.type_function(m.type_void(), {u32}));
  EXPECT_NE(m.type_struct({u32}), m.type_struct({u32}));
  EXPECT_EQ(m.ext_inst_import("GLSL.std.450"), m.ext_inst_import("GLSL.std.450"));
}

TEST(SpirvModule, ConstantsAreMadeOncePerTypeAndBits) {
  Module m;
  const Id u32 = m.type_int(32, false);
  const Id i32 = m.type_int(32, true);
  const Id f32 = m.type_float(32);
  EXPECT_EQ(m.constant(u32, 7), m.constant(u32, 7));
  EXPECT_NE(m.constant(u32, 7), m.constant(i32, 7));  // same bits, two types: two ids
  EXPECT_NE(m.constant(u32, 0), m.constant(f32, 0));
  EXPECT_EQ(m.constant_bool(true), m.constant_bool(true));
  EXPECT_NE(m.constant_bool(true), m.constant_bool(false));
  EXPECT_EQ(m.constant_null(f32), m.constant_null(f32));
  EXPECT_NE(m.constant_null(f32), m.constant(f32, 0));
  const Id v2 = m.type_vector(u32, 2);
  EXPECT_EQ(m.constant_composite(v2, {m.constant(u32, 1), m.constant(u32, 2)}),
            m.constant_composite(v2, {m.constant(u32, 1), m.constant(u32, 2)}));
  EXPECT_NE(error_of([&] { m.constant(v2, 1); }).find("expected an OpTypeInt or OpTypeFloat"), std::string::npos);
}

TEST(SpirvModule, NarrowSignedConstantsAreSignExtendedAndWideOnesTakeTwoWordsLowFirst) {
  Module m;
  const Id i8 = m.type_int(8, true);
  const Id u16 = m.type_int(16, false);
  const Id u64 = m.type_int(64, false);
  const Id f16 = m.type_float(16);
  m.constant(i8, 0x80);                       // -128
  m.constant(u16, 0xffff);                    // 65535: high bits zero
  m.constant(u64, 0x1122334455667788ull);     // low word first
  m.constant(f16, 0x8000);                    // -0.0 half: high bits zero
  m.constant(i8, static_cast<uint64_t>(-1));  // bits past the width are dropped: -1 as int8
  const auto words = m.words();
  std::vector<std::vector<uint32_t>> literals;
  for (size_t i = 5; i < words.size(); i += words[i] >> 16) {
    if ((words[i] & 0xffff) == static_cast<uint32_t>(Op::Constant)) {
      literals.emplace_back(words.begin() + static_cast<std::ptrdiff_t>(i) + 3,
                            words.begin() + static_cast<std::ptrdiff_t>(i + (words[i] >> 16)));
    }
  }
  ASSERT_EQ(literals.size(), 5u);
  EXPECT_EQ(literals[0], (std::vector<uint32_t>{0xffffff80u}));
  EXPECT_EQ(literals[1], (std::vector<uint32_t>{0x0000ffffu}));
  EXPECT_EQ(literals[2], (std::vector<uint32_t>{0x55667788u, 0x11223344u}));
  EXPECT_EQ(literals[3], (std::vector<uint32_t>{0x00008000u}));
  EXPECT_EQ(literals[4], (std::vector<uint32_t>{0xffffffffu}));
}

TEST(SpirvModule, SectionsFollowTheLogicalLayoutWhateverTheOrderOfCalls) {
  const auto insts = instructions(minimal_kernel().words());
  // The first section each opcode belongs to, in the order of specification 2.4.
  auto section_of = [](uint32_t opcode) {
    switch (static_cast<Op>(opcode)) {
      case Op::Capability:
        return 0;
      case Op::Extension:
        return 1;
      case Op::ExtInstImport:
        return 2;
      case Op::MemoryModel:
        return 3;
      case Op::EntryPoint:
        return 4;
      case Op::ExecutionMode:
        return 5;
      case Op::Name:
        return 6;
      case Op::Decorate:
      case Op::MemberDecorate:
        return 7;
      case Op::Function:
        return 9;
      default:
        return -1;
    }
  };
  int last = 0;
  int capabilities = 0;
  bool in_functions = false;
  for (const auto& [opcode, count] : insts) {
    int section = section_of(opcode);
    if (section == -1) section = in_functions ? 9 : 8;  // types, constants, globals; then function bodies
    if (section == 9) in_functions = true;
    EXPECT_GE(section, last) << op_name(static_cast<Op>(opcode)) << " after section " << last;
    last = std::max(last, section);
    capabilities += opcode == static_cast<uint32_t>(Op::Capability);
  }
  EXPECT_EQ(capabilities, 3);  // Shader asked twice
}

TEST(SpirvModule, FunctionVariableMadeMidFunctionLandsAtTheTopOfTheFirstBlock) {
  const auto insts = instructions(minimal_kernel().words());
  size_t label = 0;
  while (label < insts.size() && insts[label].first != static_cast<uint32_t>(Op::Label)) ++label;
  ASSERT_LT(label + 1, insts.size());
  EXPECT_EQ(insts[label + 1].first, static_cast<uint32_t>(Op::Variable));
}

TEST(SpirvModule, AnOpVariableMadeThroughOpInALaterBlockIsHoistedToo) {
  Module m;
  m.capability(Capability::Shader);
  m.memory_model(AddressingModel::Logical, MemoryModel::GLSL450);
  const Id t_void = m.type_void();
  const Id t_u32 = m.type_int(32, false);
  const Id t_ptr = m.type_pointer(StorageClass::Function, t_u32);
  const Id fn = m.begin_function(t_void, m.type_function(t_void, {}));
  m.label();
  const Id next = m.new_id();
  m.op_void(Op::Branch, {Operand::id(next)});
  m.label(next);
  const Id var = m.op(Op::Variable, t_ptr, {Operand::e(StorageClass::Function)});
  m.op_void(Op::Store, {Operand::id(var), Operand::id(m.constant(t_u32, 3))});
  m.op_void(Op::Return);
  m.end_function();
  m.entry_point(ExecutionModel::GLCompute, fn, "main", {});
  m.execution_mode(fn, ExecutionMode::LocalSize, {1, 1, 1});
  const auto insts = instructions(m.words());
  size_t label = 0;
  while (label < insts.size() && insts[label].first != static_cast<uint32_t>(Op::Label)) ++label;
  ASSERT_LT(label + 1, insts.size());
  EXPECT_EQ(insts[label + 1].first, static_cast<uint32_t>(Op::Variable));
  if (testing::find_spirv_tool("spirv-val")) {
    const auto result = testing::spirv_val(m.words());
    EXPECT_EQ(result.exit_code, 0) << result.output << m.text();
  }
}

TEST(SpirvModule, MinimalPhysicalStorageBufferKernelPassesSpirvVal) {
  DOORBELL_REQUIRE_SPIRV_TOOL("spirv-val");
  const auto result = testing::spirv_val(minimal_kernel().words());
  EXPECT_EQ(result.exit_code, 0) << result.output;
}

TEST(SpirvModule, SpirvValRejectsAKernelWithoutItsMemoryModel) {
  // The check above can fail: the same kernel without OpMemoryModel is refused.
  DOORBELL_REQUIRE_SPIRV_TOOL("spirv-val");
  auto words = minimal_kernel().words();
  for (size_t i = 5; i < words.size(); i += words[i] >> 16) {
    if ((words[i] & 0xffff) == static_cast<uint32_t>(Op::MemoryModel)) {
      words.erase(words.begin() + static_cast<std::ptrdiff_t>(i), words.begin() + static_cast<std::ptrdiff_t>(i + 3));
      break;
    }
  }
  const auto result = testing::spirv_val(words);
  EXPECT_NE(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("memory model"), std::string::npos) << result.output;
}

TEST(SpirvModule, MisuseThrowsNamingTheCall) {
  Module m;
  const Id t_void = m.type_void();
  EXPECT_NE(error_of<std::logic_error>([&] { m.label(); }).find("label outside a function"), std::string::npos);
  EXPECT_NE(error_of<std::logic_error>([&] { m.op_void(Op::Return); }).find("OpReturn outside a function"),
            std::string::npos);
  EXPECT_NE(error_of([&] { m.type_int(7, false); }).find("OpTypeInt width 7"), std::string::npos);
  EXPECT_NE(
      error_of([&] { m.decorate(t_void, Decoration::Offset); }).find("Decoration Offset takes parameters 'L'; got 0"),
      std::string::npos);
  m.begin_function(t_void, m.type_function(t_void, {}));
  EXPECT_NE(error_of<std::logic_error>([&] { (void)m.words(); }).find("inside a function"), std::string::npos);
  EXPECT_NE(error_of<std::logic_error>([&] { m.end_function(); }).find("without a block"), std::string::npos);
  m.label();
  m.op_void(Op::Return);
  m.end_function();
  EXPECT_NO_THROW((void)m.words());
}

TEST(SpirvModule, WordsToBytesIsLittleEndianAndBackChecksLengthAndMagic) {
  const auto words = minimal_kernel().words();
  const std::string bytes = words_to_bytes(words);
  ASSERT_EQ(bytes.size(), words.size() * 4);
  EXPECT_EQ(static_cast<unsigned char>(bytes[0]), 0x03);
  EXPECT_EQ(static_cast<unsigned char>(bytes[3]), 0x07);
  EXPECT_EQ(bytes_to_words(bytes), words);
  EXPECT_NE(error_of([&] { bytes_to_words(bytes.substr(0, 6)); }).find("multiple of 4"), std::string::npos);
  EXPECT_NE(error_of([&] { bytes_to_words(std::string(8, '\0')); }).find("magic number"), std::string::npos);
  EXPECT_NE(error_of([&] { bytes_to_words(""); }).find("magic number"), std::string::npos);
}

// The words with the generator word (header word 2) set to ours, 0: SPIRV-Tools writes its own tool id there.
std::vector<uint32_t> with_our_generator(std::vector<uint32_t> words) {
  if (words.size() > 2) words[2] = 0;
  return words;
}

TEST(SpirvModule, EveryTestModulePassesSpirvVal) {
  DOORBELL_REQUIRE_SPIRV_TOOL("spirv-val");
  for (const auto& [name, module] : testing::all_test_modules()) {
    const auto result = testing::spirv_val(module.words());
    EXPECT_EQ(result.exit_code, 0) << name << ":\n" << result.output << "\n" << module.text();
  }
}

TEST(SpirvModule, TextAssemblesBackToTheSameWords) {
  for (const auto& [name, module] : testing::all_test_modules()) {
    EXPECT_EQ(assemble(module.text()), module.words()) << name << ":\n" << module.text();
  }
}

TEST(SpirvModule, SpirvAsOfOurTextGivesOurWords) {
  DOORBELL_REQUIRE_SPIRV_TOOL("spirv-as");
  for (const auto& [name, module] : testing::all_test_modules()) {
    const auto result = testing::spirv_as(module.text());
    ASSERT_EQ(result.exit_code, 0) << name << ":\n" << result.output;
    EXPECT_EQ(with_our_generator(result.words), module.words()) << name << ":\n" << module.text();
  }
}

TEST(SpirvModule, OurAssemblerReadsSpirvDisTextOfOurWords) {
  DOORBELL_REQUIRE_SPIRV_TOOL("spirv-dis");
  for (const auto& [name, module] : testing::all_test_modules()) {
    const auto result = testing::spirv_dis(module.words());
    ASSERT_EQ(result.exit_code, 0) << name << ":\n" << result.output;
    EXPECT_EQ(assemble(result.output), module.words()) << name << ":\n" << result.output;
  }
}

// The literal text() prints for constant `bits` of the scalar type made by `make`.
template <class MakeType>
std::string literal_text(MakeType make, uint64_t bits) {
  Module m;
  const Id type = make(m);
  const Id c = m.constant(type, bits);
  const std::string text = m.text();
  const std::string prefix = "%" + std::to_string(c) + " = OpConstant %" + std::to_string(type) + " ";
  const size_t at = text.find(prefix);
  if (at == std::string::npos) return "<no constant in:\n" + text + ">";
  return text.substr(at + prefix.size(), text.find('\n', at) - at - prefix.size());
}

TEST(SpirvModule, ConstantsAtTheEdgesPrintExactly) {
  auto i8 = [](Module& m) { return m.type_int(8, true); };
  auto i64 = [](Module& m) { return m.type_int(64, true); };
  auto u64 = [](Module& m) { return m.type_int(64, false); };
  auto f16 = [](Module& m) { return m.type_float(16); };
  auto f32 = [](Module& m) { return m.type_float(32); };
  auto f64 = [](Module& m) { return m.type_float(64); };
  EXPECT_EQ(literal_text(i8, 0x80), "-128");
  EXPECT_EQ(literal_text(i8, 0x7f), "127");
  EXPECT_EQ(literal_text(i64, 0x8000000000000000ull), "-9223372036854775808");
  EXPECT_EQ(literal_text(u64, ~uint64_t{0}), "18446744073709551615");
  EXPECT_EQ(literal_text(f32, 0x80000000u), "-0x0p+0");
  EXPECT_EQ(literal_text(f32, 0x00000001u), "0x1p-149");
  EXPECT_EQ(literal_text(f32, 0x3fc00000u), "0x1.8p+0");
  EXPECT_EQ(literal_text(f32, 0x7f800000u), "0x1p+128");
  EXPECT_EQ(literal_text(f32, 0xff800000u), "-0x1p+128");
  EXPECT_EQ(literal_text(f32, 0x7fc00000u), "0x1.8p+128");
  EXPECT_EQ(literal_text(f32, 0xff800001u), "-0x1.000002p+128");
  EXPECT_EQ(literal_text(f16, 0x8000), "-0x0p+0");
  EXPECT_EQ(literal_text(f16, 0x0001), "0x1p-24");
  EXPECT_EQ(literal_text(f16, 0x7c01), "0x1.004p+16");
  EXPECT_EQ(literal_text(f64, 0x0000000000000001ull), "0x1p-1074");
  EXPECT_EQ(literal_text(f64, 0x7ff0000000000001ull), "0x1.0000000000001p+1024");
  EXPECT_EQ(literal_text(f64, 0x8000000000000000ull), "-0x0p+0");
}

TEST(SpirvModule, SwitchCaseLiteralsPrintAsTheSelectorsType) {
  const std::string text = testing::switch_kernel().text();
  EXPECT_NE(text.find(" -1 %"), std::string::npos) << text;
  EXPECT_NE(text.find(" -9223372036854775808 %"), std::string::npos) << text;
  EXPECT_NE(text.find(" -2 %"), std::string::npos) << text;
}

TEST(SpirvModule, EveryFloatBitPatternRoundTripsThroughItsLiteral) {
  std::mt19937_64 random(7);
  for (uint32_t width : {16u, 32u, 64u}) {
    const uint64_t mask = width == 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1;
    const int count = width == 16 ? 65536 : 20000;
    for (int i = 0; i < count; ++i) {
      const uint64_t bits = width == 16 ? static_cast<uint64_t>(i) : random() & mask;
      const std::string text = format_float_literal(bits, width);
      uint64_t back = 0;
      std::string error;
      ASSERT_TRUE(parse_float_literal(text, width, back, error)) << text << ": " << error;
      ASSERT_EQ(back, bits) << width << "-bit " << text;
    }
  }
}

TEST(SpirvModule, HexFloatsMustBeExactAndDecimalsRoundToNearest) {
  uint64_t bits = 0;
  std::string error;
  ASSERT_TRUE(parse_float_literal("0x1.fffffcp-127", 32, bits, error)) << error;  // max denormal, written normal
  EXPECT_EQ(bits, 0x007fffffu);
  ASSERT_TRUE(parse_float_literal("0x10p-4", 32, bits, error)) << error;  // any leading digit
  EXPECT_EQ(bits, 0x3f800000u);
  ASSERT_TRUE(parse_float_literal("0x0.000002p-126", 32, bits, error)) << error;  // the min denormal, written small
  EXPECT_EQ(bits, 0x00000001u);
  ASSERT_TRUE(parse_float_literal("-0x1.fffffffffffffp+1023", 64, bits, error)) << error;
  EXPECT_EQ(bits, 0xffefffffffffffffull);
  ASSERT_TRUE(parse_float_literal("-2.5", 64, bits, error)) << error;
  EXPECT_EQ(bits, std::bit_cast<uint64_t>(-2.5));
  ASSERT_TRUE(parse_float_literal("0.1", 32, bits, error)) << error;
  EXPECT_EQ(bits, std::bit_cast<uint32_t>(0.1f));
  // Inexact hex floats: spirv-as would truncate them, IEEE would round; refused.
  for (const char* inexact : {"0x1.000001p+0", "0x1.000003p+0", "0x1.8p-149", "0x1p-150", "0x1.fffffffp+127"}) {
    EXPECT_FALSE(parse_float_literal(inexact, 32, bits, error)) << inexact;
    EXPECT_NE(error.find("exact in a 32-bit float"), std::string::npos) << inexact << ": " << error;
  }
  EXPECT_FALSE(parse_float_literal("0x1p+129", 32, bits, error));
  EXPECT_NE(error.find("past 128"), std::string::npos) << error;
  EXPECT_FALSE(parse_float_literal("0x1.0000001p+128", 32, bits, error));  // a NaN payload wider than 23 bits
  EXPECT_FALSE(parse_float_literal("1.5", 16, bits, error));
  EXPECT_FALSE(parse_float_literal("0x1.8", 32, bits, error));
  EXPECT_FALSE(parse_float_literal("nan", 32, bits, error));
  EXPECT_FALSE(parse_float_literal("1e39", 32, bits, error));
}

}  // namespace
}  // namespace doorbell::spirv
