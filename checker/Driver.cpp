// The check-sharding driver; see Driver.h.
#include "checker/Driver.h"

#include "checker/CheckDocument.h"
#include "ir/reader/DumpReader.h"
#include "util/Checked.h"
#include "util/Version.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>

namespace shardcheck {

namespace {

constexpr const char *kUsage = R"(usage: check-sharding [options] FILE...

Reads nvFuser dumps (or shardcheck JSON IR) and, for every producer -> consumer
edge, proves whether communication is needed and which collective moves exactly
the right data, or prints a counterexample. Confirms or refutes the compiler's
own choices (host IR Communications, resharding Sets).

options:
  --format text|json   output style (default: text)
  --timeout-ms N       per-query solver time limit (default: 10000)
  --time-limit S       the whole run's limit in seconds: edges not decided by
                       then are unknown (exit 3), never proved
  --devices N          devices 0..N-1 hold tensors that have no mesh
  --smt-dump DIR       write every SMT query as SMT-LIB2 into DIR
  --nvfuser-runtime 2024-12|2024-11
                       whose runtime rules compiler choices must satisfy:
                       nvFuser since Dec 2024 (default; buffer shapes are
                       compared) or before (only element counts are)
  --no-cache           decide every edge anew (no structural edge cache)
  --quiet              print only errors, warnings and the summary
  --emit-plan FILE     write the verified plan of the (one) input fusion to FILE
                       (docs/plan-format.md); run it with run-plan
  --plan-lowerings checker|compiler
                       plan with the checker's lowerings (default) or, where
                       the dump carries one, the compiler's own choice
  --fusion K           which fusion of a multi-fusion file to plan (default 0)
  --help               this text
  --version            the version

exit status: 0 all proved and no error diagnostics; 1 findings (refuted
compiler choices, error lints, unsupported reshardings); 2 unreadable input or
bad usage; 3 something unknown and nothing refuted.
)";

constexpr const char *kVersion = kShardcheckVersion;
constexpr int64_t kMaxTimeoutMs = 3600 * 1000; ///< One hour per query.
constexpr int64_t kMaxTimeLimitS = 7 * 24 * 3600; ///< A week per run.

struct Options {
  bool json = false;
  bool quiet = false;
  std::string emitPlan; ///< Plan output file, empty for none.
  PlanRequest::Lowerings planLowerings = PlanRequest::Lowerings::Checker;
  std::optional<size_t> planFusion;
  CheckOptions check;
  std::vector<std::string> files;
};

/// Parses an integer flag value; nullopt when malformed.
std::optional<int64_t> parseCount(const std::string &s) {
  if (s.empty() || s.size() > 9)
    return std::nullopt;
  int64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9')
      return std::nullopt;
    v = v * 10 + (c - '0');
  }
  return v;
}

/// Returns an exit status when parsing ends the run (help, bad usage).
std::optional<int> parseArgs(const std::vector<std::string> &args, Options &o, std::ostream &out,
                             std::ostream &err) {
  auto bad = [&](const std::string &msg) {
    err << "check-sharding: error: " << msg << "\n(run check-sharding --help for usage)\n";
    return 2;
  };
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string &a = args[i];
    auto value = [&]() -> std::optional<std::string> {
      if (i + 1 >= args.size())
        return std::nullopt;
      return args[++i];
    };
    if (a == "--help" || a == "-h") {
      out << kUsage;
      return 0;
    }
    if (a == "--version") {
      out << "check-sharding " << kVersion << "\n";
      return 0;
    }
    if (a == "--quiet") {
      o.quiet = true;
    } else if (a == "--no-cache") {
      o.check.useEdgeCache = false;
    } else if (a == "--format") {
      auto v = value();
      if (!v || (*v != "text" && *v != "json"))
        return bad("--format takes 'text' or 'json'");
      o.json = *v == "json";
    } else if (a == "--timeout-ms") {
      auto v = value();
      auto n = v ? parseCount(*v) : std::nullopt;
      if (!n || *n == 0 || *n > kMaxTimeoutMs)
        return bad("--timeout-ms takes a number of milliseconds between 1 and " +
                   std::to_string(kMaxTimeoutMs));
      o.check.timeoutMs = static_cast<unsigned>(*n);
    } else if (a == "--time-limit") {
      auto v = value();
      auto n = v ? parseCount(*v) : std::nullopt;
      if (!n || *n == 0 || *n > kMaxTimeLimitS)
        return bad("--time-limit takes a number of seconds between 1 and " +
                   std::to_string(kMaxTimeLimitS));
      o.check.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(*n);
    } else if (a == "--devices") {
      auto v = value();
      auto n = v ? parseCount(*v) : std::nullopt;
      if (!n || *n == 0 || *n > 65536)
        return bad("--devices takes a device count between 1 and 65536");
      o.check.devices = *n;
    } else if (a == "--emit-plan") {
      auto v = value();
      if (!v || v->empty())
        return bad("--emit-plan takes a file name");
      o.emitPlan = *v;
    } else if (a == "--plan-lowerings") {
      auto v = value();
      if (!v || (*v != "checker" && *v != "compiler"))
        return bad("--plan-lowerings takes 'checker' or 'compiler'");
      o.planLowerings =
          *v == "compiler" ? PlanRequest::Lowerings::Compiler : PlanRequest::Lowerings::Checker;
    } else if (a == "--fusion") {
      auto v = value();
      auto n = v ? parseCount(*v) : std::nullopt;
      if (!n)
        return bad("--fusion takes a fusion index (0 for the first)");
      o.planFusion = static_cast<size_t>(*n);
    } else if (a == "--nvfuser-runtime") {
      auto v = value();
      auto r = v ? parseNvfuserRuntime(*v) : std::nullopt;
      if (!r)
        return bad("--nvfuser-runtime takes '2024-12' (the default) or '2024-11'");
      o.check.runtime = *r;
    } else if (a == "--smt-dump") {
      auto v = value();
      if (!v || v->empty())
        return bad("--smt-dump takes a directory");
      o.check.smtDumpDir = *v;
    } else if (a.size() > 1 && a[0] == '-') {
      return bad("unknown option '" + a + "'");
    } else {
      o.files.push_back(a);
    }
  }
  if (o.files.empty())
    return bad("no input files");
  if (!o.emitPlan.empty() && o.files.size() != 1)
    return bad("--emit-plan plans one fusion: give exactly one input file");
  if (o.emitPlan.empty() && o.planFusion)
    return bad("--fusion selects the fusion --emit-plan plans");
  std::error_code ec;
  if (!o.emitPlan.empty() && std::filesystem::equivalent(o.emitPlan, o.files.front(), ec))
    return bad("--emit-plan " + o.emitPlan + " is the input file; the plan would overwrite it");
  if (!o.check.smtDumpDir.empty()) {
    std::filesystem::create_directories(o.check.smtDumpDir, ec);
    if (ec || !std::filesystem::is_directory(o.check.smtDumpDir))
      return bad("--smt-dump " + o.check.smtDumpDir + ": cannot create the directory" +
                 (ec ? " (" + ec.message() + ")" : std::string()));
  }
  return std::nullopt;
}

/// One input file as the tool prints it: its diagnostics in the order found
/// (verdicts rendered as diagnostics among the lints) and its verdicts.
struct FileResult {
  std::string file;
  DiagnosticEngine diags;
  std::vector<std::pair<size_t, EdgeVerdict>> edges; ///< (fusion index, verdict)
  bool unreadable = false;
};

struct Summary {
  size_t files = 0, fusions = 0, edges = 0;
  size_t proved = 0, refuted = 0, unknown = 0, unsupported = 0;
  size_t none = 0, alias = 0, collectives = 0;
  size_t compilerConfirmed = 0, compilerRefuted = 0, compilerUnknown = 0, unnecessary = 0;
  size_t lintErrors = 0, lintWarnings = 0, unreadable = 0;
  size_t uncheckedTensors = 0; ///< Tensors no checked edge computes.
  std::set<std::string> assumptions;
};

std::string edgeName(const EdgeVerdict &v) {
  return "T" + std::to_string(v.producer) + " -> T" + std::to_string(v.consumer);
}

/// The edge's own diagnostic: severity and code by its result.
Diagnostic edgeDiagnostic(const EdgeVerdict &v, EdgeResult result) {
  std::string head = edgeName(v) + " (" + v.exprName + "): ";
  Diagnostic d;
  d.loc = v.loc;
  switch (result) {
  case EdgeResult::Unsupported:
  case EdgeResult::Unmodelled:
    d.severity = result == EdgeResult::Unmodelled ? Severity::Warning : Severity::Error;
    d.code = "unsupported-resharding";
    d.message = head + "unsupported: " + v.reason;
    break;
  case EdgeResult::Unknown:
    d.severity = Severity::Warning;
    d.code = "unknown";
    d.message = head + v.lowering.str() + " unknown: " + v.reason;
    break;
  case EdgeResult::Proved:
  case EdgeResult::Refuted:
    d.severity = Severity::Note;
    d.code = "edge";
    d.message = head + v.lowering.str() + " " + statusName(v.status);
    break;
  }
  return d;
}

/// The diagnostic on the compiler's own choice for an edge.
Diagnostic compilerDiagnostic(const EdgeVerdict &v, const CompilerVerdict &c) {
  Diagnostic cd;
  cd.loc = c.loc;
  std::string what = edgeName(v) + ": " + c.source + ", " + c.lowering.str() + ", is ";
  switch (compilerResult(c)) {
  case CompilerResult::Unnecessary:
    cd.severity = Severity::Warning;
    cd.code = "unnecessary-communication";
    cd.message = what + "confirmed but unnecessary: the edge needs no communication";
    break;
  case CompilerResult::Confirmed:
    cd.severity = Severity::Note;
    cd.code = "compiler-confirmed";
    cd.message = what + "confirmed";
    break;
  case CompilerResult::Refuted:
    cd.severity = Severity::Error;
    cd.code = "compiler-refuted";
    cd.message = what + "refuted";
    if (c.counterexample)
      cd.addNote("counterexample: " + c.counterexample->message, c.loc);
    break;
  case CompilerResult::Unknown:
    cd.severity = Severity::Warning;
    cd.code = "compiler-unknown";
    cd.message = what + "unknown: " + c.reason;
    break;
  }
  return cd;
}

/// Adds one edge verdict (and the compiler's) as diagnostics.
void reportEdge(const EdgeVerdict &v, DiagnosticEngine &diags) {
  EdgeResult result = edgeResult(v);
  bool refuted = result == EdgeResult::Refuted || result == EdgeResult::Unsupported;
  Diagnostic d = edgeDiagnostic(v, result);
  // The witness disproves "no communication"; it is a counterexample to the
  // verdict only when the edge is refuted (an unknown one has none).
  if (v.counterexample && v.lowering.kind != CommKind::None)
    d.addNote((refuted ? "counterexample: " : "communication is needed: ") +
                  v.counterexample->message,
              v.loc);
  for (const auto &step : v.steps)
    d.addNote("two-step lowering: " + step.lowering.str() +
                  (step.intermediate.empty() ? "" : " via " + step.intermediate) + " " +
                  statusName(step.status) + (step.reason.empty() ? "" : ": " + step.reason),
              v.loc);
  if (!v.assumptions.empty() && result == EdgeResult::Proved) {
    std::string a;
    for (const auto &s : v.assumptions)
      a += (a.empty() ? "" : ", ") + s;
    d.addNote("proved for all sizes with " + a, v.loc);
  }
  diags.add(std::move(d));
  if (v.compiler)
    diags.add(compilerDiagnostic(v, *v.compiler));
}

void tally(const EdgeVerdict &v, Summary &s) {
  ++s.edges;
  switch (edgeResult(v)) {
  case EdgeResult::Unsupported:
  case EdgeResult::Unmodelled:
    ++s.unsupported;
    break;
  case EdgeResult::Proved:
    ++s.proved;
    if (v.lowering.kind == CommKind::None)
      ++s.none;
    else if (v.lowering.kind == CommKind::Alias)
      ++s.alias;
    else
      ++s.collectives;
    s.assumptions.insert(v.assumptions.begin(), v.assumptions.end());
    break;
  case EdgeResult::Refuted:
    ++s.refuted;
    break;
  case EdgeResult::Unknown:
    ++s.unknown;
    break;
  }
  if (!v.compiler)
    return;
  switch (compilerResult(*v.compiler)) {
  case CompilerResult::Unnecessary:
    ++s.unnecessary;
    [[fallthrough]];
  case CompilerResult::Confirmed:
    ++s.compilerConfirmed;
    break;
  case CompilerResult::Refuted:
    ++s.compilerRefuted;
    break;
  case CompilerResult::Unknown:
    ++s.compilerUnknown;
    break;
  }
}

/// Counts a diagnostic that is no verdict: a lint, an input error, a plan
/// that cannot be built.
void countFinding(const Diagnostic &d, Summary &s) {
  s.lintErrors += d.severity == Severity::Error;
  s.lintWarnings += d.severity == Severity::Warning;
}

/// Reads a whole file (for the plan's input hash); empty when unreadable.
std::string fileText(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

/// Writes the plan checkDocument built; the note saying so, or nullopt when
/// the file cannot be written.
std::optional<Diagnostic> writePlan(const Options &o, const Plan &plan, const Fusion &fusion) {
  std::ofstream out(o.emitPlan, std::ios::binary);
  out << planToJsonText(plan);
  out.close();
  if (!out)
    return std::nullopt;
  size_t unverified = std::count_if(plan.steps.begin(), plan.steps.end(),
                                    [](const PlanStep &s) { return !s.verified(); });
  return Diagnostic{
      Severity::Note,
      "plan",
      "plan written to " + o.emitPlan + ": " + std::to_string(plan.steps.size()) + " step(s)" +
          (unverified ? ", " + std::to_string(unverified) +
                            " resting on a refuted or unknown verdict (run-plan refuses them "
                            "without --allow-unverified)"
                      : ", all proved"),
      fusion.loc,
      {}};
}

/// One fusion's report as the tool prints it, in the order found: lints,
/// verdicts, unchecked tensors, the plan, an input error found while
/// checking. Counts it into `summary`; writes the plan.
void addFusion(const Options &o, const Fusion &fusion, const FusionReport &fr, FileResult &r,
               Summary &summary, bool &writeFailed) {
  ++summary.fusions;
  for (const auto &d : fr.lints) {
    r.diags.add(d);
    countFinding(d, summary);
  }
  for (const auto &v : fr.verdicts) {
    reportEdge(v, r.diags);
    tally(v, summary);
    r.edges.emplace_back(fr.index, v);
  }
  for (const auto &u : fr.unchecked) {
    r.diags.add(u.diagnostic);
    summary.uncheckedTensors += u.unknown;
  }
  if (fr.plan) {
    if (auto note = writePlan(o, *fr.plan, fusion))
      r.diags.add(*note);
    else
      writeFailed = true;
  }
  if (fr.noPlan)
    countFinding(r.diags.error("no-plan", std::string("no plan written: ") + fr.noPlan->what(),
                               fr.noPlan->loc),
                 summary);
  if (fr.inputError) {
    r.diags.add(*fr.inputError);
    countFinding(*fr.inputError, summary);
  }
  r.unreadable = r.unreadable || !fr.readable();
}

/// An input that could not be checked at all: unreadable (exit 2).
void addUnreadable(Diagnostic d, FileResult &r, Summary &summary) {
  countFinding(d, summary);
  r.diags.add(std::move(d));
  r.unreadable = true;
}

FileResult checkFile(const std::string &path, const Options &o, DocumentChecker &checker,
                     Summary &summary, bool &writeFailed) {
  FileResult r;
  r.file = path;
  Document doc;
  try {
    doc = readDocumentFile(path);
  } catch (const InputError &e) {
    addUnreadable(e.diagnostic(), r, summary);
    return r;
  }
  if (!o.emitPlan.empty() && o.planFusion.value_or(0) >= doc.fusions.size()) {
    addUnreadable(Diagnostic{Severity::Error,
                             "usage",
                             "--fusion " + std::to_string(o.planFusion.value_or(0)) + ": " + path +
                                 " has " + std::to_string(doc.fusions.size()) + " fusion(s)",
                             SourceLoc{path, 0, 0},
                             {}},
                  r, summary);
    return r;
  }
  DocumentReport report = checker.check(doc);
  for (const FusionReport &fr : report.fusions)
    addFusion(o, doc.fusions[fr.index], fr, r, summary, writeFailed);
  return r;
}

nlohmann::json counterexampleJson(const std::optional<Counterexample> &c) {
  if (!c)
    return nullptr;
  nlohmann::json j;
  j["message"] = c->message;
  if (!c->rule.empty())
    j["runtime_rule"] = c->rule;
  j["bindings"] = c->bindings;
  if (c->device >= 0)
    j["device"] = c->device;
  if (!c->consumerIndex.empty())
    j["consumer_index"] = c->consumerIndex;
  if (!c->producerIndex.empty())
    j["producer_index"] = c->producerIndex;
  j["holders"] = c->holders;
  if (c->offset)
    j["offset"] = *c->offset;
  return j;
}

nlohmann::json loweringJson(const Lowering &l) {
  nlohmann::json teams = nlohmann::json::array();
  for (const auto &t : l.teams) {
    nlohmann::json jt;
    jt["devices"] = t.devices;
    if (t.root)
      jt["root"] = *t.root;
    if (!t.pairs.empty())
      jt["pairs"] = t.pairs;
    teams.push_back(jt);
  }
  return {{"text", l.str()}, {"local_permute", l.localPermute}, {"teams", teams}};
}

nlohmann::json edgeJson(size_t fusion, const EdgeVerdict &v) {
  nlohmann::json j;
  j["fusion"] = fusion;
  j["producer"] = "T" + std::to_string(v.producer);
  j["consumer"] = "T" + std::to_string(v.consumer);
  j["expr"] = v.exprName;
  j["line"] = v.loc.line;
  j["column"] = v.loc.column;
  j["communication"] = commKindName(v.lowering.kind);
  j["status"] = statusName(v.status);
  j["lowering"] = loweringJson(v.lowering);
  j["counterexample"] = counterexampleJson(v.counterexample);
  j["reason"] = v.reason;
  j["assumptions"] = v.assumptions;
  nlohmann::json steps = nlohmann::json::array();
  for (const auto &s : v.steps) {
    nlohmann::json js = loweringJson(s.lowering);
    js["status"] = statusName(s.status);
    js["intermediate"] = s.intermediate;
    js["reason"] = s.reason;
    steps.push_back(js);
  }
  j["steps"] = steps;
  if (v.compiler) {
    const auto &c = *v.compiler;
    const char *status = c.status == Status::Proved    ? "confirmed"
                         : c.status == Status::Refuted ? "refuted"
                                                       : "unknown";
    j["compiler"] = {{"communication", commKindName(c.lowering.kind)},
                     {"status", status},
                     {"source", c.source},
                     {"lowering", loweringJson(c.lowering)},
                     {"unnecessary", c.unnecessary},
                     {"counterexample", counterexampleJson(c.counterexample)},
                     {"reason", c.reason}};
  } else {
    j["compiler"] = nullptr;
  }
  return j;
}

nlohmann::json diagnosticJson(const Diagnostic &d) {
  nlohmann::json notes = nlohmann::json::array();
  for (const auto &n : d.notes)
    notes.push_back(diagnosticJson(n));
  return {{"severity", severityName(d.severity)},
          {"code", d.code},
          {"message", d.message},
          {"line", d.loc.line},
          {"column", d.loc.column},
          {"notes", notes}};
}

nlohmann::json summaryJson(const Summary &s, const CheckStats &stats, NvfuserRuntime runtime) {
  return {{"files", s.files},
          {"nvfuser_runtime", nvfuserRuntimeName(runtime)},
          {"fusions", s.fusions},
          {"edges", s.edges},
          {"proved", s.proved},
          {"refuted", s.refuted},
          {"unknown", s.unknown},
          {"unsupported", s.unsupported},
          {"none", s.none},
          {"alias", s.alias},
          {"collectives", s.collectives},
          {"compiler_confirmed", s.compilerConfirmed},
          {"compiler_refuted", s.compilerRefuted},
          {"compiler_unknown", s.compilerUnknown},
          {"unnecessary_communication", s.unnecessary},
          {"lint_errors", s.lintErrors},
          {"lint_warnings", s.lintWarnings},
          {"unreadable_files", s.unreadable},
          {"unchecked_tensors", s.uncheckedTensors},
          {"assumptions", s.assumptions},
          {"edge_cache_hits", stats.edgeCacheHits},
          {"smt_queries", stats.solver.queries},
          {"smt_cache_hits", stats.solver.cacheHits}};
}

int exitStatus(const Summary &s) {
  if (s.unreadable)
    return 2;
  if (s.lintErrors || s.compilerRefuted || s.unsupported || s.refuted)
    return 1;
  if (s.unknown || s.compilerUnknown || s.uncheckedTensors)
    return 3;
  return 0;
}

void printSummaryText(std::ostream &out, const Summary &s, const CheckStats &stats,
                      NvfuserRuntime runtime) {
  out << "summary: " << s.files << " file(s), " << s.fusions << " fusion(s), " << s.edges
      << " edge(s): " << s.proved << " proved (" << s.none << " none, " << s.alias << " alias, "
      << s.collectives << " collective), " << s.refuted << " refuted, " << s.unknown << " unknown, "
      << s.unsupported << " unsupported; compiler choices: " << s.compilerConfirmed
      << " confirmed (" << s.unnecessary << " unnecessary), " << s.compilerRefuted << " refuted, "
      << s.compilerUnknown << " unknown; lints: " << s.lintErrors << " error(s), " << s.lintWarnings
      << " warning(s)";
  if (s.compilerConfirmed || s.compilerRefuted || s.compilerUnknown)
    out << " (compiler choices checked against nvFuser's " << nvfuserRuntimeName(runtime)
        << " runtime rules)";
  if (s.uncheckedTensors)
    out << "; " << s.uncheckedTensors << " tensor(s) no checked edge computes";
  if (s.unreadable)
    out << "; " << s.unreadable << " unreadable input(s)";
  out << "\n";
  if (!s.assumptions.empty()) {
    out << "proofs cover all sizes with:";
    for (const auto &a : s.assumptions)
      out << " " << a << ";";
    out << "\n";
  }
  out << "solver: " << stats.solver.queries << " queries (" << stats.solver.cacheHits
      << " answered from cache), " << stats.edgeCacheHits
      << " edges decided by an identical edge\n";
}

} // namespace

int runCheckSharding(const std::vector<std::string> &args, std::ostream &out, std::ostream &err) {
  Options o;
  if (auto status = parseArgs(args, o, out, err))
    return *status;
  DocumentOptions options;
  options.check = o.check;
  if (!o.emitPlan.empty())
    options.plan = PlanOptions{o.planFusion.value_or(0), o.planLowerings, fileText(o.files.front())};
  DocumentChecker checker(options);
  Summary summary;
  std::vector<FileResult> results;
  bool writeFailed = false;
  for (const auto &f : o.files) {
    results.push_back(checkFile(f, o, checker, summary, writeFailed));
    ++summary.files;
    summary.unreadable += results.back().unreadable;
  }
  if (o.json) {
    nlohmann::json files = nlohmann::json::array();
    for (const auto &r : results) {
      nlohmann::json diags = nlohmann::json::array(), edges = nlohmann::json::array();
      for (const auto &d : r.diags.diagnostics())
        if (d.code != "edge")
          diags.push_back(diagnosticJson(d));
      for (const auto &[fi, v] : r.edges)
        edges.push_back(edgeJson(fi, v));
      files.push_back({{"file", r.file},
                       {"readable", !r.unreadable},
                       {"diagnostics", diags},
                       {"edges", edges}});
    }
    nlohmann::json doc = {{"tool", "check-sharding"},
                          {"version", kVersion},
                          {"files", files},
                          {"summary", summaryJson(summary, checker.stats(), o.check.runtime)},
                          {"exit_status", exitStatus(summary)}};
    out << doc.dump(2) << "\n";
  } else {
    for (const auto &r : results)
      for (const auto &d : r.diags.diagnostics()) {
        if (o.quiet && d.severity == Severity::Note)
          continue;
        printDiagnostic(d.severity == Severity::Error && r.unreadable ? err : out, d);
      }
    printSummaryText(out, summary, checker.stats(), o.check.runtime);
  }
  if (writeFailed) {
    err << "check-sharding: error: cannot write the plan to " << o.emitPlan << "\n";
    return 2;
  }
  return exitStatus(summary);
}

int checkShardingMain(int argc, char **argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  return runCheckSharding(args, std::cout, std::cerr);
}

} // namespace shardcheck
