// The public API (api/shardcheck/Check.h, GTest.h): checkText gives the
// DocumentReport, the text and the exit status check-sharding gives the
// same input; an unreadable text is a report, not an exception;
// EXPECT_SHARDING_VERIFIED passes on a proved fusion and fails on the
// seed's refuted Allgather printing its counterexample. The installed
// package is tested apart (ctest ExampleConsumer).
//
// This file does not test verdicts (golden_test.cpp does).
#include "tests/TestPaths.h"
#include "tests/ToolRuns.h"

#include <shardcheck/Check.h>
#include <shardcheck/GTest.h>

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

using namespace shardcheck;

namespace {

std::string corpusText(const std::string &name) {
  std::ifstream in(std::string(SHARDCHECK_SOURCE_DIR) + "/corpus/" + name, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(PublicApi, CheckTextIsWhatCheckShardingSaysOfTheFile) {
  for (const char *name :
       {"seed_repro1_after_resharding.txt", "hostir_allgather_then_linear_2025.txt",
        "real_pr3307_segment_groups_truncated.txt", "lint_duplicate_did.txt"}) {
    std::string path = std::string(SHARDCHECK_SOURCE_DIR) + "/corpus/" + name;
    TextCheckOptions options;
    options.name = path;
    TextReport r = checkText(corpusText(name), options);
    auto tool = shardcheck::testing::checkShardingTool({path});
    EXPECT_EQ(r.status, tool.status) << name;
    EXPECT_EQ(r.status, shardcheck::testing::checkShardingExitStatus(r.report)) << name;
    EXPECT_EQ(tool.out.rfind(r.text, 0), 0u) << name << "\n" << r.text << "\nvs\n" << tool.out;
    EXPECT_FALSE(r.inputError);
  }
}

TEST(PublicApi, UnreadableTextIsAReport) {
  TextCheckOptions options;
  options.name = "printed.txt";
  TextReport r = checkText("%kernel {\nT1_g_float[iS0{4}\n} // %kernel\n", options);
  ASSERT_TRUE(r.inputError);
  EXPECT_EQ(r.status, 2);
  EXPECT_FALSE(r.verified());
  EXPECT_EQ(r.inputError->loc.file, "printed.txt");
  EXPECT_NE(r.text.find("printed.txt:"), std::string::npos) << r.text;
}

const std::string kSeed = corpusText("seed_repro1_after_resharding.txt");
const std::string kProved = corpusText("hostir_allgather_then_linear_2025.txt");

TEST(PublicApi, ExpectShardingVerifiedPassesOnAProvedFusion) {
  EXPECT_SHARDING_VERIFIED(kProved);
  ASSERT_SHARDING_VERIFIED(kProved);
}

TEST(PublicApi, ExpectShardingVerifiedFailsWithTheCounterexample) {
  EXPECT_NONFATAL_FAILURE(EXPECT_SHARDING_VERIFIED(kSeed),
                          "note: counterexample: Allgather over team (0 1) needs an output of 2 "
                          "x 1 elements but T3 holds 1 on each device");
  EXPECT_NONFATAL_FAILURE(EXPECT_SHARDING_VERIFIED(kSeed), "T1 -> T3 (Set): alias proved");
  EXPECT_FATAL_FAILURE(ASSERT_SHARDING_VERIFIED(kSeed), "check-sharding exit status 1");
}

} // namespace
