// How check-sharding shows a checked file: every verdict as a diagnostic
// among the lints (text), and the `files` entries of --format json (the
// schema README's check-sharding section describes).
//
// This file does not decide, count or choose exit statuses (Summary.h does
// the counting).
#pragma once

#include "checker/CheckDocument.h"
#include "checker/Checker.h"
#include "dtensor/PlanBytes.h"
#include "tools/check_sharding/Findings.h"
#include "util/Diagnostics.h"

#include <nlohmann/json.hpp>

#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace shardcheck::checksharding {

/// One input file as the tool prints it.
struct FileOutput {
  std::string file;
  /// In the order found: lints, each edge's verdict and the compiler's, the
  /// unchecked tensors, the plan, errors.
  std::vector<Diagnostic> diagnostics;
  /// Whether --format json lists diagnostics[i] under "diagnostics": all but
  /// the notes of decided edges, which "edges" carries.
  std::vector<bool> inJson;
  std::vector<std::pair<size_t, EdgeVerdict>> edges; ///< (fusion index, verdict)
  bool unreadable = false;
  bool partial = false; ///< A truncated paste: only its complete statements were checked.
  /// Everything not proved or confirmed and every lint that is no note, in
  /// the order found (the SARIF, JUnit and baseline outputs).
  std::vector<Finding> findings;
  std::vector<FusionEntry> fusions; ///< The fusions read, in document order.
  /// A DTensor document: both plans' bytes per rank (its note is among the
  /// diagnostics; --format json also gives them as `dtensor_bytes`).
  std::optional<dtensor::BytesSideBySide> dtensorBytes;

  void add(Diagnostic d, bool listedInJson = true);
  /// Adds a lint or input error of fusion `fusion` (none: of the whole
  /// file) that gives exit status `status`; a note is no finding.
  void addFinding(Diagnostic d, int status, std::optional<size_t> fusion);
};

/// Adds the verdict of an edge of fusion `fusion` (and the compiler's) as
/// diagnostics, and the verdict itself.
void addEdge(size_t fusion, const EdgeVerdict &v, FileOutput &file);

/// Adds a checked document as the tool shows it: its fusions, a truncated
/// paste's warning, and per fusion in the order found its lints, verdicts,
/// unchecked tensors, then `addPlan(fusion)` (the plan's note, when one was
/// asked for; may be empty), a plan that cannot be built and an input error
/// found while checking.
void addDocumentReport(const Document &doc, const DocumentReport &report, FileOutput &file,
                       const std::function<void(const FusionReport &)> &addPlan = {});
/// Adds a DTensor document's bytes per rank of both plans (its note and the
/// figures for JSON).
void addDTensorBytes(dtensor::BytesSideBySide bytes, const SourceLoc &loc, FileOutput &file);
/// Adds the error of a file that could not be read at all (exit 2).
void addUnreadableFile(Diagnostic why, FileOutput &file);

/// The file's entry in --format json's `files`.
nlohmann::json fileJson(const FileOutput &file);
/// The file's diagnostics as text; errors of an unreadable file go to `err`.
/// `quiet` leaves notes out.
void printFileText(std::ostream &out, std::ostream &err, const FileOutput &file, bool quiet);

} // namespace shardcheck::checksharding
