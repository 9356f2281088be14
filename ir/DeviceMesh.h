// DeviceMesh: an N-d array of distinct device ids.
//
// nvFuser's convention: DIDx indexes the LAST (innermost) mesh axis, DIDy the
// one before it, DIDz the one before that. `DeviceMesh{{0 1}{2 3}}` has shape
// [2, 2]; device 1 has DIDx coordinate 1 and DIDy coordinate 0.
//
// The factory checks the shape/device-count invariant; distinctness of ids is
// a user-facing lint (ir/Lints.h), not an invariant, so a bad mesh in a dump is
// reported with its location rather than crashing the reader.
#pragma once

#include "ir/Types.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace shardcheck {

class DeviceMesh {
public:
  DeviceMesh() = default;
  /// Row-major `devices`; product(shape) must equal devices.size().
  static DeviceMesh create(std::vector<int64_t> shape, std::vector<int64_t> devices);
  /// A 1-D mesh.
  static DeviceMesh linear(std::vector<int64_t> devices);

  const std::vector<int64_t> &shape() const { return shape_; }
  const std::vector<int64_t> &devices() const { return devices_; }
  int rank() const { return static_cast<int>(shape_.size()); }
  int64_t size() const { return static_cast<int64_t>(devices_.size()); }
  bool contains(int64_t device) const;

  /// The mesh axis a device parallel type indexes (DIDx = rank-1), or nullopt
  /// when the mesh has too few axes for it.
  std::optional<int> axisOf(ParallelType didType) const;
  /// The number of devices along the axis `didType` indexes; 1 when the mesh
  /// has no such axis.
  int64_t extentOf(ParallelType didType) const;
  /// The coordinate of `device` along the axis of `didType` (0 if the mesh
  /// has no such axis). Requires contains(device).
  int64_t coordinate(int64_t device, ParallelType didType) const;
  /// Multi-index of `device` (row-major). Requires contains(device).
  std::vector<int64_t> coordinates(int64_t device) const;
  /// The device at a multi-index.
  int64_t deviceAt(const std::vector<int64_t> &coords) const;

  /// nvFuser's current spelling: `DeviceMesh{0 1}`, `DeviceMesh{{0 1}{2 3}}`.
  std::string str() const;

  friend bool operator==(const DeviceMesh &a, const DeviceMesh &b) {
    return a.shape_ == b.shape_ && a.devices_ == b.devices_;
  }
  friend bool operator!=(const DeviceMesh &a, const DeviceMesh &b) { return !(a == b); }

private:
  std::vector<int64_t> shape_;
  std::vector<int64_t> devices_;
};

} // namespace shardcheck
