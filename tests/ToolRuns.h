// Running the two tools in-process from tests: check-sharding and run-plan
// through their library entry points (tools/check_sharding/CheckSharding.h,
// tools/run_plan/RunPlan.h), with what they print kept, the scratch files tests
// hand them, and the exit status check-sharding gives a DocumentReport.
//
// This file does not spawn processes (tests/mpi_plans.sh runs the binaries)
// and does not interpret what the tools print.
#pragma once

#include "checker/CheckDocument.h"

#include <string>
#include <vector>

namespace shardcheck::testing {

/// One run of a tool: its exit status and what it wrote.
struct ToolRun {
  int status = 0;
  std::string out, err;
};

ToolRun checkShardingTool(const std::vector<std::string> &args);
/// The exit status check-sharding gives a file with this report (its
/// summary's), for tests that check through checkDocument.
int checkShardingExitStatus(const DocumentReport &report);
ToolRun runPlanTool(const std::vector<std::string> &args);

/// A path for scratch file `name` under the temporary directory
/// shardcheck_`suite` (created).
std::string tempPath(const std::string &suite, const std::string &name);
/// Writes `text` to tempPath(suite, name) and returns the path.
std::string tempFile(const std::string &suite, const std::string &name, const std::string &text);
/// The plan check-sharding --emit-plan writes for corpus file `file` with
/// `lowerings` (`checker` or `compiler`), under tempPath(suite, ...);
/// returns its path ("" when none was written).
std::string emittedPlan(const std::string &suite, const std::string &file,
                        const std::string &lowerings);

} // namespace shardcheck::testing
