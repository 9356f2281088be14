// nccl-tests' bus factors per collective; see BusBytes.h.
//
// It does not read sizes from anything: callers pass counts.
#include "dtensor/BusBytes.h"

#include <algorithm>

namespace shardcheck::dtensor {

double busBytes(CollectiveType type, double inCount, double outCount, int64_t teamSize,
                int elementSize) {
  if (teamSize <= 1)
    return 0;
  double n = static_cast<double>(teamSize);
  double larger = std::max(inCount, outCount) * elementSize;
  switch (type) {
  case CollectiveType::Allreduce:
    return 2 * (n - 1) / n * inCount * elementSize;
  case CollectiveType::Broadcast:
  case CollectiveType::Reduce:
  case CollectiveType::SendRecv:
  case CollectiveType::CollectivePermute:
    return larger;
  default: // Allgather, ReduceScatter, AllToAll(v), Gather, Scatter
    return (n - 1) / n * larger;
  }
}

} // namespace shardcheck::dtensor
