// Dense row-major boxes of local buffers; see LocalBox.h.
//
// The rules are docs/semantics.md's ("Ownership", "Local buffer layout")
// restricted to one shape of sharding: a sharding ID (a DID-parallel loop ID
// that is neither broadcast nor reduction) is either a logical data ID whose
// extent equals its mesh axis, or the outer output of one split of a logical
// data ID, with the split's outer extent equal to its mesh axis and the input
// extent divisible by the inner extent. The device with coordinate c on that
// axis then holds indices [c * inner, (c + 1) * inner) of the logical axis,
// and the layout keeps the inner part in the logical axis's place.
#include "executor/LocalBox.h"

#include "ir/FusionGraph.h"

#include <algorithm>
#include <numeric>
#include <set>

namespace shardcheck {

int64_t LocalBox::slotCount() const {
  return std::accumulate(extent.begin(), extent.end(), int64_t{1}, std::multiplies<>());
}

namespace {

bool isShardingId(const IterDomain &id) {
  return id.isDeviceParallel() && !id.isBroadcast() && !id.isReduction();
}

bool isTrivialLayoutId(const IterDomain &id) {
  return id.isDeviceParallel() || id.isBroadcast() || id.isReduction();
}

int64_t ceilDiv(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

/// Builds one box; every method answers false for a layout it does not
/// recognize.
class BoxBuilder {
public:
  BoxBuilder(const Fusion &fusion, TensorNum t, const Bindings &symbols, int64_t device)
      : fusion_(fusion), tv_(fusion.tensor(t)), symbols_(symbols), device_(device),
        data_(dataLogicalIds(fusion, tv_)), layout_(data_) {}

  std::optional<LocalBox> build() {
    if (!startFull())
      return std::nullopt;
    const std::vector<IdNum> &loop = tv_.loop.empty() ? tv_.logical : tv_.loop;
    std::set<ParallelType> usedTypes;
    std::set<size_t> usedAxes;
    for (IdNum n : loop) {
      const IterDomain &id = fusion_.id(n);
      if (!isShardingId(id))
        continue;
      if (!tv_.mesh || !tv_.mesh->axisOf(id.parallel) || !usedTypes.insert(id.parallel).second)
        return std::nullopt;
      if (!shard(n, usedAxes))
        return std::nullopt;
    }
    if (tv_.mesh && !tv_.mesh->contains(device_))
      return std::nullopt;
    if (!allocationKeepsOrder())
      return std::nullopt;
    return box_;
  }

private:
  std::optional<int64_t> value(const Extent &e) const {
    auto v = e.evaluate(symbols_);
    if (!v || *v < 0)
      return std::nullopt;
    return v;
  }

  /// The whole reference shape; false for an expanded broadcast (whose
  /// named elements are only index 0) or an extent that does not evaluate.
  bool startFull() {
    for (IdNum n : data_) {
      const IterDomain &id = fusion_.id(n);
      if (id.expandedExtent)
        return false;
      int64_t e = 1;
      if (!id.isBroadcast()) {
        auto v = value(id.extent);
        if (!v)
          return false;
        e = *v;
      }
      box_.shape.push_back(e);
      box_.offset.push_back(0);
      box_.extent.push_back(e);
    }
    return true;
  }

  /// Cuts the box along the data axis sharding ID `n` comes from.
  bool shard(IdNum n, std::set<size_t> &usedAxes) {
    const IterDomain &id = fusion_.id(n);
    int64_t devices = tv_.mesh->extentOf(id.parallel);
    int64_t coordinate =
        tv_.mesh->contains(device_) ? tv_.mesh->coordinate(device_, id.parallel) : 0;
    IdNum axisId = n;
    int64_t inner = 1;
    const Transform *def = fusion_.definition(n);
    if (std::find(data_.begin(), data_.end(), n) == data_.end()) {
      // A chunked split's chunks depend on the outer coordinates: no box.
      if (!def || def->kind != Transform::Kind::Split || def->outputs.size() != 2 ||
          def->outputs[0] != n || def->chunked)
        return false;
      axisId = def->inputs[0];
      auto factor = value(def->factor);
      if (!factor || *factor < 1)
        return false;
      size_t axis = axisOf(axisId);
      if (axis == data_.size())
        return false;
      int64_t extent = box_.shape[axis];
      int64_t outer = def->innerSplit ? ceilDiv(extent, *factor) : *factor;
      inner = def->innerSplit ? *factor : ceilDiv(extent, *factor);
      if (outer != devices || extent != outer * inner)
        return false; // Padding, or devices without a chunk.
      layout_[axis] = def->outputs[1];
    } else if (box_.shape[axisOf(n)] != devices) {
      return false;
    }
    size_t axis = axisOf(axisId);
    if (!usedAxes.insert(axis).second || fusion_.id(axisId).isBroadcast())
      return false;
    box_.offset[axis] = coordinate * inner;
    box_.extent[axis] = inner;
    return true;
  }

  size_t axisOf(IdNum n) const {
    return static_cast<size_t>(std::find(data_.begin(), data_.end(), n) - data_.begin());
  }

  /// An allocation domain must list the layout's non-trivial IDs in data
  /// order (trivial IDs contribute extent 1 wherever they are).
  bool allocationKeepsOrder() const {
    if (!tv_.hasAllocation())
      return true;
    auto nonTrivial = [&](const std::vector<IdNum> &ids) {
      std::vector<IdNum> kept;
      for (IdNum n : ids)
        if (!isTrivialLayoutId(fusion_.id(n)))
          kept.push_back(n);
      return kept;
    };
    return nonTrivial(tv_.allocation) == nonTrivial(layout_);
  }

  const Fusion &fusion_;
  const TensorView &tv_;
  const Bindings &symbols_;
  int64_t device_;
  std::vector<IdNum> data_;   ///< Logical data IDs: the reference axes.
  std::vector<IdNum> layout_; ///< The default layout IDs (device splits' inner parts).
  LocalBox box_;
};

} // namespace

std::optional<LocalBox> localBoxOf(const Fusion &fusion, TensorNum t, const Bindings &symbols,
                                   int64_t device) {
  if (!fusion.hasTensor(t))
    return std::nullopt;
  return BoxBuilder(fusion, t, symbols, device).build();
}

std::optional<LocalBox> bufferBoxOf(const Plan &plan, const PlanBuffer &buffer,
                                    const Bindings &symbols, int64_t device) {
  bool follows =
      buffer.kind == BufferKind::Tensor || buffer.kind == BufferKind::Slice ||
      (buffer.kind == BufferKind::Partial && buffer.collective == CollectiveType::Allreduce);
  if (!follows)
    return std::nullopt;
  return localBoxOf(plan.fusion, buffer.tensor, symbols, device);
}

std::vector<int64_t> boxElements(const LocalBox &box) {
  size_t rank = box.shape.size();
  std::vector<int64_t> strides(rank, 1);
  for (size_t k = rank; k-- > 1;)
    strides[k - 1] = strides[k] * box.shape[k];
  std::vector<int64_t> elements;
  elements.reserve(static_cast<size_t>(box.slotCount()));
  std::vector<int64_t> index(rank, 0);
  for (int64_t n = box.slotCount(); n > 0; --n) {
    int64_t element = 0;
    for (size_t k = 0; k < rank; ++k)
      element += (box.offset[k] + index[k]) * strides[k];
    elements.push_back(element);
    for (size_t k = rank; k-- > 0 && ++index[k] == box.extent[k];)
      index[k] = 0;
  }
  return elements;
}

std::vector<double> extractBox(const HostTensor &whole, const LocalBox &box) {
  SC_ASSERT(whole.shape() == box.shape, "a box of another shape");
  size_t rank = box.shape.size();
  std::vector<double> out;
  out.reserve(static_cast<size_t>(box.slotCount()));
  if (box.slotCount() == 0)
    return out;
  if (rank == 0) {
    out.push_back(whole.data()[0]);
    return out;
  }
  // Rows along the last axis are contiguous in both: copy them whole.
  std::vector<int64_t> strides = whole.strides(), index(rank - 1, 0);
  int64_t rowLength = box.extent[rank - 1];
  for (int64_t rows = box.slotCount() / rowLength; rows > 0; --rows) {
    int64_t start = box.offset[rank - 1];
    for (size_t k = 0; k + 1 < rank; ++k)
      start += (box.offset[k] + index[k]) * strides[k];
    out.insert(out.end(), whole.data().begin() + start, whole.data().begin() + start + rowLength);
    for (size_t k = rank - 1; k-- > 0 && ++index[k] == box.extent[k];)
      index[k] = 0;
  }
  return out;
}

} // namespace shardcheck
