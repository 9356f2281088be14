// Building a plan (plan/Plan.h) from a checked fusion.
//
// buildPlan turns the verdict of every edge into buffers and steps, one
// expression at a time in dependency order:
// - an expression whose edges need no communication is one compute step;
// - an alias edge of a copy-like expression (set, permute, broadcast, ...,
//   host IR communication) is an alias step: the consumer reuses the
//   producer's buffer;
// - a collective edge of a copy-like expression is one collective step into
//   the consumer's buffer; for any other expression it fills a view buffer
//   (the producer's elements laid out as the consumer's) that the compute
//   step then reads;
// - `+permute` lowerings add their temporaries and local copies;
// - a reduction collective is a partial compute step, the collective, and an
//   epilogue where the op has one (a linear's bias).
// Every step records the verdicts it rests on. With `Lowerings::Compiler`,
// edges where the dump carries the compiler's own choice use that choice and
// its verdict (refuted ones included): that is how a refuted lowering is
// reproduced by run-plan --allow-unverified.
//
// The constraints a plan states (`i0 % 2 == 0`) are the fusion's implied
// constraints (docs/semantics.md), computed here from the IR.
//
// This file does not prove anything: it only arranges what Checker decided.
#pragma once

#include "checker/Checker.h"
#include "plan/Plan.h"

#include <stdexcept>
#include <string>
#include <vector>

namespace shardcheck {

struct PlanRequest {
  enum class Lowerings { Checker, Compiler };
  Lowerings lowerings = Lowerings::Checker;
  std::string inputFile;
  std::string inputText; ///< Hashed into the plan.
  size_t fusionIndex = 0;
  /// `--devices N`: devices 0..N-1 hold tensors without a mesh (0: every
  /// device of every mesh of the fusion).
  int64_t devices = 0;
};

/// No plan can be built: an edge has no lowering, or a lowering the plan
/// cannot express. A finding about the fusion (exit status 1), located.
class PlanError : public std::runtime_error {
public:
  PlanError(const std::string &message, SourceLoc loc)
      : std::runtime_error(message), loc(std::move(loc)) {}
  SourceLoc loc;
};

/// Builds the plan of `fusion` from `verdicts` (Checker::checkFusion's, in
/// graph edge order). Throws PlanError as described above.
Plan buildPlan(const Fusion &fusion, const FusionGraph &graph,
               const std::vector<EdgeVerdict> &verdicts, const PlanRequest &request);

} // namespace shardcheck
