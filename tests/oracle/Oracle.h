// The end-to-end fusion oracle: random fusions checked, planned and run on
// simulated devices, and compared exactly with the unsharded reference.
//
// For one fusion (a FusionSpec, tests/oracle/RandomFusions.h) the oracle:
// 1. builds the fusion, prints it in nvFuser's dump style and reads it back
//    (ir/reader) as check-sharding would, so that what is checked is exactly
//    what a report shows; then asks shardcheck::Checker for every edge's
//    verdict;
// 2. when every edge is proved, builds the plan with the checker's lowerings
//    (checker/PlanBuilder.h) and runs it on the sim backend with nonzero
//    integer inputs in [-n, n] and exact comparison (RunOptions::integerInputs,
//    exactComparison), once per seed (the second seed through the index-map
//    compute GPU kernels use): anything but a match is a violation; a
//    multi-step plan's chained fusion must also compute, unsharded, the
//    values of the fusion as written (chainMismatch below; one the
//    reference cannot evaluate is a violation too);
// 3. when the fusion carries compiler choices (host IR Communications, and
//    the resharding Sets and reductions nvFuser would lower) and every other
//    edge is proved, builds the plan with the compiler's lowerings: if every
//    choice is confirmed the run must match; if one is refuted, running it
//    anyway at the counterexample's sizes must fail (a count error) or give
//    wrong values with at least one of several seeds, unless it is refuted
//    for counting an element twice in a max or min, which no value shows.
// A violation carries a class key, e.g. `proved-wrong-values:Matmul/Allreduce`
// or `refuted-runs-correctly:Allreduce`, and minimize() shrinks its spec
// (drop expressions, cut tensors loose, shrink sizes, drop shardings or
// their nested cuts, make chunked nestings plain, drop allocation domains
// and mesh permutations) while the same class persists.
//
// The oracle shares none of the checker's reasoning: its only judge is the
// executor's run against the reference evaluator (executor/Reference.h),
// which knows nothing about shardings or collectives.
//
// It does not fix, excuse or second-guess verdicts, and it does not decide
// which classes a test may tolerate (the test says so, visibly).
#pragma once

#include "checker/Checker.h"
#include "tests/oracle/RandomDTensor.h"
#include "tests/oracle/RandomFusions.h"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace shardcheck::oracle {

struct OracleOptions {
  unsigned timeoutMs = 20000; ///< Per SMT query; a timeout is `unknown`, never a violation.
  int integerRange = 2;       ///< Inputs are nonzero integers uniform in [-n, n].
  /// Seeds for a run that must match (the second with index-map compute).
  std::vector<uint64_t> matchSeeds = {1, 2};
  /// Seeds tried to expose a refuted compiler choice (it must fail on one).
  int refutedSeeds = 4;
  /// Then seeds with inputs in [-w, w], w the widest power of two up to
  /// wideRange for which the fusion still computes exactly (valueBound): a
  /// max or min that misses an element shows only where that element is the
  /// extreme, which values in [-2, 2] almost never make it. 28 more seeds
  /// leave a miss chance of 2^-28 for an element missing from half the
  /// devices.
  int wideSeeds = 28;
  int wideRange = 1 << 20;
};

struct Violation {
  std::string kind;   ///< The class key.
  std::string detail; ///< The run outcome (or the error) in one line.
};

/// What happened to one fusion.
struct OracleResult {
  FusionSpec spec;
  Fusion fusion; ///< As read back from its printed dump.
  std::vector<EdgeVerdict> verdicts;
  /// The checker's plan: `matched`, `not-proved`, `no-bindings`, `violation`
  /// or `error` (the fusion could not be checked).
  std::string checkerOutcome;
  /// The compiler's plan: empty (no compiler choice), `skipped` (an unknown
  /// choice, or other edges not proved), `confirmed-matched`,
  /// `refuted-failed` (count error), `refuted-wrong-values`,
  /// `refuted-idempotent-duplicate` (refuted for a double count in a max or
  /// min, and matched), `no-bindings` or `violation`.
  std::string compilerOutcome;
  /// `T0 -> T2 Allreduce` for every edge of a fusion whose checker plan matched.
  std::vector<std::string> matchedLowerings;
  /// `Allgather confirmed` / `ReduceScatter refuted` per compiler choice.
  std::vector<std::string> compilerChoices;
  std::vector<Violation> violations;
  /// A random ring (judgeRing): `right-matched`, `wrong-refuted`,
  /// `wrong-unknown` (peers of two devices), or empty.
  std::string ringOutcome;
  /// DTensor's wrong sequence (fusion [2] of runDTensor): `<mutation>:
  /// <padded|plain>:<confirmed|refuted|unknown|not-a-collective|rejected>`,
  /// the verdict on its wrong collective; empty for other fusions.
  std::string dtensorWrong;
  /// For a DTensor draw with a nested uneven shard (DTensorDraw::
  /// nestedUneven): `<transition|sequence|wrong>:<outcome>` keys (its
  /// checker outcome, `choice:<choice>` per compiler choice, the wrong
  /// collective's verdict), and on the draw's first result
  /// `sequence-mapped:<yes|no|no-steps>` and `uniform-counts:<rejected|plain-edge|mapped>`
  /// (DTensorDraw::uniformCounts; mapped is a violation); empty for other fusions.
  std::vector<std::string> dtensorNested;
  /// Lines describing the runs (for the report).
  std::vector<std::string> runLog;
};

/// Where a multi-step plan's chained fusion (checker/PlanChain.h) computes
/// another value than `original` for one of `original`'s tensors, on seeded
/// integer inputs in [-range, range] at `symbols`; nullopt when every value
/// is equal. The
/// plan runs are compared with the chained fusion's reference; this closes
/// the loop to the fusion as written (a split reduction's steps compose to
/// the edge's reduction only by its operator's algebra).
std::optional<std::string> chainMismatch(const Fusion &original, const Fusion &chained,
                                         const Bindings &symbols, uint64_t seed, int range);

class Oracle {
public:
  explicit Oracle(OracleOptions options = {});

  /// Checks, plans and runs one fusion.
  OracleResult run(const FusionSpec &spec);
  /// The same for a fusion read from a file (a kept reproducer).
  OracleResult run(Fusion fusion);
  /// The random DTensor redistribute of `seed` (tests/oracle/RandomDTensor.h):
  /// one result per fusion it maps to (the transition, DTensor's modelled
  /// sequence, that sequence made wrong), each naming the seed and the
  /// document in its run log; one result with checker outcome
  /// `dtensor-rejected` where the reader rejects the document, and one with
  /// `dtensor-wrong-rejected` where the mapping rejects the wrong sequence.
  /// The wrong collective confirmed is the violation
  /// `dtensor-wrong-confirmed:<mutation>`.
  std::vector<OracleResult> runDTensor(uint64_t seed);
  /// A smaller spec whose result still has a violation of class `kind`,
  /// trying at most `budget` candidate edits.
  FusionSpec minimize(const FusionSpec &spec, const std::string &kind, int budget = 250);

  const OracleOptions &options() const { return options_; }

private:
  /// Checks `r.fusion`, then runs its plans and judges them.
  void judge(OracleResult &r);
  void runCheckerPlan(OracleResult &r, const FusionGraph &graph);
  void runCompilerPlan(OracleResult &r, const FusionGraph &graph);

  OracleOptions options_;
  Checker checker_;
};

/// Judges a random CollectivePermute ring (checker/bruteforce/RandomLoops.h)
/// against the generator's own run of it: a wrong ring (`right` false)
/// proved is the violation `ring-wrong-proved`; a right one that is not
/// proved, planned and matched is `ring-right-not-matched`.
void judgeRing(bool right, OracleResult &r);

/// The whole story of one result: seed, the fusion in nvFuser's dump style
/// (ir/Printer.h), every edge verdict, the runs and the violations.
std::string describeResult(const OracleResult &result);

/// A reproducer file in the corpus's style (corpus/README.md): `//` lines
/// naming the violation, the seed, every verdict and the runs, then the
/// fusion in nvFuser's dump style, so that check-sharding reads it as is.
std::string reproducerText(const OracleResult &result, const std::string &kind);

/// One line per edge: `T0 -> T2 (matmul): Allreduce team=(0 1) proved`, and
/// the compiler's choice with its verdict where there is one.
std::string describeVerdicts(const std::vector<EdgeVerdict> &verdicts);

} // namespace shardcheck::oracle
