// The skeleton every HTML report page of the tools shares: a self-contained
// page (no network: the style sheet inline, nothing loaded from elsewhere)
// with one look (fonts, tables, banners, badges, proofs folded in
// <details>), the page names of a report directory, and the directory
// itself. check-sharding's (tools/check_sharding/HtmlReport.h) and
// run-plan's (tools/run_plan/HtmlReport.h) reports fill the body.
//
// Every text a page shows from the input is escaped with htmlEscape.
//
// This file does not know what a report shows.
#pragma once

#include <cstddef>
#include <string>

namespace shardcheck {

/// `text` escaped for HTML content and attributes (Xml.h's escaping).
std::string htmlEscape(const std::string &text);

/// From `<!DOCTYPE html>` to `<body>`: the title and the shared style sheet,
/// then `extraStyle` (the tool's own rules).
std::string htmlPageHead(const std::string &title, const std::string &extraStyle = "");
/// From the tool's name and version (small print) to `</html>`, with
/// `script` (inline JavaScript) when not empty.
std::string htmlPageFoot(const std::string &tool, const std::string &version,
                         const std::string &script = "");

/// `<span class="badge KEY">TEXT</span>`: a coloured label (the tool's
/// style sheet gives `.badge.KEY` its colour; `good`, `bad` and `warn` are
/// shared).
std::string htmlBadge(const std::string &key, const std::string &text);

/// The page name of the i-th input of a report: `003-seed_kernel_dump.txt.html`
/// (the file name's characters other than letters, digits, `.`, `-`, `_`
/// replaced by `_`, at most 80 of them).
std::string htmlPageName(size_t i, const std::string &file);

/// Creates the report directory `dir`; what is wrong ("FLAG DIR: cannot create
/// the directory"), or "".
std::string createReportDirectory(const std::string &flag, const std::string &dir);

/// Writes `text` to `path`; false when it cannot.
bool writeTextFile(const std::string &path, const std::string &text);

} // namespace shardcheck
