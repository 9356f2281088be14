// The named SMT query about one expression with several reduced operands.
//
// A reduction collective sums per-member partials. For an expression that
// reduces over more than one operand (matmul, linear: A[m, k] * B[k, n]),
// member i's partial for consumer element y sums the terms, over reduced
// indices r, for which member i holds *every* reduced operand's element at
// (y, r) at once (docs/semantics.md, Partials). Checking each operand's edge
// alone is unsound: an M-sharded A times a K-sharded B passes both per-edge
// checks and computes garbage. ExprChecker asks `expr-partials-exact-once`:
// every term of every consumer element a receiver holds is summed by exactly
// one member of its team.
//
// This file does not check the per-edge parts of a reduction lowering (team
// sanity, uncovered devices, that every member's slot holds the same element:
// EdgeChecker does), nor choose lowerings.
#pragma once

#include "checker/EdgeChecker.h"

#include <string>
#include <vector>

namespace shardcheck {

/// Whether some consumer reduction ID of `edge` maps to a producer data ID
/// that is not a broadcast.
bool isReductionEdge(const Fusion &fusion, const FusionEdge &edge);

class ExprChecker {
public:
  /// `operands` are the expression's reduction edges (every one has the same
  /// consumer). `universe` as for EdgeChecker.
  ExprChecker(const Fusion &fusion, std::vector<const FusionEdge *> operands, smt::Context &ctx,
              std::vector<int64_t> universe);

  /// Whether every term of every consumer element is summed exactly once by
  /// `lowering`'s teams (a reduction collective).
  Outcome checkPartials(const Lowering &lowering);

private:
  smt::Bool baseConstraints();
  std::vector<int64_t> devicesOf(const TensorView &tv) const;
  Outcome checkTeam(const Lowering &lowering, const Team &team);
  Counterexample counterexample(const smt::Model &m, const Lowering &lowering, const Team &team);

  const Fusion &fusion_;
  std::vector<const FusionEdge *> operands_;
  const TensorView &consumer_;
  smt::Context &ctx_;
  Encoder enc_;
  std::vector<int64_t> universe_;
};

} // namespace shardcheck
