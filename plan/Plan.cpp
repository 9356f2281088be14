// The plan's names and queries; see Plan.h.
//
// Does not: read, write or verify plans (PlanReader.cpp, PlanWriter.cpp,
// PlanVerifier.cpp).
#include "plan/Plan.h"

#include "ir/Scalars.h"
#include "ir/Swizzle1D.h"
#include "util/Checked.h"

#include <algorithm>
#include <set>

namespace shardcheck {

const char *planStatusName(PlanStatus s) {
  return nameIn(kPlanStatuses, s);
}

const char *bufferKindName(BufferKind k) {
  return nameIn(kBufferKinds, k);
}

const char *stepKindName(StepKind k) {
  return nameIn(kStepKinds, k);
}

const char *computeModeName(ComputeMode m) {
  return nameIn(kComputeModes, m);
}

int planFormatVersion(const Plan &plan) {
  bool loops = std::any_of(plan.steps.begin(), plan.steps.end(),
                           [](const PlanStep &s) { return s.kind == StepKind::Loop; }) ||
               std::any_of(plan.buffers.begin(), plan.buffers.end(),
                           [](const PlanBuffer &b) { return b.kind == BufferKind::Slice; });
  return loops ? kPlanLoopVersion : 1;
}

std::optional<int64_t> sliceWindowIndex(const PlanBuffer &slice, int64_t device,
                                        int64_t iteration) {
  const std::vector<int64_t> &team = slice.swizzleTeam;
  if (team.empty())
    return iteration;
  auto at = std::find(team.begin(), team.end(), device);
  if (at == team.end())
    return std::nullopt;
  return swizzledSlot(iteration, at - team.begin(), static_cast<int64_t>(team.size()));
}

std::vector<std::pair<int64_t, int64_t>> ringPairs(const PlanRing &ring, const PlanTeam &team,
                                                   int64_t iteration) {
  std::vector<std::pair<int64_t, int64_t>> pairs;
  auto d = static_cast<int64_t>(team.devices.size());
  for (int64_t t = 0; t < d; ++t)
    pairs.emplace_back(team.devices[t],
                       team.devices[ringSendPeer(iteration, t, d, ring.sendShift)]);
  return pairs;
}

bool PlanStep::verified() const {
  // A step that rests on no verdict (an expression without tensor operands)
  // was never checked: not verified, however vacuously all-proved.
  return !restsOn.empty() && std::all_of(restsOn.begin(), restsOn.end(), [](const PlanVerdict &v) {
    return v.status == PlanStatus::Proved;
  });
}

const PlanBuffer *Plan::buffer(const std::string &name) const {
  for (const PlanBuffer &b : buffers)
    if (b.name == name)
      return &b;
  return nullptr;
}

bool Plan::verified() const {
  return std::all_of(steps.begin(), steps.end(), [](const PlanStep &s) { return s.verified(); });
}

Extent localCount(const std::vector<Extent> &shape) {
  int64_t constant = 1;
  std::optional<Extent> symbolic;
  for (const Extent &e : shape) {
    if (auto c = e.asConstant())
      constant = mulOrThrow(constant, *c, "a local element count");
    else
      symbolic = symbolic ? Extent::mul(*symbolic, e) : e;
  }
  if (!symbolic)
    return Extent::constant(constant);
  return constant == 1 ? *symbolic : Extent::mul(*symbolic, Extent::constant(constant));
}

std::vector<std::string> planSymbols(const Plan &plan) {
  std::set<std::string> symbols;
  for (const auto &[n, id] : plan.fusion.ids) {
    id.extent.collectSymbols(symbols);
    if (id.expandedExtent)
      id.expandedExtent->collectSymbols(symbols);
  }
  for (const Transform &t : plan.fusion.transforms)
    t.factor.collectSymbols(symbols);
  for (const PlanStep &s : plan.steps) {
    s.lo.collectSymbols(symbols);
    s.hi.collectSymbols(symbols);
  }
  for (const PlanConstraint &c : plan.constraints) {
    c.lhs.collectSymbols(symbols);
    c.rhs.collectSymbols(symbols);
  }
  // Scalar operands and initial values may be symbols too (`T1 * i5`).
  for (const Expr &e : plan.fusion.exprs) {
    for (const Operand &o : e.inputs)
      if (auto symbol = o.tensor ? std::nullopt : scalarSymbolOf(o.scalar))
        symbols.insert(*symbol);
    if (auto symbol = scalarSymbolOf(e.attr("initial value")))
      symbols.insert(*symbol);
  }
  return {symbols.begin(), symbols.end()};
}

} // namespace shardcheck
