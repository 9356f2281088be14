// The planner's cost model; see CostModel.h.
#include "checker/CostModel.h"

#include <algorithm>
#include <cmath>

namespace shardcheck {

double busFactor(CollectiveType c, int64_t n) {
  if (n <= 1) // A team of one moves nothing.
    return 0;
  double m = static_cast<double>(n);
  switch (c) {
  case CollectiveType::Allgather:
  case CollectiveType::ReduceScatter:
  case CollectiveType::AllToAll:
  case CollectiveType::AllToAllv:
    return (m - 1) / m;
  case CollectiveType::Allreduce:
    return 2 * (m - 1) / m;
  case CollectiveType::SendRecv:
  case CollectiveType::CollectivePermute:
  case CollectiveType::Broadcast:
  case CollectiveType::Reduce:
  case CollectiveType::Gather:
  case CollectiveType::Scatter:
    return 1;
  }
  return 0;
}

double busFactor(CommKind k, int64_t n) {
  auto c = collectiveOfCommKind(k);
  return c ? busFactor(*c, n) : 0;
}

double collectiveBytes(CollectiveType c, int64_t n, double inBytes, double outBytes) {
  return busFactor(c, n) * std::max(inBytes, outBytes);
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

bool operator<(const StepCost &a, const StepCost &b) {
  double tolerance = 1e-9 * std::max({1.0, a.networkBytes, b.networkBytes});
  if (std::fabs(a.networkBytes - b.networkBytes) > tolerance)
    return a.networkBytes < b.networkBytes;
  return a.local < b.local;
}

StepCost collectiveCost(CommKind k, int64_t n, double bufferBytes) {
  return {busFactor(k, n) * bufferBytes, kStepCost};
}

StepCost localCost(double copyBytes) {
  return {0, kLocalCopyWeight * copyBytes + kStepCost};
}

} // namespace shardcheck
