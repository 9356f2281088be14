// The run-plan driver: command-line parsing, loading and running a plan,
// the per-step table, the JSON report (DESIGN section 6).
//
// The tool's main is one call to runPlanMain, so tests run exactly the code
// users run. Exit statuses: 0 every tensor the plan computes matches the
// reference; 1 a mismatch, or a step failed while running (a collective's
// buffers did not fit it); 2 unreadable or inconsistent plan, bad bindings or
// bad usage; 3 the plan rests on refuted or unknown verdicts and
// --allow-unverified was not given.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace shardcheck {

/// Runs run-plan with `args` (without the program name). Returns the exit
/// status.
int runRunPlan(const std::vector<std::string> &args, std::ostream &out, std::ostream &err);

/// main() of the run-plan tool.
int runPlanMain(int argc, char **argv);

} // namespace shardcheck
