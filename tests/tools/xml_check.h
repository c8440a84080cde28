// A tiny well-formedness check for the SVG the plots write: one root element, tags balanced and properly nested,
// attribute values double-quoted, and text and attribute values with no raw <, > or " and & only as an entity.
#pragma once
#include <cctype>
#include <string>
#include <string_view>
#include <vector>

namespace doorbell::test {

// "" when well-formed, else what is wrong and at which byte.
inline std::string xml_problem(std::string_view xml) {
  std::vector<std::string> open;
  bool root_seen = false;
  auto at = [](size_t i) { return " at byte " + std::to_string(i); };
  auto entity_ok = [&](size_t i) {
    for (std::string_view e : {"&amp;", "&lt;", "&gt;", "&quot;", "&apos;"})
      if (xml.substr(i, e.size()) == e) return true;
    return false;
  };
  auto is_name = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == ':' || c == '_'; };
  size_t i = 0;
  while (i < xml.size()) {
    char c = xml[i];
    if (c != '<') {
      if (c == '>' || c == '"') return std::string("raw '") + c + "' in text" + at(i);
      if (c == '&' && !entity_ok(i)) return "'&' not starting an entity" + at(i);
      if (open.empty() && !std::isspace(static_cast<unsigned char>(c))) return "text outside the root element" + at(i);
      i++;
      continue;
    }
    if (xml.substr(i, 4) == "<!--") {
      size_t end = xml.find("-->", i);
      if (end == std::string_view::npos) return "unterminated comment" + at(i);
      i = end + 3;
      continue;
    }
    const bool closing = i + 1 < xml.size() && xml[i + 1] == '/';
    size_t j = i + (closing ? 2 : 1), name_start = j;
    while (j < xml.size() && is_name(xml[j])) j++;
    std::string name(xml.substr(name_start, j - name_start));
    if (name.empty()) return "a tag without a name" + at(i);
    if (closing) {
      if (j >= xml.size() || xml[j] != '>') return "expected '>' closing </" + name + ">" + at(j);
      if (open.empty() || open.back() != name)
        return "</" + name + "> closes " + (open.empty() ? std::string("nothing") : "<" + open.back() + ">") + at(i);
      open.pop_back();
      i = j + 1;
      continue;
    }
    if (open.empty() && root_seen) return "a second root element <" + name + ">" + at(i);
    root_seen = true;
    // Attributes: name="value", separated by spaces.
    while (true) {
      while (j < xml.size() && std::isspace(static_cast<unsigned char>(xml[j]))) j++;
      if (j >= xml.size()) return "unterminated <" + name + ">" + at(i);
      if (xml[j] == '>' || xml.substr(j, 2) == "/>") break;
      size_t attr_start = j;
      while (j < xml.size() && is_name(xml[j])) j++;
      if (j == attr_start) return "unexpected '" + std::string(1, xml[j]) + "' in <" + name + ">" + at(j);
      if (xml.substr(j, 2) != "=\"") return "attribute value not double-quoted in <" + name + ">" + at(j);
      j += 2;
      while (j < xml.size() && xml[j] != '"') {
        if (xml[j] == '<' || xml[j] == '>') return "raw '" + std::string(1, xml[j]) + "' in an attribute" + at(j);
        if (xml[j] == '&' && !entity_ok(j)) return "'&' not starting an entity in an attribute" + at(j);
        j++;
      }
      if (j >= xml.size()) return "unterminated attribute value in <" + name + ">" + at(attr_start);
      j++;
      if (j < xml.size() && !std::isspace(static_cast<unsigned char>(xml[j])) && xml[j] != '>' && xml[j] != '/')
        return "no space after an attribute in <" + name + ">" + at(j);
    }
    if (xml[j] == '>') open.push_back(name);
    i = j + (xml[j] == '>' ? 1 : 2);
  }
  if (!open.empty()) return "<" + open.back() + "> is never closed";
  if (!root_seen) return "no root element";
  return "";
}

}  // namespace doorbell::test
