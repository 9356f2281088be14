// Golden corpus tests: every file in corpus/ states what check-sharding must
// conclude in `// EXPECT...` comment lines (syntax in corpus/README.md). Each
// file is read and checked with checkDocument, the library call the tool
// makes, and every stated expectation is checked against the DocumentReport:
// edge verdicts by their closed results, lints among the fusions' lints, the
// exit status by check-sharding's own summary of the report.
//
// DTensor documents (corpus/dtensor/*.json, docs/dtensor.md) are read the
// way check-sharding reads them and state their expectations in an `expect`
// array of the same lines without `//`; one the reader rejects states its
// located error (`EXPECT-ERROR: CODE LINE:COL`) and exit status 2, every
// other one the bytes per rank of DTensor's plan and of shardcheck's, side by
// side as check-sharding reports them (`EXPECT-BYTES: DTensor 72 72 72 72
// shardcheck 72 72 72 72`, dtensor/PlanBytes.h).
//
// This file does not run the command line (tests/driver_test.cpp does).
#include "checker/CheckDocument.h"
#include "dtensor/DTensorInput.h"
#include "dtensor/DTensorReader.h"
#include "dtensor/PlanBytes.h"
#include "ir/reader/DumpReader.h"
#include "tests/TestPaths.h"
#include "tests/ToolRuns.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

namespace fs = std::filesystem;
using namespace shardcheck;

namespace {

std::vector<std::string> filesIn(const fs::path &dir) {
  std::vector<std::string> files;
  if (!fs::exists(dir))
    return files;
  for (const auto &e : fs::directory_iterator(dir)) {
    auto ext = e.path().extension();
    if (ext == ".txt" || ext == ".json")
      files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<std::string> corpusFiles() {
  return filesIn(fs::path(SHARDCHECK_SOURCE_DIR) / "corpus");
}

/// DTensor documents (docs/dtensor.md) with their expectations in `expect`.
std::vector<std::string> dtensorFiles() {
  return filesIn(fs::path(SHARDCHECK_SOURCE_DIR) / "corpus" / "dtensor");
}

struct Expectation {
  std::string kind; // EXPECT, EXPECT-COMPILER, EXPECT-LINT, EXPECT-EXIT, EXPECT-ALL-EDGES,
                    // EXPECT-PARTIAL, EXPECT-ERROR, EXPECT-BYTES
  std::optional<int> fusion;
  std::string producer, consumer, communication, status;
  std::string lintCode, lintTensor;
  std::string errorCode; // EXPECT-ERROR: the input error's code and location
  int errorLine = 0, errorColumn = 0;
  std::string dtensorBytes, shardcheckBytes; // EXPECT-BYTES: per rank, or `unknown`
  int exitStatus = -1;
  bool partial = false;
  int line = 0;
  std::string text;
};

/// The expectation lines of a file: its `// EXPECT` comment lines, or for a
/// DTensor document (JSON has no comments) its `expect` array, each entry a
/// line without the `//`.
std::string expectationText(const std::string &path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  if (!dtensor::isDTensorText(text.str()))
    return text.str();
  std::string lines;
  auto doc = nlohmann::json::parse(text.str());
  for (const auto &line : doc.value("expect", nlohmann::json::array()))
    lines += "// " + line.get<std::string>() + "\n";
  return lines;
}

std::vector<Expectation> readExpectations(const std::string &path) {
  std::istringstream in(expectationText(path));
  std::vector<Expectation> r;
  std::string line;
  int n = 0;
  static const std::regex edgeRe(
      R"(^\s*//\s*(EXPECT|EXPECT-COMPILER):\s*(?:\[(\d+)\]\s*)?(T\d+)\s*->\s*(T\d+)\s+(\S+)(?:\s+(\S+))?)");
  static const std::regex lintRe(R"(^\s*//\s*EXPECT-LINT:\s*(?:\[(\d+)\]\s*)?([\w-]+)\s+(T\d+))");
  static const std::regex exitRe(R"(^\s*//\s*EXPECT-EXIT:\s*(\d+))");
  static const std::regex allRe(R"(^\s*//\s*EXPECT-ALL-EDGES:\s*(\S+)(?:\s+(\S+))?)");
  static const std::regex partialRe(R"(^\s*//\s*EXPECT-PARTIAL:\s*(true|false)\s*$)");
  static const std::regex errorRe(R"(^\s*//\s*EXPECT-ERROR:\s*([\w-]+)\s+(\d+):(\d+)\s*$)");
  static const std::regex bytesRe(
      R"(^\s*//\s*EXPECT-BYTES:\s*DTensor\s+(unknown|[\d.]+(?: [\d.]+)*)\s+shardcheck\s+(unknown|[\d.]+(?: [\d.]+)*)\s*$)");
  while (std::getline(in, line)) {
    ++n;
    std::smatch m;
    Expectation e;
    e.line = n;
    e.text = line;
    if (std::regex_search(line, m, edgeRe)) {
      e.kind = m[1];
      if (m[2].matched)
        e.fusion = std::stoi(m[2]);
      e.producer = m[3];
      e.consumer = m[4];
      e.communication = m[5];
      e.status = m[6].matched ? std::string(m[6]) : "";
    } else if (std::regex_search(line, m, lintRe)) {
      e.kind = "EXPECT-LINT";
      if (m[1].matched)
        e.fusion = std::stoi(m[1]);
      e.lintCode = m[2];
      e.lintTensor = m[3];
    } else if (std::regex_search(line, m, exitRe)) {
      e.kind = "EXPECT-EXIT";
      e.exitStatus = std::stoi(m[1]);
    } else if (std::regex_search(line, m, partialRe)) {
      e.kind = "EXPECT-PARTIAL";
      e.partial = m[1] == "true";
    } else if (std::regex_search(line, m, errorRe)) {
      e.kind = "EXPECT-ERROR";
      e.errorCode = m[1];
      e.errorLine = std::stoi(m[2]);
      e.errorColumn = std::stoi(m[3]);
    } else if (std::regex_search(line, m, bytesRe)) {
      e.kind = "EXPECT-BYTES";
      e.dtensorBytes = m[1];
      e.shardcheckBytes = m[2];
    } else if (std::regex_search(line, m, allRe)) {
      e.kind = "EXPECT-ALL-EDGES";
      e.communication = m[1];
      e.status = m[2].matched ? std::string(m[2]) : "";
    } else if (line.find("// EXPECT") != std::string::npos) {
      e.kind = "MALFORMED";
    } else {
      continue;
    }
    r.push_back(e);
  }
  return r;
}

/// `Allgather+permute` in an expectation matches communication Allgather with
/// a local permute, `Allgather+pad` its padded form (uneven splits);
/// `multi-step` an edge the planner serves with a proved sequence of steps;
/// `unsupported` an edge nothing serves.
bool communicationMatches(const EdgeVerdict &v, const std::string &want) {
  if (hasProvedPlan(v))
    return want == "multi-step";
  if (!hasLowering(v.result))
    return want == "unsupported";
  std::string comm = commKindName(v.lowering.kind);
  if (want.size() > 4 && want.substr(want.size() - 4) == "+pad")
    return v.lowering.padded && comm == want.substr(0, want.size() - 4);
  if (want.size() > 8 && want.substr(want.size() - 8) == "+permute")
    return v.lowering.localPermute && comm == want.substr(0, want.size() - 8);
  return comm == want;
}

/// Whether the edge's result is the stated status (`proved`, `refuted`,
/// `unknown`): for an unsupported edge, whether communication is needed and
/// unserved (refuted) or the edge is not modelled (unknown).
bool statusMatches(const EdgeVerdict &v, const std::string &want) {
  switch (v.result) {
  case EdgeResult::Proved:
    return want == "proved";
  case EdgeResult::Refuted:
  case EdgeResult::Unsupported:
    return want == "refuted";
  case EdgeResult::Unknown:
  case EdgeResult::Unmodelled:
    return want == "unknown";
  }
  return false;
}

/// Whether the compiler's verdict is the stated one (`confirmed`, `refuted`,
/// `unknown`); an unnecessary confirmed choice is confirmed.
bool compilerStatusMatches(const CompilerVerdict &c, const std::string &want) {
  switch (c.result) {
  case CompilerResult::Confirmed:
  case CompilerResult::Unnecessary:
    return want == "confirmed";
  case CompilerResult::Refuted:
    return want == "refuted";
  case CompilerResult::Unknown:
    return want == "unknown";
  }
  return false;
}

std::string tensorName(TensorNum t) {
  return "T" + std::to_string(t);
}

/// One line of the verdict for a failure message.
std::string shown(const EdgeVerdict &v) {
  return tensorName(v.producer) + " -> " + tensorName(v.consumer) + ": got " + v.loweringText() +
         " " + edgeResultStatusName(v.result) + "; reason: " + v.reason +
         (v.counterexample ? "; counterexample: " + v.counterexample->message : "");
}

/// Every edge of the report, with the index of its fusion.
std::vector<std::pair<size_t, const EdgeVerdict *>> edgesOf(const DocumentReport &report) {
  std::vector<std::pair<size_t, const EdgeVerdict *>> edges;
  for (const FusionReport &f : report.fusions)
    for (const EdgeVerdict &v : f.verdicts)
      edges.emplace_back(f.index, &v);
  return edges;
}

void expectEdge(const Expectation &e, const EdgeVerdict &v) {
  if (e.kind == "EXPECT") {
    EXPECT_TRUE(communicationMatches(v, e.communication)) << shown(v);
    if (!e.status.empty()) {
      EXPECT_TRUE(statusMatches(v, e.status)) << shown(v);
    }
    return;
  }
  ASSERT_TRUE(v.compiler) << "no compiler choice on this edge";
  const CompilerVerdict &c = *v.compiler;
  EXPECT_EQ(c.communicationName(), e.communication);
  if (!e.status.empty()) {
    EXPECT_TRUE(compilerStatusMatches(c, e.status))
        << "got " << compilerResultStatusName(c.result)
        << (c.counterexample ? "; counterexample: " + c.counterexample->message : "")
        << " reason: " << c.reason;
  }
}

bool hasLint(const DocumentReport &report, const Expectation &e) {
  for (const FusionReport &f : report.fusions)
    for (const Diagnostic &d : f.lints)
      if (d.code == e.lintCode &&
          std::regex_search(d.message, std::regex("\\b" + e.lintTensor + "\\b")))
        return true;
  return false;
}

/// A file the reader rejects: its error is the expected one, and the file
/// states only that and check-sharding's exit status for it (2).
void expectInputError(const Expectation &want, const std::vector<Expectation> &all,
                      const Diagnostic &got) {
  EXPECT_EQ(got.code, want.errorCode) << got.message;
  EXPECT_EQ(got.loc.line, want.errorLine) << got.message;
  EXPECT_EQ(got.loc.column, want.errorColumn) << got.message;
  for (const auto &e : all) {
    if (e.kind == "EXPECT-EXIT") {
      EXPECT_EQ(e.exitStatus, 2) << "an unreadable input exits 2";
    } else if (e.kind != "EXPECT-ERROR") {
      ADD_FAILURE() << e.text << ": an unreadable input has no verdicts";
    }
  }
}

/// One plan's bytes per rank as EXPECT-BYTES writes them: the ranks' figures
/// in mesh order, or `unknown`.
std::string bytesLine(const dtensor::PlanBytes &p, const std::vector<int64_t> &ranks) {
  if (!p.known())
    return "unknown";
  std::string line;
  for (int64_t rank : ranks)
    line += (line.empty() ? "" : " ") + dtensor::bytesText(p.perRank.at(rank));
  return line;
}

/// EXPECT-BYTES: both plans' bytes per rank of a DTensor document.
void expectBytes(const Expectation &e, const dtensor::DTensorCase &c, const Document &doc,
                 const DocumentReport &report) {
  ASSERT_FALSE(doc.fusions.empty() || report.fusions.empty());
  dtensor::BytesSideBySide b =
      dtensor::bytesSideBySide(c, doc.fusions.front(), report.fusions.front().verdicts);
  EXPECT_EQ(bytesLine(b.dtensor, b.ranks), e.dtensorBytes) << b.dtensor.unknownWhy;
  EXPECT_EQ(bytesLine(b.shardcheck, b.ranks), e.shardcheckBytes) << b.shardcheck.unknownWhy;
}

class Golden : public ::testing::TestWithParam<std::string> {};

TEST_P(Golden, ExpectationsHold) {
  const std::string path = GetParam();
  auto expectations = readExpectations(path);
  ASSERT_FALSE(expectations.empty()) << path << " states no expectation";
  auto wantError = std::find_if(expectations.begin(), expectations.end(),
                                [](const Expectation &e) { return e.kind == "EXPECT-ERROR"; });
  Document doc;
  std::optional<dtensor::DTensorCase> dtensorCase;
  try {
    dtensor::InputDocument read = dtensor::readInputDocumentFile(path);
    doc = std::move(read.doc);
    dtensorCase = std::move(read.dtensor);
  } catch (const InputError &e) {
    if (wantError == expectations.end())
      FAIL() << path << " is unreadable: " << e.what();
    expectInputError(*wantError, expectations, e.diagnostic());
    return;
  }
  ASSERT_TRUE(wantError == expectations.end()) << path << " reads, yet expects an input error";
  // A DTensor document that reads states both plans' bytes per rank.
  ASSERT_EQ(std::count_if(expectations.begin(), expectations.end(),
                          [](const Expectation &e) { return e.kind == "EXPECT-BYTES"; }),
            dtensorCase ? 1 : 0)
      << path << ": one EXPECT-BYTES line in a DTensor document that reads, none elsewhere";
  DocumentReport report = checkDocument(doc, DocumentOptions{});
  ASSERT_TRUE(report.readable()) << path << " is unreadable";
  auto edges = edgesOf(report);
  // A truncated paste says so; every other file is read whole.
  bool wantPartial = std::any_of(expectations.begin(), expectations.end(),
                                 [](const Expectation &e) { return e.partial; });
  EXPECT_EQ(report.partial(), wantPartial) << path;
  std::set<size_t> explained; // edge indices covered by an explicit EXPECT
  for (const auto &e : expectations) {
    SCOPED_TRACE(path + ":" + std::to_string(e.line) + ": " + e.text);
    if (e.kind == "MALFORMED") {
      ADD_FAILURE() << "malformed expectation line";
    } else if (e.kind == "EXPECT" || e.kind == "EXPECT-COMPILER") {
      bool found = false;
      for (size_t i = 0; i < edges.size(); ++i) {
        const auto &[fusion, v] = edges[i];
        if (tensorName(v->producer) != e.producer || tensorName(v->consumer) != e.consumer)
          continue;
        if (e.fusion && fusion != static_cast<size_t>(*e.fusion))
          continue;
        found = true;
        explained.insert(i);
        expectEdge(e, *v);
      }
      EXPECT_TRUE(found) << "no such edge";
    } else if (e.kind == "EXPECT-LINT") {
      EXPECT_TRUE(hasLint(report, e)) << "no " << e.lintCode << " finding on " << e.lintTensor;
    } else if (e.kind == "EXPECT-EXIT") {
      EXPECT_EQ(shardcheck::testing::checkShardingExitStatus(report), e.exitStatus);
    } else if (e.kind == "EXPECT-BYTES") {
      expectBytes(e, *dtensorCase, doc, report);
    }
  }
  for (const auto &e : expectations) {
    if (e.kind != "EXPECT-ALL-EDGES")
      continue;
    SCOPED_TRACE(path + ":" + std::to_string(e.line) + ": " + e.text);
    for (size_t i = 0; i < edges.size(); ++i) {
      if (explained.count(i))
        continue;
      const EdgeVerdict &v = *edges[i].second;
      EXPECT_TRUE(communicationMatches(v, e.communication)) << shown(v);
      if (!e.status.empty()) {
        EXPECT_TRUE(statusMatches(v, e.status)) << shown(v);
      }
    }
  }
}

std::string testName(const ::testing::TestParamInfo<std::string> &info) {
  std::string n = fs::path(info.param).stem().string();
  std::replace_if(
      n.begin(), n.end(), [](char c) { return !std::isalnum(static_cast<unsigned char>(c)); }, '_');
  return n;
}

INSTANTIATE_TEST_SUITE_P(Corpus, Golden, ::testing::ValuesIn(corpusFiles()), testName);
INSTANTIATE_TEST_SUITE_P(DTensor, Golden, ::testing::ValuesIn(dtensorFiles()), testName);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(Golden);

TEST(GoldenCorpus, SeedHostIrRefutesAllgatherWithCounts) {
  std::string path =
      std::string(SHARDCHECK_SOURCE_DIR) + "/corpus/seed_repro1_hostir_allgather.txt";
  DocumentReport report = checkDocument(readDocumentFile(path), DocumentOptions{});
  EXPECT_EQ(shardcheck::testing::checkShardingExitStatus(report), 1);
  bool found = false;
  for (const auto &[fusion, v] : edgesOf(report))
    if (v->compiler && v->compiler->lowering &&
        v->compiler->lowering->kind == CommKind::Allgather) {
      found = true;
      EXPECT_EQ(v->compiler->result, CompilerResult::Refuted);
      EXPECT_EQ(v->lowering.kind, CommKind::Alias);
      ASSERT_TRUE(v->compiler->counterexample);
      const std::string &msg = v->compiler->counterexample->message;
      EXPECT_NE(msg.find("needs an output of 2 x 1 elements"), std::string::npos) << msg;
    }
  EXPECT_TRUE(found);
}

TEST(GoldenCorpus, HoldsAtLeastFortyFiles) {
  EXPECT_GE(corpusFiles().size(), 40u);
}

} // namespace
