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
// case S is the larger of a member's input and output buffers.
//
// Plans are ranked by those bytes first: the objective is the bytes each
// device sends, and a plan that sends fewer wins whatever else it does. Only
// among plans that send the same bytes (within a relative 1e-9) do local
// work and latency decide: a local copy (a slice, a local reduction) moves
// nothing between devices but is charged kLocalCopyWeight of its bytes, and
// each step kStepCost, so that fewer copies, then fewer steps, win. (A
// weighted sum of the two let a plan that copies less send more bytes than
// DTensor's plan of the same edge.)
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
constexpr double kStepCost = 1.0;            ///< A step's latency, in copied bytes.
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

/// What a step, or a sequence of steps, costs: the bytes each device sends,
/// then the tie-breaker (weighted local copies and steps), compared in that
/// order (operator<).
struct StepCost {
  double networkBytes = 0;
  double local = 0;

  StepCost &operator+=(const StepCost &o) {
    networkBytes += o.networkBytes;
    local += o.local;
    return *this;
  }
};
/// Whether `a` is cheaper than `b`: it sends fewer bytes (beyond a relative
/// 1e-9, so that sums in another order tie), or as many and its tie-breaker
/// is smaller.
bool operator<(const StepCost &a, const StepCost &b);

/// A collective of kind `k` over teams of `n`, whose buffer (in the sense
/// above) has `bufferBytes`: one step.
StepCost collectiveCost(CommKind k, int64_t n, double bufferBytes);
/// A local step that copies `copyBytes`.
StepCost localCost(double copyBytes);

} // namespace shardcheck
