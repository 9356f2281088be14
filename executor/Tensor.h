// HostTensor: a dense, row-major tensor value on the host, and the rounding
// that emulates storing a value into an nvFuser dtype.
//
// The reference evaluator computes in double precision, so every element is a
// `double` whatever the tensor's dtype; the dtype says how the value would be
// stored on a device and drives rounding (casts, integer results, random
// inputs) and, later, per-dtype tolerances.
//
// This file does not know fusions, devices or shardings, and does not compare
// tensors: the executor and the validation do.
#pragma once

#include "ir/Types.h"

#include <cstdint>
#include <vector>

namespace shardcheck {

/// The number of elements of a shape (1 for a zero-dim shape).
int64_t elementCount(const std::vector<int64_t> &shape);

/// Advances a row-major multi-index over `shape` (last axis fastest). Returns
/// false after the last index, leaving `index` all zeros.
bool nextIndex(std::vector<int64_t> &index, const std::vector<int64_t> &shape);

/// A dense host tensor in row-major order, elements held as doubles.
class HostTensor {
public:
  /// A zero-dim float tensor holding 0.
  HostTensor();
  /// A tensor of `shape` filled with zeros. Extents must be non-negative.
  HostTensor(std::vector<int64_t> shape, DataType dtype);
  /// A tensor of `shape` with the given row-major `data`; its size must match.
  HostTensor(std::vector<int64_t> shape, DataType dtype, std::vector<double> data);

  const std::vector<int64_t> &shape() const { return shape_; }
  DataType dtype() const { return dtype_; }
  size_t rank() const { return shape_.size(); }
  int64_t numel() const { return static_cast<int64_t>(data_.size()); }
  const std::vector<double> &data() const { return data_; }
  std::vector<double> &data() { return data_; }

  /// Row-major strides in elements.
  std::vector<int64_t> strides() const;
  /// The row-major offset of a multi-index; asserts it is in bounds.
  int64_t offsetOf(const std::vector<int64_t> &index) const;
  /// Element access by multi-index (bounds-checked by assertion).
  double &at(const std::vector<int64_t> &index) { return data_[offsetOf(index)]; }
  double at(const std::vector<int64_t> &index) const { return data_[offsetOf(index)]; }

private:
  std::vector<int64_t> shape_;
  DataType dtype_ = DataType::Float;
  std::vector<double> data_;
};

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

/// A copy of `t` with every element rounded to `d` and dtype `d`.
HostTensor roundedTo(const HostTensor &t, DataType d);

/// The largest value of dtype `d` below 1.0 (for floating types), so random
/// inputs stay in [-1, 1) after rounding.
double largestBelowOne(DataType d);

} // namespace shardcheck
