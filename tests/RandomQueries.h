// Random queries shaped like the encoder's, and an independent evaluator of
// the SMT layer's term DAG, for the tests of the layer's proof steps
// (tests/normalize_test.cpp, tests/model_search_test.cpp).
//
// The evaluator is the tests' own (plain int64 arithmetic on small values,
// SMT-LIB's Euclidean div/mod), written apart from checker/smt/ModelSearch's
// so that each can check the other. This file does not call Z3.
#pragma once

#include "checker/smt/Normalize.h"
#include "checker/smt/TermDag.h"

#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace shardcheck::smt::testing {

/// SMT-LIB (Euclidean) division; nullopt for a zero divisor.
inline std::optional<std::pair<int64_t, int64_t>> euclid(int64_t a, int64_t b) {
  if (b == 0)
    return std::nullopt;
  int64_t q = a / b, r = a % b;
  if (r < 0) {
    r += b < 0 ? -b : b;
    q += b < 0 ? 1 : -1;
  }
  return std::make_pair(q, r);
}

/// The value of node `i` (booleans as 0/1), nullopt on a zero divisor.
using Memo = std::map<uint32_t, std::optional<int64_t>>;

inline std::optional<int64_t> evalNode(const TermDag &dag, uint32_t i,
                                       const std::map<std::string, int64_t> &env, Memo &memo);

inline std::optional<int64_t> eval(const TermDag &dag, uint32_t i,
                                   const std::map<std::string, int64_t> &env, Memo &memo) {
  auto it = memo.find(i);
  if (it != memo.end())
    return it->second;
  auto v = evalNode(dag, i, env, memo);
  memo.emplace(i, v);
  return v;
}

inline std::optional<int64_t> evalNode(const TermDag &dag, uint32_t i,
                                       const std::map<std::string, int64_t> &env, Memo &memo) {
  const Node &n = dag.node(i);
  const uint32_t *k = dag.kidsOf(n);
  std::vector<int64_t> v;
  for (uint32_t j = 0; j < n.kidCount; ++j) {
    auto x = eval(dag, k[j], env, memo);
    if (!x)
      return std::nullopt;
    v.push_back(*x);
  }
  switch (n.op) {
  case Op::Var:
    return env.at(dag.nameOf(n));
  case Op::IntConst:
  case Op::BoolConst:
    return n.value;
  case Op::Add:
    return v[0] + v[1];
  case Op::Sub:
    return v[0] - v[1];
  case Op::Mul:
    return v[0] * v[1];
  case Op::Div:
  case Op::Mod: {
    auto qr = euclid(v[0], v[1]);
    if (!qr)
      return std::nullopt;
    return n.op == Op::Div ? qr->first : qr->second;
  }
  case Op::Ite:
    return v[0] ? v[1] : v[2];
  case Op::Eq:
    return v[0] == v[1];
  case Op::Ne:
    return v[0] != v[1];
  case Op::Lt:
    return v[0] < v[1];
  case Op::Le:
    return v[0] <= v[1];
  case Op::And:
  case Op::Or: {
    bool all = true, any = false;
    for (int64_t x : v) {
      all = all && x;
      any = any || x;
    }
    return n.op == Op::And ? all : any;
  }
  case Op::Not:
    return !v[0];
  case Op::Implies:
    return !v[0] || v[1];
  }
  return std::nullopt;
}

/// Random queries over symbols s0, s1 (>= 1), indices a, b and a defined t.
class QueryGen {
public:
  QueryGen(TermDag &dag, unsigned seed) : dag_(dag), rng_(seed) {}

  int64_t divisor = 0; ///< Of `s0 mod divisor == 0`, when asserted.

  std::vector<uint32_t> query(uint32_t &tDefinition) {
    uint32_t s0 = dag_.var("s0"), s1 = dag_.var("s1"), a = dag_.var("a"), b = dag_.var("b");
    // b < s1 always: offsets `x * s1 + b` (below) are then mixed-radix numbers.
    aExtent_ = extent();
    std::vector<uint32_t> facts{le(c(1), s0), le(c(1), s1),    le(c(0), a),
                                le(c(0), b),  lt(a, aExtent_), lt(b, s1)};
    divisor = pick(2) ? 2 + pick(3) : 0;
    if (divisor)
      facts.push_back(eq(op(Op::Mod, {s0, c(divisor)}), c(0)));
    tDefinition = intExpr(3);
    facts.push_back(eq(dag_.var("t"), tDefinition));
    for (int i = 0; i < 2; ++i)
      facts.push_back(boolExpr(3));
    return {op(Op::And, {facts[0], facts[1]}), op(Op::And, {facts.begin() + 2, facts.end()})};
  }

private:
  int64_t pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }
  uint32_t c(int64_t v) { return dag_.constant(Op::IntConst, v); }
  uint32_t op(Op o, std::vector<uint32_t> kids) { return dag_.apply(o, kids); }
  uint32_t le(uint32_t x, uint32_t y) { return op(Op::Le, {x, y}); }
  uint32_t lt(uint32_t x, uint32_t y) { return op(Op::Lt, {x, y}); }
  uint32_t eq(uint32_t x, uint32_t y) { return op(Op::Eq, {x, y}); }
  uint32_t symbol() { return dag_.var(pick(2) ? "s0" : "s1"); }

  /// A positive extent: s, c*s, s*s', ceil(s / c) or a constant.
  uint32_t extent() {
    switch (pick(5)) {
    case 0:
      return symbol();
    case 1:
      return op(Op::Mul, {c(1 + pick(4)), symbol()});
    case 2:
      return op(Op::Mul, {symbol(), symbol()});
    case 3: {
      uint32_t f = c(1 + pick(4));
      return op(Op::Div, {op(Op::Sub, {op(Op::Add, {symbol(), f}), c(1)}), f});
    }
    default:
      return c(1 + pick(4));
    }
  }

  uint32_t intExpr(int depth) {
    static const char *vars[] = {"a", "b", "s0", "s1"};
    if (depth == 0 || pick(4) == 0)
      return pick(4) ? dag_.var(vars[pick(4)]) : c(pick(7) - 2);
    switch (pick(8)) {
    case 7: { // Constant-radix digits: 0 <= k*a + (b mod k) < k * a's extent.
      int64_t k = 2 + pick(3);
      uint32_t digits =
          op(Op::Add, {op(Op::Mul, {c(k), dag_.var("a")}), op(Op::Mod, {dag_.var("b"), c(k)})});
      return op(pick(2) ? Op::Div : Op::Mod, {digits, op(Op::Mul, {c(k), aExtent_})});
    }
    case 6: { // A digit pair, divided by a multiple of its radix s1.
      uint32_t offset =
          op(Op::Add, {op(Op::Mul, {intExpr(depth - 1), dag_.var("s1")}), dag_.var("b")});
      uint32_t radix = op(Op::Mul, {dag_.var("s1"), extent()});
      return op(pick(2) ? Op::Div : Op::Mod,
                {pick(2) ? offset : op(Op::Add, {offset, offset}), radix});
    }
    case 0:
      return op(Op::Add, {intExpr(depth - 1), intExpr(depth - 1)});
    case 1:
      return op(Op::Sub, {intExpr(depth - 1), intExpr(depth - 1)});
    case 2: // Offsets: x * extent + y.
      return op(Op::Add, {op(Op::Mul, {intExpr(depth - 1), extent()}), intExpr(depth - 1)});
    case 3:
      return op(Op::Div, {intExpr(depth - 1), extent()});
    case 4:
      return op(Op::Mod, {intExpr(depth - 1), extent()});
    default:
      return op(Op::Ite, {boolExpr(depth - 1), intExpr(depth - 1), intExpr(depth - 1)});
    }
  }

  uint32_t boolExpr(int depth) {
    static const Op cmps[] = {Op::Eq, Op::Ne, Op::Lt, Op::Le};
    if (depth <= 1 || pick(3))
      return op(cmps[pick(4)], {intExpr(depth), intExpr(depth)});
    switch (pick(3)) {
    case 0:
      return op(Op::Not, {boolExpr(depth - 1)});
    case 1:
      return op(Op::Or, {boolExpr(depth - 1), boolExpr(depth - 1)});
    default:
      return op(Op::And, {boolExpr(depth - 1), boolExpr(depth - 1)});
    }
  }

  TermDag &dag_;
  std::mt19937 rng_;
  uint32_t aExtent_ = 0; ///< The asserted `a < aExtent_`.
};

/// The conjunction of `roots` at `env`, nullopt on a zero divisor.
inline std::optional<bool> holds(const TermDag &dag, const std::vector<uint32_t> &roots,
                                 const std::map<std::string, int64_t> &env) {
  bool all = true;
  Memo memo;
  for (uint32_t r : roots) {
    auto v = eval(dag, r, env, memo);
    if (!v)
      return std::nullopt;
    all = all && *v;
  }
  return all;
}

/// A random query of QueryGen and its normalized form (Normalize.h).
struct NormalizedQuery {
  TermDag dag;
  uint32_t tDefinition = 0; ///< The term that `t` is defined as.
  int64_t divisor = 0;      ///< QueryGen::divisor.
  std::vector<uint32_t> roots, normalized;

  explicit NormalizedQuery(unsigned seed) {
    QueryGen gen(dag, seed);
    roots = gen.query(tDefinition);
    divisor = gen.divisor;
    normalized = normalizeQuery(dag, roots);
  }
};

} // namespace shardcheck::smt::testing
