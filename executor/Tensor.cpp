// HostTensor storage and dtype rounding; see Tensor.h.
#include "executor/Tensor.h"

#include "util/Checked.h"
#include "util/Diagnostics.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

namespace shardcheck {

int64_t elementCount(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t e : shape)
    n = mulOrThrow(n, e, "an element count");
  return n;
}

bool nextIndex(std::vector<int64_t> &index, const std::vector<int64_t> &shape) {
  for (size_t k = index.size(); k-- > 0;) {
    if (++index[k] < shape[k])
      return true;
    index[k] = 0;
  }
  return false;
}

HostTensor::HostTensor() : data_(1, 0.0) {}

HostTensor::HostTensor(std::vector<int64_t> shape, DataType dtype)
    : shape_(std::move(shape)), dtype_(dtype) {
  for (int64_t e : shape_)
    SC_ASSERT(e >= 0, "negative extent in a HostTensor shape");
  data_.assign(static_cast<size_t>(elementCount(shape_)), 0.0);
}

HostTensor::HostTensor(std::vector<int64_t> shape, DataType dtype, std::vector<double> data)
    : shape_(std::move(shape)), dtype_(dtype), data_(std::move(data)) {
  for (int64_t e : shape_)
    SC_ASSERT(e >= 0, "negative extent in a HostTensor shape");
  SC_ASSERT(static_cast<int64_t>(data_.size()) == elementCount(shape_),
            "HostTensor data size does not match its shape");
}

std::vector<int64_t> HostTensor::strides() const {
  std::vector<int64_t> s(shape_.size(), 1);
  for (size_t k = shape_.size(); k-- > 1;)
    s[k - 1] = s[k] * shape_[k];
  return s;
}

int64_t HostTensor::offsetOf(const std::vector<int64_t> &index) const {
  SC_ASSERT(index.size() == shape_.size(), "multi-index rank differs from the tensor's");
  int64_t offset = 0;
  for (size_t k = 0; k < index.size(); ++k) {
    SC_ASSERT(index[k] >= 0 && index[k] < shape_[k], "multi-index out of bounds");
    offset = offset * shape_[k] + index[k];
  }
  return offset;
}

HostTensor roundedTo(const HostTensor &t, DataType d) {
  std::vector<double> data = t.data();
  for (double &v : data)
    v = roundToDtype(v, d);
  return HostTensor(t.shape(), d, std::move(data));
}

} // namespace shardcheck
