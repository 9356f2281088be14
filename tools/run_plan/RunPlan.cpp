// The run-plan command line; see RunPlan.h.
#include "tools/run_plan/RunPlan.h"

#include "executor/PlanFile.h"
#include "tools/common/CommandLine.h"
#include "tools/run_plan/Backends.h"
#include "tools/run_plan/HtmlReport.h"
#include "tools/run_plan/Junit.h"
#include "tools/run_plan/Render.h"
#include "util/Version.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <limits>
#include <optional>
#include <set>
#include <sstream>

namespace shardcheck {

using namespace runplan;

namespace {

constexpr const char *kUsage = R"(usage: run-plan [options] PLAN
       run-plan [options] --batch LIST

Runs a plan written by check-sharding --emit-plan on simulated devices and
compares every tensor it computes, on every device, with the unsharded
reference evaluated in double precision.

options:
  --backend NAME         where to run: sim (default: simulated devices in this
                         process), mpi (one process per device, under
                         mpirun -np <devices>) or nccl (GPUs: one process
                         driving one GPU per device, or one process per GPU
                         under mpirun)
  --gpus N               nccl only, one process: the GPUs to drive (default:
                         one per plan device)
  --timeout-s S          mpi and nccl only: a wait for the other processes or
                         GPUs longer than S seconds (1 to 1000000, default 60)
                         ends the run. nccl: the communicators are aborted
                         (exit status 1). mpi: the waiting process names its
                         rank, the step and what it waited for, and ends the
                         job with MPI_Abort; mpirun exits with status 4
  --seed N               seed of the pseudo-random inputs (0 to 2^64-1,
                         default 1)
  --bind NAME=VALUE      value of a symbol of the plan (a non-negative 64-bit
                         integer; repeat for each symbol)
  --bind-auto            bind every other symbol to a small size that satisfies
                         the plan's constraints (printed)
  --report FILE          write a JSON report to FILE
  --report-html DIR      also write a self-contained HTML page of the run and
                         DIR/index.html: the steps (teams, devices, element
                         counts, bytes received per device, time), every
                         tensor against the reference, the outcome
  --format text|junit    what standard output shows (default: text); junit
                         is JUnit XML: a testcase for the run and one per
                         tensor compared (docs/ci-gate.md)
  --indexed-compute      sim and mpi only: run compute steps from index maps
                         over local buffers, as GPU kernels do
  --repeat N             after the checked run, run the plan N (1 to 1000000)
                         times pipelined (nccl: compute steps not waited for)
                         and N times with every step synchronized; print the
                         median and minimum time per run and the median per
                         step (a benchmark; see bench/)
  --warmup N             untimed runs (0 to 1000000, default 0) before each
                         kind of --repeat runs
  --no-check             do not compute the host reference or compare (for
                         --repeat at sizes the double-precision host reference
                         cannot reach; check the same plan at smaller --bind
                         values); the result says unchecked
  --allow-unverified     run steps resting on refuted or unknown verdicts
                         (to reproduce a refuted compiler lowering)
  --quiet                print only failures and the result line (text only)
  --batch LIST           run every plan LIST names (one path a line, relative
                         to LIST's folder) in one start: under mpirun, the
                         first <devices> processes run each plan and the
                         others sit it out, so -np is the largest plan's
                         device count. Prints one result line per plan and a
                         total; text only, no reports, no --repeat
  --help                 this text
  --version              the version

A flag that the chosen backend does not read is a usage error.

exit status: 0 everything matches the reference (or, with --no-check, every
step ran); 1 a mismatch, or a step failed while running; 2 unreadable or
inconsistent plan, bad bindings, bad usage, or standard output or the report
could not be written; 3 the plan rests on refuted or unknown verdicts (see
--allow-unverified); 4 (mpi, from mpirun) a process waited longer than
--timeout-s for the others.
)";

/// Flags that only some backends read, with those backends: given with
/// another backend they would be ignored silently.
const std::vector<std::pair<std::string, std::vector<std::string>>> kBackendFlags = {
    {"--gpus", {"nccl"}}, {"--timeout-s", {"mpi", "nccl"}}, {"--indexed-compute", {"sim", "mpi"}}};

/// The largest --repeat, --warmup and --timeout-s: far past any use, and far
/// from overflowing a count of runs or a deadline.
constexpr uint64_t kMaxCount = 1000000;

enum class Format { Text, Junit };

struct Options {
  BackendOptions backendOptions;
  Format format = Format::Text;
  std::string reportHtml; ///< --report-html directory, empty for none.
  bool bindAuto = false;
  std::string backend = "sim";
  RunOptions run;
  std::string reportFile;
  bool quiet = false;
  std::string plan;
  std::string batch;           ///< --batch LIST, empty for one plan.
  std::set<std::string> flags; ///< Every flag given, for kBackendFlags.
};

std::string joined(const std::vector<std::string> &v, const std::string &separator) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i)
    s += (i ? separator : "") + v[i];
  return s;
}

/// The usage error for a flag the chosen backend does not read, or "".
std::string flagForAnotherBackend(const Options &o) {
  for (const auto &[flag, backends] : kBackendFlags)
    if (o.flags.count(flag) &&
        std::find(backends.begin(), backends.end(), o.backend) == backends.end())
      return flag + " applies to the " + joined(backends, " and ") + " backend" +
             (backends.size() > 1 ? "s" : "") + " only, not to --backend " + o.backend;
  return "";
}

const ToolInfo kTool{"run-plan", kUsage, kShardcheckVersion};

/// The value of `flag` as an integer in [min, max], or what is wrong.
std::string readNumber(const std::string &flag, const NextValue &value, uint64_t min, uint64_t max,
                       uint64_t &n) {
  auto v = value();
  auto parsed = v ? parseDecimal(*v, min, max) : std::nullopt;
  if (!parsed)
    return flag + " takes an integer from " + std::to_string(min) + " to " + std::to_string(max) +
           (v ? " (got '" + *v + "')" : "");
  n = *parsed;
  return "";
}

/// Reads `--bind NAME=VALUE`; what is wrong, or "".
std::string readBinding(const NextValue &value, Options &o) {
  auto v = value();
  auto eq = v ? v->find('=') : std::string::npos;
  if (eq == std::string::npos || eq == 0)
    return "--bind takes NAME=VALUE, e.g. --bind i0=128";
  std::string name = v->substr(0, eq), text = v->substr(eq + 1);
  auto n = parseDecimal(text, 0, std::numeric_limits<int64_t>::max());
  if (!n)
    return "--bind " + name + ": '" + text + "' is not an integer from 0 to " +
           std::to_string(std::numeric_limits<int64_t>::max());
  if (o.run.symbols.count(name))
    return "--bind " + name + " is given twice";
  o.run.symbols[name] = static_cast<int64_t>(*n);
  return "";
}

/// Reads an option that takes a number; nullopt when `a` is another one.
std::optional<std::string> readNumberOption(const std::string &a, const NextValue &value,
                                            Options &o) {
  uint64_t n = 0;
  std::string error;
  if (a == "--gpus") {
    error = readNumber(a, value, 1, 4096, n);
    o.backendOptions.gpus = static_cast<int>(n);
  } else if (a == "--timeout-s") {
    error = readNumber(a, value, 1, kMaxCount, n);
    o.backendOptions.timeoutSeconds = static_cast<double>(n);
  } else if (a == "--repeat" || a == "--warmup") {
    error = readNumber(a, value, a == "--repeat" ? 1 : 0, kMaxCount, n);
    (a == "--repeat" ? o.run.repeats : o.run.warmup) = static_cast<int>(n);
  } else if (a == "--seed") {
    error = readNumber(a, value, 0, std::numeric_limits<uint64_t>::max(), n);
    o.run.seed = n;
  } else {
    return std::nullopt;
  }
  return error;
}

/// Reads option `a`; what is wrong with it, or "".
std::string readOption(const std::string &a, const NextValue &value, Options &o) {
  o.flags.insert(a);
  if (auto error = readNumberOption(a, value, o))
    return *error;
  if (a == "--quiet") {
    o.quiet = true;
  } else if (a == "--indexed-compute") {
    o.run.indexedCompute = true;
  } else if (a == "--no-check") {
    o.run.check = false;
  } else if (a == "--bind-auto") {
    o.bindAuto = true;
  } else if (a == "--allow-unverified") {
    o.run.allowUnverified = true;
  } else if (a == "--backend") {
    auto v = value();
    if (!v || (*v != "sim" && *v != "mpi" && *v != "nccl"))
      return "--backend takes 'sim', 'mpi' or 'nccl'";
    o.backend = *v;
  } else if (a == "--bind") {
    return readBinding(value, o);
  } else if (a == "--batch") {
    auto v = value();
    if (!v || v->empty())
      return "--batch takes a file listing plans";
    o.batch = *v;
  } else if (a == "--report" || a == "--report-html") {
    auto v = value();
    if (!v || v->empty())
      return a + (a == "--report" ? " takes a file name" : " takes a directory");
    (a == "--report" ? o.reportFile : o.reportHtml) = *v;
  } else if (a == "--format") {
    auto v = value();
    if (!v || (*v != "text" && *v != "junit"))
      return "--format takes 'text' or 'junit'";
    o.format = *v == "junit" ? Format::Junit : Format::Text;
  } else {
    return "unknown option '" + a + "'";
  }
  return "";
}

/// What is wrong with the flags together, or "".
std::string checkCombination(const Options &o) {
  if (!o.batch.empty() && !o.plan.empty())
    return "give a PLAN or --batch LIST, not both";
  if (!o.batch.empty() && (!o.reportFile.empty() || !o.reportHtml.empty() ||
                           o.format != Format::Text || o.run.repeats > 0))
    return "--batch prints text only: no --report, --report-html, --format junit or --repeat";
  if (o.plan.empty() && o.batch.empty())
    return "no plan file";
  if (o.run.warmup > 0 && o.run.repeats == 0)
    return "--warmup needs --repeat";
  if (o.quiet && o.format != Format::Text)
    return "--quiet applies to --format text only";
  std::error_code ec;
  if (!o.reportFile.empty() && !o.reportHtml.empty() &&
      std::filesystem::weakly_canonical(o.reportFile, ec) ==
          std::filesystem::weakly_canonical(o.reportHtml, ec))
    return "--report and --report-html name the same path " + o.reportFile;
  return flagForAnotherBackend(o);
}

/// Returns an exit status when parsing ends the run (help, bad usage).
std::optional<int> parseArgs(const std::vector<std::string> &args, Options &o, std::ostream &out,
                             std::ostream &err) {
  auto option = [&](const std::string &a, const NextValue &value) {
    return readOption(a, value, o);
  };
  auto operand = [&](const std::string &a) -> std::string {
    if (!o.plan.empty())
      return "one plan at a time (got '" + o.plan + "' and '" + a + "')";
    o.plan = a;
    return "";
  };
  if (auto status = walkArguments(kTool, args, out, err, option, operand))
    return status;
  if (std::string why = checkCombination(o); !why.empty())
    return usageError(kTool, err, why);
  return std::nullopt;
}

/// Loads the plan into `plan`, binds, runs. Errors are thrown (see
/// runRunPlan); `plan` is kept for a report of a refused one.
RunReport loadAndRun(Options &o, Backend &backend, std::optional<Plan> &plan, std::ostream &out) {
  plan = readPlanFile(o.plan, o.run.symbols);
  if (o.bindAuto) {
    o.run.symbols = bindRemainingSymbols(*plan, o.run.symbols, o.plan);
    if (!o.quiet && o.format == Format::Text && backend.isLeader() && !o.run.symbols.empty()) {
      out << "bindings:";
      for (const auto &[name, value] : o.run.symbols)
        out << " " << name << "=" << value;
      out << "\n";
    }
  }
  return runPlan(*plan, o.run, backend);
}

/// The report of a refused plan: its steps, none run.
RunReport refusedReport(const Options &o, const Plan &plan) {
  RunReport r;
  r.backend = o.backend;
  r.seed = o.run.seed;
  r.symbols = o.run.symbols;
  r.verified = plan.verified();
  r.checked = o.run.check;
  r.steps = unrunSteps(plan);
  return r;
}

/// Runs the plan; what came of it, the errors printed on `err` (leader
/// only, but for a backend failure, which each process reports).
PlanRunResult runOnePlan(Options &o, Backend &backend, std::ostream &out, std::ostream &err) {
  bool leader = backend.isLeader();
  PlanRunResult result{o.plan, o.backend, 0, std::nullopt, "", ""};
  std::optional<Plan> plan;
  std::ostringstream why;
  try {
    result.report = loadAndRun(o, backend, plan, out);
    result.status = result.report->matches() ? 0 : 1;
    return result;
  } catch (const InputError &e) {
    Diagnostic d = e.diagnostic();
    if (d.loc.file.empty()) // A problem of the run as a whole: name the plan.
      d.loc.file = o.plan;
    printDiagnostic(why, d);
    result = {o.plan, o.backend, 2, std::nullopt, "unreadable", why.str()};
  } catch (const PlanRefused &e) {
    why << o.plan << ": error: plan refused: " << e.what() << "\n";
    result = {o.plan, o.backend, 3, refusedReport(o, *plan), "refused", why.str()};
  } catch (const BackendError &e) {
    why << o.plan << ": error: the " << o.backend << " backend failed: " << e.what() << "\n";
    result = {o.plan, o.backend, 1, std::nullopt, "backend", why.str()};
    leader = true;
  }
  if (leader)
    err << result.errorMessage;
  // The message without its last newline, as the reports quote it.
  while (!result.errorMessage.empty() && result.errorMessage.back() == '\n')
    result.errorMessage.pop_back();
  return result;
}

/// Writes `report` to --report FILE; false (with the error printed) when it
/// cannot.
bool writeJsonReport(const Options &o, const RunReport &report, std::ostream &err) {
  std::ofstream rf(o.reportFile, std::ios::binary);
  rf << reportJson(o.plan, report).dump(2) << "\n";
  rf.close();
  if (!rf)
    err << o.reportFile << ": error: cannot write the report: " << std::strerror(errno) << "\n";
  return static_cast<bool>(rf);
}

/// Prints the run as text (or JUnit) and writes the reports (leader only);
/// returns the status.
int finish(const Options &o, const PlanRunResult &result, std::ostream &out, std::ostream &err) {
  const RunReport *report = result.errorKind.empty() ? &*result.report : nullptr;
  if (o.format == Format::Junit) {
    printJunit(out, {result});
  } else if (report) {
    if (!o.quiet)
      printSteps(out, *report);
    if (report->failure)
      err << o.plan << ": error: step " << report->failure->step
          << " failed: " << report->failure->message << "\n";
    printTensors(out, *report, o.quiet);
    printTiming(out, *report);
    out << outcomeLine(*report) << "\n";
  }
  int status = result.status;
  if (report && !o.reportFile.empty() && !writeJsonReport(o, *report, err))
    status = 2;
  if (!o.reportHtml.empty()) {
    if (std::string error = writeHtmlReport(o.reportHtml, {result}, kShardcheckVersion);
        !error.empty()) {
      err << kTool.name << ": error: " << error << "\n";
      status = 2;
    }
  }
  return status;
}

} // namespace

/// The plans --batch LIST names, relative to LIST's folder; nullopt (with
/// the error printed) when LIST cannot be read.
std::optional<std::vector<std::string>> batchPlans(const std::string &list, std::ostream &err) {
  std::ifstream in(list);
  if (!in) {
    err << list << ": error: cannot read the batch list: " << std::strerror(errno) << "\n";
    return std::nullopt;
  }
  std::filesystem::path folder = std::filesystem::path(list).parent_path();
  std::vector<std::string> plans;
  for (std::string line; std::getline(in, line);)
    if (!line.empty())
      plans.push_back(std::filesystem::path(line).is_absolute() ? line : (folder / line).string());
  return plans;
}

/// The processes a plan needs: its device count, or every process when it
/// cannot be read (each then reports the same error).
int processesFor(const std::string &path, const Options &o, Backend &backend) {
  try {
    return static_cast<int>(readPlanFile(path, o.run.symbols).devices.size());
  } catch (const std::exception &) {
    return backend.coordinator().size();
  }
}

/// --batch: every plan of the list in turn on one backend (one mpirun
/// start); the leader prints `PLAN: <result line>` per plan and the totals.
/// Returns 0 when every plan matched, else 1 (2 for an unreadable list).
int runBatch(const Options &batch, Backend &backend, std::ostream &out, std::ostream &err) {
  std::optional<std::vector<std::string>> plans = batchPlans(batch.batch, err);
  if (!plans)
    return 2;
  int matched = 0, failed = 0, processes = backend.coordinator().size();
  for (const std::string &path : *plans) {
    Options o = batch;
    o.plan = path;
    if (!joinJob(backend, processesFor(path, o, backend)))
      continue;
    PlanRunResult result = runOnePlan(o, backend, out, err);
    bool ok = result.status == 0;
    ++(ok ? matched : failed);
    if (backend.isLeader() && (!ok || !o.quiet))
      out << path << ": "
          << (result.errorKind.empty() ? outcomeLine(*result.report)
                                       : "result: " + result.errorKind)
          << "\n";
  }
  joinJob(backend, processes);
  if (backend.isLeader())
    out << "batch: " << plans->size() << " plan(s) run, " << matched << " matched, " << failed
        << " did not\n";
  return failed == 0 ? 0 : 1;
}

int runRunPlan(const std::vector<std::string> &args, std::ostream &out, std::ostream &err) {
  Options o;
  if (auto status = parseArgs(args, o, out, err))
    return *status;
  std::string why;
  std::unique_ptr<Backend> backend = createBackend(o.backend, o.backendOptions, why);
  if (!backend) {
    err << kTool.name << ": error: " << why << "\n";
    return 2;
  }
  if (!o.batch.empty())
    return backend->coordinator().agreeOnStatus(runBatch(o, *backend, out, err));
  // Every process of a multi-process backend runs the same code on the same
  // plan, so all reach the same outcome; only the leader prints it.
  PlanRunResult result = runOnePlan(o, *backend, out, err);
  int status = backend->isLeader() ? finish(o, result, out, err) : result.status;
  return backend->coordinator().agreeOnStatus(status);
}

int runPlanMain(int argc, char **argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  return runRunPlan(args, std::cout, std::cerr);
}

} // namespace shardcheck
