// The shared input rules; see InputRules.h.
#include "ir/json/InputRules.h"

#include "util/Checked.h"

#include <cstdio>

namespace shardcheck {

std::optional<size_t> firstInvalidUtf8(std::string_view text) {
  const auto *s = reinterpret_cast<const unsigned char *>(text.data());
  size_t n = text.size();
  for (size_t i = 0; i < n;) {
    unsigned char c = s[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    // The lead byte gives the length, and the range of the second byte that
    // keeps the form shortest and the code point a Unicode scalar value.
    size_t length = 0;
    unsigned char low = 0x80, high = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) {
      length = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      length = 3;
      low = c == 0xE0 ? 0xA0 : 0x80;
      high = c == 0xED ? 0x9F : 0xBF;
    } else if (c >= 0xF0 && c <= 0xF4) {
      length = 4;
      low = c == 0xF0 ? 0x90 : 0x80;
      high = c == 0xF4 ? 0x8F : 0xBF;
    } else {
      return i;
    }
    bool wellFormed = i + 1 < n && s[i + 1] >= low && s[i + 1] <= high;
    for (size_t k = 2; wellFormed && k < length; ++k)
      wellFormed = i + k < n && (s[i + k] & 0xC0) == 0x80;
    if (!wellFormed)
      return i;
    i += length;
  }
  return std::nullopt;
}

std::string invalidUtf8Message(std::string_view text, size_t offset) {
  char byte[8];
  std::snprintf(byte, sizeof byte, "0x%02X", static_cast<unsigned char>(text[offset]));
  return std::string("byte ") + byte + " is not valid UTF-8 (inputs must be UTF-8)";
}

Extent binaryExtent(Extent::Kind op, const Extent &lhs, const Extent &rhs) {
  switch (op) {
  case Extent::Kind::Add:
    return Extent::add(lhs, rhs);
  case Extent::Kind::Sub:
    return Extent::sub(lhs, rhs);
  case Extent::Kind::Mul:
    return Extent::mul(lhs, rhs);
  case Extent::Kind::Div:
    return Extent::div(lhs, rhs);
  case Extent::Kind::Mod:
    return Extent::mod(lhs, rhs);
  default:
    return Extent::ceilDiv(lhs, rhs);
  }
}

std::optional<std::string> extentArithmeticProblem(Extent::Kind op, const Extent &rhs,
                                                   const Extent &folded) {
  bool divides = op == Extent::Kind::Div || op == Extent::Kind::Mod || op == Extent::Kind::CeilDiv;
  if (divides && rhs.asConstant() == 0)
    return std::string("division by zero in an extent");
  if (auto v = folded.asConstant(); v && *v < 0)
    return "extent arithmetic gives " + std::to_string(*v) + ", and a size is never negative";
  return std::nullopt;
}

} // namespace shardcheck
