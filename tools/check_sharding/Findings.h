// What check-sharding reports as findings, apart from how it prints them:
// every edge not proved, every compiler choice not confirmed and every lint
// or input error that is no note becomes one Finding with a rule id (the
// verdict kind or the lint's code), the exit status it alone gives, and the
// fusion it belongs to. The SARIF and JUnit outputs and the baselines work
// on findings; FusionEntry names each fusion read (its location and the
// digest of its canonical printout, which baselines key on).
//
// This file does not decide verdicts, print findings or compare baselines.
#pragma once

#include "ir/Fusion.h"
#include "util/Diagnostics.h"

#include <optional>
#include <string>
#include <vector>

namespace shardcheck::checksharding {

/// Rule ids of edge verdicts (lints use their own code as rule id; compiler
/// choices use the codes of their diagnostics).
inline constexpr const char *kRuleRefuted = "edge-refuted";
inline constexpr const char *kRuleUnknown = "edge-unknown";
inline constexpr const char *kRuleUnsupported = "unsupported-resharding";
inline constexpr const char *kRuleUnmodelled = "unmodelled-resharding";

struct Finding {
  std::string rule;
  Severity severity = Severity::Error;
  /// The exit status this finding alone gives: 1 (a finding that fails the
  /// run), 3 (unknown) or 0 (a warning that does not change the status).
  int status = 1;
  std::string message; ///< The diagnostic's message, its notes on lines after.
  SourceLoc loc;
  std::optional<size_t> fusion; ///< None: the file could not be read at all.
  std::string edge;             ///< `T1 -> T4`; empty for lints.
};

/// A tensor of a fusion as the pictures (Dot.h) draw it.
struct TensorNode {
  TensorNum number = 0;
  std::string label; ///< Fusion::tensorStr: dtype, domains with DIDs, mesh.
  bool input = false, output = false;
};

/// One fusion of a read file.
struct FusionEntry {
  size_t index = 0;
  SourceLoc loc;
  std::string digest; ///< SHA-256 of printFusion: its content, not its place.
  bool readable = true;
  std::vector<TensorNode> tensors; ///< In number order.
};

/// The entry of `fusion` (index `index` of its document).
FusionEntry fusionEntry(size_t index, const Fusion &fusion);

/// A finding from a diagnostic: its code is the rule, its notes follow the
/// message.
Finding findingOf(const Diagnostic &d, int status, std::optional<size_t> fusion,
                  std::string edge = "", std::string rule = "");

/// The exit status of a run with these findings, unreadable input aside:
/// 1 when one fails the run, else 3 when one is unknown, else 0.
int statusOfFindings(const std::vector<const Finding *> &findings);

/// The text severity name SARIF and JUnit use for a finding: error, warning
/// or note.
const char *findingLevel(const Finding &f);

} // namespace shardcheck::checksharding
