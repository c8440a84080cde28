// JSON text for what doorbell writes (the timeline trace, the bench and device-check reports): a quoted, escaped
// string and a number (null when not finite, which JSON cannot hold).
#pragma once
#include <cmath>
#include <cstdio>
#include <string>
#include <string_view>

namespace doorbell {

inline std::string json_quote(std::string_view s) {
  std::string out = "\"";
  for (char ch : s) {
    if (ch == '"' || ch == '\\') {
      out += '\\';
      out += ch;
    } else if (static_cast<unsigned char>(ch) < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned>(ch));
      out += escaped;
    } else {
      out += ch;
    }
  }
  return out + "\"";
}

inline std::string json_figure(double v) {
  if (!std::isfinite(v)) return "null";
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", v);
  return text;
}

}  // namespace doorbell
