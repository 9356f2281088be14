// check-sharding's --format sarif: one SARIF 2.1.0 log (OASIS) with one run
// whose tool.driver lists the rules used (edge verdict kinds, compiler-choice
// kinds, lint codes), its artifacts the input files as given, and one result
// per finding (Findings.h) located at its dump line and column, its message
// the diagnostic with its counterexample, partialFingerprints the baseline
// fingerprint (Baseline.h) and, with --baseline, baselineState new or
// unchanged. tests/sarif-2.1.0-subset.schema.json validates it.
//
// This file does not decide findings or exit statuses.
#pragma once

#include "tools/check_sharding/Baseline.h"
#include "tools/check_sharding/Render.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace shardcheck::checksharding {

/// The SARIF log of a run; `comparison` (nullable) sets baselineState.
nlohmann::json sarifLog(const std::vector<FileOutput> &files, const std::string &version,
                        int exitStatus, const BaselineComparison *comparison);

/// A path as a URI reference: bytes outside RFC 3986's unreserved set and
/// `/` percent-encoded (a relative path stays relative).
std::string pathToUri(const std::string &path);

} // namespace shardcheck::checksharding
