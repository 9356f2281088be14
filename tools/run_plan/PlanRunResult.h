// What run-plan made of one plan file, for every output it writes (the text,
// the JSON report, the HTML report, JUnit): the run's RunReport
// (executor/core/RunReport.h) when there is one, else why there is none (a
// refused plan, an unreadable plan or bindings, a backend that failed), and
// the exit status.
//
// This file does not run anything or render anything.
#pragma once

#include "executor/core/RunReport.h"

#include <optional>
#include <string>

namespace shardcheck::runplan {

struct PlanRunResult {
  std::string plan;    ///< The plan file as given.
  std::string backend; ///< `sim`, `mpi`, `nccl`.
  int status = 0;      ///< run-plan's exit status for this plan.
  /// The run: complete when it ran (a failed step included); for a refused
  /// plan, its steps, none run; absent when the plan or the bindings could
  /// not be read, or the backend failed.
  std::optional<RunReport> report;
  /// Why the run gave no result: `refused` (status 3: the plan rests on
  /// refuted or unknown verdicts), `unreadable` (2: the plan, the bindings)
  /// or `backend` (1: the machine failed outside a step); "" when it gave
  /// one.
  std::string errorKind;
  std::string errorMessage; ///< What the error said, as printed.

  /// `refused`, `unreadable`, `backend`, or the report's outcome
  /// (RunReport::outcome: `match`, `wrong-values`, `count-error`, ...).
  std::string outcome() const { return errorKind.empty() ? report->outcome() : errorKind; }
};

} // namespace shardcheck::runplan
