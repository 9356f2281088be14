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

#include "ir/ElementTypes.h"

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

/// A copy of `t` with every element rounded to `d` and dtype `d`.
HostTensor roundedTo(const HostTensor &t, DataType d);

} // namespace shardcheck
