// Both plans' bytes per rank; see PlanBytes.h.
//
// It does not decide anything: verdicts come in, figures go out.
#include "dtensor/PlanBytes.h"

#include "checker/CostModel.h"
#include "dtensor/DTensorPlan.h"
#include "dtensor/DTensorToIr.h"
#include "ir/Types.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace shardcheck::dtensor {

namespace {

/// Whether `device` moves data in a step lowered to `l`: a member of one of
/// its teams, or the sender of a SendRecv pair to another device.
bool takesPart(const Lowering &l, int64_t device) {
  for (const Team &t : l.teams) {
    if (std::count(t.devices.begin(), t.devices.end(), device) > 0)
      return true;
    for (const auto &[src, dst] : t.pairs)
      if (src == device && dst != device)
        return true;
  }
  return false;
}

/// Adds `bytes` to every device of `b` that takes part in `l`.
void charge(const Lowering &l, double bytes, PlanBytes &b) {
  for (auto &[device, total] : b.perRank)
    if (takesPart(l, device))
      total += bytes;
}

/// The planner's price of the single lowering of `v` (loweringBytesPerDevice),
/// except for a padded Allgather: it moves the members' padded buffers, n x
/// the producer's padded count (docs/semantics.md, Padded collectives),
/// where loweringBytesPerDevice prices the consumer's unpadded buffer.
std::optional<double> singleLoweringBytes(const Fusion &fusion, const EdgeVerdict &v) {
  const Lowering &l = v.lowering;
  if (l.padded && l.kind == CommKind::Allgather && !l.teams.empty()) {
    const TensorView &p = fusion.tensor(v.producer);
    auto state = p.mesh ? readShardState(fusion, p, *p.mesh) : std::nullopt;
    if (!state)
      return std::nullopt;
    Sizes sizes = sizesOf(fusion, p);
    auto n = static_cast<int64_t>(l.teams.front().devices.size());
    double in = localElements(sizes, *state, *p.mesh) * static_cast<double>(sizes.elementBytes);
    return collectiveBytes(CollectiveType::Allgather, n, in, static_cast<double>(n) * in);
  }
  FusionEdge edge;
  edge.producer = v.producer;
  edge.consumer = v.consumer;
  return loweringBytesPerDevice(fusion, edge, l);
}

std::string edgeText(const EdgeVerdict &v) {
  return "T" + std::to_string(v.producer) + " -> T" + std::to_string(v.consumer);
}

/// How the heading names one plan: its source, or why it has no figures.
std::string planText(const PlanBytes &b) {
  return "(" + b.source + (b.known() ? "" : ": " + b.unknownWhy) + ")";
}

std::string cellText(const PlanBytes &b, double bytes) {
  return b.known() ? bytesText(bytes) : "-";
}

} // namespace

double PlanBytes::total() const {
  double t = 0;
  for (const auto &[_, bytes] : perRank)
    t += bytes;
  return t;
}

double PlanBytes::most() const {
  double m = 0;
  for (const auto &[_, bytes] : perRank)
    m = std::max(m, bytes);
  return m;
}

PlanBytes shardcheckPlanBytes(const Fusion &fusion, const EdgeVerdict &v,
                              const std::vector<int64_t> &devices) {
  PlanBytes b;
  if (v.result != EdgeResult::Proved) {
    b.source = "no plan";
    // `unsupported` says it all; a lowering refuted or unknown is named.
    std::string what = hasLowering(v.result)
                           ? v.loweringText() + " " + edgeResultStatusName(v.result)
                           : v.loweringText();
    b.unknownWhy = edgeText(v) + " is " + what + (v.reason.empty() ? "" : ": " + v.reason);
    return b;
  }
  for (int64_t d : devices)
    b.perRank[d] = 0;
  if (hasProvedPlan(v)) {
    b.source = "multi-step plan of " + std::to_string(v.steps.size()) +
               (v.steps.size() == 1 ? " step" : " steps") + ", proved";
    for (const PlannedStep &step : v.steps)
      charge(step.lowering, step.networkBytes, b);
    return b;
  }
  b.source = v.loweringText() + " proved";
  std::optional<double> bytes = singleLoweringBytes(fusion, v);
  if (!bytes) {
    b.perRank.clear();
    b.unknownWhy = "the cost model does not read T" + std::to_string(v.consumer) + "'s sharding";
    return b;
  }
  charge(v.lowering, *bytes, b);
  return b;
}

PlanBytes dtensorPlanBytes(const DTensorCase &c) {
  PlanBytes b;
  ModelledPlan seq = reportedSequence(c, b.source);
  if (!seq.plan) {
    b.unknownWhy = seq.unknownWhy;
    return b;
  }
  for (int64_t d : c.mesh.devices())
    b.perRank[d] = 0;
  for (const auto &[rank, bytes] : bytesPerRank(*seq.plan, dataTypeSize(dataTypeOf(c.dtype))))
    b.perRank[rank] += bytes;
  return b;
}

BytesSideBySide bytesSideBySide(const DTensorCase &c, const Fusion &transition,
                                const std::vector<EdgeVerdict> &verdicts) {
  BytesSideBySide b;
  b.ranks = c.mesh.devices();
  b.dtensor = dtensorPlanBytes(c);
  b.shardcheck = transitionPlanBytes(transition, verdicts, b.ranks);
  return b;
}

PlanBytes transitionPlanBytes(const Fusion &fusion, const std::vector<EdgeVerdict> &verdicts,
                              const std::vector<int64_t> &devices) {
  PlanBytes sum;
  if (verdicts.empty()) {
    sum.source = "no plan";
    sum.unknownWhy = "the transition has no checked edge";
    return sum;
  }
  for (const EdgeVerdict &v : verdicts) {
    PlanBytes b = shardcheckPlanBytes(fusion, v, devices);
    if (!b.known())
      return b;
    if (sum.source.empty())
      sum.source = b.source;
    for (const auto &[device, bytes] : b.perRank)
      sum.perRank[device] += bytes;
  }
  if (verdicts.size() > 1)
    sum.source += ", then " + std::to_string(verdicts.size() - 1) + " local edge" +
                  (verdicts.size() > 2 ? "s" : "") + " proved";
  return sum;
}

Diagnostic bytesSideBySideNote(const BytesSideBySide &b, const SourceLoc &loc) {
  Diagnostic d{Severity::Note,
               "dtensor-bytes",
               "bytes per rank: DTensor's sequence " + planText(b.dtensor) +
                   " beside shardcheck's plan " + planText(b.shardcheck),
               loc,
               {}};
  for (int64_t rank : b.ranks) {
    auto of = [&](const PlanBytes &p) {
      auto it = p.perRank.find(rank);
      return cellText(p, it == p.perRank.end() ? 0 : it->second);
    };
    d.addNote("rank " + std::to_string(rank) + ": DTensor " + of(b.dtensor) + ", shardcheck " +
                  of(b.shardcheck),
              loc);
  }
  d.addNote("all ranks: DTensor " + cellText(b.dtensor, b.dtensor.total()) + ", shardcheck " +
                cellText(b.shardcheck, b.shardcheck.total()) +
                "; the most one rank moves: DTensor " + cellText(b.dtensor, b.dtensor.most()) +
                ", shardcheck " + cellText(b.shardcheck, b.shardcheck.most()),
            loc);
  return d;
}

std::string bytesText(double bytes) {
  char text[64];
  if (std::fabs(bytes - std::round(bytes)) < 1e-9)
    std::snprintf(text, sizeof text, "%.0f", bytes);
  else
    std::snprintf(text, sizeof text, "%.2f", bytes);
  return text;
}

} // namespace shardcheck::dtensor
