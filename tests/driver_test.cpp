// check-sharding's command-line contract (DESIGN section 6): flags, exit
// statuses, located errors for bad input, the JSON document's shape.
#include "checker/CheckDocument.h"
#include "ir/reader/DumpReader.h"
#include "tests/TestPaths.h"
#include "tests/ToolRuns.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

using namespace shardcheck;

namespace {

using shardcheck::testing::ToolRun;

ToolRun run(const std::vector<std::string> &args) {
  return shardcheck::testing::checkShardingTool(args);
}

std::string corpus(const std::string &name) {
  return std::string(SHARDCHECK_SOURCE_DIR) + "/corpus/" + name;
}

std::string tempFile(const std::string &name, const std::string &text) {
  return shardcheck::testing::tempFile("driver_test", name, text);
}

TEST(Driver, BadUsageExitsTwo) {
  EXPECT_EQ(run({}).status, 2);
  EXPECT_EQ(run({"--format", "xml", "x"}).status, 2);
  EXPECT_EQ(run({"--timeout-ms", "abc", "x"}).status, 2);
  EXPECT_EQ(run({"--timeout-ms"}).status, 2);
  EXPECT_EQ(run({"--devices", "0", "x"}).status, 2);
  ToolRun r = run({"--frobnicate", "x"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("unknown option '--frobnicate'"), std::string::npos) << r.err;
}

TEST(Driver, HelpAndVersionExitZero) {
  ToolRun h = run({"--help"});
  EXPECT_EQ(h.status, 0);
  EXPECT_NE(h.out.find("usage: check-sharding"), std::string::npos);
  EXPECT_EQ(run({"--version"}).status, 0);
}

TEST(Driver, MissingFileIsLocatedErrorExitTwo) {
  ToolRun r = run({"/nonexistent/dump.txt"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("/nonexistent/dump.txt"), std::string::npos) << r.err << r.out;
}

TEST(Driver, MalformedDumpIsLocatedErrorExitTwo) {
  std::string path =
      tempFile("bad.txt", "%kernel {\nT1_g_float[iS0{4}\n   = Set( T0_g_float[iS1{4}], "
                          "cache_op=Streaming )\n} // %kernel\n");
  ToolRun r = run({path});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find(path + ":2:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("error:"), std::string::npos) << r.err;
}

TEST(Driver, FileWithoutBlockIsAnError) {
  std::string path = tempFile("noblock.txt", "just a log line\nand another\n");
  EXPECT_EQ(run({path}).status, 2);
}

TEST(Driver, SeedKernelDumpReportsDuplicateDidAndAlias) {
  ToolRun r = run({corpus("seed_kernel_dump.txt")});
  EXPECT_EQ(r.status, 1); // the duplicate-DID lint is an error
  EXPECT_NE(r.out.find("[duplicate-did]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("T1 -> T4 (Set): alias proved"), std::string::npos) << r.out;
}

TEST(Driver, JsonDocumentHasTheDesignedShape) {
  ToolRun r = run({"--format", "json", corpus("rule_allgather_1d_logical.txt")});
  auto doc = nlohmann::json::parse(r.out);
  ASSERT_TRUE(doc.contains("files"));
  ASSERT_TRUE(doc.contains("summary"));
  const auto &file = doc["files"][0];
  for (const char *key : {"file", "diagnostics", "edges"})
    EXPECT_TRUE(file.contains(key)) << key;
  ASSERT_FALSE(file["edges"].empty());
  for (const char *key :
       {"producer", "consumer", "expr", "communication", "status", "counterexample", "compiler"})
    EXPECT_TRUE(file["edges"][0].contains(key)) << key;
  EXPECT_EQ(doc["exit_status"], r.status);
}

TEST(Driver, JsonEdgesAreTheReportsVerdicts) {
  // The JSON document renders checkDocument's report: the same edges in the
  // same order, with the same results (golden_test.cpp asserts on reports).
  for (const char *name : {"seed_repro1_hostir_allgather.txt", "uneven_sharding_extent7.txt",
                           "mesh2x4_tp_dp_linear_allreduce.txt"}) {
    SCOPED_TRACE(name);
    ToolRun r = run({"--format", "json", corpus(name)});
    auto edges = nlohmann::json::parse(r.out)["files"][0]["edges"];
    DocumentReport report = checkDocument(readDocumentFile(corpus(name)), DocumentOptions{});
    EXPECT_EQ(r.status, shardcheck::testing::checkShardingExitStatus(report));
    size_t i = 0;
    for (const FusionReport &f : report.fusions)
      for (const EdgeVerdict &v : f.verdicts) {
        ASSERT_LT(i, edges.size());
        const auto &e = edges[i++];
        EXPECT_EQ(e["fusion"], f.index);
        EXPECT_EQ(e["producer"], "T" + std::to_string(v.producer));
        EXPECT_EQ(e["consumer"], "T" + std::to_string(v.consumer));
        EdgeResult result = v.result;
        bool unsupported = result == EdgeResult::Unsupported || result == EdgeResult::Unmodelled;
        EXPECT_EQ(e["communication"] == "unsupported", unsupported);
        EXPECT_EQ(e["status"] == "proved", result == EdgeResult::Proved);
        EXPECT_EQ(e["compiler"].is_null(), !v.compiler);
        if (v.compiler) {
          EXPECT_EQ(e["compiler"]["status"] == "refuted",
                    v.compiler->result == CompilerResult::Refuted);
        }
      }
    EXPECT_EQ(i, edges.size());
  }
}

TEST(Driver, AllProvedExitsZero) {
  ToolRun r = run({corpus("rule_none_local_edges.txt")});
  EXPECT_EQ(r.status, 0) << r.out;
}

TEST(Driver, SmtDumpWritesNamedQueries) {
  auto dir = std::filesystem::temp_directory_path() / "shardcheck_smt_dump";
  std::filesystem::remove_all(dir);
  ToolRun r =
      run({"--smt-dump", dir.string(), "--no-cache", corpus("rule_allgather_1d_logical.txt")});
  EXPECT_NE(r.status, 2);
  bool sawLocal = false;
  for (const auto &e : std::filesystem::directory_iterator(dir))
    sawLocal = sawLocal || e.path().filename().string().find("edge-local") != std::string::npos;
  EXPECT_TRUE(sawLocal);
}

TEST(Driver, VerdictsAreDeterministic) {
  ToolRun a = run({"--format", "json", corpus("mesh2x4_tp_dp_linear_allreduce.txt")});
  ToolRun b = run({"--format", "json", corpus("mesh2x4_tp_dp_linear_allreduce.txt")});
  EXPECT_EQ(a.out, b.out);
}

} // namespace
