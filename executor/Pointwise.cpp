// Element rules of pointwise ops, scalar and cast spellings; see Pointwise.h.
#include "executor/Pointwise.h"

#include <cmath>
#include <cstdlib>
#include <limits>
#include <numeric>

namespace shardcheck {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double sigmoid(double x) {
  return 1.0 / (1.0 + std::exp(-x));
}

const std::map<std::string, UnaryRule> &unaryRules() {
  static const std::map<std::string, UnaryRule> rules{
      {"-", [](double x) { return -x; }},
      {"neg", [](double x) { return -x; }},
      {"!", [](double x) { return x == 0.0 ? 1.0 : 0.0; }},
      {"logical_not", [](double x) { return x == 0.0 ? 1.0 : 0.0; }},
      {"~", [](double x) { return static_cast<double>(~static_cast<int64_t>(x)); }},
      {"bitwise_not", [](double x) { return static_cast<double>(~static_cast<int64_t>(x)); }},
      {"abs", [](double x) { return std::fabs(x); }},
      {"fabs", [](double x) { return std::fabs(x); }},
      // relu keeps NaN, as torch.relu does.
      {"relu", [](double x) { return x > 0.0 || std::isnan(x) ? x : 0.0; }},
      {"exp", [](double x) { return std::exp(x); }},
      {"exp2", [](double x) { return std::exp2(x); }},
      {"expm1", [](double x) { return std::expm1(x); }},
      {"log", [](double x) { return std::log(x); }},
      {"log2", [](double x) { return std::log2(x); }},
      {"log10", [](double x) { return std::log10(x); }},
      {"log1p", [](double x) { return std::log1p(x); }},
      {"sqrt", [](double x) { return std::sqrt(x); }},
      {"rsqrt", [](double x) { return 1.0 / std::sqrt(x); }},
      {"reciprocal", [](double x) { return 1.0 / x; }},
      {"sigmoid", sigmoid},
      {"silu", [](double x) { return x * sigmoid(x); }},
      // The exact (erf) GELU, for dumps that print it undecomposed.
      {"gelu", [](double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }},
      {"sin", [](double x) { return std::sin(x); }},
      {"cos", [](double x) { return std::cos(x); }},
      {"tan", [](double x) { return std::tan(x); }},
      {"asin", [](double x) { return std::asin(x); }},
      {"acos", [](double x) { return std::acos(x); }},
      {"atan", [](double x) { return std::atan(x); }},
      {"sinh", [](double x) { return std::sinh(x); }},
      {"cosh", [](double x) { return std::cosh(x); }},
      {"tanh", [](double x) { return std::tanh(x); }},
      {"asinh", [](double x) { return std::asinh(x); }},
      {"acosh", [](double x) { return std::acosh(x); }},
      {"atanh", [](double x) { return std::atanh(x); }},
      {"erf", [](double x) { return std::erf(x); }},
      {"erfc", [](double x) { return std::erfc(x); }},
      {"lgamma", [](double x) { return std::lgamma(x); }},
      {"ceil", [](double x) { return std::ceil(x); }},
      {"floor", [](double x) { return std::floor(x); }},
      {"trunc", [](double x) { return std::trunc(x); }},
      {"frac", [](double x) { return x - std::trunc(x); }},
      // nvFuser prints its round-half-to-even op as CUDA's nearbyint.
      {"nearbyint", [](double x) { return std::nearbyint(x); }},
      {"isnan", [](double x) { return std::isnan(x) ? 1.0 : 0.0; }},
      {"isinf", [](double x) { return std::isinf(x) ? 1.0 : 0.0; }},
      {"isfinite", [](double x) { return std::isfinite(x) ? 1.0 : 0.0; }},
      {"signbit", [](double x) { return std::signbit(x) ? 1.0 : 0.0; }},
  };
  return rules;
}

/// Looks `op` up, then `op` without a trailing `f` (`expf` -> `exp`).
template <class Rule>
std::optional<Rule> lookupMaybeF(const std::map<std::string, Rule> &rules, const std::string &op) {
  if (auto it = rules.find(op); it != rules.end())
    return it->second;
  if (op.size() > 1 && op.back() == 'f')
    if (auto it = rules.find(op.substr(0, op.size() - 1)); it != rules.end())
      return it->second;
  return std::nullopt;
}

int64_t asInt(double v) {
  return static_cast<int64_t>(v);
}

double integerDivide(double a, double b) {
  if (asInt(b) == 0)
    throw IntegerDivisionByZero{};
  return static_cast<double>(asInt(a) / asInt(b)); // C++ truncates, as CUDA does.
}

double integerModulo(double a, double b) {
  if (asInt(b) == 0)
    throw IntegerDivisionByZero{};
  return static_cast<double>(asInt(a) % asInt(b));
}

/// Rounds the quotient up (toward +inf) when it is inexact and positive.
double integerCeilDivide(double a, double b) {
  double q = integerDivide(a, b);
  bool inexact = asInt(a) % asInt(b) != 0;
  return inexact && (a < 0) == (b < 0) ? q + 1.0 : q;
}

/// Python-style remainder: the sign of the divisor.
double remainderRule(double a, double b) {
  double r = std::fmod(a, b);
  return (r != 0.0 && (r < 0.0) != (b < 0.0)) ? r + b : r;
}

/// nvFuser's max/min propagate NaN (fmax/fmin do not).
double maxRule(double a, double b) {
  return std::isnan(a) || std::isnan(b) ? kNaN : std::max(a, b);
}
double minRule(double a, double b) {
  return std::isnan(a) || std::isnan(b) ? kNaN : std::min(a, b);
}

double boolOf(bool b) {
  return b ? 1.0 : 0.0;
}

const std::map<std::string, BinaryRule> &commonBinaryRules() {
  static const std::map<std::string, BinaryRule> rules{
      {"+", [](double a, double b) { return a + b; }},
      {"add", [](double a, double b) { return a + b; }},
      {"-", [](double a, double b) { return a - b; }},
      {"sub", [](double a, double b) { return a - b; }},
      {"*", [](double a, double b) { return a * b; }},
      {"mul", [](double a, double b) { return a * b; }},
      {"truediv", [](double a, double b) { return a / b; }},
      {"max", maxRule},
      {"min", minRule},
      {"fmax", [](double a, double b) { return std::fmax(a, b); }},
      {"fmin", [](double a, double b) { return std::fmin(a, b); }},
      {"pow", [](double a, double b) { return std::pow(a, b); }},
      {"atan2", [](double a, double b) { return std::atan2(a, b); }},
      {"remainder", remainderRule},
      {"nextafter", [](double a, double b) { return std::nextafter(a, b); }},
      {"==", [](double a, double b) { return boolOf(a == b); }},
      {"!=", [](double a, double b) { return boolOf(a != b); }},
      {"<", [](double a, double b) { return boolOf(a < b); }},
      {"<=", [](double a, double b) { return boolOf(a <= b); }},
      {">", [](double a, double b) { return boolOf(a > b); }},
      {">=", [](double a, double b) { return boolOf(a >= b); }},
      {"&&", [](double a, double b) { return boolOf(a != 0.0 && b != 0.0); }},
      {"logical_and", [](double a, double b) { return boolOf(a != 0.0 && b != 0.0); }},
      {"||", [](double a, double b) { return boolOf(a != 0.0 || b != 0.0); }},
      {"logical_or", [](double a, double b) { return boolOf(a != 0.0 || b != 0.0); }},
      {"&", [](double a, double b) { return static_cast<double>(asInt(a) & asInt(b)); }},
      {"bitwise_and", [](double a, double b) { return static_cast<double>(asInt(a) & asInt(b)); }},
      {"|", [](double a, double b) { return static_cast<double>(asInt(a) | asInt(b)); }},
      {"bitwise_or", [](double a, double b) { return static_cast<double>(asInt(a) | asInt(b)); }},
      {"^", [](double a, double b) { return static_cast<double>(asInt(a) ^ asInt(b)); }},
      {"bitwise_xor", [](double a, double b) { return static_cast<double>(asInt(a) ^ asInt(b)); }},
      {"<<", [](double a, double b) { return static_cast<double>(asInt(a) << asInt(b)); }},
      {"lshift", [](double a, double b) { return static_cast<double>(asInt(a) << asInt(b)); }},
      {">>", [](double a, double b) { return static_cast<double>(asInt(a) >> asInt(b)); }},
      {"rshift", [](double a, double b) { return static_cast<double>(asInt(a) >> asInt(b)); }},
      {"gcd", [](double a, double b) { return static_cast<double>(std::gcd(asInt(a), asInt(b))); }},
  };
  return rules;
}

/// `/` and `%` depend on the dtype: integer ones truncate.
std::optional<BinaryRule> divisionRule(const std::string &op, bool integral) {
  if (op == "/" || op == "div")
    return integral ? BinaryRule(integerDivide)
                    : BinaryRule([](double a, double b) { return a / b; });
  if (op == "%" || op == "fmod" || op == "mod")
    return integral ? BinaryRule(integerModulo)
                    : BinaryRule([](double a, double b) { return std::fmod(a, b); });
  if (op == "ceilDiv")
    return integral ? BinaryRule(integerCeilDivide)
                    : BinaryRule([](double a, double b) { return std::ceil(a / b); });
  return std::nullopt;
}

} // namespace

std::optional<UnaryRule> unaryRule(const std::string &op) {
  return lookupMaybeF(unaryRules(), op);
}

std::optional<BinaryRule> binaryRule(const std::string &op, bool integral) {
  if (auto rule = divisionRule(op, integral))
    return rule;
  if (op.size() > 1 && op.back() == 'f')
    if (auto rule = divisionRule(op.substr(0, op.size() - 1), integral))
      return rule;
  return lookupMaybeF(commonBinaryRules(), op);
}

std::optional<TernaryRule> ternaryRule(const std::string &op) {
  static const std::map<std::string, TernaryRule> rules{
      {"clamp", [](double x, double lo, double hi) { return std::min(std::max(x, lo), hi); }},
      {"lerp", [](double a, double b, double w) { return a + w * (b - a); }},
      {"threshold", [](double x, double th, double v) { return x <= th ? v : x; }},
  };
  return lookupMaybeF(rules, op);
}

namespace {

std::string trim(const std::string &s) {
  size_t b = s.find_first_not_of(" \t");
  size_t e = s.find_last_not_of(" \t");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

std::optional<double> parseNumber(const std::string &s) {
  if (s == "inf" || s == "+inf" || s == "INFINITY")
    return std::numeric_limits<double>::infinity();
  if (s == "-inf" || s == "-INFINITY")
    return -std::numeric_limits<double>::infinity();
  if (s == "nan" || s == "NAN")
    return kNaN;
  if (s == "true")
    return 1.0;
  if (s == "false")
    return 0.0;
  if (s.empty())
    return std::nullopt;
  char *end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  std::string rest(end);
  // CUDA literal suffixes: `2.0f`, `3L`, `4LL`.
  if (rest.empty() || rest == "f" || rest == "L" || rest == "LL")
    return v;
  return std::nullopt;
}

} // namespace

std::optional<double> parseScalar(const std::string &text,
                                  const std::map<std::string, int64_t> &symbols) {
  std::string s = trim(text);
  if (auto it = symbols.find(s); it != symbols.end())
    return static_cast<double>(it->second);
  if (auto v = parseNumber(s))
    return v;
  // `float(0)`, `double(-inf)`: a typed literal.
  size_t open = s.find('(');
  if (open != std::string::npos && open > 0 && s.back() == ')')
    return parseScalar(s.substr(open + 1, s.size() - open - 2), symbols);
  // `(float)2`: a C-style cast of a literal.
  size_t close = s.find(')');
  if (!s.empty() && s.front() == '(' && close != std::string::npos && close + 1 < s.size())
    return parseScalar(s.substr(close + 1), symbols);
  return std::nullopt;
}

std::optional<DataType> castTarget(const std::string &op) {
  std::string name;
  if (op.rfind("__to_", 0) == 0)
    name = op.substr(5);
  else if (op.size() > 2 && op.front() == '(' && op.back() == ')')
    name = op.substr(1, op.size() - 2);
  else if (size_t two = op.rfind('2'); op.rfind("__", 0) == 0 && two != std::string::npos)
    name = op.substr(two + 1);
  else
    return std::nullopt;
  if (name == "bfloat" || name == "bfloat16")
    return DataType::BFloat16;
  if (auto d = parseDataType(name))
    return d;
  return parseDataType("__" + name);
}

} // namespace shardcheck
