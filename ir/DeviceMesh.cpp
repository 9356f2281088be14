// Implementation of DeviceMesh; see DeviceMesh.h.
#include "ir/DeviceMesh.h"

#include "util/Diagnostics.h"

#include <algorithm>
#include <functional>
#include <numeric>

namespace shardcheck {

DeviceMesh DeviceMesh::create(std::vector<int64_t> shape, std::vector<int64_t> devices) {
  int64_t n = 1;
  for (int64_t s : shape) {
    SC_ASSERT(s > 0, "mesh axes must be non-empty");
    n *= s;
  }
  SC_ASSERT(n == static_cast<int64_t>(devices.size()),
            "mesh shape does not match its device count");
  DeviceMesh m;
  m.shape_ = std::move(shape);
  m.devices_ = std::move(devices);
  return m;
}

DeviceMesh DeviceMesh::linear(std::vector<int64_t> devices) {
  auto n = static_cast<int64_t>(devices.size());
  return create({n}, std::move(devices));
}

bool DeviceMesh::contains(int64_t device) const {
  return std::find(devices_.begin(), devices_.end(), device) != devices_.end();
}

std::optional<int> DeviceMesh::axisOf(ParallelType didType) const {
  int axis = rank() - 1 - deviceDimIndex(didType);
  if (axis < 0)
    return std::nullopt;
  return axis;
}

int64_t DeviceMesh::extentOf(ParallelType didType) const {
  auto axis = axisOf(didType);
  return axis ? shape_[*axis] : 1;
}

std::vector<int64_t> DeviceMesh::coordinates(int64_t device) const {
  // Consecutive meshes (most) find the device at once; others search.
  int64_t flat = devices_.empty() ? -1 : device - devices_.front();
  if (flat < 0 || flat >= size() || devices_[flat] != device) {
    auto it = std::find(devices_.begin(), devices_.end(), device);
    SC_ASSERT(it != devices_.end(), "device not in mesh");
    flat = it - devices_.begin();
  }
  std::vector<int64_t> c(shape_.size());
  for (int i = rank() - 1; i >= 0; --i) {
    c[i] = flat % shape_[i];
    flat /= shape_[i];
  }
  return c;
}

int64_t DeviceMesh::coordinate(int64_t device, ParallelType didType) const {
  auto axis = axisOf(didType);
  if (!axis)
    return 0;
  return coordinates(device)[*axis];
}

int64_t DeviceMesh::deviceAt(const std::vector<int64_t> &coords) const {
  SC_ASSERT(coords.size() == shape_.size(), "coordinate rank mismatch");
  int64_t flat = 0;
  for (size_t i = 0; i < coords.size(); ++i) {
    SC_ASSERT(coords[i] >= 0 && coords[i] < shape_[i], "coordinate out of range");
    flat = flat * shape_[i] + coords[i];
  }
  return devices_[flat];
}

std::string DeviceMesh::str() const {
  // Print recursively: each axis is a brace group, devices space-separated.
  std::function<std::string(int, size_t &)> rec = [&](int axis, size_t &next) {
    std::string s = "{";
    for (int64_t i = 0; i < shape_[axis]; ++i) {
      if (axis + 1 == rank()) {
        if (i > 0)
          s += " ";
        s += std::to_string(devices_[next++]);
      } else {
        s += rec(axis + 1, next);
      }
    }
    return s + "}";
  };
  size_t next = 0;
  if (shape_.empty())
    return "DeviceMesh{}";
  return "DeviceMesh" + rec(0, next);
}

} // namespace shardcheck
