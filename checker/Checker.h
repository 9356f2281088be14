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

/// The compiler's own choice for an edge and its verdict.
struct CompilerVerdict {
  Lowering lowering;
  /// Proved = confirmed.
  Status status = Status::Unknown;
  std::optional<Counterexample> counterexample;
  std::string reason;
  /// Correct but not needed: the edge needs no communication.
  bool unnecessary = false;
  /// "host IR Communication 3" or "nvFuser's lowering of a resharding Set".
  std::string source;
  SourceLoc loc;
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
  Lowering lowering; ///< kind Unsupported when no single collective does it.
  Status status = Status::Unknown;
  /// For needed communication: why (a device lacking an element). For a
  /// refuted or unsupported edge: the failure.
  std::optional<Counterexample> counterexample;
  std::string reason; ///< For unknown / unsupported.
  /// For an edge no single collective lowers: the planner's multi-step plan
  /// (checker/Planner.h), every step proved; empty when none was found.
  std::vector<PlannedStep> steps;
  std::vector<std::string> assumptions; ///< Sizes the proof covers, e.g. `i0 % 2 == 0`.
  std::optional<CompilerVerdict> compiler;
  bool fromCache = false;
};

/// An edge's verdict, one closed set (the checker's answer for the edge).
/// EdgeVerdict keeps the lowering and a Status; this is what they mean
/// together: an edge no single lowering serves is not a "kind of lowering".
enum class EdgeResult {
  Proved,      ///< The lowering (none, alias or a collective) is proved.
  Refuted,     ///< The lowering is refuted.
  Unknown,     ///< Not decided (solver unknown, --time-limit); never proved.
  Unsupported, ///< Communication is needed and no single lowering is proved (an error).
  Unmodelled,  ///< The edge (or its candidate) is outside what the checker models (a warning).
};
/// An edge with a proved multi-step plan is Proved.
EdgeResult edgeResult(const EdgeVerdict &v);
/// Whether `v` has a multi-step plan whose every step is proved.
bool hasProvedPlan(const EdgeVerdict &v);

/// The verdict on the compiler's own choice for an edge.
enum class CompilerResult {
  Confirmed,   ///< Proved and needed.
  Unnecessary, ///< Proved, but the edge needs no communication.
  Refuted,
  Unknown,
};
CompilerResult compilerResult(const CompilerVerdict &c);

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
  /// Communications posted in host loops (ir/HostLoops.h): the compiler's
  /// choice is confirmed only when the loop claims (LoopChecker) hold too,
  /// and the read view feeding one is local when its slice is its base's.
  void checkHostLoops(const Fusion &fusion, const FusionGraph &graph,
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
