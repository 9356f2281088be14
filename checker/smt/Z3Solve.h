// Solving a query of the term DAG with Z3 (private to checker/smt/).
//
// Each call translates the query's nodes into the backend's Z3 context and
// solves them in a push/pop scope of the backend's one solver, a tactic
// solver that runs its tactic on a fresh goal at every check: no assertion or
// learned lemma of one query reaches another. The terms are released when
// the call returns.
//
// This file does not cache, count or name queries; Smt.cpp does.
#pragma once

#include "checker/smt/Smt.h"
#include "checker/smt/TermDag.h"

namespace shardcheck::smt {

/// Solves the conjunction of `roots`; reads `modelVars` from a Sat model.
/// When `smtText` is given, it receives the SMT-LIB2 text of the solver.
QueryResult solveWithZ3(SolverBackend &backend, const TermDag &dag,
                        const std::vector<uint32_t> &roots,
                        const std::vector<std::string> &modelVars, const SolverOptions &options,
                        std::string *smtText);

/// The Z3 resource limit a query runs under: `options.resourceLimit`, or one
/// derived from its timeout.
unsigned resourceLimitOf(const SolverOptions &options);

/// The SMT-LIB2 text of the conjunction of `roots` (what --smt-dump writes).
std::string smtLibText(const TermDag &dag, const std::vector<uint32_t> &roots);

} // namespace shardcheck::smt
