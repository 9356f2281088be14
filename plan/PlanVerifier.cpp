// The plan's consistency checks; see PlanVerifier.h.
#include "plan/PlanVerifier.h"

#include "ir/Swizzle1D.h"
#include "ir/json/JsonPositions.h"
#include "ir/json/JsonText.h"
#include "util/Checked.h"
#include "util/Diagnostics.h"

#include <stdexcept>

namespace shardcheck {

using jsonir::appendPointer;
using jsonir::atPointer;
using jsonir::quotedToken;

PlanVerifier::PlanVerifier(const Plan &plan, Fail fail) : plan_(plan), fail_(std::move(fail)) {
  planDevices_.insert(plan.devices.begin(), plan.devices.end());
}

void PlanVerifier::fail(const std::string &path, const std::string &message) const {
  fail_(path, message);
  throw std::logic_error("PlanVerifier: the failure handler returned");
}

Extent PlanVerifier::slots(const std::vector<Extent> &shape, const std::string &path) const {
  // The product is a tree one level deeper per symbolic axis, which every
  // recursive walk of it (printing, evaluating, freeing) descends, so the
  // axes are bounded as JSON nesting is.
  if (shape.size() > static_cast<size_t>(jsonir::kMaxJsonDepth))
    fail(path, "a shape has at most " + std::to_string(jsonir::kMaxJsonDepth) + " axes, this one " +
                   std::to_string(shape.size()));
  try {
    return localCount(shape);
  } catch (const InputError &e) {
    fail(path, e.diagnostic().message);
  }
}

void PlanVerifier::checkBuffer(size_t index) {
  const PlanBuffer &b = plan_.buffers.at(index);
  const std::string at = appendPointer("/buffers", index);
  checkBufferFields(at, b);
  if (!names_.insert(b.name).second)
    fail(at + "/name", "two buffers are called " + quotedToken(b.name));
}

void PlanVerifier::checkBufferFields(const std::string &at, const PlanBuffer &b) const {
  bool needsEdge = b.kind == BufferKind::View || b.kind == BufferKind::Packed ||
                   b.kind == BufferKind::Unpacked || b.kind == BufferKind::Partial;
  if (needsEdge && (!b.consumer || !b.expr))
    fail(at, std::string("a ") + bufferKindName(b.kind) +
                 " buffer names its \"consumer\" and \"expr\"");
  if (b.expr && *b.expr >= plan_.fusion.exprs.size())
    fail(at + "/expr", "the plan's fusion has no expression " + std::to_string(*b.expr));
  if (b.expr && b.operand && *b.operand >= plan_.fusion.exprs[*b.expr].inputs.size())
    fail(at + "/operand",
         "expression " + std::to_string(*b.expr) + " has no operand " + std::to_string(*b.operand));
  if (b.kind == BufferKind::Slice && (b.base.empty() || !b.axis || b.loopVar.empty()))
    fail(at, "a slice buffer names its \"base\", \"axis\" and \"loop\"");
  if (b.kind != BufferKind::Slice && !b.swizzleTeam.empty())
    fail(at + "/swizzle_team", "only a slice buffer has a \"swizzle_team\"");
  if (b.kind != BufferKind::Tensor && b.kind != BufferKind::Partial && b.kind != BufferKind::View &&
      b.kind != BufferKind::Slice && b.teams.empty())
    fail(at, std::string("a ") + bufferKindName(b.kind) + " buffer names its \"teams\"");
  if (b.kind == BufferKind::Partial && !(b.collective && isReductionCollective(*b.collective)))
    fail(at, "a partial buffer names its \"collective\": Allreduce, Reduce or ReduceScatter");
  std::set<int64_t> seen;
  for (size_t i = 0; i < b.local.size(); ++i)
    if (!seen.insert(b.local[i].device).second)
      fail(appendPointer(at + "/local", i),
           "device " + std::to_string(b.local[i].device) + " has two local shapes");
}

void PlanVerifier::checkTeamsWithin(const std::string &at, const std::vector<PlanTeam> &teams,
                                    const std::set<int64_t> &known) const {
  for (const PlanTeam &t : teams) {
    std::vector<int64_t> all = t.devices;
    if (t.root)
      all.push_back(*t.root);
    for (const auto &[src, dst] : t.pairs) {
      all.push_back(src);
      all.push_back(dst);
    }
    for (int64_t d : all)
      if (!known.count(d))
        fail(at, "team device " + std::to_string(d) + " is not a device of the plan");
  }
}

/// A compute step reads, for operand i, a buffer of operand i's tensor (its
/// own buffer, or a view of it for this expression and operand) and writes
/// the expression's output (its partial buffer for a partial).
void PlanVerifier::checkCompute(const std::string &at, const PlanStep &s,
                                const PlanBuffer &out) const {
  if (!s.expr)
    fail(at, "a compute step names its \"expr\"");
  const Expr &e = plan_.fusion.exprs[*s.expr];
  if (s.inputs.size() != e.inputs.size())
    fail(at + "/inputs", "a compute step lists one buffer per operand of expression " +
                             std::to_string(*s.expr) + " (" + std::to_string(e.inputs.size()) +
                             ")");
  if (e.outputs.size() != 1)
    fail(at + "/expr", "expression " + std::to_string(*s.expr) + " has " +
                           std::to_string(e.outputs.size()) + " outputs; one is computed");
  for (size_t i = 0; i < e.inputs.size(); ++i) {
    std::string path = appendPointer(at + "/inputs", i);
    if (!e.inputs[i].tensor) {
      if (!s.inputs[i].empty())
        fail(path, "operand " + std::to_string(i) + " is a scalar: its buffer is \"\"");
      continue;
    }
    if (s.inputs[i].empty())
      fail(path, "operand " + std::to_string(i) + " is a tensor and needs a buffer");
    const PlanBuffer &b = *bufferNamed(s.inputs[i]);
    bool own = (b.kind == BufferKind::Tensor || b.kind == BufferKind::Slice) &&
               b.tensor == *e.inputs[i].tensor;
    bool view = b.kind == BufferKind::View && b.tensor == *e.inputs[i].tensor && b.expr == s.expr &&
                b.operand == i;
    if (!own && !view)
      fail(path, "buffer " + quotedToken(b.name) + " does not hold operand " + std::to_string(i) +
                     " of expression " + std::to_string(*s.expr) + " (T" +
                     std::to_string(*e.inputs[i].tensor) + ")");
  }
  BufferKind expected = s.mode == ComputeMode::Partial ? BufferKind::Partial : BufferKind::Tensor;
  bool kindFits =
      out.kind == expected || (expected == BufferKind::Tensor && out.kind == BufferKind::Slice);
  if (!kindFits || out.tensor != e.outputs[0] ||
      (expected == BufferKind::Partial && out.expr != s.expr))
    fail(at + "/output", std::string("a ") + computeModeName(s.mode) +
                             " compute step of expression " + std::to_string(*s.expr) + " writes " +
                             (expected == BufferKind::Partial ? "a partial " : "the ") +
                             "buffer of T" + std::to_string(e.outputs[0]));
}

/// A copy places elements of one tensor: the input holds the producer's
/// elements that the output's slots expect (a copy into a consumer's own
/// buffer names the edge, through `expr` and `operand`).
void PlanVerifier::checkCopy(const std::string &at, const PlanStep &s, const PlanBuffer &in,
                             const PlanBuffer &out) const {
  TensorNum expected = out.tensor;
  if (out.kind == BufferKind::Tensor) {
    if (!s.expr || !s.operand)
      fail(at, "a copy into a tensor's buffer names the edge (\"expr\", \"operand\")");
    const Expr &e = plan_.fusion.exprs[*s.expr];
    if (*s.operand >= e.inputs.size() || !e.inputs[*s.operand].tensor || e.outputs.size() != 1 ||
        e.outputs[0] != out.tensor)
      fail(at, "expression " + std::to_string(*s.expr) + " operand " + std::to_string(*s.operand) +
                   " is not an edge into T" + std::to_string(out.tensor));
    expected = *e.inputs[*s.operand].tensor;
  } else if (out.kind == BufferKind::Partial) {
    fail(at + "/output", "a copy does not write a partial buffer");
  }
  if (in.kind == BufferKind::Partial || in.tensor != expected)
    fail(at + "/inputs", "buffer " + quotedToken(in.name) + " does not hold the elements of T" +
                             std::to_string(expected) + " that " + quotedToken(out.name) +
                             " expects");
}

/// A collective is called on each device of its step with the sizes of its
/// buffers there: every device of the step has exactly one `counts` entry,
/// with `in` exactly where the input buffer lives and `out` likewise.
void PlanVerifier::checkCounts(const std::string &at, const PlanStep &s, const PlanBuffer &in,
                               const PlanBuffer &out) const {
  std::set<int64_t> stepDevices(s.devices.begin(), s.devices.end()), seen;
  for (size_t i = 0; i < s.counts.size(); ++i) {
    const PlanCount &c = s.counts[i];
    std::string path = appendPointer(at + "/counts", i);
    std::string device = "device " + std::to_string(c.device);
    if (!stepDevices.count(c.device))
      fail(path, device + " is not a device of the step");
    if (!seen.insert(c.device).second)
      fail(path, device + " has two counts entries");
    checkCount(path, in, c.device, c.in, "input");
    checkCount(path, out, c.device, c.out, "output");
  }
  for (int64_t d : s.devices)
    if (!seen.count(d))
      fail(at + "/counts", "device " + std::to_string(d) + " of the step has no counts entry");
}

void PlanVerifier::checkCount(const std::string &path, const PlanBuffer &b, int64_t device,
                              const std::optional<Extent> &count, const char *which) const {
  const PlanLocal *local = localOn(b, device);
  std::string name = "buffer " + quotedToken(b.name);
  if (!local && count)
    fail(path, name + " has no local shape on device " + std::to_string(device));
  if (local && !count)
    fail(path, std::string("the ") + which + " count of device " + std::to_string(device) +
                   " is missing (" + name + " lives there)");
  if (!local)
    return;
  std::string size = slots(local->shape, path).str();
  if (size != count->str())
    fail(path, std::string("the ") + which + " count " + shownToken(count->str()) + " of device " +
                   std::to_string(device) + " is not the size of " + name + " (" +
                   shownToken(size) + ")");
}

void PlanVerifier::indexBuffers() {
  for (const PlanBuffer &b : plan_.buffers) {
    buffers_.emplace(b.name, &b);
    for (const PlanLocal &l : b.local)
      locals_.emplace(std::make_pair(&b, l.device), &l);
  }
  for (size_t i = 0; i < plan_.buffers.size(); ++i)
    if (plan_.buffers[i].kind == BufferKind::Slice)
      checkSlice(appendPointer("/buffers", i), plan_.buffers[i]);
}

/// A slice is a window of a tensor buffer on each of its devices: the
/// base's local shape is the slice's with the sliced axis inserted.
void PlanVerifier::checkSlice(const std::string &at, const PlanBuffer &slice) const {
  const PlanBuffer *base = bufferNamed(slice.base);
  if (!base || base->kind != BufferKind::Tensor)
    fail(at + "/base", "the base of a slice is a tensor buffer; " + quotedToken(slice.base) +
                           " is " + (base ? "not one" : "no buffer"));
  for (size_t i = 0; i < slice.local.size(); ++i) {
    const PlanLocal &l = slice.local[i];
    std::string path = appendPointer(at + "/local", i);
    const PlanLocal *b = localOn(*base, l.device);
    if (!b)
      fail(path, "the base " + quotedToken(base->name) + " has no local shape on device " +
                     std::to_string(l.device));
    size_t axis = *slice.axis;
    if (axis >= b->shape.size() || b->shape.size() != l.shape.size() + 1)
      fail(path, "the slice's shape is not its base's without axis " + std::to_string(axis) +
                     " on device " + std::to_string(l.device));
    // Symbolic extents may be equal by the plan's constraints: the run
    // checks each window at bound sizes.
    for (size_t k = 0; k < l.shape.size(); ++k)
      if (l.shape[k].isConstant() && b->shape[k < axis ? k : k + 1].isConstant() &&
          l.shape[k].str() != b->shape[k < axis ? k : k + 1].str())
        fail(path, "axis " + std::to_string(k) + " of the slice (" + shownToken(l.shape[k].str()) +
                       ") is not the base's (" + shownToken(b->shape[k < axis ? k : k + 1].str()) +
                       ") on device " + std::to_string(l.device));
    if (!slice.swizzleTeam.empty())
      checkSwizzledWindow(path, slice, l.device, b->shape[axis]);
  }
}

/// A swizzled slice's device has a team index, and every slot it takes,
/// (s + t) % D, lies in the base's axis (a symbolic extent is checked once
/// bound, loopRangeViolation).
void PlanVerifier::checkSwizzledWindow(const std::string &path, const PlanBuffer &slice,
                                       int64_t device, const Extent &axisExtent) const {
  const std::vector<int64_t> &team = slice.swizzleTeam;
  std::set<int64_t> members(team.begin(), team.end());
  if (members.size() != team.size())
    fail(path, "the swizzle team of " + quotedToken(slice.name) + " lists a device twice");
  if (!members.count(device))
    fail(path, "device " + std::to_string(device) + " is not in the swizzle team of " +
                   quotedToken(slice.name) + ", so it has no team index to take its slot by");
  auto extent = axisExtent.asConstant();
  if (extent && *extent < static_cast<int64_t>(team.size()))
    fail(path, "the swizzled slots (s + t) % " + std::to_string(team.size()) + " of " +
                   quotedToken(slice.name) + " reach past axis " + std::to_string(*slice.axis) +
                   " of its base (extent " + std::to_string(*extent) + ") on device " +
                   std::to_string(device));
}

/// A CollectivePermute names its ring: one team, peers whose sends meet
/// their receives in every iteration, inside a loop over the ring's
/// variable (the iteration is what the peers are computed from).
void PlanVerifier::checkRing(const std::string &at, const PlanStep &s) const {
  bool permute = s.collective == CollectiveType::CollectivePermute;
  if (permute != s.ring.has_value())
    fail(at, permute ? "a CollectivePermute names its \"ring\""
                     : "only a CollectivePermute has a \"ring\"");
  if (!permute)
    return;
  const PlanRing &r = *s.ring;
  if (!loop_ || plan_.steps[loop_->step].loopVar != r.loopVar)
    fail(at + "/ring/loop", "a CollectivePermute runs in the body of a loop over its ring's "
                            "variable " +
                                quotedToken(r.loopVar));
  if (s.teams.size() != 1 || s.teams[0].devices.empty() || s.teams[0].root ||
      !s.teams[0].pairs.empty())
    fail(at + "/teams", "a CollectivePermute has one team of \"devices\" (its ring)");
  auto d = static_cast<int64_t>(s.teams[0].devices.size());
  for (auto [key, shift] : {std::pair{"recv_shift", r.recvShift}, {"send_shift", r.sendShift}})
    if (shift >= d)
      fail(at + "/ring/" + key, std::string("a ring's ") + key + " must be below its team size " +
                                    std::to_string(d) + ", not " + std::to_string(shift));
  if (!ringPeersPairUp(d, r.recvShift, r.sendShift))
    fail(at + "/ring",
         "the ring's peers do not pair up: in every iteration s the member of team index t "
         "sends to (t - s + " +
             std::to_string(r.sendShift) + ") % " + std::to_string(d) +
             ", which receives from (t + " + std::to_string(r.recvShift + r.sendShift) + ") % " +
             std::to_string(d) + ", not from t (recv_shift + send_shift must be a multiple of " +
             std::to_string(d) + ")");
}

const PlanBuffer *PlanVerifier::bufferNamed(const std::string &name) const {
  auto it = buffers_.find(name);
  return it == buffers_.end() ? nullptr : it->second;
}

const PlanLocal *PlanVerifier::localOn(const PlanBuffer &b, int64_t device) const {
  auto it = locals_.find({&b, device});
  return it == locals_.end() ? nullptr : it->second;
}

void PlanVerifier::closeLoopBefore(size_t index) {
  if (!loop_ || index <= loop_->last)
    return;
  written_.insert(loop_->writtenBases.begin(), loop_->writtenBases.end());
  loop_.reset();
}

void PlanVerifier::checkLoop(const std::string &at, size_t index, const PlanStep &s) {
  if (loop_)
    fail(at, "a loop step inside the body of loop step " + std::to_string(loop_->step) +
                 ": loops do not nest");
  if (s.loopVar.empty() || s.body == 0)
    fail(at, "a loop step names its \"var\" and a \"body\" of at least one step");
  if (!s.inputs.empty() || !s.output.empty())
    fail(at, "a loop step has no \"inputs\" and an empty \"output\"");
  loop_ = OpenLoop{index, index + s.body, {}};
}

void PlanVerifier::checkSliceUse(const std::string &path, size_t index, const PlanBuffer &b) const {
  if (b.kind != BufferKind::Slice)
    return;
  if (!loop_ || index == loop_->step || plan_.steps[loop_->step].loopVar != b.loopVar)
    fail(path, "the slice " + quotedToken(b.name) + " is used outside a loop over " +
                   quotedToken(b.loopVar));
}

void PlanVerifier::checkStep(size_t index) {
  const PlanStep &s = plan_.steps.at(index);
  const std::string at = appendPointer("/steps", index);
  closeLoopBefore(index);
  for (int64_t d : s.devices)
    if (!planDevices_.count(d))
      fail(at + "/devices", "device " + std::to_string(d) + " is not a device of the plan");
  if (s.kind == StepKind::Loop)
    return checkLoop(at, index, s);
  if (s.expr && *s.expr >= plan_.fusion.exprs.size())
    fail(at + "/expr", "the plan's fusion has no expression " + std::to_string(*s.expr));
  auto requireBuffer = [&](const std::string &name, const std::string &path) {
    const PlanBuffer *b = bufferNamed(name);
    if (!b)
      fail(path, "no buffer is called " + quotedToken(name));
    return b;
  };
  for (size_t i = 0; i < s.inputs.size(); ++i) {
    std::string path = appendPointer(at + "/inputs", i);
    if (s.inputs[i].empty() && s.kind == StepKind::Compute)
      continue; // A scalar operand (checkCompute checks that it is one).
    const PlanBuffer *b = requireBuffer(s.inputs[i], path);
    checkSliceUse(path, index, *b);
    // A slice reads its base's window; bases written through views have no
    // producer expression, so they are given until written.
    const PlanBuffer *whole = b->kind == BufferKind::Slice ? bufferNamed(b->base) : b;
    bool isFusionInput =
        whole->kind == BufferKind::Tensor && !plan_.fusion.producerExpr(whole->tensor);
    if (!written_.count(s.inputs[i]) && !written_.count(whole->name) && !isFusionInput)
      fail(path, "buffer " + quotedToken(s.inputs[i]) + " is read before any step writes it");
  }
  const PlanBuffer *out = requireBuffer(s.output, at + "/output");
  checkSliceUse(at + "/output", index, *out);
  if (out->kind == BufferKind::Slice)
    loop_->writtenBases.insert(out->base);
  switch (s.kind) {
  case StepKind::Compute:
    checkCompute(at, s, *out);
    break;
  case StepKind::Collective: {
    if (!s.collective)
      fail(at, "a collective step names its \"collective\"");
    if (s.inputs.size() != 1)
      fail(at + "/inputs", "a collective step has one input buffer");
    checkTeamsWithin(at, s.teams, planDevices_);
    bool reduction = isReductionCollective(*s.collective);
    if (reduction != s.reduceOp.has_value())
      fail(at, reduction ? "a reduction collective names its \"reduce_op\""
                         : "only reduction collectives have a \"reduce_op\"");
    const PlanBuffer *in = bufferNamed(s.inputs[0]);
    if (s.collective == CollectiveType::AllToAllv &&
        (in->kind != BufferKind::Packed || out->kind != BufferKind::Unpacked ||
         in->consumer != out->consumer || in->expr != out->expr || in->operand != out->operand))
      fail(at, "an AllToAllv moves a packed buffer into the unpacked buffer of the same "
               "edge");
    checkRing(at, s);
    checkCounts(at, s, *in, *out);
    break;
  }
  case StepKind::Loop:
    break; // Checked above.
  case StepKind::Alias:
  case StepKind::Copy:
    if (s.inputs.size() != 1)
      fail(at + "/inputs",
           std::string("an ") + stepKindName(s.kind) + " step has one input buffer");
    if (s.kind == StepKind::Copy)
      checkCopy(at, s, *bufferNamed(s.inputs[0]), *out);
    break;
  }
  written_.insert(s.output);
}

void PlanVerifier::checkOutputsWritten() const {
  if (loop_ && loop_->last >= plan_.steps.size())
    fail(appendPointer("/steps", loop_->step) + "/body",
         "the loop's body of " + std::to_string(plan_.steps[loop_->step].body) +
             " step(s) runs past the last step");
  for (TensorNum t : plan_.fusion.outputs)
    if (plan_.fusion.producerExpr(t) && !written_.count("T" + std::to_string(t)))
      fail("/steps", "no step writes the fusion output T" + std::to_string(t));
}

std::optional<std::string> loopRangeViolation(const Plan &plan,
                                              const std::map<std::string, int64_t> &bindings) {
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const PlanStep &loop = plan.steps[i];
    if (loop.kind != StepKind::Loop)
      continue;
    auto lo = loop.lo.evaluate(bindings), hi = loop.hi.evaluate(bindings);
    std::string where = "loop step " + std::to_string(i) + " (" + loop.loopVar + ")";
    if (!lo || !hi)
      return where + ": its bounds " + loop.lo.str() + " to " + loop.hi.str() +
             " have no value at these sizes";
    if (*hi <= *lo)
      continue; // No iteration indexes anything.
    for (size_t j = i + 1; j <= i + loop.body && j < plan.steps.size(); ++j) {
      std::vector<std::string> used = plan.steps[j].inputs;
      used.push_back(plan.steps[j].output);
      for (const std::string &name : used) {
        const PlanBuffer *slice = plan.buffer(name);
        if (!slice || slice->kind != BufferKind::Slice)
          continue;
        const PlanBuffer *base = plan.buffer(slice->base);
        // A swizzled slice takes the slots (s + t) % D: all below D.
        auto swizzled = static_cast<int64_t>(slice->swizzleTeam.size());
        for (const PlanLocal &l : base->local) {
          auto extent = l.shape.at(*slice->axis).evaluate(bindings);
          if (!extent)
            return where + ": the extent of " + base->name + " has no value at these sizes";
          if (swizzled > *extent)
            return where + ": the swizzled slice " + name + " takes slots up to " +
                   std::to_string(swizzled - 1) + " of axis " + std::to_string(*slice->axis) +
                   " of " + base->name + " on device " + std::to_string(l.device) + " (extent " +
                   std::to_string(*extent) + ")";
          if (*lo < 0 || (!swizzled && *hi > *extent))
            return where + ": iteration " + loop.loopVar + " = " +
                   std::to_string(*lo < 0 ? *lo : *extent) + " indexes the slice " + name +
                   " outside axis " + std::to_string(*slice->axis) + " of " + base->name +
                   " on device " + std::to_string(l.device) + " (extent " +
                   std::to_string(*extent) + ")";
        }
      }
    }
  }
  return std::nullopt;
}

void verifyPlan(const Plan &plan) {
  PlanVerifier verifier(plan, [](const std::string &path, const std::string &message) {
    throwInputError("plan-invalid", message + atPointer(path), SourceLoc{});
  });
  for (size_t i = 0; i < plan.buffers.size(); ++i)
    verifier.checkBuffer(i);
  verifier.indexBuffers();
  for (size_t i = 0; i < plan.steps.size(); ++i)
    verifier.checkStep(i);
  verifier.checkOutputsWritten();
}

} // namespace shardcheck
