// The model search (checker/smt/ModelSearch.h) answers "sat" without Z3, so
// it is checked against Z3 and against the tests' own evaluator
// (tests/RandomQueries.h): on random queries shaped like the encoder's,
// every model it finds for the normalized query satisfies the query as
// built, and Z3 (asked the normalized query, as the checker asks it) never
// calls such a query unsat; it finds most models Z3 finds. A division by zero or an int64 overflow
// is never taken for true. Through smt::Context: a search answer is Sat with the search's model and
// counted as such; a model out of the search's reach still comes from Z3.
//
// This test checks no "unsat" of the search: it never answers one.
#include "checker/smt/ModelSearch.h"
#include "checker/smt/Z3Solve.h"
#include "tests/RandomQueries.h"

#include <gtest/gtest.h>

#include <iostream>

using namespace shardcheck::smt;
using namespace shardcheck::smt::testing;

namespace {

TEST(ModelSearch, ModelsHoldAndZ3AgreesOnRandomQueries) {
  SolverBackend backend;
  SolverOptions options; // Small limits: a hard query is unknown, never a failure here.
  options.timeoutMs = 100;
  options.resourceLimit = 200000;
  const std::vector<std::string> vars{"s0", "s1", "a", "b", "t"};
  int found = 0, z3Sat = 0, z3Unsat = 0;
  for (unsigned seed = 0; seed < 120; ++seed) {
    NormalizedQuery q(seed);
    auto model = searchModel(q.dag, q.normalized);
    QueryResult z3 = solveWithZ3(backend, q.dag, q.normalized, vars, options, nullptr);
    z3Sat += z3.answer == Answer::Sat;
    z3Unsat += z3.answer == Answer::Unsat;
    if (!model)
      continue;
    ++found;
    std::map<std::string, int64_t> env{{"s0", 0}, {"s1", 0}, {"a", 0}, {"b", 0}, {"t", 0}};
    for (const auto &[name, value] : *model)
      env[name] = value;
    EXPECT_EQ(holds(q.dag, q.roots, env), std::optional<bool>(true)) << "seed " << seed;
    EXPECT_TRUE(holdsAt(q.dag, q.roots, *model)) << "seed " << seed;
    EXPECT_NE(z3.answer, Answer::Unsat) << "seed " << seed;
  }
  std::cout << "found " << found << " models; Z3: " << z3Sat << " sat, " << z3Unsat << " unsat\n";
  EXPECT_GT(z3Unsat, 10); // Both kinds were asked ...
  EXPECT_GT(found, z3Sat * 8 / 10) << "found " << found << " of " << z3Sat; // ... and most found.
}

struct Query {
  TermDag dag;
  uint32_t x = dag.var("x"), y = dag.var("y");
  uint32_t c(int64_t v) { return dag.constant(Op::IntConst, v); }
  uint32_t op(Op o, std::vector<uint32_t> kids) { return dag.apply(o, kids); }
  /// lo <= v < hi.
  uint32_t range(uint32_t v, int64_t lo, int64_t hi) {
    return op(Op::And, {op(Op::Le, {c(lo), v}), op(Op::Lt, {v, c(hi)})});
  }
};

TEST(ModelSearch, DivisionByZeroIsNeverTrue) {
  Query q; // x div y == 2, 0 <= x < 10, 0 <= y < 3: y = 0 would leave x div y unspecified.
  std::vector<uint32_t> roots{q.op(Op::Eq, {q.op(Op::Div, {q.x, q.y}), q.c(2)}),
                              q.range(q.x, 0, 10), q.range(q.y, 0, 3)};
  auto m = searchModel(q.dag, roots);
  ASSERT_TRUE(m);
  EXPECT_NE(m->at("y"), 0);
  EXPECT_EQ(m->at("x") / m->at("y"), 2);
  EXPECT_FALSE(holdsAt(q.dag, roots, {{"x", 4}, {"y", 0}}));
  // Only y = 0 is in range: Z3 may pick any value for x div 0, the search
  // claims nothing.
  roots[2] = q.range(q.y, 0, 1);
  EXPECT_FALSE(searchModel(q.dag, roots));
}

TEST(ModelSearch, OverflowIsNeverTrue) {
  Query q; // x >= 2^62 and x + x > 0 hold in the integers, not in int64.
  std::vector<uint32_t> roots{q.op(Op::Le, {q.c(int64_t{1} << 62), q.x}),
                              q.op(Op::Lt, {q.c(0), q.op(Op::Add, {q.x, q.x})})};
  EXPECT_FALSE(searchModel(q.dag, roots));
  EXPECT_FALSE(holdsAt(q.dag, roots, {{"x", int64_t{1} << 62}}));
}

TEST(ModelSearch, ContextAnswersWithTheSearchOrZ3) {
  QueryCache cache;
  SolverStats stats;
  Context ctx(SolverOptions{}, &cache, &stats);
  Int s = ctx.intVar("s"), y = ctx.intVar("y");
  // s mod 4 == 0, s >= 1, 5 <= y < s: the smallest sizes are s = 8, y = 5.
  auto r = ctx.check("sizes",
                     {ctx.mod(s, ctx.intVal(4)) == 0, 1 <= s, 5 <= y, y < s, y < ctx.intVal(50)},
                     {"s", "y"});
  ASSERT_EQ(r.answer, Answer::Sat);
  EXPECT_EQ(r.model.at("s"), 8);
  EXPECT_EQ(r.model.at("y"), 5);
  EXPECT_EQ(stats.satBySearch, 1u);
  EXPECT_EQ(stats.solvedByName.at("sizes").bySearch, 1u);
  // y + y == 20002 with 0 <= y < 100000: 10,002 candidates, beyond the
  // search's steps; Z3 answers.
  auto far = ctx.check("far", {y + y == ctx.intVal(20002), 0 <= y, y < ctx.intVal(100000)}, {"y"});
  ASSERT_EQ(far.answer, Answer::Sat);
  EXPECT_EQ(far.model.at("y"), 10001);
  EXPECT_EQ(stats.satBySearch, 1u);
  EXPECT_EQ(stats.searchModelsRejected, 0u);
}

} // namespace
