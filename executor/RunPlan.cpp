// The run-plan driver; see RunPlan.h.
#include "executor/RunPlan.h"

#include "executor/Backends.h"
#include "executor/Executor.h"
#include "util/Version.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <optional>
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
  --gpus N               nccl, one process: the GPUs to drive (default: one
                         per plan device)
  --timeout-s S          nccl: a collective that does not finish within S
                         seconds aborts the run (default 60)
  --seed N               seed of the pseudo-random inputs (default 1)
  --bind NAME=VALUE      value of a symbolic extent (repeat for each symbol)
  --bind-auto            bind every other symbol to a small size that satisfies
                         the plan's constraints (printed)
  --report FILE          write a JSON report to FILE
  --indexed-compute      run compute steps from index maps over local buffers,
                         as GPU kernels do (sim and mpi backends)
  --repeat N             after the checked run, run the plan N times pipelined
                         (nccl: compute steps not waited for) and N times with
                         every step synchronized; print the median and minimum
                         time per run and the median per step (a benchmark;
                         see bench/)
  --warmup N             untimed runs before each kind of --repeat runs
                         (default 0)
  --no-check             do not compute the host reference or compare (for
                         --repeat at sizes the double-precision host reference
                         cannot reach; check the same plan at smaller --bind
                         values); the result says unchecked
  --allow-unverified     run steps resting on refuted or unknown verdicts
                         (to reproduce a refuted compiler lowering)
  --quiet                print only failures and the result line
  --help                 this text
  --version              the version

exit status: 0 everything matches the reference (or, with --no-check, every
step ran); 1 a mismatch, or a step
failed while running; 2 unreadable or inconsistent plan, bad bindings or bad
usage; 3 the plan rests on refuted or unknown verdicts (see
--allow-unverified).
)";

struct Options {
  BackendOptions backendOptions;
  bool bindAuto = false;
  std::string backend = "sim";
  RunOptions run;
  std::string reportFile;
  bool quiet = false;
  std::string plan;
};

std::optional<int64_t> parseInteger(const std::string &s, bool allowNegative) {
  size_t start = allowNegative && !s.empty() && s[0] == '-' ? 1 : 0;
  if (s.size() <= start || s.size() - start > 18 ||
      s.find_first_not_of("0123456789", start) != std::string::npos)
    return std::nullopt;
  return std::stoll(s);
}

std::optional<int> parseArgs(const std::vector<std::string> &args, Options &o, std::ostream &out,
                             std::ostream &err) {
  auto bad = [&](const std::string &msg) {
    err << "run-plan: error: " << msg << "\n(run run-plan --help for usage)\n";
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
      out << "run-plan " << kShardcheckVersion << "\n";
      return 0;
    }
    if (a == "--quiet") {
      o.quiet = true;
    } else if (a == "--gpus") {
      auto v = value();
      auto n = v ? parseInteger(*v, false) : std::nullopt;
      if (!n || *n < 1 || *n > 4096)
        return bad("--gpus takes a GPU count");
      o.backendOptions.gpus = static_cast<int>(*n);
    } else if (a == "--timeout-s") {
      auto v = value();
      auto n = v ? parseInteger(*v, false) : std::nullopt;
      if (!n || *n < 1)
        return bad("--timeout-s takes a positive number of seconds");
      o.backendOptions.timeoutSeconds = static_cast<double>(*n);
    } else if (a == "--indexed-compute") {
      o.run.indexedCompute = true;
    } else if (a == "--no-check") {
      o.run.check = false;
    } else if (a == "--repeat" || a == "--warmup") {
      auto v = value();
      auto n = v ? parseInteger(*v, false) : std::nullopt;
      if (!n || *n > 1000000 || (a == "--repeat" && *n < 1))
        return bad(a + " takes a count" + (a == "--repeat" ? " of at least 1" : ""));
      (a == "--repeat" ? o.run.repeats : o.run.warmup) = static_cast<int>(*n);
    } else if (a == "--bind-auto") {
      o.bindAuto = true;
    } else if (a == "--allow-unverified") {
      o.run.allowUnverified = true;
    } else if (a == "--backend") {
      auto v = value();
      if (!v || (*v != "sim" && *v != "mpi" && *v != "nccl"))
        return bad("--backend takes 'sim', 'mpi' or 'nccl'");
      o.backend = *v;
    } else if (a == "--seed") {
      auto v = value();
      auto n = v ? parseInteger(*v, false) : std::nullopt;
      if (!n)
        return bad("--seed takes a non-negative integer");
      o.run.seed = static_cast<uint64_t>(*n);
    } else if (a == "--bind") {
      auto v = value();
      auto eq = v ? v->find('=') : std::string::npos;
      auto n = eq != std::string::npos ? parseInteger(v->substr(eq + 1), true) : std::nullopt;
      if (!n || eq == 0)
        return bad("--bind takes NAME=VALUE with an integer VALUE, e.g. --bind i0=128");
      std::string name = v->substr(0, eq);
      if (o.run.symbols.count(name))
        return bad("--bind " + name + " is given twice");
      o.run.symbols[name] = *n;
    } else if (a == "--report") {
      auto v = value();
      if (!v || v->empty())
        return bad("--report takes a file name");
      o.reportFile = *v;
    } else if (a.size() > 1 && a[0] == '-') {
      return bad("unknown option '" + a + "'");
    } else if (!o.plan.empty()) {
      return bad("one plan at a time (got '" + o.plan + "' and '" + a + "')");
    } else {
      o.plan = a;
    }
  }
  if (o.plan.empty())
    return bad("no plan file");
  if (o.run.warmup > 0 && o.run.repeats == 0)
    return bad("--warmup needs --repeat");
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
      << "time" << "  status\n";
  for (const StepReport &s : r.steps) {
    std::string what = s.description + (s.verified ? "" : " [unverified]");
    std::string time = s.status == "not run" ? "-" : formatNumber(s.seconds * 1e3) + " ms";
    out << std::left << std::setw(5) << s.index << std::setw(11) << s.kind << std::setw(52)
        << what << std::setw(18) << devicesStr(s.devices) << std::right << std::setw(12)
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
        << (c.dtype == DataType::Unknown ? "unknown" : dataTypeName(c.dtype)) << "): "
        << (c.matches() ? "match" : "MISMATCH") << ", " << c.compared << " slot(s) compared, "
        << c.mismatched << " outside rtol " << formatNumber(c.tolerance.rtol) << " atol "
        << formatNumber(c.tolerance.atol) << ", max abs error " << formatNumber(c.maxAbsError)
        << ", max rel error " << formatNumber(c.maxRelError) << "\n";
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
    failure = {{"step", r.failure->step},
               {"kind", r.failure->kind},
               {"message", r.failure->message}};
  return {{"tool", "run-plan"},
          {"version", kShardcheckVersion},
          {"plan", o.plan},
          {"backend", r.backend},
          {"seed", r.seed},
          {"bindings", r.symbols},
          {"verified", r.verified},
          {"steps", steps},
          {"tensors", tensors},
          {"failure", failure},
          {"checked", r.checked},
          {"timing", timing},
          {"outcome", r.outcome()},
          {"exit_status", r.matches() ? 0 : 1}};
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
  return "result: match: " + std::to_string(r.tensors.size()) +
         " tensor(s) equal the reference on every device";
}

} // namespace

namespace {

/// Loads the plan, binds, runs. Errors are thrown (see runRunPlan).
RunReport loadAndRun(Options &o, Backend &backend, std::ostream &out) {
  std::ifstream in(o.plan, std::ios::binary);
  if (!in)
    throwInputError("unreadable", "cannot read the plan file", SourceLoc{o.plan, 0, 0});
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  Plan plan = planFromJsonText(text, o.plan);
  if (o.bindAuto) {
    auto bindings = satisfyingBindings(plan, o.run.symbols);
    if (!bindings)
      throwInputError("constraint-violated",
                      "no small sizes satisfy the plan's constraints with the given --bind "
                      "values; bind the symbols by hand",
                      SourceLoc{o.plan, 0, 0});
    o.run.symbols = *bindings;
    if (!o.quiet && backend.isLeader() && !bindings->empty()) {
      out << "bindings:";
      for (const auto &[name, value] : *bindings)
        out << " " << name << "=" << value;
      out << "\n";
    }
  }
  return backend.run(plan, o.run);
}

/// Prints the run (leader only) and writes the report; returns the status.
int finish(const Options &o, const RunReport &report, std::ostream &out, std::ostream &err) {
  if (!o.quiet)
    printSteps(out, report);
  if (report.failure)
    err << o.plan << ": error: step " << report.failure->step << " failed: "
        << report.failure->message << "\n";
  printTensors(out, report, o.quiet);
  printTiming(out, report);
  out << outcomeLine(report) << "\n";
  if (!o.reportFile.empty()) {
    std::ofstream rf(o.reportFile, std::ios::binary);
    rf << reportJson(o, report).dump(2) << "\n";
    rf.close();
    if (!rf) {
      err << "run-plan: error: cannot write the report to " << o.reportFile << "\n";
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
    err << "run-plan: error: " << why << "\n";
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
  return agreeOnExitStatus(*backend, status);
}

int runPlanMain(int argc, char **argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  return runRunPlan(args, std::cout, std::cerr);
}

} // namespace shardcheck
