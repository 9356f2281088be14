// A compiler's C++ test that checks the fusion it just printed: what a
// project gets from an installed shardcheck (find_package(shardcheck),
// shardcheck/GTest.h). The fusions are the seed bug's repro 1 as nvFuser
// printed it, where the Allgather nvFuser lowers the inserted Set to is
// refuted, and the alias the checker proves for a DID on a broadcast ID.
//
// This file does not test shardcheck itself (its own suite does); it shows
// how a consumer uses it.
#include <shardcheck/Check.h>
#include <shardcheck/GTest.h>

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

namespace {

// nvFuser issue #3488, repro 1 after InsertReshardingsPass: the Set between
// bdeviceIdx.x1{1} and bS3{1} moves no data, but nvFuser lowers it to an
// Allgather that fails at run time.
const char *const kSeedAfterResharding = R"(
%kernel_math {
T3_g_float[ bS3{1} ] (DeviceMesh{0 1})
   = Set( T1_g_float[ bdeviceIdx.x1{1} ] (DeviceMesh{0 1}), cache_op=Streaming )
T2_g_float[ iS2{2} ] (DeviceMesh{0 1})
   = T0_g_float[ iS0{2} ] (DeviceMesh{0 1})
   + T3_g_float[ bS3{1} ] (DeviceMesh{0 1});
} // %kernel_math
)";

// A DID on a broadcast ID holds no data of its own: the checker proves the
// consumer may reuse the producer's buffer (alias), and nothing is lowered.
const char *const kBroadcastOnDid = R"(
%kernel_math {
T1_g_float[ bdeviceIdx.x1{1}, iS2{2} ] (DeviceMesh{0 1})
   = broadcast( T0_g_float[ iS0{2} ] (DeviceMesh{0 1}), flags = {true, false} )
} // %kernel_math
)";

TEST(SeedFusion, NvfusersAllgatherFailsTheAssertionWithItsCounterexample) {
  EXPECT_NONFATAL_FAILURE(EXPECT_SHARDING_VERIFIED(kSeedAfterResharding),
                          "counterexample: Allgather over team (0 1) needs an output of 2 x 1 "
                          "elements but T3 holds 1 on each device");
}

TEST(SeedFusion, TheCheckersAliasIsVerified) {
  EXPECT_SHARDING_VERIFIED(kBroadcastOnDid);
}

TEST(SeedFusion, TheReportNamesEachVerdict) {
  shardcheck::TextReport r = shardcheck::checkText(kSeedAfterResharding);
  ASSERT_FALSE(r.inputError);
  EXPECT_EQ(r.status, 1);
  const auto &verdicts = r.report.fusions.at(0).verdicts;
  ASSERT_EQ(verdicts.size(), 3u);
  EXPECT_EQ(verdicts[0].result, shardcheck::EdgeResult::Proved); // T1 -> T3 alias
  ASSERT_TRUE(verdicts[0].compiler);
  EXPECT_EQ(verdicts[0].compiler->result,
            shardcheck::CompilerResult::Refuted); // nvFuser's Allgather
}

} // namespace
