// check-sharding's baselines (docs/ci-gate.md): --write-baseline records the
// findings that fail a run (exit status 1 or 3) by a fingerprint of what
// they are, not where: the SHA-256 of the fusion's canonical printout
// (printFusion), the rule id, the edge (`T1 -> T4`) and, for a lint, its
// message. A dump moved, renamed or printed among other log lines keeps its
// fingerprints; a changed fusion gets new ones. --baseline compares a run
// with a recorded baseline: only findings not in it decide the exit status,
// and those in it that this run no longer has are reported as gone.
//
// This file does not check, and does not decide exit statuses for
// unreadable input (always 2).
#pragma once

#include "tools/check_sharding/Render.h"

#include <nlohmann/json.hpp>

#include <iosfwd>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace shardcheck::checksharding {

/// One recorded finding; all but the fingerprint are for people reading it.
struct BaselineEntry {
  std::string fingerprint, rule, edge, message;
  std::string seenAt; ///< FILE:LINE:COL where it was when recorded.
};

/// The finding's fingerprint, or "" when it has none (a file that could
/// not be read has no fusion content to key on).
std::string findingFingerprint(const FileOutput &file, const Finding &finding);

/// The findings of a run that fail it, one entry per fingerprint, in order.
std::vector<BaselineEntry> baselineEntries(const std::vector<FileOutput> &files);
/// The baseline file's text (JSON).
std::string baselineText(const std::vector<BaselineEntry> &entries);
/// Reads a baseline file; nullopt with `error` set when it cannot.
std::optional<std::vector<BaselineEntry>> readBaseline(const std::string &path, std::string &error);

/// A run against a baseline.
struct BaselineComparison {
  std::string path;
  size_t known = 0; ///< Findings of this run the baseline has.
  /// Findings the baseline does not have (each with its file's name).
  std::vector<std::pair<std::string, Finding>> fresh;
  std::vector<BaselineEntry> gone; ///< In the baseline, not in this run.
  std::set<std::string> recorded;  ///< The baseline's fingerprints.

  /// The exit status the new findings give (unreadable input aside).
  int status() const;
};

BaselineComparison compareWithBaseline(const std::vector<FileOutput> &files,
                                       const std::vector<BaselineEntry> &baseline,
                                       const std::string &path);

/// Whether `finding` of `file` is new against `comparison`.
bool isNewFinding(const BaselineComparison &comparison, const FileOutput &file,
                  const Finding &finding);

nlohmann::json baselineJson(const BaselineComparison &comparison);
void printBaselineText(std::ostream &out, const BaselineComparison &comparison);

} // namespace shardcheck::checksharding
