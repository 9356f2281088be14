// Op codes of the GPU compute layer: every pointwise op spelling the
// reference evaluator accepts (executor/Pointwise.cpp) mapped to a small
// integer that the device kernels switch on.
//
// The codes mean exactly what Pointwise.cpp's rules compute: same formulas,
// same NaN behaviour, same integer semantics for `/`, `%` and `ceilDiv` when
// the output is integral. The table of spellings lives in OpCodes.cpp; the
// device implementation of each code lives in DeviceSupport.cuh.
//
// Plain host C++ (no CUDA headers): included by g++-compiled code and by
// the .cu files alike.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace shardcheck::gpu {

/// Unary op codes. Each line names the spellings that map to the code (a
/// trailing `f`, CUDA's float spelling, is accepted for every one).
enum UnaryCode : int {
  kUnaryNeg,        ///< `-`, `neg`: -x
  kUnaryLogicalNot, ///< `!`, `logical_not`: x == 0 ? 1 : 0
  kUnaryBitwiseNot, ///< `~`, `bitwise_not`: ~int64(x)
  kUnaryAbs,        ///< `abs`, `fabs`
  kUnaryRelu,       ///< `relu`: x > 0 || isnan(x) ? x : 0
  kUnaryExp,
  kUnaryExp2,
  kUnaryExpm1,
  kUnaryLog,
  kUnaryLog2,
  kUnaryLog10,
  kUnaryLog1p,
  kUnarySqrt,
  kUnaryRsqrt,      ///< 1 / sqrt(x)
  kUnaryReciprocal, ///< 1 / x
  kUnarySigmoid,    ///< 1 / (1 + exp(-x))
  kUnarySilu,       ///< x * sigmoid(x)
  kUnaryGelu,       ///< 0.5 * x * (1 + erf(x / sqrt(2)))
  kUnarySin,
  kUnaryCos,
  kUnaryTan,
  kUnaryAsin,
  kUnaryAcos,
  kUnaryAtan,
  kUnarySinh,
  kUnaryCosh,
  kUnaryTanh,
  kUnaryAsinh,
  kUnaryAcosh,
  kUnaryAtanh,
  kUnaryErf,
  kUnaryErfc,
  kUnaryLgamma,
  kUnaryCeil,
  kUnaryFloor,
  kUnaryTrunc,
  kUnaryFrac,      ///< x - trunc(x)
  kUnaryNearbyint, ///< round half to even
  kUnaryIsnan,     ///< 1 or 0
  kUnaryIsinf,
  kUnaryIsfinite,
  kUnarySignbit,
  kUnaryCount
};

/// Binary op codes (a trailing `f` is accepted for every spelling).
enum BinaryCode : int {
  kBinaryAdd,     ///< `+`, `add`
  kBinarySub,     ///< `-`, `sub`
  kBinaryMul,     ///< `*`, `mul`
  kBinaryTrueDiv, ///< `truediv`: a / b, floating whatever the dtype
  kBinaryDiv,     ///< `/`, `div`: integral ? truncating int64 division : a / b
  kBinaryMod,     ///< `%`, `fmod`, `mod`: integral ? int64 `%` : fmod(a, b)
  kBinaryCeilDiv, ///< `ceilDiv`: integral ? quotient rounded up : ceil(a / b)
  kBinaryMax,     ///< `max`: NaN-propagating
  kBinaryMin,     ///< `min`: NaN-propagating
  kBinaryFmax,    ///< `fmax`: NaN-ignoring
  kBinaryFmin,    ///< `fmin`
  kBinaryPow,
  kBinaryAtan2,
  kBinaryRemainder, ///< Python-style: the sign of the divisor
  kBinaryNextafter,
  kBinaryEq,         ///< `==`: 1 or 0
  kBinaryNe,         ///< `!=`
  kBinaryLt,         ///< `<`
  kBinaryLe,         ///< `<=`
  kBinaryGt,         ///< `>`
  kBinaryGe,         ///< `>=`
  kBinaryLogicalAnd, ///< `&&`, `logical_and`
  kBinaryLogicalOr,  ///< `||`, `logical_or`
  kBinaryBitAnd,     ///< `&`, `bitwise_and` (on int64(a), int64(b))
  kBinaryBitOr,      ///< `|`, `bitwise_or`
  kBinaryBitXor,     ///< `^`, `bitwise_xor`
  kBinaryShl,        ///< `<<`, `lshift`
  kBinaryShr,        ///< `>>`, `rshift`
  kBinaryGcd,        ///< `gcd`: non-negative
  kBinaryCount
};

/// Ternary op codes other than where (a trailing `f` is accepted).
enum TernaryCode : int {
  kTernaryClamp,     ///< `clamp`: min(max(x, lo), hi)
  kTernaryLerp,      ///< `lerp`: a + w * (b - a)
  kTernaryThreshold, ///< `threshold`: x <= th ? v : x
  kTernaryCount
};

/// The code of a unary spelling (`relu`, `expf`, `-`, ...); nullopt for a
/// spelling executor/Pointwise.cpp does not accept either.
std::optional<int> unaryCode(const std::string &op);
/// The code of a binary spelling (`+`, `max`, `/`, `ceilDiv`, `powf`, ...).
std::optional<int> binaryCode(const std::string &op);
/// The code of a ternary spelling (`clamp`, `lerp`, `threshold`).
std::optional<int> ternaryCode(const std::string &op);

/// Every spelling of each table, without the trailing-`f` forms (for tests
/// and diagnostics).
std::vector<std::string> unarySpellings();
std::vector<std::string> binarySpellings();
std::vector<std::string> ternarySpellings();

/// Whether the unary code computes on int64 values (`~`).
bool isIntegerUnary(int code);
/// Whether the binary code computes on int64 values: the bitwise ops, shifts
/// and gcd always; `/`, `%` and `ceilDiv` when `integral`.
bool isIntegerBinary(int code, bool integral);

} // namespace shardcheck::gpu
