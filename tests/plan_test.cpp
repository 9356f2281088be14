// Plans end to end: building from checked fusions, the JSON round trip, the
// loader's consistency checks, run-plan's exit statuses and report, the
// seed's fusions (the checker's plan runs with no communication; nvFuser's
// refuted Allgather and Scatter fail with an element-count error), and
// mutated plans (every mutant is either run or rejected with a located
// error, never a crash), and the loader's input limits (number range,
// nesting, UTF-8, duplicate keys, bounded messages, linear time).
//
// The corpus-wide runs (every provable fusion, several device counts) are in
// plan_corpus_test.cpp.
#include "checker/Checker.h"
#include "checker/PlanBuilder.h"
#include "executor/sim/SimBackend.h"
#include "ir/reader/DumpReader.h"
#include "plan/PlanVerifier.h"
#include "tests/CorpusPlans.h"
#include "tests/TestPaths.h"
#include "tests/ToolRuns.h"
#include "tools/check_sharding/CheckSharding.h"
#include "tools/run_plan/RunPlan.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>

namespace shardcheck {
namespace {

std::string corpusPath(const std::string &name) {
  return std::string(SHARDCHECK_SOURCE_DIR) + "/corpus/" + name;
}

std::string readText(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

using testing::corpusPlan;

RunReport runSim(const Plan &plan, bool allowUnverified = false, Bindings symbols = {}) {
  SimBackend sim;
  RunOptions options;
  options.allowUnverified = allowUnverified;
  options.symbols = std::move(symbols);
  return runPlan(plan, options, sim);
}

std::filesystem::path tempDir() {
  auto dir = std::filesystem::temp_directory_path() /
             ("shardcheck_plan_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return dir;
}

std::string writeTemp(const std::string &name, const std::string &text) {
  auto path = tempDir() / name;
  std::ofstream(path, std::ios::binary) << text;
  return path.string();
}

// ------------------------------------------------------------ the seed

TEST(PlanSeed, CheckerPlansAliasAndMatch) {
  for (const char *file : {"seed_repro1_after_resharding.txt", "seed_repro2_after_resharding.txt",
                           "seed_repro1_hostir_allgather.txt", "seed_repro2_hostir_scatter.txt"}) {
    SCOPED_TRACE(file);
    Plan plan = corpusPlan(file);
    ASSERT_TRUE(plan.verified());
    RunReport r = runSim(plan);
    EXPECT_TRUE(r.matches()) << r.outcome();
    int64_t moved = 0;
    for (const StepReport &s : r.steps) {
      EXPECT_NE(s.kind, "collective") << s.description;
      moved += s.bytesMoved;
    }
    EXPECT_EQ(moved, 0);
  }
}

TEST(PlanSeed, AliasReusesTheProducersBuffer) {
  Plan plan = corpusPlan("seed_repro1_after_resharding.txt");
  ASSERT_EQ(plan.steps.at(0).kind, StepKind::Alias);
  EXPECT_EQ(plan.steps[0].inputs, std::vector<std::string>{"T1"});
  EXPECT_EQ(plan.steps[0].output, "T3");
  EXPECT_EQ(plan.steps[0].restsOn.at(0).claim, "alias");
  EXPECT_EQ(plan.steps[0].restsOn.at(0).status, PlanStatus::Proved);
}

TEST(PlanSeed, NvFusersAllgatherIsRefusedThenFailsWithACountError) {
  Plan plan = corpusPlan("seed_repro1_after_resharding.txt", PlanRequest::Lowerings::Compiler);
  EXPECT_FALSE(plan.verified());
  EXPECT_THROW(runSim(plan), PlanRefused);
  RunReport r = runSim(plan, /*allowUnverified=*/true);
  ASSERT_TRUE(r.failure.has_value());
  EXPECT_EQ(r.failure->kind, "count-error");
  EXPECT_EQ(r.failure->step, 0u);
  EXPECT_NE(r.failure->message.find("Allgather over team (0 1)"), std::string::npos);
  EXPECT_NE(r.failure->message.find("all buffers must have the same number of elements"),
            std::string::npos)
      << r.failure->message;
  EXPECT_EQ(r.outcome(), "count-error");
  EXPECT_EQ(r.steps.at(1).status, "not run");
}

TEST(PlanSeed, NvFusersScatterFailsWithACountError) {
  for (const char *file : {"seed_repro2_after_resharding.txt", "seed_repro2_hostir_scatter.txt"}) {
    SCOPED_TRACE(file);
    Plan plan = corpusPlan(file, PlanRequest::Lowerings::Compiler);
    RunReport r = runSim(plan, true);
    ASSERT_TRUE(r.failure.has_value());
    EXPECT_EQ(r.failure->kind, "count-error");
    EXPECT_NE(r.failure->message.find("Scatter"), std::string::npos) << r.failure->message;
  }
}

// ------------------------------------------------------------ plan content

TEST(PlanBuild, RecordsVersionHashAndVerdicts) {
  Plan plan = corpusPlan("rule_allgather_1d_logical.txt");
  EXPECT_EQ(plan.checkerVersion, "0.1.0");
  EXPECT_EQ(plan.inputSha256.size(), 64u);
  EXPECT_EQ(plan.lowerings, "checker");
  bool sawAllgather = false;
  for (const PlanStep &s : plan.steps) {
    ASSERT_FALSE(s.restsOn.empty());
    for (const PlanVerdict &v : s.restsOn) {
      EXPECT_EQ(v.inputSha256, plan.inputSha256);
      EXPECT_EQ(v.checkerVersion, "0.1.0");
    }
    if (s.kind == StepKind::Collective) {
      sawAllgather = true;
      EXPECT_EQ(s.collective, CollectiveType::Allgather);
      EXPECT_FALSE(s.counts.empty());
    }
  }
  EXPECT_TRUE(sawAllgather);
}

TEST(PlanBuild, ReductionIsPartialCollectiveAndEpilogue) {
  Plan plan = corpusPlan("op_linear_megatron_mlp.txt");
  std::vector<std::string> kinds;
  for (const PlanStep &s : plan.steps)
    kinds.push_back(s.kind == StepKind::Compute      ? computeModeName(s.mode)
                    : s.kind == StepKind::Collective ? collectiveTypeName(*s.collective)
                                                     : "other");
  // linear, cast, relu, cast, then the row-parallel linear: partial + Allreduce.
  std::vector<std::string> expected = {"whole", "whole", "whole", "whole", "partial", "Allreduce"};
  EXPECT_EQ(kinds, expected);
  EXPECT_EQ(plan.steps[5].reduceOp, ReduceOp::Sum);
  EXPECT_TRUE(runSim(plan).matches());
}

TEST(PlanBuild, UnsupportedEdgeIsAPlanError) {
  EXPECT_THROW(corpusPlan("lint_mesh_duplicate_device.txt"), PlanError);
  EXPECT_THROW(corpusPlan("mesh2d_issue6001_two_did_changes.txt"), PlanError);
}

TEST(PlanBuild, PaddedAllgatherOfAnUnevenSplitRuns) {
  // 7 rows on 2 devices: padded buffers of 4 x 3 slots (device 1 holds 3
  // rows), gathered into 2 x 4 x 3, then unpadded into T2's 7 x 3.
  Plan plan = corpusPlan("uneven_sharding_extent7.txt");
  std::vector<std::string> kinds;
  for (const PlanStep &s : plan.steps)
    kinds.push_back(s.kind == StepKind::Collective ? collectiveTypeName(*s.collective)
                                                   : stepKindName(s.kind));
  EXPECT_EQ(kinds, (std::vector<std::string>{"compute", "Allgather", "copy"}));
  const PlanBuffer *gathered = plan.buffer("T2.gathered");
  ASSERT_NE(gathered, nullptr);
  EXPECT_EQ(gathered->local[1].shape,
            (std::vector<Extent>{Extent::constant(2), Extent::constant(4), Extent::constant(3)}));
  // Exact counts: 12 and 9 elements in the padded 4 x 3 buffers, 21 in the
  // gathered 24 slots.
  const PlanBuffer *t1 = plan.buffer("T1");
  ASSERT_NE(t1, nullptr);
  EXPECT_EQ(t1->local[0].held, std::optional<int64_t>(12));
  EXPECT_EQ(t1->local[1].held, std::optional<int64_t>(9));
  EXPECT_EQ(gathered->local[0].held, std::optional<int64_t>(21));
  EXPECT_EQ(plan.buffer("T2")->local[0].held, std::nullopt);
  EXPECT_TRUE(runSim(plan).matches());
  // A held count the executor's layout disagrees with is refused.
  Plan wrong = planFromJsonText(planToJsonText(plan), "wrong.json");
  const_cast<PlanBuffer *>(wrong.buffer("T1"))->local[1].held = 12;
  try {
    runSim(wrong);
    ADD_FAILURE() << "a wrong held count ran";
  } catch (const InputError &e) {
    EXPECT_NE(e.diagnostic().message.find("the plan says it holds 12 element(s), the layout of "
                                          "its tensor gives 9"),
              std::string::npos)
        << e.diagnostic().message;
  }
}

// ------------------------------------------------------------ JSON

TEST(PlanJson, RoundTripIsExact) {
  for (const char *file :
       {"rule_alltoall_binary_op_needs_permute.txt",
        "op_linear_sequence_parallel_reducescatter.txt", "rule_allgather_1d_loopsplit_symbolic.txt",
        "mesh2d_stage_handoffs.txt"}) {
    SCOPED_TRACE(file);
    std::string text = planToJsonText(corpusPlan(file));
    Plan back = planFromJsonText(text, "x.json");
    EXPECT_EQ(planToJsonText(back), text);
  }
}

TEST(PlanVerify, BuiltPlansAreConsistentAndABrokenOneIsNamedByPointer) {
  for (const char *file :
       {"rule_alltoall_binary_op_needs_permute.txt", "op_linear_megatron_mlp.txt",
        "op_linear_sequence_parallel_reducescatter.txt", "mesh2d_stage_handoffs.txt"}) {
    SCOPED_TRACE(file);
    EXPECT_NO_THROW(verifyPlan(corpusPlan(file)));
  }
  Plan broken = corpusPlan("rule_allgather_1d_logical.txt");
  broken.steps.back().inputs = {"nowhere"};
  try {
    verifyPlan(broken);
    ADD_FAILURE() << "a step reading an undefined buffer verified";
  } catch (const InputError &e) {
    EXPECT_NE(e.diagnostic().message.find("no buffer is called \"nowhere\""), std::string::npos)
        << e.diagnostic().message;
    EXPECT_NE(e.diagnostic().message.find("/steps/" + std::to_string(broken.steps.size() - 1)),
              std::string::npos)
        << e.diagnostic().message;
  }
}

/// A valid plan's JSON, to break in the tests below.
nlohmann::json validPlanJson() {
  return nlohmann::json::parse(planToJsonText(corpusPlan("rule_allgather_1d_logical.txt")));
}

std::string loadError(const std::string &text) {
  try {
    planFromJsonText(text, "bad.json");
  } catch (const InputError &e) {
    std::ostringstream os;
    printDiagnostic(os, e.diagnostic());
    return os.str();
  }
  return "";
}

TEST(PlanJson, MalformedJsonIsLocated) {
  std::string text = planToJsonText(corpusPlan("rule_allgather_1d_logical.txt"));
  std::string error = loadError(text.substr(0, text.size() / 2));
  EXPECT_NE(error.find("bad.json:"), std::string::npos) << error;
  EXPECT_NE(error.find("malformed plan JSON"), std::string::npos) << error;
}

TEST(PlanJson, InconsistenciesAreLocatedErrors) {
  struct Case {
    std::string what;
    std::function<void(nlohmann::json &)> breakIt;
    std::string expect;
  };
  std::vector<Case> cases = {
      {"format", [](auto &j) { j["format"] = "other"; }, "not a shardcheck plan"},
      {"version", [](auto &j) { j["version"] = 99; }, "unsupported plan version 99"},
      {"unknown field", [](auto &j) { j["extra"] = 1; }, "unknown field \"extra\""},
      {"undefined buffer", [](auto &j) { j["steps"][0]["inputs"][0] = "T99x"; },
       "no buffer is called \"T99x\""},
      {"count", [](auto &j) { j["steps"][0]["counts"][0]["out"] = 7; },
       "is not the size of buffer"},
      {"team device", [](auto &j) { j["steps"][0]["teams"][0]["devices"][0] = 42; },
       "team device 42 is not a device of the plan"},
      {"step device", [](auto &j) { j["steps"][0]["devices"][0] = 42; },
       "device 42 is not a device of the plan"},
      {"status", [](auto &j) { j["steps"][0]["rests_on"][0]["status"] = "maybe"; },
       "\"maybe\" is not one of"},
      {"missing steps", [](auto &j) { j.erase("steps"); }, "missing field \"steps\""},
      {"tensor name", [](auto &j) { j["buffers"][0]["tensor"] = "X1"; }, "expected a tensor name"},
      {"no such tensor", [](auto &j) { j["buffers"][0]["tensor"] = "T77"; }, "has no tensor T77"},
      {"duplicate buffer", [](auto &j) { j["buffers"].push_back(j["buffers"][0]); },
       "two buffers are called"},
      {"read before write",
       [](auto &j) {
         auto steps = j["steps"];
         std::reverse(steps.begin(), steps.end());
         j["steps"] = steps;
       },
       "is read before any step writes it"},
      {"no output written", [](auto &j) { j["steps"] = nlohmann::json::array(); },
       "no step writes the fusion output"},
      {"embedded fusion", [](auto &j) { j["fusion"]["fusions"] = nlohmann::json::array(); },
       "a plan embeds exactly one fusion"},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.what);
    nlohmann::json j = validPlanJson();
    c.breakIt(j);
    std::string error = loadError(j.dump(1));
    EXPECT_NE(error.find(c.expect), std::string::npos) << error;
    EXPECT_NE(error.find("bad.json:"), std::string::npos) << error;
  }
}

/// The error loading `text` as a plan (a failure if there is none).
Diagnostic loadDiagnostic(const std::string &text) {
  try {
    planFromJsonText(text, "bad.json");
  } catch (const InputError &e) {
    EXPECT_EQ(e.diagnostic().loc.file, "bad.json");
    return e.diagnostic();
  }
  ADD_FAILURE() << "the plan loaded";
  return {};
}

/// A valid plan's text with its first local shape's first extent spelled
/// `extent` (raw JSON text), and where that is.
struct EditedPlan {
  std::string text;
  int line = 0, column = 0;
};
EditedPlan withFirstLocalExtent(const std::string &extent) {
  nlohmann::json j = validPlanJson();
  j["buffers"][0]["local"][0]["shape"][0] = "@EXTENT@";
  std::string text = j.dump(1);
  size_t at = text.find("\"@EXTENT@\"");
  text.replace(at, 10, extent);
  size_t lineStart = text.rfind('\n', at) + 1;
  return {text, 1 + static_cast<int>(std::count(text.begin(), text.begin() + at, '\n')),
          static_cast<int>(at - lineStart) + 1};
}

TEST(PlanJson, NumbersBeyondDoubleRangeAreLocatedNotAborts) {
  EditedPlan plan = withFirstLocalExtent("4e313");
  Diagnostic d = loadDiagnostic(plan.text);
  EXPECT_EQ(d.code, "plan-malformed");
  EXPECT_NE(d.message.find("number 4e313 is beyond the range of a double"), std::string::npos)
      << d.message;
  EXPECT_EQ(d.loc.line, plan.line);
  EXPECT_EQ(d.loc.column, plan.column);
}

TEST(PlanJson, IntegersOutsideInt64AreLocatedErrors) {
  // 2^64 - 1 once read as -1, and 2^63 as INT64_MIN: never a silent wrap.
  for (const char *number : {"18446744073709551615", "9223372036854775808", "1e20", "2.5", "-3"}) {
    SCOPED_TRACE(number);
    EditedPlan plan = withFirstLocalExtent(number);
    Diagnostic d = loadDiagnostic(plan.text);
    EXPECT_EQ(d.code, "plan-invalid");
    EXPECT_NE(d.message.find("expected an extent"), std::string::npos) << d.message;
    EXPECT_EQ(d.loc.line, plan.line);
    EXPECT_EQ(d.loc.column, plan.column);
  }
  nlohmann::json j = validPlanJson();
  j["input"]["fusion"] = 18446744073709551615ull;
  Diagnostic d = loadDiagnostic(j.dump());
  EXPECT_EQ(d.code, "plan-invalid");
  EXPECT_NE(d.message.find("expected an integer (at /input/fusion)"), std::string::npos)
      << d.message;
}

TEST(PlanJson, DuplicateKeysAreLocatedErrors) {
  std::string text = planToJsonText(corpusPlan("rule_allgather_1d_logical.txt"));
  std::string key = R"("lowerings": "checker",)";
  size_t at = text.find(key);
  ASSERT_NE(at, std::string::npos);
  text.insert(at + key.size(), " " + key);
  Diagnostic d = loadDiagnostic(text);
  EXPECT_EQ(d.code, "plan-invalid");
  EXPECT_NE(d.message.find("duplicate key (at /lowerings)"), std::string::npos) << d.message;
  EXPECT_EQ(d.loc.line, 1 + static_cast<int>(std::count(text.begin(), text.begin() + at, '\n')));
  EXPECT_EQ(d.loc.column, static_cast<int>(at + key.size() + 1 - text.rfind('\n', at)));
}

TEST(PlanJson, EachDeviceOfACollectiveStepHasExactlyOneCount) {
  nlohmann::json base = validPlanJson();
  ASSERT_EQ(base["steps"][0]["kind"], "collective");
  ASSERT_GE(base["steps"][0]["counts"].size(), 2u);
  int64_t device = base["steps"][0]["counts"][0]["device"];
  std::string d = std::to_string(device);
  std::string appended = std::to_string(base["steps"][0]["counts"].size());
  struct Case {
    std::string what;
    std::function<void(nlohmann::json &)> breakIt;
    std::string expect;
  };
  std::vector<Case> cases = {
      {"missing", [](auto &c) { c.erase(c.begin()); },
       "device " + d + " of the step has no counts entry (at /steps/0/counts)"},
      {"duplicated", [](auto &c) { c.push_back(c[0]); },
       "device " + d + " has two counts entries (at /steps/0/counts/" + appended + ")"},
      {"not a step device", [](auto &c) { c[0]["device"] = 42; },
       "device 42 is not a device of the step (at /steps/0/counts/0)"},
      {"missing input count", [](auto &c) { c[0].erase("in"); },
       "the input count of device " + d + " is missing"},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.what);
    nlohmann::json j = base;
    c.breakIt(j["steps"][0]["counts"]);
    Diagnostic diag = loadDiagnostic(j.dump(1));
    EXPECT_EQ(diag.code, "plan-invalid");
    EXPECT_NE(diag.message.find(c.expect), std::string::npos) << diag.message;
    EXPECT_TRUE(diag.loc.known());
  }
}

TEST(PlanJson, NestingUtf8AndHugeTokensAreLocatedErrors) {
  std::string text = planToJsonText(corpusPlan("rule_allgather_1d_logical.txt"));
  std::string deep = text;
  deep.insert(1, R"("x": )" + std::string(300, '[') + std::string(300, ']') + ",");
  Diagnostic d = loadDiagnostic(deep);
  EXPECT_EQ(d.code, "plan-malformed");
  EXPECT_NE(d.message.find("nested more than 200 levels"), std::string::npos) << d.message;
  EXPECT_EQ(d.loc.line, 1);
  EXPECT_EQ(d.loc.column, 7 + 199); // `{"x": ` then 199 brackets within the limit
  std::string bad = text;
  size_t at = bad.find("\"lowerings\": \"") + 14;
  bad.insert(at, "\xFF");
  d = loadDiagnostic(bad);
  EXPECT_EQ(d.code, "plan-malformed");
  EXPECT_NE(d.message.find("byte 0xFF is not valid UTF-8"), std::string::npos) << d.message;
  EXPECT_EQ(d.loc.column, static_cast<int>(at - bad.rfind('\n', at)));
  nlohmann::json j = validPlanJson();
  j["buffers"][0]["tensor"] = "T" + std::string(1 << 20, 'x');
  d = loadDiagnostic(j.dump());
  EXPECT_LT(d.message.size(), 600u) << d.message.substr(0, 300);
  EXPECT_NE(d.message.find("(1048577 bytes)"), std::string::npos) << d.message.substr(0, 300);
}

TEST(PlanJson, ShapesWithMoreAxesThanTheLimitAreRefusedNotOverflowTheStack) {
  // The element count of 200,000 symbolic axes was a product tree 200,000
  // levels deep, and printing or freeing it overflowed the stack.
  nlohmann::json j = validPlanJson();
  j["buffers"][0]["local"][0]["shape"] = std::vector<std::string>(200000, "i0");
  Diagnostic d = loadDiagnostic(j.dump());
  EXPECT_EQ(d.code, "plan-invalid");
  EXPECT_NE(d.message.find("a shape has at most 200 axes, this one 200000 (at "
                           "/buffers/0/local/0/shape)"),
            std::string::npos)
      << d.message;
  j["buffers"][0]["local"][0]["shape"] = std::vector<std::string>(200, "i0");
  EXPECT_NE(loadDiagnostic(j.dump()).message.find("is not the size of buffer"), std::string::npos);
}

TEST(PlanJson, LargePlansLoadInLinearTime) {
  // 300,000 plan devices: a duplicate check by linear search took minutes.
  nlohmann::json j = validPlanJson();
  for (int64_t d = 1000; d < 301000; ++d)
    j["devices"].push_back(d);
  std::string text = j.dump();
  auto begin = std::chrono::steady_clock::now();
  Plan plan = planFromJsonText(text, "large.json");
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  EXPECT_EQ(plan.devices.size(), j["devices"].size());
  EXPECT_LT(seconds, 5.0);
}

TEST(PlanRun, LocalShapeThatContradictsTheLayoutIsAnInputError) {
  nlohmann::json j = validPlanJson();
  for (auto &b : j["buffers"])
    if (b["name"] == "T2") // Written by a compute step, so no count mentions it.
      b["local"][0]["shape"] = nlohmann::json::array({5});
  Plan plan = planFromJsonText(j.dump(), "bad.json");
  try {
    runSim(plan);
    FAIL() << "expected an InputError";
  } catch (const InputError &e) {
    EXPECT_NE(e.diagnostic().message.find("the plan gives it 5 slot(s)"), std::string::npos)
        << e.diagnostic().message;
  }
}

TEST(PlanRun, SymbolsMustBeBoundAndSatisfyTheConstraints) {
  Plan plan = corpusPlan("rule_allgather_1d_loopsplit_symbolic.txt");
  ASSERT_FALSE(plan.constraints.empty());
  EXPECT_THROW(runSim(plan), InputError); // Unbound.
  std::vector<std::string> symbols = planSymbols(plan);
  ASSERT_EQ(symbols, (std::vector<std::string>{"i0", "i1"}));
  try {
    runSim(plan, false, {{"i0", 7}, {"i1", 3}});
    FAIL() << "expected a constraint violation";
  } catch (const InputError &e) {
    EXPECT_EQ(e.diagnostic().code, "constraint-violated");
    EXPECT_NE(e.diagnostic().message.find("i0 % 2 == 0"), std::string::npos)
        << e.diagnostic().message;
  }
  EXPECT_TRUE(runSim(plan, false, {{"i0", 12}, {"i1", 5}}).matches());
}

// ------------------------------------------------------------ the CLI

using CliResult = shardcheck::testing::ToolRun;

CliResult runCli(const std::vector<std::string> &args) {
  return shardcheck::testing::runPlanTool(args);
}

TEST(RunPlanCli, ExitStatusesAndReport) {
  std::string good =
      writeTemp("good.json", planToJsonText(corpusPlan("rule_allgather_1d_logical.txt")));
  std::string refuted =
      writeTemp("refuted.json", planToJsonText(corpusPlan("seed_repro1_after_resharding.txt",
                                                          PlanRequest::Lowerings::Compiler)));
  std::string report = (tempDir() / "report.json").string();

  CliResult ok = runCli({"--seed", "7", "--report", report, good});
  EXPECT_EQ(ok.status, 0) << ok.out << ok.err;
  EXPECT_NE(ok.out.find("result: match"), std::string::npos) << ok.out;
  EXPECT_NE(ok.out.find("Allgather T0 -> T1 over (0 1)"), std::string::npos) << ok.out;
  nlohmann::json r = nlohmann::json::parse(readText(report));
  EXPECT_EQ(r["outcome"], "match");
  EXPECT_EQ(r["seed"], 7);
  EXPECT_EQ(r["exit_status"], 0);

  CliResult refused = runCli({refuted});
  EXPECT_EQ(refused.status, 3) << refused.err;
  EXPECT_NE(refused.err.find("--allow-unverified"), std::string::npos) << refused.err;

  CliResult failed = runCli({"--allow-unverified", "--report", report, refuted});
  EXPECT_EQ(failed.status, 1);
  EXPECT_NE(failed.err.find("all buffers must have the same number of elements"), std::string::npos)
      << failed.err;
  EXPECT_NE(failed.out.find("FAILED at step 0 (count-error"), std::string::npos) << failed.out;
  EXPECT_EQ(nlohmann::json::parse(readText(report))["outcome"], "count-error");

  EXPECT_EQ(runCli({"--bind", "i0", good}).status, 2);
  EXPECT_EQ(runCli({"--seed", "-1", good}).status, 2);
  EXPECT_EQ(runCli({"--frobnicate", good}).status, 2);
  EXPECT_EQ(runCli({}).status, 2);
  EXPECT_EQ(runCli({good, good}).status, 2);
  EXPECT_EQ(runCli({(tempDir() / "missing.json").string()}).status, 2);
  CliResult malformed = runCli({writeTemp("malformed.json", "{\"format\": ")});
  EXPECT_EQ(malformed.status, 2);
  EXPECT_NE(malformed.err.find("malformed.json:1:"), std::string::npos) << malformed.err;
  EXPECT_EQ(runCli({"--help"}).status, 0);
  // Benchmark options: misuse is a usage error.
  EXPECT_EQ(runCli({"--repeat", "0", good}).status, 2);
  CliResult warmupAlone = runCli({"--warmup", "2", good});
  EXPECT_EQ(warmupAlone.status, 2);
  EXPECT_NE(warmupAlone.err.find("--warmup needs --repeat"), std::string::npos) << warmupAlone.err;
}

TEST(RunPlanCli, RepeatTimesEveryStepAfterTheCheckedRun) {
  std::string good =
      writeTemp("good.json", planToJsonText(corpusPlan("rule_allgather_1d_logical.txt")));
  std::string report = (tempDir() / "timed.json").string();
  CliResult timed = runCli({"--warmup", "1", "--repeat", "3", "--report", report, good});
  EXPECT_EQ(timed.status, 0) << timed.out << timed.err;
  EXPECT_NE(timed.out.find("timing: 3 timed run(s) of each kind after 1 warmup"), std::string::npos)
      << timed.out;
  EXPECT_NE(timed.out.find("result: match"), std::string::npos) << timed.out;
  nlohmann::json r = nlohmann::json::parse(readText(report));
  EXPECT_EQ(r["outcome"], "match");
  EXPECT_EQ(r["checked"], true);
  EXPECT_EQ(r["timing"]["repeats"], 3);
  EXPECT_EQ(r["timing"]["warmup"], 1);
  EXPECT_EQ(r["timing"]["step_median_seconds"].size(), r["steps"].size());
  EXPECT_GT(r["timing"]["median_seconds"].get<double>(), 0.0);
  EXPECT_LE(r["timing"]["min_seconds"].get<double>(), r["timing"]["median_seconds"].get<double>());
}

TEST(RunPlanCli, NoCheckRunsEveryStepAndComparesNothing) {
  std::string good =
      writeTemp("good.json", planToJsonText(corpusPlan("rule_allgather_1d_logical.txt")));
  std::string report = (tempDir() / "unchecked.json").string();
  CliResult unchecked = runCli({"--no-check", "--report", report, good});
  EXPECT_EQ(unchecked.status, 0) << unchecked.out << unchecked.err;
  EXPECT_NE(unchecked.out.find("result: unchecked"), std::string::npos) << unchecked.out;
  nlohmann::json r = nlohmann::json::parse(readText(report));
  EXPECT_EQ(r["outcome"], "unchecked");
  EXPECT_EQ(r["checked"], false);
  EXPECT_TRUE(r["tensors"].empty());
  EXPECT_EQ(r["timing"], nullptr);
  // A failing step still fails without the reference.
  std::string refuted =
      writeTemp("refuted2.json", planToJsonText(corpusPlan("seed_repro1_after_resharding.txt",
                                                           PlanRequest::Lowerings::Compiler)));
  EXPECT_EQ(runCli({"--no-check", "--allow-unverified", refuted}).status, 1);
}

TEST(RunPlanCli, WrongValuesAreExitStatusOne) {
  // Break the plan: the Allgather's team order reversed delivers the chunks
  // in the wrong order. The counts still fit, so every step runs.
  nlohmann::json j =
      nlohmann::json::parse(planToJsonText(corpusPlan("rule_allgather_1d_logical.txt")));
  for (auto &s : j["steps"])
    if (s["kind"] == "collective")
      s["teams"][0]["devices"] = nlohmann::json::array({1, 0});
  CliResult r = runCli({writeTemp("swapped.json", j.dump())});
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("WRONG VALUES"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("first mismatch: device 0"), std::string::npos) << r.out;
}

TEST(CheckShardingCli, EmitPlanWritesALoadablePlan) {
  std::string path = (tempDir() / "emitted.json").string();
  std::ostringstream out, err;
  int status = runCheckSharding(
      {"--quiet", "--emit-plan", path, corpusPath("rule_allgather_1d_logical.txt")}, out, err);
  EXPECT_EQ(status, 0) << out.str() << err.str();
  Plan plan = planFromJsonText(readText(path), path);
  EXPECT_TRUE(plan.verified());
  EXPECT_TRUE(runSim(plan).matches());
  // Two files, or a fusion index past the end, are usage errors.
  std::ostringstream o2, e2;
  EXPECT_EQ(runCheckSharding({"--emit-plan", path, corpusPath("rule_allgather_1d_logical.txt"),
                              corpusPath("rule_allgather_1d_logical.txt")},
                             o2, e2),
            2);
  std::ostringstream o3, e3;
  EXPECT_EQ(runCheckSharding(
                {"--emit-plan", path, "--fusion", "5", corpusPath("rule_allgather_1d_logical.txt")},
                o3, e3),
            2);
  // An unplannable fusion is a finding, and no file is written.
  std::string none = (tempDir() / "none.json").string();
  std::ostringstream o4, e4;
  EXPECT_EQ(
      runCheckSharding({"--emit-plan", none, corpusPath("lint_mesh_duplicate_device.txt")}, o4, e4),
      1);
  EXPECT_FALSE(std::filesystem::exists(none));
  EXPECT_NE(o4.str().find("no plan written"), std::string::npos) << o4.str();
}

// ------------------------------------------------------------ mutants

/// A seeded structural mutation of a JSON value: replace, delete or
/// duplicate something somewhere.
void mutate(nlohmann::json &j, std::mt19937_64 &rng, int depth = 0) {
  std::uniform_int_distribution<int> pick(0, 99);
  if (j.is_structured() && !j.empty() && (depth < 2 || pick(rng) < 75)) {
    std::uniform_int_distribution<size_t> index(0, j.size() - 1);
    auto it = j.begin();
    std::advance(it, index(rng));
    if (pick(rng) < 12) {
      if (j.is_object())
        j.erase(it.key());
      else
        j.erase(j.begin() + static_cast<long>(index(rng) % j.size()));
      return;
    }
    if (pick(rng) < 8 && j.is_array()) {
      j.push_back(*it);
      return;
    }
    mutate(*it, rng, depth + 1);
    return;
  }
  static const std::vector<nlohmann::json> replacements = {nullptr,
                                                           0,
                                                           1,
                                                           -1,
                                                           2,
                                                           3,
                                                           1000000,
                                                           "T1",
                                                           "T0",
                                                           "x",
                                                           "",
                                                           "Allgather",
                                                           "alias",
                                                           "compute",
                                                           "partial",
                                                           nlohmann::json::array(),
                                                           nlohmann::json::object(),
                                                           true,
                                                           0.5,
                                                           "proved",
                                                           nlohmann::json::array({0, 1}),
                                                           nlohmann::json::array({1, 0}),
                                                           "T1@T2",
                                                           "sum"};
  j = replacements[std::uniform_int_distribution<size_t>(0, replacements.size() - 1)(rng)];
}

TEST(PlanMutants, EveryMutantRunsOrIsRejectedWithALocatedError) {
  const char *getenvCount = std::getenv("SHARDCHECK_PLAN_MUTANTS");
  int mutants = getenvCount ? std::atoi(getenvCount) : 1500;
  std::vector<nlohmann::json> bases;
  for (const char *file :
       {"rule_allgather_1d_logical.txt", "rule_alltoall_binary_op_needs_permute.txt",
        "op_linear_megatron_mlp.txt", "rule_reducescatter_1d.txt", "mesh2d_stage_handoffs.txt",
        "seed_repro1_after_resharding.txt", "alloc_gathered_axis_inner_hostir.txt"})
    bases.push_back(nlohmann::json::parse(planToJsonText(corpusPlan(file))));
  std::mt19937_64 rng(20261130);
  int rejected = 0, ran = 0;
  for (int i = 0; i < mutants; ++i) {
    nlohmann::json j = bases[i % bases.size()];
    int edits = 1 + static_cast<int>(rng() % 3);
    for (int e = 0; e < edits; ++e)
      mutate(j, rng);
    if (std::getenv("SHARDCHECK_PLAN_MUTANT_DUMP"))
      std::ofstream(std::getenv("SHARDCHECK_PLAN_MUTANT_DUMP")) << j.dump(1);
    try {
      Plan plan = planFromJsonText(j.dump(), "mutant.json");
      runSim(plan, true, {{"i0", 8}, {"i1", 8}});
      ++ran;
    } catch (const InputError &e) {
      ++rejected;
      EXPECT_EQ(e.diagnostic().loc.file.empty(), false) << e.diagnostic().message;
    } catch (const PlanRefused &) {
      ++rejected;
    }
  }
  EXPECT_GT(rejected, mutants / 4);
  EXPECT_GT(ran, 0);
  std::cout << "plan mutants: " << ran << " ran, " << rejected << " rejected\n";
}

} // namespace
} // namespace shardcheck
