// check-sharding's HTML report; see HtmlReport.h.
#include "tools/check_sharding/HtmlReport.h"

#include "tools/check_sharding/Dot.h"
#include "tools/check_sharding/Graphviz.h"
#include "tools/common/HtmlPage.h"

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <thread>

namespace shardcheck::checksharding {

namespace {

/// Text from the input, escaped.
std::string esc(const std::string &text) {
  return htmlEscape(text);
}

/// A fusion with more edges than this is not laid out (dot takes long); its
/// DOT text is shown instead.
constexpr size_t kMaxDrawnEdges = 400;

constexpr const char *kStyle = ".graph svg{max-width:100%;height:auto}";

/// Opens the edge a link names (a graph arrow or a table row).
constexpr const char *kScript =
    R"(function openTarget(){var e=document.getElementById(location.hash.slice(1));)"
    R"(if(e&&e.tagName==='DETAILS')e.open=true;})"
    R"(window.addEventListener('hashchange',openTarget);openTarget();)";

std::string pageHead(const std::string &title) {
  std::string colours;
  for (const auto &look : verdictLooks())
    colours += std::string(".") + look.key + " .badge,.badge." + look.key +
               "{background:" + look.colour + "}";
  return htmlPageHead(title, std::string(kStyle) + "\n" + colours);
}

std::string pageFoot(const HtmlRun &run) {
  return htmlPageFoot("check-sharding", run.version, kScript);
}

std::string badge(const char *key, const std::string &text) {
  return htmlBadge(key, text);
}

std::string legend() {
  std::string html = "<p class=\"legend\">";
  for (const auto &look : verdictLooks())
    html += badge(look.key, look.key) + " " + esc(look.meaning) + "&nbsp; ";
  return html + "</p>\n";
}

std::string join(const std::vector<int64_t> &values, const char *sep = ", ") {
  std::string out;
  for (int64_t v : values)
    out += (out.empty() ? "" : sep) + std::to_string(v);
  return out;
}

std::string row(const std::string &key, const std::string &html) {
  return "<dt>" + esc(key) + "</dt><dd>" + html + "</dd>\n";
}

/// A lowering as its text names it (teams and roots included).
/// A lowering shown as `text` (`unsupported` where the verdict has none).
std::string loweringHtml(const std::string &text, bool localPermute) {
  return "<span class=\"mono\">" + esc(text) + "</span>" +
         (localPermute ? " (then a local permute)" : "");
}

/// A counterexample in the input's terms: its message, then the device, the
/// element and who holds it.
std::string counterexampleHtml(const Counterexample &c) {
  std::string dl;
  if (!c.rule.empty())
    dl += row("nvFuser runtime rule", esc(c.rule));
  if (c.device >= 0)
    dl += row("device", std::to_string(c.device));
  if (!c.consumerIndex.empty())
    dl += row("consumer element", "[" + join(c.consumerIndex) + "]");
  if (!c.producerIndex.empty())
    dl += row("producer element", "[" + join(c.producerIndex) + "]");
  if (!c.producerIndex.empty())
    dl += row("held by devices", c.holders.empty() ? "none" : "(" + join(c.holders, " ") + ")");
  if (c.offset)
    dl += row("consumer buffer offset", std::to_string(*c.offset));
  std::string bindings;
  for (const auto &[symbol, value] : c.bindings)
    bindings += (bindings.empty() ? "" : ", ") + esc(symbol) + " = " + std::to_string(value);
  if (!bindings.empty())
    dl += row("sizes", "<span class=\"mono\">" + bindings + "</span>");
  return "<pre>" + esc(c.message) + "</pre>" + (dl.empty() ? "" : "<dl>" + dl + "</dl>");
}

std::string compilerHtml(const CompilerVerdict &c) {
  std::string html =
      esc(c.source) + " (line " + std::to_string(c.loc.line) +
      "): " + loweringHtml(c.loweringText(), c.lowering && c.lowering->localPermute) + " <b>" +
      esc(compilerStatusText(c)) + "</b>";
  if (c.counterexample)
    html += counterexampleHtml(*c.counterexample);
  if (!c.reason.empty())
    html += "<p>" + esc(c.reason) + "</p>";
  return html;
}

/// An edge's proof: what it rests on or where it fails.
std::string proofHtml(const EdgeVerdict &v) {
  std::string dl =
      row("checker's lowering", loweringHtml(v.loweringText(), v.lowering.localPermute) + " " +
                                    esc(edgeResultStatusName(v.result)));
  if (!v.reason.empty())
    dl += row("reason", esc(v.reason));
  if (!v.assumptions.empty()) {
    std::string list;
    for (const auto &a : v.assumptions)
      list += "<li class=\"mono\">" + esc(a) + "</li>";
    dl += row("proved for every size with", "<ul>" + list + "</ul>");
  }
  for (const auto &s : v.steps)
    dl += row("multi-step plan step",
              loweringHtml(s.lowering.str(), s.lowering.localPermute) + " " +
                  esc(statusName(s.status)) +
                  (s.intermediate.empty() ? "" : " via " + esc(s.intermediate)) +
                  (s.reason.empty() ? "" : ": " + esc(s.reason)));
  if (v.counterexample) {
    EdgeResult r = v.result;
    bool refutes = r == EdgeResult::Refuted || r == EdgeResult::Unsupported;
    dl += row(refutes ? "counterexample" : "why communication is needed",
              counterexampleHtml(*v.counterexample));
  }
  if (v.compiler)
    dl += row("compiler's choice", compilerHtml(*v.compiler));
  return "<dl>" + dl + "</dl>";
}

std::string edgeDetails(size_t fusion, size_t k, const EdgeVerdict &v) {
  const VerdictLook &look = verdictLook(v);
  // What needs a look is open from the start: anything not plainly proved.
  bool open = look.key != std::string("none") && look.key != std::string("alias") &&
              look.key != std::string("collective");
  return std::string("<details id=\"") + edgeAnchor(fusion, k) + "\" class=\"edge " + look.key +
         "\"" + (open ? " open" : "") + "><summary>" + badge(look.key, look.key) +
         " <span class=\"mono\">T" + std::to_string(v.producer) + " &rarr; T" +
         std::to_string(v.consumer) + "</span> (" + esc(v.exprName) + ", line " +
         std::to_string(v.loc.line) + "): " + esc(verdictLine(v)) + "</summary>\n" + proofHtml(v) +
         "</details>\n";
}

std::string findingsHtml(const std::vector<const Finding *> &findings) {
  if (findings.empty())
    return "";
  std::string html = "<table class=\"findings\"><tr><th>where</th><th>level</th><th>rule</th>"
                     "<th>message</th></tr>\n";
  for (const Finding *f : findings)
    html += "<tr><td class=\"mono\">" + esc(f->loc.str()) + "</td><td>" + findingLevel(*f) +
            "</td><td class=\"mono\">" + esc(f->rule) + "</td><td><pre>" + esc(f->message) +
            "</pre></td></tr>\n";
  return html + "</table>\n";
}

std::string graphHtml(const HtmlRun &run, const std::string &dot, size_t edges) {
  std::string why = "Graphviz's dot is not installed (Debian: apt-get install graphviz)";
  if (run.dotProgram && edges <= kMaxDrawnEdges) {
    if (auto svg = renderSvg(*run.dotProgram, dot, why))
      return "<div class=\"graph\">\n" + *svg + "</div>\n";
  } else if (run.dotProgram) {
    why = std::to_string(edges) + " edges: too many to lay out";
  }
  return "<p>Not drawn: " + esc(why) + ". The graph as DOT:</p><pre class=\"dot\">" + esc(dot) +
         "</pre>\n";
}

std::string fusionSection(const HtmlRun &run, const FileOutput &file, const FusionEntry &fusion) {
  std::string name =
      "fusion " + std::to_string(fusion.index) + " (line " + std::to_string(fusion.loc.line) + ")";
  std::string edges;
  size_t k = 0;
  for (const auto &[index, v] : file.edges)
    if (index == fusion.index)
      edges += edgeDetails(index, k++, v);
  std::string html = "<section id=\"f" + std::to_string(fusion.index) + "\">\n<h2>" + esc(name) +
                     (fusion.readable ? "" : " (not checked: see its errors)") + "</h2>\n";
  html += graphHtml(run, fusionDot(fusion, file.edges, file.file + ": " + name), k);
  html += k ? "<h3>Edges</h3>\n" + edges : "<p>No edge checked.</p>\n";
  return html + "</section>\n";
}

/// Per-file counts, as the index's row cells.
std::string countCells(const Summary &s) {
  std::string cells;
  for (size_t n : {s.fusions, s.edges, s.proved, s.refuted + s.compilerRefuted, s.unknown,
                   s.unsupported, s.lintErrors, s.lintWarnings})
    cells += "<td>" + std::to_string(n) + "</td>";
  return cells;
}

constexpr const char *kCountHeads = "<th>fusions</th><th>edges</th><th>proved</th>"
                                    "<th>refuted (edges + compiler)</th><th>unknown</th>"
                                    "<th>unsupported</th><th>lint errors</th><th>warnings</th>";

std::string fileBanner(const FileOutput &file) {
  if (file.unreadable)
    return "<div class=\"banner unreadable bad\"><b>Unreadable:</b> this input, or a fusion of it, "
           "could not be read or checked (exit status 2); the errors say where.</div>\n";
  if (file.partial)
    return "<div class=\"banner partial warn\"><b>Partial:</b> this input is a truncated paste; "
           "only "
           "its complete statements were checked, so it never counts as all proved.</div>\n";
  return "";
}

} // namespace

std::string htmlFilePage(const HtmlRun &run, size_t i) {
  const FileOutput &file = (*run.files)[i];
  const Summary &s = (*run.fileSummaries)[i];
  std::vector<const Finding *> findings;
  for (const auto &f : file.findings)
    findings.push_back(&f);
  std::string html = pageHead("check-sharding: " + file.file);
  html += "<p><a href=\"index.html\">&larr; all inputs</a></p>\n<h1>" + esc(file.file) + "</h1>\n";
  html += "<table><tr>" + std::string(kCountHeads) + "<th>exit status</th></tr>\n<tr>" +
          countCells(s) + "<td>" + std::to_string(exitStatus(s)) + "</td></tr></table>\n";
  html += fileBanner(file);
  if (!findings.empty())
    html += "<h2>Findings</h2>\n" + findingsHtml(findings);
  html += legend();
  for (const auto &fusion : file.fusions)
    html += fusionSection(run, file, fusion);
  return html + pageFoot(run);
}

std::string htmlIndexPage(const HtmlRun &run) {
  std::string html = pageHead("check-sharding report");
  html += "<h1>check-sharding report</h1>\n<p>exit status " + std::to_string(run.status) +
          "</p>\n<pre class=\"summary\">" + esc(run.summaryText) + "</pre>\n";
  html += "<table><tr><th>input</th>" + std::string(kCountHeads) + "<th>exit status</th></tr>\n";
  for (size_t i = 0; i < run.files->size(); ++i) {
    const FileOutput &file = (*run.files)[i];
    const Summary &s = (*run.fileSummaries)[i];
    html += "<tr><td><a href=\"" + esc(htmlPageName(i, file.file)) + "\">" + esc(file.file) +
            "</a>" + (file.partial ? " (partial)" : "") + "</td>" + countCells(s) + "<td>" +
            std::to_string(exitStatus(s)) + "</td></tr>\n";
  }
  return html + "</table>\n" + pageFoot(run);
}

std::string writeHtmlReport(const std::string &dir, const HtmlRun &run) {
  if (std::string error = createReportDirectory("--report-html", dir); !error.empty())
    return error;
  // Pages are written by `run.jobs` workers (dot takes most of the time);
  // the first page that cannot be written is the one reported.
  std::vector<std::string> failed(run.files->size());
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i; (i = next++) < run.files->size();) {
      auto path = std::filesystem::path(dir) / htmlPageName(i, (*run.files)[i].file);
      if (!writeTextFile(path.string(), htmlFilePage(run, i)))
        failed[i] = "cannot write the HTML report page " + path.string();
    }
  };
  std::vector<std::thread> workers;
  for (size_t w = 1; w < std::min(run.jobs, run.files->size()); ++w)
    workers.emplace_back(work);
  work();
  for (auto &t : workers)
    t.join();
  for (const auto &f : failed)
    if (!f.empty())
      return f;
  if (!writeTextFile((std::filesystem::path(dir) / "index.html").string(), htmlIndexPage(run)))
    return "cannot write the HTML report index " + dir + "/index.html";
  return "";
}

} // namespace shardcheck::checksharding
