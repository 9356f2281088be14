// Counts of fusion-oracle results (tests/oracle/Oracle.h) by outcome,
// construct and violation class, with a line-based text form so that a long
// run (tools/fusion-oracle --resume) can stop and continue.
//
// Keys: `fusions`; `checker:<outcome>` and `compiler:<outcome>`;
// `choice:<kind>:<confirmed|refuted|unknown>` per compiler choice;
// `lowering:<kind>` per edge of a fusion whose checker plan matched;
// `chunked-edge:<verdict>`, `chunked-edge:proved-plan-<checker outcome>`
// (`multi-step-proved-plan-...` for the planner's edges) and
// `chunked-edge:matched-lowering:<kind>` per edge with a chunked split that
// is not the plain one (below a split that does not divide) at either end;
// `dtensor-wrong:<mutation>:<padded|plain>:<verdict>` per DTensor sequence
// made wrong (Oracle::runDTensor);
// `feature:<construct>` per generated fusion and `matched-feature:<construct>`
// per fusion whose checker plan matched (specFeatures names). Violations are
// kept per class with their count, the first seed and its detail line.
//
// It does not run, judge or minimize anything.
#pragma once

#include "tests/oracle/Oracle.h"

#include <cstdint>
#include <map>
#include <string>

namespace shardcheck::oracle {

struct ViolationClass {
  int64_t count = 0;
  uint64_t firstSeed = 0;
  std::string firstDetail;
};

class OracleTally {
public:
  void add(const OracleResult &result);
  void merge(const OracleTally &other);

  int64_t count(const std::string &key) const;
  const std::map<std::string, int64_t> &counts() const { return counts_; }
  const std::map<std::string, ViolationClass> &violations() const { return violations_; }
  int64_t violationCount() const;

  /// A human summary: outcomes, compiler choices, lowerings, constructs, and
  /// violation classes.
  std::string summary() const;
  /// The text form (`count KEY N` and `violation KIND N SEED\tDETAIL` lines).
  std::string serialize() const;
  /// Reads serialize()'s text; throws std::runtime_error on a malformed line.
  static OracleTally parse(const std::string &text);

private:
  std::map<std::string, int64_t> counts_;
  std::map<std::string, ViolationClass> violations_;
};

} // namespace shardcheck::oracle
