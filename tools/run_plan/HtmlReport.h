// run-plan --report-html DIR: a self-contained HTML page per plan run (no
// network: the style sheet inline, no script) and DIR/index.html with a row
// per run. A run's page shows its outcome (a match, wrong values, the step
// that failed and why, or the refusal, the unreadable plan, the backend's
// failure, with the message), the backend, seed and bindings, the per-step
// table (step, kind, the collective with its teams and roots, whether its
// verdicts are proved, devices, element counts per device, bytes each
// device received, bytes moved, time in the checked run and with --repeat
// the median, status) with the total bytes moved, and every tensor compared
// with the unsharded reference (compared and mismatching slots, max abs and
// rel error, tolerance, the first mismatch with its device, slot and global
// index, pass or fail). The skeleton is tools/common/HtmlPage.h's; every text
// is escaped.
//
// This file does not run plans or choose exit statuses: it shows
// PlanRunResults.
#pragma once

#include "tools/run_plan/PlanRunResult.h"

#include <string>
#include <vector>

namespace shardcheck::runplan {

/// The page of the i-th run (htmlPageName(i, run.plan)).
std::string htmlRunPage(const PlanRunResult &run, const std::string &version);
/// The index page: one row per run, linking its page.
std::string htmlIndexPage(const std::vector<PlanRunResult> &runs, const std::string &version);

/// Writes index.html and every run's page into `dir` (created). Returns
/// what could not be written, "" when all was.
std::string writeHtmlReport(const std::string &dir, const std::vector<PlanRunResult> &runs,
                            const std::string &version);

} // namespace shardcheck::runplan
