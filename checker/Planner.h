// The multi-step planner: a sequence of single steps for an edge no single
// collective serves (docs/semantics.md, "Multi-step plans").
//
// For a copy or a reduction between two tensors of one mesh whose shardings
// ShardState can read, planEdge searches sequences of steps, each changing
// the sharding state by one local slice (adding a DID), Allgather of the
// innermost DIDs of an axis (one team over several mesh axes when several),
// AllToAll (a DID moves to another axis), a permutation of devices (a
// change of shard order, or two DIDs of equal size trading axes) as SendRecv
// pairs, and, for a reduction, an Allreduce or ReduceScatter (onto any
// axis) over the mesh axes of the reduced axes (flattened into one team
// when several), or a local reduction, at any point of the sequence: the
// states after it drop the reduced axes and the copy steps go on. A
// reduction whose operator is associative and commutative and whose initial
// value is its identity may be split: a step reduces a part of the reduced
// axes (any nonempty subset of those carrying DIDs, at most 7) and leaves
// the others partial (still data axes on their DIDs) for later steps, as
// DTensor reduces one mesh dim at a time.
// States need not divide evenly (constant extents that do not divide by
// their DIDs: the IR's ceilDiv ownership at every nesting); steps between
// them are the padded collectives, priced at their padded buffers.
// The search is Dijkstra over canonical states (memoised by
// ShardState::key), at most kMaxSteps steps, ordered by cost then key so
// that it is deterministic, under CostModel.h's prices.
//
// Every step is proved, never assumed: the cheapest path's steps are built
// as tensors and set expressions in a copy of the fusion (PlanChain.h) and
// each is handed to the StepProver, which runs the same EdgeChecker queries
// as for any edge. A step that is not proved is banned and the search runs
// again (at most kMaxRounds times). The last step writes the consumer
// itself, so the composition ends in the consumer's sharding; per-step
// proofs compose because each proves the next tensor's buffers exactly,
// and the edge's own expression is exactly one step, or, split, steps
// that reduce disjoint parts of its axes, which compose to it by the
// operator's algebra (PlanChain.h).
//
// This file does not check edges itself (the StepProver does) or build
// plans (PlanBuilder does, from PlanChain's rewritten fusion).
#pragma once

#include "checker/EdgeChecker.h"
#include "checker/Lowering.h"
#include "checker/ShardState.h"
#include "ir/FusionGraph.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace shardcheck {

constexpr size_t kMaxSteps = 5;
constexpr int kMaxRounds = 12;

/// One step of a multi-step plan and its verdict.
struct PlannedStep {
  Lowering lowering; ///< kind None: a local step (a slice, a local reduction).
  Status status = Status::Unknown;
  /// The sharding after the step (the consumer's for the last step).
  ShardState state;
  std::string intermediate; ///< e.g. `T7 [DIDx | -]`, for messages.
  std::string reason;       ///< Why it is not proved, when it is not.
  double networkBytes = 0;  ///< Bytes each device sends (CostModel.h).
  std::vector<std::string> assumptions;
};

/// A step's proof: the outcome, the lowering proved (a `+permute` variant
/// when the StepProver needed one) and the sizes it assumes.
struct StepProof {
  Outcome::Kind kind = Outcome::Kind::Unknown;
  Lowering lowering;
  std::string reason;
  std::vector<std::string> assumptions;
};
/// Proves `lowering` (None: that no communication is needed) for an edge of
/// a fusion.
using StepProver = std::function<StepProof(const Fusion &, const FusionEdge &, const Lowering &)>;

/// The steps of a proved multi-step plan of `edge`, each Proved; empty when
/// no plan was found or proved (the edge is not of the planner's shape, or
/// every candidate within the bounds failed).
std::vector<PlannedStep> planEdge(const Fusion &fusion, const FusionEdge &edge,
                                  const StepProver &prove);

/// Bytes each device sends over the whole plan (the sum of its steps').
double planBytesPerDevice(const std::vector<PlannedStep> &steps);

/// Whether the plan reduces before its last step (copies follow the
/// reduction; PlanChain.h).
bool reducesMidChain(const std::vector<PlannedStep> &steps);

/// How many steps of the plan reduce (more than one: a split reduction).
size_t reductionSteps(const std::vector<PlannedStep> &steps);

/// Bytes each device sends for an edge lowered by the single `lowering`
/// (CostModel.h; teams of equal size), or nullopt when the consumer's
/// sharding is not one ShardState reads. For comparisons with other
/// planners (bench/dtensor_sweep.cpp).
std::optional<double> loweringBytesPerDevice(const Fusion &fusion, const FusionEdge &edge,
                                             const Lowering &lowering);

/// The teams of `mesh` over the axes of `dids`: devices that differ only in
/// those coordinates, each team in rank order with dids[0] varying slowest.
std::vector<Team> teamsOver(const DeviceMesh &mesh, const std::vector<ParallelType> &dids);

} // namespace shardcheck
