// Two-step decompositions; see Decomposition.h.
#include "checker/Decomposition.h"

#include "checker/EdgeChecker.h"
#include "checker/Selection.h"

#include <set>

namespace shardcheck {

namespace {

/// Loop IDs of `p` carrying a DID type that `c` does not shard on, or empty
/// when `c` shards on a DID type `p` does not (not a pure drop).
std::vector<IdNum> droppedDids(const Fusion &f, const TensorView &p, const TensorView &c) {
  auto shardingTypes = [&](const TensorView &tv) {
    std::map<ParallelType, IdNum> r;
    for (IdNum id : tv.loop) {
      const IterDomain &d = f.id(id);
      if (d.isDeviceParallel() && !d.isBroadcast() && !d.isReduction())
        r.emplace(d.parallel, id);
    }
    return r;
  };
  auto ps = shardingTypes(p), cs = shardingTypes(c);
  std::vector<IdNum> dropped;
  for (const auto &[type, id] : ps)
    if (!cs.count(type))
      dropped.push_back(id);
  for (const auto &[type, id] : cs)
    if (!ps.count(type))
      return {};
  return dropped;
}

/// Every ID of a tensor's domains plus the IDs between them.
std::set<IdNum> idsOf(const Fusion &f, const TensorView &tv) {
  std::set<IdNum> ids;
  for (const auto *dom : {&tv.root, &tv.logical, &tv.allocation, &tv.loop})
    ids.insert(dom->begin(), dom->end());
  for (bool grew = true; grew;) {
    grew = false;
    for (const auto &t : f.transforms) {
      bool touches = false;
      for (IdNum x : t.inputs)
        touches = touches || ids.count(x);
      for (IdNum x : t.outputs)
        touches = touches || ids.count(x);
      if (!touches)
        continue;
      for (const auto *side : {&t.inputs, &t.outputs})
        for (IdNum x : *side)
          grew = ids.insert(x).second || grew;
    }
  }
  return ids;
}

/// Adds to `f` a copy of `tv` with fresh IDs in which `unshard` is Serial.
TensorNum addUnshardedCopy(Fusion &f, const TensorView &tv, IdNum unshard) {
  IdNum nextId = f.ids.rbegin()->first + 1;
  TensorNum nextTensor = f.tensors.rbegin()->first + 1;
  std::map<IdNum, IdNum> clone;
  std::set<IdNum> ids = idsOf(f, tv);
  for (IdNum id : ids) {
    IterDomain d = f.id(id);
    d.number = nextId++;
    if (id == unshard)
      d.parallel = ParallelType::Serial;
    clone[id] = d.number;
    f.addIterDomain(std::move(d));
  }
  std::vector<Transform> copies;
  for (const auto &t : f.transforms)
    if (ids.count(t.outputs.front())) {
      Transform u = t;
      for (auto *side : {&u.inputs, &u.outputs})
        for (IdNum &x : *side)
          x = clone.at(x);
      copies.push_back(std::move(u));
    }
  for (auto &u : copies)
    f.addTransform(std::move(u));
  TensorView copy = tv;
  copy.number = nextTensor;
  for (auto *dom : {&copy.root, &copy.logical, &copy.allocation, &copy.loop})
    for (IdNum &x : *dom)
      x = clone.at(x);
  copy.loc = {};
  copy.domainsLoc = {};
  f.addTensor(std::move(copy));
  return nextTensor;
}

DecompositionStep proveStep(const Fusion &f, const FusionEdge &e,
                            const std::vector<int64_t> &universe, const smt::SolverOptions &options,
                            smt::QueryCache *cache, smt::SolverStats *stats,
                            smt::SolverBackend *backend) {
  DecompositionStep step;
  Selection s = selectLowering(f, e, SelectionReading::Semantic);
  if (!s.lowering || s.lowering->kind == CommKind::None) {
    step.reason = s.reason.empty() ? "no collective proposed" : s.reason;
    return step;
  }
  step.lowering = *s.lowering;
  smt::Context ctx(options, cache, stats, backend);
  EdgeChecker ec(f, e, ctx, universe);
  Outcome o = proveWithPermuteFallback(ec, step.lowering);
  step.status = o.kind == Outcome::Kind::Proved    ? Status::Proved
                : o.kind == Outcome::Kind::Refuted ? Status::Refuted
                                                   : Status::Unknown;
  if (o.kind == Outcome::Kind::Refuted)
    step.reason = o.counterexample->message;
  else if (o.kind != Outcome::Kind::Proved)
    step.reason = o.reason;
  return step;
}

} // namespace

std::vector<DecompositionStep> decomposeEdge(const Fusion &fusion, const FusionEdge &edge,
                                             const std::vector<int64_t> &universe,
                                             const smt::SolverOptions &options,
                                             smt::QueryCache *cache, smt::SolverStats *stats,
                                             smt::SolverBackend *backend) {
  const TensorView &p = fusion.tensor(edge.producer), &c = fusion.tensor(edge.consumer);
  if (!p.mesh || !c.mesh || *p.mesh != *c.mesh || edge.map.unsupported)
    return {};
  std::vector<IdNum> dropped = droppedDids(fusion, p, c);
  if (dropped.size() != 2)
    return {};
  Fusion f = fusion;
  TensorNum mid = addUnshardedCopy(f, p, dropped[0]);
  Expr set;
  set.kind = OpKind::Set;
  set.op = "Set";
  set.inputs = {Operand::ofTensor(p.number)};
  set.outputs = {mid};
  size_t first = f.addExpr(std::move(set));
  Expr second = fusion.exprs[edge.expr];
  second.inputs[edge.operandIndex] = Operand::ofTensor(mid);
  size_t last = f.addExpr(std::move(second));
  FusionEdge e1{first, 0, p.number, mid, computeDomainMap(f, f.exprs[first], 0, mid)};
  FusionEdge e2{last, edge.operandIndex, mid, c.number,
                computeDomainMap(f, f.exprs[last], edge.operandIndex, c.number)};
  std::string name = "T" + std::to_string(mid) + " = " + p.name() + " without " +
                     parallelTypeShortName(f.id(dropped[0]).parallel);
  std::vector<DecompositionStep> steps{proveStep(f, e1, universe, options, cache, stats, backend),
                                       proveStep(f, e2, universe, options, cache, stats, backend)};
  for (auto &s : steps)
    s.intermediate = name;
  return steps;
}

} // namespace shardcheck
