// The planner's cost model: bytes moved per device by one step of a plan
// (docs/semantics.md, "Multi-step plans", has the table).
//
// A collective over a team of n devices moves, per device, its buffer size
// S times nccl-tests' bus-bandwidth factor (the factor that turns algorithm
// bandwidth S/t into the bandwidth each link carries): (n-1)/n for
// Allgather (S = the gathered output), ReduceScatter (S = the input, before
// the scatter) and AllToAll (S = the buffer); 2(n-1)/n for Allreduce; 1 for
// SendRecv pairs, Broadcast and Reduce. A local copy (a slice, the local
// permute after a collective) moves no bytes between devices but is priced
// at kLocalCopyWeight of its bytes, so that among plans moving the same
// bytes the one with fewer copies wins; each step also costs kStepCost
// (latency), so that fewer steps win among otherwise equal plans.
//
// Uneven states (checker/Planner.cpp) are priced at their padded buffers,
// the bytes the padded collectives actually send: localElements takes the
// ceilDiv of every split.
//
// Sizes: constant extents as they are; a symbolic extent counts as
// kSymbolicExtent. This file does not choose or prove steps.
#pragma once

#include "checker/Lowering.h"
#include "checker/ShardState.h"
#include "ir/DeviceMesh.h"

#include <cstdint>
#include <vector>

namespace shardcheck {

constexpr double kLocalCopyWeight = 1.0 / 8; ///< HBM is roughly 10x a link's bandwidth.
constexpr double kStepCost = 1.0;            ///< Bytes a step's latency is worth (a tie-breaker).
constexpr int64_t kSymbolicExtent = 1024;

/// nccl-tests' bus-bandwidth factor of `k` over `n` devices.
double busFactor(CommKind k, int64_t n);

/// Global extents of a tensor's logical axes (symbolic ones as
/// kSymbolicExtent) and its element size, for pricing.
struct Sizes {
  std::vector<int64_t> extents;
  int64_t elementBytes = 4;
};
Sizes sizesOf(const Fusion &f, const TensorView &tv);

/// Elements each device holds in `state` (reduced axes count as 1 when
/// `afterReduction`).
double localElements(const Sizes &sizes, const ShardState &state, const DeviceMesh &mesh,
                     bool afterReduction = false);

/// What a step costs: bytes sent per device, and the weighted total.
struct StepCost {
  double networkBytes = 0;
  double cost = 0;
};

/// A collective of kind `k` over teams of `n`, whose buffer (in the sense
/// above) has `bufferBytes`, plus a local copy of `copyBytes`.
StepCost collectiveCost(CommKind k, int64_t n, double bufferBytes, double copyBytes);

} // namespace shardcheck
