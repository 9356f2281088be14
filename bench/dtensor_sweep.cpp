// The DTensor placement sweep (issue 18, docs/dtensor.md): every pair of
// placements (Replicate, Shard(0), Shard(1), Partial(sum), Partial(avg) per
// mesh dim) of a 2-D tensor on the meshes 4, 2x2, 4x2 and 2x2x2, at an even
// and an uneven size, written as DTensor documents and read through dtensor/ as
// check-sharding reads them, the transition checked as an edge, a plan built
// where it is proved, and the plan run on the sim backend against the
// unsharded reference. Beside it, DTensor's own plan for the pair (the model
// of its greedy planner on CUDA, dtensor/DTensorPlan.h) and the bytes per
// device of both plans (the most one rank moves) as check-sharding reports
// them, under the one cost model (dtensor/PlanBytes.h, checker/CostModel.h).
//
//   dtensor-sweep [--pairs FILE.csv] [--emit-plans DIR] [MESH...]
//                 (default meshes: 4 2x2 4x2 2x2x2)
//
// Prints a Markdown table (one row per mesh and size), then one row per class
// of pairs not proved (the verdict and the reason: the mapping's rejection,
// or for an unsupported pair why no single collective and why no multi-step
// plan serves it), with counts and an example pair; the pairs proved by a
// multi-step plan (checker/Planner.h) are counted apart, with the mean bytes
// each device sends in their plans. --pairs writes one CSV line per pair
// (placements, verdict, both plans' bytes per device, why not proved).
// --emit-plans writes every plan built as DIR/NNNNN.json and their list as
// DIR/plans.txt, for `run-plan --backend mpi --batch DIR/plans.txt` under one
// mpirun (bench/dtensor_sweep_mpi.sh). It does not run DTensor (the
// recordings in corpus/dtensor are its own) and does not run MPI.
#include "checker/CheckDocument.h"
#include "checker/Planner.h"
#include "dtensor/DTensorInput.h"
#include "dtensor/DTensorReader.h"
#include "dtensor/PlanBytes.h"
#include "executor/sim/SimBackend.h"
#include "plan/Plan.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <string>
#include <vector>

using namespace shardcheck;

namespace {

const std::vector<std::string> kPlacements = {"Replicate()", "Shard(0)", "Shard(1)", "Partial(sum)",
                                              "Partial(avg)"};

struct Tally {
  int pairs = 0, rejected = 0, none = 0, collective = 0, planned = 0, matched = 0;
  int unsupported = 0, multiStep = 0, refuted = 0, unknown = 0;
  double multiStepBytes = 0; ///< Summed over the multi-step pairs (CostModel.h).
  // Bytes per device: DTensor's plan known (modelled), and where shardcheck
  // also planned the pair, both plans' sums and how they compare.
  int dtensorKnown = 0, compared = 0, less = 0, equal = 0, more = 0;
  double dtensorBytes = 0, shardcheckBytes = 0;
};

/// One pair's line of --pairs.
struct PairRow {
  std::string verdict = "rejected";
  std::string why; ///< Why it is not proved; empty when it is.
  std::optional<double> dtensorBytes, shardcheckBytes;
};

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
  return std::regex_replace(why, std::regex(R"(\d+)"), "N");
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

/// One pair of the sweep: where it is, for the reasons' examples.
struct Pair {
  std::string mesh, size; ///< `2x2`, `uneven`.
  std::vector<std::string> source, target;
};

/// A class of pairs not proved: how many, and the first one seen.
struct WhyClass {
  int count = 0;
  std::string example;
};
using Reasons = std::map<std::pair<std::string, std::string>, WhyClass>; ///< (verdict, why).

std::string pairText(const Pair &p) {
  auto list = [](const std::vector<std::string> &ps) {
    std::string t;
    for (const auto &x : ps)
      t += (t.empty() ? "" : ", ") + x;
    return "[" + t + "]";
  };
  return p.mesh + " " + p.size + " " + list(p.source) + " -> " + list(p.target);
}

/// Why the multi-step planner (checker/Planner.h) found no plan for a pair
/// no single collective serves. It says no more than the planner's moves
/// imply: at the uneven size no sharded axis divides, and the planner takes
/// its collective steps (Allgather, AllToAll, device permutations, a last
/// ReduceScatter) only between states whose axes divide, so from an uneven
/// state only local slices and a last Allreduce remain.
std::string plannerWhy(const Pair &p) {
  return p.size == "uneven"
             ? "no multi-step plan: the planner takes collective steps (Allgather, AllToAll, "
               "permutations, a last ReduceScatter) only between evenly divided states, and at "
               "this size every sharded state is uneven; local slices and a last Allreduce do "
               "not serve the pair"
             : "no multi-step plan within the planner's bounds (at most " +
                   std::to_string(kMaxSteps) + " steps, " + std::to_string(kMaxRounds) +
                   " rounds of refuted steps)";
}

/// Counts a pair not proved under its class; `row` keeps the reason.
void addReason(Reasons &reasons, const std::string &why, const Pair &p, PairRow &row) {
  row.why = why;
  WhyClass &c = reasons[{row.verdict, why}];
  if (c.count++ == 0)
    c.example = pairText(p);
}

/// Counts the verdict of a checked pair; returns why it is not proved
/// (empty when it is).
std::string tallyVerdict(const EdgeVerdict &v, const Pair &p, Tally &t) {
  switch (v.result) {
  case EdgeResult::Proved:
    if (hasProvedPlan(v))
      ++t.multiStep;
    else
      ++(v.lowering.kind == CommKind::None || v.lowering.kind == CommKind::Alias ? t.none
                                                                                 : t.collective);
    return "";
  case EdgeResult::Refuted:
    ++t.refuted;
    return reasonKey(v.reason);
  case EdgeResult::Unsupported:
    ++t.unsupported;
    return "no single collective: " + reasonKey(v.reason) + "; " + plannerWhy(p);
  case EdgeResult::Unknown:
  case EdgeResult::Unmodelled:
    ++t.unknown;
    return reasonKey(v.reason);
  }
  return "";
}

/// The verdict a pair is counted by: its transition's first edge not
/// proved, else the first that moves data, else the first (a transition
/// that creates a partial has the local partition's edges after it).
const EdgeVerdict &pairVerdict(const std::vector<EdgeVerdict> &verdicts) {
  for (const EdgeVerdict &v : verdicts)
    if (v.result != EdgeResult::Proved)
      return v;
  for (const EdgeVerdict &v : verdicts)
    if (hasProvedPlan(v) ||
        (v.lowering.kind != CommKind::None && v.lowering.kind != CommKind::Alias))
      return v;
  return verdicts.front();
}

/// Where --emit-plans writes the plans built, and their list.
struct PlanSink {
  std::string dir; ///< Empty: none written.
  std::ofstream list;
  int written = 0;

  void add(const Plan &plan) {
    if (dir.empty())
      return;
    char name[32];
    std::snprintf(name, sizeof name, "%05d.json", written++);
    std::ofstream(std::filesystem::path(dir) / name) << planToJsonText(plan);
    list << name << "\n";
  }
};

PairRow checkPair(DocumentChecker &checker, const Pair &p, const std::string &text, Tally &t,
                  Reasons &reasons, PlanSink &sink) {
  ++t.pairs;
  PairRow row;
  dtensor::DTensorCase c = dtensor::readDTensorCase(text, "sweep.json");
  if (dtensor::PlanBytes d = dtensor::dtensorPlanBytes(c); d.known())
    row.dtensorBytes = d.most();
  Document doc;
  try {
    doc = dtensor::readInputDocument(text, "sweep.json").doc;
  } catch (const InputError &e) {
    ++t.rejected;
    addReason(reasons, reasonKey(e.diagnostic().message), p, row);
    return row;
  }
  DocumentReport report = checker.check(doc);
  const FusionReport &f = report.fusions.at(0);
  if (f.verdicts.empty()) {
    ++t.unknown;
    row.verdict = "not checked";
    addReason(reasons, "no edge checked", p, row);
    return row;
  }
  const EdgeVerdict &v = pairVerdict(f.verdicts);
  static const char *const kResultNames[] = {"proved", "refuted", "unknown", "unsupported",
                                             "not modelled"};
  row.verdict = hasProvedPlan(v) ? "multi-step proved" : kResultNames[static_cast<int>(v.result)];
  if (std::string why = tallyVerdict(v, p, t); !why.empty())
    addReason(reasons, why, p, row);
  if (v.result == EdgeResult::Proved) {
    // The planner's price, as check-sharding reports it beside DTensor's.
    dtensor::PlanBytes s =
        dtensor::transitionPlanBytes(doc.fusions.at(0), f.verdicts, c.mesh.devices());
    if (s.known())
      row.shardcheckBytes = s.most();
    if (hasProvedPlan(v))
      t.multiStepBytes += s.most();
  }
  if (f.plan) {
    ++t.planned;
    t.matched += planRunsToAMatch(*f.plan);
    sink.add(*f.plan);
  }
  return row;
}

/// `4x2` as {4, 2}; nullopt unless every part is a number from 1 to 64
/// and there are at most 3 (the IR's DID types).
std::optional<std::vector<int64_t>> meshOf(const std::string &spec) {
  static const std::regex shape(R"(^[0-9]{1,2}(x[0-9]{1,2}){0,2}$)");
  if (!std::regex_match(spec, shape))
    return std::nullopt;
  std::vector<int64_t> mesh;
  for (size_t at = 0; at <= spec.size();) {
    size_t x = std::min(spec.find('x', at), spec.size());
    mesh.push_back(std::stoll(spec.substr(at, x - at)));
    if (mesh.back() < 1 || mesh.back() > 64)
      return std::nullopt;
    at = x + 1;
  }
  return mesh;
}

/// Prints `why` and the usage line to `out`; returns `status`.
int usage(std::FILE *out, const std::string &why, int status) {
  std::fprintf(
      out,
      "dtensor-sweep: %s\nusage: dtensor-sweep [--pairs FILE.csv] [--emit-plans DIR] [MESH...]   "
      "(MESH: e.g. 4, 2x2, 4x2, 2x2x2; default all four)\n",
      why.c_str());
  return status;
}

/// Text as one CSV field: quoted, its quotes doubled.
std::string csvField(const std::string &text) {
  return "\"" + std::regex_replace(text, std::regex("\""), "\"\"") + "\"";
}

/// A list of placements as one CSV field.
std::string placementsField(const std::vector<std::string> &ps) {
  std::string f;
  for (const auto &p : ps)
    f += (f.empty() ? "" : " ") + p;
  return csvField(f);
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

/// The pairs not proved, one row per class (verdict and reason), most
/// first, with the first pair of each.
void printReasons(const Reasons &reasons) {
  std::printf("\n| pairs | verdict | why (all meshes and sizes) | e.g. |\n|---|---|---|---|\n");
  std::vector<std::pair<int, Reasons::const_iterator>> sorted;
  for (auto it = reasons.begin(); it != reasons.end(); ++it)
    sorted.emplace_back(it->second.count, it);
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto &a, const auto &b) { return a.first > b.first; });
  for (const auto &[count, it] : sorted)
    std::printf("| %d | %s | %s | %s |\n", count, it->first.first.c_str(), it->first.second.c_str(),
                it->second.example.c_str());
}

} // namespace

int main(int argc, char **argv) {
  std::vector<std::string> meshes;
  std::ofstream pairs;
  PlanSink sink;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h")
      return usage(stdout, "the DTensor placement sweep (bench/README.md)", 0);
    if (arg == "--pairs") {
      if (i + 1 == argc)
        return usage(stderr, "--pairs needs a file", 2);
      pairs.open(argv[++i]);
      if (!pairs)
        return usage(stderr, "cannot write " + std::string(argv[i]), 2);
    } else if (arg == "--emit-plans") {
      if (i + 1 == argc)
        return usage(stderr, "--emit-plans needs a folder", 2);
      sink.dir = argv[++i];
      std::error_code ec;
      std::filesystem::create_directories(sink.dir, ec);
      sink.list.open(std::filesystem::path(sink.dir) / "plans.txt");
      if (ec || !sink.list)
        return usage(stderr, "cannot write plans into " + sink.dir, 2);
    } else if (!meshOf(arg)) {
      return usage(stderr, "not a flag or a mesh: '" + arg + "'", 2);
    } else {
      meshes.push_back(arg);
    }
  }
  if (meshes.empty())
    meshes = {"4", "2x2", "4x2", "2x2x2"};
  if (pairs.is_open())
    pairs << "mesh,shape,source,target,verdict,dtensor_bytes_per_device,"
             "shardcheck_bytes_per_device,why\n";
  std::printf("| mesh | size | pairs | rejected | none | one collective | multi-step | planned | "
              "sim match | unsupported | refuted | not modelled | multi-step bytes/device (mean) "
              "| DTensor plan known | compared | DTensor bytes/device | shardcheck bytes/device | "
              "shardcheck < / = / > DTensor | seconds |\n"
              "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  Reasons reasons;
  for (const std::string &spec : meshes) {
    std::vector<int64_t> mesh = *meshOf(spec);
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
          Pair pair{spec, label, src, dst};
          PairRow row =
              checkPair(checker, pair, documentText(mesh, shape, src, dst), t, reasons, sink);
          compareBytes(row, t);
          if (pairs.is_open())
            pairs << spec << "," << label << "," << placementsField(src) << ","
                  << placementsField(dst) << "," << row.verdict << ","
                  << bytesField(row.dtensorBytes) << "," << bytesField(row.shardcheckBytes) << ","
                  << csvField(row.why) << "\n";
        }
      double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      printRow(spec, label, shape, t, seconds);
    }
  }
  printReasons(reasons);
  return 0;
}
