// The element-wise (pointwise) ops shardcheck understands: one list of
// printed spellings with their arity, the single source of truth for which
// ops read as OpKind::Unary, Binary or Ternary.
//
// The dump reader (ir/reader/ParseExprs.cpp) and the JSON IR reader
// (ir/json/JsonIrReader.cpp) give a pointwise kind only to a spelling listed
// here; any other call name reads as OpKind::Other, whose domain map is
// unsupported, so no proof rests on a positional map guessed for an op such
// as `cumsum`. The reference evaluator (executor/Pointwise.cpp) takes its
// element rules from one switch per enum generated below, compiled with
// -Wswitch as an error: a listed op without a rule does not build, and a rule
// for an unlisted spelling cannot be reached.
//
// Every printed spelling is its own entry: nvFuser's call names (`relu`,
// `max`, `clamp`) and the operator spellings the reader parses from syntax
// (`-T0`, `T0 + T1`). A spelling also reads with CUDA's float suffix (`expf`
// -> `exp`, `fmodf` -> `fmod`), once.
//
// This file does not say what an op computes (executor/Pointwise.cpp), how it
// maps domains (every listed op maps positionally with broadcasting,
// ir/FusionGraph.cpp), or how it is parsed. Casts (`__to_float`, `(float)`)
// and `where` have OpKinds of their own and are not listed.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string_view>

namespace shardcheck {

// X(Enumerator, "spelling"): one row per printed spelling.

#define SHARDCHECK_UNARY_OPS(X)                                                                    \
  X(Minus, "-")                                                                                    \
  X(Neg, "neg")                                                                                    \
  X(Not, "!")                                                                                      \
  X(LogicalNot, "logical_not")                                                                     \
  X(Tilde, "~")                                                                                    \
  X(BitwiseNot, "bitwise_not")                                                                     \
  X(Abs, "abs")                                                                                    \
  X(Fabs, "fabs")                                                                                  \
  X(Relu, "relu")                                                                                  \
  X(Exp, "exp")                                                                                    \
  X(Exp2, "exp2")                                                                                  \
  X(Expm1, "expm1")                                                                                \
  X(Log, "log")                                                                                    \
  X(Log2, "log2")                                                                                  \
  X(Log10, "log10")                                                                                \
  X(Log1p, "log1p")                                                                                \
  X(Sqrt, "sqrt")                                                                                  \
  X(Rsqrt, "rsqrt")                                                                                \
  X(Reciprocal, "reciprocal")                                                                      \
  X(Sigmoid, "sigmoid")                                                                            \
  X(Silu, "silu")                                                                                  \
  X(Gelu, "gelu")                                                                                  \
  X(Sin, "sin")                                                                                    \
  X(Cos, "cos")                                                                                    \
  X(Tan, "tan")                                                                                    \
  X(Asin, "asin")                                                                                  \
  X(Acos, "acos")                                                                                  \
  X(Atan, "atan")                                                                                  \
  X(Sinh, "sinh")                                                                                  \
  X(Cosh, "cosh")                                                                                  \
  X(Tanh, "tanh")                                                                                  \
  X(Asinh, "asinh")                                                                                \
  X(Acosh, "acosh")                                                                                \
  X(Atanh, "atanh")                                                                                \
  X(Erf, "erf")                                                                                    \
  X(Erfc, "erfc")                                                                                  \
  X(Lgamma, "lgamma")                                                                              \
  X(Ceil, "ceil")                                                                                  \
  X(Floor, "floor")                                                                                \
  X(Trunc, "trunc")                                                                                \
  X(Frac, "frac")                                                                                  \
  X(Nearbyint, "nearbyint")                                                                        \
  X(Isnan, "isnan")                                                                                \
  X(Isinf, "isinf")                                                                                \
  X(Isfinite, "isfinite")                                                                          \
  X(Signbit, "signbit")

#define SHARDCHECK_BINARY_OPS(X)                                                                   \
  X(Plus, "+")                                                                                     \
  X(Add, "add")                                                                                    \
  X(Minus, "-")                                                                                    \
  X(Sub, "sub")                                                                                    \
  X(Star, "*")                                                                                     \
  X(Mul, "mul")                                                                                    \
  X(Slash, "/")                                                                                    \
  X(Div, "div")                                                                                    \
  X(Truediv, "truediv")                                                                            \
  X(Percent, "%")                                                                                  \
  X(Fmod, "fmod")                                                                                  \
  X(Mod, "mod")                                                                                    \
  X(CeilDiv, "ceilDiv")                                                                            \
  X(Remainder, "remainder")                                                                        \
  X(Max, "max")                                                                                    \
  X(Min, "min")                                                                                    \
  X(Fmax, "fmax")                                                                                  \
  X(Fmin, "fmin")                                                                                  \
  X(Pow, "pow")                                                                                    \
  X(Atan2, "atan2")                                                                                \
  X(Nextafter, "nextafter")                                                                        \
  X(Gcd, "gcd")                                                                                    \
  X(Eq, "==")                                                                                      \
  X(Ne, "!=")                                                                                      \
  X(Lt, "<")                                                                                       \
  X(Le, "<=")                                                                                      \
  X(Gt, ">")                                                                                       \
  X(Ge, ">=")                                                                                      \
  X(AndAnd, "&&")                                                                                  \
  X(LogicalAnd, "logical_and")                                                                     \
  X(OrOr, "||")                                                                                    \
  X(LogicalOr, "logical_or")                                                                       \
  X(Amp, "&")                                                                                      \
  X(BitwiseAnd, "bitwise_and")                                                                     \
  X(Pipe, "|")                                                                                     \
  X(BitwiseOr, "bitwise_or")                                                                       \
  X(Caret, "^")                                                                                    \
  X(BitwiseXor, "bitwise_xor")                                                                     \
  X(Shl, "<<")                                                                                     \
  X(Lshift, "lshift")                                                                              \
  X(Shr, ">>")                                                                                     \
  X(Rshift, "rshift")

#define SHARDCHECK_TERNARY_OPS(X)                                                                  \
  X(Clamp, "clamp")                                                                                \
  X(Lerp, "lerp")                                                                                  \
  X(Threshold, "threshold")

#define SHARDCHECK_POINTWISE_ENUMERATOR(e, s) e,
enum class UnaryOp { SHARDCHECK_UNARY_OPS(SHARDCHECK_POINTWISE_ENUMERATOR) };
enum class BinaryOp { SHARDCHECK_BINARY_OPS(SHARDCHECK_POINTWISE_ENUMERATOR) };
enum class TernaryOp { SHARDCHECK_TERNARY_OPS(SHARDCHECK_POINTWISE_ENUMERATOR) };
#undef SHARDCHECK_POINTWISE_ENUMERATOR

enum class PointwiseArity { Unary = 1, Binary = 2, Ternary = 3 };

/// One listed spelling; `op` is the enumerator of its arity's enum.
struct PointwiseSpelling {
  std::string_view name;
  PointwiseArity arity;
  int op;
};

#define SHARDCHECK_POINTWISE_ROW(arity, Enum, e, s)                                                \
  PointwiseSpelling{s, PointwiseArity::arity, static_cast<int>(Enum::e)},
#define SHARDCHECK_UNARY_ROW(e, s) SHARDCHECK_POINTWISE_ROW(Unary, UnaryOp, e, s)
#define SHARDCHECK_BINARY_ROW(e, s) SHARDCHECK_POINTWISE_ROW(Binary, BinaryOp, e, s)
#define SHARDCHECK_TERNARY_ROW(e, s) SHARDCHECK_POINTWISE_ROW(Ternary, TernaryOp, e, s)
inline constexpr std::array kPointwiseOps{SHARDCHECK_UNARY_OPS(SHARDCHECK_UNARY_ROW)
                                              SHARDCHECK_BINARY_OPS(SHARDCHECK_BINARY_ROW)
                                                  SHARDCHECK_TERNARY_OPS(SHARDCHECK_TERNARY_ROW)};
#undef SHARDCHECK_UNARY_ROW
#undef SHARDCHECK_BINARY_ROW
#undef SHARDCHECK_TERNARY_ROW
#undef SHARDCHECK_POINTWISE_ROW

/// The listed entry spelled exactly `name` with this arity.
constexpr std::optional<PointwiseSpelling> findExactPointwise(std::string_view name,
                                                              PointwiseArity arity) {
  for (const PointwiseSpelling &entry : kPointwiseOps)
    if (entry.arity == arity && entry.name == name)
      return entry;
  return std::nullopt;
}

/// The listed entry for `name`, or for `name` without one trailing `f`
/// (`expf` -> `exp`): CUDA spells the float overload of every math function so.
constexpr std::optional<PointwiseSpelling> findPointwise(std::string_view name,
                                                         PointwiseArity arity) {
  if (auto entry = findExactPointwise(name, arity))
    return entry;
  if (name.size() > 1 && name.back() == 'f')
    return findExactPointwise(name.substr(0, name.size() - 1), arity);
  return std::nullopt;
}

constexpr bool isPointwiseOp(std::string_view name, PointwiseArity arity) {
  return findPointwise(name, arity).has_value();
}

constexpr std::optional<UnaryOp> findUnaryOp(std::string_view name) {
  auto entry = findPointwise(name, PointwiseArity::Unary);
  return entry ? std::optional(static_cast<UnaryOp>(entry->op)) : std::nullopt;
}

constexpr std::optional<BinaryOp> findBinaryOp(std::string_view name) {
  auto entry = findPointwise(name, PointwiseArity::Binary);
  return entry ? std::optional(static_cast<BinaryOp>(entry->op)) : std::nullopt;
}

constexpr std::optional<TernaryOp> findTernaryOp(std::string_view name) {
  auto entry = findPointwise(name, PointwiseArity::Ternary);
  return entry ? std::optional(static_cast<TernaryOp>(entry->op)) : std::nullopt;
}

/// The arity of a call name (`relu`, `expf`, `max`, `clamp`), nullopt when
/// the name is not listed. Only operator spellings (`-`) have two arities, and
/// they are never call names; the static_assert below keeps it so.
constexpr std::optional<PointwiseArity> callArity(std::string_view name) {
  for (PointwiseArity arity :
       {PointwiseArity::Unary, PointwiseArity::Binary, PointwiseArity::Ternary})
    if (isPointwiseOp(name, arity))
      return arity;
  return std::nullopt;
}

namespace pointwise_detail {

constexpr bool isLetter(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

constexpr bool isListedTwice(const PointwiseSpelling &a) {
  int count = 0;
  for (const PointwiseSpelling &b : kPointwiseOps)
    count += b.arity == a.arity && b.name == a.name;
  return count > 1;
}

/// No spelling is listed twice for one arity, and a call name (read exactly or
/// without its `f`) has one arity only, so that callArity cannot pick the
/// wrong one.
constexpr bool callNamesAreUnambiguous() {
  for (const PointwiseSpelling &a : kPointwiseOps) {
    if (isListedTwice(a))
      return false;
    if (!isLetter(a.name[0]))
      continue;
    for (PointwiseArity other :
         {PointwiseArity::Unary, PointwiseArity::Binary, PointwiseArity::Ternary})
      if (other != a.arity && isPointwiseOp(a.name, other))
        return false;
  }
  return true;
}

} // namespace pointwise_detail

static_assert(pointwise_detail::callNamesAreUnambiguous(),
              "a pointwise call name is listed twice or under two arities");

} // namespace shardcheck
