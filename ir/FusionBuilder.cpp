// Implementation of FusionBuilder; see FusionBuilder.h.
#include "ir/FusionBuilder.h"

namespace shardcheck {

IdNum FusionBuilder::id(IterType type, Extent extent, ParallelType parallel) {
  IterDomain d;
  d.number = nextId_++;
  d.iterType = type;
  d.extent = std::move(extent);
  d.parallel = parallel;
  return fusion_.addIterDomain(std::move(d)).number;
}

std::pair<IdNum, IdNum> FusionBuilder::split(IdNum in, Extent factor, bool innerSplit,
                                             ParallelType outerParallel) {
  const IterDomain src = fusion_.id(in);
  Extent rest = Extent::ceilDiv(src.extent, factor);
  IdNum outer = id(src.iterType, innerSplit ? rest : factor, outerParallel);
  IdNum inner = id(src.iterType, innerSplit ? factor : rest);
  Transform t;
  t.kind = Transform::Kind::Split;
  t.inputs = {in};
  t.outputs = {outer, inner};
  t.factor = std::move(factor);
  t.innerSplit = innerSplit;
  fusion_.addTransform(std::move(t));
  return {outer, inner};
}

IdNum FusionBuilder::merge(IdNum outer, IdNum inner) {
  const IterDomain a = fusion_.id(outer), b = fusion_.id(inner);
  IterType type = a.isBroadcast() && b.isBroadcast() ? IterType::Broadcast : IterType::Iteration;
  IdNum out = id(type, Extent::mul(a.extent, b.extent));
  Transform t;
  t.kind = Transform::Kind::Merge;
  t.inputs = {outer, inner};
  t.outputs = {out};
  fusion_.addTransform(std::move(t));
  return out;
}

TensorNum FusionBuilder::tensor(std::vector<IdNum> logical, std::optional<DeviceMesh> mesh,
                                DataType dtype, std::vector<IdNum> loop,
                                std::vector<IdNum> allocation, std::vector<IdNum> root) {
  TensorView tv;
  tv.number = nextTensor_++;
  tv.dtype = dtype;
  tv.loop = loop.empty() ? logical : std::move(loop);
  tv.logical = std::move(logical);
  tv.allocation = std::move(allocation);
  tv.root = std::move(root);
  tv.mesh = std::move(mesh);
  tv.hasTransformInfo = true;
  for (IdNum id : tv.allocationOrLogical())
    tv.contiguity.push_back(fusion_.id(id).isBroadcast() ? Contiguity::None : Contiguity::True);
  return fusion_.addTensor(std::move(tv)).number;
}

void FusionBuilder::expr(OpKind kind, std::string op, std::vector<TensorNum> inputs,
                         TensorNum output, std::vector<bool> flags,
                         std::vector<std::pair<std::string, std::string>> attrs) {
  Expr e;
  e.kind = kind;
  e.op = std::move(op);
  for (TensorNum t : inputs)
    e.inputs.push_back(Operand::ofTensor(t));
  e.outputs = {output};
  e.flags = std::move(flags);
  e.attrs = std::move(attrs);
  fusion_.addExpr(std::move(e));
}

} // namespace shardcheck
