// XML escaping; see Xml.h.
#include "tools/common/Xml.h"

namespace shardcheck {

namespace {

/// Appends the UTF-8 sequence at text[i] (advancing i past it) when it is
/// a character XML 1.0 allows, else U+FFFD.
void appendCharacter(const std::string &text, size_t &i, std::string &out) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(text[i + k]); };
  unsigned char c = byte(0);
  size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
  bool wellFormed = len > 0 && i + len <= text.size();
  for (size_t k = 1; wellFormed && k < len; ++k)
    wellFormed = (byte(k) >> 6) == 2;
  if (!wellFormed) {
    out += "\xEF\xBF\xBD";
    ++i;
    return;
  }
  bool allowed = len > 1 || c >= 0x20 || c == '\t' || c == '\n' || c == '\r';
  if (len == 3 && c == 0xEF && byte(1) == 0xBF && byte(2) >= 0xBE)
    allowed = false; // U+FFFE, U+FFFF
  out += allowed ? text.substr(i, len) : "\xEF\xBF\xBD";
  i += len;
}

/// The entity of a character that markup reserves, or null.
const char *entity(char c) {
  switch (c) {
  case '&':
    return "&amp;";
  case '<':
    return "&lt;";
  case '>':
    return "&gt;";
  case '"':
    return "&quot;";
  case '\'':
    return "&apos;";
  case '\n': // kept in attributes, where a raw newline reads as a space
    return "&#10;";
  default:
    return nullptr;
  }
}

} // namespace

std::string xmlEscape(const std::string &text) {
  std::string out;
  for (size_t i = 0; i < text.size();) {
    if (const char *e = entity(text[i])) {
      out += e;
      ++i;
    } else {
      appendCharacter(text, i, out);
    }
  }
  return out;
}

} // namespace shardcheck
