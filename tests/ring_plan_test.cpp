// Plans of nvFuser's CollectivePermute ring (docs/plan-format.md, "Rings"):
// the proved ring of the corpus planned with swizzled slices and a ring
// step, run on simulated devices to a match with the reference (the ring's
// base and the linear's output, both written slot by slot, compared); the
// wrong-peer and short-loop rings never planned; peers that pair up but
// deliver the wrong shards caught by the comparison (the loader's ring
// checks are tests/loop_plan_test.cpp's LoaderChecksRings).
//
// It does not check rings (tests/ring_test.cpp) or run them under mpirun
// (tests/mpi_plans.sh); random rings go through the loop oracle
// (fusion_oracle_test.cpp).
#include "checker/PlanBuilder.h"
#include "executor/sim/SimBackend.h"
#include "tests/CorpusPlans.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <set>

namespace shardcheck {
namespace {

const char *kRing = "adversarial_ring_collective_permute_hostir.txt";

RunReport runOnSim(const Plan &plan, bool indexed = false) {
  SimBackend sim;
  RunOptions options;
  options.indexedCompute = indexed;
  return runPlan(plan, options, sim);
}

size_t stepOf(const nlohmann::json &plan, const std::string &collective) {
  for (size_t i = 0; i < plan["steps"].size(); ++i)
    if (plan["steps"][i].value("collective", "") == collective)
      return i;
  ADD_FAILURE() << "no " << collective << " step";
  return 0;
}

TEST(RingPlan, ProvedRingIsALoopWithARingStepAndSwizzledSlices) {
  for (auto lowerings : {PlanRequest::Lowerings::Checker, PlanRequest::Lowerings::Compiler}) {
    Plan plan = testing::corpusPlan(kRing, lowerings);
    EXPECT_TRUE(plan.verified());
    ASSERT_EQ(plan.steps.at(0).kind, StepKind::Loop);
    const PlanStep *ring = nullptr;
    for (const PlanStep &s : plan.steps)
      if (s.collective == CollectiveType::CollectivePermute)
        ring = &s;
    ASSERT_TRUE(ring);
    ASSERT_TRUE(ring->ring);
    EXPECT_EQ(ring->ring->loopVar, "i100");
    EXPECT_EQ(ring->ring->recvShift, 0);
    EXPECT_EQ(ring->ring->sendShift, 0);
    for (const char *slot : {"T4", "T5"}) { // the ring's slot, the linear's
      const PlanBuffer *b = plan.buffer(slot);
      ASSERT_TRUE(b);
      EXPECT_EQ(b->kind, BufferKind::Slice) << slot;
      EXPECT_EQ(b->swizzleTeam, (std::vector<int64_t>{0, 1})) << slot;
    }
    std::string text = planToJsonText(plan);
    EXPECT_EQ(planToJsonText(planFromJsonText(text, "ring.json")), text);
  }
}

TEST(RingPlan, ProvedRingMatchesTheReference) {
  Plan plan = planFromJsonText(planToJsonText(testing::corpusPlan(kRing)), "ring.json");
  for (bool indexed : {false, true}) {
    RunReport r = runOnSim(plan, indexed);
    EXPECT_EQ(r.outcome(), "match") << describeRun(r);
    std::set<std::string> compared;
    for (const TensorCheck &t : r.tensors)
      if (t.comparison.compared > 0)
        compared.insert(t.comparison.name);
    EXPECT_TRUE(compared.count("T2")) << "the linear's output, written through swizzled slots";
    EXPECT_TRUE(compared.count("T3")) << "the ring's base, every slot on every device";
  }
}

TEST(RingPlan, WrongPeerAndShortLoopAreNeverPlanned) {
  for (const char *file : {"adversarial_ring_collective_permute_wrong_peer_hostir.txt",
                           "adversarial_ring_collective_permute_short_loop_hostir.txt"})
    for (auto lowerings : {PlanRequest::Lowerings::Checker, PlanRequest::Lowerings::Compiler}) {
      SCOPED_TRACE(file);
      try {
        testing::corpusPlan(file, lowerings);
        ADD_FAILURE() << "a refuted ring was planned";
      } catch (const PlanError &e) {
        EXPECT_NE(std::string(e.what()).find("is planned only on a proved ring"), std::string::npos)
            << e.what();
      }
    }
}

TEST(RingPlan, PeersThatPairUpButDeliverWrongShardsMismatch) {
  // Both shifted by one: every send meets its receive, but each device
  // receives its neighbour's shard into its slot.
  nlohmann::json j = nlohmann::json::parse(planToJsonText(testing::corpusPlan(kRing)));
  size_t ring = stepOf(j, "CollectivePermute");
  j["steps"][ring]["ring"]["recv_shift"] = 1;
  j["steps"][ring]["ring"]["send_shift"] = 1;
  RunReport r = runOnSim(planFromJsonText(j.dump(), "ring.json"));
  EXPECT_EQ(r.outcome(), "wrong-values") << describeRun(r);
}

} // namespace
} // namespace shardcheck
