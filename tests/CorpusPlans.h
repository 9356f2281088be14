// The plan of a corpus fusion, built in-process as check-sharding
// --emit-plan builds it (read, graph, check, buildPlan), for tests that
// look at or run plans without going through the CLI.
//
// This file does not run plans or compare anything; a fusion whose graph
// cannot be built fails the calling test (EXPECT), and buildPlan's
// PlanError reaches the caller.
#pragma once

#include "checker/PlanBuilder.h"

#include <string>

namespace shardcheck::testing {

/// The plan of fusion `index` of corpus file `file` with `lowerings`.
Plan corpusPlan(const std::string &file,
                PlanRequest::Lowerings lowerings = PlanRequest::Lowerings::Checker,
                size_t index = 0);

} // namespace shardcheck::testing
