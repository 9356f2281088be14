// The check-sharding driver; see Driver.h.
#include "checker/Driver.h"

#include "checker/Checker.h"
#include "checker/PlanBuilder.h"
#include "ir/ExprShape.h"
#include "ir/FusionGraph.h"
#include "ir/Lints.h"
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

struct FileResult {
  std::string file;
  DiagnosticEngine diags;
  std::vector<std::pair<size_t, EdgeVerdict>> edges; ///< (fusion index, verdict)
  bool unreadable = false;
  bool partial = false; ///< A truncated paste: only its complete statements were checked.
};

struct Summary {
  size_t files = 0, fusions = 0, edges = 0;
  size_t proved = 0, refuted = 0, unknown = 0, unsupported = 0;
  size_t none = 0, alias = 0, collectives = 0;
  size_t compilerConfirmed = 0, compilerRefuted = 0, compilerUnknown = 0, unnecessary = 0;
  size_t lintErrors = 0, lintWarnings = 0, unreadable = 0;
  size_t uncheckedTensors = 0; ///< Tensors no checked edge computes.
  size_t partialFiles = 0;     ///< Truncated inputs, analyzed as far as they go.
  std::set<std::string> assumptions;
};

std::string edgeName(const EdgeVerdict &v) {
  return "T" + std::to_string(v.producer) + " -> T" + std::to_string(v.consumer);
}

/// Equal for the verdicts of one producer -> consumer edge of one expression
/// that say the same (an expression using its producer twice).
std::string sameEdgeKey(const EdgeVerdict &v) {
  std::string k = std::to_string(v.expr) + "|" + edgeName(v) + "|" + v.lowering.str() + "|" +
                  std::to_string(static_cast<int>(v.status)) + "|" + v.reason;
  if (v.compiler)
    k += "|compiler";
  return k;
}

/// Adds one edge verdict (and the compiler's) as diagnostics.
void reportEdge(const EdgeVerdict &v, DiagnosticEngine &diags) {
  std::string head = edgeName(v) + " (" + v.exprName + "): ";
  Diagnostic d;
  d.loc = v.loc;
  d.code = "edge";
  if (v.lowering.kind == CommKind::Unsupported) {
    d.severity = v.status == Status::Unknown ? Severity::Warning : Severity::Error;
    d.code = "unsupported-resharding";
    d.message = head + "unsupported: " + v.reason;
  } else if (v.status == Status::Unknown) {
    d.severity = Severity::Warning;
    d.code = "unknown";
    d.message = head + v.lowering.str() + " unknown: " + v.reason;
  } else {
    d.severity = Severity::Note;
    d.message = head + v.lowering.str() + " " + statusName(v.status);
  }
  // The witness disproves "no communication"; it is a counterexample to the
  // verdict only when the edge is refuted (an unknown one has none).
  if (v.counterexample && v.lowering.kind != CommKind::None)
    d.addNote((v.status == Status::Refuted ? "counterexample: " : "communication is needed: ") +
                  v.counterexample->message,
              v.loc);
  for (const auto &step : v.steps)
    d.addNote("two-step lowering: " + step.lowering.str() +
                  (step.intermediate.empty() ? "" : " via " + step.intermediate) + " " +
                  statusName(step.status) + (step.reason.empty() ? "" : ": " + step.reason),
              v.loc);
  if (!v.assumptions.empty() && v.status == Status::Proved) {
    std::string a;
    for (const auto &s : v.assumptions)
      a += (a.empty() ? "" : ", ") + s;
    d.addNote("proved for all sizes with " + a, v.loc);
  }
  diags.add(std::move(d));

  if (!v.compiler)
    return;
  const CompilerVerdict &c = *v.compiler;
  Diagnostic cd;
  cd.loc = c.loc;
  std::string what = edgeName(v) + ": " + c.source + ", " + c.lowering.str() + ", is ";
  if (c.status == Status::Proved && c.unnecessary) {
    cd.severity = Severity::Warning;
    cd.code = "unnecessary-communication";
    cd.message = what + "confirmed but unnecessary: the edge needs no communication";
  } else if (c.status == Status::Proved) {
    cd.severity = Severity::Note;
    cd.code = "compiler-confirmed";
    cd.message = what + "confirmed";
  } else if (c.status == Status::Refuted) {
    cd.severity = Severity::Error;
    cd.code = "compiler-refuted";
    cd.message = what + "refuted";
    if (c.counterexample)
      cd.addNote("counterexample: " + c.counterexample->message, c.loc);
  } else {
    cd.severity = Severity::Warning;
    cd.code = "compiler-unknown";
    cd.message = what + "unknown: " + c.reason;
  }
  diags.add(std::move(cd));
}

void tally(const EdgeVerdict &v, Summary &s) {
  ++s.edges;
  if (v.lowering.kind == CommKind::Unsupported)
    ++s.unsupported;
  else if (v.status == Status::Proved)
    ++s.proved;
  else if (v.status == Status::Refuted)
    ++s.refuted;
  else
    ++s.unknown;
  if (v.status == Status::Proved) {
    if (v.lowering.kind == CommKind::None)
      ++s.none;
    else if (v.lowering.kind == CommKind::Alias)
      ++s.alias;
    else if (v.lowering.kind != CommKind::Unsupported)
      ++s.collectives;
    s.assumptions.insert(v.assumptions.begin(), v.assumptions.end());
  }
  if (v.compiler) {
    if (v.compiler->status == Status::Proved)
      ++s.compilerConfirmed;
    else if (v.compiler->status == Status::Refuted)
      ++s.compilerRefuted;
    else
      ++s.compilerUnknown;
    s.unnecessary += v.compiler->unnecessary;
  }
}

/// Tensors no checked edge computes: outputs no expression read defines, and
/// outputs of expressions without a tensor operand (`full`, or an operand
/// the reader took for a scalar). Nothing about them was checked and their
/// plan steps rest on no verdict. In a kernel or a JSON IR fusion that makes
/// the run unknown (exit 3 at best); a host IR program printed on one device
/// routinely leaves outputs to another device's program (or to a
/// PostOnStream the reader skips), so there an uncomputed output is a note.
void reportUncheckedTensors(const Fusion &fusion, DiagnosticEngine &diags, Summary &s) {
  bool hostIr = fusion.kind == BlockKind::HostIr;
  auto warn = [&](TensorNum t, const std::string &why, const SourceLoc &loc) {
    ++s.uncheckedTensors;
    diags.add(Diagnostic{Severity::Warning, "unknown",
                         fusion.tensor(t).name() + " " + why + ": its sharding is not checked",
                         loc,
                         {}});
  };
  for (TensorNum t : uncomputedOutputs(fusion)) {
    if (!hostIr) {
      warn(t, "is a fusion output, but no expression shardcheck read defines it",
           fusion.tensor(t).loc);
      continue;
    }
    diags.add(Diagnostic{Severity::Note, "unknown",
                         fusion.tensor(t).name() +
                             " is a fusion output this host IR program does not compute "
                             "(another device's program or a skipped statement may): not "
                             "checked here",
                         fusion.tensor(t).loc,
                         {}});
  }
  for (const Expr &e : fusion.exprs)
    if (e.tensorInputs().empty())
      for (TensorNum t : e.outputs)
        warn(t, "is defined by `" + shownToken(e.op) + "` from no tensor operand", e.loc);
}

/// Reads a whole file (for the plan's input hash); empty when unreadable.
std::string fileText(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

/// Builds and writes the plan of fusion `fi` when the options ask for it.
/// A fusion that cannot be planned is an error diagnostic (a finding); a
/// file that cannot be written is reported by setting `writeFailed`.
void emitPlanIfAsked(const Options &o, const Document &doc, size_t fi, const Fusion &fusion,
                     const FusionGraph &graph, const std::vector<EdgeVerdict> &verdicts,
                     FileResult &r, bool &writeFailed) {
  if (o.emitPlan.empty() || fi != o.planFusion.value_or(0))
    return;
  PlanRequest request;
  request.lowerings = o.planLowerings;
  request.inputFile = doc.file;
  request.inputText = fileText(doc.file);
  request.fusionIndex = fi;
  request.devices = o.check.devices;
  Plan plan;
  try {
    plan = buildPlan(fusion, graph, verdicts, request);
  } catch (const PlanError &e) {
    r.diags.error("no-plan", std::string("no plan written: ") + e.what(), e.loc);
    return;
  }
  std::ofstream out(o.emitPlan, std::ios::binary);
  out << planToJsonText(plan);
  out.close();
  if (!out) {
    writeFailed = true;
    return;
  }
  size_t unverified = std::count_if(plan.steps.begin(), plan.steps.end(),
                                    [](const PlanStep &s) { return !s.verified(); });
  r.diags.add(Diagnostic{
      Severity::Note,
      "plan",
      "plan written to " + o.emitPlan + ": " + std::to_string(plan.steps.size()) + " step(s)" +
          (unverified ? ", " + std::to_string(unverified) +
                            " resting on a refuted or unknown verdict (run-plan refuses them "
                            "without --allow-unverified)"
                      : ", all proved"),
      fusion.loc,
      {}});
}

FileResult checkFile(const std::string &path, const Options &o, Checker &checker, Summary &summary,
                     bool &writeFailed) {
  FileResult r;
  r.file = path;
  Document doc;
  try {
    doc = readDocumentFile(path);
  } catch (const InputError &e) {
    r.diags.add(e.diagnostic());
    r.unreadable = true;
    return r;
  }
  if (doc.truncated) {
    // Never presented as whole: a warning where the input ends, the file
    // marked partial, and an exit status that is never 0 (exitStatus).
    r.partial = true;
    r.diags.warning("truncated-input", doc.truncated->message, doc.truncated->loc);
  }
  if (!o.emitPlan.empty() && o.planFusion.value_or(0) >= doc.fusions.size()) {
    r.diags.error("usage",
                  "--fusion " + std::to_string(o.planFusion.value_or(0)) + ": " + path + " has " +
                      std::to_string(doc.fusions.size()) + " fusion(s)",
                  SourceLoc{path, 0, 0});
    r.unreadable = true;
    return r;
  }
  for (size_t fi = 0; fi < doc.fusions.size(); ++fi) {
    const Fusion &fusion = doc.fusions[fi];
    ++summary.fusions;
    lintFusion(fusion, r.diags);
    DiagnosticEngine graphDiags;
    auto graph = FusionGraph::build(fusion, graphDiags);
    for (const auto &d : graphDiags.diagnostics())
      r.diags.add(d);
    if (!graph) {
      r.unreadable = true;
      continue;
    }
    // Bad input the readers could not see (a size that overflows only once
    // derived) surfaces here; the fusion then counts as unreadable (exit 2).
    try {
      std::vector<EdgeVerdict> verdicts = checker.checkFusion(fusion, *graph);
      std::set<std::string> reported;
      for (const auto &v : verdicts) {
        // `T1 = T0 + T0` has one edge T0 -> T1 (two operands, one verdict).
        if (!reported.insert(sameEdgeKey(v)).second)
          continue;
        reportEdge(v, r.diags);
        tally(v, summary);
        r.edges.emplace_back(fi, v);
      }
      reportUncheckedTensors(fusion, r.diags, summary);
      emitPlanIfAsked(o, doc, fi, fusion, *graph, verdicts, r, writeFailed);
    } catch (const InputError &e) {
      Diagnostic d = e.diagnostic();
      if (d.loc.file.empty())
        d.loc = fusion.loc;
      r.diags.add(std::move(d));
      r.unreadable = true;
    }
  }
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
          {"partial_files", s.partialFiles},
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
  if (s.unknown || s.compilerUnknown || s.uncheckedTensors || s.partialFiles)
    return 3;
  return 0;
}

void countLints(const FileResult &r, Summary &s) {
  for (const auto &d : r.diags.diagnostics()) {
    bool verdict = d.code == "edge" || d.code == "unsupported-resharding" || d.code == "unknown" ||
                   d.code.rfind("compiler-", 0) == 0 || d.code == "unnecessary-communication";
    if (verdict)
      continue;
    s.lintErrors += d.severity == Severity::Error;
    s.lintWarnings += d.severity == Severity::Warning;
  }
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
  if (s.partialFiles)
    out << "; " << s.partialFiles << " truncated input(s) checked only as far as they go";
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
  Checker checker(o.check);
  Summary summary;
  std::vector<FileResult> results;
  bool writeFailed = false;
  for (const auto &f : o.files) {
    results.push_back(checkFile(f, o, checker, summary, writeFailed));
    ++summary.files;
    summary.unreadable += results.back().unreadable;
    summary.partialFiles += results.back().partial;
    countLints(results.back(), summary);
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
                       {"partial", r.partial},
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
