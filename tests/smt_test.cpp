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

} // namespace
