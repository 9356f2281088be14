// Golden corpus tests: every file in corpus/ states what check-sharding must
// conclude in `// EXPECT...` comment lines (syntax in corpus/README.md). Each
// file runs through runCheckSharding --format json, exactly as the tool does,
// and every stated expectation is checked against the JSON document.
#include "checker/Driver.h"
#include "tests/TestPaths.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::vector<std::string> corpusFiles() {
  std::vector<std::string> files;
  fs::path dir = fs::path(SHARDCHECK_SOURCE_DIR) / "corpus";
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

struct Expectation {
  std::string kind; // EXPECT, EXPECT-COMPILER, EXPECT-LINT, EXPECT-EXIT, EXPECT-ALL-EDGES,
                    // EXPECT-PARTIAL
  std::optional<int> fusion;
  std::string producer, consumer, communication, status;
  std::string lintCode, lintTensor;
  int exitStatus = -1;
  bool partial = false;
  int line = 0;
  std::string text;
};

std::vector<Expectation> readExpectations(const std::string &path) {
  std::ifstream in(path);
  std::vector<Expectation> r;
  std::string line;
  int n = 0;
  static const std::regex edgeRe(
      R"(^\s*//\s*(EXPECT|EXPECT-COMPILER):\s*(?:\[(\d+)\]\s*)?(T\d+)\s*->\s*(T\d+)\s+(\S+)(?:\s+(\S+))?)");
  static const std::regex lintRe(R"(^\s*//\s*EXPECT-LINT:\s*(?:\[(\d+)\]\s*)?([\w-]+)\s+(T\d+))");
  static const std::regex exitRe(R"(^\s*//\s*EXPECT-EXIT:\s*(\d+))");
  static const std::regex allRe(R"(^\s*//\s*EXPECT-ALL-EDGES:\s*(\S+)(?:\s+(\S+))?)");
  static const std::regex partialRe(R"(^\s*//\s*EXPECT-PARTIAL:\s*(true|false)\s*$)");
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
/// a local permute.
bool communicationMatches(const json &edge, const std::string &want) {
  std::string comm = edge["communication"];
  bool permute = edge["lowering"]["local_permute"];
  if (want.size() > 8 && want.substr(want.size() - 8) == "+permute")
    return permute && comm == want.substr(0, want.size() - 8);
  return comm == want;
}

class Golden : public ::testing::TestWithParam<std::string> {};

TEST_P(Golden, ExpectationsHold) {
  const std::string path = GetParam();
  auto expectations = readExpectations(path);
  ASSERT_FALSE(expectations.empty()) << path << " states no expectation";
  std::ostringstream out, err;
  int status = shardcheck::runCheckSharding({"--format", "json", path}, out, err);
  ASSERT_NE(status, 2) << path << " is unreadable:\n" << err.str() << out.str();
  json doc = json::parse(out.str());
  const json &file = doc["files"][0];
  // A truncated paste says so; every other file is read whole.
  bool wantPartial = std::any_of(expectations.begin(), expectations.end(),
                                 [](const Expectation &e) { return e.partial; });
  EXPECT_EQ(file["partial"], wantPartial) << file["diagnostics"];
  std::set<size_t> explained; // edge indices covered by an explicit EXPECT
  const json &edges = file["edges"];
  for (const auto &e : expectations) {
    SCOPED_TRACE(path + ":" + std::to_string(e.line) + ": " + e.text);
    if (e.kind == "MALFORMED") {
      ADD_FAILURE() << "malformed expectation line";
    } else if (e.kind == "EXPECT" || e.kind == "EXPECT-COMPILER") {
      bool found = false;
      for (size_t i = 0; i < edges.size(); ++i) {
        const json &edge = edges[i];
        if (edge["producer"] != e.producer || edge["consumer"] != e.consumer)
          continue;
        if (e.fusion && edge["fusion"] != *e.fusion)
          continue;
        found = true;
        explained.insert(i);
        if (e.kind == "EXPECT") {
          EXPECT_TRUE(communicationMatches(edge, e.communication))
              << "got " << edge["lowering"]["text"] << " " << edge["status"]
              << "; reason: " << edge["reason"] << "; counterexample: " << edge["counterexample"];
          if (!e.status.empty())
            EXPECT_EQ(edge["status"], e.status) << "reason: " << edge["reason"];
        } else {
          ASSERT_FALSE(edge["compiler"].is_null()) << "no compiler choice on this edge";
          EXPECT_EQ(edge["compiler"]["communication"], e.communication);
          if (!e.status.empty())
            EXPECT_EQ(edge["compiler"]["status"], e.status)
                << "counterexample: " << edge["compiler"]["counterexample"]
                << " reason: " << edge["compiler"]["reason"];
        }
      }
      EXPECT_TRUE(found) << "no such edge";
    } else if (e.kind == "EXPECT-LINT") {
      bool found = false;
      for (const auto &d : file["diagnostics"]) {
        std::string msg = d["message"];
        if (d["code"] == e.lintCode &&
            std::regex_search(msg, std::regex("\\b" + e.lintTensor + "\\b")))
          found = true;
      }
      EXPECT_TRUE(found) << "no " << e.lintCode << " finding on " << e.lintTensor;
    } else if (e.kind == "EXPECT-EXIT") {
      EXPECT_EQ(status, e.exitStatus);
    }
  }
  for (const auto &e : expectations) {
    if (e.kind != "EXPECT-ALL-EDGES")
      continue;
    SCOPED_TRACE(path + ":" + std::to_string(e.line) + ": " + e.text);
    for (size_t i = 0; i < edges.size(); ++i) {
      if (explained.count(i))
        continue;
      const json &edge = edges[i];
      EXPECT_TRUE(communicationMatches(edge, e.communication))
          << edge["producer"] << " -> " << edge["consumer"] << ": got " << edge["lowering"]["text"]
          << " " << edge["status"] << " " << edge["reason"];
      if (!e.status.empty())
        EXPECT_EQ(edge["status"], e.status)
            << edge["producer"] << " -> " << edge["consumer"] << ": " << edge["reason"];
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
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(Golden);

TEST(GoldenCorpus, HoldsAtLeastFortyFiles) {
  EXPECT_GE(corpusFiles().size(), 40u);
}

} // namespace
