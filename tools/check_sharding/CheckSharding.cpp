// The check-sharding command line; see CheckSharding.h.
#include "tools/check_sharding/CheckSharding.h"

#include "checker/CheckDocument.h"
#include "ir/reader/DumpReader.h"
#include "tools/check_sharding/Render.h"
#include "tools/check_sharding/Summary.h"
#include "util/Version.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <iterator>
#include <optional>

namespace shardcheck {

namespace {

using checksharding::addEdge;
using checksharding::exitStatus;
using checksharding::FileOutput;
using checksharding::fileJson;
using checksharding::printFileText;
using checksharding::printSummaryText;
using checksharding::Summary;
using checksharding::summaryJson;

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

/// Reads option `a`, taking its value from `value` where it has one. Returns
/// what is wrong with it, or "" when it is fine.
std::string parseOption(const std::string &a,
                        const std::function<std::optional<std::string>()> &value, Options &o) {
  if (a == "--quiet") {
    o.quiet = true;
  } else if (a == "--no-cache") {
    o.check.useEdgeCache = false;
  } else if (a == "--format") {
    auto v = value();
    if (!v || (*v != "text" && *v != "json"))
      return "--format takes 'text' or 'json'";
    o.json = *v == "json";
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
  } else if (a == "--emit-plan") {
    auto v = value();
    if (!v || v->empty())
      return "--emit-plan takes a file name";
    o.emitPlan = *v;
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
  if (o.files.empty())
    return "no input files";
  if (!o.emitPlan.empty() && o.files.size() != 1)
    return "--emit-plan plans one fusion: give exactly one input file";
  if (o.emitPlan.empty() && o.planFusion)
    return "--fusion selects the fusion --emit-plan plans";
  std::error_code ec;
  if (!o.emitPlan.empty() && std::filesystem::equivalent(o.emitPlan, o.files.front(), ec))
    return "--emit-plan " + o.emitPlan + " is the input file; the plan would overwrite it";
  if (!o.check.smtDumpDir.empty()) {
    std::filesystem::create_directories(o.check.smtDumpDir, ec);
    if (ec || !std::filesystem::is_directory(o.check.smtDumpDir))
      return "--smt-dump " + o.check.smtDumpDir + ": cannot create the directory" +
             (ec ? " (" + ec.message() + ")" : std::string());
  }
  return "";
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
    if (a.size() > 1 && a[0] == '-') {
      if (std::string error = parseOption(a, value, o); !error.empty())
        return bad(error);
    } else {
      o.files.push_back(a);
    }
  }
  if (std::string error = checkCombination(o); !error.empty())
    return bad(error);
  return std::nullopt;
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

/// One fusion's report as the tool shows it, in the order found: lints,
/// verdicts, unchecked tensors, the plan (written here), an input error
/// found while checking.
void addFusion(const Options &o, const Fusion &fusion, const FusionReport &fr, FileOutput &r,
               bool &writeFailed) {
  for (const auto &d : fr.lints)
    r.add(d);
  for (const auto &v : fr.verdicts)
    addEdge(fr.index, v, r);
  for (const auto &u : fr.unchecked)
    r.add(u.diagnostic);
  if (fr.plan) {
    if (auto note = writePlan(o, *fr.plan, fusion))
      r.add(*note);
    else
      writeFailed = true;
  }
  if (fr.noPlan)
    r.add(Diagnostic{Severity::Error,
                     "no-plan",
                     std::string("no plan written: ") + fr.noPlan->what(),
                     fr.noPlan->loc,
                     {}});
  if (fr.inputError)
    r.add(*fr.inputError);
  r.unreadable = r.unreadable || !fr.readable();
}

/// A file that could not be checked at all: unreadable (exit 2).
void addUnreadable(Diagnostic why, FileOutput &r, Summary &summary) {
  summary.addUnreadableFile(why);
  r.add(std::move(why));
  r.unreadable = true;
}

FileOutput checkFile(const std::string &path, const Options &o, DocumentChecker &checker,
                     Summary &summary, bool &writeFailed) {
  FileOutput r;
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
  summary.addDocument(report);
  if (report.truncated) {
    r.partial = true;
    r.add(*report.truncated);
  }
  for (const FusionReport &fr : report.fusions)
    addFusion(o, doc.fusions[fr.index], fr, r, writeFailed);
  return r;
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
  std::vector<FileOutput> results;
  bool writeFailed = false;
  for (const auto &f : o.files)
    results.push_back(checkFile(f, o, checker, summary, writeFailed));
  if (o.json) {
    nlohmann::json files = nlohmann::json::array();
    for (const auto &r : results)
      files.push_back(fileJson(r));
    nlohmann::json doc = {{"tool", "check-sharding"},
                          {"version", kVersion},
                          {"files", files},
                          {"summary", summaryJson(summary, checker.stats(), o.check.runtime)},
                          {"exit_status", exitStatus(summary)}};
    out << doc.dump(2) << "\n";
  } else {
    for (const auto &r : results)
      printFileText(out, err, r, o.quiet);
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
