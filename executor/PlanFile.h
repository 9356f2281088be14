// A plan file made ready to run: the library call run-plan's command line
// (tools/run_plan/) drives before executor/core/Run.h's runPlan, as
// check-sharding's drives checkDocument.
//
// It reads and checks the plan (plan/PlanReader.h), refuses bindings that
// name no symbol of the plan (they would bind nothing, and the run would
// silently use other sizes), and finds sizes for the symbols left unbound
// when asked. Every problem is a located InputError naming the file.
//
// This file does not run the plan or print anything.
#pragma once

#include "executor/Reference.h" // Bindings
#include "plan/Plan.h"

#include <string>

namespace shardcheck {

/// The plan in file `path`, after checking that every name `given` binds is
/// a symbol of it. InputError: `unreadable` (the system's reason), the
/// plan reader's errors, `unknown-symbol`.
Plan readPlanFile(const std::string &path, const Bindings &given);

/// `given` with every other symbol of `plan` bound to a small size that
/// satisfies its constraints (satisfyingBindings, executor/core/Run.h).
/// InputError `constraint-violated` naming `path` when none do.
Bindings bindRemainingSymbols(const Plan &plan, const Bindings &given, const std::string &path);

} // namespace shardcheck
