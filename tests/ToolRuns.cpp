// In-process tool runs for tests; see ToolRuns.h.
#include "tests/ToolRuns.h"

#include "tests/TestPaths.h"

#include "tools/check_sharding/CheckSharding.h"
#include "tools/check_sharding/Summary.h"
#include "tools/run_plan/RunPlan.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace shardcheck::testing {

namespace {
using Main = int (*)(const std::vector<std::string> &, std::ostream &, std::ostream &);

ToolRun runTool(Main main, const std::vector<std::string> &args) {
  std::ostringstream out, err;
  int status = main(args, out, err);
  return {status, out.str(), err.str()};
}
} // namespace

ToolRun checkShardingTool(const std::vector<std::string> &args) {
  return runTool(runCheckSharding, args);
}

int checkShardingExitStatus(const DocumentReport &report) {
  checksharding::Summary summary;
  summary.addDocument(report);
  return checksharding::exitStatus(summary);
}

ToolRun runPlanTool(const std::vector<std::string> &args) {
  return runTool(runRunPlan, args);
}

std::string tempPath(const std::string &suite, const std::string &name) {
  // Per process: test runs of several checkouts (or ctest -j) share /tmp.
  auto dir = std::filesystem::temp_directory_path() /
             ("shardcheck_" + suite + "_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return (dir / name).string();
}

std::string tempFile(const std::string &suite, const std::string &name, const std::string &text) {
  std::string path = tempPath(suite, name);
  std::ofstream(path) << text;
  return path;
}

std::string emittedPlan(const std::string &suite, const std::string &file,
                        const std::string &lowerings) {
  std::string plan = tempPath(suite, file + "." + lowerings + ".plan.json");
  std::filesystem::remove(plan);
  checkShardingTool({"--quiet", "--plan-lowerings", lowerings, "--emit-plan", plan,
                     std::string(SHARDCHECK_SOURCE_DIR) + "/corpus/" + file});
  return std::filesystem::exists(plan) ? plan : "";
}

} // namespace shardcheck::testing
