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
#include "tests/RandomQueries.h"

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <random>

using namespace shardcheck::smt;

namespace {

using namespace shardcheck::smt::testing;

TEST(Normalize, SameTruthValueEverywhereOnRandomQueries) {
  int compared = 0, rewritten = 0;
  for (unsigned seed = 0; seed < 100; ++seed) {
    NormalizedQuery q(seed);
    const TermDag &dag = q.dag;
    const auto &roots = q.roots, &normalized = q.normalized;
    const uint32_t tDef = q.tDefinition;
    const int64_t divisor = q.divisor;
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
              env["q!s0"] = divisor ? s0 / divisor : 0; // q!s0's only value.
              auto before = holds(dag, roots, env), after = holds(dag, normalized, env);
              if (!before || !after)
                continue;
              if (divisor && s0 % divisor != 0) {
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
