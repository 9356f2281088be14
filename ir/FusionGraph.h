// The producer -> consumer graph of a fusion, with each edge's domain map.
//
// Vertices are tensors, edges are (expression, tensor operand, output) triples,
// stored in a Boost.Graph adjacency list. Building the graph checks that the
// fusion is a DAG in which every tensor is defined before it is used; either
// failure is an input error with a location.
//
// Each edge carries its logical domain map: for every consumer root ID (root if
// the consumer has one, else logical), the producer logical ID it maps to, as
// the op defines it. Pointwise ops map positionally; a broadcast's new axes map
// to nothing; a squeeze drops producer axes; a reduction maps reduced producer
// axes to the consumer's reduction IDs; reshape maps to the consumer's root
// (its root -> logical transforms then define the logical domain); matmul and
// linear map the contraction axis to the consumer's reduction ID.
//
// This file does not decide anything about sharding.
#pragma once

#include "ir/Fusion.h"

#include <optional>
#include <string>
#include <vector>

namespace shardcheck {

/// How a consumer's root domain relates to a producer's logical domain.
struct DomainMap {
  /// Parallel to the consumer's root (or logical) domain: the producer
  /// logical ID each consumer ID maps to, or nullopt (a new broadcast axis,
  /// or an output axis the operand does not have, e.g. N for matmul's A).
  std::vector<IdNum> consumerIds;
  std::vector<std::optional<IdNum>> producerIds;
  /// Producer logical IDs no consumer ID maps to (squeezed broadcasts).
  std::vector<IdNum> unmappedProducerIds;
  /// Set when the domains do not fit the op (rank mismatch, permute without
  /// a printed root domain, an op without a rule): the checker reports the
  /// edge as unsupported with this reason and never proves it.
  std::optional<std::string> unsupported;

  /// The producer ID a consumer ID maps to, if any.
  std::optional<IdNum> producerOf(IdNum consumerId) const;
  /// The consumer ID a producer ID maps to, if any.
  std::optional<IdNum> consumerOf(IdNum producerId) const;
};

struct FusionEdge {
  size_t expr = 0;         ///< Index into Fusion::exprs.
  size_t operandIndex = 0; ///< Which operand of the expr.
  TensorNum producer = 0;
  TensorNum consumer = 0;
  DomainMap map;
};

class FusionGraph {
public:
  /// Builds the graph. Reports cycles, use before definition and tensors
  /// defined twice to `diags` and returns nullopt when any occurred. Edges
  /// whose domains do not fit their op are kept, marked unsupported.
  static std::optional<FusionGraph> build(const Fusion &fusion, DiagnosticEngine &diags);

  const std::vector<FusionEdge> &edges() const { return edges_; }
  /// Tensors in an order where every producer precedes its consumers.
  const std::vector<TensorNum> &topologicalOrder() const { return topo_; }
  /// Edges whose consumer is `t`.
  std::vector<const FusionEdge *> edgesInto(TensorNum t) const;

private:
  std::vector<FusionEdge> edges_;
  std::vector<TensorNum> topo_;
};

/// Computes the domain map of one edge (marked unsupported when the domains
/// do not fit the op). Exposed for tests.
DomainMap computeDomainMap(const Fusion &fusion, const Expr &expr, size_t operandIndex,
                           TensorNum consumer);

/// The logical IDs of a tensor that are real axes of its data: all but
/// reduction IDs.
std::vector<IdNum> dataLogicalIds(const Fusion &fusion, const TensorView &tv);

} // namespace shardcheck
