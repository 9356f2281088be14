// The run-plan command line; see RunPlan.h.
#include "tools/run_plan/RunPlan.h"

#include "executor/PlanFile.h"
#include "tools/common/CommandLine.h"
#include "tools/run_plan/Backends.h"
#include "util/Version.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <limits>
#include <optional>
#include <set>
#include <sstream>

namespace shardcheck {

namespace {

constexpr const char *kUsage = R"(usage: run-plan [options] PLAN

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
  --quiet                print only failures and the result line
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

struct Options {
  BackendOptions backendOptions;
  bool bindAuto = false;
  std::string backend = "sim";
  RunOptions run;
  std::string reportFile;
  bool quiet = false;
  std::string plan;
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
  } else if (a == "--report") {
    auto v = value();
    if (!v || v->empty())
      return "--report takes a file name";
    o.reportFile = *v;
  } else {
    return "unknown option '" + a + "'";
  }
  return "";
}

/// What is wrong with the flags together, or "".
std::string checkCombination(const Options &o) {
  if (o.plan.empty())
    return "no plan file";
  if (o.run.warmup > 0 && o.run.repeats == 0)
    return "--warmup needs --repeat";
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

std::string devicesStr(const std::vector<int64_t> &v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i)
    s += (i ? " " : "") + std::to_string(v[i]);
  return s;
}

std::string formatNumber(double v) {
  std::ostringstream os;
  os << std::setprecision(3) << v;
  return os.str();
}

void printSteps(std::ostream &out, const RunReport &r) {
  out << std::left << std::setw(5) << "step" << std::setw(11) << "kind" << std::setw(52) << "what"
      << std::setw(18) << "devices" << std::right << std::setw(12) << "bytes" << std::setw(12)
      << "time"
      << "  status\n";
  for (const StepReport &s : r.steps) {
    std::string what = s.description + (s.verified ? "" : " [unverified]");
    std::string time = s.status == "not run" ? "-" : formatNumber(s.seconds * 1e3) + " ms";
    out << std::left << std::setw(5) << s.index << std::setw(11) << s.kind << std::setw(52) << what
        << std::setw(18) << devicesStr(s.devices) << std::right << std::setw(12)
        << (s.kind == "collective" || s.kind == "alias" ? std::to_string(s.bytesMoved) : "-")
        << std::setw(12) << time << "  " << s.status << "\n";
  }
}

void printTiming(std::ostream &out, const RunReport &r) {
  if (!r.timing)
    return;
  const RunTiming &t = *r.timing;
  out << "timing: " << t.repeats << " timed run(s) of each kind after " << t.warmup
      << " warmup: pipelined median " << formatNumber(t.medianSeconds * 1e3) << " ms, min "
      << formatNumber(t.minSeconds * 1e3) << " ms per run; every step synchronized: median "
      << formatNumber(t.syncedMedianSeconds * 1e3) << " ms per run, per step:";
  for (size_t i = 0; i < t.stepMedianSeconds.size(); ++i)
    out << " " << i << "=" << formatNumber(t.stepMedianSeconds[i] * 1e3) << "ms";
  out << "\n";
}

std::string mismatchStr(const Mismatch &m, const std::string &name) {
  std::string index;
  for (size_t i = 0; i < m.index.size(); ++i)
    index += (i ? ", " : "") + std::to_string(m.index[i]);
  return "device " + std::to_string(m.device) + " slot " + std::to_string(m.slot) + " holds " +
         formatNumber(m.got) + " for " + name + "[" + index + "], expected " +
         formatNumber(m.expected);
}

void printTensors(std::ostream &out, const RunReport &r, bool quiet) {
  for (const TensorCheck &t : r.tensors) {
    const OutputComparison &c = t.comparison;
    if (quiet && c.matches())
      continue;
    out << c.name << " (" << t.role << ", "
        << (c.dtype == DataType::Unknown ? "unknown" : dataTypeName(c.dtype))
        << "): " << (c.matches() ? "match" : "MISMATCH") << ", " << c.compared
        << " slot(s) compared, " << c.mismatched << " outside rtol "
        << formatNumber(c.tolerance.rtol) << " atol " << formatNumber(c.tolerance.atol)
        << ", max abs error " << formatNumber(c.maxAbsError) << ", max rel error "
        << formatNumber(c.maxRelError) << "\n";
    if (c.firstMismatch)
      out << "  first mismatch: " << mismatchStr(*c.firstMismatch, c.name) << "\n";
  }
}

nlohmann::json reportJson(const Options &o, const RunReport &r) {
  nlohmann::json steps = nlohmann::json::array();
  for (const StepReport &s : r.steps)
    steps.push_back({{"index", s.index},
                     {"kind", s.kind},
                     {"description", s.description},
                     {"devices", s.devices},
                     {"bytes_moved", s.bytesMoved},
                     {"seconds", s.seconds},
                     {"verified", s.verified},
                     {"status", s.status}});
  nlohmann::json tensors = nlohmann::json::array();
  for (const TensorCheck &t : r.tensors) {
    const OutputComparison &c = t.comparison;
    nlohmann::json j = {{"tensor", c.name},
                        {"role", t.role},
                        {"dtype", c.dtype == DataType::Unknown ? "unknown" : dataTypeName(c.dtype)},
                        {"compared", c.compared},
                        {"mismatched", c.mismatched},
                        {"max_abs_error", c.maxAbsError},
                        {"max_rel_error", c.maxRelError},
                        {"rtol", c.tolerance.rtol},
                        {"atol", c.tolerance.atol},
                        {"matches", c.matches()}};
    if (c.firstMismatch)
      j["first_mismatch"] = {{"device", c.firstMismatch->device},
                             {"slot", c.firstMismatch->slot},
                             {"index", c.firstMismatch->index},
                             {"got", c.firstMismatch->got},
                             {"expected", c.firstMismatch->expected}};
    tensors.push_back(j);
  }
  nlohmann::json timing = nullptr;
  if (r.timing)
    timing = {{"warmup", r.timing->warmup},
              {"repeats", r.timing->repeats},
              {"median_seconds", r.timing->medianSeconds},
              {"min_seconds", r.timing->minSeconds},
              {"synced_median_seconds", r.timing->syncedMedianSeconds},
              {"step_median_seconds", r.timing->stepMedianSeconds}};
  nlohmann::json failure = nullptr;
  if (r.failure)
    failure = {
        {"step", r.failure->step}, {"kind", r.failure->kind}, {"message", r.failure->message}};
  return {{"tool", "run-plan"},     {"version", kShardcheckVersion},
          {"plan", o.plan},         {"backend", r.backend},
          {"seed", r.seed},         {"bindings", r.symbols},
          {"verified", r.verified}, {"steps", steps},
          {"tensors", tensors},     {"failure", failure},
          {"checked", r.checked},   {"timing", timing},
          {"outcome", r.outcome()}, {"exit_status", r.matches() ? 0 : 1}};
}

std::string outcomeLine(const RunReport &r) {
  if (r.failure) {
    std::string what = r.failure->kind == "count-error"
                           ? "a collective's buffers do not have the element counts it "
                             "requires; a real run fails here"
                           : "the plan reads data a device does not have";
    return "result: FAILED at step " + std::to_string(r.failure->step) + " (" + r.failure->kind +
           ": " + what + ")";
  }
  size_t wrong = 0;
  for (const TensorCheck &t : r.tensors)
    wrong += !t.comparison.matches();
  if (wrong)
    return "result: WRONG VALUES: every step ran, " + std::to_string(wrong) + " of " +
           std::to_string(r.tensors.size()) + " tensor(s) differ from the reference";
  if (!r.checked)
    return "result: unchecked: every step ran; nothing was compared (--no-check)";
  if (r.steps.empty())
    return "result: nothing to run: the plan has no steps";
  if (r.comparedSlots() == 0)
    return "result: NOTHING COMPARED: every step ran, but no slot of any tensor held a value "
           "to compare with the reference";
  return "result: match: " + std::to_string(r.tensors.size()) +
         " tensor(s) equal the reference on every device";
}

} // namespace

namespace {

/// Loads the plan, binds, runs. Errors are thrown (see runRunPlan).
RunReport loadAndRun(Options &o, Backend &backend, std::ostream &out) {
  Plan plan = readPlanFile(o.plan, o.run.symbols);
  if (o.bindAuto) {
    o.run.symbols = bindRemainingSymbols(plan, o.run.symbols, o.plan);
    if (!o.quiet && backend.isLeader() && !o.run.symbols.empty()) {
      out << "bindings:";
      for (const auto &[name, value] : o.run.symbols)
        out << " " << name << "=" << value;
      out << "\n";
    }
  }
  return runPlan(plan, o.run, backend);
}

/// Prints the run (leader only) and writes the report; returns the status.
int finish(const Options &o, const RunReport &report, std::ostream &out, std::ostream &err) {
  if (!o.quiet)
    printSteps(out, report);
  if (report.failure)
    err << o.plan << ": error: step " << report.failure->step
        << " failed: " << report.failure->message << "\n";
  printTensors(out, report, o.quiet);
  printTiming(out, report);
  out << outcomeLine(report) << "\n";
  if (!o.reportFile.empty()) {
    std::ofstream rf(o.reportFile, std::ios::binary);
    rf << reportJson(o, report).dump(2) << "\n";
    rf.close();
    if (!rf) {
      err << o.reportFile << ": error: cannot write the report: " << std::strerror(errno) << "\n";
      return 2;
    }
  }
  return report.matches() ? 0 : 1;
}

} // namespace

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
  // Every process of a multi-process backend runs the same code on the same
  // plan, so all reach the same outcome; only the leader prints it.
  bool leader = backend->isLeader();
  int status = 0;
  try {
    RunReport report = loadAndRun(o, *backend, out);
    status = leader ? finish(o, report, out, err) : (report.matches() ? 0 : 1);
  } catch (const InputError &e) {
    Diagnostic d = e.diagnostic();
    if (d.loc.file.empty()) // A problem of the run as a whole: name the plan.
      d.loc.file = o.plan;
    if (leader)
      printDiagnostic(err, d);
    status = 2;
  } catch (const PlanRefused &e) {
    if (leader)
      err << o.plan << ": error: plan refused: " << e.what() << "\n";
    status = 3;
  } catch (const BackendError &e) {
    err << o.plan << ": error: the " << o.backend << " backend failed: " << e.what() << "\n";
    status = 1;
  }
  return backend->coordinator().agreeOnStatus(status);
}

int runPlanMain(int argc, char **argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  return runRunPlan(args, std::cout, std::cerr);
}

} // namespace shardcheck
