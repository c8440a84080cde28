// The grammar tables (compiler/spirv/spirv_grammar.h) against the Khronos grammar they were taken from: Debian's
// spirv-headers, /usr/include/spirv/unified1/spirv.core.grammar.json and extinst.glsl.std.450.grammar.json (read
// here as data; skipped, naming the package, when absent). Every name our lookups know has the grammar's value and
// operand kinds, in the token form spirv_grammar.h describes.
#include "compiler/spirv/spirv_grammar.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/common/json_value.h"

namespace doorbell::spirv {
namespace {

using testing::JsonValue;

constexpr const char* kGrammarDir = "/usr/include/spirv/unified1/";

std::optional<JsonValue> read_grammar(const std::string& file) {
  std::ifstream in(std::string(kGrammarDir) + file);
  if (!in) return std::nullopt;
  std::ostringstream s;
  s << in.rdbuf();
  return testing::parse_json(s.str());
}

// An operand of the grammar as one token of spirv_grammar.h's operand strings.
std::string token_of(const JsonValue& operand) {
  const std::string& kind = operand.at("kind").string;
  std::string t;
  if (kind == "IdResultType")
    t = "T";
  else if (kind == "IdResult")
    t = "R";
  else if (kind == "IdRef" || kind == "IdScope" || kind == "IdMemorySemantics")
    t = "I";
  else if (kind == "LiteralInteger" || kind == "LiteralSpecConstantOpInteger")
    t = "L";
  else if (kind == "LiteralString")
    t = "S";
  else if (kind == "LiteralContextDependentNumber")
    t = "C";
  else if (kind == "LiteralExtInstInteger")
    t = "X";
  else if (kind == "PairLiteralIntegerIdRef")
    t = "LI";
  else if (kind == "PairIdRefLiteralInteger")
    t = "IL";
  else if (kind == "PairIdRefIdRef")
    t = "II";
  else
    t = "{" + kind + "}";
  if (operand.has("quantifier")) t += operand.at("quantifier").string;
  return t;
}

std::string tokens_of(const JsonValue& entry, const char* key) {
  std::string out;
  if (!entry.has(key)) return out;
  for (const JsonValue& o : entry.at(key).array) out += (out.empty() ? "" : " ") + token_of(o);
  return out;
}

uint32_t value_of(const JsonValue& v) {
  return v.kind == JsonValue::Kind::kString ? static_cast<uint32_t>(std::stoul(v.string, nullptr, 0))
                                            : static_cast<uint32_t>(v.number);
}

TEST(SpirvGrammar, OpcodesMatchTheKhronosCoreGrammar) {
  const auto grammar = read_grammar("spirv.core.grammar.json");
  if (!grammar)
    GTEST_SKIP() << kGrammarDir << "spirv.core.grammar.json is absent; install the Debian package spirv-headers";
  std::map<std::string, std::pair<uint32_t, std::string>> by_name;
  for (const JsonValue& inst : grammar->at("instructions").array) {
    by_name[inst.at("opname").string] = {value_of(inst.at("opcode")), tokens_of(inst, "operands")};
  }
  int known = 0;
  for (uint32_t opcode = 0; opcode < 0x10000; ++opcode) {
    const char* name = op_name(static_cast<Op>(opcode));
    if (name == nullptr) continue;
    ++known;
    auto it = by_name.find(name);
    ASSERT_NE(it, by_name.end()) << name << " is not in the grammar";
    EXPECT_EQ(it->second.first, opcode) << name;
    EXPECT_EQ(it->second.second, op_operands(static_cast<Op>(opcode))) << name;
    EXPECT_EQ(op_from_name(name), static_cast<Op>(opcode)) << name;
  }
  EXPECT_GT(known, 200);
  EXPECT_EQ(op_from_name("OpIAdd"), Op::IAdd);
  EXPECT_EQ(op_from_name("IAdd"), std::nullopt);  // names carry the Op prefix
}

TEST(SpirvGrammar, EnumerantsMatchTheKhronosCoreGrammar) {
  const auto grammar = read_grammar("spirv.core.grammar.json");
  if (!grammar)
    GTEST_SKIP() << kGrammarDir << "spirv.core.grammar.json is absent; install the Debian package spirv-headers";
  int checked = 0;
  for (const JsonValue& kind_entry : grammar->at("operand_kinds").array) {
    const auto kind = enum_kind_from_name(kind_entry.at("kind").string);
    if (!kind) continue;
    EXPECT_EQ(is_mask_kind(*kind), kind_entry.at("category").string == "BitEnum") << kind_entry.at("kind").string;
    std::map<std::string, std::pair<uint32_t, std::string>> by_name;
    for (const JsonValue& e : kind_entry.at("enumerants").array) {
      by_name[e.at("enumerant").string] = {value_of(e.at("value")), tokens_of(e, "parameters")};
    }
    // Every value our table names is the grammar's, with the grammar's parameters.
    std::vector<uint32_t> values{0};  // masks: 0 and each bit; value enums: every value up to 0x2000
    for (uint32_t v = 1; v < (is_mask_kind(*kind) ? 33u : 0x2000u); ++v)
      values.push_back(is_mask_kind(*kind) ? uint32_t{1} << (v - 1) : v);
    for (uint32_t value : values) {
      const char* name = enumerant_name(*kind, value);
      if (name == nullptr) continue;
      auto it = by_name.find(name);
      ASSERT_NE(it, by_name.end()) << enum_kind_name(*kind) << " " << name << " is not in the grammar";
      EXPECT_EQ(it->second.first, value) << enum_kind_name(*kind) << " " << name;
      EXPECT_EQ(it->second.second, enumerant_parameters(*kind, value)) << enum_kind_name(*kind) << " " << name;
      ++checked;
    }
    // Every name our table reads (aliases too) has the grammar's value.
    for (const auto& [name, entry] : by_name) {
      if (auto v = enumerant_value(*kind, name)) {
        EXPECT_EQ(*v, entry.first) << enum_kind_name(*kind) << " " << name;
      }
    }
  }
  EXPECT_GT(checked, 300);
  EXPECT_EQ(enumerant_value(EnumKind::kDecoration, "Aligned"), std::nullopt);
  EXPECT_EQ(enumerant_value(EnumKind::kMemoryAccess, "Aligned"), 0x2u);
  EXPECT_STREQ(enumerant_name(EnumKind::kCapability, 0x14e3), "PhysicalStorageBufferAddresses");  // not the EXT alias
}

TEST(SpirvGrammar, GlslStd450MatchesItsExtendedInstructionGrammar) {
  const auto grammar = read_grammar("extinst.glsl.std.450.grammar.json");
  if (!grammar)
    GTEST_SKIP() << kGrammarDir
                 << "extinst.glsl.std.450.grammar.json is absent; install the Debian package spirv-headers";
  int checked = 0;
  for (const JsonValue& inst : grammar->at("instructions").array) {
    const auto op = glsl_from_name(inst.at("opname").string);
    ASSERT_TRUE(op.has_value()) << inst.at("opname").string;
    EXPECT_EQ(static_cast<uint32_t>(*op), value_of(inst.at("opcode"))) << inst.at("opname").string;
    EXPECT_STREQ(glsl_name(*op), inst.at("opname").string.c_str());
    ++checked;
  }
  EXPECT_EQ(checked, 81);
}

}  // namespace
}  // namespace doorbell::spirv
