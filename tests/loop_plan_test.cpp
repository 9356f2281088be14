// Plans that keep host loops (docs/plan-format.md, "Loops"): the stream
// pipelines of the corpus proved, planned with a loop step and slice
// buffers, and run on simulated devices to a match with the reference's
// evaluation of the looped program, at several trip counts; a wrong loop
// bound refused, and when run anyway, wrong where the loop missed a slice;
// the loader's and the run loop's loop checks, each a located error.
//
// The mpirun runs of the same plans are in tests/mpi_plans.sh; random
// looped programs go through the end-to-end oracle (fusion_oracle_test.cpp).
#include "checker/Checker.h"
#include "checker/PlanBuilder.h"
#include "executor/sim/SimBackend.h"
#include "ir/reader/DumpReader.h"
#include "plan/PlanVerifier.h"
#include "tests/CorpusPlans.h"
#include "tests/TestPaths.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <functional>
#include <sstream>

namespace shardcheck {
namespace {

Plan loopPlanOf(const std::string &file,
                PlanRequest::Lowerings lowerings = PlanRequest::Lowerings::Checker) {
  return testing::corpusPlan(file, lowerings);
}

RunReport runOnSim(const Plan &plan, Bindings symbols, bool allowUnverified = false,
                   bool indexed = false) {
  SimBackend sim;
  RunOptions options;
  options.symbols = std::move(symbols);
  options.allowUnverified = allowUnverified;
  options.indexedCompute = indexed;
  return runPlan(plan, options, sim);
}

const char *kPipeline = "pipeline_stream_allgather_matmul_hostir.txt";
const char *kWrongBound = "pipeline_stream_allgather_wrong_bound_hostir.txt";

TEST(LoopPlan, PipelineIsOneLoopOfSlicesAndVersionTwo) {
  Plan plan = loopPlanOf(kPipeline);
  EXPECT_TRUE(plan.verified());
  EXPECT_EQ(planFormatVersion(plan), kPlanLoopVersion);
  ASSERT_FALSE(plan.steps.empty());
  const PlanStep &loop = plan.steps[0];
  ASSERT_EQ(loop.kind, StepKind::Loop);
  EXPECT_EQ(loop.loopVar, "StreamIdx");
  EXPECT_EQ(loop.hi.str(), "i0");
  EXPECT_EQ(loop.body, plan.steps.size() - 1);
  bool allgather = false;
  for (const PlanStep &s : plan.steps)
    allgather |= s.kind == StepKind::Collective && s.collective == CollectiveType::Allgather &&
                 plan.buffer(s.inputs[0])->kind == BufferKind::Slice &&
                 plan.buffer(s.output)->kind == BufferKind::Slice;
  EXPECT_TRUE(allgather) << "the Allgather runs from slice to slice";
  // Round trip: the same text, version 2.
  std::string text = planToJsonText(plan);
  EXPECT_EQ(nlohmann::json::parse(text)["version"], 2);
  EXPECT_EQ(planToJsonText(planFromJsonText(text, "loop.json")), text);
}

TEST(LoopPlan, PipelineMatchesTheReferenceAtEveryTripCount) {
  Plan plan = planFromJsonText(planToJsonText(loopPlanOf(kPipeline)), "loop.json");
  for (int64_t trips : {1, 2, 3, 5})
    for (bool indexed : {false, true}) {
      SCOPED_TRACE("i0=" + std::to_string(trips) + (indexed ? " indexed" : ""));
      RunReport r = runOnSim(plan, {{"i0", trips}, {"i3", 4}, {"i6", 3}}, false, indexed);
      EXPECT_TRUE(r.matches()) << describeRun(r);
      bool comparedOutput = false;
      for (const TensorCheck &t : r.tensors)
        comparedOutput |= t.comparison.name == "T2" && t.comparison.compared > 0;
      EXPECT_TRUE(comparedOutput) << "the matmul's output, written slice by slice, is compared";
      int64_t moved = 0;
      for (const StepReport &s : r.steps)
        moved += s.bytesMoved;
      // Each iteration gathers one [2, i3] float slice: each device receives i3 values.
      EXPECT_EQ(moved, trips * 2 * 4 * 4);
    }
}

TEST(LoopPlan, WrongBoundIsRefusedAndMissesTheLastSliceWhenRunAnyway) {
  for (auto lowerings : {PlanRequest::Lowerings::Checker, PlanRequest::Lowerings::Compiler}) {
    Plan plan = loopPlanOf(kWrongBound, lowerings);
    EXPECT_FALSE(plan.verified());
    Bindings b{{"i3", 4}, {"i6", 3}};
    EXPECT_THROW(runOnSim(plan, b), PlanRefused);
    RunReport r = runOnSim(plan, b, true);
    EXPECT_EQ(r.outcome(), "wrong-values") << describeRun(r);
  }
}

std::string loadError(const nlohmann::json &j) {
  try {
    planFromJsonText(j.dump(1), "loop.json");
  } catch (const InputError &e) {
    return e.diagnostic().message;
  }
  return "";
}

size_t bufferIndex(const nlohmann::json &j, const std::string &kind) {
  for (size_t i = 0; i < j["buffers"].size(); ++i)
    if (j["buffers"][i]["kind"] == kind)
      return i;
  ADD_FAILURE() << "no " << kind << " buffer";
  return 0;
}

/// One hand-edited plan the loader must refuse, with the message it gives.
struct LoaderCase {
  std::string what;
  std::function<void(nlohmann::json &)> breakIt;
  std::string expect;
};

void expectLoadErrors(const nlohmann::json &valid, const std::vector<LoaderCase> &cases) {
  for (const LoaderCase &c : cases) {
    SCOPED_TRACE(c.what);
    nlohmann::json j = valid;
    c.breakIt(j);
    std::string error = loadError(j);
    EXPECT_NE(error.find(c.expect), std::string::npos) << error;
  }
}

TEST(LoopPlan, LoaderChecksLoopsAndSlices) {
  nlohmann::json valid = nlohmann::json::parse(planToJsonText(loopPlanOf(kPipeline)));
  size_t slice = bufferIndex(valid, "slice");
  expectLoadErrors(
      valid,
      {
          {"version", [](auto &j) { j["version"] = 1; }, "needs plan version 2"},
          {"base", [&](auto &j) { j["buffers"][slice]["base"] = "T99"; }, "the base of a slice"},
          {"axis", [&](auto &j) { j["buffers"][slice]["axis"] = 3; },
           "is not its base's without axis 3"},
          {"fields", [&](auto &j) { j["buffers"][slice].erase("loop"); }, "names its \"base\""},
          {"body past the end", [](auto &j) { j["steps"][0]["body"] = 99; },
           "runs past the last step"},
          {"empty body", [](auto &j) { j["steps"][0]["body"] = 0; }, "a \"body\" of at least one"},
          {"nested", [](auto &j) { j["steps"].insert(j["steps"].begin() + 1, j["steps"][0]); },
           "loops do not nest"},
          {"outside its loop", [](auto &j) { j["steps"][0]["var"] = "j"; },
           "is used outside a loop over"},
          {"slice outside a loop", [](auto &j) { j["steps"].erase(j["steps"].begin()); },
           "is used outside a loop over"},
      });
}

// The ring of docs/plan-format.md, "Rings": peers that do not pair up, and
// swizzled slices without a slot, are refused as the plan is read.
TEST(LoopPlan, LoaderChecksRings) {
  nlohmann::json valid = nlohmann::json::parse(
      planToJsonText(loopPlanOf("adversarial_ring_collective_permute_hostir.txt")));
  size_t ring = 0, slot = 0;
  for (size_t i = 0; i < valid["steps"].size(); ++i)
    if (valid["steps"][i].value("collective", "") == "CollectivePermute")
      ring = i;
  for (size_t i = 0; i < valid["buffers"].size(); ++i)
    if (valid["buffers"][i]["name"] == "T4")
      slot = i;
  ASSERT_GT(ring, 0u);
  expectLoadErrors(
      valid,
      {
          {"send peer", [&](auto &j) { j["steps"][ring]["ring"]["send_shift"] = 1; },
           "the ring's peers do not pair up"},
          {"shift past the team", [&](auto &j) { j["steps"][ring]["ring"]["recv_shift"] = 2; },
           "below its team size 2"},
          {"no ring", [&](auto &j) { j["steps"][ring].erase("ring"); }, "names its \"ring\""},
          {"other loop", [&](auto &j) { j["steps"][ring]["ring"]["loop"] = "j"; },
           "a loop over its ring's variable"},
          {"a root", [&](auto &j) { j["steps"][ring]["teams"][0]["root"] = 0; },
           "one team of \"devices\""},
          {"device outside the swizzle",
           [&](auto &j) {
             j["buffers"][slot]["swizzle_team"] = {1, 2};
           },
           "is not in the swizzle team"},
          {"swizzle past the axis",
           [&](auto &j) {
             j["buffers"][slot]["swizzle_team"] = {0, 1, 2};
           },
           "reach past axis"},
      });
}

TEST(LoopPlan, BindingsThatPutASliceOutsideItsBaseAreRefused) {
  nlohmann::json j = nlohmann::json::parse(planToJsonText(loopPlanOf(kPipeline)));
  j["steps"][0]["hi"] = nlohmann::json{{"op", "add"}, {"lhs", "i0"}, {"rhs", 1}};
  Plan plan = planFromJsonText(j.dump(), "loop.json");
  try {
    runOnSim(plan, {{"i0", 3}, {"i3", 4}, {"i6", 3}});
    FAIL() << "a loop one past its slices ran";
  } catch (const InputError &e) {
    EXPECT_EQ(e.diagnostic().code, "loop-out-of-range");
    EXPECT_NE(e.diagnostic().message.find("iteration StreamIdx = 3"), std::string::npos)
        << e.diagnostic().message;
  }
}

} // namespace
} // namespace shardcheck
