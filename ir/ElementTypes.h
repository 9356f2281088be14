// Element types: what a dtype's values become when stored (host rounding),
// and the one list of the element types a device buffer holds.
//
// SHARDCHECK_ELEMENT_TYPES is the only list of the 8 element types the GPU
// backend's arrays and NCCL's collectives hold (each with its size and the
// dtype whose rounding it follows); every enum, name and size table of an
// element type is generated from it. roundToDtype is the one host rounding:
// the reference evaluator, the executors and the GPU layer's uploads all
// round through it.
//
// Does not: compute with values (executor/Pointwise.cpp) or know devices.
#pragma once

#include "ir/Types.h"

#include <array>
#include <cstddef>
#include <optional>

namespace shardcheck {

/// Whether values of `d` are integers (integer types, Index and Bool).
bool isIntegralDtype(DataType d);
/// Whether `d` is a real floating-point type (Unknown counts as one: a dump
/// without dtypes is evaluated without rounding).
bool isFloatingDtype(DataType d);

/// The value `v` becomes when stored as `d`:
/// - Double and Unknown: unchanged.
/// - Float, Half, BFloat16, Float8_e4m3, Float8_e5m2: rounded to nearest,
///   ties to even, with subnormals; overflow gives +-inf (NaN for e4m3, which
///   has no infinity), as a CUDA conversion does.
/// - Integer types and Index: truncated toward zero and saturated to the
///   type's range, NaN gives 0 (CUDA's saturating float-to-int conversion).
/// - Bool: 1 when v != 0 (NaN included), else 0.
/// Dtypes without a rule (fp4, e8m0, complex) are an InputError.
double roundToDtype(double v, DataType d);

/// The largest value of dtype `d` below 1.0 (for floating types), so random
/// inputs stay in [-1, 1) after rounding.
double largestBelowOne(DataType d);

// X(name, spelling, bytes, dtype): dtype is the DataType whose values and
// rounding the element type holds (U8 holds Bool).
#define SHARDCHECK_ELEMENT_TYPES(X)                                                                \
  X(F64, "f64", 8, Double)                                                                         \
  X(F32, "f32", 4, Float)                                                                          \
  X(F16, "f16", 2, Half)                                                                           \
  X(BF16, "bf16", 2, BFloat16)                                                                     \
  X(I64, "i64", 8, Int64)                                                                          \
  X(I32, "i32", 4, Int32)                                                                          \
  X(I8, "i8", 1, Int8)                                                                             \
  X(U8, "u8", 1, Bool)

/// Element types a device buffer can hold. U8 holds bool (0 or 1).
enum class ElementType {
#define SC_ELEMENT_TYPE_ENUM(name, ...) name,
  SHARDCHECK_ELEMENT_TYPES(SC_ELEMENT_TYPE_ENUM)
#undef SC_ELEMENT_TYPE_ENUM
};

/// One row of SHARDCHECK_ELEMENT_TYPES.
struct ElementTypeInfo {
  ElementType type;
  const char *name;
  size_t bytes;
  DataType dtype;
};

inline constexpr std::array kElementTypes = {
#define SC_ELEMENT_TYPE_ROW(name, spelling, bytes, dtype)                                          \
  ElementTypeInfo{ElementType::name, spelling, bytes, DataType::dtype},
    SHARDCHECK_ELEMENT_TYPES(SC_ELEMENT_TYPE_ROW)
#undef SC_ELEMENT_TYPE_ROW
};

/// Bytes per element.
constexpr size_t elementSize(ElementType t) {
  return kElementTypes[static_cast<size_t>(t)].bytes;
}
/// `f64`, `f32`, `f16`, `bf16`, `i64`, `i32`, `i8`, `u8`.
constexpr const char *elementTypeName(ElementType t) {
  return kElementTypes[static_cast<size_t>(t)].name;
}
/// The element type of a dtype: the row naming it, and also Unknown -> F32
/// (a dump without dtypes) and Index -> I64. Others: nullopt.
std::optional<ElementType> elementTypeOf(DataType d);
/// The value `v` becomes when stored as `t` (host side): roundToDtype of
/// t's dtype.
double roundToElementType(double v, ElementType t);

} // namespace shardcheck
