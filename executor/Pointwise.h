// Element rules of the reference evaluator: what each printed pointwise op
// spelling computes on doubles, and which dtype a cast spelling converts to
// (printed scalars read through ir/Scalars.h).
//
// The spellings with a rule are exactly those of ir/PointwiseOps.h, the list
// the readers classify ops by; a spelling outside it yields nullopt so that
// the caller reports it (with the expression's location) instead of guessing.
// This file does not walk tensors and does not decide which spellings are
// pointwise.
#pragma once

#include "ir/Collectives.h"
#include "ir/PointwiseOps.h"
#include "ir/Types.h"

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>

namespace shardcheck {

using UnaryRule = std::function<double(double)>;
using BinaryRule = std::function<double(double, double)>;
using TernaryRule = std::function<double(double, double, double)>;

/// Thrown by integer division rules on a zero divisor; the evaluator turns it
/// into a located InputError.
struct IntegerDivisionByZero {};

/// The rule of every listed op; the unit tests walk the list through these.
UnaryRule unaryRule(UnaryOp op);
BinaryRule binaryRule(BinaryOp op, bool integral);
TernaryRule ternaryRule(TernaryOp op);

/// The rule of a unary op (`-`, `relu`, `expf`, `tanh`, ...). A trailing `f`
/// (CUDA's float spelling) is accepted for every listed spelling.
std::optional<UnaryRule> unaryRule(const std::string &op);

/// The rule of a binary op (`+`, `max`, `pow`, `==`, `&&`, ...). `integral`
/// selects integer semantics for `/` (truncating) and `%`, which differ from
/// the floating ones; it is the output dtype's integrality.
std::optional<BinaryRule> binaryRule(const std::string &op, bool integral);

/// The rule of a three-operand pointwise op other than where (`clamp`,
/// `lerp`, `threshold`).
std::optional<TernaryRule> ternaryRule(const std::string &op);

/// The dtype a cast spelling converts to: `__to_float` -> Float,
/// `__float2bfloat` -> BFloat16, `(double)` -> Double.
std::optional<DataType> castTarget(const std::string &op);

/// `op` applied to two values (a reduction's and a reducing collective's
/// combining rule); Max and Min propagate NaN (as torch.max does), so a NaN
/// on one device cannot vanish from the result.
double reduceCombine(ReduceOp op, double a, double b);

} // namespace shardcheck
