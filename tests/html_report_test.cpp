// check-sharding's pictures (issue 19): --report-html pages read back with
// Python's html.parser (tests/ci/read_html_report.py: well formed,
// self-contained, every link resolving) naming each edge's verdict, the
// seed's refuted Allgather with its counterexample, a truncated paste's and
// an unreadable file's warnings, text from the input escaped wherever it
// lands; --format dot read by Graphviz's dot (scripts/dev.sh installs it).
// run-plan's --report-html pages read the same way: a matching run, wrong
// values, a failed step and a refused plan, each with its outcome, step
// rows, element counts, bytes and tensor rows, and hostile text escaped.
// (`bash scripts/dev.sh report-screenshot` loads both tools' pages in
// headless Chromium and fails on a console error.)
//
// This file does not test verdicts (golden_test.cpp does) or the look of a
// page (docs/ci-gate.md's screenshot shows it).
#include "tests/TestPaths.h"
#include "tests/ToolRuns.h"
#include "tools/check_sharding/Dot.h"
#include "tools/check_sharding/Graphviz.h"
#include "tools/check_sharding/HtmlReport.h"
#include "tools/run_plan/HtmlReport.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

using namespace shardcheck;
using namespace shardcheck::checksharding;
using shardcheck::testing::ToolRun;

namespace {

namespace fs = std::filesystem;

std::string corpus(const std::string &name) {
  return std::string(SHARDCHECK_SOURCE_DIR) + "/corpus/" + name;
}

std::string scratch(const std::string &name) {
  return shardcheck::testing::tempPath("html_report_test", name);
}

/// What tests/ci/read_html_report.py makes of `pages` (empty on failure,
/// with the script's complaints in `problems`).
nlohmann::json readPages(const std::vector<std::string> &pages, std::string &problems) {
  std::string command =
      "python3 " + std::string(SHARDCHECK_SOURCE_DIR) + "/tests/ci/read_html_report.py";
  for (const auto &p : pages)
    command += " '" + p + "'";
  std::string out;
  if (FILE *pipe = popen(command.c_str(), "r")) {
    char buffer[4096];
    for (size_t n; (n = fread(buffer, 1, sizeof buffer, pipe)) > 0;)
      out.append(buffer, n);
    if (pclose(pipe) == 0)
      return nlohmann::json::parse(out);
  }
  problems = out;
  return nullptr;
}

std::vector<std::string> pagesIn(const std::string &dir) {
  std::vector<std::string> pages;
  for (const auto &entry : fs::directory_iterator(dir))
    pages.push_back(entry.path().string());
  std::sort(pages.begin(), pages.end());
  return pages;
}

std::string readText(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string text(const nlohmann::json &page) {
  return page["text"].get<std::string>();
}

TEST(HtmlReport, GraphvizIsInstalled) {
  // scripts/dev.sh installs Debian's graphviz; the pages below draw with it.
  EXPECT_TRUE(findGraphvizDot().has_value()) << "apt-get install graphviz";
}

TEST(HtmlReport, PagesAreWellFormedSelfContainedAndNameEachVerdict) {
  std::string dir = scratch("mixed");
  fs::remove_all(dir);
  std::string odd = shardcheck::testing::tempFile("html_report_test", "odd<b>&\"name.txt",
                                                  "%kernel {\nT1_g_float[iS0{4}\n} // %kernel\n");
  std::vector<std::string> inputs = {corpus("seed_repro1_after_resharding.txt"),
                                     corpus("hostir_allgather_then_linear_2025.txt"),
                                     corpus("real_pr3307_segment_groups_truncated.txt"),
                                     corpus("lint_duplicate_did.txt"),
                                     corpus("hostir_unnecessary_scatter.txt"),
                                     corpus("op_broadcast_squeeze_expand.txt"),
                                     corpus("adversarial_unknown_op_cumsum.txt"),
                                     odd};
  std::vector<std::string> args = {"--quiet"};
  args.insert(args.end(), inputs.begin(), inputs.end());
  ToolRun plain = shardcheck::testing::checkShardingTool(args);
  args.insert(args.begin(), {"--report-html", dir});
  std::vector<std::string> serialArgs = args;
  serialArgs[1] = scratch("mixed-serial");
  serialArgs.insert(serialArgs.begin(), {"-j", "1"});
  args.insert(args.begin(), {"-j", "3"});
  ToolRun r = shardcheck::testing::checkShardingTool(args);
  EXPECT_EQ(r.status, plain.status);
  EXPECT_EQ(r.out, plain.out);
  // Pages are written by -j workers and are the same for every N.
  fs::remove_all(serialArgs[3]);
  shardcheck::testing::checkShardingTool(serialArgs);
  for (const auto &page : pagesIn(dir))
    EXPECT_EQ(readText(page), readText(serialArgs[3] + "/" + fs::path(page).filename().string()))
        << page;
  std::string problems;
  nlohmann::json pages = readPages(pagesIn(dir), problems);
  ASSERT_FALSE(pages.is_null()) << problems;
  ASSERT_EQ(pages.size(), inputs.size() + 1);

  // The seed: alias proved, nvFuser's Allgather refuted; the arrow links to
  // its proof, open, with the counterexample.
  const auto &seed = pages.at("000-seed_repro1_after_resharding.txt.html");
  EXPECT_EQ(seed["edges"]["f0-e0"], "refuted");
  EXPECT_EQ(seed["edges"]["f0-e1"], "none");
  EXPECT_EQ(seed["open"], nlohmann::json::array({"f0-e0"}));
  EXPECT_TRUE(seed["svg"]);
  EXPECT_NE(std::find(seed["arrows"].begin(), seed["arrows"].end(), "#f0-e0"),
            seed["arrows"].end());
  EXPECT_NE(text(seed).find("Allgather over team (0 1) needs an output of 2 x 1 elements"),
            std::string::npos);
  EXPECT_EQ(pages["001-hostir_allgather_then_linear_2025.txt.html"]["edges"]["f0-e0"],
            "collective");
  EXPECT_EQ(pages["002-real_pr3307_segment_groups_truncated.txt.html"]["banners"],
            nlohmann::json::array({"partial"}));
  const auto &unreadable = pages.at("007-odd_b___name.txt.html");
  EXPECT_EQ(unreadable["banners"], nlohmann::json::array({"unreadable"}));
  EXPECT_NE(text(unreadable).find("odd<b>&\"name.txt"), std::string::npos);

  std::set<std::string> verdicts;
  for (const auto &[name, page] : pages.items()) {
    EXPECT_EQ(page["scripts"], 1) << name;
    for (const auto &[id, verdict] : page["edges"].items())
      verdicts.insert(verdict.get<std::string>());
  }
  for (const char *v : {"refuted", "collective", "alias", "none", "unmodelled", "unnecessary"})
    EXPECT_TRUE(verdicts.count(v)) << v;
  const std::string index = text(pages["index.html"]);
  for (const auto &input : inputs)
    EXPECT_NE(index.find(input), std::string::npos) << input;
}

/// A file whose every text from the input tries to break out of the page.
FileOutput hostileFile() {
  FileOutput file;
  file.file = "</title><script>alert(1)</script>.txt";
  FusionEntry fusion;
  fusion.tensors = {TensorNode{0, "T0_<img src=x onerror=alert(0)>", true, false},
                    TensorNode{1, "T1\"] [label=\"\\N", false, true}};
  file.fusions.push_back(fusion);
  EdgeVerdict v;
  v.producer = 0;
  v.consumer = 1;
  v.exprName = "</summary></details><script>alert(2)</script>";
  v.result = EdgeResult::Unknown;
  v.lowering.kind = CommKind::Alias;
  v.reason = "' \" & <b>";
  v.counterexample = Counterexample{};
  v.counterexample->message = "<img src=x onerror=alert(3)>";
  v.counterexample->bindings = {{"i<0>", 2}};
  file.edges.emplace_back(0, v);
  Finding f;
  f.rule = "<rule>";
  f.message = "</pre><script>alert(4)</script>";
  f.fusion = 0;
  file.findings.push_back(f);
  return file;
}

TEST(HtmlReport, EscapesTextFromTheInputEverywhere) {
  std::vector<FileOutput> files = {hostileFile()};
  std::vector<Summary> summaries(1);
  for (auto dotProgram : {findGraphvizDot(), std::optional<std::string>()}) {
    HtmlRun run{&files, &summaries, "summary <script>", 1, "test", dotProgram};
    std::string dir = scratch(dotProgram ? "hostile-drawn" : "hostile-dot-text");
    fs::remove_all(dir);
    ASSERT_EQ(writeHtmlReport(dir, run), "");
    std::string problems;
    nlohmann::json pages = readPages(pagesIn(dir), problems);
    ASSERT_FALSE(pages.is_null()) << problems; // no src= attribute, no stray tag
    const auto &page = pages[htmlPageName(0, files[0].file)];
    EXPECT_EQ(page["scripts"], 1);
    EXPECT_EQ(page["edges"]["f0-e0"], "unknown");
    EXPECT_EQ(page["svg"], dotProgram.has_value());
    EXPECT_EQ(page["dot_text"], !dotProgram.has_value());
    for (const char *shown :
         {"</title><script>alert(1)</script>.txt", "</summary></details><script>alert(2)</script>",
          "<img src=x onerror=alert(3)>", "</pre><script>alert(4)</script>", "' \" & <b>",
          "i<0> = 2"})
      EXPECT_NE(text(page).find(shown), std::string::npos) << shown;
    EXPECT_EQ(pages["index.html"]["scripts"], 1);
  }
}

TEST(DotOutput, GraphvizReadsItAndArrowsCarryTheirVerdicts) {
  ToolRun r = shardcheck::testing::checkShardingTool({"--format", "dot",
                                                      corpus("seed_repro1_after_resharding.txt"),
                                                      corpus("seed_hostir_d4_variants.txt")});
  EXPECT_EQ(r.status, 1);
  size_t graphs = 0;
  for (size_t at = 0; (at = r.out.find("digraph ", at)) != std::string::npos; ++at)
    ++graphs;
  EXPECT_EQ(graphs, 3u);
  EXPECT_NE(r.out.find("T1 -> T3 [color=\"#c62828\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("compiler: Allgather over team (0 1) refuted"), std::string::npos);
  auto dot = findGraphvizDot();
  ASSERT_TRUE(dot);
  std::string error;
  EXPECT_TRUE(renderSvg(*dot, r.out, error).has_value()) << error;
}

TEST(DotOutput, QuotesNamesAndLabels) {
  FileOutput file = hostileFile();
  std::string text = fusionDot(file.fusions[0], file.edges, "a \"quoted\" \\N name");
  EXPECT_NE(text.find("digraph \"a \\\"quoted\\\" \\\\N name\""), std::string::npos) << text;
  auto dot = findGraphvizDot();
  ASSERT_TRUE(dot);
  std::string error;
  auto svg = renderSvg(*dot, text, error);
  ASSERT_TRUE(svg) << error;
  EXPECT_NE(svg->find("a &quot;quoted&quot; \\N name"), std::string::npos) << *svg;
}

// ------------------------------------------------------------ run-plan

std::string emittedPlan(const std::string &file, const std::string &lowerings) {
  std::string plan = shardcheck::testing::emittedPlan("html_report_test", file, lowerings);
  EXPECT_FALSE(plan.empty()) << file;
  return plan;
}

/// The pages run-plan --report-html writes for `args` (+ the plan), read
/// back; its exit status must be `status`, the same as without the report.
nlohmann::json runPlanPages(const std::string &name, std::vector<std::string> args, int status) {
  std::string dir = scratch("run-plan-" + name);
  fs::remove_all(dir);
  args.insert(args.begin(), "--quiet"); // no step times: the same text twice
  ToolRun plain = shardcheck::testing::runPlanTool(args);
  args.insert(args.begin(), {"--report-html", dir});
  ToolRun r = shardcheck::testing::runPlanTool(args);
  EXPECT_EQ(r.status, status) << r.out << r.err;
  EXPECT_EQ(plain.status, status);
  EXPECT_EQ(r.out, plain.out);
  std::string problems;
  nlohmann::json pages = readPages(pagesIn(dir), problems);
  EXPECT_FALSE(pages.is_null()) << problems;
  EXPECT_EQ(pages.size(), 2u) << pages.dump();
  for (const auto &[page, content] : pages.items())
    EXPECT_EQ(content["scripts"], 0) << page;
  return pages;
}

nlohmann::json classes(std::initializer_list<const char *> names) {
  nlohmann::json list = nlohmann::json::array();
  for (const char *n : names)
    list.push_back(n);
  return list;
}

TEST(RunPlanHtmlReport, AMatchingRunShowsItsStepsBytesAndTensors) {
  std::string plan = emittedPlan("rule_allgather_1d_logical.txt", "checker");
  nlohmann::json pages = runPlanPages("match", {plan}, 0);
  const auto &page = pages.at(htmlPageName(0, plan));
  EXPECT_EQ(page["banners"], classes({"match"}));
  EXPECT_EQ(page["rows"]["step-0"], classes({"step", "ok"}));
  EXPECT_EQ(page["rows"]["step-1"], classes({"step", "ok"}));
  EXPECT_EQ(page["rows"]["tensor-T1"], classes({"tensor", "pass"}));
  EXPECT_EQ(page["rows"]["tensor-T2"], classes({"tensor", "pass"}));
  const std::string shown = text(page);
  // The Allgather's team, its element counts (8 -> 16 per device), the
  // bytes each device received (8 floats) and the total.
  for (const char *expected : {"Allgather T0 -> T1 over (0 1)", "0: 8 \u2192 161: 8 \u2192 16",
                               "0: 32, 1: 32", "total bytes moved64", "result: match: 2 tensor(s)"})
    EXPECT_NE(shown.find(expected), std::string::npos) << expected << "\n" << shown;
  const auto &index = pages.at("index.html");
  EXPECT_EQ(index["rows"]["run-0"], classes({"run", "good"}));
  EXPECT_NE(text(index).find(plan), std::string::npos);
}

TEST(RunPlanHtmlReport, WrongValuesNameTheFirstMismatch) {
  // The compiler's Allgather over team (0 1 3 2): every step runs, T1 is wrong.
  std::string plan = emittedPlan("hostir_wrong_team_order.txt", "compiler");
  nlohmann::json pages = runPlanPages("wrong", {"--allow-unverified", "--bind-auto", plan}, 1);
  const auto &page = pages.at(htmlPageName(0, plan));
  EXPECT_EQ(page["banners"], classes({"wrong-values"}));
  EXPECT_EQ(page["rows"]["step-0"], classes({"step", "ok"}));
  EXPECT_EQ(page["rows"]["tensor-T1"], classes({"tensor", "fail"}));
  EXPECT_NE(text(page).find("device 0, T1[2, 0] (slot 16): got -0.356, expected -0.416"),
            std::string::npos)
      << text(page);
  EXPECT_EQ(pages["index.html"]["rows"]["run-0"], classes({"run", "bad"}));
}

TEST(RunPlanHtmlReport, AFailedStepAndARefusedPlanSayWhy) {
  // nvFuser's Allgather of the seed: refused, then run anyway and failing.
  std::string plan = emittedPlan("seed_repro1_after_resharding.txt", "compiler");
  nlohmann::json failed = runPlanPages("failed", {"--allow-unverified", plan}, 1);
  const auto &page = failed.at(htmlPageName(0, plan));
  EXPECT_EQ(page["banners"], classes({"count-error"}));
  EXPECT_EQ(page["rows"]["step-0"], classes({"step", "failed"}));
  EXPECT_EQ(page["rows"]["step-1"], classes({"step", "not-run"}));
  for (const char *expected :
       {"all buffers must have the same number of elements: output T3 on "
        "device 0 has 1, the team needs 2 x 1 = 2",
        "0: 1 \u2192 11: 1 \u2192 1", "unverified", "Nothing compared: the run failed at step 0."})
    EXPECT_NE(text(page).find(expected), std::string::npos) << expected << "\n" << text(page);

  nlohmann::json refused = runPlanPages("refused", {plan}, 3);
  const auto &refusedPage = refused.at(htmlPageName(0, plan));
  EXPECT_EQ(refusedPage["banners"], classes({"refused"}));
  EXPECT_EQ(refusedPage["rows"]["step-0"], classes({"step", "not-run"}));
  EXPECT_NE(text(refusedPage).find("plan refused: step 0 rests on a refuted verdict"),
            std::string::npos);

  nlohmann::json unreadable = runPlanPages("unreadable", {corpus("seed_kernel_dump.txt")}, 2);
  const auto &unreadablePage = unreadable.at(htmlPageName(0, corpus("seed_kernel_dump.txt")));
  EXPECT_EQ(unreadablePage["banners"], classes({"unreadable"}));
  EXPECT_TRUE(unreadablePage["rows"].empty());
}

TEST(RunPlanHtmlReport, EscapesTextFromThePlanEverywhere) {
  runplan::PlanRunResult run{
      "</title><script>alert(1)</script>.json", "sim", 1, RunReport{}, "", ""};
  StepReport step;
  step.kind = "collective";
  step.description = "<img src=x onerror=alert(2)>";
  step.status = "failed";
  run.report->steps.push_back(step);
  run.report->symbols = {{"i<0>", 2}};
  TensorCheck tensor;
  tensor.comparison.name = "T\"><script>alert(3)</script>";
  tensor.comparison.compared = 2;
  tensor.comparison.mismatched = 1;
  tensor.comparison.firstMismatch = Mismatch{0, 1, {1}, 2, 3};
  tensor.role = "output";
  run.report->tensors.push_back(tensor);
  runplan::PlanRunResult refused{"b&d's.json", "sim",     3,
                                 std::nullopt, "refused", "</pre><script>alert(4)</script>"};
  std::string dir = scratch("run-plan-hostile");
  fs::remove_all(dir);
  ASSERT_EQ(runplan::writeHtmlReport(dir, {run, refused}, "<v>"), "");
  std::string problems;
  nlohmann::json pages = readPages(pagesIn(dir), problems);
  ASSERT_FALSE(pages.is_null()) << problems; // no src= attribute, no stray tag
  ASSERT_EQ(pages.size(), 3u);
  const auto &page = pages[htmlPageName(0, run.plan)];
  EXPECT_EQ(page["scripts"], 0);
  for (const char *shown :
       {"</title><script>alert(1)</script>.json", "<img src=x onerror=alert(2)>", "i<0>=2",
        "T\"><script>alert(3)</script>[1] (slot 1)"})
    EXPECT_NE(text(page).find(shown), std::string::npos) << shown;
  EXPECT_NE(text(pages[htmlPageName(1, refused.plan)]).find("</pre><script>alert(4)</script>"),
            std::string::npos);
  EXPECT_NE(text(pages["index.html"]).find("b&d's.json"), std::string::npos);
}

} // namespace
