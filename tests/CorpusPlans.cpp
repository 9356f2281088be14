// The plan of a corpus fusion for tests (CorpusPlans.h).
#include "tests/CorpusPlans.h"

#include "checker/Checker.h"
#include "ir/reader/DumpReader.h"
#include "tests/TestPaths.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

namespace shardcheck::testing {

Plan corpusPlan(const std::string &file, PlanRequest::Lowerings lowerings, size_t index) {
  Document doc = readDocumentFile(std::string(SHARDCHECK_SOURCE_DIR) + "/corpus/" + file);
  const Fusion &fusion = doc.fusions.at(index);
  DiagnosticEngine diags;
  auto graph = FusionGraph::build(fusion, diags);
  EXPECT_TRUE(graph.has_value()) << file;
  Checker checker(CheckOptions{});
  auto verdicts = checker.checkFusion(fusion, *graph);
  PlanRequest request;
  request.lowerings = lowerings;
  request.inputFile = doc.file;
  std::ifstream in(doc.file, std::ios::binary);
  request.inputText.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  request.fusionIndex = index;
  return buildPlan(fusion, *graph, verdicts, request);
}

} // namespace shardcheck::testing
