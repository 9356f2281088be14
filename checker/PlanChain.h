// Multi-step plans as fusions: an edge becomes a chain of single steps.
//
// chainExprs adds to a fusion the intermediate tensors of a planned edge
// (ShardState.h's addStateTensor) and returns the expressions of the chain:
// a `Set` from the producer to the first intermediate, from each to the
// next, and the edge's own expression (a copy or a reduction) reading the
// last intermediate and writing the consumer. A reduction may come earlier:
// then the edge's own expression writes the first intermediate whose state
// is after the reduction (its reduced axes reduction IDs), the next ones
// are copies without those axes, and a copy writes the consumer, whose
// reduction IDs are dropped (its uses map its data axes only, which stay).
// A split reduction (Planner.h) is several such steps: each writes the
// edge's own expression into a state that reduces some more of the
// consumer's reduced axes (those as reduction IDs, the earlier ones left
// out, the later ones still data axes: partials), and a last one that
// reduces the rest writes the consumer, whose reduction IDs of the earlier
// axes are dropped.
// The planner proves each of
// these edges; chainPlannedEdges rewrites a whole fusion that way for the
// plan builder, which then plans every step as a single edge (each with the
// planner's proved verdict), so a multi-step plan is an ordinary plan of an
// equivalent fusion: copies compose to a copy, and the reductions compose
// to the edge's own (one, or a split one of an associative and commutative
// operator whose initial value is its identity: docs/semantics.md).
//
// This file does not prove anything or choose steps.
#pragma once

#include "checker/Checker.h"
#include "ir/FusionGraph.h"

#include <optional>
#include <vector>

namespace shardcheck {

/// Adds one tensor per state of `intermediates` to `f` and returns the
/// chain's expressions (not added): Set producer -> first, ..., and the
/// edge's expression from the last intermediate to the consumer, or, when
/// an intermediate is after (a part of) the reduction, the edge's
/// expression into each intermediate that reduces more axes and, into the
/// consumer, a Set or the reduction of the axes left (the consumer's
/// reduction IDs of the axes reduced earlier are dropped from `f`).
std::vector<Expr> chainExprs(Fusion &f, const FusionEdge &edge,
                             const std::vector<ShardState> &intermediates);

/// Adds the chain to `f` after its other expressions (for checking the
/// steps, not for plans: the edge's own expression stays too) and returns
/// the chain's edges, in order.
std::vector<FusionEdge> appendChain(Fusion &f, const FusionEdge &edge,
                                    const std::vector<ShardState> &intermediates);

/// The states of a plan's intermediate tensors (every step's but the last).
std::vector<ShardState> intermediateStates(const std::vector<PlannedStep> &steps);

/// The fusion with every edge that has a proved multi-step plan rewritten as
/// its chain, and a verdict for every edge of its graph (in that graph's
/// order): the planner's for the steps, the old ones for the rest. With
/// `compilerLowerings` (`--plan-lowerings compiler`), an edge that carries
/// the compiler's own choice keeps it and is not chained.
struct ChainedFusion {
  Fusion fusion;
  FusionGraph graph;
  std::vector<EdgeVerdict> verdicts;
};
std::optional<ChainedFusion> chainPlannedEdges(const Fusion &fusion, const FusionGraph &graph,
                                               const std::vector<EdgeVerdict> &verdicts,
                                               bool compilerLowerings = false);

} // namespace shardcheck
