// Element rules of pointwise ops, scalar and cast spellings; see Pointwise.h.
//
// The rules are keyed by the enums of ir/PointwiseOps.h, one switch per
// arity. -Wswitch is an error in this file so that an op added to the list
// without a rule here does not build; a spelling outside the list has no
// enumerator, so no rule can exist for it. This file does not decide which
// spellings are pointwise: the list does.
#include "executor/Pointwise.h"

#include "util/Diagnostics.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <numeric>

#pragma GCC diagnostic error "-Wswitch"

namespace shardcheck {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double sigmoid(double x) {
  return 1.0 / (1.0 + std::exp(-x));
}

double boolOf(bool b) {
  return b ? 1.0 : 0.0;
}

int64_t asInt(double v) {
  return static_cast<int64_t>(v);
}

// The rule tables below are switches without a default: -Wswitch (an error
// here) then requires a case for every listed spelling. Spellings of one op
// share a case.

/// The rule of a unary op that is one <cmath> function of x; nullopt for
/// the others (ruleOf's switch names every op).
std::optional<UnaryRule> cmathRule(UnaryOp op) {
  switch (op) {
  case UnaryOp::Exp:
    return [](double x) { return std::exp(x); };
  case UnaryOp::Exp2:
    return [](double x) { return std::exp2(x); };
  case UnaryOp::Expm1:
    return [](double x) { return std::expm1(x); };
  case UnaryOp::Log:
    return [](double x) { return std::log(x); };
  case UnaryOp::Log2:
    return [](double x) { return std::log2(x); };
  case UnaryOp::Log10:
    return [](double x) { return std::log10(x); };
  case UnaryOp::Log1p:
    return [](double x) { return std::log1p(x); };
  case UnaryOp::Sqrt:
    return [](double x) { return std::sqrt(x); };
  case UnaryOp::Sin:
    return [](double x) { return std::sin(x); };
  case UnaryOp::Cos:
    return [](double x) { return std::cos(x); };
  case UnaryOp::Tan:
    return [](double x) { return std::tan(x); };
  case UnaryOp::Asin:
    return [](double x) { return std::asin(x); };
  case UnaryOp::Acos:
    return [](double x) { return std::acos(x); };
  case UnaryOp::Atan:
    return [](double x) { return std::atan(x); };
  case UnaryOp::Sinh:
    return [](double x) { return std::sinh(x); };
  case UnaryOp::Cosh:
    return [](double x) { return std::cosh(x); };
  case UnaryOp::Tanh:
    return [](double x) { return std::tanh(x); };
  case UnaryOp::Asinh:
    return [](double x) { return std::asinh(x); };
  case UnaryOp::Acosh:
    return [](double x) { return std::acosh(x); };
  case UnaryOp::Atanh:
    return [](double x) { return std::atanh(x); };
  case UnaryOp::Erf:
    return [](double x) { return std::erf(x); };
  case UnaryOp::Erfc:
    return [](double x) { return std::erfc(x); };
  case UnaryOp::Lgamma:
    return [](double x) { return std::lgamma(x); };
  case UnaryOp::Ceil:
    return [](double x) { return std::ceil(x); };
  case UnaryOp::Floor:
    return [](double x) { return std::floor(x); };
  case UnaryOp::Trunc:
    return [](double x) { return std::trunc(x); };
  default:
    return std::nullopt;
  }
}

UnaryRule ruleOf(UnaryOp op) {
  switch (op) {
  case UnaryOp::Minus:
  case UnaryOp::Neg:
    return [](double x) { return -x; };
  case UnaryOp::Not:
  case UnaryOp::LogicalNot:
    return [](double x) { return boolOf(x == 0.0); };
  case UnaryOp::Tilde:
  case UnaryOp::BitwiseNot:
    return [](double x) { return static_cast<double>(~asInt(x)); };
  case UnaryOp::Abs:
  case UnaryOp::Fabs:
    return [](double x) { return std::fabs(x); };
  case UnaryOp::Relu:
    // relu keeps NaN, as torch.relu does.
    return [](double x) { return x > 0.0 || std::isnan(x) ? x : 0.0; };
  case UnaryOp::Exp:
  case UnaryOp::Exp2:
  case UnaryOp::Expm1:
  case UnaryOp::Log:
  case UnaryOp::Log2:
  case UnaryOp::Log10:
  case UnaryOp::Log1p:
  case UnaryOp::Sqrt:
  case UnaryOp::Sin:
  case UnaryOp::Cos:
  case UnaryOp::Tan:
  case UnaryOp::Asin:
  case UnaryOp::Acos:
  case UnaryOp::Atan:
  case UnaryOp::Sinh:
  case UnaryOp::Cosh:
  case UnaryOp::Tanh:
  case UnaryOp::Asinh:
  case UnaryOp::Acosh:
  case UnaryOp::Atanh:
  case UnaryOp::Erf:
  case UnaryOp::Erfc:
  case UnaryOp::Lgamma:
  case UnaryOp::Ceil:
  case UnaryOp::Floor:
  case UnaryOp::Trunc:
    return *cmathRule(op);
  case UnaryOp::Rsqrt:
    return [](double x) { return 1.0 / std::sqrt(x); };
  case UnaryOp::Reciprocal:
    return [](double x) { return 1.0 / x; };
  case UnaryOp::Sigmoid:
    return sigmoid;
  case UnaryOp::Silu:
    return [](double x) { return x * sigmoid(x); };
  case UnaryOp::Gelu:
    // The exact (erf) GELU, for dumps that print it undecomposed.
    return [](double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); };
  case UnaryOp::Frac:
    return [](double x) { return x - std::trunc(x); };
  case UnaryOp::Nearbyint:
    // nvFuser prints its round-half-to-even op as CUDA's nearbyint.
    return [](double x) { return std::nearbyint(x); };
  case UnaryOp::Isnan:
    return [](double x) { return boolOf(std::isnan(x)); };
  case UnaryOp::Isinf:
    return [](double x) { return boolOf(std::isinf(x)); };
  case UnaryOp::Isfinite:
    return [](double x) { return boolOf(std::isfinite(x)); };
  case UnaryOp::Signbit:
    return [](double x) { return boolOf(std::signbit(x)); };
  }
  SC_ASSERT(false, "unary op enumerator out of range");
  return {};
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

/// Bit ops work on the integer value, as CUDA's do on integral dtypes.
template <class F> BinaryRule bitRule(F f) {
  return [f](double a, double b) { return static_cast<double>(f(asInt(a), asInt(b))); };
}

/// `integral` selects integer semantics where they differ from the floating
/// ones (`/`, `%`, ceilDiv); it is the output dtype's integrality.
BinaryRule ruleOf(BinaryOp op, bool integral) {
  switch (op) {
  case BinaryOp::Plus:
  case BinaryOp::Add:
    return [](double a, double b) { return a + b; };
  case BinaryOp::Minus:
  case BinaryOp::Sub:
    return [](double a, double b) { return a - b; };
  case BinaryOp::Star:
  case BinaryOp::Mul:
    return [](double a, double b) { return a * b; };
  case BinaryOp::Truediv:
    return [](double a, double b) { return a / b; };
  case BinaryOp::Slash:
  case BinaryOp::Div:
    return integral ? BinaryRule(integerDivide)
                    : BinaryRule([](double a, double b) { return a / b; });
  case BinaryOp::Percent:
  case BinaryOp::Fmod:
  case BinaryOp::Mod:
    return integral ? BinaryRule(integerModulo)
                    : BinaryRule([](double a, double b) { return std::fmod(a, b); });
  case BinaryOp::CeilDiv:
    return integral ? BinaryRule(integerCeilDivide)
                    : BinaryRule([](double a, double b) { return std::ceil(a / b); });
  case BinaryOp::Remainder:
    return remainderRule;
  case BinaryOp::Max:
    return maxRule;
  case BinaryOp::Min:
    return minRule;
  case BinaryOp::Fmax:
    return [](double a, double b) { return std::fmax(a, b); };
  case BinaryOp::Fmin:
    return [](double a, double b) { return std::fmin(a, b); };
  case BinaryOp::Pow:
    return [](double a, double b) { return std::pow(a, b); };
  case BinaryOp::Atan2:
    return [](double a, double b) { return std::atan2(a, b); };
  case BinaryOp::Nextafter:
    return [](double a, double b) { return std::nextafter(a, b); };
  case BinaryOp::Gcd:
    return bitRule([](int64_t a, int64_t b) { return std::gcd(a, b); });
  case BinaryOp::Eq:
    return [](double a, double b) { return boolOf(a == b); };
  case BinaryOp::Ne:
    return [](double a, double b) { return boolOf(a != b); };
  case BinaryOp::Lt:
    return [](double a, double b) { return boolOf(a < b); };
  case BinaryOp::Le:
    return [](double a, double b) { return boolOf(a <= b); };
  case BinaryOp::Gt:
    return [](double a, double b) { return boolOf(a > b); };
  case BinaryOp::Ge:
    return [](double a, double b) { return boolOf(a >= b); };
  case BinaryOp::AndAnd:
  case BinaryOp::LogicalAnd:
    return [](double a, double b) { return boolOf(a != 0.0 && b != 0.0); };
  case BinaryOp::OrOr:
  case BinaryOp::LogicalOr:
    return [](double a, double b) { return boolOf(a != 0.0 || b != 0.0); };
  case BinaryOp::Amp:
  case BinaryOp::BitwiseAnd:
    return bitRule([](int64_t a, int64_t b) { return a & b; });
  case BinaryOp::Pipe:
  case BinaryOp::BitwiseOr:
    return bitRule([](int64_t a, int64_t b) { return a | b; });
  case BinaryOp::Caret:
  case BinaryOp::BitwiseXor:
    return bitRule([](int64_t a, int64_t b) { return a ^ b; });
  case BinaryOp::Shl:
  case BinaryOp::Lshift:
    return bitRule([](int64_t a, int64_t b) { return a << b; });
  case BinaryOp::Shr:
  case BinaryOp::Rshift:
    return bitRule([](int64_t a, int64_t b) { return a >> b; });
  }
  SC_ASSERT(false, "binary op enumerator out of range");
  return {};
}

TernaryRule ruleOf(TernaryOp op) {
  switch (op) {
  case TernaryOp::Clamp:
    return [](double x, double lo, double hi) { return std::min(std::max(x, lo), hi); };
  case TernaryOp::Lerp:
    return [](double a, double b, double w) { return a + w * (b - a); };
  case TernaryOp::Threshold:
    return [](double x, double th, double v) { return x <= th ? v : x; };
  }
  SC_ASSERT(false, "ternary op enumerator out of range");
  return {};
}

} // namespace

UnaryRule unaryRule(UnaryOp op) {
  return ruleOf(op);
}

BinaryRule binaryRule(BinaryOp op, bool integral) {
  return ruleOf(op, integral);
}

TernaryRule ternaryRule(TernaryOp op) {
  return ruleOf(op);
}

std::optional<UnaryRule> unaryRule(const std::string &op) {
  auto listed = findUnaryOp(op);
  return listed ? std::optional(ruleOf(*listed)) : std::nullopt;
}

std::optional<BinaryRule> binaryRule(const std::string &op, bool integral) {
  auto listed = findBinaryOp(op);
  return listed ? std::optional(ruleOf(*listed, integral)) : std::nullopt;
}

std::optional<TernaryRule> ternaryRule(const std::string &op) {
  auto listed = findTernaryOp(op);
  return listed ? std::optional(ruleOf(*listed)) : std::nullopt;
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

double reduceCombine(ReduceOp op, double a, double b) {
  switch (op) {
  case ReduceOp::Sum:
    return a + b;
  case ReduceOp::Prod:
    return a * b;
  case ReduceOp::Max:
  case ReduceOp::Min:
    if (std::isnan(a) || std::isnan(b))
      return std::numeric_limits<double>::quiet_NaN();
    return op == ReduceOp::Max ? std::max(a, b) : std::min(a, b);
  }
  return a;
}

} // namespace shardcheck
