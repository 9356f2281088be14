// The checking pipeline as one library call (MLIR's MlirOptMain model):
// checkDocument(doc, options) lints every fusion of a read document, builds
// its edge graph, decides every edge (Checker), names the tensors no checked
// edge computes and, when asked, builds the plan of one fusion. The result,
// a DocumentReport, keeps the verdicts (EdgeVerdict, with their closed
// results edgeResult/compilerResult) apart from the diagnostics (lints, input
// errors found while checking), so callers never sort one back out of the
// other.
//
// This file does not read files, parse command lines, print, summarize or
// choose exit statuses: tools/check_sharding does that over DocumentReports.
#pragma once

#include "checker/Checker.h"
#include "checker/PlanBuilder.h"
#include "ir/Fusion.h"
#include "plan/Plan.h"
#include "util/Diagnostics.h"

#include <optional>
#include <string>
#include <vector>

namespace shardcheck {

/// Which fusion to plan and how (`check-sharding --emit-plan`).
struct PlanOptions {
  size_t fusion = 0;
  PlanRequest::Lowerings lowerings = PlanRequest::Lowerings::Checker;
  std::string inputText; ///< The input file's bytes, hashed into the plan.
};

struct DocumentOptions {
  CheckOptions check;
  std::optional<PlanOptions> plan; ///< Build a plan of one fusion.
};

/// A tensor nothing checked computes: its sharding is not checked.
struct UncheckedTensor {
  TensorNum tensor = 0;
  /// It makes the run unknown (a warning). False for an output a host IR
  /// program leaves to another device's program (a note).
  bool unknown = true;
  Diagnostic diagnostic; ///< The located explanation.
};

struct FusionReport {
  size_t index = 0;
  /// Lint findings and edge-graph errors, in the order found.
  std::vector<Diagnostic> lints;
  bool graphBuilt = true;            ///< False: no edge was checked (see lints).
  std::vector<EdgeVerdict> verdicts; ///< In graph edge order.
  std::vector<UncheckedTensor> unchecked;
  std::optional<Plan> plan; ///< The plan asked for, when it could be built.
  /// Why the plan asked for cannot be built (a finding), located.
  std::optional<PlanError> noPlan;
  /// Bad input found only while checking (a size that overflows once
  /// derived): the fusion is unreadable, verdicts after it are missing.
  std::optional<Diagnostic> inputError;

  bool readable() const { return graphBuilt && !inputError; }
};

struct DocumentReport {
  std::string file;
  std::vector<FusionReport> fusions;
  /// Set when the input is a truncated paste: the `truncated-input` warning
  /// where it ends. Only its complete statements were checked, so the
  /// report is partial and never counts as all proved.
  std::optional<Diagnostic> truncated;

  bool readable() const;
  bool partial() const { return truncated.has_value(); }
};

/// Checks documents one after another with one Checker, so that structurally
/// identical edges of later documents are decided by earlier ones.
class DocumentChecker {
public:
  explicit DocumentChecker(DocumentOptions options);

  DocumentReport check(const Document &doc);
  /// Counts over every document checked so far.
  const CheckStats &stats() const { return checker_.stats(); }

private:
  FusionReport checkFusion(const Document &doc, size_t index);

  DocumentOptions options_;
  Checker checker_;
};

/// One document with a fresh checker.
DocumentReport checkDocument(const Document &doc, const DocumentOptions &options);

} // namespace shardcheck
