// The planner's sharding states; see ShardState.h.
#include "checker/ShardState.h"

#include "ir/FusionBuilder.h"

#include <algorithm>
#include <set>

namespace shardcheck {

std::string ShardState::key() const {
  std::string k = "[";
  for (size_t i = 0; i < axes.size(); ++i) {
    k += i ? " | " : "";
    k += reduced[i] ? "r:" : "";
    if (axes[i].empty())
      k += "-";
    for (size_t j = 0; j < axes[i].size(); ++j)
      k += (j ? " " : "") + std::string(parallelTypeShortName(axes[i][j]));
  }
  return k + (chunked ? "]c" : "]");
}

std::optional<size_t> ShardState::axisOf(ParallelType t) const {
  for (size_t i = 0; i < axes.size(); ++i)
    if (std::count(axes[i].begin(), axes[i].end(), t))
      return i;
  return std::nullopt;
}

std::vector<ParallelType> ShardState::reducedDids() const {
  std::vector<ParallelType> r;
  for (int i = 2; i >= 0; --i) {
    ParallelType t = deviceDimFromIndex(i);
    auto at = axisOf(t);
    if (at && reduced[*at])
      r.push_back(t);
  }
  return r;
}

bool ShardState::afterReduction() const {
  return std::count(reduced.begin(), reduced.end(), true) > 0;
}

std::vector<bool> ShardState::reducedBy(const ShardState &to) const {
  std::vector<bool> r(to.reduced.size());
  for (size_t i = 0; i < r.size(); ++i)
    r[i] = to.reduced[i] && !(i < reduced.size() && reduced[i]);
  return r;
}

namespace {

bool hasDidBelow(const Fusion &f, IdNum id) {
  const IterDomain &d = f.id(id);
  if (d.isDeviceParallel() && !d.isBroadcast())
    return true;
  for (size_t u : d.uses)
    for (IdNum out : f.transforms[u].outputs)
      if (hasDidBelow(f, out))
        return true;
  return false;
}

/// The DIDs splitting logical ID `id`, outermost first, or nullopt when its
/// sharding is not a chain of outer splits by mesh axis sizes.
std::optional<std::vector<ParallelType>> didChain(const Fusion &f, IdNum id, const DeviceMesh &mesh,
                                                  bool &chunked) {
  std::vector<ParallelType> chain;
  if (f.id(id).isBroadcast())
    return chain; // A DID on a broadcast shards nothing.
  for (IdNum cur = id;;) {
    const IterDomain &d = f.id(cur);
    if (d.isDeviceParallel()) {
      // A DID directly on an axis: its extent must be the mesh axis size.
      if (!d.uses.empty() || !mesh.axisOf(d.parallel) ||
          d.extent.asConstant() != mesh.extentOf(d.parallel))
        return std::nullopt;
      chain.push_back(d.parallel);
      return chain;
    }
    if (d.uses.empty())
      return chain;
    const Transform &t = f.transforms[d.uses.front()];
    bool didSplit = d.uses.size() == 1 && t.kind == Transform::Kind::Split &&
                    f.id(t.outputs[0]).isDeviceParallel();
    if (!didSplit)
      return hasDidBelow(f, cur) ? std::nullopt : std::optional(chain);
    const IterDomain &outer = f.id(t.outputs[0]);
    if (t.innerSplit || !mesh.axisOf(outer.parallel) || !outer.uses.empty() ||
        t.factor.asConstant() != mesh.extentOf(outer.parallel))
      return std::nullopt;
    // A chunked split is the plain one at the outermost level; below, the
    // state says so and addStateTensor rebuilds it.
    chunked = chunked || (t.chunked && !chain.empty());
    chain.push_back(outer.parallel);
    cur = t.outputs[1];
  }
}

} // namespace

std::optional<ShardState> readShardState(const Fusion &f, const TensorView &tv,
                                         const DeviceMesh &mesh) {
  ShardState s;
  std::set<ParallelType> seen;
  for (IdNum id : tv.logical) {
    bool reduced = f.id(id).isReduction();
    auto chain = reduced ? std::optional<std::vector<ParallelType>>(std::vector<ParallelType>{})
                         : didChain(f, id, mesh, s.chunked);
    if (!chain || (reduced && hasDidBelow(f, id)))
      return std::nullopt;
    for (ParallelType t : *chain)
      if (!seen.insert(t).second)
        return std::nullopt;
    s.axes.push_back(*chain);
    s.reduced.push_back(reduced);
  }
  return s;
}

TensorNum addStateTensor(Fusion &f, const TensorView &like, const ShardState &state,
                         const DeviceMesh &mesh, const std::vector<bool> &reducedEarlier) {
  FusionBuilder b(std::move(f));
  FusionBuilder::TensorSpec spec;
  spec.mesh = mesh;
  spec.dtype = like.dtype;
  for (size_t i = 0; i < like.logical.size(); ++i) {
    const IterDomain &orig = b.fusion().id(like.logical[i]);
    if (state.reduced[i]) {
      if (i >= reducedEarlier.size() || !reducedEarlier[i]) {
        IdNum r = b.reduction(orig.extent);
        spec.logical.push_back(r);
        spec.loop.push_back(r);
      }
      continue;
    }
    // An expanded broadcast keeps its expanded extent: the chained fusion's
    // shapes must be the edge's (the reference evaluates them).
    IdNum cur = orig.isBroadcast() ? b.broadcast(ParallelType::Serial, orig.expandedExtent)
                                   : b.iter(orig.extent);
    spec.logical.push_back(cur);
    // Chunked where an enclosing level does not divide (elsewhere the plain
    // split is the same); only constant extents have them (a symbolic axis
    // keeps plain splits, and the proofs decide).
    const std::optional<int64_t> constant =
        orig.isBroadcast() ? std::nullopt : orig.extent.asConstant();
    int64_t local = constant.value_or(0); // The part left to split, where constant.
    bool outerUneven = false;
    for (ParallelType t : state.axes[i]) {
      int64_t n = mesh.extentOf(t);
      auto split = state.chunked && constant && outerUneven
                       ? b.chunkedSplit(cur, n, t)
                       : b.split(cur, n, /*innerSplit=*/false, t);
      outerUneven = outerUneven || (constant && local % n != 0);
      local = (local + n - 1) / n;
      spec.loop.push_back(split.outer);
      cur = split.inner;
    }
    spec.loop.push_back(cur);
  }
  TensorNum t = b.tensor(std::move(spec));
  f = b.take();
  return t;
}

} // namespace shardcheck
