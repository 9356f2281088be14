// Arithmetic normalization of a query before Z3 sees it (private to
// checker/smt/).
//
// Z3's nonlinear integer arithmetic is slow on the divisions by symbolic
// extents that sharded layouts produce: with `s0 mod 4 == 0` asserted, a
// ceil-division `(s0 + 3) div 4` stays a division, and every split index,
// buffer offset and chunk number built on it stays nonlinear (bench/README.md,
// "Checker at scale"). normalizeQuery rewrites a query into an
// equisatisfiable one with the same values of its variables:
//   - a variable with an asserted divisibility by a constant (`v mod c == 0`,
//     a top-level conjunct) becomes `c * q` with a fresh `q`, and a
//     definition `v == T` (a top-level conjunct) substitutes T for v; both
//     stay asserted, so v keeps its value in a model;
//   - integer terms become polynomials (sums of products of atoms), and a
//     division or modulo splits off the multiples of its divisor:
//     `(d*A + B) div d = A + B div d`, `(d*A + B) mod d = B mod d` (every
//     integer A, nonzero d: SMT-LIB's Euclidean div/mod); by a positive
//     `K*M`: `P div (K*M) = (P div M) div K`, and `B div M = 0` when
//     `0 <= B < M` follows from asserted index ranges (mixed-radix digits);
//   - `M*A1 + B1 == M*A2 + B2` with `0 <= B1, B2 < M` becomes
//     `A1 == A2 && B1 == B2`;
//   - a comparison that the range of a division atom decides
//     (`0 <= y div q` and `y div q < 8` when `0 <= y < 8*q`) becomes true,
//     and And, Or and Not of constants fold, so a guarded chunk number
//     `ite(0 <= A && A < 8, A, -1)` becomes A.
// A symbolic divisor must be a product of variables asserted `>= 1`. Every
// rewrite is an identity under the query's top-level conjuncts (positivity,
// index ranges, definitions), which the result keeps; the ranges themselves
// are rewritten before and without any range, so no range is used to rewrite
// itself. So the result is unsat exactly when the query is, and its models
// are the query's models. No rewrite decides a query; tests/normalize_test.cpp
// compares both on random queries point by point.
//
// This file does not include Z3, does not solve and does not cache: the
// cache key is the query as built (Smt.cpp), the dump is the query as asked.
#pragma once

#include "checker/smt/TermDag.h"

#include <vector>

namespace shardcheck::smt {

/// The conjunction of `roots` as normalized roots (new nodes of `dag`), or
/// `roots` unchanged when a coefficient would overflow int64 or a polynomial
/// would grow too large.
std::vector<uint32_t> normalizeQuery(TermDag &dag, const std::vector<uint32_t> &roots);

} // namespace shardcheck::smt
