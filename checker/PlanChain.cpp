// Multi-step plans as fusions; see PlanChain.h.
#include "checker/PlanChain.h"

#include <algorithm>
#include <map>

namespace shardcheck {

std::vector<Expr> chainExprs(Fusion &f, const FusionEdge &edge,
                             const std::vector<ShardState> &intermediates) {
  const TensorView producer = f.tensor(edge.producer);
  const Expr original = f.exprs[edge.expr];
  std::vector<Expr> exprs;
  TensorNum prev = edge.producer;
  for (const ShardState &s : intermediates) {
    TensorNum t = addStateTensor(f, producer, s, *producer.mesh);
    // A LoadStore: shardcheck's own step, which nvFuser would not lower.
    Expr copy;
    copy.kind = OpKind::LoadStore;
    copy.op = "Set";
    copy.inputs = {Operand::ofTensor(prev)};
    copy.outputs = {t};
    copy.loc = original.loc;
    exprs.push_back(std::move(copy));
    prev = t;
  }
  Expr last = original;
  last.inputs[edge.operandIndex] = Operand::ofTensor(prev);
  exprs.push_back(std::move(last));
  return exprs;
}

std::vector<FusionEdge> appendChain(Fusion &f, const FusionEdge &edge,
                                    const std::vector<ShardState> &intermediates) {
  std::vector<Expr> exprs = chainExprs(f, edge, intermediates);
  std::vector<FusionEdge> edges;
  TensorNum in = edge.producer;
  for (size_t i = 0; i < exprs.size(); ++i) {
    size_t operand = i + 1 == exprs.size() ? edge.operandIndex : 0;
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
