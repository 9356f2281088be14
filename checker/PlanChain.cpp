// Multi-step plans as fusions; see PlanChain.h.
#include "checker/PlanChain.h"

#include <algorithm>
#include <map>
#include <set>

namespace shardcheck {

namespace {

/// A `LoadStore` copy `out = in`: shardcheck's own step, which nvFuser
/// would not lower.
Expr copyExpr(TensorNum in, TensorNum out, const SourceLoc &loc) {
  Expr copy;
  copy.kind = OpKind::LoadStore;
  copy.op = "Set";
  copy.inputs = {Operand::ofTensor(in)};
  copy.outputs = {out};
  copy.loc = loc;
  return copy;
}

/// Removes from `tv` the reduction IDs at the logical positions `drop`
/// marks: it becomes the output of a step that reduces only the others
/// (none: a copy's output), holding the same data axes (every use maps
/// those only).
void dropReductionIds(Fusion &f, TensorView &tv, const std::vector<bool> &drop) {
  std::set<IdNum> gone;
  for (size_t i = 0; i < tv.logical.size() && i < drop.size(); ++i)
    if (drop[i] && f.id(tv.logical[i]).isReduction())
      gone.insert(tv.logical[i]);
  // Contiguity has one entry per allocation (or logical) ID.
  if (tv.contiguity.size() == tv.allocationOrLogical().size()) {
    std::vector<Contiguity> kept;
    for (size_t i = 0; i < tv.contiguity.size(); ++i)
      if (!gone.count(tv.allocationOrLogical()[i]))
        kept.push_back(tv.contiguity[i]);
    tv.contiguity = std::move(kept);
  }
  auto without = [&](std::vector<IdNum> &ids) {
    ids.erase(std::remove_if(ids.begin(), ids.end(), [&](IdNum n) { return gone.count(n) > 0; }),
              ids.end());
  };
  without(tv.logical);
  without(tv.loop);
  without(tv.allocation);
}

/// The edge's own expression reading `in` and writing `out`.
Expr edgeExprInto(const Expr &original, const FusionEdge &edge, TensorNum in, TensorNum out) {
  Expr e = original;
  e.inputs[edge.operandIndex] = Operand::ofTensor(in);
  e.outputs = {out};
  return e;
}

bool any(const std::vector<bool> &v) {
  return std::count(v.begin(), v.end(), true) > 0;
}

} // namespace

std::vector<Expr> chainExprs(Fusion &f, const FusionEdge &edge,
                             const std::vector<ShardState> &intermediates) {
  const TensorView producer = f.tensor(edge.producer);
  const Expr original = f.exprs[edge.expr];
  std::vector<Expr> exprs;
  TensorNum prev = edge.producer;
  // The axes reduced so far (none in the producer).
  ShardState done{{}, std::vector<bool>(producer.logical.size(), false)};
  for (const ShardState &s : intermediates) {
    // A step that reduces axes is the edge's own expression over those
    // axes (the consumer's reduced axes, or a part of them when the
    // reduction is split); any other is a copy.
    bool reduces = any(done.reducedBy(s));
    TensorNum t = addStateTensor(f, producer, s, *producer.mesh, done.reduced);
    exprs.push_back(reduces ? edgeExprInto(original, edge, prev, t)
                            : copyExpr(prev, t, original.loc));
    done = s;
    prev = t;
  }
  TensorView &consumer = f.tensor(edge.consumer);
  std::vector<bool> left; // The consumer's reduced axes no step has reduced.
  for (size_t i = 0; i < consumer.logical.size(); ++i)
    left.push_back(f.id(consumer.logical[i]).isReduction() && !done.reduced[i]);
  if (!any(done.reduced) || any(left)) {
    // The last step is the edge's own expression (a copy, or a reduction
    // of the axes left), its consumer keeping the reduction IDs of those.
    dropReductionIds(f, consumer, done.reduced);
    exprs.push_back(edgeExprInto(original, edge, prev, edge.consumer));
    return exprs;
  }
  // Reduced earlier: a copy ends the chain, so the consumer keeps its data
  // axes and loses its reduction IDs.
  dropReductionIds(f, consumer, std::vector<bool>(consumer.logical.size(), true));
  exprs.push_back(copyExpr(prev, edge.consumer, original.loc));
  return exprs;
}

std::vector<FusionEdge> appendChain(Fusion &f, const FusionEdge &edge,
                                    const std::vector<ShardState> &intermediates) {
  std::vector<Expr> exprs = chainExprs(f, edge, intermediates);
  std::vector<FusionEdge> edges;
  TensorNum in = edge.producer;
  for (size_t i = 0; i < exprs.size(); ++i) {
    // The edge's own expression reads the chain at the edge's operand; a
    // copy at its only one.
    size_t operand = exprs[i].inputs.size() > edge.operandIndex &&
                             exprs[i].inputs[edge.operandIndex].tensor == in
                         ? edge.operandIndex
                         : 0;
    TensorNum out = exprs[i].outputs.front();
    size_t at = f.addExpr(std::move(exprs[i]));
    edges.push_back(
        FusionEdge{at, operand, in, out, computeDomainMap(f, f.exprs[at], operand, out)});
    in = out;
  }
  return edges;
}

std::vector<ShardState> intermediateStates(const std::vector<PlannedStep> &steps) {
  std::vector<ShardState> states;
  for (size_t s = 0; s + 1 < steps.size(); ++s)
    states.push_back(steps[s].state);
  return states;
}

namespace {

/// The verdict of one planned step, as the plan builder reads verdicts.
EdgeVerdict stepVerdict(const Fusion &f, const FusionEdge &e, size_t index,
                        const PlannedStep &step) {
  EdgeVerdict v;
  v.producer = e.producer;
  v.consumer = e.consumer;
  v.expr = e.expr;
  v.edge = index;
  v.exprName = f.exprs[e.expr].op;
  v.loc = f.exprs[e.expr].loc;
  v.lowering = step.lowering;
  // The planner keeps proved steps only; any other is not trusted.
  v.result = step.status == Status::Proved ? EdgeResult::Proved : EdgeResult::Unknown;
  v.assumptions = step.assumptions;
  return v;
}

} // namespace

std::optional<ChainedFusion> chainPlannedEdges(const Fusion &fusion, const FusionGraph &graph,
                                               const std::vector<EdgeVerdict> &verdicts,
                                               bool compilerLowerings) {
  auto chained = [&](const EdgeVerdict &v) {
    return hasProvedPlan(v) && !(compilerLowerings && v.compiler);
  };
  if (std::none_of(verdicts.begin(), verdicts.end(), chained))
    return std::nullopt;
  Fusion f = fusion;
  f.groups.clear(); // They index the old expressions.
  std::map<size_t, std::vector<Expr>> before;
  std::map<std::pair<TensorNum, TensorNum>, const PlannedStep *> stepOf;
  for (size_t i = 0; i < verdicts.size(); ++i) {
    if (!chained(verdicts[i]))
      continue;
    const FusionEdge &edge = graph.edges()[i];
    const auto &steps = verdicts[i].steps;
    std::vector<Expr> exprs = chainExprs(f, edge, intermediateStates(steps));
    TensorNum in = edge.producer;
    for (size_t s = 0; s < exprs.size(); ++s) {
      stepOf[{in, exprs[s].outputs.front()}] = &steps[s];
      in = exprs[s].outputs.front();
    }
    f.exprs[edge.expr] = exprs.back();
    exprs.pop_back();
    before[edge.expr] = std::move(exprs);
  }
  std::vector<Expr> exprs;
  std::vector<size_t> moved(f.exprs.size());
  for (size_t j = 0; j < f.exprs.size(); ++j) {
    for (Expr &e : before[j])
      exprs.push_back(std::move(e));
    moved[j] = exprs.size();
    exprs.push_back(f.exprs[j]);
  }
  f.exprs = std::move(exprs);
  DiagnosticEngine diags;
  auto g = FusionGraph::build(f, diags);
  SC_ASSERT(g.has_value(), "a chained fusion is a DAG in definition order");
  ChainedFusion r{std::move(f), std::move(*g), {}};
  for (size_t k = 0; k < r.graph.edges().size(); ++k) {
    const FusionEdge &e = r.graph.edges()[k];
    auto step = stepOf.find({e.producer, e.consumer});
    if (step != stepOf.end()) {
      r.verdicts.push_back(stepVerdict(r.fusion, e, k, *step->second));
      continue;
    }
    for (size_t i = 0; i < verdicts.size(); ++i) {
      const FusionEdge &old = graph.edges()[i];
      if (moved[old.expr] == e.expr && old.operandIndex == e.operandIndex &&
          old.producer == e.producer) {
        r.verdicts.push_back(verdicts[i]);
        r.verdicts.back().expr = e.expr;
        r.verdicts.back().edge = k;
        break;
      }
    }
    SC_ASSERT(r.verdicts.size() == k + 1, "every edge of a chained fusion has a verdict");
  }
  return r;
}

} // namespace shardcheck
