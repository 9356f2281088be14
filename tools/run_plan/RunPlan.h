// The run-plan command line: flags and usage (tools/common/CommandLine.h),
// the backend by name (Backends.h), the plan file through executor/PlanFile.h
// and executor/core/Run.h's runPlan, and the outputs: the text and the JSON
// report (Render.h), the HTML report (HtmlReport.h) and JUnit (Junit.h)
// (DESIGN section 6).
//
// The tool's main is one call to runPlanMain, so tests run exactly the code
// users run. Exit statuses: 0 every tensor the plan computes matches the
// reference; 1 a mismatch, or a step failed while running (a collective's
// buffers did not fit it); 2 unreadable or inconsistent plan, bad bindings
// (a name that is not a symbol of the plan, a value that is not a
// non-negative 64-bit integer), bad usage (a flag the chosen backend does not
// read, a bad combination of report flags) or an unwritable report; 3 the plan rests on refuted or
// unknown verdicts and --allow-unverified was not given. Under mpirun, the mpi backend ends a job
// whose processes wait past --timeout-s with status 4 (executor/mpi/MpiBackend.h).
//
// This file does not run plans (executor/core/Run.h), render them (Render.h,
// HtmlReport.h, Junit.h) or check standard output (the tool's main does,
// tools/StdoutCheck.h).
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
