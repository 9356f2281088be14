// check-sharding's pictures (issue 19): --report-html pages read back with
// Python's html.parser (tests/ci/read_html_report.py: well formed,
// self-contained, every link resolving) naming each edge's verdict, the
// seed's refuted Allgather with its counterexample, a truncated paste's and
// an unreadable file's warnings, text from the input escaped wherever it
// lands; --format dot read by Graphviz's dot (scripts/dev.sh installs it).
//
// This file does not test verdicts (golden_test.cpp does) or the look of a
// page (docs/ci-gate.md's screenshot shows it).
#include "tests/TestPaths.h"
#include "tests/ToolRuns.h"
#include "tools/check_sharding/Dot.h"
#include "tools/check_sharding/Graphviz.h"
#include "tools/check_sharding/HtmlReport.h"

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

} // namespace
