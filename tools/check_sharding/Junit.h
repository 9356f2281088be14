// check-sharding's --format junit: JUnit XML as CI systems read it, one
// <testsuite> per input file, one <testcase> per fusion (named by its index
// and dump line), a <failure> per finding that fails the run (refuted or
// unsupported edges, refuted compiler choices, error lints), <skipped> for a
// fusion with only unknown findings and <error> for one that could not be
// read (a file that could not be read at all is one testcase `read`). With
// --baseline only new findings fail or skip a testcase. The XML is written by
// tools/common/Junit.h.
//
// This file does not decide findings or exit statuses.
#pragma once

#include "tools/check_sharding/Baseline.h"
#include "tools/check_sharding/Render.h"

#include <iosfwd>
#include <string>
#include <vector>

namespace shardcheck::checksharding {

/// `comparison` (nullable): the baseline, whose known findings pass.
void printJunit(std::ostream &out, const std::vector<FileOutput> &files,
                const BaselineComparison *comparison);

} // namespace shardcheck::checksharding
