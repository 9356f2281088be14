// Spelling tables of the GPU op codes; see OpCodes.h.
//
// The tables list the same spellings as executor/Pointwise.cpp, and the
// lookup follows its rule: the spelling itself, then the spelling without a
// trailing `f` (`expf` -> `exp`, `fmodf` -> `fmod`).
#include "executor/gpu/OpCodes.h"

#include <map>
#include <utility>

namespace shardcheck::gpu {

namespace {

using Table = std::map<std::string, int>;

const Table &unaryTable() {
  static const Table table{
      {"-", kUnaryNeg},
      {"neg", kUnaryNeg},
      {"!", kUnaryLogicalNot},
      {"logical_not", kUnaryLogicalNot},
      {"~", kUnaryBitwiseNot},
      {"bitwise_not", kUnaryBitwiseNot},
      {"abs", kUnaryAbs},
      {"fabs", kUnaryAbs},
      {"relu", kUnaryRelu},
      {"exp", kUnaryExp},
      {"exp2", kUnaryExp2},
      {"expm1", kUnaryExpm1},
      {"log", kUnaryLog},
      {"log2", kUnaryLog2},
      {"log10", kUnaryLog10},
      {"log1p", kUnaryLog1p},
      {"sqrt", kUnarySqrt},
      {"rsqrt", kUnaryRsqrt},
      {"reciprocal", kUnaryReciprocal},
      {"sigmoid", kUnarySigmoid},
      {"silu", kUnarySilu},
      {"gelu", kUnaryGelu},
      {"sin", kUnarySin},
      {"cos", kUnaryCos},
      {"tan", kUnaryTan},
      {"asin", kUnaryAsin},
      {"acos", kUnaryAcos},
      {"atan", kUnaryAtan},
      {"sinh", kUnarySinh},
      {"cosh", kUnaryCosh},
      {"tanh", kUnaryTanh},
      {"asinh", kUnaryAsinh},
      {"acosh", kUnaryAcosh},
      {"atanh", kUnaryAtanh},
      {"erf", kUnaryErf},
      {"erfc", kUnaryErfc},
      {"lgamma", kUnaryLgamma},
      {"ceil", kUnaryCeil},
      {"floor", kUnaryFloor},
      {"trunc", kUnaryTrunc},
      {"frac", kUnaryFrac},
      {"nearbyint", kUnaryNearbyint},
      {"isnan", kUnaryIsnan},
      {"isinf", kUnaryIsinf},
      {"isfinite", kUnaryIsfinite},
      {"signbit", kUnarySignbit},
  };
  return table;
}

const Table &binaryTable() {
  static const Table table{
      {"+", kBinaryAdd},
      {"add", kBinaryAdd},
      {"-", kBinarySub},
      {"sub", kBinarySub},
      {"*", kBinaryMul},
      {"mul", kBinaryMul},
      {"truediv", kBinaryTrueDiv},
      {"/", kBinaryDiv},
      {"div", kBinaryDiv},
      {"%", kBinaryMod},
      {"fmod", kBinaryMod},
      {"mod", kBinaryMod},
      {"ceilDiv", kBinaryCeilDiv},
      {"max", kBinaryMax},
      {"min", kBinaryMin},
      {"fmax", kBinaryFmax},
      {"fmin", kBinaryFmin},
      {"pow", kBinaryPow},
      {"atan2", kBinaryAtan2},
      {"remainder", kBinaryRemainder},
      {"nextafter", kBinaryNextafter},
      {"==", kBinaryEq},
      {"!=", kBinaryNe},
      {"<", kBinaryLt},
      {"<=", kBinaryLe},
      {">", kBinaryGt},
      {">=", kBinaryGe},
      {"&&", kBinaryLogicalAnd},
      {"logical_and", kBinaryLogicalAnd},
      {"||", kBinaryLogicalOr},
      {"logical_or", kBinaryLogicalOr},
      {"&", kBinaryBitAnd},
      {"bitwise_and", kBinaryBitAnd},
      {"|", kBinaryBitOr},
      {"bitwise_or", kBinaryBitOr},
      {"^", kBinaryBitXor},
      {"bitwise_xor", kBinaryBitXor},
      {"<<", kBinaryShl},
      {"lshift", kBinaryShl},
      {">>", kBinaryShr},
      {"rshift", kBinaryShr},
      {"gcd", kBinaryGcd},
  };
  return table;
}

const Table &ternaryTable() {
  static const Table table{
      {"clamp", kTernaryClamp},
      {"lerp", kTernaryLerp},
      {"threshold", kTernaryThreshold},
  };
  return table;
}

/// `op` itself, then `op` without a trailing `f`.
std::optional<int> lookupMaybeF(const Table &table, const std::string &op) {
  if (auto it = table.find(op); it != table.end())
    return it->second;
  if (op.size() > 1 && op.back() == 'f')
    if (auto it = table.find(op.substr(0, op.size() - 1)); it != table.end())
      return it->second;
  return std::nullopt;
}

std::vector<std::string> keysOf(const Table &table) {
  std::vector<std::string> keys;
  for (const auto &entry : table)
    keys.push_back(entry.first);
  return keys;
}

} // namespace

std::optional<int> unaryCode(const std::string &op) {
  return lookupMaybeF(unaryTable(), op);
}

std::optional<int> binaryCode(const std::string &op) {
  return lookupMaybeF(binaryTable(), op);
}

std::optional<int> ternaryCode(const std::string &op) {
  return lookupMaybeF(ternaryTable(), op);
}

std::vector<std::string> unarySpellings() {
  return keysOf(unaryTable());
}

std::vector<std::string> binarySpellings() {
  return keysOf(binaryTable());
}

std::vector<std::string> ternarySpellings() {
  return keysOf(ternaryTable());
}

bool isIntegerUnary(int code) {
  return code == kUnaryBitwiseNot;
}

bool isIntegerBinary(int code, bool integral) {
  switch (code) {
  case kBinaryBitAnd:
  case kBinaryBitOr:
  case kBinaryBitXor:
  case kBinaryShl:
  case kBinaryShr:
  case kBinaryGcd:
    return true;
  case kBinaryDiv:
  case kBinaryMod:
  case kBinaryCeilDiv:
    return integral;
  default:
    return false;
  }
}

} // namespace shardcheck::gpu
