// run-plan's --format junit: JUnit XML (tools/common/Junit.h), one
// <testsuite> per plan file with a <testcase> `run` for the run itself (a
// <failure> when the plan was refused, a step failed, typed by the failure's
// kind and naming the step, its devices and the message, or nothing was
// compared; an <error> when the plan could not be read or the backend
// failed) and one `tensor T2 (output)` per tensor compared with the
// reference (a <failure> `mismatch` naming the first mismatching device,
// slot and global index).
//
// This file does not run plans or choose exit statuses.
#pragma once

#include "tools/common/Junit.h"
#include "tools/run_plan/PlanRunResult.h"

#include <iosfwd>
#include <vector>

namespace shardcheck::runplan {

/// The suite of one plan file's run.
JunitSuite junitSuite(const PlanRunResult &run);

/// Prints the JUnit document of `runs`, one suite each.
void printJunit(std::ostream &out, const std::vector<PlanRunResult> &runs);

} // namespace shardcheck::runplan
