// libFuzzer harness: the whole pipeline as a user runs it. The input is a
// file check-sharding reads (an nvFuser dump, or JSON IR); check-sharding
// --format json --emit-plan checks its first fusion with small solver limits
// and writes the plan, and run-plan runs that plan on the sim backend, both
// through their drivers (runCheckSharding, runRunPlan) on scratch files.
//
// Properties (fuzz/FuzzSupport.h for the shared ones):
// - neither driver throws; both exit 0..3; check-sharding's status follows
//   from its summary and its summary counts every edge once;
// - check-sharding writes a plan for a fusion it proves (status 0), and none
//   for unreadable input (status 2); the plan loads and loads back equal; a
//   plan of a proved fusion has only verified steps;
// - a verified plan matches the reference (run-plan exits 0) with either
//   compute path; an unverified one is refused (exit 3), and run anyway
//   with --allow-unverified it still exits as its report says.
// Documents over fuzz::kLimits are not checked and plans over them not run.
//
// This harness does not mutate plans (fuzz_plan_loader.cpp runs mutated
// ones) and does not plan with the compiler's lowerings.
#include "fuzz/FuzzSupport.h"

#include "ir/reader/DumpReader.h"

#include <algorithm>
#include <iterator>

using namespace shardcheck;
using namespace shardcheck::fuzz;

namespace {

/// The plan check-sharding wrote, loaded; nullopt when it wrote none.
std::optional<Plan> loadWrittenPlan(const ToolRun &check, const std::filesystem::path &file) {
  std::optional<std::string> text = readFile(file);
  if (text && check.status == 2)
    violated("check-sharding writes no plan when it exits 2", check.err);
  if (!text && check.status == 0)
    violated("check-sharding writes the plan of a fusion it proves", check.out);
  if (!text)
    return std::nullopt;
  Plan plan;
  mustSucceed("loading the plan check-sharding wrote",
              [&] { plan = planFromJsonText(*text, file.string()); });
  checkPlanRoundTrip(plan);
  if (check.status == 0 && !plan.verified())
    violated("a plan of a proved fusion has only verified steps", *text);
  return plan;
}

/// Runs the plan with both compute paths, and an unverified one once more
/// with --allow-unverified.
void runWrittenPlan(const std::filesystem::path &file, const Plan &plan) {
  if (!runnableBindings(plan))
    return;
  for (const std::vector<std::string> &flags :
       {std::vector<std::string>{}, {"--indexed-compute"}}) {
    PlanRun run = runPlanFile(file, flags);
    if (plan.verified() && run.tool.status != 0)
      violated("a verified plan matches the reference" +
                   std::string(flags.empty() ? "" : " with --indexed-compute"),
               "run-plan exits " + std::to_string(run.tool.status) + "\n" + run.tool.out +
                   run.tool.err);
    if (!plan.verified() && run.tool.status != 3)
      violated("run-plan refuses an unverified plan (exit 3)",
               "run-plan exits " + std::to_string(run.tool.status));
  }
  if (!plan.verified())
    runPlanFile(file, {"--allow-unverified"});
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view text = textOf(data, size);
  Document doc;
  if (!acceptsInput("readDocument", [&] { doc = readDocument(text, "fuzz.txt"); }) ||
      !withinCheckLimits(doc))
    return 0;
  const auto input = scratchFile("input.txt"), planFile = scratchFile("plan.json");
  writeFile(input, text);
  ToolRun check = emitPlan(input, planFile, "checker", 0, kLimits.solverTimeoutMs);
  checkCheckExit(check);
  if (std::optional<Plan> plan = loadWrittenPlan(check, planFile))
    runWrittenPlan(planFile, *plan);
  return 0;
}
