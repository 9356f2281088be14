// check-sharding's summary: the counts over every file's DocumentReport,
// their text and JSON forms, and the exit status they give (0 all proved and
// no error diagnostics; 1 findings: refuted compiler choices, error lints,
// unsupported reshardings, plans that cannot be built; 2 unreadable input;
// 3 something unknown and nothing refuted; 4, CheckSharding.cpp's, --emit-plan
// refused because an input is partial).
//
// This file does not check or print diagnostics; a bad command line or a
// plan file that cannot be written (exit 2) is CheckSharding.cpp's.
#pragma once

#include "checker/CheckDocument.h"

#include <nlohmann/json.hpp>

#include <iosfwd>
#include <set>
#include <string>

namespace shardcheck::checksharding {

struct Summary {
  size_t files = 0, fusions = 0, edges = 0;
  size_t proved = 0, refuted = 0, unknown = 0, unsupported = 0;
  size_t none = 0, alias = 0, collectives = 0;
  size_t compilerConfirmed = 0, compilerRefuted = 0, compilerUnknown = 0, unnecessary = 0;
  size_t lintErrors = 0, lintWarnings = 0, unreadable = 0;
  size_t uncheckedTensors = 0; ///< Tensors no checked edge computes.
  size_t partialFiles = 0;     ///< Truncated inputs, checked only as far as they go.
  std::set<std::string> assumptions;

  /// Counts one checked document (a file the tool read).
  void addDocument(const DocumentReport &report);
  /// Adds the counts of `other` (another file's, checked apart). A count
  /// added to Summary must be added there too (ci_gate_test.cpp compares it
  /// with counting the documents one after another).
  void add(const Summary &other);
  /// Counts a file that could not be checked at all (unreadable, or a
  /// --fusion it does not have): `why` is its error.
  void addUnreadableFile(const Diagnostic &why);

private:
  void addFusion(const FusionReport &fusion);
  void addVerdict(const EdgeVerdict &v);
  /// A diagnostic that is no verdict: a lint, an input error.
  void addFinding(const Diagnostic &d);
};

int exitStatus(const Summary &s);
/// The exit status of a run asked to --emit-plan from a truncated input: no
/// plan is written (the analysis is partial), whatever else was found.
inline constexpr int kPlanRefusedStatus = 4;

nlohmann::json summaryJson(const Summary &s, const CheckStats &stats, NvfuserRuntime runtime);
void printSummaryText(std::ostream &out, const Summary &s, const CheckStats &stats,
                      NvfuserRuntime runtime);

} // namespace shardcheck::checksharding
