// Plans over the whole corpus, run on simulated devices.
//
// PlanCorpus (one test per corpus file): every fusion whose edges all prove
// gets a plan (checker lowerings), the plan round-trips through its JSON
// text unchanged, and runs on the sim backend with two seeds and bindings
// that satisfy its constraints; every tensor it writes must match the
// unsharded reference. The number of fusions run per file is pinned
// (kPlannedPerFile), so a regression that makes a fusion unplannable fails.
//
// RemeshSweep (one test per corpus file and device count n in 1 2 3 4 8):
// every fusion that tests/Remesh.h can move onto n devices is checked again;
// where every edge proves, it is planned and run (one seed). The number run
// per file and n is pinned (kRemeshedPerFile); remeshed fusions that do not
// prove are printed with the first edge's verdict. On one device every edge
// must be none or alias; on kLoweringCheckDevices every edge must get the
// same lowering kind as in the original fusion.
//
// Everything a test concludes is printed (PLAN-COUNT, REMESH-COUNT lines and
// one line per fusion); SHARDCHECK_REMESH_DUMP=1 also prints the remeshed
// tensors.
//
// Remesh: unit tests of remeshFusion itself.
#include "checker/Checker.h"
#include "checker/PlanBuilder.h"
#include "executor/BufferMap.h"
#include "executor/LocalBox.h"
#include "executor/LocalCompute.h"
#include "executor/sim/SimBackend.h"
#include "ir/FusionBuilder.h"
#include "ir/FusionGraph.h"
#include "ir/reader/DumpReader.h"
#include "plan/Plan.h"
#include "tests/Remesh.h"
#include "tests/TestPaths.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <tuple>

namespace fs = std::filesystem;
using namespace shardcheck;
using shardcheck::testutil::linearMeshSize;
using shardcheck::testutil::remeshFusion;

namespace {

// ---------------------------------------------------------------------------
// Pinned counts (measured; update together with the corpus or the checker).

/// Fusions per corpus file (by stem) whose edges all prove and whose plan runs
/// on the sim backend. Files not listed run none.
const std::map<std::string, int> kPlannedPerFile = {
    {"adversarial_alias_needs_same_layout", 1},
    {"adversarial_derived_did_extent", 1},
    {"adversarial_hostir_allgather_runtime_shapes", 1},
    {"adversarial_hostir_allreduce_without_reduction", 1},
    {"adversarial_hostir_broadcast_root_outside_team", 1},
    {"adversarial_hostir_gather_root_joins_team", 1},
    {"adversarial_hostir_gather_root_outside_team", 1},
    {"adversarial_hostir_reduce_for_gather", 1},
    {"adversarial_hostir_reducescatter_for_alltoall", 1},
    {"adversarial_hostir_reducescatter_team_order", 1},
    {"adversarial_hostir_sendrecv_receiver_first", 1},
    {"adversarial_hostir_sendrecv_root_is_receiver", 1},
    {"adversarial_reduction_initial_value", 1},
    {"alloc_gathered_axis_inner_hostir", 1},
    {"alloc_transposed_consumer_allgather", 1},
    {"bench_megatron_mlp_block", 1},
    {"hostir_allgather_then_linear_2025", 1},
    {"hostir_reducescatter_confirmed", 1},
    {"hostir_unnecessary_scatter", 1},
    {"hostir_wrong_collective_broadcast", 1},
    {"hostir_wrong_root_gather", 1},
    {"hostir_wrong_team_order", 1},
    {"lint_did_extent_mismatch", 1},
    {"lint_did_on_inner_split", 1},
    {"lint_duplicate_did", 1},
    {"mesh2d_allgather_didy", 1},
    {"mesh2d_nested_default_layout", 1},
    {"mesh2d_issue4604_allgather_didy", 1},
    {"mesh2d_reducescatter_didx", 1},
    {"mesh2d_stage_handoffs", 1},
    {"mesh2x4_allgather_two_steps", 1},
    {"mesh2x4_alltoall_didx_needs_permute", 1},
    {"mesh2x4_tp_dp_linear_allreduce", 1},
    {"mesh3d_allgather_didx", 1},
    {"op_broadcast_squeeze_expand", 1},
    {"op_linear_megatron_mlp", 1},
    {"op_linear_sequence_parallel_reducescatter", 1},
    {"op_matmul_k_sharded_and_batch_sharded", 1},
    {"op_permute_set_permute", 1},
    {"op_reshape_merge_2026", 1},
    {"op_tensor_outside_consumer_mesh", 1},
    {"op_view_split_sharded_axis", 1},
    {"op_where_casts_dtypes", 1},
    {"real_issue785_segmented_2023_truncated", 2},
    {"real_nvfuser_next_no_sharding", 2},
    {"real_pr2518_hostir_gather_two_stages", 1},
    {"real_pr2518_hostir_multiple_streams", 1},
    {"real_pr2518_hostir_single_fusion", 1},
    {"real_pr2518_hostir_staged_reduction", 1},
    {"real_pr2518_hostir_unsharded_allgather", 1},
    {"real_pr4387_stream_allgather_math", 1},
    // Host loops, planned with a loop step (docs/plan-format.md, "Loops").
    {"pipeline_stream_allgather_matmul_hostir", 1},
    // A CollectivePermute ring: swizzled slices and a ring step ("Rings").
    {"adversarial_ring_collective_permute_hostir", 1},
    {"real_pr4387_stream_allgather_hostir", 1},
    {"real_pr4387_stream_allreduce_hostir", 1},
    {"real_pr4387_stream_reducescatter_hostir", 1},
    {"real_tutorial_allgather_gather_scatter", 3},
    {"real_tutorial_pipeline_broadcast", 2},
    {"rule_allgather_1d_logical", 1},
    {"rule_allgather_1d_loopsplit_symbolic", 1},
    {"rule_allreduce_and_local_reduction", 1},
    {"rule_alltoall_1d_direct_allocation", 1},
    {"rule_alltoall_binary_op_needs_permute", 1},
    {"rule_broadcast_disjoint_meshes", 1},
    {"rule_gather_to_single_device", 1},
    {"rule_none_local_edges", 1},
    {"rule_reduce_to_single_device", 1},
    {"rule_reducescatter_1d", 1},
    {"rule_replicated_to_submesh", 1},
    {"rule_scatter_from_single_device", 1},
    {"rule_sendrecv_pipeline_stages", 1},
    {"seed_hostir_d4_variants", 2},
    {"seed_kernel_dump", 1},
    {"seed_repro1_after_resharding", 1},
    {"seed_repro1_before_resharding", 1},
    {"seed_repro1_hostir_allgather", 1},
    {"seed_repro2_after_resharding", 1},
    {"seed_repro2_before_resharding", 1},
    {"seed_repro2_hostir_scatter", 1},
    {"style_2023_no_mesh_compact_domains", 1},
    {"uneven_allgather_extent10_on4", 1},
    {"uneven_alltoall_extents7x5", 1},
    {"uneven_nested_allgather_extent10_on2x2", 1},
    {"uneven_reducescatter_extent5", 1},
    {"uneven_sharding_extent7", 1},
    {"style_multiblock_log", 3},
    {"style_old_mesh_commas_rfactor_leaf", 1},
    {"style_pre_sep2024_no_dtype_math", 1},
    {"style_scheduled_kernel_ptypes", 2},
    {"style_segmented_fusion", 1},
};

/// Device counts of the sweep.
constexpr std::array<int64_t, 5> kSweepDevices = {1, 2, 3, 4, 8};

/// The device count at which the sweep compares every edge's lowering kind
/// with the original fusion's (at n = 1 every edge must be none or alias).
constexpr int64_t kLoweringCheckDevices = 3;

/// Per file: fusions remeshed, proved and run at n = 1, 2, 3, 4, 8.
const std::map<std::string, std::array<int, 5>> kRemeshedPerFile = {
    {"adversarial_alias_needs_same_layout", {1, 1, 1, 1, 1}},
    {"adversarial_derived_did_extent", {0, 1, 0, 0, 0}},
    {"adversarial_hostir_allgather_runtime_shapes", {1, 1, 1, 1, 1}},
    {"adversarial_hostir_allreduce_without_reduction", {1, 1, 1, 1, 1}},
    {"adversarial_hostir_gather_root_outside_team", {0, 0, 1, 1, 1}},
    {"adversarial_hostir_reduce_for_gather", {1, 1, 1, 1, 1}},
    {"adversarial_hostir_reducescatter_for_alltoall", {1, 1, 1, 1, 1}},
    {"adversarial_matmul_m_times_k_sharded", {1, 0, 0, 0, 0}},
    {"adversarial_reduction_initial_value", {1, 1, 1, 1, 1}},
    // The ring is printed for 2 devices (its peers name D = 2): it remeshes
    // to n = 2 alone, where it is planned and run since rings have a plan.
    {"adversarial_ring_collective_permute_hostir", {0, 1, 0, 0, 0}},
    {"alloc_gathered_axis_inner_hostir", {1, 1, 1, 1, 1}},
    {"alloc_transposed_consumer_allgather", {1, 1, 1, 1, 1}},
    {"bench_megatron_mlp_block", {1, 1, 1, 1, 1}},
    {"hostir_allgather_then_linear_2025", {1, 1, 1, 1, 1}},
    {"hostir_reducescatter_confirmed", {1, 1, 1, 1, 1}},
    {"hostir_unnecessary_scatter", {1, 1, 1, 1, 1}},
    {"hostir_wrong_collective_broadcast", {1, 1, 1, 1, 1}},
    {"hostir_wrong_root_gather", {0, 0, 0, 1, 1}},
    {"lint_duplicate_did", {1, 1, 1, 1, 1}},
    {"op_broadcast_squeeze_expand", {1, 1, 1, 1, 1}},
    {"op_linear_megatron_mlp", {1, 1, 1, 1, 1}},
    {"op_linear_sequence_parallel_reducescatter", {1, 1, 1, 1, 1}},
    {"op_matmul_k_sharded_and_batch_sharded", {1, 1, 1, 1, 1}},
    {"op_permute_set_permute", {1, 1, 1, 1, 1}},
    {"op_where_casts_dtypes", {1, 1, 1, 1, 1}},
    {"real_pr2518_hostir_gather_two_stages", {1, 1, 1, 1, 1}},
    {"real_pr2518_hostir_staged_reduction", {1, 1, 1, 1, 1}},
    {"real_pr2518_hostir_unsharded_allgather", {1, 1, 1, 1, 1}},
    {"real_tutorial_allgather_gather_scatter", {3, 3, 3, 3, 3}},
    {"rule_allgather_1d_logical", {1, 1, 1, 1, 1}},
    {"rule_allgather_1d_loopsplit_symbolic", {1, 1, 1, 1, 1}},
    {"rule_allreduce_and_local_reduction", {1, 1, 1, 1, 1}},
    {"rule_alltoall_1d_direct_allocation", {1, 1, 1, 1, 1}},
    {"rule_alltoall_binary_op_needs_permute", {1, 1, 1, 1, 1}},
    {"rule_gather_to_single_device", {1, 1, 1, 1, 1}},
    {"rule_none_local_edges", {1, 1, 1, 1, 1}},
    {"rule_reduce_to_single_device", {1, 1, 1, 1, 1}},
    {"rule_reducescatter_1d", {1, 1, 1, 1, 1}},
    {"rule_replicated_to_submesh", {1, 1, 1, 1, 1}},
    {"rule_scatter_from_single_device", {1, 1, 1, 1, 1}},
    {"seed_hostir_d4_variants", {2, 2, 2, 2, 2}},
    {"seed_kernel_dump", {1, 1, 1, 1, 1}},
    {"seed_repro1_after_resharding", {1, 1, 1, 1, 1}},
    {"seed_repro1_before_resharding", {1, 1, 1, 1, 1}},
    {"seed_repro1_hostir_allgather", {1, 1, 1, 1, 1}},
    {"seed_repro2_after_resharding", {1, 1, 1, 1, 1}},
    {"seed_repro2_before_resharding", {1, 1, 1, 1, 1}},
    {"seed_repro2_hostir_scatter", {1, 1, 1, 1, 1}},
    {"style_multiblock_log", {3, 3, 3, 3, 3}},
    {"style_pre_sep2024_no_dtype_math", {1, 1, 1, 1, 1}},
    {"style_scheduled_kernel_ptypes", {2, 2, 2, 2, 2}},
    {"style_segmented_fusion", {1, 1, 1, 1, 1}},
};

/// The totals of kRemeshedPerFile per n (1, 2, 3, 4, 8), stated separately so
/// that the per-n floors are visible and a table edit must agree with them.
constexpr std::array<int, 5> kRemeshedTotals = {54, 55, 54, 55, 55};
/// The total of kPlannedPerFile.
constexpr int kPlannedTotal = 99;

// ---------------------------------------------------------------------------

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

std::string stemOf(const std::string &path) {
  return fs::path(path).stem().string();
}

std::string readText(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

std::string edgeName(const EdgeVerdict &v) {
  return "T" + std::to_string(v.producer) + " -> T" + std::to_string(v.consumer);
}

/// The checker's options here: a generous solver timeout. These tests are
/// about plans and runs, not solver speed, and a query that times out under
/// a loaded CI machine (the symbolic loop-split Allgather on 8 devices takes
/// seconds) would make the pinned counts flaky.
CheckOptions checkOptions() {
  CheckOptions o;
  o.timeoutMs = 120000;
  return o;
}

/// Why not every edge is proved with a lowering, or nullopt when all are.
std::optional<std::string> unprovedEdge(const std::vector<EdgeVerdict> &verdicts) {
  for (const auto &v : verdicts) {
    if (v.result != EdgeResult::Proved) {
      std::string why =
          edgeName(v) + ": " + v.loweringText() + " " + edgeResultStatusName(v.result);
      if (!v.reason.empty())
        why += " (" + v.reason + ")";
      else if (v.counterexample)
        why += " (" + v.counterexample->message + ")";
      return why;
    }
  }
  return std::nullopt;
}

/// Symbol values satisfying every constraint of `plan`: each symbol tries the
/// candidates in order, constraints are checked as soon as their symbols are
/// bound (backtracking).
std::optional<Bindings> chooseBindings(const Plan &plan) {
  std::set<std::string> names;
  for (const auto &s : planSymbols(plan))
    names.insert(s);
  for (const auto &c : plan.constraints) {
    c.lhs.collectSymbols(names);
    c.rhs.collectSymbols(names);
  }
  std::vector<std::string> order(names.begin(), names.end());
  static const std::vector<int64_t> kCandidates = {8, 16, 2, 4, 1, 3, 6, 12, 24};
  auto satisfied = [&](const PlanConstraint &c, const Bindings &b) -> std::optional<bool> {
    auto l = c.lhs.evaluate(b);
    if (!l)
      return std::nullopt;
    switch (c.kind) {
    case PlanConstraint::Kind::Positive:
      return *l >= 1;
    case PlanConstraint::Kind::Divisible: {
      auto r = c.rhs.evaluate(b);
      if (!r)
        return std::nullopt;
      return *r != 0 && *l % *r == 0;
    }
    case PlanConstraint::Kind::Equal: {
      auto r = c.rhs.evaluate(b);
      if (!r)
        return std::nullopt;
      return *l == *r;
    }
    }
    return false;
  };
  Bindings b;
  int64_t budget = 200000;
  std::function<bool(size_t)> search = [&](size_t i) -> bool {
    if (--budget < 0)
      return false;
    for (const auto &c : plan.constraints) {
      auto ok = satisfied(c, b);
      if (ok && !*ok)
        return false;
    }
    if (i == order.size())
      return true;
    for (int64_t v : kCandidates) {
      b[order[i]] = v;
      if (search(i + 1))
        return true;
    }
    b.erase(order[i]);
    return false;
  };
  if (!search(0))
    return std::nullopt;
  return b;
}

/// The result of taking one fusion through check, plan and run.
struct FusionOutcome {
  bool ran = false;                  ///< Planned and run (whether or not it matched).
  bool proved = false;               ///< Every edge proved.
  std::string why;                   ///< Why it was not run.
  std::vector<std::string> failures; ///< Round-trip or run failures.
  /// Per edge, when every edge proved: `T1 -> T2 Allgather+permute`.
  std::vector<std::string> lowerings;
};

std::string loweringKind(const EdgeVerdict &v) {
  return edgeName(v) + " " + commKindName(v.lowering.kind) +
         (v.lowering.localPermute ? "+permute" : "");
}

/// The dense descriptions against the enumerated ones: every buffer box
/// lists the same elements as BufferMap, and every dense compute form gives
/// bit-identical results to the index-map form on the same random buffers.
std::vector<std::string> denseAgreement(const Plan &plan, const Bindings &symbols) {
  std::vector<std::string> failures;
  FusionGraph graph = [&] {
    DiagnosticEngine diags;
    return *FusionGraph::build(plan.fusion, diags);
  }();
  BufferMap map(plan, graph, symbols);
  for (const PlanBuffer &b : plan.buffers)
    for (const PlanLocal &l : b.local)
      if (auto box = bufferBoxOf(plan, b, symbols, l.device);
          box && boxElements(*box) != map.elements(b, l.device))
        failures.push_back("the box of \"" + b.name + "\" on device " + std::to_string(l.device) +
                           " lists other elements than its layout");
  std::mt19937_64 rng(7);
  int denseForms = 0, forms = 0;
  for (const PlanStep &step : plan.steps) {
    if (step.kind != StepKind::Compute)
      continue;
    for (int64_t d : step.devices) {
      auto dense = buildDenseCompute(plan, step, d, symbols);
      ++forms;
      if (!dense)
        continue;
      ++denseForms;
      LocalCompute indexed;
      try {
        indexed = buildIndexedCompute(plan, graph, map, step, d, symbols);
      } catch (const std::exception &e) {
        failures.push_back("step " + step.output + " on device " + std::to_string(d) +
                           " has a dense form but no index form: " + e.what());
        continue;
      }
      std::map<std::string, std::vector<double>> values;
      for (const std::string &name : step.inputs)
        if (!name.empty())
          for (double &v :
               values[name] = std::vector<double>(map.elements(*plan.buffer(name), d).size()))
            v = std::ldexp(static_cast<double>(rng() % 2048) - 1024, -10);
      auto run = [&](const LocalCompute &c) {
        auto copy = values;
        copy[step.output].assign(static_cast<size_t>(c.outputSlots), 0.0);
        std::map<std::string, std::vector<double> *> buffers;
        for (auto &[name, v] : copy)
          buffers[name] = &v;
        runLocalComputeOnHost(c, plan.fusion, buffers, plan.buffer(step.output)->dtype, symbols);
        return copy[step.output];
      };
      auto same = [](const std::vector<double> &x, const std::vector<double> &y) {
        return std::equal(x.begin(), x.end(), y.begin(), y.end(), [](double a, double b) {
          return a == b || (std::isnan(a) && std::isnan(b));
        });
      };
      if (dense->outputSlots != indexed.outputSlots || !same(run(*dense), run(indexed)))
        failures.push_back("step " + step.output + " on device " + std::to_string(d) +
                           ": the dense form computes other values than the index form");
    }
  }
  std::cout << "DENSE-FORMS " << plan.inputFile << " fusion " << plan.fusionIndex << ": "
            << denseForms << " of " << forms << " compute steps x devices\n";
  return failures;
}

/// Checks `fusion`; if every edge proves, plans it, round-trips the plan
/// through JSON and runs it with each seed.
FusionOutcome checkPlanAndRun(const Fusion &fusion, const std::string &file,
                              const std::string &text, size_t index,
                              const std::vector<uint64_t> &seeds) {
  FusionOutcome out;
  DiagnosticEngine diags;
  auto graph = FusionGraph::build(fusion, diags);
  if (!graph) {
    out.why = "graph cannot be built";
    return out;
  }
  if (graph->edges().empty()) {
    out.why = "no edges";
    return out;
  }
  Checker checker(checkOptions());
  auto verdicts = checker.checkFusion(fusion, *graph);
  if (auto bad = unprovedEdge(verdicts)) {
    out.why = "not proved: " + *bad;
    return out;
  }
  out.proved = true;
  for (const auto &v : verdicts)
    out.lowerings.push_back(loweringKind(v));
  PlanRequest request;
  request.inputFile = file;
  request.inputText = text;
  request.fusionIndex = index;
  Plan plan;
  try {
    plan = buildPlan(fusion, *graph, verdicts, request);
  } catch (const PlanError &e) {
    out.why = std::string("PlanError: ") + e.what();
    return out;
  }
  out.ran = true;
  std::string json = planToJsonText(plan);
  Plan loaded;
  try {
    loaded = planFromJsonText(json, "x.json");
  } catch (const std::exception &e) {
    out.failures.push_back(std::string("plan does not load back from its JSON: ") + e.what());
    return out;
  }
  std::string again = planToJsonText(loaded);
  if (again != json) {
    size_t at = 0;
    while (at < json.size() && at < again.size() && json[at] == again[at])
      ++at;
    size_t from = at > 80 ? at - 80 : 0;
    out.failures.push_back("plan JSON is not stable through a round trip; first difference at " +
                           std::to_string(at) + ": written ..." + json.substr(from, 160) +
                           "... reloaded ..." + again.substr(from, 160) + "...");
  }
  auto bindings = chooseBindings(loaded);
  if (!bindings) {
    out.failures.push_back("no bindings from the candidates satisfy the plan's constraints");
    return out;
  }
  try {
    for (const auto &f : denseAgreement(loaded, *bindings))
      out.failures.push_back("dense forms: " + f);
  } catch (const std::exception &e) {
    out.failures.push_back(std::string("dense forms: threw: ") + e.what());
  }
  for (uint64_t seed : seeds) {
    try {
      SimBackend sim;
      RunReport r = runPlan(loaded, RunOptions{*bindings, seed, false, false}, sim);
      if (!r.matches())
        out.failures.push_back(describeRun(r));
      // The same run through index maps over local buffers, as GPU kernels
      // compute (executor/LocalCompute.h), must match too.
      RunReport indexed = runPlan(loaded, RunOptions{*bindings, seed, false, true}, sim);
      if (!indexed.matches())
        out.failures.push_back("indexed compute: " + describeRun(indexed));
    } catch (const std::exception &e) {
      out.failures.push_back("seed " + std::to_string(seed) + ", bindings " +
                             bindingsText(*bindings) + ": runPlan threw: " + e.what());
    }
  }
  return out;
}

std::string paramName(const std::string &path) {
  std::string n = stemOf(path);
  std::replace_if(
      n.begin(), n.end(), [](char c) { return !std::isalnum(static_cast<unsigned char>(c)); }, '_');
  return n;
}

// ---------------------------------------------------------------------------
// PlanCorpus: every proved corpus fusion, planned and run.

class PlanCorpusFile : public ::testing::TestWithParam<std::string> {};

TEST_P(PlanCorpusFile, ProvedFusionsRunOnSim) {
  const std::string path = GetParam();
  const std::string stem = stemOf(path);
  const std::string text = readText(path);
  Document doc = readDocumentFile(path);
  int ran = 0;
  std::ostringstream list;
  for (size_t i = 0; i < doc.fusions.size(); ++i) {
    SCOPED_TRACE(stem + " fusion " + std::to_string(i));
    FusionOutcome o = checkPlanAndRun(doc.fusions[i], path, text, i, {1, 2});
    list << "  fusion " << i << ": " << (o.ran ? "ran" : "not run: " + o.why) << "\n";
    if (o.ran)
      ++ran;
    for (const auto &f : o.failures)
      ADD_FAILURE() << stem << " fusion " << i << ": " << f;
  }
  auto it = kPlannedPerFile.find(stem);
  int expected = it == kPlannedPerFile.end() ? 0 : it->second;
  std::cout << "PLAN-COUNT " << stem << " " << ran << "\n" << list.str();
  EXPECT_EQ(ran, expected) << stem << ": fusions planned and run (pinned in kPlannedPerFile):\n"
                           << list.str();
}

INSTANTIATE_TEST_SUITE_P(PlanCorpus, PlanCorpusFile, ::testing::ValuesIn(corpusFiles()),
                         [](const auto &info) { return paramName(info.param); });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(PlanCorpusFile);

TEST(PlanCorpusTables, NameExistingFilesAndAddUp) {
  std::set<std::string> stems;
  for (const auto &f : corpusFiles())
    stems.insert(stemOf(f));
  int total = 0;
  for (const auto &[stem, count] : kPlannedPerFile) {
    EXPECT_TRUE(stems.count(stem)) << "kPlannedPerFile names a missing corpus file " << stem;
    total += count;
  }
  EXPECT_EQ(total, kPlannedTotal);
  std::array<int, 5> totals{};
  for (const auto &[stem, counts] : kRemeshedPerFile) {
    EXPECT_TRUE(stems.count(stem)) << "kRemeshedPerFile names a missing corpus file " << stem;
    for (size_t k = 0; k < counts.size(); ++k)
      totals[k] += counts[k];
  }
  for (size_t k = 0; k < totals.size(); ++k)
    EXPECT_EQ(totals[k], kRemeshedTotals[k]) << "n = " << kSweepDevices[k];
  std::cout << "planned and run: " << total << " fusions; remeshed, proved and run:";
  for (size_t k = 0; k < totals.size(); ++k)
    std::cout << " n=" << kSweepDevices[k] << ": " << totals[k];
  std::cout << "\n";
}

// ---------------------------------------------------------------------------
// RemeshSweep: every remeshable corpus fusion at 1, 2, 3, 4 and 8 devices.

using SweepParam = std::tuple<std::string, size_t>; // file, index into kSweepDevices

class RemeshSweepFile : public ::testing::TestWithParam<SweepParam> {};

TEST_P(RemeshSweepFile, ProvedFusionsRunOnSim) {
  const std::string path = std::get<0>(GetParam());
  const size_t k = std::get<1>(GetParam());
  const int64_t n = kSweepDevices[k];
  const std::string stem = stemOf(path);
  const std::string text = readText(path);
  Document doc = readDocumentFile(path);
  int ran = 0;
  std::ostringstream list;
  for (size_t i = 0; i < doc.fusions.size(); ++i) {
    SCOPED_TRACE(stem + " fusion " + std::to_string(i) + " on " + std::to_string(n) + " devices");
    std::string whyNot;
    auto remeshed = remeshFusion(doc.fusions[i], n, &whyNot);
    if (!remeshed) {
      list << "  fusion " << i << ": not remeshed: " << whyNot << "\n";
      continue;
    }
    if (std::getenv("SHARDCHECK_REMESH_DUMP")) // debugging aid: the remeshed tensors
      for (const auto &[num, tv] : remeshed->tensors)
        std::cout << "  " << stem << "[" << i << "] n=" << n << ": " << remeshed->tensorStr(num)
                  << "\n";
    FusionOutcome o = checkPlanAndRun(*remeshed, path, text, i, {1});
    if (o.proved && n == 1) {
      // One device holds everything: no edge may need a collective.
      for (const auto &l : o.lowerings)
        if (!l.ends_with(" none") && !l.ends_with(" alias"))
          ADD_FAILURE() << stem << " fusion " << i << " on 1 device: " << l;
    }
    if (o.proved && n == kLoweringCheckDevices) {
      // Same shardings on another device count: the same collectives (the
      // originals are checked again here, so only at one n, to save time).
      DiagnosticEngine diags;
      auto graph = FusionGraph::build(doc.fusions[i], diags);
      ASSERT_TRUE(graph.has_value());
      Checker checker(checkOptions());
      auto verdicts = checker.checkFusion(doc.fusions[i], *graph);
      ASSERT_EQ(verdicts.size(), o.lowerings.size());
      for (size_t e = 0; e < verdicts.size(); ++e)
        EXPECT_EQ(o.lowerings[e], loweringKind(verdicts[e]))
            << stem << " fusion " << i << " on " << n << " devices vs the original";
    }
    if (o.ran) {
      ++ran;
      list << "  fusion " << i << ": ran\n";
    } else {
      list << "  fusion " << i << ": remeshed, not run: " << o.why << "\n";
      if (!o.proved)
        std::cout << "REMESH-NOT-PROVED " << stem << " fusion " << i << " n=" << n << ": " << o.why
                  << "\n";
    }
    for (const auto &f : o.failures)
      ADD_FAILURE() << stem << " fusion " << i << " remeshed onto " << n << " devices: " << f;
  }
  auto it = kRemeshedPerFile.find(stem);
  int expected = it == kRemeshedPerFile.end() ? 0 : it->second[k];
  std::cout << "REMESH-COUNT " << stem << " " << n << " " << ran << "\n" << list.str();
  EXPECT_EQ(ran, expected) << stem << " on " << n
                           << " devices: fusions remeshed, proved and run (pinned in "
                              "kRemeshedPerFile):\n"
                           << list.str();
}

std::vector<SweepParam> sweepParams() {
  std::vector<SweepParam> r;
  for (const auto &f : corpusFiles())
    for (size_t k = 0; k < kSweepDevices.size(); ++k)
      r.emplace_back(f, k);
  return r;
}

INSTANTIATE_TEST_SUITE_P(RemeshSweep, RemeshSweepFile, ::testing::ValuesIn(sweepParams()),
                         [](const auto &info) {
                           return paramName(std::get<0>(info.param)) + "_n" +
                                  std::to_string(kSweepDevices[std::get<1>(info.param)]);
                         });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(RemeshSweepFile);

// ---------------------------------------------------------------------------
// Remesh: remeshFusion itself.

DeviceMesh mesh1d(int64_t n) {
  std::vector<int64_t> d(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    d[static_cast<size_t>(i)] = i;
  return DeviceMesh::linear(d);
}

TEST(Remesh, AllgatherFromTwoToFourDevices) {
  // x[DIDx{2}, 8] -> Set -> y[2, 8]: the gathered axis has 2 on 2 devices,
  // so 4 on 4; the unsharded axis keeps 8.
  FusionBuilder b;
  IdNum xd = b.iter(2, ParallelType::DIDx), x8 = b.iter(8);
  TensorNum x = b.tensor({xd, x8}, mesh1d(2));
  IdNum y2 = b.iter(2), y8 = b.iter(8);
  TensorNum y = b.tensor({y2, y8}, mesh1d(2));
  b.set(x, y);
  Fusion f = b.take();
  std::string why;
  auto g = remeshFusion(f, 4, &why);
  ASSERT_TRUE(g.has_value()) << why;
  EXPECT_EQ(g->tensor(x).mesh, mesh1d(4));
  EXPECT_EQ(g->tensor(y).mesh, mesh1d(4));
  EXPECT_EQ(g->id(xd).extent, Extent::constant(4));
  EXPECT_EQ(g->id(xd).parallel, ParallelType::DIDx);
  EXPECT_EQ(g->id(y2).extent, Extent::constant(4));
  EXPECT_EQ(g->id(x8).extent, Extent::constant(8));
  EXPECT_EQ(g->id(y8).extent, Extent::constant(8));
  EXPECT_EQ(g->tensorStr(x), "T0_g_float[ideviceIdx.x1{4}, iS2{8}] (DeviceMesh{0 1 2 3})");
  EXPECT_EQ(g->tensorStr(y), "T1_g_float[iS3{4}, iS4{8}] (DeviceMesh{0 1 2 3})");
  // And it proves and runs.
  FusionOutcome o = checkPlanAndRun(*g, "unit", "", 0, {1});
  EXPECT_TRUE(o.ran) << o.why;
  for (const auto &fail : o.failures)
    ADD_FAILURE() << fail;
}

TEST(Remesh, LoopSplitScalesOuterSplitFactor) {
  // x[12] outer-split by 2 (DIDx) -> [2, 6]; onto 3 devices the axis is 18,
  // split by 3 -> [3, 6]: each device keeps 6.
  FusionBuilder b;
  IdNum xi = b.iter(12);
  auto [xo, xin] = b.split(xi, 2, /*innerSplit=*/false, ParallelType::DIDx);
  TensorNum x = b.tensor({xi}, mesh1d(2), {xo, xin});
  IdNum yi = b.iter(12);
  TensorNum y = b.tensor({yi}, mesh1d(2));
  b.set(x, y);
  Fusion f = b.take();
  std::string why;
  auto g = remeshFusion(f, 3, &why);
  ASSERT_TRUE(g.has_value()) << why;
  EXPECT_EQ(g->id(xi).extent, Extent::constant(18));
  EXPECT_EQ(g->id(yi).extent, Extent::constant(18));
  EXPECT_EQ(g->id(xo).extent, Extent::constant(3));
  EXPECT_EQ(g->id(xin).extent, Extent::constant(6));
  ASSERT_NE(g->definition(xo), nullptr);
  EXPECT_EQ(g->definition(xo)->factor, Extent::constant(3));
  EXPECT_FALSE(g->definition(xo)->innerSplit);
}

TEST(Remesh, InnerSplitKeepsFactor) {
  // x[8] inner-split by 4: outer DIDx{2}, inner 4. Onto 4 devices: [16] ->
  // DIDx{4}, 4.
  FusionBuilder b;
  IdNum xi = b.iter(8);
  auto [xo, xin] = b.split(xi, 4, /*innerSplit=*/true, ParallelType::DIDx);
  TensorNum x = b.tensor({xi}, mesh1d(2), {xo, xin});
  TensorNum y = b.tensor({b.iter(8)}, mesh1d(2));
  b.set(x, y);
  Fusion f = b.take();
  std::string why;
  auto g = remeshFusion(f, 4, &why);
  ASSERT_TRUE(g.has_value()) << why;
  EXPECT_EQ(g->id(xi).extent, Extent::constant(16));
  EXPECT_EQ(g->id(xo).extent, Extent::constant(4));
  EXPECT_EQ(g->id(xin).extent, Extent::constant(4));
  EXPECT_EQ(g->definition(xo)->factor, Extent::constant(4));
}

TEST(Remesh, TwoDimensionalMeshIsNotApplicable) {
  FusionBuilder b;
  auto mesh = DeviceMesh::create({2, 2}, {0, 1, 2, 3});
  TensorNum x =
      b.tensor({b.iter(2, ParallelType::DIDy), b.iter(2, ParallelType::DIDx), b.iter(3)}, mesh);
  TensorNum y = b.tensor({b.iter(2, ParallelType::DIDy), b.iter(2), b.iter(3)}, mesh);
  b.set(x, y);
  Fusion f = b.take();
  std::string why;
  EXPECT_FALSE(remeshFusion(f, 4, &why).has_value());
  EXPECT_NE(why.find("2-D mesh"), std::string::npos) << why;
}

TEST(Remesh, DeviceOutsideTheNewMeshIsNotApplicable) {
  // A stage on device {1} cannot move onto one device.
  FusionBuilder b;
  TensorNum x = b.tensor({b.iter(2, ParallelType::DIDx)}, mesh1d(2));
  TensorNum y = b.tensor({b.iter(2)}, DeviceMesh::linear({1}));
  b.set(x, y);
  Fusion f = b.take();
  std::string why;
  EXPECT_FALSE(remeshFusion(f, 1, &why).has_value());
  EXPECT_NE(why.find("device 1"), std::string::npos) << why;
  EXPECT_TRUE(remeshFusion(f, 2, &why).has_value()) << why;
}

TEST(Remesh, UnevenShardedAxisIsNotApplicable) {
  FusionBuilder b;
  IdNum xi = b.iter(7);
  auto [xo, xin] = b.split(xi, 2, /*innerSplit=*/false, ParallelType::DIDx);
  (void)xin;
  TensorNum x = b.tensor({xi}, mesh1d(2), {xo, xin});
  TensorNum y = b.tensor({b.iter(7)}, mesh1d(2));
  b.set(x, y);
  Fusion f = b.take();
  std::string why;
  EXPECT_FALSE(remeshFusion(f, 4, &why).has_value());
  EXPECT_NE(why.find("not divisible"), std::string::npos) << why;
}

TEST(Remesh, OwnDeviceCountIsTheIdentityOnTheCorpus) {
  // remeshFusion(f, D) must print every tensor and transform as f does.
  int checked = 0;
  for (const auto &path : corpusFiles()) {
    Document doc = readDocumentFile(path);
    for (size_t i = 0; i < doc.fusions.size(); ++i) {
      const Fusion &f = doc.fusions[i];
      auto D = linearMeshSize(f);
      if (!D)
        continue;
      auto g = remeshFusion(f, *D, nullptr);
      if (!g)
        continue;
      ++checked;
      for (const auto &[num, tv] : f.tensors)
        EXPECT_EQ(g->tensorStr(num), f.tensorStr(num)) << stemOf(path) << " fusion " << i;
      for (const auto &[num, id] : f.ids)
        EXPECT_EQ(g->id(num).str(), id.str()) << stemOf(path) << " fusion " << i;
      ASSERT_EQ(g->transforms.size(), f.transforms.size());
      for (size_t t = 0; t < f.transforms.size(); ++t)
        EXPECT_EQ(g->transforms[t].factor, f.transforms[t].factor)
            << stemOf(path) << " fusion " << i;
    }
  }
  EXPECT_GT(checked, 10);
}

} // namespace
