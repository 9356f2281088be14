// The check-sharding command line; see CheckSharding.h.
#include "tools/check_sharding/CheckSharding.h"

#include "checker/CheckDocument.h"
#include "dtensor/DTensorInput.h"
#include "ir/Json.h"
#include "ir/reader/DumpReader.h"
#include "tools/check_sharding/Baseline.h"
#include "tools/check_sharding/Dot.h"
#include "tools/check_sharding/Graphviz.h"
#include "tools/check_sharding/HtmlReport.h"
#include "tools/check_sharding/Inputs.h"
#include "tools/check_sharding/Junit.h"
#include "tools/check_sharding/Progress.h"
#include "tools/check_sharding/Render.h"
#include "tools/check_sharding/Sarif.h"
#include "tools/check_sharding/Summary.h"
#include "tools/common/CommandLine.h"
#include "tools/common/HtmlPage.h"
#include "util/Version.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <iterator>
#include <optional>
#include <sstream>
#include <thread>

#include <unistd.h>

namespace shardcheck {

namespace {

using checksharding::BaselineComparison;
using checksharding::exitStatus;
using checksharding::fileJson;
using checksharding::FileOutput;
using checksharding::Input;
using checksharding::printFileText;
using checksharding::printSummaryText;
using checksharding::Summary;
using checksharding::summaryJson;

constexpr const char *kUsage = R"(usage: check-sharding [options] INPUT...

Reads nvFuser dumps (or shardcheck JSON IR) and, for every producer -> consumer
edge, proves whether communication is needed and which collective moves exactly
the right data, or prints a counterexample. Confirms or refutes the compiler's
own choices (host IR Communications, resharding Sets).

An INPUT is a file, a directory (its .txt, .log and .json files, recursively,
in path order), - (standard input) or @LIST (the inputs LIST names, one a line).

options:
  --format text|json|sarif|junit|dot
                       output style (default: text); sarif is SARIF 2.1.0,
                       junit is JUnit XML (docs/ci-gate.md), dot is each
                       fusion's graph, edges coloured by verdict (Graphviz)
  --report-html DIR    also write an HTML page per input and DIR/index.html:
                       the graph (laid out by Graphviz's dot when installed),
                       every edge's proof or counterexample, the lints
  -j N, --jobs N       check N files at a time (default: the cores); the
                       output is the same as with -j 1
  --baseline FILE      exit 1 (or 3) only for findings FILE does not record;
                       report the recorded ones that are gone
  --write-baseline FILE
                       record this run's findings in FILE (docs/ci-gate.md)
  --emit-ir FILE       write the (one) input as shardcheck JSON IR to FILE
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
constexpr int64_t kMaxTimeoutMs = 3600 * 1000;    ///< One hour per query.
constexpr int64_t kMaxTimeLimitS = 7 * 24 * 3600; ///< A week per run.

enum class Format { Text, Json, Sarif, Junit, Dot };

struct Options {
  Format format = Format::Text;
  bool quiet = false;
  size_t jobs = 0;                     ///< 0: the cores.
  std::string emitPlan;                ///< Plan output file, empty for none.
  std::string emitIr;                  ///< JSON IR output file, empty for none.
  std::string baseline, writeBaseline; ///< Baseline files, empty for none.
  std::string reportHtml;              ///< HTML report directory, empty for none.
  PlanRequest::Lowerings planLowerings = PlanRequest::Lowerings::Checker;
  std::optional<size_t> planFusion;
  CheckOptions check;
  std::vector<std::string> files; ///< As given (Inputs.h expands them).
  std::vector<Input> inputs;
};

/// Parses an integer flag value (at most 9 digits); nullopt when malformed.
std::optional<int64_t> parseCount(const std::string &s) {
  auto v = parseDecimal(s, 0, 999999999);
  return v ? std::optional<int64_t>(static_cast<int64_t>(*v)) : std::nullopt;
}

/// Reads option `a` when it chooses what the run writes (format, jobs, output
/// files). Returns nullopt when `a` is another option, else what is wrong
/// with it ("" when nothing is).
std::optional<std::string>
parseOutputOption(const std::string &a, const std::function<std::optional<std::string>()> &value,
                  Options &o) {
  static const std::vector<std::pair<const char *, std::string Options::*>> fileFlags = {
      {"--emit-plan", &Options::emitPlan},
      {"--emit-ir", &Options::emitIr},
      {"--baseline", &Options::baseline},
      {"--write-baseline", &Options::writeBaseline},
      {"--report-html", &Options::reportHtml}};
  for (const auto &[flag, member] : fileFlags) {
    if (a != flag)
      continue;
    auto v = value();
    if (!v || v->empty())
      return std::string(flag) + " takes a file name";
    o.*member = *v;
    return "";
  }
  if (a == "--format") {
    static const std::vector<std::pair<std::string, Format>> formats = {{"text", Format::Text},
                                                                        {"json", Format::Json},
                                                                        {"sarif", Format::Sarif},
                                                                        {"junit", Format::Junit},
                                                                        {"dot", Format::Dot}};
    auto v = value();
    for (const auto &[name, format] : formats)
      if (v && *v == name) {
        o.format = format;
        return "";
      }
    return "--format takes 'text', 'json', 'sarif', 'junit' or 'dot'";
  }
  if (a == "-j" || a == "--jobs") {
    auto v = value();
    auto n = v ? parseCount(*v) : std::nullopt;
    if (!n || *n == 0 || *n > 1024)
      return "-j takes a number of jobs between 1 and 1024";
    o.jobs = static_cast<size_t>(*n);
    return "";
  }
  return std::nullopt;
}

/// Reads option `a`, taking its value from `value` where it has one. Returns
/// what is wrong with it, or "" when it is fine.
std::string parseOption(const std::string &a,
                        const std::function<std::optional<std::string>()> &value, Options &o) {
  if (a == "--quiet") {
    o.quiet = true;
  } else if (a == "--no-cache") {
    o.check.useEdgeCache = false;
  } else if (auto outputError = parseOutputOption(a, value, o)) {
    return *outputError;
  } else if (a == "--timeout-ms") {
    auto v = value();
    auto n = v ? parseCount(*v) : std::nullopt;
    if (!n || *n == 0 || *n > kMaxTimeoutMs)
      return "--timeout-ms takes a number of milliseconds between 1 and " +
             std::to_string(kMaxTimeoutMs);
    o.check.timeoutMs = static_cast<unsigned>(*n);
  } else if (a == "--time-limit") {
    auto v = value();
    auto n = v ? parseCount(*v) : std::nullopt;
    if (!n || *n == 0 || *n > kMaxTimeLimitS)
      return "--time-limit takes a number of seconds between 1 and " +
             std::to_string(kMaxTimeLimitS);
    o.check.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(*n);
  } else if (a == "--devices") {
    auto v = value();
    auto n = v ? parseCount(*v) : std::nullopt;
    if (!n || *n == 0 || *n > 65536)
      return "--devices takes a device count between 1 and 65536";
    o.check.devices = *n;
  } else if (a == "--plan-lowerings") {
    auto v = value();
    if (!v || (*v != "checker" && *v != "compiler"))
      return "--plan-lowerings takes 'checker' or 'compiler'";
    o.planLowerings =
        *v == "compiler" ? PlanRequest::Lowerings::Compiler : PlanRequest::Lowerings::Checker;
  } else if (a == "--fusion") {
    auto v = value();
    auto n = v ? parseCount(*v) : std::nullopt;
    if (!n)
      return "--fusion takes a fusion index (0 for the first)";
    o.planFusion = static_cast<size_t>(*n);
  } else if (a == "--nvfuser-runtime") {
    auto v = value();
    auto r = v ? parseNvfuserRuntime(*v) : std::nullopt;
    if (!r)
      return "--nvfuser-runtime takes '2024-12' (the default) or '2024-11'";
    o.check.runtime = *r;
  } else if (a == "--smt-dump") {
    auto v = value();
    if (!v || v->empty())
      return "--smt-dump takes a directory";
    o.check.smtDumpDir = *v;
  } else {
    return "unknown option '" + a + "'";
  }
  return "";
}

/// What is wrong with the flags together, or "" when nothing is. Creates
/// the --smt-dump directory.
std::string checkCombination(Options &o) {
  if (o.inputs.empty())
    return "no input files";
  if (!o.emitPlan.empty() && o.inputs.size() != 1)
    return "--emit-plan plans one fusion: give exactly one input file";
  if (!o.emitIr.empty() && o.inputs.size() != 1)
    return "--emit-ir writes one document: give exactly one input file";
  if (o.emitPlan.empty() && o.planFusion)
    return "--fusion selects the fusion --emit-plan plans";
  std::error_code ec;
  struct Written {
    const char *flag, *what;
    const std::string &path;
  };
  for (const Written &w :
       {Written{"--emit-plan", "plan", o.emitPlan}, Written{"--emit-ir", "JSON IR", o.emitIr},
        Written{"--write-baseline", "baseline", o.writeBaseline}})
    for (const auto &input : o.inputs)
      if (!w.path.empty() && std::filesystem::equivalent(w.path, input.name, ec))
        return std::string(w.flag) + " " + w.path + " is the input file " + input.name + "; the " +
               w.what + " would overwrite it";
  if (!o.check.smtDumpDir.empty()) {
    std::filesystem::create_directories(o.check.smtDumpDir, ec);
    if (ec || !std::filesystem::is_directory(o.check.smtDumpDir))
      return "--smt-dump " + o.check.smtDumpDir + ": cannot create the directory" +
             (ec ? " (" + ec.message() + ")" : std::string());
  }
  return "";
}

const ToolInfo kTool{"check-sharding", kUsage, kVersion};

/// Returns an exit status when parsing ends the run (help, bad usage).
std::optional<int> parseArgs(const std::vector<std::string> &args, Options &o, std::istream &in,
                             std::ostream &out, std::ostream &err) {
  auto option = [&](const std::string &a, const NextValue &value) {
    return parseOption(a, value, o);
  };
  auto operand = [&](const std::string &a) {
    o.files.push_back(a);
    return std::string();
  };
  if (auto status = walkArguments(kTool, args, out, err, option, operand))
    return status;
  if (std::string error = checksharding::expandInputs(o.files, in, o.inputs); !error.empty())
    return usageError(kTool, err, error);
  if (std::string error = checkCombination(o); !error.empty())
    return usageError(kTool, err, error);
  return std::nullopt;
}

/// The input's bytes (for the plan's input hash); empty when unreadable.
std::string inputText(const Input &input) {
  if (input.text)
    return *input.text;
  std::ifstream in(input.name, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

/// Writes the plan checkDocument built; the note saying so, or nullopt when
/// the file cannot be written.
std::optional<Diagnostic> writePlan(const Options &o, const Plan &plan, const Fusion &fusion) {
  if (!writeTextFile(o.emitPlan, planToJsonText(plan)))
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

/// One file checked: what the tool shows of it, its counts, and the output
/// file that could not be written ("" when none).
struct CheckedFile {
  FileOutput output;
  Summary summary;
  std::string writeFailed;
};

/// A file that could not be checked at all: unreadable (exit 2).
void addUnreadable(Diagnostic why, CheckedFile &c) {
  c.summary.addUnreadableFile(why);
  checksharding::addUnreadableFile(std::move(why), c.output);
}

/// --emit-plan on a truncated input: a plan of the complete statements would
/// present a partial analysis as the fusion's plan, so none is written; the
/// fusion to plan says why, and the run exits kPlanRefusedStatus.
void refusePlan(const Diagnostic &truncated, size_t planFusion, DocumentReport &report) {
  for (FusionReport &fr : report.fusions) {
    fr.plan.reset();
    fr.noPlan.reset();
    if (fr.index == planFusion)
      fr.noPlan = PlanError("--emit-plan refused: the input ends early (" + truncated.loc.str() +
                                "), so the analysis is partial and a plan of it would leave out "
                                "what the dump would have said from there on",
                            truncated.loc);
  }
}

CheckedFile checkFile(const Input &input, const Options &o, DocumentChecker &checker) {
  CheckedFile c;
  c.output.file = input.name;
  Document doc;
  std::optional<dtensor::DTensorCase> dtensorCase;
  try {
    // Dumps, JSON IR, and DTensor documents (dtensor/DTensorInput.h).
    dtensor::InputDocument read = input.text ? dtensor::readInputDocument(*input.text, input.name)
                                             : dtensor::readInputDocumentFile(input.name);
    doc = std::move(read.doc);
    dtensorCase = std::move(read.dtensor);
    for (Diagnostic &note : read.notes)
      c.output.addFinding(std::move(note), 0, std::nullopt);
  } catch (const InputError &e) {
    addUnreadable(e.diagnostic(), c);
    return c;
  }
  if (!o.emitPlan.empty() && o.planFusion.value_or(0) >= doc.fusions.size()) {
    addUnreadable(Diagnostic{Severity::Error,
                             "usage",
                             "--fusion " + std::to_string(o.planFusion.value_or(0)) + ": " +
                                 input.name + " has " + std::to_string(doc.fusions.size()) +
                                 " fusion(s)",
                             SourceLoc{input.name, 0, 0},
                             {}},
                  c);
    return c;
  }
  if (!o.emitIr.empty() && !writeTextFile(o.emitIr, documentToJsonText(doc)))
    c.writeFailed = "cannot write the JSON IR to " + o.emitIr;
  DocumentReport report = checker.check(doc);
  c.summary.addDocument(report);
  // A plan of a truncated input's complete statements would present a
  // partial analysis as whole: refused (addDocumentReport adds the warning).
  if (report.truncated && !o.emitPlan.empty())
    refusePlan(*report.truncated, o.planFusion.value_or(0), report);
  // The plan's note goes where the plan was found: after the unchecked
  // tensors, before a no-plan finding.
  auto addPlan = [&](const FusionReport &fr) {
    if (!fr.plan)
      return;
    if (auto note = writePlan(o, *fr.plan, doc.fusions[fr.index]))
      c.output.add(*note);
    else
      c.writeFailed = "cannot write the plan to " + o.emitPlan;
  };
  checksharding::addDocumentReport(doc, report, c.output, addPlan);
  // A DTensor document: both plans' bytes per rank, once its transition
  // (fusion 0) is decided.
  if (dtensorCase && !report.fusions.empty() && !doc.fusions.empty())
    checksharding::addDTensorBytes(dtensor::bytesSideBySide(*dtensorCase, doc.fusions.front(),
                                                            report.fusions.front().verdicts),
                                   dtensorCase->loc, c.output);
  return c;
}

void addStats(CheckStats &total, const CheckStats &s) {
  total.edges += s.edges;
  total.edgeCacheHits += s.edgeCacheHits;
  total.solver.queries += s.solver.queries;
  total.solver.cacheHits += s.solver.cacheHits;
  total.solver.sat += s.solver.sat;
  total.solver.unsat += s.solver.unsat;
  total.solver.unknown += s.solver.unknown;
}

/// Checks every input with `jobs` workers, each file with a fresh
/// DocumentChecker: a checker's caches make the witness it prints for an
/// edge depend on what it checked before, so sharing one across files would
/// make a file's output depend on which files a worker took before it. The
/// results are in input order whatever the order of checking; `stats` gets
/// every file's counts added.
std::vector<CheckedFile> checkInputs(const Options &o, const DocumentOptions &options, size_t jobs,
                                     CheckStats &stats, std::ostream *progressTo) {
  checksharding::ProgressLine progress(progressTo, o.inputs.size());
  std::vector<CheckedFile> checked(o.inputs.size());
  std::vector<CheckStats> fileStats(o.inputs.size());
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i; (i = next++) < o.inputs.size();) {
      DocumentChecker checker(options);
      checked[i] = checkFile(o.inputs[i], o, checker);
      fileStats[i] = checker.stats();
      progress.fileDone();
    }
  };
  std::vector<std::thread> workers;
  for (size_t w = 1; w < jobs; ++w)
    workers.emplace_back(work);
  work();
  for (auto &t : workers)
    t.join();
  progress.finish();
  for (const auto &s : fileStats)
    addStats(stats, s);
  return checked;
}

size_t jobCount(const Options &o) {
  size_t jobs = o.jobs ? o.jobs : std::max(1u, std::thread::hardware_concurrency());
  return std::min(jobs, o.inputs.size());
}

/// Everything a run found, for the renderers.
struct RunResult {
  std::vector<FileOutput> files;
  std::vector<Summary> fileSummaries; ///< One per file, for the HTML report.
  Summary summary;
  CheckStats stats;
  std::optional<BaselineComparison> baseline;
  int status = 0;
};

void printRun(const Options &o, const RunResult &run, std::ostream &out, std::ostream &err) {
  const BaselineComparison *baseline = run.baseline ? &*run.baseline : nullptr;
  if (o.format == Format::Json) {
    nlohmann::json files = nlohmann::json::array();
    for (const auto &r : run.files)
      files.push_back(fileJson(r));
    nlohmann::json doc = {{"tool", "check-sharding"},
                          {"version", kVersion},
                          {"files", files},
                          {"summary", summaryJson(run.summary, run.stats, o.check.runtime)},
                          {"exit_status", run.status}};
    if (baseline)
      doc["baseline"] = checksharding::baselineJson(*baseline);
    out << doc.dump(2) << "\n";
  } else if (o.format == Format::Sarif) {
    out << checksharding::sarifLog(run.files, kVersion, run.status, baseline).dump(2) << "\n";
  } else if (o.format == Format::Junit) {
    checksharding::printJunit(out, run.files, baseline);
  } else if (o.format == Format::Dot) {
    for (const auto &file : run.files)
      for (const auto &fusion : file.fusions) {
        std::string name = file.file + ": fusion " + std::to_string(fusion.index) + " (line " +
                           std::to_string(fusion.loc.line) + ")";
        out << checksharding::fusionDot(fusion, file.edges, name);
      }
  } else {
    for (const auto &r : run.files)
      printFileText(out, err, r, o.quiet);
    printSummaryText(out, run.summary, run.stats, o.check.runtime);
    if (baseline)
      checksharding::printBaselineText(out, *baseline);
  }
}

/// Writes --report-html's pages; what could not be written, "" when all was.
std::string writeReport(const Options &o, const RunResult &run) {
  std::ostringstream summary;
  printSummaryText(summary, run.summary, run.stats, o.check.runtime);
  checksharding::HtmlRun html{&run.files, &run.fileSummaries, summary.str(),
                              run.status, kVersion,           checksharding::findGraphvizDot(),
                              jobCount(o)};
  return checksharding::writeHtmlReport(o.reportHtml, html);
}

/// Checks the inputs of parsed options `o`; the exit status.
int run(const Options &o, std::ostream &out, std::ostream &err, bool errIsTerminal) {
  std::optional<std::vector<checksharding::BaselineEntry>> baseline;
  if (!o.baseline.empty()) {
    std::string error;
    baseline = checksharding::readBaseline(o.baseline, error);
    if (!baseline) {
      err << "check-sharding: error: --baseline " << error << "\n";
      return 2;
    }
  }
  DocumentOptions options;
  options.check = o.check;
  if (!o.emitPlan.empty())
    options.plan =
        PlanOptions{o.planFusion.value_or(0), o.planLowerings, inputText(o.inputs.front())};
  RunResult run;
  std::vector<std::string> writeFailed;
  for (auto &c : checkInputs(o, options, jobCount(o), run.stats, errIsTerminal ? &err : nullptr)) {
    run.summary.add(c.summary);
    run.fileSummaries.push_back(c.summary);
    run.files.push_back(std::move(c.output));
    if (!c.writeFailed.empty())
      writeFailed.push_back(c.writeFailed);
  }
  run.status = exitStatus(run.summary);
  if (baseline) {
    run.baseline = checksharding::compareWithBaseline(run.files, *baseline, o.baseline);
    if (run.status != 2)
      run.status = run.baseline->status();
  }
  if (!o.emitPlan.empty() && run.summary.partialFiles && run.status != 2)
    run.status = checksharding::kPlanRefusedStatus;
  if (!o.writeBaseline.empty() &&
      !writeTextFile(o.writeBaseline,
                     checksharding::baselineText(checksharding::baselineEntries(run.files))))
    writeFailed.push_back("cannot write the baseline to " + o.writeBaseline);
  printRun(o, run, out, err);
  if (!o.reportHtml.empty())
    if (std::string error = writeReport(o, run); !error.empty())
      writeFailed.push_back(error);
  for (const auto &what : writeFailed)
    err << "check-sharding: error: " << what << "\n";
  return writeFailed.empty() ? run.status : 2;
}

} // namespace

int runCheckSharding(const std::vector<std::string> &args, std::istream &in, std::ostream &out,
                     std::ostream &err, bool errIsTerminal) {
  Options o;
  if (auto status = parseArgs(args, o, in, out, err))
    return *status;
  return run(o, out, err, errIsTerminal);
}

int runCheckSharding(const std::vector<std::string> &args, std::ostream &out, std::ostream &err) {
  return runCheckSharding(args, std::cin, out, err);
}

int checkShardingMain(int argc, char **argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  return runCheckSharding(args, std::cin, std::cout, std::cerr, isatty(STDERR_FILENO) == 1);
}

} // namespace shardcheck
