// run-plan's HTML report; see HtmlReport.h.
#include "tools/run_plan/HtmlReport.h"

#include "executor/core/Run.h"
#include "tools/common/HtmlPage.h"
#include "tools/run_plan/Render.h"

#include <filesystem>
#include <set>

namespace shardcheck::runplan {

namespace {

std::string esc(const std::string &text) {
  return htmlEscape(text);
}

constexpr const char *kStyle = "tr.failed td{background:#ffebee}tr.not-run td{color:#757575}"
                               "tr.fail td{background:#ffebee}tr.total td{font-weight:bold}";

std::string cell(const std::string &html, bool number = false) {
  return std::string(number ? "<td class=\"num\">" : "<td>") + html + "</td>";
}

/// `good`, `warn` or `bad`: how the outcome looks.
std::string outcomeLook(const PlanRunResult &run) {
  std::string outcome = run.outcome();
  if (outcome == "match")
    return "good";
  return outcome == "unchecked" || outcome == "no-steps" ? "warn" : "bad";
}

/// The outcome in words: the error, or the result line and the failure.
std::string outcomeText(const PlanRunResult &run) {
  if (!run.errorKind.empty())
    return run.errorMessage;
  const RunReport &r = *run.report;
  std::string text = outcomeLine(r);
  if (r.failure)
    text += "\nstep " + std::to_string(r.failure->step) + " failed: " + r.failure->message;
  return text;
}

std::string banner(const PlanRunResult &run) {
  std::string look = outcomeLook(run), outcome = run.outcome();
  std::string link =
      run.report && run.report->failure
          ? " (<a href=\"#step-" + std::to_string(run.report->failure->step) + "\">the step</a>)"
          : "";
  return "<div class=\"banner " + esc(outcome) + " " + look + "\"><b>" + esc(outcome) +
         "</b>, exit status " + std::to_string(run.status) + link + "<pre>" +
         esc(outcomeText(run)) + "</pre></div>\n";
}

/// `0: 8, 1: 8`, or `-` when empty.
std::string perDeviceText(const std::map<int64_t, int64_t> &values) {
  std::string text;
  for (const auto &[device, value] : values)
    text += (text.empty() ? "" : ", ") + std::to_string(device) + ": " + std::to_string(value);
  return text.empty() ? "-" : text;
}

/// Per device `in &rarr; out` (or the output's count alone).
std::string elementsHtml(const StepReport &s) {
  std::set<int64_t> devices;
  for (const auto *counts : {&s.inputElements, &s.outputElements})
    for (const auto &[device, count] : *counts)
      devices.insert(device);
  auto count = [](const std::map<int64_t, int64_t> &m, int64_t d) {
    auto it = m.find(d);
    return it == m.end() ? std::string("-") : std::to_string(it->second);
  };
  std::string html;
  for (int64_t d : devices)
    html += (html.empty() ? "" : "<br>") + std::to_string(d) + ": " +
            (s.inputElements.empty() ? "" : count(s.inputElements, d) + " &rarr; ") +
            count(s.outputElements, d);
  return html.empty() ? "-" : html;
}

std::string statusClass(const std::string &status) {
  return status == "not run" ? "not-run" : status;
}

std::string stepRow(const StepReport &s, const std::optional<RunTiming> &timing) {
  std::string row = "<tr id=\"step-" + std::to_string(s.index) + "\" class=\"step " +
                    esc(statusClass(s.status)) + "\">" + cell(std::to_string(s.index), true) +
                    cell(esc(s.kind)) +
                    cell("<span class=\"mono\">" + esc(s.description) + "</span>") +
                    cell(s.verified ? "proved" : htmlBadge("bad", "unverified")) +
                    cell(esc(devicesText(s.devices))) + cell(elementsHtml(s)) +
                    cell(esc(perDeviceText(s.bytesReceived))) + cell(esc(bytesText(s)), true) +
                    cell(esc(stepTimeText(s)), true);
  if (timing && s.index < timing->stepMedianSeconds.size())
    row += cell(esc(formatNumber(timing->stepMedianSeconds[s.index] * 1e3) + " ms"), true);
  return row + cell(esc(s.status)) + "</tr>\n";
}

std::string stepsTable(const RunReport &r) {
  if (r.steps.empty())
    return "<p>The plan has no steps.</p>\n";
  std::string html = "<table class=\"steps\"><tr><th>step</th><th>kind</th><th>what (teams, "
                     "roots)</th><th>verdicts</th><th>devices</th><th>elements per device "
                     "(in &rarr; out)</th><th>bytes received per device</th><th>bytes "
                     "moved</th><th>time</th>" +
                     std::string(r.timing ? "<th>median time (--repeat)</th>" : "") +
                     "<th>status</th></tr>\n";
  for (const StepReport &s : r.steps)
    html += stepRow(s, r.timing);
  return html + "<tr class=\"total\"><td colspan=\"7\">total bytes moved</td>" +
         cell(std::to_string(totalBytesMoved(r)), true) + "<td colspan=\"" +
         std::string(r.timing ? "3" : "2") + "\"></td></tr>\n</table>\n";
}

std::string firstMismatchHtml(const OutputComparison &c) {
  if (!c.firstMismatch)
    return "-";
  const Mismatch &m = *c.firstMismatch;
  std::string index;
  for (size_t i = 0; i < m.index.size(); ++i)
    index += (i ? ", " : "") + std::to_string(m.index[i]);
  return "device " + std::to_string(m.device) + ", " + esc(c.name) + "[" + index + "] (slot " +
         std::to_string(m.slot) + "): got " + esc(formatNumber(m.got)) + ", expected " +
         esc(formatNumber(m.expected));
}

std::string tensorRow(const TensorCheck &t) {
  const OutputComparison &c = t.comparison;
  bool pass = c.matches();
  return "<tr id=\"tensor-" + esc(c.name) + "\" class=\"tensor " + (pass ? "pass" : "fail") +
         "\">" + cell("<span class=\"mono\">" + esc(c.name) + "</span>") + cell(esc(t.role)) +
         cell(esc(c.dtype == DataType::Unknown ? "unknown" : dataTypeName(c.dtype))) +
         cell(std::to_string(c.compared), true) + cell(std::to_string(c.mismatched), true) +
         cell(esc(formatNumber(c.maxAbsError)), true) +
         cell(esc(formatNumber(c.maxRelError)), true) +
         cell(esc(formatNumber(c.tolerance.rtol) + " / " + formatNumber(c.tolerance.atol))) +
         cell(firstMismatchHtml(c)) +
         cell(pass ? htmlBadge("good", "pass") : htmlBadge("bad", "FAIL")) + "</tr>\n";
}

std::string tensorsSection(const PlanRunResult &run) {
  std::string html = "<h2 id=\"tensors\">Tensors against the unsharded reference</h2>\n";
  const RunReport *r = run.report ? &*run.report : nullptr;
  if (!run.errorKind.empty() || !r)
    return html + "<p>Nothing compared: the plan did not run.</p>\n";
  if (r->failure)
    return html + "<p>Nothing compared: the run failed at step " +
           std::to_string(r->failure->step) + ".</p>\n";
  if (!r->checked)
    return html + "<p>Nothing compared: run with --no-check.</p>\n";
  if (r->tensors.empty())
    return html + "<p>No tensor was written.</p>\n";
  html += "<table class=\"tensors\"><tr><th>tensor</th><th>role</th><th>dtype</th><th>slots "
          "compared</th><th>mismatching</th><th>max abs error</th><th>max rel error</th>"
          "<th>rtol / atol</th><th>first mismatch</th><th>result</th></tr>\n";
  for (const TensorCheck &t : r->tensors)
    html += tensorRow(t);
  return html + "</table>\n";
}

std::string timingSection(const RunReport &r) {
  if (!r.timing)
    return "";
  const RunTiming &t = *r.timing;
  return "<h2>Timing (--repeat)</h2>\n<p>" + std::to_string(t.repeats) +
         " timed run(s) of each kind after " + std::to_string(t.warmup) +
         " warmup: pipelined median " + esc(formatNumber(t.medianSeconds * 1e3)) + " ms, min " +
         esc(formatNumber(t.minSeconds * 1e3)) + " ms per run; every step synchronized: median " +
         esc(formatNumber(t.syncedMedianSeconds * 1e3)) + " ms per run.</p>\n";
}

std::string factsTable(const PlanRunResult &run) {
  std::string html = "<table class=\"facts\"><tr><th>backend</th>";
  const RunReport *r = run.report ? &*run.report : nullptr;
  if (r)
    html += "<th>seed</th><th>bindings</th><th>every step proved</th>";
  html += "<th>exit status</th></tr>\n<tr>" + cell(esc(run.backend));
  if (r)
    html += cell(std::to_string(r->seed)) +
            cell("<span class=\"mono\">" + esc(bindingsText(r->symbols)) + "</span>") +
            cell(r->verified ? "yes" : "no");
  return html + cell(std::to_string(run.status)) + "</tr></table>\n";
}

/// The index's cells of a run: steps run, bytes moved, tensors passing.
std::string countCells(const PlanRunResult &run) {
  if (!run.report)
    return cell("-") + cell("-") + cell("-");
  const RunReport &r = *run.report;
  size_t ran = 0, passed = 0;
  for (const StepReport &s : r.steps)
    ran += s.status != "not run";
  for (const TensorCheck &t : r.tensors)
    passed += t.comparison.matches();
  return cell(std::to_string(ran) + " of " + std::to_string(r.steps.size()), true) +
         cell(std::to_string(totalBytesMoved(r)), true) +
         cell(std::to_string(passed) + " of " + std::to_string(r.tensors.size()), true);
}

} // namespace

std::string htmlRunPage(const PlanRunResult &run, const std::string &version) {
  std::string html = htmlPageHead("run-plan: " + run.plan, kStyle);
  html += "<p><a href=\"index.html\">&larr; all runs</a></p>\n<h1>" + esc(run.plan) + "</h1>\n";
  html += banner(run) + factsTable(run);
  if (run.report)
    html += "<h2 id=\"steps\">Steps</h2>\n" + stepsTable(*run.report);
  html += tensorsSection(run);
  if (run.report)
    html += timingSection(*run.report);
  return html + htmlPageFoot("run-plan", version);
}

std::string htmlIndexPage(const std::vector<PlanRunResult> &runs, const std::string &version) {
  std::string html = htmlPageHead("run-plan report", kStyle);
  html += "<h1>run-plan report</h1>\n<table class=\"runs\"><tr><th>plan</th><th>backend</th>"
          "<th>outcome</th><th>steps run</th><th>bytes moved</th><th>tensors matching</th>"
          "<th>exit status</th></tr>\n";
  for (size_t i = 0; i < runs.size(); ++i) {
    const PlanRunResult &run = runs[i];
    html += "<tr id=\"run-" + std::to_string(i) + "\" class=\"run " + outcomeLook(run) + "\">" +
            cell("<a href=\"" + esc(htmlPageName(i, run.plan)) + "\">" + esc(run.plan) + "</a>") +
            cell(esc(run.backend)) + cell(htmlBadge(outcomeLook(run), run.outcome())) +
            countCells(run) + cell(std::to_string(run.status), true) + "</tr>\n";
  }
  return html + "</table>\n" + htmlPageFoot("run-plan", version);
}

std::string writeHtmlReport(const std::string &dir, const std::vector<PlanRunResult> &runs,
                            const std::string &version) {
  if (std::string error = createReportDirectory("--report-html", dir); !error.empty())
    return error;
  for (size_t i = 0; i < runs.size(); ++i) {
    auto path = std::filesystem::path(dir) / htmlPageName(i, runs[i].plan);
    if (!writeTextFile(path.string(), htmlRunPage(runs[i], version)))
      return "cannot write the HTML report page " + path.string();
  }
  if (!writeTextFile((std::filesystem::path(dir) / "index.html").string(),
                     htmlIndexPage(runs, version)))
    return "cannot write the HTML report index " + dir + "/index.html";
  return "";
}

} // namespace shardcheck::runplan
