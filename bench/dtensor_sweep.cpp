// The DTensor placement sweep (issue 18, docs/dtensor.md): every pair of
// placements (Replicate, Shard(0), Shard(1), Partial(sum) per mesh dim) of a
// 2-D tensor on the meshes 4, 2x2, 4x2 and 2x2x2, at an even and an uneven
// size, written as DTensor documents and read through dtensor/ as
// check-sharding reads them, the transition checked as an edge, a plan built
// where it is proved, and the plan run on the sim backend against the
// unsharded reference. Beside it, DTensor's own plan for the pair (the model
// of its greedy planner on CUDA, dtensor/DTensorPlan.h) and the bytes per
// device of both plans under one cost model (dtensor/BusBytes.h).
//
//   dtensor-sweep [--pairs FILE.csv] [MESH...]   (default: 4 2x2 4x2 2x2x2)
//
// Prints a Markdown table (one row per mesh and size) and the reasons of the
// pairs that are rejected or unsupported, with counts; the pairs proved by a
// multi-step plan (checker/Planner.h) are counted apart, with the mean bytes
// each device sends in their plans under the planner's cost model
// (pairBytesPerDevice, CostModel.h). --pairs writes one CSV line per pair
// (placements, verdict, both plans' bytes per device). It does not run
// DTensor (the recordings in corpus/dtensor are its own).
#include "checker/CheckDocument.h"
#include "checker/Planner.h"
#include "dtensor/BusBytes.h"
#include "dtensor/DTensorInput.h"
#include "dtensor/DTensorPlan.h"
#include "dtensor/DTensorReader.h"
#include "dtensor/DTensorToIr.h"
#include "executor/sim/SimBackend.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
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
  double multiStepBytes = 0; ///< Summed over the multi-step pairs (CostModel.h).
  // Bytes per device: DTensor's plan known (modelled), and where shardcheck
  // also planned the pair, both plans' sums and how they compare.
  int dtensorKnown = 0, compared = 0, less = 0, equal = 0, more = 0;
  double dtensorBytes = 0, shardcheckBytes = 0;
};

/// The bytes each device sends in the checker's plan of a proved pair
/// under the planner's cost model (CostModel.h): the multi-step plan's, or
/// the single lowering's.
std::optional<double> pairBytesPerDevice(const Fusion &fusion, const EdgeVerdict &v) {
  if (hasProvedPlan(v))
    return planBytesPerDevice(v.steps);
  FusionEdge edge;
  edge.producer = v.producer;
  edge.consumer = v.consumer;
  return loweringBytesPerDevice(fusion, edge, v.lowering);
}

/// One pair's line of --pairs.
struct PairRow {
  std::string verdict = "rejected";
  std::optional<double> dtensorBytes, shardcheckBytes;
};

/// Bytes per device of shardcheck's plan for the pair: the most any device
/// moves over the plan's collective steps (BusBytes.h): one collective or
/// none, or a multi-step plan's chain of them, summed per device.
double shardcheckPlanBytes(const Plan &plan) {
  std::map<int64_t, double> perDevice;
  for (const PlanStep &step : plan.steps) {
    if (step.kind != StepKind::Collective || !step.collective)
      continue;
    const PlanBuffer *buffer = plan.buffer(step.inputs.empty() ? step.output : step.inputs[0]);
    int elementSize = dataTypeSize(buffer ? buffer->dtype : DataType::Float);
    for (const PlanCount &count : step.counts) {
      auto team = std::find_if(step.teams.begin(), step.teams.end(), [&](const PlanTeam &t) {
        return std::count(t.devices.begin(), t.devices.end(), count.device) > 0;
      });
      int64_t in = count.in ? count.in->asConstant().value_or(0) : 0;
      int64_t out = count.out ? count.out->asConstant().value_or(0) : 0;
      perDevice[count.device] += dtensor::busBytes(
          *step.collective, in, out,
          team == step.teams.end() ? 0 : static_cast<int64_t>(team->devices.size()), elementSize);
    }
  }
  double most = 0;
  for (const auto &[_, b] : perDevice)
    most = std::max(most, b);
  return most;
}

/// DTensor's plan's bytes per device for the pair (its greedy plan on CUDA,
/// modelled), or nullopt where the model does not know it.
std::optional<double> dtensorPlanBytes(const std::string &text) {
  dtensor::DTensorCase c = dtensor::readDTensorCase(text, "sweep.json");
  dtensor::ModelledPlan model = dtensor::modelDTensorPlan(c, dtensor::DTensorBackend::Cuda);
  if (!model.plan)
    return std::nullopt;
  return dtensor::mostBytesPerRank(*model.plan, dataTypeSize(dtensor::dataTypeOf(c.dtype)));
}

/// Adds the pair's two plans' bytes to the tally.
void compareBytes(const PairRow &row, Tally &t) {
  t.dtensorKnown += row.dtensorBytes.has_value();
  if (!row.dtensorBytes || !row.shardcheckBytes)
    return;
  ++t.compared;
  t.dtensorBytes += *row.dtensorBytes;
  t.shardcheckBytes += *row.shardcheckBytes;
  double d = *row.shardcheckBytes - *row.dtensorBytes;
  ++(d < -1e-9 ? t.less : d > 1e-9 ? t.more : t.equal);
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

PairRow checkPair(DocumentChecker &checker, const std::string &text, Tally &t,
                  std::map<std::string, int> &why) {
  ++t.pairs;
  PairRow row;
  row.dtensorBytes = dtensorPlanBytes(text);
  Document doc;
  try {
    doc = dtensor::readInputDocument(text, "sweep.json").doc;
  } catch (const InputError &e) {
    ++t.rejected;
    ++why["rejected: " + reasonKey(e.diagnostic().message)];
    return row;
  }
  DocumentReport report = checker.check(doc);
  const FusionReport &f = report.fusions.at(0);
  if (f.verdicts.size() != 1) {
    ++t.unknown;
    ++why["no edge checked"];
    row.verdict = "not checked";
    return row;
  }
  const EdgeVerdict &v = f.verdicts[0];
  static const char *const kResultNames[] = {"proved", "refuted", "unknown", "unsupported",
                                             "not modelled"};
  row.verdict = hasProvedPlan(v) ? "multi-step proved" : kResultNames[static_cast<int>(v.result)];
  switch (v.result) {
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
    if (v.result == EdgeResult::Proved)
      row.shardcheckBytes = shardcheckPlanBytes(*f.plan);
  }
  return row;
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

/// A list of placements as one CSV field.
std::string placementsField(const std::vector<std::string> &ps) {
  std::string f;
  for (const auto &p : ps)
    f += (f.empty() ? "" : " ") + p;
  return "\"" + f + "\"";
}

std::string bytesField(const std::optional<double> &b) {
  return b ? std::to_string(static_cast<int64_t>(*b)) : "";
}

void printRow(const std::string &spec, const std::string &label, const std::vector<int64_t> &shape,
              const Tally &t, double seconds) {
  std::printf("| %s | %s [%lld, %lld] | %d | %d | %d | %d | %d | %d | %d | %d | %d | %d | %.0f "
              "| %d | %d | %.0f | %.0f | %d / %d / %d | %.1f |\n",
              spec.c_str(), label.c_str(), static_cast<long long>(shape[0]),
              static_cast<long long>(shape[1]), t.pairs, t.rejected, t.none, t.collective,
              t.multiStep, t.planned, t.matched, t.unsupported, t.refuted, t.unknown,
              t.multiStep ? t.multiStepBytes / t.multiStep : 0.0, t.dtensorKnown, t.compared,
              t.dtensorBytes, t.shardcheckBytes, t.less, t.equal, t.more, seconds);
  std::fflush(stdout);
}

} // namespace

int main(int argc, char **argv) {
  std::vector<std::string> meshes;
  std::ofstream pairs;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--pairs" && i + 1 < argc)
      pairs.open(argv[++i]);
    else
      meshes.push_back(argv[i]);
  }
  if (meshes.empty())
    meshes = {"4", "2x2", "4x2", "2x2x2"};
  if (pairs.is_open())
    pairs << "mesh,shape,source,target,verdict,dtensor_bytes_per_device,"
             "shardcheck_bytes_per_device\n";
  std::printf("| mesh | size | pairs | rejected | none | one collective | multi-step | planned | "
              "sim match | unsupported | refuted | not modelled | multi-step bytes/device (mean) "
              "| DTensor plan known | compared | DTensor bytes/device | shardcheck bytes/device | "
              "shardcheck < / = / > DTensor | seconds |\n"
              "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
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
        for (const auto &dst : lists) {
          PairRow row = checkPair(checker, documentText(mesh, shape, src, dst), t, why);
          compareBytes(row, t);
          if (pairs.is_open())
            pairs << spec << "," << label << "," << placementsField(src) << ","
                  << placementsField(dst) << "," << row.verdict << ","
                  << bytesField(row.dtensorBytes) << "," << bytesField(row.shardcheckBytes) << "\n";
        }
      double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      printRow(spec, label, shape, t, seconds);
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
