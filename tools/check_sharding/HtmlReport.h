// check-sharding --report-html DIR: one self-contained HTML page per input
// (no network: styles inline, the graph as inline SVG) and an index page
// with the run's summary. A file's page shows, per fusion, the graph
// (Dot.h, laid out by Graphviz's dot when it is installed, else the DOT
// text), every edge verdict opening its proof (lowering and teams,
// assumptions, multi-step plans, counterexample, the compiler's choice),
// the lints and findings, and a warning when the input is a truncated paste
// or unreadable. Every text from the input is HTML-escaped. The page
// skeleton and its names are tools/common/HtmlPage.h's.
//
// This file does not decide verdicts, count or choose exit statuses: it
// shows FileOutputs and Summaries the tool made.
#pragma once

#include "tools/check_sharding/Render.h"
#include "tools/check_sharding/Summary.h"
#include "tools/common/HtmlPage.h"

#include <optional>
#include <string>
#include <vector>

namespace shardcheck::checksharding {

/// What the report shows of a run.
struct HtmlRun {
  const std::vector<FileOutput> *files = nullptr;
  const std::vector<Summary> *fileSummaries = nullptr; ///< One per file.
  std::string summaryText;                             ///< The text summary (printSummaryText).
  int status = 0;                                      ///< The run's exit status.
  std::string version;
  /// Graphviz's dot (Graphviz.h); none: pages show the DOT text.
  std::optional<std::string> dotProgram;
  size_t jobs = 1; ///< Pages written at a time (check-sharding's -j).
};

/// The page of one input file.
std::string htmlFilePage(const HtmlRun &run, size_t i);
/// The index page: summary and one row per file.
std::string htmlIndexPage(const HtmlRun &run);

/// Writes index.html and every file's page into `dir` (created). Returns
/// what could not be written, "" when all was.
std::string writeHtmlReport(const std::string &dir, const HtmlRun &run);

} // namespace shardcheck::checksharding
