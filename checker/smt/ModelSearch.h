// A fast path for satisfiable queries (private to checker/smt/): before a
// query reaches Z3, a small bounded search looks for a model by evaluating
// the query on candidate values with exact, overflow-checked integer
// arithmetic. Most of the checker's sat queries (constraints-satisfiable,
// refutations of an edge or a lowering) have a model among the smallest
// sizes and the first indices, and evaluating a few hundred candidates costs
// far less than building and solving the query in Z3.
//
// How candidates are drawn: every top-level conjunct `v == T` whose T does
// not depend on v defines v (v is computed, not searched); the other
// variables get their ranges from top-level bounds (`c <= v`, `v < T`,
// `v <= T`, `v == T`, `v == c1 || v == c2 ...`) over variables chosen
// before them, and are enumerated in that order, depth first, each conjunct
// checked as soon as its variables have values. A variable with no upper
// bound (a symbolic extent) counts up from its lower bound; those variables
// share one budget of steps above their lower bounds, tried 0, 1, 2, ...,
// so the first model found has the smallest sizes the enumeration reaches
// (what a minimized counterexample wants).
//
// Soundness: a model is returned only when every conjunct evaluates to true
// at it; a division by zero (unspecified in SMT-LIB), an int64 overflow or a
// missing value makes a conjunct unknown, which is not true. So a model
// found proves "sat" for the query it was evaluated on. This file never
// concludes "unsat": a search that finds nothing says nothing, and Z3 is
// asked (Smt.cpp).
//
// This file does not include Z3, does not cache and does not normalize.
#pragma once

#include "checker/smt/Smt.h"
#include "checker/smt/TermDag.h"

#include <optional>
#include <vector>

namespace shardcheck::smt {

struct ModelSearchLimits {
  /// Candidate values tried, in all (each assigns one variable and
  /// evaluates what depends on it).
  uint64_t maxSteps = 3000;
  /// The largest sum, over the variables without an upper bound, of their
  /// values above their lower bounds.
  int64_t maxSlack = 12;
};

/// Values of every variable of the conjunction of `roots` at which every
/// root evaluates to true, or nullopt when the search finds none within
/// `limits` (which says nothing about satisfiability).
std::optional<Model> searchModel(const TermDag &dag, const std::vector<uint32_t> &roots,
                                 const ModelSearchLimits &limits = {});

/// Whether every root evaluates to true at `values` with exact integer
/// arithmetic. A variable without a value is 0 (as in Z3's completed
/// models); a division by zero or an int64 overflow make the term holding it
/// unknown, and an unknown root is not true.
bool holdsAt(const TermDag &dag, const std::vector<uint32_t> &roots, const Model &values);

} // namespace shardcheck::smt
