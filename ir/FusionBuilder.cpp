// A builder for fusions made in code; see FusionBuilder.h.
#include "ir/FusionBuilder.h"

#include <algorithm>

namespace shardcheck {

FusionBuilder::FusionBuilder(Fusion fusion) : fusion_(std::move(fusion)) {
  if (!fusion_.ids.empty())
    nextId_ = fusion_.ids.rbegin()->first + 1;
  if (!fusion_.tensors.empty())
    nextTensor_ = fusion_.tensors.rbegin()->first + 1;
}

IdNum FusionBuilder::add(IterType type, Extent extent, ParallelType parallel) {
  IterDomain id;
  id.number = nextId_++;
  id.iterType = type;
  id.extent = std::move(extent);
  id.parallel = parallel;
  return fusion_.addIterDomain(std::move(id)).number;
}

IdNum FusionBuilder::iter(Extent extent, ParallelType parallel) {
  return add(IterType::Iteration, std::move(extent), parallel);
}

IdNum FusionBuilder::broadcast(ParallelType parallel, std::optional<Extent> expanded) {
  IdNum n = add(IterType::Broadcast, Extent::constant(1), parallel);
  fusion_.id(n).expandedExtent = std::move(expanded);
  return n;
}

IdNum FusionBuilder::reduction(Extent extent, ParallelType parallel) {
  return add(IterType::Reduction, std::move(extent), parallel);
}

FusionBuilder::SplitIds FusionBuilder::split(IdNum in, Extent factor, bool innerSplit,
                                             ParallelType outerParallel) {
  IterType type = fusion_.id(in).iterType;
  Extent rest = Extent::ceilDiv(fusion_.id(in).extent, factor);
  SplitIds ids;
  ids.outer = add(type, innerSplit ? rest : factor, outerParallel);
  ids.inner = add(type, innerSplit ? factor : rest, ParallelType::Serial);
  Transform t;
  t.kind = Transform::Kind::Split;
  t.inputs = {in};
  t.outputs = {ids.outer, ids.inner};
  t.factor = std::move(factor);
  t.innerSplit = innerSplit;
  fusion_.addTransform(std::move(t));
  return ids;
}

FusionBuilder::SplitIds FusionBuilder::chunkedSplit(IdNum in, int64_t factor,
                                                    ParallelType outerParallel) {
  SC_ASSERT(factor > 0, "a chunked split's factor must be positive");
  IdNum cur = in;
  for (const Transform *t = fusion_.definition(cur); t; t = fusion_.definition(cur)) {
    SC_ASSERT(t->kind == Transform::Kind::Split && !t->innerSplit && t->outputs[1] == cur &&
                  t->factor.isConstant(),
              "a chunked split's input must be an underived ID or an outer split's inner output, "
              "down to one, by constant factors");
    cur = t->inputs[0];
  }
  SC_ASSERT(fusion_.id(cur).extent.isConstant(), "a chunked split needs a constant extent");
  SplitIds ids = split(in, factor, /*innerSplit=*/false, outerParallel);
  fusion_.transforms[*fusion_.id(ids.outer).definition].chunked = true;
  return ids;
}

IdNum FusionBuilder::merge(IdNum outer, IdNum inner) {
  const auto &a = fusion_.id(outer);
  bool broadcastOnly = a.isBroadcast() && fusion_.id(inner).isBroadcast();
  IdNum out = add(broadcastOnly ? IterType::Broadcast : a.iterType,
                  Extent::mul(a.extent, fusion_.id(inner).extent), ParallelType::Serial);
  Transform t;
  t.kind = Transform::Kind::Merge;
  t.inputs = {outer, inner};
  t.outputs = {out};
  fusion_.addTransform(std::move(t));
  return out;
}

IdNum FusionBuilder::unsupportedTransform(Transform::Kind kind, IdNum in) {
  IdNum out = add(fusion_.id(in).iterType, fusion_.id(in).extent, ParallelType::Serial);
  Transform t;
  t.kind = kind;
  t.inputs = {in};
  t.outputs = {out};
  fusion_.addTransform(std::move(t));
  return out;
}

void FusionBuilder::parallelize(IdNum id, ParallelType parallel) {
  fusion_.id(id).parallel = parallel;
}

TensorNum FusionBuilder::tensor(TensorSpec spec) {
  TensorView tv;
  tv.number = nextTensor_++;
  tv.root = std::move(spec.root);
  tv.logical = std::move(spec.logical);
  tv.loop = spec.loop.empty() ? tv.logical : std::move(spec.loop);
  tv.allocation = std::move(spec.allocation);
  tv.mesh = std::move(spec.mesh);
  tv.dtype = spec.dtype;
  tv.hasTransformInfo = true;
  for (IdNum id : tv.allocationOrLogical())
    tv.contiguity.push_back(fusion_.id(id).isBroadcast() ? Contiguity::None : Contiguity::True);
  return fusion_.addTensor(std::move(tv)).number;
}

void FusionBuilder::expr(OpKind kind, std::string op, std::vector<TensorNum> ins, TensorNum out,
                         std::vector<bool> flags,
                         std::vector<std::pair<std::string, std::string>> attrs) {
  Expr e;
  e.kind = kind;
  e.op = std::move(op);
  e.attrs = std::move(attrs);
  for (TensorNum in : ins)
    e.inputs.push_back(Operand::ofTensor(in));
  e.outputs = {out};
  e.flags = std::move(flags);
  fusion_.addExpr(std::move(e));
  // Inputs: tensors used but never defined; outputs: defined but never used.
  auto &inputs = fusion_.inputs;
  auto &outputs = fusion_.outputs;
  for (TensorNum in : ins) {
    outputs.erase(std::remove(outputs.begin(), outputs.end(), in), outputs.end());
    bool defined = fusion_.producerExpr(in) != nullptr;
    if (!defined && std::find(inputs.begin(), inputs.end(), in) == inputs.end())
      inputs.push_back(in);
  }
  outputs.push_back(out);
}

FusionEdge FusionBuilder::edge(TensorNum producer, TensorNum consumer) const {
  DiagnosticEngine diags;
  auto graph = FusionGraph::build(fusion_, diags);
  SC_ASSERT(graph, "FusionBuilder made a fusion whose graph does not build");
  for (const auto &e : graph->edges())
    if (e.producer == producer && e.consumer == consumer)
      return e;
  SC_ASSERT(false, "no edge T" + std::to_string(producer) + " -> T" + std::to_string(consumer));
  return {};
}

} // namespace shardcheck
