// The executor core; see Executor.h.
//
// Structure: PlanRun holds one run's state (layouts, the reference, every
// device's buffers) and has one method per step kind. Buffers are shared
// pointers so that an alias step makes two plan buffers one storage.
#include "executor/Executor.h"

#include "executor/BufferMap.h"
#include "executor/LocalCompute.h"
#include "executor/Random.h"
#include "executor/RunSupport.h"
#include "ir/FusionGraph.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <set>
#include <sstream>
#include <unordered_map>

namespace shardcheck {

std::optional<RunFailure> Backend::agreeOnFailure(const std::optional<RunFailure> &local) {
  return local;
}

std::vector<TensorCheck> Backend::gatherChecks(const std::vector<TensorCheck> &local) {
  return local;
}

RunReport Backend::run(const Plan &plan, const RunOptions &options) {
  return runPlan(plan, options, *this);
}

void SimBackend::collective(const SimCollectiveCall &call, const std::map<int64_t, int64_t> &,
                            const std::map<int64_t, int64_t> &,
                            const std::map<int64_t, const SimBuffer *> &in,
                            const std::map<int64_t, SimBuffer *> &out) {
  runSimCollective(call, in, out);
}

void SimBackend::allToAllv(const std::vector<int64_t> &team,
                           const std::vector<std::vector<int64_t>> &counts,
                           const std::map<int64_t, const SimBuffer *> &in,
                           const std::map<int64_t, SimBuffer *> &out, const std::string &inputName,
                           const std::string &outputName) {
  runSimAllToAllv(team, counts, in, out, inputName, outputName);
}

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
  PlanRun(const Plan &plan, const RunOptions &options, Backend &backend)
      : plan_(plan), options_(options), backend_(backend), graph_(planGraph(plan)) {}

  RunReport run();

private:
  void refuseUnverified() const;
  void bindSymbols();
  void allocate();
  void distributeInputs();
  void runSteps();
  void runStep(const PlanStep &step, StepReport &report);
  void runCompute(const PlanStep &step);
  void runIndexedCompute(const PlanStep &step);
  void runCopy(const PlanStep &step);
  void runAlias(const PlanStep &step);
  int64_t runCollective(const PlanStep &step);
  void validate();

  bool isLocal(int64_t device) const { return local_.count(device) > 0; }
  /// Every device's size of `buffer` (from the layouts: every process knows
  /// every device's sizes).
  std::map<int64_t, int64_t> sizesOf(const PlanBuffer &b) const {
    std::map<int64_t, int64_t> sizes;
    for (const PlanLocal &l : b.local)
      sizes[l.device] = static_cast<int64_t>(map_->elements(b, l.device).size());
    return sizes;
  }

  // --- Buffers. ---
  SimBuffer *storage(const std::string &buffer, int64_t device) {
    auto it = storage_.find({buffer, device});
    return it == storage_.end() ? nullptr : it->second.get();
  }
  const PlanBuffer &buffer(const std::string &name) const {
    const PlanBuffer *b = plan_.buffer(name);
    SC_ASSERT(b, "the loader checked that buffer " + name + " exists");
    return *b;
  }
  /// The global value of `tensor` as `device` sees it through `bufferName`:
  /// the elements it holds there, `missing` everywhere else.
  HostTensor globalView(const std::string &bufferName, int64_t device, double missing);

  const Plan &plan_;
  const RunOptions &options_;
  Backend &backend_;
  std::set<int64_t> local_; ///< The devices this process holds.
  FusionGraph graph_;
  Bindings symbols_;
  std::unique_ptr<BufferMap> map_;
  ReferenceResult reference_;
  std::map<std::pair<std::string, int64_t>, std::shared_ptr<SimBuffer>> storage_;
  std::set<TensorNum> written_;
  RunReport report_;
};

void PlanRun::refuseUnverified() const {
  refuseUnverifiedSteps(plan_, options_.allowUnverified);
}

void PlanRun::bindSymbols() {
  symbols_ = checkedBindings(plan_, options_.symbols);
}

void PlanRun::allocate() {
  for (const PlanBuffer &b : plan_.buffers)
    for (const PlanLocal &l : b.local) {
      int64_t slots = checkedSlotCount(plan_, *map_, b, l, symbols_);
      if (isLocal(l.device))
        storage_[{b.name, l.device}] = std::make_shared<SimBuffer>(slots, 0.0);
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
    for (const PlanLocal &l : b->local) {
      SimBuffer *s = storage(b->name, l.device);
      if (!s)
        continue; // Another process's device.
      const auto &elements = map_->elements(*b, l.device);
      for (size_t o = 0; o < elements.size(); ++o)
        (*s)[o] = elements[o] == kNoElement ? 0.0 : value.data()[elements[o]];
    }
  }
}

HostTensor PlanRun::globalView(const std::string &bufferName, int64_t device, double missing) {
  const PlanBuffer &b = buffer(bufferName);
  const TensorLayout &layout = map_->layout(b.tensor);
  HostTensor view(layout.shape(), plan_.fusion.tensor(b.tensor).dtype);
  std::fill(view.data().begin(), view.data().end(), missing);
  SimBuffer *s = storage(bufferName, device);
  if (!s)
    return view;
  const auto &elements = map_->elements(b, device);
  for (size_t o = 0; o < elements.size() && o < s->size(); ++o)
    if (elements[o] != kNoElement)
      view.data()[elements[o]] = (*s)[o];
  // An expanded broadcast is named at index 0 only; its other indices hold
  // the same value.
  const TensorView &tv = plan_.fusion.tensor(b.tensor);
  std::vector<IdNum> data = dataLogicalIds(plan_.fusion, tv);
  std::vector<int64_t> index(view.rank(), 0);
  for (int64_t e = 0; e < view.numel(); ++e, nextIndex(index, view.shape())) {
    std::vector<int64_t> source = index;
    bool expanded = false;
    for (size_t a = 0; a < data.size(); ++a)
      if (plan_.fusion.id(data[a]).expandedExtent && source[a] != 0)
        source[a] = 0, expanded = true;
    if (expanded)
      view.data()[e] = view.at(source);
  }
  return view;
}

void PlanRun::runIndexedCompute(const PlanStep &step) {
  const PlanBuffer &out = buffer(step.output);
  for (int64_t d : step.devices) {
    if (!storage(step.output, d))
      continue;
    LocalCompute compute;
    try {
      compute = buildLocalCompute(plan_, graph_, *map_, step, d, symbols_);
    } catch (const LocalComputeError &e) {
      throw StepFailure{"plan-error", e.what()};
    }
    std::map<std::string, std::vector<double> *> buffers;
    buffers[step.output] = storage(step.output, d);
    for (const std::string &in : step.inputs)
      if (!in.empty())
        buffers[in] = storage(in, d);
    runLocalComputeOnHost(compute, plan_.fusion, buffers, out.dtype, symbols_);
  }
  if (out.kind == BufferKind::Tensor)
    written_.insert(out.tensor);
}

void PlanRun::runCompute(const PlanStep &step) {
  if (options_.indexedCompute)
    return runIndexedCompute(step);
  const Expr &expr = plan_.fusion.exprs[*step.expr];
  const PlanBuffer &out = buffer(step.output);
  double missing = step.mode == ComputeMode::Partial ? partialIdentity(expr)
                                                     : std::numeric_limits<double>::quiet_NaN();
  for (int64_t d : step.devices) {
    SimBuffer *target = storage(step.output, d);
    if (!target)
      continue; // The device holds nothing of the output, or is another process's.
    std::vector<HostTensor> operands;
    for (const std::string &in : step.inputs)
      operands.push_back(in.empty() ? HostTensor() : globalView(in, d, missing));
    HostTensor result;
    if (step.mode == ComputeMode::Epilogue) {
      HostTensor reduced = globalView(step.output, d, std::numeric_limits<double>::quiet_NaN());
      result = evaluateExpression(plan_.fusion, graph_, *step.expr, operands, symbols_,
                                  ExprPart::Epilogue, &reduced);
    } else {
      result = evaluateExpression(plan_.fusion, graph_, *step.expr, operands, symbols_,
                                  step.mode == ComputeMode::Partial ? ExprPart::Partial
                                                                    : ExprPart::Whole);
    }
    const auto &elements = map_->elements(out, d);
    for (size_t o = 0; o < elements.size(); ++o)
      (*target)[o] =
          elements[o] == kNoElement ? 0.0 : roundToDtype(result.data()[elements[o]], out.dtype);
  }
  if (out.kind == BufferKind::Tensor)
    written_.insert(out.tensor);
}

void PlanRun::runCopy(const PlanStep &step) {
  const PlanBuffer &out = buffer(step.output);
  for (int64_t d : step.devices) {
    SimBuffer *target = storage(step.output, d);
    if (!target)
      continue;
    std::vector<int64_t> gather;
    try {
      gather = copyGather(plan_, *map_, step, d);
    } catch (const LocalComputeError &e) {
      throw StepFailure{"plan-error", e.what()};
    }
    SimBuffer *source = storage(step.inputs[0], d);
    for (size_t o = 0; o < gather.size(); ++o)
      if (gather[o] >= 0)
        (*target)[o] = (*source)[static_cast<size_t>(gather[o])];
  }
  if (out.kind == BufferKind::Tensor)
    written_.insert(out.tensor);
}

void PlanRun::runAlias(const PlanStep &step) {
  const PlanBuffer &out = buffer(step.output);
  for (int64_t d : step.devices) {
    auto in = storage_.find({step.inputs[0], d});
    auto target = storage_.find({step.output, d});
    if (target == storage_.end())
      continue; // Nothing of the output here, or another process's device.
    size_t needed = target->second->size();
    size_t have = in == storage_.end() ? 0 : in->second->size();
    if (needed != have)
      throw StepFailure{"count-error", "alias " + step.inputs[0] + " -> " + step.output +
                                           " on device " + std::to_string(d) + ": " + step.output +
                                           " needs " + std::to_string(needed) + " element(s) but " +
                                           step.inputs[0] + " holds " + std::to_string(have)};
    target->second = in->second; // The same storage: zero copies.
  }
  if (out.kind == BufferKind::Tensor)
    written_.insert(out.tensor);
}

int64_t PlanRun::runCollective(const PlanStep &step) {
  const PlanBuffer &inBuffer = buffer(step.inputs[0]);
  const PlanBuffer &outBuffer = buffer(step.output);
  int elementSize = std::max(1, dataTypeSize(outBuffer.dtype));
  std::map<int64_t, int64_t> inSizes = sizesOf(inBuffer), outSizes = sizesOf(outBuffer);
  int64_t moved = 0;
  for (const PlanTeam &team : step.teams) {
    std::set<int64_t> devices(team.devices.begin(), team.devices.end());
    if (team.root)
      devices.insert(*team.root);
    for (const auto &[src, dst] : team.pairs)
      devices.insert({src, dst});
    std::map<int64_t, const SimBuffer *> in;
    std::map<int64_t, SimBuffer *> out;
    std::map<int64_t, int64_t> teamIn, teamOut;
    for (int64_t d : devices) {
      if (inSizes.count(d))
        teamIn[d] = inSizes[d];
      if (outSizes.count(d))
        teamOut[d] = outSizes[d];
      if (SimBuffer *s = storage(inBuffer.name, d))
        in[d] = s;
      if (SimBuffer *s = storage(outBuffer.name, d))
        out[d] = s;
    }
    try {
      if (step.collective == CollectiveType::AllToAllv) {
        auto counts = map_->packCounts(inBuffer, team);
        backend_.allToAllv(team.devices, counts, in, out, inBuffer.name, outBuffer.name);
        for (size_t s = 0; s < counts.size(); ++s)
          for (size_t j = 0; j < counts.size(); ++j)
            moved += s == j ? 0 : counts[s][j] * elementSize;
        continue;
      }
      SimCollectiveCall call;
      call.kind = *step.collective;
      call.team = team.devices;
      call.root = team.root;
      call.pairs = team.pairs;
      call.op = step.reduceOp.value_or(ReduceOp::Sum);
      call.inputName = inBuffer.name;
      call.outputName = outBuffer.name;
      // Every process checks every device's counts, so all fail alike.
      checkCollectiveCounts(call, teamIn, teamOut);
      backend_.collective(call, teamIn, teamOut, in, out);
      moved += collectiveBytesMoved(call, teamIn, teamOut, elementSize);
    } catch (const CollectiveError &e) {
      throw StepFailure{"count-error", e.what()};
    }
  }
  // Reductions combine in double; a device stores its dtype.
  for (int64_t d : step.devices)
    if (SimBuffer *s = storage(outBuffer.name, d))
      for (double &v : *s)
        v = roundToDtype(v, outBuffer.dtype);
  if (outBuffer.kind == BufferKind::Tensor)
    written_.insert(outBuffer.tensor);
  return moved;
}

void PlanRun::runStep(const PlanStep &step, StepReport &report) {
  switch (step.kind) {
  case StepKind::Compute:
    runCompute(step);
    break;
  case StepKind::Copy:
    runCopy(step);
    break;
  case StepKind::Alias:
    runAlias(step);
    break;
  case StepKind::Collective:
    report.bytesMoved = runCollective(step);
    break;
  }
}

void PlanRun::runSteps() {
  runStepsInOrder(plan_, backend_, report_,
                  [this](size_t, const PlanStep &step, StepReport &r) { runStep(step, r); });
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
      if (SimBuffer *s = storage(b->name, l.device))
        buffers[l.device] = *s;
    report_.tensors.push_back(checkTensor(plan_, *map_, reference_, tolerances, t, buffers, local));
  }
}

RunReport PlanRun::run() {
  report_.backend = backend_.name();
  report_.seed = options_.seed;
  report_.verified = plan_.verified();
  report_.checked = options_.check;
  refuseUnverified();
  bindSymbols();
  report_.symbols = symbols_;
  map_ = std::make_unique<BufferMap>(plan_, graph_, symbols_);
  for (int64_t d : backend_.localDevices(plan_.devices))
    local_.insert(d);
  allocate();
  distributeInputs();
  runSteps();
  if (!report_.failure) {
    validate();
    report_.tensors = backend_.gatherChecks(report_.tensors);
  }
  if (!report_.failure && options_.repeats > 0) // Host steps finish when they return.
    timeRepeatedRuns(
        plan_, backend_, options_, report_,
        [this](size_t, const PlanStep &step, bool) {
          StepReport unused;
          runStep(step, unused);
        },
        [] {});
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
  return PlanRun(plan, options, backend).run();
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
