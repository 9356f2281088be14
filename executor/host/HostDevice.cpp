// Host buffers and host compute; see HostDevice.h.
#include "executor/host/HostDevice.h"

#include "executor/LocalCompute.h"
#include "executor/core/RunSupport.h"

#include <algorithm>
#include <limits>

namespace shardcheck {

void HostDevice::allocate(const PlanBuffer &b, int64_t device, int64_t slots) {
  storage_[{b.name, device}] = std::make_shared<std::vector<double>>(slots, 0.0);
}

HostTensor HostDevice::globalView(const std::string &bufferName, int64_t device, double missing) {
  const Plan &plan = run_->plan;
  const PlanBuffer &b = *plan.buffer(bufferName);
  const BufferMap &map = run_->placement.map();
  HostTensor view(map.layout(b.tensor).shape(), plan.fusion.tensor(b.tensor).dtype);
  std::fill(view.data().begin(), view.data().end(), missing);
  std::vector<double> *s = storage(bufferName, device);
  if (!s)
    return view;
  const auto &elements = map.elements(b, device);
  for (size_t o = 0; o < elements.size() && o < s->size(); ++o)
    if (elements[o] != kNoElement)
      view.data()[elements[o]] = (*s)[o];
  // An expanded broadcast is named at index 0 only; its other indices hold
  // the same value.
  std::vector<IdNum> data = dataLogicalIds(plan.fusion, plan.fusion.tensor(b.tensor));
  std::vector<int64_t> index(view.rank(), 0);
  for (int64_t e = 0; e < view.numel(); ++e, nextIndex(index, view.shape())) {
    std::vector<int64_t> source = index;
    bool expanded = false;
    for (size_t a = 0; a < data.size(); ++a)
      if (plan.fusion.id(data[a]).expandedExtent && source[a] != 0)
        source[a] = 0, expanded = true;
    if (expanded)
      view.data()[e] = view.at(source);
  }
  return view;
}

void HostDevice::computeIndexed(const PlanStep &step, int64_t d) {
  LocalCompute compute;
  try {
    compute =
        buildLocalCompute(run_->plan, run_->graph, run_->placement.map(), step, d, run_->symbols);
  } catch (const LocalComputeError &e) {
    throw StepFailure{"plan-error", e.what()};
  }
  std::map<std::string, std::vector<double> *> buffers;
  buffers[step.output] = storage(step.output, d);
  for (const std::string &in : step.inputs)
    if (!in.empty())
      buffers[in] = storage(in, d);
  runLocalComputeOnHost(compute, run_->plan.fusion, buffers, run_->plan.buffer(step.output)->dtype,
                        run_->symbols);
}

void HostDevice::computeOnViews(const PlanStep &step, int64_t d) {
  const Fusion &fusion = run_->plan.fusion;
  const Expr &expr = fusion.exprs[*step.expr];
  const PlanBuffer &out = *run_->plan.buffer(step.output);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  double missing = step.mode == ComputeMode::Partial ? partialIdentity(expr) : nan;
  std::vector<HostTensor> operands;
  for (const std::string &in : step.inputs)
    operands.push_back(in.empty() ? HostTensor() : globalView(in, d, missing));
  HostTensor result;
  if (step.mode == ComputeMode::Epilogue) {
    HostTensor reduced = globalView(step.output, d, nan);
    result = evaluateExpression(fusion, run_->graph, *step.expr, operands, run_->symbols,
                                ExprPart::Epilogue, &reduced);
  } else {
    result =
        evaluateExpression(fusion, run_->graph, *step.expr, operands, run_->symbols,
                           step.mode == ComputeMode::Partial ? ExprPart::Partial : ExprPart::Whole);
  }
  std::vector<double> &target = *storage(step.output, d);
  const auto &elements = run_->placement.map().elements(out, d);
  for (size_t o = 0; o < elements.size(); ++o)
    target[o] =
        elements[o] == kNoElement ? 0.0 : roundToDtype(result.data()[elements[o]], out.dtype);
}

void HostDevice::compute(size_t, const PlanStep &step, int64_t device) {
  if (run_->options.indexedCompute)
    computeIndexed(step, device);
  else
    computeOnViews(step, device);
}

void HostDevice::gather(const std::string &input, const std::string &output, int64_t device,
                        const std::vector<int64_t> &slots, const std::string &) {
  std::vector<double> &target = *storage(output, device);
  const std::vector<double> &source = *storage(input, device);
  for (size_t o = 0; o < slots.size(); ++o)
    if (slots[o] >= 0)
      target[o] = source[static_cast<size_t>(slots[o])];
}

void HostDevice::alias(const std::string &input, const std::string &output, int64_t device) {
  auto in = storage_.find({input, device});
  auto target = storage_.find({output, device});
  int64_t needed = static_cast<int64_t>(target->second->size());
  int64_t have = in == storage_.end() ? 0 : static_cast<int64_t>(in->second->size());
  if (needed != have)
    throw StepFailure{"count-error", aliasCountError(input, output, device, needed, have)};
  target->second = in->second; // The same storage: zero copies.
}

void HostDevice::collective(const PlanStep &step, const std::vector<TeamCall> &calls) {
  for (const TeamCall &t : calls) {
    std::map<int64_t, const std::vector<double> *> in;
    std::map<int64_t, std::vector<double> *> out;
    for (int64_t d : teamParticipants(step.teams[&t - calls.data()])) {
      if (std::vector<double> *s = storage(t.call.inputName, d))
        in[d] = s;
      if (std::vector<double> *s = storage(t.call.outputName, d))
        out[d] = s;
    }
    runTeam(t, in, out);
  }
  // Reductions combine in double; a device stores its dtype.
  DataType dtype = run_->plan.buffer(step.output)->dtype;
  for (int64_t d : step.devices)
    if (std::vector<double> *s = storage(step.output, d))
      for (double &v : *s)
        v = roundToDtype(v, dtype);
}

} // namespace shardcheck
