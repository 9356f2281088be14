// The DTensor placement sweep (issue 18, docs/dtensor.md): every pair of
// placements (Replicate, Shard(0), Shard(1), Partial(sum) per mesh dim) of a
// 2-D tensor on the meshes 4, 2x2, 4x2 and 2x2x2, at an even and an uneven
// size, written as DTensor documents and read through dtensor/ as
// check-sharding reads them, the transition checked as an edge, a plan built
// where it is proved, and the plan run on the sim backend against the
// unsharded reference.
//
//   dtensor-sweep [MESH...]      (default: 4 2x2 4x2 2x2x2)
//
// Prints a Markdown table (one row per mesh and size) and the reasons of the
// pairs that are rejected or unsupported, with counts; the pairs proved by a
// multi-step plan (checker/Planner.h) are counted apart, with the bytes each
// device sends in their plans (pairBytesPerDevice, CostModel.h). It does not
// compare with DTensor's own plans (the recordings in corpus/dtensor do that).
#include "checker/CheckDocument.h"
#include "checker/Planner.h"
#include "dtensor/DTensorInput.h"
#include "executor/sim/SimBackend.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <regex>
#include <string>
#include <vector>

using namespace shardcheck;

namespace {

const std::vector<std::string> kPlacements = {"Replicate()", "Shard(0)", "Shard(1)",
                                              "Partial(sum)"};

struct Tally {
  int pairs = 0, rejected = 0, none = 0, collective = 0, planned = 0, matched = 0;
  int unsupported = 0, multiStep = 0, refuted = 0, unknown = 0;
  double multiStepBytes = 0; ///< Summed over the multi-step pairs.
};

/// The bytes each device sends in the checker's plan of a proved pair:
/// the multi-step plan's, or the single lowering's (CostModel.h).
std::optional<double> pairBytesPerDevice(const Fusion &fusion, const EdgeVerdict &v) {
  if (hasProvedPlan(v))
    return planBytesPerDevice(v.steps);
  FusionEdge edge;
  edge.producer = v.producer;
  edge.consumer = v.consumer;
  return loweringBytesPerDevice(fusion, edge, v.lowering);
}

/// Every placement list of `dims` mesh dims.
std::vector<std::vector<std::string>> placementLists(size_t dims) {
  std::vector<std::vector<std::string>> lists = {{}};
  for (size_t d = 0; d < dims; ++d) {
    std::vector<std::vector<std::string>> next;
    for (const auto &l : lists)
      for (const auto &p : kPlacements) {
        next.push_back(l);
        next.back().push_back(p);
      }
    lists = next;
  }
  return lists;
}

std::string documentText(const std::vector<int64_t> &mesh, const std::vector<int64_t> &shape,
                         const std::vector<std::string> &src, const std::vector<std::string> &dst) {
  std::vector<int64_t> devices;
  int64_t n = 1;
  for (int64_t s : mesh)
    n *= s;
  for (int64_t d = 0; d < n; ++d)
    devices.push_back(d);
  nlohmann::json doc = {{"format", "shardcheck-dtensor/1"},
                        {"mesh", {{"shape", mesh}, {"devices", devices}}},
                        {"tensor", {{"shape", shape}}},
                        {"source", {{"placements", src}}},
                        {"target", {{"placements", dst}}}};
  return doc.dump();
}

/// A reason without its numbers and names, so that like reasons count as one.
std::string reasonKey(std::string why) {
  why = std::regex_replace(why, std::regex(R"(T\d+)"), "T");
  why = std::regex_replace(why, std::regex(R"(\b[a-zA-Z]+\d+\{[^}]*\})"), "ID");
  why = std::regex_replace(why, std::regex(R"(\(\d[\d ]*\))"), "(..)");
  why = std::regex_replace(why, std::regex(R"(\d+)"), "N");
  return why.substr(0, 110);
}

bool planRunsToAMatch(const Plan &plan) {
  auto bindings = satisfyingBindings(plan, {});
  if (!bindings)
    return false;
  try {
    SimBackend sim;
    return runPlan(plan, RunOptions{*bindings, 1, false, false}, sim).matches();
  } catch (const std::exception &) {
    return false;
  }
}

void checkPair(DocumentChecker &checker, const std::string &text, Tally &t,
               std::map<std::string, int> &why) {
  ++t.pairs;
  Document doc;
  try {
    doc = dtensor::readInputDocument(text, "sweep.json").doc;
  } catch (const InputError &e) {
    ++t.rejected;
    ++why["rejected: " + reasonKey(e.diagnostic().message)];
    return;
  }
  DocumentReport report = checker.check(doc);
  const FusionReport &f = report.fusions.at(0);
  if (f.verdicts.size() != 1) {
    ++t.unknown;
    ++why["no edge checked"];
    return;
  }
  const EdgeVerdict &v = f.verdicts[0];
  switch (edgeResult(v)) {
  case EdgeResult::Proved:
    if (hasProvedPlan(v)) {
      ++t.multiStep;
      t.multiStepBytes += pairBytesPerDevice(doc.fusions.at(0), v).value_or(0);
    } else {
      ++(v.lowering.kind == CommKind::None || v.lowering.kind == CommKind::Alias ? t.none
                                                                                 : t.collective);
    }
    break;
  case EdgeResult::Refuted:
    ++t.refuted;
    ++why["refuted: " + reasonKey(v.reason)];
    break;
  case EdgeResult::Unsupported:
    ++t.unsupported;
    ++why["unsupported: " + reasonKey(v.reason)];
    break;
  case EdgeResult::Unknown:
  case EdgeResult::Unmodelled:
    ++t.unknown;
    ++why["unknown: " + reasonKey(v.reason)];
    break;
  }
  if (f.plan) {
    ++t.planned;
    t.matched += planRunsToAMatch(*f.plan);
  }
}

std::vector<int64_t> meshOf(const std::string &spec) {
  std::vector<int64_t> mesh;
  size_t at = 0;
  while (at < spec.size()) {
    size_t x = spec.find('x', at);
    mesh.push_back(std::stoll(spec.substr(at, x == std::string::npos ? x : x - at)));
    at = x == std::string::npos ? spec.size() : x + 1;
  }
  return mesh;
}

} // namespace

int main(int argc, char **argv) {
  std::vector<std::string> meshes = {"4", "2x2", "4x2", "2x2x2"};
  if (argc > 1)
    meshes.assign(argv + 1, argv + argc);
  std::printf("| mesh | size | pairs | rejected | none | one collective | multi-step | planned | "
              "sim match | unsupported | refuted | not modelled | multi-step bytes/device (mean) "
              "| seconds |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  std::map<std::string, int> why;
  for (const std::string &spec : meshes) {
    std::vector<int64_t> mesh = meshOf(spec);
    int64_t n = 1;
    for (int64_t s : mesh)
      n *= s;
    // Even: every nesting divides; uneven: neither dim divides by any mesh dim > 1.
    for (const auto &[label, shape] : std::vector<std::pair<std::string, std::vector<int64_t>>>{
             {"even", {2 * n, n}}, {"uneven", {n + 1, n + 3}}}) {
      Tally t;
      // One checker per row: structurally equal edges and planner steps of
      // different pairs are decided once (the plans' input hash is left empty).
      DocumentOptions options;
      options.plan = PlanOptions{0, PlanRequest::Lowerings::Checker, ""};
      DocumentChecker checker(options);
      auto start = std::chrono::steady_clock::now();
      auto lists = placementLists(mesh.size());
      for (const auto &src : lists)
        for (const auto &dst : lists)
          checkPair(checker, documentText(mesh, shape, src, dst), t, why);
      double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      std::printf(
          "| %s | %s [%lld, %lld] | %d | %d | %d | %d | %d | %d | %d | %d | %d | %d | %.0f | "
          "%.1f |\n",
          spec.c_str(), label.c_str(), static_cast<long long>(shape[0]),
          static_cast<long long>(shape[1]), t.pairs, t.rejected, t.none, t.collective, t.multiStep,
          t.planned, t.matched, t.unsupported, t.refuted, t.unknown,
          t.multiStep ? t.multiStepBytes / t.multiStep : 0.0, seconds);
      std::fflush(stdout);
    }
  }
  std::printf("\n| count | why (all meshes and sizes) |\n|---|---|\n");
  std::vector<std::pair<int, std::string>> sorted;
  for (const auto &[k, count] : why)
    sorted.emplace_back(count, k);
  std::sort(sorted.rbegin(), sorted.rend());
  for (const auto &[count, k] : sorted)
    std::printf("| %d | %s |\n", count, k.c_str());
  return 0;
}
