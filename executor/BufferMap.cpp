// Which element each slot of each plan buffer holds; see BufferMap.h.
#include "executor/BufferMap.h"

#include <algorithm>

namespace shardcheck {

BufferMap::BufferMap(const Plan &plan, const FusionGraph &graph, const Bindings &symbols)
    : plan_(plan), graph_(graph), symbols_(symbols) {
  for (const auto &[t, tv] : plan.fusion.tensors)
    layouts_.emplace(t, TensorLayout::build(plan.fusion, t, symbols, plan.devices));
}

const TensorLayout &BufferMap::layout(TensorNum t) const {
  auto it = layouts_.find(t);
  SC_ASSERT(it != layouts_.end(), "no layout for T" + std::to_string(t));
  return it->second;
}

const FusionEdge &BufferMap::edge(size_t expr, size_t operand) const {
  for (const FusionEdge &e : graph_.edges())
    if (e.expr == expr && e.operandIndex == operand)
      return e;
  throwInputError("plan-invalid",
                  "the plan refers to operand " + std::to_string(operand) + " of expression " +
                      std::to_string(expr) + ", which is not a tensor edge",
                  plan_.fusion.loc);
}

int64_t BufferMap::neededElement(size_t expr, size_t operand, int64_t consumerElement) const {
  const FusionEdge &e = edge(expr, operand);
  const Fusion &f = plan_.fusion;
  if (e.map.unsupported)
    throwInputError("plan-invalid",
                    "edge T" + std::to_string(e.producer) + " -> T" + std::to_string(e.consumer) +
                        ": " + *e.map.unsupported,
                    f.exprs[expr].loc);
  const TensorView &consumer = f.tensor(e.consumer);
  std::vector<IdNum> rootData;
  for (IdNum id : consumer.rootOrLogical())
    if (!f.id(id).isReduction())
      rootData.push_back(id);
  std::vector<int64_t> root = layout(e.consumer).rootIndexOf(consumerElement);
  std::vector<IdNum> producerData = dataLogicalIds(f, f.tensor(e.producer));
  std::vector<int64_t> x(producerData.size(), 0);
  for (size_t q = 0; q < producerData.size(); ++q) {
    if (f.id(producerData[q]).isBroadcast())
      continue;
    auto c = e.map.consumerOf(producerData[q]);
    if (!c)
      continue; // Unmapped: a squeezed broadcast (index 0).
    if (f.id(*c).isReduction() && f.id(*c).extent.evaluate(symbols_) == 1)
      continue; // A reduction over one element: index 0, like a broadcast.
    if (f.id(*c).isReduction())
      throwInputError("plan-invalid",
                      "a view of T" + std::to_string(e.producer) +
                          " over a reducing edge has no single element per slot",
                      f.exprs[expr].loc);
    auto pos = std::find(rootData.begin(), rootData.end(), *c);
    SC_ASSERT(pos != rootData.end(), "a mapped consumer ID is a root data ID");
    x[q] = root[pos - rootData.begin()];
  }
  return layout(e.producer).elementAt(x);
}

int64_t BufferMap::reducedElement(size_t expr, size_t operand, int64_t producerElement) const {
  const FusionEdge &e = edge(expr, operand);
  const Fusion &f = plan_.fusion;
  const TensorView &consumer = f.tensor(e.consumer);
  if (consumer.hasRoot() && consumer.root != consumer.logical)
    throwInputError("unsupported-op",
                    "a reduction into T" + std::to_string(e.consumer) +
                        " whose root domain differs from its logical domain",
                    f.exprs[expr].loc);
  std::vector<IdNum> producerData = dataLogicalIds(f, f.tensor(e.producer));
  std::vector<int64_t> x = layout(e.producer).indexOf(producerElement);
  std::vector<int64_t> y;
  for (IdNum c : dataLogicalIds(f, consumer)) {
    auto q = e.map.producerOf(c);
    auto pos = q ? std::find(producerData.begin(), producerData.end(), *q) : producerData.end();
    bool kept = pos != producerData.end() && !f.id(*q).isBroadcast() && !f.id(c).isBroadcast();
    y.push_back(kept ? x[pos - producerData.begin()] : 0);
  }
  return layout(e.consumer).elementAt(y);
}

const PlanTeam *BufferMap::teamOf(const PlanBuffer &b, int64_t device) const {
  for (const PlanTeam &t : b.teams)
    if (std::count(t.devices.begin(), t.devices.end(), device) || (t.root && *t.root == device))
      return &t;
  return nullptr;
}

std::vector<int64_t> BufferMap::packedFor(const PlanBuffer &b, int64_t sender,
                                          int64_t receiver) const {
  const TensorLayout &consumer = layout(*b.consumer);
  const TensorLayout &producer = layout(b.tensor);
  std::vector<int64_t> out;
  for (int64_t y : consumer.slots(receiver)) {
    if (y == kNoElement)
      continue;
    int64_t x = neededElement(*b.expr, b.operand.value_or(0), y);
    if (producer.slotOf(sender, x) >= 0)
      out.push_back(x);
  }
  return out;
}

std::vector<std::vector<int64_t>> BufferMap::packCounts(const PlanBuffer &packed,
                                                        const PlanTeam &team) const {
  size_t n = team.devices.size();
  std::vector<std::vector<int64_t>> counts(n, std::vector<int64_t>(n, 0));
  for (size_t s = 0; s < n; ++s)
    for (size_t j = 0; j < n; ++j)
      counts[s][j] =
          static_cast<int64_t>(packedFor(packed, team.devices[s], team.devices[j]).size());
  return counts;
}

std::vector<int64_t> BufferMap::compute(const PlanBuffer &b, int64_t device) const {
  switch (b.kind) {
  case BufferKind::Tensor:
  case BufferKind::Slice: // The slice tensor's layout: the window it is.
    return layout(b.tensor).slots(device);
  case BufferKind::View: {
    std::vector<int64_t> out;
    for (int64_t y : layout(*b.consumer).slots(device))
      out.push_back(y == kNoElement ? kNoElement
                                    : neededElement(*b.expr, b.operand.value_or(0), y));
    return out;
  }
  case BufferKind::Gathered: {
    const PlanTeam *team = teamOf(b, device);
    std::vector<int64_t> out;
    if (!team)
      return out;
    for (int64_t member : team->devices) {
      const auto &slots = layout(b.tensor).slots(member);
      out.insert(out.end(), slots.begin(), slots.end());
    }
    return out;
  }
  case BufferKind::Packed:
  case BufferKind::Unpacked: {
    const PlanTeam *team = teamOf(b, device);
    std::vector<int64_t> out;
    if (!team)
      return out;
    for (int64_t other : team->devices) {
      auto part =
          b.kind == BufferKind::Packed ? packedFor(b, device, other) : packedFor(b, other, device);
      out.insert(out.end(), part.begin(), part.end());
    }
    return out;
  }
  case BufferKind::Partial: {
    const PlanTeam *team = teamOf(b, device);
    const TensorLayout &c = layout(b.tensor);
    if (!team || !std::count(team->devices.begin(), team->devices.end(), device))
      return {};
    if (b.collective == CollectiveType::Allreduce)
      return c.slots(device);
    if (isRootedCollective(*b.collective)) // Reduce: the root's slots.
      return team->root ? c.slots(*team->root) : std::vector<int64_t>{};
    std::vector<int64_t> out; // ReduceScatter
    for (int64_t member : team->devices) {
      const auto &slots = c.slots(member);
      out.insert(out.end(), slots.begin(), slots.end());
    }
    return out;
  }
  }
  return {};
}

const std::vector<int64_t> &BufferMap::elements(const PlanBuffer &buffer, int64_t device) const {
  auto key = std::make_pair(buffer.name, device);
  auto it = cache_.find(key);
  if (it == cache_.end())
    it = cache_.emplace(key, compute(buffer, device)).first;
  return it->second;
}

} // namespace shardcheck
