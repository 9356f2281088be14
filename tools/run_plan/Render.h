// run-plan's text output and JSON report of a run: the per-step table
// (kind, what, devices, bytes, time, status), one line per tensor compared
// with the reference (errors, tolerance, first mismatch), the timing of
// --repeat, the result line, and the --report document. The HTML report
// (HtmlReport.h) and JUnit (Junit.h) say the same things in their words.
//
// This file does not run plans or choose exit statuses.
#pragma once

#include "tools/run_plan/PlanRunResult.h"

#include <nlohmann/json.hpp>

#include <iosfwd>
#include <string>

namespace shardcheck::runplan {

/// `v` with 3 significant digits: `0.125`, `1.5e+03`.
std::string formatNumber(double v);
/// `0 1 3`.
std::string devicesText(const std::vector<int64_t> &devices);
/// The bytes a step moves as the table shows them: a number for
/// collectives and aliases (0), `-` for local steps.
std::string bytesText(const StepReport &s);
/// A step's time in the checked run (`1.2 ms`), `-` when it did not run.
std::string stepTimeText(const StepReport &s);
/// `device 1 slot 0 holds 3 for T2[1, 0], expected 4`.
std::string mismatchText(const Mismatch &m, const std::string &tensor);
/// A tensor's comparison in one line: `T2 (output, float): match, 8 slot(s)
/// compared, 0 outside rtol ... atol ..., max abs error 0, max rel error 0`.
std::string tensorLine(const TensorCheck &t);
/// The bytes every collective of the run moved, summed.
int64_t totalBytesMoved(const RunReport &r);

void printSteps(std::ostream &out, const RunReport &r);
/// Every tensor's line and first mismatch (with `quiet`, the mismatching
/// ones only).
void printTensors(std::ostream &out, const RunReport &r, bool quiet);
void printTiming(std::ostream &out, const RunReport &r);
/// `result: match: 2 tensor(s) equal the reference on every device`, ...
std::string outcomeLine(const RunReport &r);

/// The --report document of a run that gave a report.
nlohmann::json reportJson(const std::string &plan, const RunReport &r);

} // namespace shardcheck::runplan
