// Host rounding of dtypes and the element-type list's lookups; see
// ElementTypes.h.
//
// Does not: hold a size or spelling of an element type (the list does).
#include "ir/ElementTypes.h"

#include "util/Diagnostics.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

namespace shardcheck {

namespace {

/// A binary floating-point format: `precision` significand bits (with the
/// implicit one), smallest normal 2^minExponent, largest finite value.
struct FloatFormat {
  int precision;
  int minExponent;
  double maxFinite;
  bool hasInfinity;
};

std::optional<FloatFormat> floatFormatOf(DataType d) {
  switch (d) {
  case DataType::Float:
    return FloatFormat{24, -126, std::numeric_limits<float>::max(), true};
  case DataType::Half:
    return FloatFormat{11, -14, 65504.0, true};
  case DataType::BFloat16:
    return FloatFormat{8, -126, std::ldexp(2.0 - std::ldexp(1.0, -7), 127), true};
  case DataType::Float8_e4m3: // e4m3fn: no infinity, overflow is NaN.
    return FloatFormat{4, -6, 448.0, false};
  case DataType::Float8_e5m2:
    return FloatFormat{3, -14, 57344.0, true};
  default:
    return std::nullopt;
  }
}

/// Rounds to the nearest value of `f`, ties to even. Done by hand rather than
/// through a C++ conversion so that every format (and overflow, which is
/// undefined for double -> float in C++) behaves the same way.
double roundToFormat(double v, const FloatFormat &f) {
  if (std::isnan(v) || v == 0.0)
    return v;
  if (std::isinf(v))
    return f.hasInfinity ? v : std::numeric_limits<double>::quiet_NaN();
  int exponent = 0;
  std::frexp(std::fabs(v), &exponent); // |v| in [2^(exponent-1), 2^exponent)
  // Below the smallest normal the spacing stays that of the subnormals.
  int ulpExponent = std::max(exponent - 1, f.minExponent) - (f.precision - 1);
  double rounded = std::ldexp(std::nearbyint(std::ldexp(std::fabs(v), -ulpExponent)), ulpExponent);
  if (rounded > f.maxFinite)
    rounded = f.hasInfinity ? std::numeric_limits<double>::infinity()
                            : std::numeric_limits<double>::quiet_NaN();
  return std::copysign(rounded, v);
}

/// The [min, max] range of an integer dtype, as doubles.
std::optional<std::pair<double, double>> integerRange(DataType d) {
  switch (d) {
  case DataType::Int8:
    return std::pair{-128.0, 127.0};
  case DataType::UInt8:
    return std::pair{0.0, 255.0};
  case DataType::Int16:
    return std::pair{-32768.0, 32767.0};
  case DataType::UInt16:
    return std::pair{0.0, 65535.0};
  case DataType::Int32:
    return std::pair{-2147483648.0, 2147483647.0};
  case DataType::UInt32:
    return std::pair{0.0, 4294967295.0};
  case DataType::Int64:
  case DataType::Index:
    return std::pair{-std::ldexp(1.0, 63), std::ldexp(1.0, 63)};
  case DataType::UInt64:
    return std::pair{0.0, std::ldexp(1.0, 64)};
  default:
    return std::nullopt;
  }
}

} // namespace

bool isIntegralDtype(DataType d) {
  return d == DataType::Bool || integerRange(d).has_value();
}

bool isFloatingDtype(DataType d) {
  return d == DataType::Double || d == DataType::Unknown || floatFormatOf(d).has_value();
}

double roundToDtype(double v, DataType d) {
  if (d == DataType::Double || d == DataType::Unknown)
    return v;
  if (auto format = floatFormatOf(d))
    return roundToFormat(v, *format);
  if (d == DataType::Bool)
    return v != 0.0 ? 1.0 : 0.0;
  if (auto range = integerRange(d)) {
    if (std::isnan(v))
      return 0.0;
    return std::clamp(std::trunc(v), range->first, range->second);
  }
  throwInputError("unsupported-dtype",
                  std::string("the reference has no rounding rule for dtype `") + dataTypeName(d) +
                      "`");
}

double largestBelowOne(DataType d) {
  if (auto format = floatFormatOf(d))
    return 1.0 - std::ldexp(1.0, -format->precision);
  return 1.0 - std::ldexp(1.0, -53);
}

std::optional<ElementType> elementTypeOf(DataType d) {
  if (d == DataType::Unknown)
    return ElementType::F32;
  if (d == DataType::Index)
    return ElementType::I64;
  for (const ElementTypeInfo &e : kElementTypes)
    if (e.dtype == d)
      return e.type;
  return std::nullopt;
}

double roundToElementType(double v, ElementType t) {
  return roundToDtype(v, kElementTypes[static_cast<size_t>(t)].dtype);
}

} // namespace shardcheck
