// Implied size constraints; see Constraints.h.
#include "ir/Constraints.h"

namespace shardcheck {

Extent derivedExtent(const Fusion &fusion, IdNum id) {
  const IterDomain &d = fusion.id(id);
  if (d.isBroadcast())
    return Extent::constant(1);
  const Transform *t = fusion.definition(id);
  if (t && t->kind == Transform::Kind::Split) {
    Extent in = derivedExtent(fusion, t->inputs[0]);
    bool isOuter = t->outputs[0] == id;
    return isOuter == t->innerSplit ? Extent::ceilDiv(in, t->factor) : t->factor;
  }
  if (t && t->kind == Transform::Kind::Merge)
    return Extent::mul(derivedExtent(fusion, t->inputs[0]), derivedExtent(fusion, t->inputs[1]));
  return d.extent;
}

std::vector<SizeConstraint> impliedConstraints(const Fusion &fusion, const TensorView &tv) {
  std::vector<SizeConstraint> r;
  for (IdNum id : tv.loop) {
    const IterDomain &d = fusion.id(id);
    if (!d.isDeviceParallel() || d.isBroadcast() || d.isReduction())
      continue;
    const Transform *split = fusion.definition(id);
    if (split && split->kind == Transform::Kind::Split && split->outputs[0] == id) {
      Extent in = derivedExtent(fusion, split->inputs[0]);
      if (!in.isConstant() || !split->factor.isConstant())
        r.push_back({SizeConstraint::Kind::Divisible, in, split->factor,
                     in.str() + " % " + split->factor.str() + " == 0"});
    }
    Extent extent = derivedExtent(fusion, id);
    if (tv.mesh && tv.mesh->axisOf(d.parallel) && !extent.isConstant()) {
      Extent meshExtent = Extent::constant(tv.mesh->extentOf(d.parallel));
      r.push_back({SizeConstraint::Kind::Equal, extent, meshExtent,
                   extent.str() + " == " + meshExtent.str()});
    }
  }
  return r;
}

} // namespace shardcheck
