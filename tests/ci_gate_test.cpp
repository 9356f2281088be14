// check-sharding as a CI gate (issue 19): --format sarif validated against
// the SARIF 2.1.0 schema (tests/ci/sarif-2.1.0-subset.schema.json) and
// --format junit parsed by a standard XML parser (tests/ci/
// validate_ci_outputs.py, run with python3), baselines round-tripped on the
// corpus, --emit-ir read back, inputs expanded (directories, -, @LIST) and
// -j N giving the serial run's output. run-plan's --format junit parsed the
// same way: a matching run, wrong values, a failed step, a refused plan and
// an unreadable one, each failing (or erring) the testcase it should.
//
// This file does not test verdicts (golden_test.cpp does); it tests what the
// tool makes of them.
#include "checker/CheckDocument.h"
#include "ir/reader/DumpReader.h"
#include "tests/TestPaths.h"
#include "tests/ToolRuns.h"
#include "tools/check_sharding/CheckSharding.h"
#include "tools/check_sharding/Junit.h"
#include "tools/check_sharding/Progress.h"
#include "tools/check_sharding/Sarif.h"
#include "tools/check_sharding/Summary.h"
#include "tools/common/Xml.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

using namespace shardcheck;
using shardcheck::testing::ToolRun;

namespace {

namespace fs = std::filesystem;

ToolRun run(const std::vector<std::string> &args) {
  return shardcheck::testing::checkShardingTool(args);
}

std::string source(const std::string &path) {
  return std::string(SHARDCHECK_SOURCE_DIR) + "/" + path;
}
std::string corpus(const std::string &name) {
  return source("corpus/" + name);
}

std::string scratch(const std::string &name) {
  return shardcheck::testing::tempPath("ci_gate_test", name);
}

std::string readText(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

/// Runs tests/ci/validate_ci_outputs.py with `args`; its exit status.
int validate(const std::string &args) {
  std::string command = "python3 " + source("tests/ci/validate_ci_outputs.py") + " " + args;
  return WEXITSTATUS(std::system(command.c_str()));
}

/// Files covering every kind of finding: a refuted compiler choice, an
/// error lint, an unsupported resharding, an unnecessary communication.
const std::vector<std::string> kMixedFiles = {
    "hostir_wrong_team_order.txt", "seed_kernel_dump.txt",
    "lint_duplicate_did.txt",      "hostir_unnecessary_scatter.txt",
    "uneven_sharding_extent7.txt", "seed_repro1_hostir_allgather.txt"};

std::vector<std::string> mixedArgs(std::vector<std::string> args) {
  for (const auto &f : kMixedFiles)
    args.push_back(corpus(f));
  return args;
}

/// A copy of the corpus in a scratch directory, for mutating.
/// The corpus, less the documents the reader rejects (`EXPECT-ERROR`, the
/// golden test pins them): an unreadable input exits 2 whatever the baseline.
std::string copyCorpus(const std::string &name) {
  std::string dir = scratch(name);
  fs::remove_all(dir);
  fs::copy(source("corpus"), dir, fs::copy_options::recursive);
  std::vector<fs::path> rejected;
  for (const auto &e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file() &&
        readText(e.path().string()).find("EXPECT-ERROR:") != std::string::npos)
      rejected.push_back(e.path());
  for (const auto &path : rejected)
    fs::remove(path);
  return dir;
}

void replaceInFile(const std::string &path, const std::string &from, const std::string &to) {
  std::string text = readText(path);
  size_t at = text.find(from);
  ASSERT_NE(at, std::string::npos) << from << " not in " << path;
  text.replace(at, from.size(), to);
  std::ofstream(path, std::ios::binary) << text;
}

TEST(CiGate, SarifValidatesAgainstTheSchema) {
  ToolRun r = run(mixedArgs({"--format", "sarif"}));
  ToolRun text = run(mixedArgs({}));
  EXPECT_EQ(r.status, text.status);
  std::string path = scratch("mixed.sarif");
  std::ofstream(path) << r.out;
  EXPECT_EQ(validate("sarif " + source("tests/ci/sarif-2.1.0-subset.schema.json") + " " + path), 0)
      << r.out;
  auto log = nlohmann::json::parse(r.out);
  const auto &sarifRun = log["runs"][0];
  EXPECT_EQ(sarifRun["invocations"][0]["exitCode"], r.status);
  EXPECT_EQ(sarifRun["artifacts"].size(), kMixedFiles.size());
  EXPECT_EQ(sarifRun["artifacts"][0]["location"]["uri"], corpus(kMixedFiles[0]));
  std::set<std::string> rules, used;
  for (const auto &rule : sarifRun["tool"]["driver"]["rules"])
    rules.insert(rule["id"].get<std::string>());
  bool counterexample = false;
  for (const auto &result : sarifRun["results"]) {
    used.insert(result["ruleId"].get<std::string>());
    EXPECT_EQ(sarifRun["tool"]["driver"]["rules"][result["ruleIndex"].get<size_t>()]["id"],
              result["ruleId"]);
    EXPECT_GT(result["locations"][0]["physicalLocation"]["region"]["startLine"], 0) << result;
    counterexample |=
        result["ruleId"] == "compiler-refuted" &&
        result["message"]["text"].get<std::string>().find("counterexample: ") != std::string::npos;
  }
  EXPECT_EQ(rules, used);
  for (const char *rule : {"compiler-refuted", "duplicate-did", "unnecessary-communication"})
    EXPECT_TRUE(used.count(rule)) << rule;
  EXPECT_TRUE(counterexample);
}

TEST(CiGate, SarifOfUnreadableInputIsValidAndLocated) {
  std::string bad = shardcheck::testing::tempFile("ci_gate_test", "bad dump&.txt",
                                                  "%kernel {\nT1_g_float[iS0{4}\n} // %kernel\n");
  ToolRun r = run({"--format", "sarif", bad});
  EXPECT_EQ(r.status, 2);
  std::string path = scratch("bad.sarif");
  std::ofstream(path) << r.out;
  EXPECT_EQ(validate("sarif " + source("tests/ci/sarif-2.1.0-subset.schema.json") + " " + path), 0)
      << r.out;
  auto log = nlohmann::json::parse(r.out);
  EXPECT_EQ(log["runs"][0]["invocations"][0]["executionSuccessful"], false);
  EXPECT_EQ(log["runs"][0]["artifacts"][0]["location"]["uri"], checksharding::pathToUri(bad));
  EXPECT_NE(checksharding::pathToUri(bad).find("bad%20dump%26.txt"), std::string::npos);
}

TEST(CiGate, JunitParsesWithAnXmlParser) {
  std::string bad = shardcheck::testing::tempFile("ci_gate_test", "bad<&>'\".txt",
                                                  "%kernel {\nT1_g_float[iS0{4}\n} // %kernel\n");
  ToolRun r = run(mixedArgs({"--format", "junit", bad}));
  EXPECT_EQ(r.status, 2);
  std::string path = scratch("mixed.xml");
  std::ofstream(path) << r.out;
  EXPECT_EQ(validate("junit " + path), 0) << r.out;
  // One suite per file, one case per fusion; the refuted team order fails.
  EXPECT_NE(r.out.find("<testsuite name=\"" + corpus("hostir_wrong_team_order.txt") +
                       "\" tests=\"1\" failures=\"1\" errors=\"0\" skipped=\"0\">"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("<failure type=\"compiler-refuted\""), std::string::npos);
  EXPECT_NE(r.out.find("name=\"read\">\n      <error type=\"parse\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("bad&lt;&amp;&gt;&apos;&quot;.txt"), std::string::npos);
}

TEST(CiGate, XmlEscapeKeepsOnlyWhatXmlCarries) {
  EXPECT_EQ(xmlEscape("a<b>&\"c'\n"), "a&lt;b&gt;&amp;&quot;c&apos;&#10;");
  EXPECT_EQ(xmlEscape("T\xC3\xA9"), "T\xC3\xA9");                   // UTF-8 kept
  EXPECT_EQ(xmlEscape(std::string("x\x01y", 3)), "x\xEF\xBF\xBDy"); // control character
  EXPECT_EQ(xmlEscape("\xFF"), "\xEF\xBF\xBD");                     // not UTF-8
  EXPECT_EQ(xmlEscape("\xEF\xBF\xBF"), "\xEF\xBF\xBD");             // U+FFFF
}

TEST(CiGateCorpus, BaselineRoundTripOnTheCorpus) {
  std::string dir = copyCorpus("baseline_corpus");
  std::string baseline = scratch("corpus.baseline.json");
  ToolRun first = run({"-j", "2", "--write-baseline", baseline, dir});
  EXPECT_EQ(first.status, 1); // the corpus has findings
  ToolRun again = run({"-j", "2", "--baseline", baseline, dir});
  EXPECT_EQ(again.status, 0) << again.out;
  EXPECT_NE(again.out.find(" 0 new, 0 gone"), std::string::npos) << again.out;

  // Moved lines and another path keep the fingerprints; a compiler change
  // that reverses an Allgather's team is new, and the confirmed choice of
  // the edge is not a finding to lose.
  std::string moved = dir + "/seed_kernel_dump.txt";
  std::ofstream(moved, std::ios::app) << "\n";
  std::string text = readText(moved);
  std::ofstream(moved, std::ios::binary) << "log line\nanother log line\n" << text;
  fs::rename(moved, dir + "/renamed_seed_kernel_dump.log");
  replaceInFile(dir + "/hostir_allgather_then_linear_2025.txt", "team=(0 1)", "team=(1 0)");
  ToolRun mutated = run({"--baseline", baseline, dir});
  EXPECT_EQ(mutated.status, 1) << mutated.out;
  EXPECT_NE(mutated.out.find(" 1 new, 0 gone"), std::string::npos) << mutated.out;
  EXPECT_NE(mutated.out.find("  new: " + dir +
                             "/hostir_allgather_then_linear_2025.txt:12:3: "
                             "[compiler-refuted] T0 -> T2"),
            std::string::npos)
      << mutated.out;

  // JUnit fails only the new finding's testcase.
  ToolRun junit = run({"--format", "junit", "--baseline", baseline, dir});
  EXPECT_EQ(junit.status, 1);
  EXPECT_NE(junit.out.find("<testsuites name=\"check-sharding\" tests=\""), std::string::npos);
  EXPECT_NE(junit.out.find("failures=\"1\" errors=\"0\" skipped=\"0\">\n  <testsuite"),
            std::string::npos)
      << junit.out.substr(0, 300);

  // Fixing a baselined finding reports it gone; the JSON says the same.
  replaceInFile(dir + "/hostir_wrong_team_order.txt", "team=(0 1 3 2)", "team=(0 1 2 3)");
  ToolRun fixed = run({"--format", "json", "--baseline", baseline, dir});
  auto doc = nlohmann::json::parse(fixed.out);
  EXPECT_EQ(doc["exit_status"], 1);
  ASSERT_EQ(doc["baseline"]["gone"].size(), 1u) << doc["baseline"];
  EXPECT_EQ(doc["baseline"]["gone"][0]["rule"], "compiler-refuted");
  EXPECT_EQ(doc["baseline"]["gone"][0]["edge"], "T0 -> T1");
  ASSERT_EQ(doc["baseline"]["new"].size(), 1u);
  EXPECT_EQ(doc["baseline"]["new"][0]["edge"], "T0 -> T2");
}

TEST(CiGateCorpus, EmptyBaselineGivesTheUsualExitStatus) {
  // Each finding's own status (Findings.h) agrees with the summary's exit
  // status: against a baseline that records nothing, every file exits as
  // without one.
  std::string empty = shardcheck::testing::tempFile(
      "ci_gate_test", "empty.baseline.json", "{\"check_sharding_baseline\": 1, \"findings\": []}");
  // The corpus exits 0 or 1; an output nothing computes is unknown (3), a
  // malformed dump unreadable (2).
  std::vector<std::string> files = {
      shardcheck::testing::tempFile("ci_gate_test", "unknown.txt",
                                    "Inputs:\n  T0_g_float[iS0{4}] (DeviceMesh{0 1})\nOutputs:\n"
                                    "  T2_g_float[iS2{4}] (DeviceMesh{0 1})\n\n%kernel {\n"
                                    "T1_g_float[iS1{4}] (DeviceMesh{0 1})\n"
                                    "   = Set( T0_g_float[iS0{4}] (DeviceMesh{0 1}), "
                                    "cache_op=Streaming )\n} // %kernel\n"),
      shardcheck::testing::tempFile("ci_gate_test", "unreadable.txt",
                                    "%kernel {\nT1_g_float[iS0{4}\n} // %kernel\n")};
  for (const auto &entry : fs::directory_iterator(source("corpus")))
    if (entry.path().extension() == ".txt")
      files.push_back(entry.path().string());
  std::set<int> seen;
  for (const auto &file : files) {
    int usual = run({file}).status;
    EXPECT_EQ(run({"--baseline", empty, file}).status, usual) << file;
    seen.insert(usual);
  }
  EXPECT_EQ(seen, (std::set<int>{0, 1, 2, 3}));
}

TEST(CiGate, BaselineThatIsNotOneIsBadInput) {
  std::string notBaseline = shardcheck::testing::tempFile("ci_gate_test", "nb.json", "{\"x\": 1}");
  ToolRun r = run({"--baseline", notBaseline, corpus("rule_allgather_1d_logical.txt")});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("not a check-sharding baseline"), std::string::npos) << r.err;
  EXPECT_EQ(
      run({"--baseline", scratch("missing.json"), corpus("rule_allgather_1d_logical.txt")}).status,
      2);
}

TEST(CiGate, EmitIrReadsBackToTheSameVerdicts) {
  std::string ir = scratch("emitted_ir.json");
  std::string input = corpus("mesh2x4_tp_dp_linear_allreduce.txt");
  ToolRun fromDump = run({"--format", "json", "--emit-ir", ir, input});
  ToolRun fromIr = run({"--format", "json", ir});
  EXPECT_EQ(fromDump.status, fromIr.status);
  auto a = nlohmann::json::parse(fromDump.out)["files"][0]["edges"];
  auto b = nlohmann::json::parse(fromIr.out)["files"][0]["edges"];
  ASSERT_EQ(a.size(), b.size());
  ASSERT_FALSE(a.empty());
  for (size_t i = 0; i < a.size(); ++i)
    for (const char *key : {"producer", "consumer", "status", "communication", "lowering"})
      EXPECT_EQ(a[i][key], b[i][key]) << i << " " << key;
  EXPECT_EQ(run({"--emit-ir", ir, input, input}).status, 2);
  EXPECT_EQ(run({"--emit-ir", input, input}).status, 2); // would overwrite its input
}

TEST(CiGate, InputsExpandDirectoriesListsAndStdin) {
  std::string dir = scratch("inputs");
  fs::remove_all(dir);
  fs::create_directories(dir + "/sub");
  fs::copy_file(corpus("rule_allgather_1d_logical.txt"), dir + "/sub/b.log");
  fs::copy_file(corpus("seed_kernel_dump.txt"), dir + "/a.txt");
  std::ofstream(dir + "/notes.md") << "not an input\n";
  ToolRun fromDir = run({"--format", "json", dir});
  auto files = nlohmann::json::parse(fromDir.out)["files"];
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(files[0]["file"], dir + "/a.txt");
  EXPECT_EQ(files[1]["file"], dir + "/sub/b.log");

  std::string list = shardcheck::testing::tempFile(
      "ci_gate_test", "list.txt", "# inputs\n" + dir + "/sub\n\n" + dir + "/a.txt\n");
  ToolRun fromList = run({"--format", "json", "@" + list});
  files = nlohmann::json::parse(fromList.out)["files"];
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(files[0]["file"], dir + "/sub/b.log");

  std::istringstream in(readText(corpus("seed_kernel_dump.txt")));
  std::ostringstream out, err;
  int status = runCheckSharding({"-"}, in, out, err);
  EXPECT_EQ(status, 1);
  EXPECT_NE(out.str().find("<stdin>:"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("T1 -> T4 (Set): alias proved"), std::string::npos);

  EXPECT_EQ(run({"-", "-"}).status, 2);
  EXPECT_EQ(run({"@" + scratch("no_such_list")}).status, 2);
  fs::create_directories(dir + "/empty");
  ToolRun empty = run({dir + "/empty"});
  EXPECT_EQ(empty.status, 2);
  EXPECT_NE(empty.err.find("no .txt, .log or .json file"), std::string::npos) << empty.err;
}

TEST(CiGateCorpus, ParallelJobsGiveTheSerialOutput) {
  std::string dir = source("corpus");
  ToolRun serial = run({"-j", "1", dir});
  ToolRun parallel = run({"-j", "3", dir});
  EXPECT_EQ(serial.status, parallel.status);
  EXPECT_EQ(serial.out, parallel.out);
  EXPECT_EQ(serial.err, parallel.err);
  ToolRun serialJson = run({"-j", "1", "--format", "json", dir});
  ToolRun parallelJson = run({"-j", "3", "--format", "json", dir});
  EXPECT_EQ(serialJson.out, parallelJson.out);
  EXPECT_EQ(run({"-j", "0", dir}).status, 2);
  // A file's output is what checking it alone gives, whatever came before.
  std::string seg = corpus("style_segmented_fusion.txt");
  std::string alone = run({seg}).out;
  std::string inRun = serial.out.substr(serial.out.find(seg + ":"));
  EXPECT_EQ(inRun.substr(0, alone.find("\nsummary: ")), alone.substr(0, alone.find("\nsummary: ")));
}

TEST(CiGate, ProgressLineOnlyForLongRunsOnATerminal) {
  EXPECT_EQ(checksharding::progressText(40, 200, 3.2),
            "check-sharding: 40/200 files, 12.5 files/s, about 13 s left");
  EXPECT_EQ(checksharding::progressText(0, 200, 0), "check-sharding: 0/200 files");
  // A short run draws nothing, even on a terminal; its output is unchanged.
  std::istringstream in;
  std::ostringstream out, err, plainOut, plainErr;
  std::vector<std::string> args = mixedArgs({});
  int status = runCheckSharding(args, in, out, err, /*errIsTerminal=*/true);
  EXPECT_EQ(status, runCheckSharding(args, in, plainOut, plainErr));
  EXPECT_EQ(out.str(), plainOut.str());
  EXPECT_EQ(err.str(), plainErr.str());
}

TEST(CiGate, SummariesAddUpAsCountedTogether) {
  // -j adds every file's summary; it must count what counting the reports
  // one after another counts (every field, the assumptions too).
  checksharding::Summary together, added;
  for (const auto &name : kMixedFiles) {
    DocumentReport report = checkDocument(readDocumentFile(corpus(name)), DocumentOptions{});
    together.addDocument(report);
    checksharding::Summary one;
    one.addDocument(report);
    added.add(one);
  }
  CheckStats stats;
  EXPECT_EQ(checksharding::summaryJson(together, stats, NvfuserRuntime{}),
            checksharding::summaryJson(added, stats, NvfuserRuntime{}));
  EXPECT_GT(together.compilerRefuted, 0u);
}

// ------------------------------------------------------------ run-plan

/// run-plan --format junit with `args`: its exit status must be `status`;
/// the XML must parse and count right (tests/ci/validate_ci_outputs.py).
std::string runPlanJunit(const std::string &name, std::vector<std::string> args, int status) {
  args.insert(args.begin(), {"--format", "junit"});
  ToolRun r = shardcheck::testing::runPlanTool(args);
  EXPECT_EQ(r.status, status) << r.out << r.err;
  EXPECT_EQ(
      r.out.rfind("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"run-plan\"", 0),
      0u)
      << r.out;
  std::string path = scratch("run-plan-" + name + ".xml");
  std::ofstream(path) << r.out;
  EXPECT_EQ(validate("junit " + path), 0) << r.out;
  return r.out;
}

std::string plan(const std::string &file, const std::string &lowerings) {
  std::string path = shardcheck::testing::emittedPlan("ci_gate_test", file, lowerings);
  EXPECT_FALSE(path.empty()) << file;
  return path;
}

/// `<testsuite name="PLAN" COUNTS>` then `<testcase classname="PLAN" name="NAME"`.
std::string suiteHead(const std::string &plan, const std::string &counts) {
  return "<testsuite name=\"" + plan + "\" " + counts + ">\n    <testcase classname=\"" + plan +
         "\" name=\"run\"";
}

TEST(CiGateRunPlan, JunitHasARunCaseAndOnePerTensor) {
  std::string good = plan("rule_allgather_1d_logical.txt", "checker");
  std::string xml = runPlanJunit("match", {good}, 0);
  EXPECT_NE(xml.find(suiteHead(good, "tests=\"3\" failures=\"0\" errors=\"0\" skipped=\"0\"")),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find("name=\"tensor T1 (intermediate)\">"), std::string::npos) << xml;
  EXPECT_NE(xml.find("<testcase classname=\"" + good +
                     "\" name=\"tensor T2 (output)\">\n    "
                     "</testcase>"),
            std::string::npos)
      << xml;
  EXPECT_EQ(xml.find("<failure"), std::string::npos);
}

TEST(CiGateRunPlan, WrongValuesFailTheTensorNamingDeviceAndIndex) {
  std::string wrong = plan("hostir_wrong_team_order.txt", "compiler");
  std::string xml = runPlanJunit("wrong", {"--allow-unverified", "--bind-auto", wrong}, 1);
  EXPECT_NE(xml.find(suiteHead(wrong, "tests=\"2\" failures=\"1\" errors=\"0\" skipped=\"0\"")),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find("name=\"tensor T1 (output)\">\n      <failure type=\"mismatch\" message=\"T1: "
                     "64 of 128 slot(s) differ from the reference; first mismatch: device 0 slot "
                     "16 holds -0.356 for T1[2, 0], expected -0.416\""),
            std::string::npos)
      << xml;
}

TEST(CiGateRunPlan, AFailedStepARefusedPlanAndAnUnreadableOneFailTheRun) {
  std::string nv = plan("seed_repro1_after_resharding.txt", "compiler");
  std::string failed = runPlanJunit("failed", {"--allow-unverified", nv}, 1);
  EXPECT_NE(failed.find(suiteHead(nv, "tests=\"1\" failures=\"1\" errors=\"0\" skipped=\"0\"")),
            std::string::npos)
      << failed;
  EXPECT_NE(failed.find("<failure type=\"count-error\" message=\"step 0 (Allgather T1 -&gt; T3 "
                        "over (0 1)) on devices 0 1 failed: Allgather over team (0 1): all "
                        "buffers must have the same number of elements: output T3 on device 0 "
                        "has 1"),
            std::string::npos)
      << failed;
  std::string refused = runPlanJunit("refused", {nv}, 3);
  EXPECT_NE(refused.find("<failure type=\"refused\" message=\"" + nv +
                         ": error: plan refused: step 0 rests on a refuted verdict"),
            std::string::npos)
      << refused;
  std::string dump = corpus("seed_kernel_dump.txt");
  std::string unreadable = runPlanJunit("unreadable", {dump}, 2);
  EXPECT_NE(
      unreadable.find(suiteHead(dump, "tests=\"1\" failures=\"0\" errors=\"1\" skipped=\"0\"")),
      std::string::npos)
      << unreadable;
  EXPECT_NE(unreadable.find("<error type=\"unreadable\" message=\"" + dump), std::string::npos)
      << unreadable;
}

} // namespace
