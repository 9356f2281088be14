// What the harnesses share; see FuzzSupport.h.
//
// Structure: the helpers come first (escapeOf runs a body and names what
// escaped it, acceptsInput and mustSucceed being the two policies over it;
// lookups in the tools' JSON; the size bounds behind the limits; the scratch
// directory; one driver run), then the header's functions in its order.
//
// This file does not catch anything the code under test should have caught
// itself: an escape is always either a rejected input or a violation.
#include "fuzz/FuzzSupport.h"

#include "executor/core/Run.h"
#include "ir/FusionGraph.h"
#include "ir/Json.h"
#include "ir/Lints.h"
#include "ir/Printer.h"
#include "ir/reader/DumpReader.h"
#include "tests/DocumentCompare.h"
#include "tools/check_sharding/CheckSharding.h"
#include "tools/run_plan/RunPlan.h"
#include "util/Diagnostics.h"

#include <cxxabi.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <typeinfo>

namespace shardcheck::fuzz {

namespace fs = std::filesystem;

namespace {

std::string demangled(const char *name) {
  int status = 0;
  std::unique_ptr<char, void (*)(void *)> d(abi::__cxa_demangle(name, nullptr, nullptr, &status),
                                            std::free);
  return status == 0 && d ? d.get() : name;
}

/// What escaped a body: nothing, an InputError, or something else.
struct Escape {
  bool inputError = false;
  std::string what; ///< `TYPE: what()`.
};

std::optional<Escape> escapeOf(const std::function<void()> &body) {
  try {
    body();
    return std::nullopt;
  } catch (const InputError &e) {
    return Escape{true, e.what()};
  } catch (const std::exception &e) {
    return Escape{false, demangled(typeid(e).name()) + ": " + e.what()};
  } catch (...) {
    return Escape{false, "an exception not derived from std::exception"};
  }
}

/// `a` and `b` around their first difference.
std::string firstDifference(const std::string &a, const std::string &b) {
  size_t at = 0;
  while (at < a.size() && at < b.size() && a[at] == b[at])
    ++at;
  size_t from = at > 60 ? at - 60 : 0;
  return "first difference at byte " + std::to_string(at) + ": ..." + a.substr(from, 120) +
         "... vs ..." + b.substr(from, 120) + "...";
}

/// The integer at `key`, or -1 when there is none.
int64_t number(const nlohmann::json &j, const char *key) {
  return j.is_object() && j.contains(key) && j.at(key).is_number_integer()
             ? j.at(key).get<int64_t>()
             : -1;
}

/// The value at `key`, or null when there is none.
nlohmann::json member(const nlohmann::json &j, const char *key) {
  return j.is_object() && j.contains(key) ? j.at(key) : nlohmann::json();
}

/// The exit status check-sharding's summary implies (README, "Exit status"),
/// for a run that asked for a plan (`--emit-plan`) or not: a plan asked of a
/// truncated input is refused with 4.
int impliedCheckStatus(const nlohmann::json &s, bool planAsked) {
  if (number(s, "unreadable_files") > 0)
    return 2;
  if (planAsked && number(s, "partial_files") > 0)
    return 4;
  if (number(s, "lint_errors") > 0 || number(s, "compiler_refuted") > 0 ||
      number(s, "unsupported") > 0 || number(s, "refuted") > 0)
    return 1;
  if (number(s, "unknown") > 0 || number(s, "compiler_unknown") > 0 ||
      number(s, "unchecked_tensors") > 0 || number(s, "partial_files") > 0)
    return 3;
  return 0;
}

/// Every edge is counted once in the summary, under one verdict.
void checkEdgeCounts(const nlohmann::json &doc) {
  nlohmann::json s = member(doc, "summary");
  int64_t listed = 0;
  for (const auto &f : member(doc, "files"))
    listed += static_cast<int64_t>(member(f, "edges").size());
  int64_t counted =
      number(s, "proved") + number(s, "refuted") + number(s, "unknown") + number(s, "unsupported");
  if (listed != number(s, "edges") || counted != listed)
    violated("check-sharding's summary counts every edge once",
             std::to_string(listed) + " edges listed, summary says " +
                 std::to_string(number(s, "edges")) + " and its verdicts add up to " +
                 std::to_string(counted));
}

bool inStatusRange(int status, int highest) {
  return status >= 0 && status <= highest;
}

/// |value| of `e` under `b` when it is at most `limit`.
std::optional<int64_t> bounded(const Extent &e, const Bindings &b, int64_t limit) {
  std::optional<int64_t> v;
  if (!acceptsInput("Extent::evaluate", [&] { v = e.evaluate(b); }) || !v)
    return std::nullopt;
  if (*v < -limit || *v > limit)
    return std::nullopt;
  return *v < 0 ? -*v : *v;
}

/// The product of `shape` under `b` when it is at most `limit`.
std::optional<int64_t> boundedProduct(const std::vector<Extent> &shape, const Bindings &b,
                                      int64_t limit) {
  int64_t product = 1;
  for (const Extent &e : shape) {
    auto v = bounded(e, b, limit);
    if (!v || (*v > 0 && product > limit / *v))
      return std::nullopt;
    product *= *v;
  }
  return product;
}

std::vector<Extent> extentsOf(const Fusion &f, const std::vector<IdNum> &domain) {
  std::vector<Extent> shape;
  for (IdNum id : domain)
    if (f.hasId(id))
      shape.push_back(f.id(id).expandedExtent.value_or(f.id(id).extent));
  return shape;
}

/// At most kLimits.meshDevices devices, none of them numbered far out.
bool smallDevices(const std::vector<int64_t> &devices) {
  return devices.size() <= kLimits.meshDevices &&
         std::all_of(devices.begin(), devices.end(),
                     [](int64_t d) { return d >= -kLimits.deviceId && d <= kLimits.deviceId; });
}

bool smallMesh(const std::optional<DeviceMesh> &mesh) {
  return !mesh || smallDevices(mesh->devices());
}

/// Every IterDomain, and every domain of every tensor, is small under `b`.
bool smallFusion(const Fusion &f, const Bindings &b) {
  if (f.tensors.size() > kLimits.tensors)
    return false;
  for (const auto &[n, id] : f.ids)
    if (!bounded(id.expandedExtent.value_or(id.extent), b, kLimits.elements))
      return false;
  for (const auto &[n, tv] : f.tensors) {
    if (!smallMesh(tv.mesh))
      return false;
    for (const auto *domain : {&tv.root, &tv.logical, &tv.allocation, &tv.loop})
      if (!boundedProduct(extentsOf(f, *domain), b, kLimits.elements))
        return false;
  }
  return true;
}

/// Every buffer of every device together holds at most kLimits.slots slots.
bool smallBuffers(const Plan &plan, const Bindings &b) {
  int64_t total = 0;
  for (const PlanBuffer &buffer : plan.buffers)
    for (const PlanLocal &local : buffer.local) {
      auto n = boundedProduct(local.shape, b, kLimits.slots);
      if (!n || (total += *n) > kLimits.slots)
        return false;
    }
  return true;
}

bool smallPlan(const Plan &plan) {
  return plan.steps.size() <= kLimits.steps && smallDevices(plan.devices);
}

/// Removes the scratch directory when the process ends normally.
struct ScratchDir {
  fs::path path;
  ScratchDir() {
    path = fs::temp_directory_path() / ("shardcheck-fuzz-" + std::to_string(::getpid()));
    fs::create_directories(path);
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

/// Runs a tool's driver; its status must be within 0..`highest`.
ToolRun runTool(int (*driver)(const std::vector<std::string> &, std::ostream &, std::ostream &),
                const char *name, const std::vector<std::string> &args, int highest) {
  ToolRun run;
  std::ostringstream out, err;
  mustSucceed(name, [&] { run.status = driver(args, out, err); });
  run.out = out.str();
  run.err = err.str();
  if (!inStatusRange(run.status, highest))
    violated(std::string(name) + " exits with 0.." + std::to_string(highest),
             "status " + std::to_string(run.status) + "\n" + run.err);
  return run;
}

} // namespace

std::string_view textOf(const uint8_t *data, size_t size) {
  return {reinterpret_cast<const char *>(data), size};
}

void violated(const std::string &property, const std::string &detail) {
  std::fprintf(stderr, "==shardcheck-fuzz== property violated: %s\n  %s\n", property.c_str(),
               detail.c_str());
  std::fflush(stderr);
  std::abort();
}

bool acceptsInput(const char *what, const std::function<void()> &body) {
  std::optional<Escape> e = escapeOf(body);
  if (e && !e->inputError)
    violated(std::string("only InputError escapes ") + what, e->what);
  return !e;
}

void mustSucceed(const std::string &what, const std::function<void()> &body) {
  if (auto e = escapeOf(body))
    violated(what + " does not throw", (e->inputError ? "InputError: " : "") + e->what);
}

void checkJsonRoundTrip(const Document &doc) {
  std::string text, again;
  Document back;
  mustSucceed("documentToJsonText", [&] { text = documentToJsonText(doc); });
  mustSucceed("reading written JSON IR", [&] { back = documentFromJsonText(text, doc.file); });
  std::string why;
  if (!documentsEqual(doc, back, &why))
    violated("JSON IR reads back equal", why);
  mustSucceed("documentToJsonText", [&] { again = documentToJsonText(back); });
  if (again != text)
    violated("JSON IR writes the same text twice", firstDifference(text, again));
}

Plan checkPlanRoundTrip(const Plan &plan) {
  std::string text, again;
  Plan back;
  mustSucceed("planToJsonText", [&] { text = planToJsonText(plan); });
  mustSucceed("loading a written plan", [&] { back = planFromJsonText(text, "roundtrip.json"); });
  mustSucceed("planToJsonText", [&] { again = planToJsonText(back); });
  if (again != text)
    violated("a plan loads back equal (writes the same text)", firstDifference(text, again));
  return back;
}

void checkDocumentUsers(const Document &doc) {
  for (const Fusion &f : doc.fusions) {
    DiagnosticEngine diags;
    std::string printed;
    mustSucceed("lintFusion", [&] { lintFusion(f, diags); });
    mustSucceed("FusionGraph::build", [&] { FusionGraph::build(f, diags); });
    mustSucceed("printFusion", [&] { printed = printFusion(f); });
    mustSucceed("reading a printed fusion", [&] { readDocument(printed, "printed.txt"); });
  }
}

bool withinCheckLimits(const Document &doc) {
  if (doc.fusions.size() > kLimits.fusions)
    return false;
  for (const Fusion &f : doc.fusions) {
    if (f.exprs.size() > kLimits.exprs || f.tensors.size() > kLimits.tensors)
      return false;
    for (const auto &[n, tv] : f.tensors)
      if (!smallMesh(tv.mesh))
        return false;
  }
  return true;
}

std::optional<Bindings> runnableBindings(const Plan &plan) {
  if (!smallPlan(plan))
    return std::nullopt;
  std::optional<Bindings> b;
  if (!acceptsInput("satisfyingBindings", [&] { b = satisfyingBindings(plan, {}); }) || !b)
    return std::nullopt;
  if (!smallFusion(plan.fusion, *b) || !smallBuffers(plan, *b))
    return std::nullopt;
  return b;
}

fs::path scratchFile(const std::string &name) {
  static ScratchDir dir;
  return dir.path / name;
}

void writeFile(const fs::path &path, std::string_view text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
  if (!out)
    violated("the harness writes its scratch files", path.string());
}

std::optional<std::string> readFile(const fs::path &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return std::nullopt;
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

ToolRun runCheckShardingTool(const std::vector<std::string> &args) {
  return runTool(runCheckSharding, "check-sharding", args, 4);
}

ToolRun runRunPlanTool(const std::vector<std::string> &args) {
  return runTool(runRunPlan, "run-plan", args, 3);
}

ToolRun emitPlan(const fs::path &input, const fs::path &plan, const std::string &lowerings,
                 size_t fusion, unsigned timeoutMs) {
  std::error_code ec;
  fs::remove(plan, ec);
  return runCheckShardingTool({"--format", "json", "--timeout-ms", std::to_string(timeoutMs),
                               "--emit-plan", plan.string(), "--plan-lowerings", lowerings,
                               "--fusion", std::to_string(fusion), input.string()});
}

nlohmann::json checkCheckExit(const ToolRun &run) {
  nlohmann::json doc;
  mustSucceed("parsing check-sharding --format json",
              [&] { doc = nlohmann::json::parse(run.out); });
  if (number(doc, "exit_status") != run.status)
    violated("check-sharding's JSON names its exit status", "exits " + std::to_string(run.status) +
                                                                ", JSON says " +
                                                                member(doc, "exit_status").dump());
  int implied = impliedCheckStatus(member(doc, "summary"), /*planAsked=*/true);
  if (implied != run.status)
    violated("check-sharding's exit status follows from its summary",
             "exits " + std::to_string(run.status) + ", summary implies " +
                 std::to_string(implied) + ": " + member(doc, "summary").dump());
  checkEdgeCounts(doc);
  return doc;
}

namespace {

/// run-plan's exit status against its report (runPlanFile).
nlohmann::json checkRunExit(const ToolRun &run, const fs::path &report) {
  std::optional<std::string> text = readFile(report);
  bool ran = run.status == 0 || run.status == 1;
  if (text.has_value() != ran)
    violated("run-plan writes a report exactly when it exits 0 or 1",
             "exit " + std::to_string(run.status) + (text ? " with" : " without") + " a report\n" +
                 run.err);
  if (!text)
    return nullptr;
  nlohmann::json r;
  mustSucceed("parsing run-plan's report", [&] { r = nlohmann::json::parse(*text); });
  if (number(r, "exit_status") != run.status)
    violated("run-plan's report names its exit status", "exits " + std::to_string(run.status) +
                                                            ", report says " +
                                                            member(r, "exit_status").dump());
  const nlohmann::json outcome = member(r, "outcome");
  const bool match = outcome == "match";
  // README: 0 is everything matching; a plan without steps and a run without
  // the reference (--no-check) pass as well.
  const bool passing = match || outcome == "no-steps" || outcome == "unchecked";
  if (passing != (run.status == 0))
    violated("run-plan exits 0 exactly on outcome match, no-steps or unchecked",
             "outcome " + outcome.dump() + ", exit " + std::to_string(run.status));
  if (outcome == "no-steps" && !member(r, "steps").empty())
    violated("outcome no-steps is a plan without steps", member(r, "steps").dump());
  int64_t compared = 0;
  for (const auto &t : member(r, "tensors"))
    compared += number(t, "compared");
  if (match && compared <= 0)
    violated("a run whose outcome is match compared at least one slot",
             std::to_string(member(r, "tensors").size()) + " tensor(s), " +
                 std::to_string(compared) +
                 " slot(s) compared; steps: " + member(r, "steps").dump());
  return r;
}

} // namespace

PlanRun runPlanFile(const fs::path &plan, const std::vector<std::string> &flags) {
  const fs::path report = scratchFile("report.json");
  std::error_code ec;
  fs::remove(report, ec);
  std::vector<std::string> args = {"--quiet", "--bind-auto", "--report", report.string()};
  args.insert(args.end(), flags.begin(), flags.end());
  args.push_back(plan.string());
  PlanRun run;
  run.tool = runRunPlanTool(args);
  run.report = checkRunExit(run.tool, report);
  return run;
}

} // namespace shardcheck::fuzz
