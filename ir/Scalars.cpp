// Reading printed scalars; see Scalars.h.
#include "ir/Scalars.h"

#include <cctype>
#include <cstdlib>
#include <limits>

namespace shardcheck {

namespace {

std::string_view trimmed(std::string_view s) {
  size_t b = s.find_first_not_of(" \t");
  size_t e = s.find_last_not_of(" \t");
  return b == std::string_view::npos ? std::string_view() : s.substr(b, e - b + 1);
}

std::optional<double> literalValue(std::string_view s) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  if (s == "inf" || s == "+inf" || s == "INFINITY")
    return kInf;
  if (s == "-inf" || s == "-INFINITY")
    return -kInf;
  if (s == "nan" || s == "NAN")
    return std::numeric_limits<double>::quiet_NaN();
  if (s == "true")
    return 1.0;
  if (s == "false")
    return 0.0;
  if (s.empty())
    return std::nullopt;
  std::string text(s);
  char *end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  std::string_view rest(end);
  // CUDA literal suffixes: `2.0f`, `3L`, `4LL`.
  if (end != text.c_str() && (rest.empty() || rest == "f" || rest == "L" || rest == "LL"))
    return v;
  return std::nullopt;
}

/// `float(0)` -> `0`, `(float)2` -> `2`, `(i3)` -> `i3`: one layer of the
/// casts nvFuser prints around a value, or nullopt when there is none.
std::optional<std::string_view> castOperand(std::string_view s) {
  size_t open = s.find('(');
  if (open != std::string_view::npos && s.back() == ')' &&
      (open == 0 ? s.find(')') == s.size() - 1 : true))
    return s.substr(open + 1, s.size() - open - 2);
  size_t close = s.find(')');
  if (!s.empty() && s.front() == '(' && close != std::string_view::npos && close + 1 < s.size())
    return s.substr(close + 1);
  return std::nullopt;
}

} // namespace

bool isScalarSymbol(std::string_view text) {
  if (text.empty() || !(std::isalpha(static_cast<unsigned char>(text[0])) || text[0] == '_'))
    return false;
  for (char c : text)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_'))
      return false;
  return true;
}

std::optional<double> scalarValue(std::string_view text,
                                  const std::map<std::string, int64_t> &symbols) {
  // Iterative: a scalar wrapped in many casts must not exhaust the stack.
  std::string_view s = trimmed(text);
  while (true) {
    if (auto it = symbols.find(std::string(s)); it != symbols.end())
      return static_cast<double>(it->second);
    if (auto v = literalValue(s))
      return v;
    auto inner = castOperand(s);
    if (!inner)
      return std::nullopt;
    s = trimmed(*inner);
  }
}

std::optional<std::string> scalarSymbolOf(std::string_view text) {
  std::string_view s = trimmed(text);
  while (true) {
    if (literalValue(s))
      return std::nullopt;
    if (isScalarSymbol(s))
      return std::string(s);
    auto inner = castOperand(s);
    if (!inner)
      return std::nullopt;
    s = trimmed(*inner);
  }
}

bool isReadableScalar(std::string_view text) {
  return scalarSymbolOf(text) || scalarValue(text, {});
}

} // namespace shardcheck
