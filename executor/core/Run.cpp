// The one run loop; see Run.h.
//
// Structure: PlanRun holds one run's state (bindings, placement, the
// reference, which tensors were written) and has one method per phase and
// per step kind; what touches buffers goes to the Device, what concerns the
// other processes to the Coordinator.
#include "executor/core/Run.h"

#include "executor/LocalCompute.h"
#include "executor/Random.h"
#include "executor/core/RunSupport.h"
#include "ir/FusionGraph.h"

#include <algorithm>
#include <memory>
#include <set>
#include <sstream>

namespace shardcheck {

int64_t RunReport::comparedSlots() const {
  int64_t n = 0;
  for (const TensorCheck &t : tensors)
    n += t.comparison.compared;
  return n;
}

bool RunReport::matches() const {
  if (failure)
    return false;
  if (!checked || steps.empty())
    return true; // Nothing was asked to be compared, or nothing ran.
  return comparedSlots() > 0 &&
         std::all_of(tensors.begin(), tensors.end(),
                     [](const TensorCheck &t) { return t.comparison.matches(); });
}

std::string RunReport::outcome() const {
  if (failure)
    return failure->kind;
  if (!checked)
    return "unchecked";
  if (steps.empty())
    return "no-steps";
  if (matches())
    return "match";
  return comparedSlots() == 0 ? "nothing-compared" : "wrong-values";
}

namespace {

std::string tensorName(TensorNum t) {
  return "T" + std::to_string(t);
}

class PlanRun {
public:
  PlanRun(const Plan &plan, const RunOptions &options, Backend &backend, Device &device)
      : plan_(plan), options_(options), backend_(backend), coordinator_(backend.coordinator()),
        device_(device), graph_(planGraph(plan)) {}

  RunReport run();

private:
  void allocate();
  void distributeInputs();
  void runCheckedSteps();
  void runStep(const ScheduledStep &at, const PlanStep &step, StepReport &report, bool synchronize);
  void beginIteration(size_t index, const PlanStep &loop, int64_t iteration);
  /// The window of slice `b` in its base on `device` at loop index
  /// `iteration`; StepFailure plan-error when the slice is no such window.
  SliceWindow window(const PlanBuffer &b, int64_t device, int64_t iteration);
  void runCompute(size_t index, const PlanStep &step);
  void runCopy(size_t index, const PlanStep &step);
  void runAlias(const PlanStep &step);
  std::map<int64_t, int64_t> runCollective(const PlanStep &step);
  void recordElements(const PlanStep &step, StepReport &report);
  TeamCall teamCall(const PlanStep &step, const PlanTeam &team, const PlanBuffer &in,
                    const PlanBuffer &out);
  void validate();
  void timeRepeats();

  /// The devices of `step` this process holds `buffer` on.
  std::vector<int64_t> holding(const PlanStep &step, const std::string &buffer) const {
    std::vector<int64_t> devices;
    for (int64_t d : step.devices)
      if (device_.holds(buffer, d))
        devices.push_back(d);
    return devices;
  }
  const PlanBuffer &buffer(const std::string &name) const {
    const PlanBuffer *b = plan_.buffer(name);
    SC_ASSERT(b, "the loader checked that buffer " + name + " exists");
    return *b;
  }
  void wrote(const PlanBuffer &b) {
    if (b.kind == BufferKind::Tensor)
      written_.insert(b.tensor);
    if (b.kind == BufferKind::Slice) // Its base is what the run compares.
      written_.insert(buffer(b.base).tensor);
  }

  const Plan &plan_;
  const RunOptions &options_;
  Backend &backend_;
  Coordinator &coordinator_;
  Device &device_;
  FusionGraph graph_;
  Bindings symbols_;
  std::set<int64_t> local_; ///< The devices this process holds.
  std::unique_ptr<Placement> placement_;
  ReferenceResult reference_;
  std::set<TensorNum> written_;
  std::vector<ScheduledStep> schedule_;
  /// The loop variables' values in the iteration running now.
  std::map<std::string, int64_t> iteration_;
  RunReport report_;
};

void PlanRun::allocate() {
  for (const PlanBuffer &b : plan_.buffers)
    for (const PlanLocal &l : b.local) {
      int64_t slots = checkedSlotCount(plan_, b, l, symbols_, placement_->slotCount(b, l.device));
      if (l.held)
        checkHeldCount(plan_, b, l, placement_->map().elements(b, l.device));
      if (local_.count(l.device))
        device_.allocate(b, l.device, slots);
    }
}

void PlanRun::distributeInputs() {
  std::map<TensorNum, HostTensor> inputs =
      randomInputs(plan_.fusion, symbols_, options_.seed, options_.integerInputs);
  if (options_.check)
    reference_ = evaluateReference(plan_.fusion, inputs, symbols_);
  for (const auto &[t, value] : inputs) {
    const PlanBuffer *b = plan_.buffer(tensorName(t));
    if (!b)
      continue;
    for (const PlanLocal &l : b->local)
      if (device_.holds(b->name, l.device)) // Else another process's device.
        device_.upload(b->name, l.device, placement_->slice(*b, l.device, value));
  }
  device_.synchronize();
}

void PlanRun::runCompute(size_t index, const PlanStep &step) {
  for (int64_t d : holding(step, step.output))
    device_.compute(index, step, d);
  wrote(buffer(step.output));
}

void PlanRun::runCopy(size_t index, const PlanStep &step) {
  for (int64_t d : holding(step, step.output)) {
    std::vector<int64_t> gather;
    try {
      gather = copyGather(plan_, placement_->map(), step, d);
    } catch (const LocalComputeError &e) {
      throw StepFailure{"plan-error", e.what()};
    }
    device_.gather(step.inputs[0], step.output, d, gather, "copy" + std::to_string(index));
  }
  wrote(buffer(step.output));
}

void PlanRun::runAlias(const PlanStep &step) {
  for (int64_t d : holding(step, step.output))
    device_.alias(step.inputs[0], step.output, d);
  wrote(buffer(step.output));
}

/// One team's call with every participant's sizes, its counts checked.
TeamCall PlanRun::teamCall(const PlanStep &step, const PlanTeam &team, const PlanBuffer &in,
                           const PlanBuffer &out) {
  TeamCall t;
  t.call.kind = *step.collective;
  t.call.team = team.devices;
  t.call.root = team.root;
  t.call.pairs = team.pairs;
  if (step.ring) // A ring's pairs are this iteration's (docs/plan-format.md, "Rings").
    t.call.pairs = ringPairs(*step.ring, team, iteration_.at(step.ring->loopVar));
  t.call.op = step.reduceOp.value_or(ReduceOp::Sum);
  t.call.inputName = in.name;
  t.call.outputName = out.name;
  if (t.call.kind == CollectiveType::AllToAllv)
    t.call.counts = placement_->map().packCounts(in, team);
  for (int64_t d : teamParticipants(team)) {
    if (std::any_of(in.local.begin(), in.local.end(), [&](auto &l) { return l.device == d; }))
      t.in[d] = placement_->slotCount(in, d);
    if (std::any_of(out.local.begin(), out.local.end(), [&](auto &l) { return l.device == d; }))
      t.out[d] = placement_->slotCount(out, d);
  }
  // Every process checks every device's counts, so all fail alike.
  checkCollectiveCounts(t.call, t.in, t.out);
  return t;
}

/// Runs a collective; the bytes each device received.
std::map<int64_t, int64_t> PlanRun::runCollective(const PlanStep &step) {
  const PlanBuffer &in = buffer(step.inputs[0]);
  const PlanBuffer &out = buffer(step.output);
  int elementSize = std::max(1, dataTypeSize(out.dtype));
  std::map<int64_t, int64_t> moved;
  try {
    std::vector<TeamCall> calls;
    for (const PlanTeam &team : step.teams) {
      calls.push_back(teamCall(step, team, in, out));
      for (auto [device, bytes] : collectiveBytesReceived(calls.back().call, calls.back().in,
                                                          calls.back().out, elementSize))
        moved[device] += bytes;
    }
    device_.collective(step, calls);
  } catch (const CollectiveError &e) {
    throw StepFailure{"count-error", e.what()};
  }
  wrote(out);
  return moved;
}

SliceWindow PlanRun::window(const PlanBuffer &b, int64_t device, int64_t iteration) {
  const PlanBuffer &base = buffer(b.base);
  SliceWindow w;
  w.inner = 1;
  int64_t extent = 0;
  for (const PlanLocal &l : base.local)
    if (l.device == device)
      for (size_t k = 0; k < l.shape.size(); ++k) {
        int64_t e = *l.shape[k].evaluate(symbols_); // allocate() evaluated every extent.
        if (k < *b.axis)
          w.outer *= e;
        else if (k == *b.axis)
          extent = e;
        else
          w.inner *= e;
      }
  // A swizzled slice takes its device's slot (ir/Swizzle1D.h), a plain one
  // the iteration's.
  int64_t index = sliceWindowIndex(b, device, iteration).value_or(-1);
  w.stride = extent * w.inner;
  w.offset = index * w.inner;
  if (w.outer * w.inner != placement_->slotCount(b, device) || index < 0 || index >= extent)
    throw StepFailure{"plan-error", "the slice " + b.name + " at " + b.loopVar + " = " +
                                        std::to_string(iteration) + " is no window of " + b.base +
                                        " on device " + std::to_string(device)};
  return w;
}

/// Starts iteration `iteration` of a loop: every slice of its variable
/// takes its window of the base.
void PlanRun::beginIteration(size_t index, const PlanStep &loop, int64_t iteration) {
  iteration_[loop.loopVar] = iteration;
  std::set<std::string> slices;
  for (size_t j = index + 1; j <= index + loop.body; ++j) {
    slices.insert(plan_.steps[j].inputs.begin(), plan_.steps[j].inputs.end());
    slices.insert(plan_.steps[j].output);
  }
  for (const std::string &name : slices) {
    const PlanBuffer *b = plan_.buffer(name);
    if (!b || b->kind != BufferKind::Slice)
      continue;
    for (const PlanLocal &l : b->local)
      if (device_.holds(b->name, l.device))
        device_.readWindow(b->base, b->name, l.device, window(*b, l.device, iteration));
  }
}

/// Runs one step. Without `synchronize`, a device may return once the
/// step's work is queued (collectives always finish). A step writing a
/// slice stores it back into its base's window.
void PlanRun::runStep(const ScheduledStep &at, const PlanStep &step, StepReport &report,
                      bool synchronize) {
  size_t index = at.index;
  switch (step.kind) {
  case StepKind::Loop:
    beginIteration(index, step, *at.iteration);
    break;
  case StepKind::Compute:
    runCompute(index, step);
    break;
  case StepKind::Copy:
    runCopy(index, step);
    break;
  case StepKind::Alias:
    runAlias(step);
    break;
  case StepKind::Collective:
    for (const auto &[device, bytes] : runCollective(step)) {
      report.bytesReceived[device] += bytes; // a step in a loop sums its iterations
      report.bytesMoved += bytes;
    }
    break;
  }
  if (const PlanBuffer *out = plan_.buffer(step.output); out && out->kind == BufferKind::Slice)
    for (const PlanLocal &l : out->local)
      if (device_.holds(out->name, l.device))
        device_.writeWindow(out->name, out->base, l.device,
                            window(*out, l.device, iteration_.at(out->loopVar)));
  if (synchronize)
    device_.synchronize();
}

/// The slot counts of the step's buffers on every device that has them
/// (the placement knows every device's, not only this process's).
void PlanRun::recordElements(const PlanStep &step, StepReport &report) {
  auto record = [&](const std::string &name, std::map<int64_t, int64_t> &counts) {
    for (const PlanLocal &l : buffer(name).local)
      counts[l.device] = placement_->slotCount(buffer(name), l.device);
  };
  if (step.kind == StepKind::Loop) // it only starts an iteration
    return;
  if (step.kind != StepKind::Compute)
    record(step.inputs[0], report.inputElements);
  record(step.output, report.outputElements);
}

void PlanRun::runCheckedSteps() {
  runStepsInOrder(plan_, schedule_, coordinator_, report_,
                  [this](const ScheduledStep &at, const PlanStep &step, StepReport &r) {
                    try {
                      recordElements(step, r);
                      runStep(at, step, r, true);
                    } catch (const DeviceError &e) {
                      throw StepFailure{device_.failureKind(), e.what()};
                    }
                  });
}

void PlanRun::validate() {
  if (!options_.check)
    return;
  ToleranceTable tolerances(plan_.fusion, symbols_, options_.exactComparison);
  std::vector<int64_t> local(local_.begin(), local_.end());
  for (TensorNum t : written_) {
    const PlanBuffer *b = plan_.buffer(tensorName(t));
    std::map<int64_t, std::vector<double>> buffers;
    for (const PlanLocal &l : b->local)
      if (device_.holds(b->name, l.device))
        buffers[l.device] = device_.download(b->name, l.device);
    report_.tensors.push_back(
        checkTensor(plan_, placement_->map(), reference_, tolerances, t, buffers, local));
  }
}

void PlanRun::timeRepeats() {
  try {
    timeRepeatedRuns(
        plan_, schedule_, coordinator_, options_, report_,
        [this](const ScheduledStep &at, const PlanStep &step, bool synchronize) {
          StepReport unused;
          runStep(at, step, unused, synchronize);
        },
        [this] { device_.synchronize(); });
  } catch (const DeviceError &e) {
    report_.failure =
        RunFailure{0, device_.failureKind(), std::string("while timing: ") + e.what()};
  }
}

RunReport PlanRun::run() {
  report_.backend = backend_.name();
  report_.seed = options_.seed;
  report_.verified = plan_.verified();
  report_.checked = options_.check;
  refuseUnverifiedSteps(plan_, options_.allowUnverified);
  symbols_ = checkedBindings(plan_, options_.symbols);
  report_.symbols = symbols_;
  schedule_ = stepSchedule(plan_, symbols_);
  for (int64_t d : coordinator_.localDevices(plan_.devices))
    local_.insert(d);
  placement_ = std::make_unique<Placement>(plan_, graph_, symbols_);
  RunContext context{plan_, graph_, symbols_, options_, *placement_, local_};
  device_.begin(context);
  allocate();
  distributeInputs();
  runCheckedSteps();
  if (!report_.failure) {
    validate();
    report_.tensors = coordinator_.gatherChecks(report_.tensors);
  }
  if (!report_.failure && options_.repeats > 0)
    timeRepeats();
  if (report_.failure && report_.failure->kind == device_.failureKind())
    device_.abandon();
  return std::move(report_);
}

} // namespace

namespace {

/// Whether every constraint whose symbols are all bound holds.
bool boundConstraintsHold(const Plan &plan, const Bindings &b) {
  for (const PlanConstraint &c : plan.constraints) {
    auto lhs = c.lhs.evaluate(b), rhs = c.rhs.evaluate(b);
    if (!lhs || !rhs)
      continue; // Not all bound yet (or a division by zero: decided later).
    bool holds = c.kind == PlanConstraint::Kind::Positive ? *lhs >= 1
                 : c.kind == PlanConstraint::Kind::Equal  ? *lhs == *rhs
                                                          : *rhs != 0 && *lhs % *rhs == 0;
    if (!holds)
      return false;
  }
  return true;
}

bool bindFrom(const Plan &plan, const std::vector<std::string> &free, size_t i, Bindings &b) {
  if (!boundConstraintsHold(plan, b))
    return false;
  if (i == free.size())
    return true;
  for (int64_t v : {16, 8, 32, 12, 24, 4, 6, 2, 3, 1, 64}) {
    b[free[i]] = v;
    if (bindFrom(plan, free, i + 1, b))
      return true;
  }
  b.erase(free[i]);
  return false;
}

} // namespace

std::optional<Bindings> satisfyingBindings(const Plan &plan, const Bindings &given) {
  Bindings b = given;
  std::vector<std::string> free;
  for (const std::string &s : planSymbols(plan))
    if (!b.count(s))
      free.push_back(s);
  if (free.size() > 12) // 11^12 combinations is past any sensible search.
    return std::nullopt;
  return bindFrom(plan, free, 0, b) ? std::optional<Bindings>(b) : std::nullopt;
}

RunReport runPlan(const Plan &plan, const RunOptions &options, Backend &backend) {
  backend.coordinator().runBegins(plan);
  try {
    std::unique_ptr<Device> device = backend.openDevice(plan);
    return PlanRun(plan, options, backend, *device).run();
  } catch (const DeviceError &e) {
    throw BackendError(e.what());
  }
}

std::vector<StepReport> unrunSteps(const Plan &plan) {
  std::vector<StepReport> steps;
  for (size_t i = 0; i < plan.steps.size(); ++i)
    steps.push_back(unrunStep(plan, i));
  return steps;
}

std::string bindingsText(const Bindings &b) {
  std::string s;
  for (const auto &[k, v] : b)
    s += (s.empty() ? "" : " ") + k + "=" + std::to_string(v);
  return s.empty() ? "(none)" : s;
}

std::string describeRun(const RunReport &r) {
  std::ostringstream os;
  os << "outcome " << r.outcome() << " (seed " << r.seed << ", bindings " << bindingsText(r.symbols)
     << ")";
  if (r.failure)
    os << "; step " << r.failure->step << " failed: " << r.failure->kind << ": "
       << r.failure->message;
  for (const TensorCheck &t : r.tensors) {
    const OutputComparison &c = t.comparison;
    if (c.matches())
      continue;
    os << "; first mismatching tensor " << c.name << " (" << t.role << "): " << c.mismatched
       << " of " << c.compared << " slots";
    if (c.firstMismatch) {
      const Mismatch &m = *c.firstMismatch;
      os << ", device " << m.device << " slot " << m.slot << " index [";
      for (size_t i = 0; i < m.index.size(); ++i)
        os << (i ? ", " : "") << m.index[i];
      os << "] got " << m.got << " expected " << m.expected;
    }
    break;
  }
  return os.str();
}

} // namespace shardcheck
