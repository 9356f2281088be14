// Brute-force evaluation of the expression-level partials claim.
//
// The independent reference for checker/ExprChecker.h. For an expression that
// reduces over several operands (matmul, linear) and a reduction lowering, at
// concrete bindings it enumerates every receiver of every team, every
// consumer element the receiver holds and every index of the reduced axes,
// and counts the members that hold *every* reduced operand's element of that
// term (docs/semantics.md, Partials). The claim holds iff every count is 1.
// The first failure in a fixed order (teams, receivers ascending, consumer
// elements ascending, reduced indices row-major) is the counterexample.
//
// It does not check the per-edge parts of a lowering (BruteForce.h does) or
// share code with the SMT encoding; it uses ir/ and ConcreteTensor only.
#pragma once

#include "checker/Lowering.h"
#include "checker/bruteforce/Outcome.h"
#include "ir/FusionGraph.h"

#include <vector>

namespace shardcheck::bruteforce {

/// `operands`: the expression's reduction edges, all into one consumer.
BruteResult bruteCheckExprPartials(const Fusion &fusion,
                                   const std::vector<const FusionEdge *> &operands,
                                   const Bindings &bindings, const Lowering &lowering);

} // namespace shardcheck::bruteforce
