// The planner's cost model; see CostModel.h.
#include "checker/CostModel.h"

namespace shardcheck {

double busFactor(CommKind k, int64_t n) {
  double m = static_cast<double>(n);
  switch (k) {
  case CommKind::Allgather:
  case CommKind::ReduceScatter:
  case CommKind::AllToAll:
    return (m - 1) / m;
  case CommKind::Allreduce:
    return 2 * (m - 1) / m;
  case CommKind::SendRecv:
  case CommKind::Broadcast:
  case CommKind::Reduce:
  case CommKind::Gather:
  case CommKind::Scatter:
    return 1;
  default:
    return 0;
  }
}

Sizes sizesOf(const Fusion &f, const TensorView &tv) {
  Sizes s;
  for (IdNum id : tv.logical) {
    const IterDomain &d = f.id(id);
    auto c = d.isBroadcast() ? std::optional<int64_t>(1) : d.extent.asConstant();
    s.extents.push_back(c ? *c : kSymbolicExtent);
  }
  int bytes = dataTypeSize(tv.dtype);
  s.elementBytes = bytes > 0 ? bytes : 4;
  return s;
}

double localElements(const Sizes &sizes, const ShardState &state, const DeviceMesh &mesh,
                     bool afterReduction) {
  double n = 1;
  for (size_t i = 0; i < state.axes.size(); ++i) {
    if (afterReduction && state.reduced[i])
      continue;
    int64_t e = sizes.extents[i];
    for (ParallelType t : state.axes[i]) {
      int64_t m = mesh.extentOf(t);
      e = (e + m - 1) / m;
    }
    n *= static_cast<double>(e);
  }
  return n;
}

StepCost collectiveCost(CommKind k, int64_t n, double bufferBytes, double copyBytes) {
  StepCost c;
  c.networkBytes = busFactor(k, n) * bufferBytes;
  c.cost = c.networkBytes + kLocalCopyWeight * copyBytes + kStepCost;
  return c;
}

} // namespace shardcheck
