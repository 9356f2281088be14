// Two-step decompositions of an edge that changes two DID types at once.
//
// No single collective moves data along two mesh axes. When the consumer
// drops two of the producer's DIDs (e.g. [DIDy, DIDx] -> replicated on a 2-D
// mesh), the edge is lowered as two steps through an intermediate tensor:
// first un-shard one DID (the intermediate is the producer with that DID
// removed), then the other. decomposeEdge builds the intermediate in a copy of
// the fusion and proves each step with the same EdgeChecker queries as any
// edge. Other two-DID changes (moving a DID to another axis) are proposed but
// not proved yet.
#pragma once

#include "checker/Lowering.h"
#include "checker/smt/Smt.h"
#include "ir/FusionGraph.h"

#include <string>
#include <vector>

namespace shardcheck {

/// One step of a decomposition and its verdict.
struct DecompositionStep {
  Lowering lowering;
  Status status = Status::Unknown;
  std::string intermediate; ///< e.g. "T7 = T3 without DIDx", for messages.
  std::string reason;       ///< Why it is not proved, when it is not.
};

/// Proves a two-step decomposition of `edge`, when the consumer drops DIDs
/// of the producer one mesh axis at a time. Returns no steps when the edge is
/// not of that shape.
std::vector<DecompositionStep> decomposeEdge(const Fusion &fusion, const FusionEdge &edge,
                                             const std::vector<int64_t> &universe,
                                             const smt::SolverOptions &options,
                                             smt::QueryCache *cache, smt::SolverStats *stats,
                                             smt::SolverBackend *backend);

} // namespace shardcheck
