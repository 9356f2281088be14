// Running a plan, independent of where buffers live; see RunSupport.h.
#include "executor/core/RunSupport.h"

#include "executor/LocalCompute.h"
#include "executor/Reference.h"
#include "executor/core/CollectiveRules.h"
#include "plan/PlanVerifier.h"
#include "util/Checked.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <limits>
#include <sstream>
#include <unordered_map>

namespace shardcheck {

namespace {

std::string tensorName(TensorNum t) {
  return "T" + std::to_string(t);
}

} // namespace

void refuseUnverifiedSteps(const Plan &plan, bool allowUnverified) {
  if (allowUnverified)
    return;
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const PlanStep &s = plan.steps[i];
    if (s.verified()) // the one rule (plan/Plan.h)
      continue;
    std::string step = "step " + std::to_string(i);
    if (s.restsOn.empty())
      throw PlanRefused(step + " rests on no verdict: nothing checked it; run it anyway with "
                               "--allow-unverified");
    for (const PlanVerdict &v : s.restsOn)
      if (v.status != PlanStatus::Proved)
        throw PlanRefused(step + " rests on a " + planStatusName(v.status) + " verdict: " + v.edge +
                          " by " + v.claim + " (" + v.source +
                          (v.detail.empty() ? "" : ": " + v.detail) +
                          "); run it anyway with --allow-unverified");
  }
}

Bindings checkedBindings(const Plan &plan, const Bindings &given) {
  std::vector<std::string> needed = planSymbols(plan);
  std::vector<std::string> missing;
  for (const std::string &s : needed)
    if (!given.count(s))
      missing.push_back(s);
  std::string list;
  for (const std::string &s : missing)
    list += (list.empty() ? "" : ", ") + s;
  if (!missing.empty())
    throwInputError("unbound-symbol",
                    "the plan's sizes are symbolic: bind " + list + " (e.g. --bind " +
                        missing.front() + "=8)",
                    plan.fusion.loc);
  Bindings symbols = given;
  for (const PlanConstraint &c : plan.constraints) {
    auto lhs = c.lhs.evaluate(symbols), rhs = c.rhs.evaluate(symbols);
    bool holds = lhs && rhs &&
                 (c.kind == PlanConstraint::Kind::Positive ? *lhs >= 1
                  : c.kind == PlanConstraint::Kind::Equal  ? *lhs == *rhs
                                                           : *rhs != 0 && *lhs % *rhs == 0);
    if (!holds)
      throwInputError("constraint-violated",
                      "the bindings violate the plan's constraint " + c.text +
                          ": the proofs cover only sizes that satisfy it",
                      plan.fusion.loc);
  }
  if (auto violation = loopRangeViolation(plan, symbols))
    throwInputError("loop-out-of-range", *violation + ": a slice would reach outside its buffer",
                    plan.fusion.loc);
  refuseOversizedRun(plan, symbols);
  return symbols;
}

namespace {

// Bytes the executor keeps per element of each tensor over the whole tensor
// (its reference value and input copy, 8 + 8, and the layout's slot and group
// tables, 8 + 4) and per slot of each buffer on each device (the slot itself,
// the slot's element in the buffer map, and the layout's per-group slot
// table: 8 + 8 + 8). Measured runs stay below this; it errs high.
constexpr int64_t kBytesPerTensorElement = 28;
constexpr int64_t kBytesPerBufferSlot = 24;

/// a * b + c, saturated at INT64_MAX (an estimate need not be exact).
int64_t saturatingMulAdd(int64_t a, int64_t b, int64_t c) {
  auto product = checkedMul(a, b);
  auto sum = product ? checkedAdd(*product, c) : std::nullopt;
  return sum ? *sum : INT64_MAX;
}

int64_t saturatingCount(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t e : shape)
    n = saturatingMulAdd(n, e, 0);
  return n;
}

/// Host memory this process may still allocate: MemAvailable, capped by
/// RLIMIT_AS less what is mapped already.
int64_t availableHostBytes() {
  int64_t available = INT64_MAX;
  std::ifstream meminfo("/proc/meminfo");
  for (std::string key; meminfo >> key;) {
    int64_t kib = 0;
    meminfo >> kib;
    if (key == "MemAvailable:")
      available = saturatingMulAdd(kib, 1024, 0);
    meminfo.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
  }
  rlimit limit{};
  if (getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
    std::ifstream statm("/proc/self/statm");
    int64_t pages = 0;
    statm >> pages;
    int64_t mapped = saturatingMulAdd(pages, sysconf(_SC_PAGESIZE), 0);
    int64_t cap = static_cast<int64_t>(std::min<rlim_t>(limit.rlim_cur, INT64_MAX));
    available = std::min(available, std::max<int64_t>(0, cap - mapped));
  }
  return available;
}

std::string gibibytes(int64_t bytes) {
  std::ostringstream os;
  os.precision(3);
  os << static_cast<double>(bytes) / (1024.0 * 1024 * 1024) << " GiB";
  return os.str();
}

} // namespace

int64_t estimatedRunBytes(const Plan &plan, const Bindings &symbols) {
  int64_t bytes = 0;
  for (const auto &[t, tv] : plan.fusion.tensors)
    bytes = saturatingMulAdd(saturatingCount(referenceShape(plan.fusion, t, symbols)),
                             kBytesPerTensorElement, bytes);
  for (const PlanBuffer &b : plan.buffers)
    for (const PlanLocal &l : b.local) {
      int64_t slots = 1;
      for (const Extent &e : l.shape)
        slots = saturatingMulAdd(slots, e.evaluate(symbols).value_or(0), 0);
      bytes = saturatingMulAdd(slots, kBytesPerBufferSlot, bytes);
    }
  return bytes;
}

void refuseOversizedRun(const Plan &plan, const Bindings &symbols) {
  int64_t needed = estimatedRunBytes(plan, symbols);
  int64_t available = availableHostBytes();
  if (needed <= available)
    return;
  throwInputError(
      "memory-limit",
      "the run needs " +
          (needed == INT64_MAX ? std::string("more than 8 EiB") : "about " + gibibytes(needed)) +
          " of host memory (the reference and layout of every tensor, the slots of "
          "every buffer), more than the " +
          gibibytes(available) + " available; bind smaller sizes",
      plan.fusion.loc);
}

FusionGraph planGraph(const Plan &plan) {
  DiagnosticEngine diags;
  auto graph = FusionGraph::build(plan.fusion, diags);
  if (!graph)
    throw InputError(diags.diagnostics().front());
  return std::move(*graph);
}

TensorCheck checkTensor(const Plan &plan, const BufferMap &map, const ReferenceResult &reference,
                        ToleranceTable &tolerances, TensorNum t,
                        const std::map<int64_t, std::vector<double>> &buffers,
                        const std::vector<int64_t> &localDevices) {
  const auto &outputs = plan.fusion.outputs;
  bool output = std::find(outputs.begin(), outputs.end(), t) != outputs.end();
  TensorCheck check{compareWithReference(map.layout(t), reference.value(t), buffers, tensorName(t),
                                         tolerances.of(t), &localDevices),
                    output ? "output" : "intermediate"};
  check.comparison.tensor = t;
  check.comparison.dtype = plan.fusion.tensor(t).dtype;
  return check;
}

StepReport unrunStep(const Plan &plan, size_t index) {
  const PlanStep &step = plan.steps[index];
  StepReport r;
  r.index = index;
  r.kind = stepKindName(step.kind);
  r.description = describeStep(plan, step);
  r.devices = step.devices;
  r.verified = step.verified();
  return r;
}

std::vector<ScheduledStep> stepSchedule(const Plan &plan, const Bindings &symbols) {
  std::vector<ScheduledStep> schedule;
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const PlanStep &step = plan.steps[i];
    if (step.kind != StepKind::Loop) {
      schedule.push_back({i, std::nullopt});
      continue;
    }
    // checkedBindings evaluated the bounds (loopRangeViolation).
    int64_t lo = *step.lo.evaluate(symbols), hi = *step.hi.evaluate(symbols);
    for (int64_t v = lo; v < hi; ++v)
      for (size_t j = i; j <= i + step.body; ++j)
        schedule.push_back({j, v});
    i += step.body;
  }
  return schedule;
}

namespace {

/// The loop step whose body holds step `index`, if any.
const PlanStep *enclosingLoop(const Plan &plan, size_t index) {
  for (size_t i = index + 1; i-- > 0;)
    if (plan.steps[i].kind == StepKind::Loop)
      return i + plan.steps[i].body >= index ? &plan.steps[i] : nullptr;
  return nullptr;
}

/// `iteration StreamIdx = 2: ` for a step run inside a loop.
std::string iterationPrefix(const Plan &plan, const ScheduledStep &s) {
  const PlanStep *loop = s.iteration ? enclosingLoop(plan, s.index) : nullptr;
  return loop ? "iteration " + loop->loopVar + " = " + std::to_string(*s.iteration) + ": " : "";
}

} // namespace

void runStepsInOrder(
    const Plan &plan, const std::vector<ScheduledStep> &schedule, Coordinator &coordinator,
    RunReport &report,
    const std::function<void(const ScheduledStep &, const PlanStep &, StepReport &)> &runStep) {
  std::vector<StepReport> reports(plan.steps.size());
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    reports[i] = unrunStep(plan, i);
  }
  for (const ScheduledStep &s : schedule) {
    if (report.failure)
      break;
    StepReport &r = reports[s.index];
    std::optional<RunFailure> failure;
    auto start = std::chrono::steady_clock::now();
    try {
      runStep(s, plan.steps[s.index], r);
    } catch (const StepFailure &f) {
      failure = RunFailure{s.index, f.kind, iterationPrefix(plan, s) + f.message};
    }
    // A failure on one process stops all of them at the same step.
    report.failure = coordinator.agreeOnFailure(failure);
    r.status = report.failure ? "failed" : "ok";
    r.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  report.steps.insert(report.steps.end(), reports.begin(), reports.end());
}

int64_t checkedSlotCount(const Plan &plan, const PlanBuffer &b, const PlanLocal &l,
                         const Bindings &symbols, int64_t actual) {
  int64_t planned = 1;
  for (const Extent &e : l.shape) {
    auto v = e.evaluate(symbols);
    if (!v || *v < 0)
      throwInputError("plan-invalid",
                      "buffer \"" + b.name + "\" on device " + std::to_string(l.device) +
                          ": extent " + e.str() + " does not evaluate",
                      plan.fusion.loc);
    planned =
        mulOrThrow(planned, *v, "the slot count of buffer \"" + b.name + "\"", plan.fusion.loc);
  }
  bool derived = b.kind == BufferKind::Packed || b.kind == BufferKind::Unpacked;
  if (!derived && planned != actual)
    throwInputError("plan-invalid",
                    "buffer \"" + b.name + "\" on device " + std::to_string(l.device) +
                        ": the plan gives it " + std::to_string(planned) +
                        " slot(s), the layout of its " + bufferKindName(b.kind) + " gives " +
                        std::to_string(actual),
                    plan.fusion.loc);
  return actual;
}

void checkHeldCount(const Plan &plan, const PlanBuffer &b, const PlanLocal &l,
                    const std::vector<int64_t> &elements) {
  auto held =
      std::count_if(elements.begin(), elements.end(), [](int64_t x) { return x != kNoElement; });
  if (held != *l.held)
    throwInputError("plan-invalid",
                    "buffer \"" + b.name + "\" on device " + std::to_string(l.device) +
                        ": the plan says it holds " + std::to_string(*l.held) +
                        " element(s), the layout of its " + bufferKindName(b.kind) + " gives " +
                        std::to_string(held),
                    plan.fusion.loc);
}

int64_t checkedSlotCount(const Plan &plan, const BufferMap &map, const PlanBuffer &b,
                         const PlanLocal &l, const Bindings &symbols) {
  return checkedSlotCount(plan, b, l, symbols,
                          static_cast<int64_t>(map.elements(b, l.device).size()));
}

std::vector<int64_t> copyGather(const Plan &plan, const BufferMap &map, const PlanStep &step,
                                int64_t device) {
  const PlanBuffer &in = *plan.buffer(step.inputs[0]);
  const PlanBuffer &out = *plan.buffer(step.output);
  // Where each producer element sits in the input buffer.
  std::unordered_map<int64_t, int64_t> slotOf;
  const auto &have = map.elements(in, device);
  for (size_t o = have.size(); o-- > 0;)
    if (have[o] != kNoElement)
      slotOf[have[o]] = static_cast<int64_t>(o);
  // What each output slot expects: a producer element.
  std::vector<int64_t> gather = map.elements(out, device);
  bool intoConsumer = out.kind == BufferKind::Tensor;
  SC_ASSERT(!intoConsumer || (step.expr && step.operand),
            "the loader gives a copy into a tensor its edge");
  for (int64_t &slot : gather) {
    if (slot == kNoElement) {
      slot = -1;
      continue;
    }
    int64_t x = intoConsumer ? map.neededElement(*step.expr, *step.operand, slot) : slot;
    auto it = slotOf.find(x);
    if (it == slotOf.end())
      throw LocalComputeError("copy into \"" + out.name + "\" on device " + std::to_string(device) +
                              ": " + tensorName(in.tensor) + " element " + std::to_string(x) +
                              " is not in \"" + in.name + "\" on that device");
    slot = it->second;
  }
  return gather;
}

std::string describeStep(const Plan &plan, const PlanStep &s) {
  std::string in = s.inputs.empty() ? std::string() : s.inputs[0];
  switch (s.kind) {
  case StepKind::Compute: {
    const Expr &e = plan.fusion.exprs[*s.expr];
    std::string operands;
    for (size_t i = 0; i < s.inputs.size(); ++i)
      operands += (i ? ", " : "") + (s.inputs[i].empty() ? e.inputs[i].scalar : s.inputs[i]);
    std::string mode =
        s.mode == ComputeMode::Whole ? "" : std::string(" [") + computeModeName(s.mode) + "]";
    return s.output + " = " + e.op + "(" + operands + ")" + mode;
  }
  case StepKind::Collective: {
    std::string teams;
    for (const PlanTeam &t : s.teams) {
      if (!t.pairs.empty()) {
        for (const auto &[src, dst] : t.pairs)
          teams += " " + std::to_string(src) + "->" + std::to_string(dst);
        continue;
      }
      teams += teamText(t.devices);
      if (t.root)
        teams += " root " + std::to_string(*t.root);
    }
    return std::string(collectiveTypeName(*s.collective)) + " " + in + " -> " + s.output +
           " over " + teams;
  }
  case StepKind::Alias:
    return "alias " + in + " -> " + s.output;
  case StepKind::Copy:
    return "copy " + in + " -> " + s.output;
  case StepKind::Loop:
    return "for " + s.loopVar + " from " + s.lo.str() + " to " + s.hi.str() + ": the next " +
           std::to_string(s.body) + " step(s)";
  }
  return "?";
}

int64_t ToleranceTable::reductionLength(TensorNum t) {
  if (auto it = lengths_.find(t); it != lengths_.end())
    return it->second;
  lengths_[t] = 1;
  const Expr *e = fusion_.producerExpr(t);
  int64_t length = 1;
  if (e) {
    for (TensorNum in : e->tensorInputs())
      length = std::max(length, reductionLength(in));
    if (isReductionOp(*e) && !e->tensorInputs().empty()) {
      std::vector<int64_t> inShape = referenceShape(fusion_, e->tensorInputs()[0], symbols_);
      int64_t in = elementCount(inShape);
      int64_t out = std::max<int64_t>(1, elementCount(referenceShape(fusion_, t, symbols_)));
      int64_t own = e->kind == OpKind::Reduction || inShape.empty()
                        ? std::max<int64_t>(1, in / out)
                        : std::max<int64_t>(1, inShape.back());
      length *= own;
    }
  }
  return lengths_[t] = length;
}

Tolerance ToleranceTable::of(TensorNum t) {
  if (exact_)
    return Tolerance{0, 0};
  if (auto it = tolerances_.find(t); it != tolerances_.end())
    return it->second;
  Tolerance tol = toleranceFor(fusion_.tensor(t).dtype, reductionLength(t));
  tolerances_[t] = tol;
  if (const Expr *e = fusion_.producerExpr(t))
    for (TensorNum in : e->tensorInputs()) {
      if (!fusion_.producerExpr(in))
        continue; // An input: the same rounded values on both sides.
      Tolerance up = of(in);
      tol.rtol = std::max(tol.rtol, up.rtol);
      tol.atol = std::max(tol.atol, up.atol);
    }
  return tolerances_[t] = tol;
}

void timeRepeatedRuns(
    const Plan &plan, const std::vector<ScheduledStep> &schedule, Coordinator &coordinator,
    const RunOptions &options, RunReport &report,
    const std::function<void(const ScheduledStep &, const PlanStep &, bool)> &runStep,
    const std::function<void()> &synchronizeAll) {
  using Clock = std::chrono::steady_clock;
  auto seconds = [](Clock::duration d) { return std::chrono::duration<double>(d).count(); };
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
  };
  RunTiming timing;
  timing.warmup = options.warmup;
  timing.repeats = options.repeats;
  std::vector<double> pipelined, synced;
  std::vector<std::vector<double>> steps(plan.steps.size());
  for (bool synchronize : {false, true}) {
    for (int r = 0; r < timing.warmup + timing.repeats; ++r) {
      coordinator.agreeOnFailure(std::nullopt);
      Clock::time_point start = Clock::now();
      std::vector<double> stepSeconds(plan.steps.size(), 0.0);
      for (const ScheduledStep &s : schedule) {
        Clock::time_point stepStart = Clock::now();
        try {
          runStep(s, plan.steps[s.index], synchronize);
        } catch (const StepFailure &f) {
          report.failure =
              RunFailure{s.index, f.kind, "while timing: " + iterationPrefix(plan, s) + f.message};
          return;
        }
        stepSeconds[s.index] += seconds(Clock::now() - stepStart);
      }
      if (synchronize && r >= timing.warmup)
        for (size_t i = 0; i < plan.steps.size(); ++i)
          steps[i].push_back(stepSeconds[i]);
      synchronizeAll();
      if (r >= timing.warmup)
        (synchronize ? synced : pipelined).push_back(seconds(Clock::now() - start));
    }
  }
  if (pipelined.empty())
    return;
  timing.medianSeconds = median(pipelined);
  timing.minSeconds = *std::min_element(pipelined.begin(), pipelined.end());
  timing.syncedMedianSeconds = median(synced);
  for (const auto &s : steps)
    timing.stepMedianSeconds.push_back(median(s));
  report.timing = timing;
}

} // namespace shardcheck
