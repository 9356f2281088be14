// Issue 13's limits (docs/limits.md): sizes that overflow int64, transform
// chains past the depth limit, runs past the host memory, a run that compares
// nothing, the whole-run time limit, large meshes, and check-sharding's file
// flags. Each case ends in a located error or a verdict, never a wrapped
// number, an abort or a "match".
//
// This file does not time anything: the mesh cases assert verdicts, and
// bench/ measures how long they take.
#include "checker/CheckDocument.h"
#include "checker/Checker.h"
#include "executor/core/Run.h"
#include "ir/FusionGraph.h"
#include "ir/Limits.h"
#include "ir/reader/DumpReader.h"
#include "tests/TestPaths.h"
#include "tests/ToolRuns.h"
#include "tools/check_sharding/CheckSharding.h"
#include "tools/run_plan/RunPlan.h"
#include "util/Checked.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

using namespace shardcheck;

namespace {

using shardcheck::testing::ToolRun;

ToolRun checkSharding(const std::vector<std::string> &args) {
  return shardcheck::testing::checkShardingTool(args);
}

ToolRun runPlan(const std::vector<std::string> &args) {
  return shardcheck::testing::runPlanTool(args);
}

std::string tempPath(const std::string &name) {
  return shardcheck::testing::tempPath("limits_test", name);
}

std::string tempFile(const std::string &name, const std::string &text) {
  return shardcheck::testing::tempFile("limits_test", name, text);
}

/// A 1-D Allgather over `devices` (listed in this order) of T0[DID{n}, {inner}].
std::string allgatherDump(const std::vector<int64_t> &devices, const std::string &inner = "8") {
  std::string mesh = "DeviceMesh{";
  for (size_t i = 0; i < devices.size(); ++i)
    mesh += (i ? " " : "") + std::to_string(devices[i]);
  mesh += "}";
  std::string n = std::to_string(devices.size());
  std::string t0 = "T0_g_float[ideviceIdx.x0{" + n + "}, iS1{" + inner + "}] (" + mesh + ")";
  std::string t1 = "T1_g_float[iS2{" + n + "}, iS3{" + inner + "}] (" + mesh + ")";
  return "Inputs:\n  " + t0 + "\nOutputs:\n  " + t1 + "\n\n%kernel {\n" + t1 + "\n   = Set( " + t0 +
         ", cache_op=Streaming )\n} // %kernel\n";
}

std::vector<int64_t> iota(int64_t n, int64_t first = 0, int64_t step = 1) {
  std::vector<int64_t> v;
  for (int64_t i = 0; i < n; ++i)
    v.push_back(first + step * i);
  return v;
}

/// T0 whose loop ID is derived through `pairs` split/merge pairs.
std::string deepChainDump(int pairs) {
  std::ostringstream transforms;
  std::string cur = "iS1{8}";
  int next = 2;
  for (int i = 0; i < pairs; ++i) {
    std::string a = "iS" + std::to_string(next) + "{8}",
                b = "iS" + std::to_string(next + 1) + "{1}";
    std::string m = "iS" + std::to_string(next + 2) + "{8}";
    transforms << "    Split: " << cur << " by factor 1 -> " << a << ", " << b << "\n";
    transforms << "    Merge: " << a << " and " << b << " -> " << m << "\n";
    cur = m;
    next += 3;
  }
  std::string t0 = "T0_g_float[" + cur + "] (DeviceMesh{0 1})";
  std::string t1 = "T1_g_float[iS0{8}] (DeviceMesh{0 1})";
  return "Inputs:\n  " + t0 + "\nOutputs:\n  " + t1 + "\n\n%kernel {\n" + t1 + "\n   = Set( " + t0 +
         ", cache_op=Streaming )\n\nTransformPrinter : \n" + t0 +
         "\n logical domain : (iS1{8})\n contiguity: t\n" + transforms.str() + " loop domain : (" +
         cur + ")\n" + t1 +
         "\n logical domain : (iS0{8})\n contiguity: t\n loop domain : (iS0{8})\n} // %kernel\n";
}

} // namespace

TEST(Limits, CheckedArithmeticNeverWraps) {
  EXPECT_EQ(checkedMul(int64_t{1} << 62, 2), std::nullopt);
  EXPECT_EQ(checkedAdd(INT64_MAX, 1), std::nullopt);
  EXPECT_EQ(checkedMul(3, 4), 12);
  try {
    mulOrThrow(int64_t{1} << 62, 4, "the element count of T1");
    FAIL() << "no error";
  } catch (const InputError &e) {
    EXPECT_EQ(e.diagnostic().code, "size-overflow");
    EXPECT_NE(e.diagnostic().message.find("the element count of T1"), std::string::npos);
  }
  EXPECT_EQ(shownToken(std::string(1000, 'x')).size(),
            80u + std::string("... (1000 bytes)").size());
}

TEST(Limits, ExtentEvaluationReportsOverflow) {
  Extent e = Extent::mul(Extent::symbol("i0"), Extent::symbol("i1"));
  EXPECT_EQ(e.evaluate({{"i0", 3}, {"i1", 4}}), 12);
  try {
    e.evaluate({{"i0", int64_t{1} << 40}, {"i1", int64_t{1} << 40}});
    FAIL() << "no error";
  } catch (const InputError &err) {
    EXPECT_EQ(err.diagnostic().code, "size-overflow");
  }
  // A constant fold that would overflow stays unfolded instead of wrapping.
  Extent big = Extent::mul(Extent::constant(int64_t{1} << 62), Extent::constant(4));
  EXPECT_FALSE(big.isConstant());
}

TEST(Limits, ElementCountPastInt64IsALocatedError) {
  // 2 x 2^62 elements: the plan's per-device count used to wrap to -2^63 and
  // run-plan then said "match" over nothing.
  std::string path = tempFile("overflow.txt", allgatherDump({0, 1}, "4611686018427387904"));
  ToolRun r = checkSharding({"--quiet", "--emit-plan", tempPath("overflow.plan.json"), path});
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("[size-overflow]"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("overflow.txt:2:"), std::string::npos) << r.err;
}

TEST(Limits, DeepTransformChainIsALocatedError) {
  EXPECT_NO_THROW(readDocument(deepChainDump(10), "shallow.txt"));
  try {
    readDocument(deepChainDump(kMaxTransformDepth), "deep.txt");
    FAIL() << "no error";
  } catch (const InputError &e) {
    EXPECT_EQ(e.diagnostic().code, "transform-depth");
    EXPECT_TRUE(e.diagnostic().loc.known());
  }
}

TEST(Limits, RunPastHostMemoryIsRefusedWithTheEstimate) {
  std::string plan = tempPath("symbolic.plan.json");
  ToolRun c = checkSharding(
      {"--quiet", "--emit-plan", plan,
       std::string(SHARDCHECK_SOURCE_DIR) + "/corpus/rule_allgather_1d_loopsplit_symbolic.txt"});
  ASSERT_EQ(c.status, 0) << c.err;
  ToolRun small = runPlan({"--quiet", "--bind", "i0=8", "--bind", "i1=8", plan});
  EXPECT_EQ(small.status, 0) << small.err;
  for (const char *v : {"2147483648", "1099511627776", "4611686018427387904"}) {
    ToolRun r = runPlan({"--quiet", "--bind", std::string("i0=") + v, "--bind", "i1=2", plan});
    EXPECT_EQ(r.status, 2) << v << ": " << r.err;
    EXPECT_NE(r.err.find("[memory-limit]"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("of host memory"), std::string::npos) << r.err;
  }
}

TEST(Limits, ARunThatComparedNothingNeverMatches) {
  RunReport r;
  r.steps.push_back(StepReport{});
  TensorCheck t;
  t.comparison.compared = 0;
  r.tensors.push_back(t);
  EXPECT_FALSE(r.matches());
  EXPECT_EQ(r.outcome(), "nothing-compared");
  r.tensors[0].comparison.compared = 4;
  EXPECT_TRUE(r.matches());
  EXPECT_EQ(r.outcome(), "match");
  RunReport empty; // A plan without steps: nothing ran, nothing to compare.
  EXPECT_EQ(empty.outcome(), "no-steps");
}

TEST(Limits, PastTheTimeLimitNothingIsProved) {
  Document doc = readDocument(allgatherDump({0, 1}), "t.txt");
  DiagnosticEngine diags;
  auto graph = FusionGraph::build(doc.fusions[0], diags);
  ASSERT_TRUE(graph);
  CheckOptions o;
  o.deadline = std::chrono::steady_clock::now() - std::chrono::seconds(1);
  Checker checker(o);
  auto verdicts = checker.checkFusion(doc.fusions[0], *graph);
  ASSERT_FALSE(verdicts.empty());
  for (const auto &v : verdicts) {
    EXPECT_EQ(v.result, EdgeResult::Unknown);
    EXPECT_NE(v.reason.find("--time-limit"), std::string::npos) << v.reason;
    if (v.compiler) {
      EXPECT_EQ(v.compiler->result, CompilerResult::Unknown);
    }
  }
  ToolRun r = checkSharding({"--time-limit", "0", tempFile("t.txt", allgatherDump({0, 1}))});
  EXPECT_EQ(r.status, 2) << "a zero limit is a usage error";
}

TEST(Limits, LargeRegularMeshesAreProvedLikeSmallOnes) {
  // Consecutive, reversed and strided device lists are arithmetic in the
  // encoding: the verdict does not depend on the mesh size.
  for (const auto &devices : {iota(1024), iota(1024, 1023, -1), iota(256, 0, 4)}) {
    std::string path = tempFile("mesh.txt", allgatherDump(devices));
    DocumentReport report = checkDocument(readDocumentFile(path), DocumentOptions{});
    ASSERT_EQ(report.fusions.size(), 1u);
    const FusionReport &fusion = report.fusions[0];
    EXPECT_EQ(shardcheck::testing::checkShardingExitStatus(report), 0);
    ASSERT_EQ(fusion.verdicts.size(), 1u);
    EXPECT_EQ(fusion.verdicts[0].lowering.kind, CommKind::Allgather);
    EXPECT_EQ(fusion.verdicts[0].result, EdgeResult::Proved) << fusion.verdicts[0].reason;
  }
  // A permuted small mesh still goes through the per-device tables.
  ToolRun p = checkSharding({"--quiet", tempFile("perm.txt", allgatherDump({2, 0, 3, 1}))});
  EXPECT_EQ(p.status, 0) << p.err;
}

TEST(Limits, FileFlagsFailCleanly) {
  std::string input = tempFile("in.txt", allgatherDump({0, 1}));
  ToolRun onto = checkSharding({"--quiet", "--emit-plan", input, input});
  EXPECT_EQ(onto.status, 2);
  EXPECT_NE(onto.err.find("is the input file"), std::string::npos) << onto.err;
  std::ifstream back(input);
  std::string first;
  std::getline(back, first);
  EXPECT_EQ(first, "Inputs:") << "the input was overwritten";
  ToolRun dump = checkSharding({"--quiet", "--smt-dump", "/proc/shardcheck/none", input});
  EXPECT_EQ(dump.status, 2);
  EXPECT_NE(dump.err.find("cannot create the directory"), std::string::npos) << dump.err;
}
