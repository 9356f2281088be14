// The one cost model of shardcheck: bytes moved per device by one step of a
// plan (docs/semantics.md, "Multi-step plans", has the table). The planner
// searches under it, and the DTensor side (dtensor/DTensorPlan.h: DTensor's
// recorded or modelled sequences; bench/dtensor_sweep.cpp: shardcheck's
// built plans) prices with collectiveBytes, so that every plan compared is
// priced by the same factors.
//
// A collective over a team of n devices moves, per device, its buffer size
// S times nccl-tests' bus-bandwidth factor (the factor that turns algorithm
// bandwidth S/t into the bandwidth each link carries): (n-1)/n for
// Allgather (S = the gathered output), ReduceScatter (S = the input, before
// the scatter) and AllToAll(v) (S = the buffer); 2(n-1)/n for Allreduce; 1
// for SendRecv pairs, CollectivePermute, Broadcast, Reduce, Gather and
// Scatter (S = the root's larger buffer); 0 for a team of one. In every
// case S is the larger of a member's input and output buffers. A local copy (a slice, the local
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

/// nccl-tests' bus-bandwidth factor of `c` over `n` devices.
double busFactor(CollectiveType c, int64_t n);
/// The same for a lowering (None and Alias: 0).
double busFactor(CommKind k, int64_t n);

/// Bytes one member of a team of `n` moves in collective `c` passing
/// buffers of `inBytes` and `outBytes`: busFactor x the larger buffer.
double collectiveBytes(CollectiveType c, int64_t n, double inBytes, double outBytes);

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
