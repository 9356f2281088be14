// The SMT layer: answers are an enum with models, unknown is reported as
// such, identical queries hit the cache, minimization finds small models.
#include "checker/smt/Smt.h"

#include <gtest/gtest.h>

using namespace shardcheck::smt;

namespace {

TEST(Smt, UnsatIsUnsat) {
  QueryCache cache;
  SolverStats stats;
  Context ctx(SolverOptions{}, &cache, &stats);
  Int x = ctx.intVar("x");
  auto r = ctx.check("contradiction", {x < 3, 5 <= x}, {"x"});
  EXPECT_EQ(r.answer, Answer::Unsat);
  EXPECT_TRUE(r.model.empty());
}

TEST(Smt, SatGivesTheModelAsked) {
  Context ctx(SolverOptions{}, nullptr, nullptr);
  Int x = ctx.intVar("x"), y = ctx.intVar("y");
  auto r = ctx.check("pair", {x + y == ctx.intVal(7), x == 3}, {"x", "y"});
  ASSERT_EQ(r.answer, Answer::Sat);
  EXPECT_EQ(r.model.at("x"), 3);
  EXPECT_EQ(r.model.at("y"), 4);
}

TEST(Smt, DivAndModFollowFloorSemantics) {
  Context ctx(SolverOptions{}, nullptr, nullptr);
  Int q = ctx.intVar("q"), m = ctx.intVar("m");
  auto r = ctx.check(
      "divmod",
      {q == ctx.div(ctx.intVal(7), ctx.intVal(2)), m == ctx.mod(ctx.intVal(7), ctx.intVal(2))},
      {"q", "m"});
  ASSERT_EQ(r.answer, Answer::Sat);
  EXPECT_EQ(r.model.at("q"), 3);
  EXPECT_EQ(r.model.at("m"), 1);
}

TEST(Smt, ResourceLimitGivesUnknownNeverAProof) {
  SolverOptions o;
  o.resourceLimit = 1; // far too little for anything non-trivial
  Context ctx(o, nullptr, nullptr);
  Int a = ctx.intVar("a"), b = ctx.intVar("b"), c = ctx.intVar("c");
  auto r = ctx.check("nonlinear", {a * b * c == ctx.intVal(1000003), 2 <= a, 2 <= b, 2 <= c}, {});
  EXPECT_EQ(r.answer, Answer::Unknown);
  EXPECT_FALSE(r.reason.empty());
}

TEST(Smt, IdenticalQueriesHitTheCache) {
  QueryCache cache;
  SolverStats stats;
  for (int i = 0; i < 3; ++i) {
    Context ctx(SolverOptions{}, &cache, &stats);
    Int x = ctx.intVar("x");
    auto r = ctx.check("same", {x < 3, 0 <= x}, {"x"});
    EXPECT_EQ(r.answer, Answer::Sat);
    EXPECT_EQ(r.fromCache, i > 0);
  }
  EXPECT_EQ(stats.queries, 3u);
  EXPECT_EQ(stats.cacheHits, 2u);
}

TEST(Smt, MinimizationFindsTheSmallestObjective) {
  Context ctx(SolverOptions{}, nullptr, nullptr);
  Int x = ctx.intVar("x");
  auto r = ctx.checkMinimized("min", {5 <= x, ctx.mod(x, ctx.intVal(3)) == 0}, {"x"}, x, 10);
  ASSERT_EQ(r.answer, Answer::Sat);
  EXPECT_EQ(r.model.at("x"), 6);
}

TEST(Smt, SmtLibTextIsStable) {
  Context a(SolverOptions{}, nullptr, nullptr), b(SolverOptions{}, nullptr, nullptr);
  std::string ta = a.toSmtLib({a.intVar("x") < 3});
  std::string tb = b.toSmtLib({b.intVar("x") < 3});
  EXPECT_EQ(ta, tb);
  EXPECT_NE(ta.find("declare-fun x"), std::string::npos) << ta;
}

TEST(Smt, CacheKeysAreStructural) {
  Context a(SolverOptions{}, nullptr, nullptr), b(SolverOptions{}, nullptr, nullptr);
  Int ax = a.intVar("x"), ay = a.intVar("y");
  Int by = b.intVar("y"), bx = b.intVar("x"); // created in the other order
  Bool qa = ax + ay < 3, qb = bx + by < 3;
  EXPECT_EQ(a.cacheKey({qa, ax == 1}, {"x"}), b.cacheKey({qb, bx == 1}, {"x"}));
  // The same term built twice is one node: the key does not grow with it.
  EXPECT_EQ(a.cacheKey({qa, qa}, {}), a.cacheKey({qa, ax + ay < 3}, {}));
  // Names, model variables and assertion order are part of the query.
  EXPECT_NE(a.cacheKey({qa}, {}), a.cacheKey({ax + a.intVar("z") < 3}, {}));
  EXPECT_NE(a.cacheKey({qa}, {"x"}), a.cacheKey({qa}, {"y"}));
  EXPECT_NE(a.cacheKey({qa, ax == 1}, {}), a.cacheKey({ax == 1, qa}, {}));
}

TEST(Smt, SharedBackendAnswersLikeAnOwnOne) {
  SolverBackend backend;
  for (int i = 0; i < 3; ++i) {
    Context shared(SolverOptions{}, nullptr, nullptr, &backend),
        own(SolverOptions{}, nullptr, nullptr);
    for (Context *c : {&shared, &own}) {
      Int x = c->intVar("x");
      auto r = c->check("q", {c->intVal(2 * i) < x, x < c->intVal(2 * i + 2)}, {"x"});
      ASSERT_EQ(r.answer, Answer::Sat);
      EXPECT_EQ(r.model.at("x"), 2 * i + 1);
    }
  }
}

} // namespace
