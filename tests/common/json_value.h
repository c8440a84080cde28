// A small JSON reader for tests that check files the project writes (trace-event files, reports): objects, arrays,
// strings (with \" \\ \/ \b \f \n \r \t \uXXXX escapes, the latter kept as '?' beyond ASCII), numbers, true, false,
// null. parse_json throws std::runtime_error naming the byte offset and what was expected.
#pragma once
#include <cstdlib>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace doorbell::testing {

struct JsonValue {
  enum class Kind { kNull, kBool, kNumber, kString, kArray, kObject };
  Kind kind = Kind::kNull;
  bool boolean = false;
  double number = 0;
  std::string string;
  std::vector<JsonValue> array;
  std::map<std::string, JsonValue> object;

  bool has(const std::string& key) const { return kind == Kind::kObject && object.count(key) != 0; }
  // The member `key` of an object; throws naming the key when it is missing or this is not an object.
  const JsonValue& at(const std::string& key) const {
    if (kind != Kind::kObject) throw std::runtime_error("json: '" + key + "' asked of a value that is not an object");
    auto it = object.find(key);
    if (it == object.end()) throw std::runtime_error("json: no member '" + key + "'");
    return it->second;
  }
};

namespace json_detail {

class Reader {
 public:
  explicit Reader(std::string_view text) : text_(text) {}

  JsonValue document() {
    JsonValue v = value();
    skip_space();
    if (pos_ != text_.size()) fail("the end of the text");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& expected) const {
    throw std::runtime_error("json: at byte " + std::to_string(pos_) + ": expected " + expected);
  }
  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\n' || text_[pos_] == '\r' || text_[pos_] == '\t')) pos_++;
  }
  bool eat(char c) {
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == c) {
      pos_++;
      return true;
    }
    return false;
  }
  void expect(char c) {
    if (!eat(c)) fail(std::string("'") + c + "'");
  }
  bool word(std::string_view w) {
    if (text_.substr(pos_, w.size()) != w) return false;
    pos_ += w.size();
    return true;
  }

  JsonValue value() {
    skip_space();
    if (pos_ >= text_.size()) fail("a value");
    JsonValue v;
    const char c = text_[pos_];
    if (c == '{') {
      pos_++;
      v.kind = JsonValue::Kind::kObject;
      if (eat('}')) return v;
      do {
        skip_space();
        std::string key = string();
        expect(':');
        v.object[key] = value();
      } while (eat(','));
      expect('}');
    } else if (c == '[') {
      pos_++;
      v.kind = JsonValue::Kind::kArray;
      if (eat(']')) return v;
      do v.array.push_back(value());
      while (eat(','));
      expect(']');
    } else if (c == '"') {
      v.kind = JsonValue::Kind::kString;
      v.string = string();
    } else if (word("true") || word("false")) {
      v.kind = JsonValue::Kind::kBool;
      v.boolean = text_[pos_ - 1] == 'e' && text_[pos_ - 2] == 'u';
    } else if (word("null")) {
      v.kind = JsonValue::Kind::kNull;
    } else {
      v.kind = JsonValue::Kind::kNumber;
      v.number = number();
    }
    return v;
  }

  std::string string() {
    if (pos_ >= text_.size() || text_[pos_] != '"') fail("a string");
    pos_++;
    std::string out;
    while (pos_ < text_.size() && text_[pos_] != '"') {
      char c = text_[pos_++];
      if (static_cast<unsigned char>(c) < 0x20) fail("no control character inside a string");
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= text_.size()) fail("an escape");
      c = text_[pos_++];
      switch (c) {
        case '"': case '\\': case '/': out += c; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          if (pos_ + 4 > text_.size()) fail("four hex digits");
          const std::string hex(text_.substr(pos_, 4));
          char* end = nullptr;
          const long code = std::strtol(hex.c_str(), &end, 16);
          if (end != hex.c_str() + 4) fail("four hex digits");
          pos_ += 4;
          out += code < 0x80 ? static_cast<char>(code) : '?';
          break;
        }
        default: fail("an escape (\\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u)");
      }
    }
    if (pos_ >= text_.size()) fail("the closing '\"' of a string");
    pos_++;
    return out;
  }

  double number() {
    const size_t begin = pos_;
    if (pos_ < text_.size() && text_[pos_] == '-') pos_++;
    auto digits = [&] {
      const size_t from = pos_;
      while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') pos_++;
      if (pos_ == from) fail("a digit");
    };
    digits();
    if (pos_ < text_.size() && text_[pos_] == '.') {
      pos_++;
      digits();
    }
    if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
      pos_++;
      if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-')) pos_++;
      digits();
    }
    return std::strtod(std::string(text_.substr(begin, pos_ - begin)).c_str(), nullptr);
  }

  std::string_view text_;
  size_t pos_ = 0;
};

}  // namespace json_detail

inline JsonValue parse_json(std::string_view text) { return json_detail::Reader(text).document(); }

}  // namespace doorbell::testing
