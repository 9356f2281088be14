// The checking pipeline as a library call; see CheckDocument.h.
#include "checker/CheckDocument.h"

#include "checker/PlanChain.h"
#include "ir/ExprShape.h"
#include "ir/FusionGraph.h"
#include "ir/HostLoops.h"
#include "ir/Lints.h"
#include "util/Checked.h"

#include <algorithm>
#include <set>

namespace shardcheck {

namespace {

/// Tensors no checked edge computes: outputs no expression read defines, and
/// outputs of expressions without a tensor operand (`full`, or an operand
/// the reader took for a scalar). Nothing about them was checked and their
/// plan steps rest on no verdict. In a kernel or a JSON IR fusion that makes
/// the run unknown; a host IR program printed on one device routinely leaves
/// outputs to another device's program (or to a PostOnStream the reader
/// skips), so there an uncomputed output is a note. An output a host loop
/// writes slice by slice (ir/HostLoops.h) is computed: its writers' edges
/// and loop claims check it.
std::vector<UncheckedTensor> uncheckedTensors(const Fusion &fusion) {
  std::vector<UncheckedTensor> r;
  auto unknown = [&](TensorNum t, const std::string &why, const SourceLoc &loc) {
    r.push_back({t, true,
                 Diagnostic{Severity::Warning,
                            "unknown",
                            fusion.tensor(t).name() + " " + why + ": its sharding is not checked",
                            loc,
                            {}}});
  };
  bool hostIr = fusion.kind == BlockKind::HostIr;
  std::vector<TensorNum> loopWritten = loopWrittenBases(fusion);
  for (TensorNum t : uncomputedOutputs(fusion)) {
    if (std::find(loopWritten.begin(), loopWritten.end(), t) != loopWritten.end())
      continue;
    if (!hostIr) {
      unknown(t, "is a fusion output, but no expression shardcheck read defines it",
              fusion.tensor(t).loc);
      continue;
    }
    r.push_back({t, false,
                 Diagnostic{Severity::Note,
                            "unknown",
                            fusion.tensor(t).name() +
                                " is a fusion output this host IR program does not compute "
                                "(another device's program or a skipped statement may): not "
                                "checked here",
                            fusion.tensor(t).loc,
                            {}}});
  }
  for (const Expr &e : fusion.exprs)
    if (e.tensorInputs().empty())
      for (TensorNum t : e.outputs)
        unknown(t, "is defined by `" + shownToken(e.op) + "` from no tensor operand", e.loc);
  return r;
}

/// The verdicts with repeats left out: `T1 = T0 + T0` reads T0 twice, gives
/// two edges with the same verdict, and is reported as one edge. Verdicts
/// that differ (operands in different roles) are all kept.
std::vector<EdgeVerdict> reportedOnce(std::vector<EdgeVerdict> verdicts) {
  auto key = [](const EdgeVerdict &v) {
    return std::to_string(v.expr) + "|" + std::to_string(v.producer) + "|" +
           std::to_string(v.consumer) + "|" + v.lowering.str() + "|" +
           std::to_string(static_cast<int>(v.result)) + "|" + v.reason +
           (v.compiler ? "|compiler" : "");
  };
  std::set<std::string> seen;
  std::vector<EdgeVerdict> r;
  for (auto &v : verdicts)
    if (seen.insert(key(v)).second)
      r.push_back(std::move(v));
  return r;
}

} // namespace

bool DocumentReport::readable() const {
  return std::all_of(fusions.begin(), fusions.end(),
                     [](const FusionReport &f) { return f.readable(); });
}

DocumentChecker::DocumentChecker(DocumentOptions options)
    : options_(std::move(options)), checker_(options_.check) {}

FusionReport DocumentChecker::checkFusion(const Document &doc, size_t index) {
  const Fusion &fusion = doc.fusions[index];
  FusionReport r;
  r.index = index;
  DiagnosticEngine diags;
  lintFusion(fusion, diags);
  auto graph = FusionGraph::build(fusion, diags);
  r.lints = diags.diagnostics();
  if (!graph) {
    r.graphBuilt = false;
    return r;
  }
  // Bad input the readers could not see (a size that overflows only once
  // derived) surfaces here; the fusion then counts as unreadable.
  try {
    r.verdicts = checker_.checkFusion(fusion, *graph);
    r.unchecked = uncheckedTensors(fusion);
    const auto &plan = options_.plan;
    if (plan && plan->fusion == index) {
      PlanRequest request;
      request.lowerings = plan->lowerings;
      request.inputFile = doc.file;
      request.inputText = plan->inputText;
      request.fusionIndex = index;
      request.devices = options_.check.devices;
      try {
        // Edges with a multi-step plan are planned as their chains of steps.
        if (auto chained = chainPlannedEdges(fusion, *graph, r.verdicts,
                                             plan->lowerings == PlanRequest::Lowerings::Compiler))
          r.plan = buildPlan(chained->fusion, chained->graph, chained->verdicts, request);
        else
          r.plan = buildPlan(fusion, *graph, r.verdicts, request);
      } catch (const PlanError &e) {
        r.noPlan = e;
      }
    }
    // After the plan, which rests on every edge's verdict.
    r.verdicts = reportedOnce(std::move(r.verdicts));
  } catch (const InputError &e) {
    Diagnostic d = e.diagnostic();
    if (d.loc.file.empty())
      d.loc = fusion.loc;
    r.inputError = std::move(d);
  }
  return r;
}

DocumentReport DocumentChecker::check(const Document &doc) {
  DocumentReport report;
  report.file = doc.file;
  if (doc.truncated)
    report.truncated = Diagnostic{
        Severity::Warning, "truncated-input", doc.truncated->message, doc.truncated->loc, {}};
  for (size_t i = 0; i < doc.fusions.size(); ++i)
    report.fusions.push_back(checkFusion(doc, i));
  return report;
}

DocumentReport checkDocument(const Document &doc, const DocumentOptions &options) {
  return DocumentChecker(options).check(doc);
}

} // namespace shardcheck
