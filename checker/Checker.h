// The checker: a verdict for every producer -> consumer edge of a fusion.
//
// For each edge it proves whether communication is needed (EdgeChecker's
// `edge-local`), and if so proposes a lowering by nvFuser's rules
// (Selection.h) and proves it, falling back to a local-permute composite for
// Allgather. Where the dump carries the compiler's own choice (a host IR
// Communication, or a resharding Set or reduction nvFuser would lower), that
// choice is confirmed or refuted against the same semantics.
//
// Structurally identical edges (same shardings up to renaming) are decided
// once: verdicts are cached by a canonical key of the edge's structure, and
// below that, SMT answers by canonical query text.
//
// Unknown is never reported as proved, and no verdict rests on an unknown.
#pragma once

#include "checker/Lowering.h"
#include "checker/Planner.h"
#include "checker/smt/Smt.h"
#include "ir/FusionGraph.h"
#include "ir/HostLoops.h"
#include "ir/RingPermute.h"

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace shardcheck {

struct CheckOptions {
  unsigned timeoutMs = 10000;
  std::string smtDumpDir; ///< Write every query as SMT-LIB2 here.
  bool useEdgeCache = true;
  /// `--devices N`: devices 0..N-1 join the devices of a tensor without a
  /// mesh (by default: every device of every mesh of the fusion).
  int64_t devices = 0;
  /// Whose runtime rules compiler choices are confirmed against.
  NvfuserRuntime runtime = NvfuserRuntime::Dec2024;
  /// `--time-limit`: past it, every query and every edge not yet checked is
  /// unknown (never proved); see smt::SolverOptions::deadline.
  std::optional<std::chrono::steady_clock::time_point> deadline;
};

/// An edge's verdict, one closed set: the checker's answer for the edge.
enum class EdgeResult {
  Proved,      ///< The lowering (none, alias or a collective) is proved.
  Refuted,     ///< The lowering is refuted.
  Unknown,     ///< Not decided (solver unknown, --time-limit); never proved.
  Unsupported, ///< Communication is needed and no single lowering is proved (an error).
  Unmodelled,  ///< The edge (or its candidate) is outside what the checker models (a warning).
};
/// Whether a verdict with this result names a lowering: Unsupported and
/// Unmodelled have none.
constexpr bool hasLowering(EdgeResult r) {
  return r != EdgeResult::Unsupported && r != EdgeResult::Unmodelled;
}
/// How reports word a result beside its lowering (`proved`, `refuted`,
/// `unknown`): Unsupported is a refuted edge (no single lowering serves
/// it), Unmodelled an undecided one.
const char *edgeResultStatusName(EdgeResult r);

/// The verdict on the compiler's own choice for an edge, one closed set.
enum class CompilerResult {
  Confirmed,   ///< Proved and needed.
  Unnecessary, ///< Proved, but the edge needs no communication.
  Refuted,
  Unknown,
};
/// How reports word a compiler result (`confirmed`, `refuted`, `unknown`):
/// an unnecessary choice is confirmed, and said unnecessary apart.
const char *compilerResultStatusName(CompilerResult r);

/// The compiler's own choice for an edge and its verdict.
struct CompilerVerdict {
  /// The choice; nullopt when the checker cannot judge it as a lowering (a
  /// CollectivePermute outside a modelled ring), which is then unknown.
  std::optional<Lowering> lowering;
  CompilerResult result = CompilerResult::Unknown;
  std::optional<Counterexample> counterexample;
  std::string reason;
  /// "host IR Communication 3" or "nvFuser's lowering of a resharding Set".
  std::string source;
  SourceLoc loc;

  /// The lowering's text (Lowering::str), `unsupported` when there is none.
  std::string loweringText() const;
  /// The lowering's kind (commKindName), `unsupported` when there is none.
  const char *communicationName() const;
};

/// The claims a host loop adds to the statement posted in it (LoopChecker:
/// its slices, read ranges and coverage; for a CollectivePermute ring the
/// ring's claims, RingChecker), decided once per statement.
struct LoopClaims {
  enum class Status { Proved, Refuted, Unknown, Unsupported };
  Status status = Status::Unknown;
  std::string header; ///< The loop's header, as printed.
  /// Refuted: the failure (it names the iteration). Unknown, Unsupported:
  /// the reason.
  std::optional<Counterexample> counterexample;
  std::string reason;
};

struct EdgeVerdict {
  TensorNum producer = 0;
  TensorNum consumer = 0;
  size_t expr = 0;
  /// Its edge: the index in the FusionGraph's edges() (a report may leave
  /// repeats of one edge out, so verdicts and edges need not line up).
  size_t edge = 0;
  std::string exprName; ///< Op spelling, e.g. `Set`, `reduction`.
  SourceLoc loc;
  /// The checker's answer; `lowering` is what it is about.
  EdgeResult result = EdgeResult::Unknown;
  /// Proved: the lowering proved. Refuted: the lowering refuted. Unknown:
  /// the candidate left undecided (none when whether communication is
  /// needed is undecided). Unsupported, Unmodelled: none (kind None), see
  /// hasLowering; `reason` says what failed.
  Lowering lowering;
  /// For needed communication: why (a device lacking an element). For a
  /// refuted or unsupported edge: the failure.
  std::optional<Counterexample> counterexample;
  std::string reason; ///< For unknown / unsupported.
  /// For an edge no single collective lowers: the planner's multi-step plan
  /// (checker/Planner.h), every step proved; empty when none was found.
  std::vector<PlannedStep> steps;
  std::vector<std::string> assumptions; ///< Sizes the proof covers, e.g. `i0 % 2 == 0`.
  std::optional<CompilerVerdict> compiler;
  /// For an edge of a statement posted in a host loop that the loop model
  /// reads: its loop claims; nullopt elsewhere.
  std::optional<LoopClaims> loopClaims;
  bool fromCache = false;

  /// The lowering's text (Lowering::str), `unsupported` for a result
  /// without one.
  std::string loweringText() const;
  /// The lowering's kind (commKindName), `unsupported` for a result without
  /// one.
  const char *communicationName() const;
};
/// Whether `v` is proved by the planner's multi-step plan (every step
/// proved; `result` is Proved and `lowering` names no single collective:
/// reports say "multi-step proved", never the lowering).
bool hasProvedPlan(const EdgeVerdict &v);

struct CheckStats {
  uint64_t edges = 0;
  uint64_t edgeCacheHits = 0;
  smt::SolverStats solver;
};

class Checker {
public:
  explicit Checker(CheckOptions options);

  /// Verdicts for every edge of `graph`, in graph edge order.
  std::vector<EdgeVerdict> checkFusion(const Fusion &fusion, const FusionGraph &graph);

  const CheckStats &stats() const { return stats_; }

private:
  EdgeVerdict checkEdge(const Fusion &fusion, const FusionEdge &edge,
                        const std::vector<int64_t> &universe);
  std::optional<CompilerVerdict> compilerChoice(const Fusion &fusion, const FusionEdge &edge);
  /// The edge of a CollectivePermute of a modelled ring (ir/RingPermute.h):
  /// the ring's claims (RingChecker) decide it and the compiler's choice.
  EdgeVerdict checkRingEdge(const Fusion &fusion, const FusionEdge &edge, smt::Context &ctx,
                            EdgeVerdict v);
  /// `v` (located) as unknown: the run's deadline passed before its turn.
  EdgeVerdict notCheckedInTime(const Fusion &fusion, const FusionEdge &edge, EdgeVerdict v);
  /// The runtime whose rules the compiler's choice for `expr` must meet.
  std::optional<NvfuserRuntime> runtimeOf(const Expr &expr) const;
  /// Expressions that reduce over several operands (matmul, linear): a
  /// reduction lowering proved per edge is demoted unless the partials of all
  /// reduced operands together sum every term exactly once (ExprChecker).
  /// An expression one of whose edges has no domain map: the maps of its
  /// other operands are not trusted either, so those edges are unsupported.
  void demoteUnmodelledExpressions(const Fusion &fusion, const FusionGraph &graph,
                                   std::vector<EdgeVerdict> &verdicts);
  void checkReducedOperands(const Fusion &fusion, const FusionGraph &graph,
                            const std::vector<int64_t> &universe,
                            std::vector<EdgeVerdict> &verdicts);
  /// Statements posted in host loops (ir/HostLoops.h): a Communication's
  /// compiler choice is confirmed, and another statement's edge proved,
  /// only when the loop claims (LoopChecker) hold too; a read view feeding
  /// one is local when its slice is its base's.
  void checkHostLoops(const Fusion &fusion, const FusionGraph &graph,
                      const std::vector<int64_t> &universe, std::vector<EdgeVerdict> &verdicts);
  void checkReadViews(const Fusion &fusion, const FusionGraph &graph, const LoopedStatement &ls,
                      const std::vector<int64_t> &universe, std::vector<EdgeVerdict> &verdicts);
  smt::SolverOptions solverOptions() const;
  /// The planner's steps for an edge no single collective serves.
  std::vector<PlannedStep> planMultiStep(const Fusion &fusion, const FusionEdge &edge,
                                         const std::vector<int64_t> &universe);
  /// The planner's StepProver: one step's lowering by the same EdgeChecker
  /// queries as any edge's, memoised by the step's canonical key.
  StepProof proveStep(const Fusion &fusion, const FusionEdge &edge, const Lowering &lowering,
                      const std::vector<int64_t> &universe);

  CheckOptions options_;
  smt::QueryCache queryCache_;
  smt::SolverBackend solverBackend_;
  std::map<std::string, EdgeVerdict> edgeCache_;
  /// Expression keys (plus lowering) whose partials were proved.
  std::set<std::string> provedExpressions_;
  std::map<std::string, StepProof> stepProofs_;
  CheckStats stats_;
};

/// The canonical key of an edge's structure (tensors and IDs renumbered,
/// symbols renamed in order of appearance). Exposed for tests.
std::string canonicalEdgeKey(const Fusion &fusion, const FusionEdge &edge);

} // namespace shardcheck
