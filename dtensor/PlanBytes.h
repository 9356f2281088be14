// Both plans of a DTensor redistribute priced side by side (issue 18): the
// bytes each rank moves in DTensor's sequence (recorded, else the model of
// its greedy plan; DTensorPlan.h, reportedSequence) and in shardcheck's own
// plan of the transition (fusion 0's edge as the checker decided it: the
// planner's multi-step plan or the single lowering proved), per rank of the
// mesh and in total, both under the one cost model (checker/CostModel.h).
//
// shardcheck's figures are the planner's (checker/Planner.h,
// PlannedStep::networkBytes and loweringBytesPerDevice; a padded Allgather
// priced on the padded buffers it moves): a step's price is each member's,
// so it counts for every device in one of the step's teams (for SendRecv
// pairs: every device that sends to another) and 0 for the rest.
//
// This file does not check anything (the caller passes the verdict), does
// not render JSON (check-sharding does) and does not guess: a plan that is
// not proved, or that the cost model cannot read, has no figures, only the
// reason.
#pragma once

#include "checker/Checker.h"
#include "dtensor/DTensorCase.h"
#include "util/Diagnostics.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace shardcheck::dtensor {

/// One plan's bytes per rank, or why it has none.
struct PlanBytes {
  std::string source; ///< What the figures are of, e.g. "from the recording".
  /// Bytes each rank moves, every device of the mesh; empty when unknown.
  std::map<int64_t, double> perRank;
  std::string unknownWhy; ///< Non-empty: no figures, and why.

  bool known() const { return unknownWhy.empty(); }
  double total() const; ///< Summed over the ranks.
  double most() const;  ///< The most one rank moves.
};

struct BytesSideBySide {
  std::vector<int64_t> ranks; ///< The mesh's devices, in order.
  PlanBytes dtensor, shardcheck;
};

/// DTensor's sequence for `c` (reportedSequence) priced per rank of its mesh.
PlanBytes dtensorPlanBytes(const DTensorCase &c);

/// shardcheck's plan of `verdict` (an edge of `fusion`) priced per device
/// of `devices`.
PlanBytes shardcheckPlanBytes(const Fusion &fusion, const EdgeVerdict &verdict,
                              const std::vector<int64_t> &devices);

/// shardcheck's plan of a whole transition: every edge of `verdicts` (of
/// `fusion`) priced and summed per device; unknown when one edge is. A
/// transition has one edge, or more when it creates a partial (the edge,
/// then the local partition: docs/dtensor.md).
PlanBytes transitionPlanBytes(const Fusion &fusion, const std::vector<EdgeVerdict> &verdicts,
                              const std::vector<int64_t> &devices);

/// Both plans of `c`; `transition` is fusion 0 of its document and
/// `verdicts` that fusion's verdicts.
BytesSideBySide bytesSideBySide(const DTensorCase &c, const Fusion &transition,
                                const std::vector<EdgeVerdict> &verdicts);

/// The comparison as a note (code `dtensor-bytes`) at `loc`: the heading
/// names both plans, its notes give one line per rank and the totals.
Diagnostic bytesSideBySideNote(const BytesSideBySide &b, const SourceLoc &loc);

/// A byte count as the notes print it: whole numbers without a fraction,
/// else two decimals.
std::string bytesText(double bytes);

} // namespace shardcheck::dtensor
