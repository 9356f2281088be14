// Tests of the model of DTensor's own redistribute plan (dtensor/DTensorPlan.h)
// against the 39 recordings of PyTorch 2.11 in corpus/dtensor/rec_*.json:
// the model, on the process group each recording was made on (CPU, or CUDA
// for the `_cuda` ones, recordedBackend),
// reproduces every recorded sequence (steps, collective kinds, reduce ops,
// every rank's group and buffer shapes) exactly, or the recording is named
// below with why the model says "unknown". Also: the CUDA variant's
// all_to_all, the model's "unknown" cases, the bytes report check-sharding
// prints, and the cost model's factors.
//
// This file does not run DTensor (tests/dtensor_record_test.py runs the
// recorder where PyTorch is installed).
#include "checker/CostModel.h"
#include "dtensor/DTensorPlan.h"
#include "dtensor/DTensorReader.h"
#include "ir/reader/DumpReader.h"
#include "tests/TestPaths.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>

using namespace shardcheck;
using namespace shardcheck::dtensor;

namespace {

/// Recordings the model does not reproduce, and why (it must say unknown
/// for them). None today: even rec_2d_strided_to_rr, a non-default shard
/// order that DTensor plans with its graph-based search, has the one plan
/// the model knows there (one sharded dim gathered to all-Replicate).
const std::map<std::string, std::string> kUnknownRecordings = {};

DTensorCase readCase(const std::string &path) {
  return readDTensorCase(readInputFile(path), path);
}

std::string minimal(const std::string &mesh, const std::string &shape, const std::string &src,
                    const std::string &dst) {
  return "{\"format\": \"shardcheck-dtensor/1\", \"mesh\": {\"shape\": " + mesh +
         ", \"devices\": " + (mesh == "[4]" ? "[0, 1, 2, 3]" : "[0, 1, 2, 3, 4, 5, 6, 7]") +
         "}, \"tensor\": {\"shape\": " + shape + "}, \"source\": {\"placements\": " + src +
         "}, \"target\": {\"placements\": " + dst + "}}";
}

} // namespace

TEST(DTensorPlan, ReproducesEveryRecordingOfPyTorch211) {
  int files = 0, reproduced = 0;
  for (const auto &entry : std::filesystem::directory_iterator(std::string(SHARDCHECK_SOURCE_DIR) +
                                                               "/corpus/dtensor")) {
    std::string name = entry.path().filename().string();
    if (name.rfind("rec_", 0) != 0)
      continue;
    ++files;
    DTensorCase c = readCase(entry.path().string());
    ASSERT_TRUE(c.issued) << name;
    EXPECT_EQ(recordedBackend(*c.issued),
              name.find("_cuda") != std::string::npos ? DTensorBackend::Cuda : DTensorBackend::Cpu)
        << name;
    ModelledPlan model = modelDTensorPlan(c, recordedBackend(*c.issued));
    auto unknown = kUnknownRecordings.find(name);
    if (unknown != kUnknownRecordings.end()) {
      EXPECT_FALSE(model.plan) << name << " is listed as unknown (" << unknown->second
                               << ") but the model now plans it";
      continue;
    }
    ASSERT_TRUE(model.plan) << name << ": " << model.unknownWhy;
    EXPECT_EQ(firstDifference(*c.issued, *model.plan), "") << name;
    reproduced += firstDifference(*c.issued, *model.plan).empty();
  }
  EXPECT_EQ(files, 39);
  EXPECT_EQ(reproduced + static_cast<int>(kUnknownRecordings.size()), files);
}

TEST(DTensorPlan, CudaIssuesAllToAllWherePaddedAsDTensorPads) {
  // Shard(0) -> Shard(1) of [6, 5] on 4: the old dim padded to its chunk (2),
  // the new dim to 4 chunks of 2 (8); all_to_all keeps the element count.
  DTensorCase c =
      readDTensorCase(minimal("[4]", "[6, 5]", "[\"Shard(0)\"]", "[\"Shard(1)\"]"), "case.json");
  ModelledPlan model = modelDTensorPlan(c, DTensorBackend::Cuda);
  ASSERT_TRUE(model.plan) << model.unknownWhy;
  ASSERT_EQ(model.plan->collectives.size(), 1u);
  const IssuedCollective &a2a = model.plan->collectives[0];
  EXPECT_EQ(a2a.kind, "all_to_all");
  EXPECT_EQ(a2a.ranks[3].inputShape, (std::vector<int64_t>{2, 8}));
  EXPECT_EQ(a2a.ranks[3].outputShape, (std::vector<int64_t>{8, 2}));
  // (n-1)/n of 16 floats.
  EXPECT_DOUBLE_EQ(mostBytesPerRank(*model.plan, 4), 48.0);
}

TEST(DTensorPlan, SaysUnknownRatherThanGuess) {
  // Shard -> Partial: DTensor raises.
  DTensorCase raises = readDTensorCase(
      minimal("[4]", "[8, 4]", "[\"Shard(0)\"]", "[\"Partial(sum)\"]"), "case.json");
  ModelledPlan a = modelDTensorPlan(raises, DTensorBackend::Cuda);
  EXPECT_FALSE(a.plan);
  EXPECT_NE(a.unknownWhy.find("DTensor raises"), std::string::npos) << a.unknownWhy;
  // A non-default order to a target that still shards: the graph-based
  // search, whose choice the model does not reproduce.
  DTensorCase graph = readDTensorCase(
      minimal("[4, 2]", "[8, 4]", "[\"_StridedShard(0, split_factor=2)\", \"Shard(0)\"]",
              "[\"Shard(1)\", \"Replicate()\"]"),
      "case.json");
  ModelledPlan b = modelDTensorPlan(graph, DTensorBackend::Cuda);
  EXPECT_FALSE(b.plan);
  EXPECT_NE(b.unknownWhy.find("graph-based"), std::string::npos) << b.unknownWhy;
}

TEST(DTensorPlan, SamePlacementsAreNoRedistribute) {
  DTensorCase c =
      readDTensorCase(minimal("[4]", "[8, 4]", "[\"Shard(0)\"]", "[\"Shard(0)\"]"), "case.json");
  ModelledPlan model = modelDTensorPlan(c, DTensorBackend::Cuda);
  ASSERT_TRUE(model.plan);
  EXPECT_TRUE(model.plan->steps.empty());
}

TEST(DTensorPlan, ReportSaysWhereTheBytesComeFrom) {
  DTensorCase unrecorded = readDTensorCase(
      minimal("[4]", "[8, 4]", "[\"Partial(sum)\"]", "[\"Replicate()\"]"), "case.json");
  // Allreduce of 32 floats over 4 ranks: 2 * 3/4 * 128 bytes.
  EXPECT_NE(
      dtensorBytesReport(unrecorded)
          .find("DTensor's sequence: 1 collective, 192 bytes per rank (most), from the model"),
      std::string::npos)
      << dtensorBytesReport(unrecorded);
  DTensorCase recorded =
      readCase(std::string(SHARDCHECK_SOURCE_DIR) + "/corpus/dtensor/rec_1d_p_to_r.json");
  std::string report = dtensorBytesReport(recorded);
  EXPECT_NE(report.find("192 bytes per rank (most), from the recording"), std::string::npos)
      << report;
  EXPECT_NE(report.find("agrees with the recording"), std::string::npos) << report;
}

TEST(CostModel, NcclTestsFactorsOnTheLargerBuffer) {
  // 8 ranks, 10 elements of 4 bytes in (checker/CostModel.h, the one cost
  // model DTensor's sequences and shardcheck's plans are priced by).
  EXPECT_DOUBLE_EQ(collectiveBytes(CollectiveType::Allgather, 8, 40, 320), 280.0);
  EXPECT_DOUBLE_EQ(collectiveBytes(CollectiveType::ReduceScatter, 8, 320, 40), 280.0);
  EXPECT_DOUBLE_EQ(collectiveBytes(CollectiveType::AllToAll, 8, 320, 320), 280.0);
  EXPECT_DOUBLE_EQ(collectiveBytes(CollectiveType::Allreduce, 8, 320, 320), 560.0);
  EXPECT_DOUBLE_EQ(collectiveBytes(CollectiveType::Broadcast, 8, 320, 320), 320.0);
  EXPECT_DOUBLE_EQ(collectiveBytes(CollectiveType::Allgather, 1, 40, 40), 0.0);
  // The planner's lowerings are priced by the same factors.
  EXPECT_DOUBLE_EQ(collectiveCost(CommKind::Allgather, 8, 320).networkBytes, 280.0);
  EXPECT_DOUBLE_EQ(busFactor(CommKind::Allreduce, 8), busFactor(CollectiveType::Allreduce, 8));
}
