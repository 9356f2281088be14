// The query normalization (checker/smt/Normalize.h) is a proof step, so it is
// checked like one: on random queries shaped like the encoder's (extents
// divisible by constants, element indices under bounds, split indices by
// div/mod, offsets, chunk numbers, definitions `t == ...`), the normalized
// query must have the same truth value as the query at every point of a box
// of variable values (its fresh quotient variables set by their
// definitions). Also: the rewrites it exists for do happen.
//
// This test does not call Z3: it evaluates both term DAGs directly.
#include "checker/smt/Normalize.h"
#include "checker/smt/TermDag.h"

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <random>

using namespace shardcheck::smt;

namespace {

/// SMT-LIB (Euclidean) division; nullopt for a zero divisor.
std::optional<std::pair<int64_t, int64_t>> euclid(int64_t a, int64_t b) {
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

std::optional<int64_t> evalNode(const TermDag &dag, uint32_t i,
                                const std::map<std::string, int64_t> &env, Memo &memo);

std::optional<int64_t> eval(const TermDag &dag, uint32_t i,
                            const std::map<std::string, int64_t> &env, Memo &memo) {
  auto it = memo.find(i);
  if (it != memo.end())
    return it->second;
  auto v = evalNode(dag, i, env, memo);
  memo.emplace(i, v);
  return v;
}

std::optional<int64_t> evalNode(const TermDag &dag, uint32_t i,
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
    std::vector<uint32_t> facts{le(c(1), s0), le(c(1), s1),    le(c(0), a),
                                le(c(0), b),  lt(a, extent()), lt(b, s1)};
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
    switch (pick(7)) {
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
};

/// The conjunction of `roots` at `env`, nullopt on a zero divisor.
std::optional<bool> holds(const TermDag &dag, const std::vector<uint32_t> &roots,
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

TEST(Normalize, SameTruthValueEverywhereOnRandomQueries) {
  int compared = 0, rewritten = 0;
  for (unsigned seed = 0; seed < 100; ++seed) {
    TermDag dag;
    QueryGen gen(dag, seed);
    uint32_t tDef = 0;
    auto roots = gen.query(tDef);
    auto normalized = normalizeQuery(dag, roots);
    rewritten += normalized != roots;
    std::map<std::string, int64_t> env;
    for (int64_t s0 = 1; s0 <= 6; ++s0)
      for (int64_t s1 = 1; s1 <= 5; ++s1)
        for (int64_t a = -1; a <= 10; ++a)
          for (int64_t b = -1; b <= 6; ++b) {
            env = {{"s0", s0}, {"s1", s1}, {"a", a}, {"b", b}, {"t", 0}};
            Memo memo;
            auto t = eval(dag, tDef, env, memo);
            if (!t)
              continue;
            for (int64_t tv : {*t, *t + 1}) {
              env["t"] = tv;
              env["q!s0"] = gen.divisor ? s0 / gen.divisor : 0; // q!s0's only value.
              auto before = holds(dag, roots, env), after = holds(dag, normalized, env);
              if (!before || !after)
                continue;
              if (gen.divisor && s0 % gen.divisor != 0) {
                EXPECT_FALSE(*before); // And no q!s0 satisfies s0 == c * q!s0.
                continue;
              }
              ASSERT_EQ(*before, *after) << "seed " << seed << " s0=" << s0 << " s1=" << s1
                                         << " a=" << a << " b=" << b << " t=" << tv;
              ++compared;
            }
          }
  }
  EXPECT_GT(compared, 50000);
  EXPECT_GT(rewritten, 75);
}

} // namespace
