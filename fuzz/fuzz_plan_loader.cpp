// libFuzzer harness: the plan loader run-plan uses (planFromJsonText,
// docs/plan-format.md), then run-plan itself on what loads.
//
// Properties (fuzz/FuzzSupport.h): only InputError escapes the loader; a
// plan it returns, written back, loads equal (the same text written twice);
// a plan small enough to run (fuzz::kLimits) goes through run-plan's driver
// on the sim backend with --bind-auto --allow-unverified, which must not
// throw, must exit 0..3, and must write a report that agrees with its exit
// status (a match having compared at least one slot).
//
// This harness does not ask whether a loaded plan is correct (a mutated plan
// may well compute wrong values); fuzz_pipeline.cpp does for proved plans.
#include "fuzz/FuzzSupport.h"

#include "plan/Plan.h"

using namespace shardcheck;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(fuzz::textOf(data, size));
  Plan plan;
  if (!fuzz::acceptsInput("planFromJsonText", [&] { plan = planFromJsonText(text, "fuzz.json"); }))
    return 0;
  fuzz::checkPlanRoundTrip(plan);
  if (!fuzz::runnableBindings(plan))
    return 0;
  const auto planFile = fuzz::scratchFile("plan.json");
  fuzz::writeFile(planFile, text);
  fuzz::runPlanFile(planFile, {"--allow-unverified"});
  return 0;
}
