// DTensor redistribute -> IR; see DTensorToIr.h and docs/dtensor.md.
//
// Shardings (Layout) are computed from placements first and validated (each
// rejection located at the placement that causes it); tensors are then
// built with FusionBuilder from layouts, so the transition and every step of
// DTensor's sequence are spelled by one function (buildTensor). It does not
// check anything.
#include "dtensor/DTensorToIr.h"

#include "ir/ElementTypes.h"
#include "ir/FusionBuilder.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <sstream>

namespace shardcheck::dtensor {

namespace {

constexpr const char *kUnmapped = "dtensor-unmapped";

/// The IR sharding of one DTensor placement list.
struct Layout {
  std::map<int64_t, std::vector<int64_t>> order; ///< tensor dim -> mesh dims, outer first
  std::map<int64_t, std::string> partial;        ///< mesh dim -> reduce op (unreduced axis)
  std::set<int64_t> reduced; ///< mesh dims whose partial axis this tensor reduces
  std::optional<std::pair<int64_t, int64_t>> rankMajor; ///< (tensor dim, factor): packed
  /// (tensor dim, n): the dim's local part padded to n chunks in place
  /// (DTensor pads the new shard dim of a shard-dim change so).
  std::optional<std::pair<int64_t, int64_t>> padTo;
};

ParallelType didOfMeshDim(int meshRank, int64_t k) {
  static const ParallelType dids[] = {ParallelType::DIDx, ParallelType::DIDy, ParallelType::DIDz};
  return dids[meshRank - 1 - k];
}

[[noreturn]] void unmapped(const std::string &message, const SourceLoc &loc) {
  throwInputError(kUnmapped, message, loc);
}

/// DTensor's default order of the mesh dims sharding one tensor dim, in
/// placement order (mesh dim 0 first): a Shard nests inside the ones before
/// it; a `_StridedShard(d, split_factor=f)` nests inside the later ones,
/// whose sizes must multiply to f.
std::vector<int64_t> defaultOrder(const DTensorCase &c, const std::vector<Placement> &ps,
                                  std::vector<int64_t> dims) {
  if (dims.empty())
    return {};
  int64_t k = dims.front();
  std::vector<int64_t> rest(dims.begin() + 1, dims.end());
  std::vector<int64_t> inner = defaultOrder(c, ps, rest);
  const Placement &p = ps[k];
  if (!p.splitFactor) {
    inner.insert(inner.begin(), k);
    return inner;
  }
  int64_t product = 1;
  for (int64_t r : rest)
    product *= c.mesh.shape()[r];
  if (*p.splitFactor != product)
    unmapped(p.spelling + " on mesh dim " + std::to_string(k) +
                 ": its split factor is not the product of the sizes of the later mesh dims "
                 "sharding the same tensor dim (" +
                 std::to_string(product) + "); no nested split expresses it",
             p.loc);
  inner.push_back(k);
  return inner;
}

} // namespace

/// The mesh dims sharding each tensor dim, outermost first.
std::map<int64_t, std::vector<int64_t>> shardOrder(const DTensorCase &c, const Placements &ps) {
  std::map<int64_t, std::vector<int64_t>> byDim;
  bool strided = false;
  for (size_t k = 0; k < ps.perMeshDim.size(); ++k)
    if (ps.perMeshDim[k].isShard()) {
      byDim[ps.perMeshDim[k].dim].push_back(static_cast<int64_t>(k));
      strided |= ps.perMeshDim[k].splitFactor.has_value();
    }
  if (strided && !ps.shardOrder.empty())
    unmapped("give either _StridedShard placements or a shard_order, not both", ps.loc);
  std::map<int64_t, std::vector<int64_t>> order;
  for (auto &[d, dims] : byDim)
    order[d] = defaultOrder(c, ps.perMeshDim, dims);
  for (const ShardOrderEntry &e : ps.shardOrder) {
    auto it = order.find(e.tensorDim);
    std::vector<int64_t> sorted = e.meshDims;
    std::sort(sorted.begin(), sorted.end());
    if (it == order.end() || sorted != byDim[e.tensorDim])
      unmapped("shard_order of tensor dim " + std::to_string(e.tensorDim) +
                   " must list exactly the mesh dims that shard it",
               ps.loc);
    it->second = e.meshDims;
  }
  return order;
}

namespace {

/// Whether the mapping covers DTensor's reduce op `op`.
bool isMappedReduceOp(const std::string &op) {
  return op == "sum" || op == "avg" || op == "max" || op == "min";
}

Layout layoutOf(const DTensorCase &c, const Placements &ps) {
  int rank = c.mesh.rank();
  if (static_cast<int>(ps.perMeshDim.size()) != rank)
    throwInputError("dtensor-schema",
                    "one placement per mesh dim: the mesh has " + std::to_string(rank) + " dims, " +
                        std::to_string(ps.perMeshDim.size()) + " placements are given",
                    ps.loc);
  if (rank > 3)
    unmapped("a mesh of " + std::to_string(rank) +
                 " dims: the IR has three device parallel types (DIDx, DIDy, DIDz)",
             c.meshLoc);
  Layout l;
  for (int k = 0; k < rank; ++k) {
    const Placement &p = ps.perMeshDim[k];
    if (p.isShard() && (p.dim < 0 || p.dim >= static_cast<int64_t>(c.shape.size())))
      unmapped(p.spelling + ": the tensor has " + std::to_string(c.shape.size()) + " dims", p.loc);
    if (p.isPartial() && !isMappedReduceOp(p.reduceOp))
      unmapped(p.spelling + " has no faithful IR mapping: the mapping covers the reduce ops "
                            "sum, avg, max and min",
               p.loc);
    if (p.isPartial())
      l.partial[k] = p.reduceOp;
  }
  l.order = shardOrder(c, ps);
  return l;
}

/// The nvFuser reduction op and its identity for a DTensor reduce op (an
/// average reduces as a sum, then divides: averagedAfter).
std::pair<std::string, std::string> reductionOf(const std::string &reduceOp) {
  if (reduceOp == "max")
    return {"max", "float(-inf)"};
  if (reduceOp == "min")
    return {"min", "float(inf)"};
  return {"add", "float(0)"};
}

} // namespace

DataType dataTypeOf(const std::string &torchName) {
  static const std::map<std::string, DataType> names = {
      {"float32", DataType::Float},     {"float", DataType::Float},  {"float64", DataType::Double},
      {"double", DataType::Double},     {"float16", DataType::Half}, {"half", DataType::Half},
      {"bfloat16", DataType::BFloat16}, {"int64", DataType::Int64},  {"int32", DataType::Int32},
      {"int8", DataType::Int8},         {"uint8", DataType::UInt8},  {"bool", DataType::Bool}};
  auto it = names.find(torchName);
  return it == names.end() ? DataType::Float : it->second;
}

namespace {

/// Builds one tensor of the mapping. Its logical domain lists the partial
/// axes (unreduced on their DID, or reduced here) in mesh-dim order, then
/// the tensor's dims; each dim is split by the mesh dims sharding it,
/// outermost first. Nested splits need no allocation domain: the default
/// layout keeps each dim's innermost part, the buffer DTensor holds. A
/// packed (rank-major) dim gets an explicit one.
class TensorMaker {
public:
  TensorMaker(FusionBuilder &fb, const DTensorCase &c) : fb_(fb), c_(c) {}

  TensorNum make(const Layout &l, const SourceLoc &loc) {
    int rank = c_.mesh.rank();
    std::vector<IdNum> logical, loop, allocation;
    std::set<int64_t> partialDims;
    for (const auto &[k, _] : l.partial)
      partialDims.insert(k);
    partialDims.insert(l.reduced.begin(), l.reduced.end());
    for (int64_t k : partialDims) {
      int64_t n = c_.mesh.shape()[k];
      IdNum id = l.reduced.count(k) ? fb_.reduction(n) : fb_.iter(n, didOfMeshDim(rank, k));
      logical.push_back(id);
      loop.push_back(id);
    }
    const bool explicitAllocation = l.rankMajor.has_value() || l.padTo.has_value();
    std::vector<IdNum> packed;
    for (size_t d = 0; d < c_.shape.size(); ++d) {
      IdNum cur = fb_.iter(c_.shape[d]);
      logical.push_back(cur);
      std::vector<IdNum> leaves;
      auto it = l.order.find(static_cast<int64_t>(d));
      bool outerUneven = false;
      if (it != l.order.end()) {
        // Below a level that does not divide, DTensor chunks the rows a rank
        // holds: a chunked split (docs/semantics.md, Chunked splits).
        // Elsewhere the plain split is the same and nvFuser's own.
        int64_t extent = c_.shape[d];
        for (int64_t k : it->second) {
          int64_t n = c_.mesh.shape()[k];
          auto s = outerUneven ? fb_.chunkedSplit(cur, n, didOfMeshDim(rank, k))
                               : fb_.split(cur, n, /*innerSplit=*/false, didOfMeshDim(rank, k));
          outerUneven = outerUneven || extent % n != 0;
          extent = (extent + n - 1) / n;
          leaves.push_back(s.outer);
          cur = s.inner;
        }
      }
      if (l.rankMajor && l.rankMajor->first == static_cast<int64_t>(d)) {
        // DTensor packs the rows the rank holds into n chunks of its own
        // ceiling (the group's chunk): chunked below an uneven level too.
        auto s = outerUneven ? fb_.chunkedSplit(cur, l.rankMajor->second, ParallelType::Serial)
                             : fb_.split(cur, l.rankMajor->second, /*innerSplit=*/false);
        packed.push_back(s.outer);
        cur = s.inner;
      }
      if (l.padTo && l.padTo->first == static_cast<int64_t>(d)) {
        // n chunks of ceil(extent / n), in place: the padding is at the end.
        auto s = fb_.split(cur, l.padTo->second, /*innerSplit=*/false);
        leaves.push_back(s.outer);
        cur = s.inner;
      }
      leaves.push_back(cur);
      loop.insert(loop.end(), leaves.begin(), leaves.end());
      allocation.insert(allocation.end(), leaves.begin(), leaves.end());
    }
    loop.insert(loop.begin() + static_cast<long>(partialDims.size()), packed.begin(), packed.end());
    FusionBuilder::TensorSpec spec{{}, logical, loop, {}, c_.mesh, dataTypeOf(c_.dtype)};
    if (explicitAllocation) {
      // Packed chunks first (DTensor's flat buffer is rank-major), then each
      // dim's local part; the partial axes are DIDs (extent 1 locally).
      std::vector<IdNum> alloc(logical.begin(), logical.begin() + partialDims.size());
      alloc.insert(alloc.end(), packed.begin(), packed.end());
      alloc.insert(alloc.end(), allocation.begin(), allocation.end());
      spec.allocation = alloc;
    }
    TensorNum t = fb_.tensor(spec);
    fb_.fusion().tensor(t).loc = loc;
    fb_.fusion().tensor(t).domainsLoc = loc;
    return t;
  }

  size_t tensorDims() const { return c_.shape.size(); }
  int64_t meshDimSize(int64_t k) const { return c_.mesh.shape()[k]; }

private:
  FusionBuilder &fb_;
  const DTensorCase &c_;
};

void locateLastExpr(FusionBuilder &fb, const SourceLoc &loc) {
  fb.fusion().exprs.back().loc = loc;
}

/// A local copy `out = in`: a LoadStore, which the checker judges as any
/// copy but nvFuser would not lower to a collective, so no nvFuser verdict
/// (about a compiler that is not involved) is attached to DTensor's edges.
void copy(FusionBuilder &fb, TensorNum in, TensorNum out, const SourceLoc &loc) {
  fb.expr(OpKind::LoadStore, "Set", {in}, out);
  locateLastExpr(fb, loc);
}

/// `out = reduction(in)` over the partial axes `out` reduces, or a copy.
void transitionExpr(FusionBuilder &fb, TensorNum in, TensorNum out, const Layout &from,
                    const Layout &to, const SourceLoc &loc) {
  if (to.reduced.empty())
    return copy(fb, in, out, loc);
  auto [op, init] = reductionOf(from.partial.at(*to.reduced.begin()));
  fb.expr(OpKind::Reduction, "reduction", {in}, out, {},
          {{"op", op}, {"initial value", init}, {"allreduce", "false"}});
  locateLastExpr(fb, loc);
}

/// Shard -> Partial on one mesh dim: DTensor 2.11 refuses it (forward).
[[noreturn]] void rejectShardToPartial(const Placement &to, int64_t k) {
  unmapped(to.spelling + " on mesh dim " + std::to_string(k) +
               " from a Shard: DTensor refuses it too (its greedy planner takes Shard -> "
               "Partial in one step, and redistribute raises 'redistribute from S(d) to P "
               "not supported yet'); redistribute to Replicate() on that mesh dim first",
           to.loc);
}

/// A change of reduce op on one mesh dim: DTensor 2.11 issues no collective
/// for it (redistribute_local_tensor's "partial -> partial no op" branch
/// keeps every rank's value), so the value it stands for changes (avg to
/// sum: n times the mean); no value-preserving edge expresses it.
[[noreturn]] void rejectReduceOpChange(const Placement &to, int64_t k, const std::string &was) {
  unmapped("a change of reduce op on mesh dim " + std::to_string(k) + " (" + was + " to " +
               to.reduceOp +
               ") is not a redistribute: DTensor keeps every rank's local value, so the "
               "tensor's value changes",
           to.loc);
}

/// Whether DTensor plans the document with its graph-based search (a
/// `_StridedShard` or a shard order other than mesh-dim order), which
/// reaches a Partial from a Shard through Replicate.
bool plansByGraph(const DTensorCase &c) {
  for (const Placements *ps : {&c.source, &c.target}) {
    for (const Placement &p : ps->perMeshDim)
      if (p.splitFactor)
        return true;
    for (const ShardOrderEntry &e : ps->shardOrder)
      if (!std::is_sorted(e.meshDims.begin(), e.meshDims.end()))
        return true;
  }
  return false;
}

/// Whether mesh dim k shards a tensor dim in `l`.
bool shardsOn(const Layout &l, int64_t k) {
  for (const auto &[d, dims] : l.order)
    if (std::count(dims.begin(), dims.end(), k))
      return true;
  return false;
}

/// The layout a tensor has after `to`'s partial axes that `from` has and
/// `to` does not are reduced. Partial axes `to` has and `from` does not
/// (DTensor's Replicate -> Partial, a local rewrite of the values) are
/// kept in it: transitionTo builds them after the edge. Rejects a changed
/// reduce op, a new partial on a mesh dim `from` shards unless DTensor
/// goes through Replicate there (`viaReplicate`), and sum and avg partials
/// of an integer tensor reduced at once (below).
Layout afterReduction(const DTensorCase &c, const Layout &from, Layout to, const Placements &toPs,
                      bool viaReplicate = false) {
  for (const auto &[k, op] : to.partial) {
    auto it = from.partial.find(k);
    if (it == from.partial.end() && shardsOn(from, k) && !viaReplicate)
      rejectShardToPartial(toPs.perMeshDim[k], k);
    if (it != from.partial.end() && it->second != op)
      rejectReduceOpChange(toPs.perMeshDim[k], k, it->second);
  }
  std::set<std::string> ops, reduceOps; // By reduction: sum and avg reduce as one sum.
  for (const auto &[k, op] : from.partial)
    if (!to.partial.count(k)) {
      to.reduced.insert(k);
      ops.insert(reductionOf(op).first);
      reduceOps.insert(op);
    }
  if (ops.size() > 1)
    unmapped("partial mesh dims with different reduce ops reduced at once: no one reduction "
             "expresses it",
             toPs.loc);
  // The sum of truncated means is not the truncated mean of the sum: on
  // integers the value depends on the order DTensor reduces them in.
  if (reduceOps.size() > 1 && isIntegralDtype(dataTypeOf(c.dtype)))
    unmapped("sum and avg partials of an integer tensor (" + c.dtype +
                 ") reduced at once: NCCL truncates each average, so the value depends on the "
                 "order of the reductions; reduce them in separate redistributes",
             toPs.loc);
  return to;
}

/// The partial mesh dims of `to` that `from` does not have.
std::map<int64_t, std::string> newPartials(const Layout &from, const Layout &to) {
  std::map<int64_t, std::string> fresh;
  for (const auto &[k, op] : to.partial)
    if (!from.partial.count(k))
      fresh[k] = op;
  return fresh;
}

/// The product of the sizes of the mesh dims of `ops` whose reduce op is
/// `op` (1 when none).
int64_t sizeOfDimsWith(const TensorMaker &make, const std::map<int64_t, std::string> &ops,
                       const std::string &op) {
  int64_t product = 1;
  for (const auto &[k, o] : ops)
    if (o == op)
      product *= make.meshDimSize(k);
  return product;
}

/// `in` / `divisor` elementwise into a tensor sharded as `l` (a local edge),
/// or `in` itself when the divisor is 1: the division of a sum's partition
/// and of an average's reduction. On an integer dtype the IR's `/`
/// truncates, as NCCL's average of integers (a sum, then a division) does.
TensorNum divided(FusionBuilder &fb, TensorMaker &make, TensorNum in, const Layout &l,
                  int64_t divisor, const SourceLoc &loc) {
  if (divisor == 1)
    return in;
  TensorNum out = make.make(l, loc);
  fb.expr(OpKind::Binary, "/", {in}, out);
  fb.fusion().exprs.back().inputs.push_back(
      Operand::ofScalar("double(" + std::to_string(divisor) + ")"));
  locateLastExpr(fb, loc);
  return out;
}

/// An average's reduction: `sum` (sharded as `l`, `from`'s partial axes in
/// `l.reduced` reduced, an avg one as a sum) divided by the product of the
/// sizes of the avg mesh dims reduced, into `l` without the reduced axes:
/// Partial(avg)'s value is the mean of the ranks' values. `sum` itself
/// when no avg mesh dim is reduced.
TensorNum averagedAfter(FusionBuilder &fb, TensorMaker &make, TensorNum sum, const Layout &from,
                        Layout l, const SourceLoc &loc) {
  std::map<int64_t, std::string> reducedOps;
  for (int64_t k : l.reduced)
    reducedOps[k] = from.partial.at(k);
  l.reduced.clear();
  return divided(fb, make, sum, l, sizeOfDimsWith(make, reducedOps, "avg"), loc);
}

/// DTensor's Replicate -> Partial (Partial._partition_value): every rank
/// of the mesh dim keeps the replicated value, divided by the mesh dim's
/// size for a sum (avg, max and min keep it), so that reducing gives it
/// back. In the IR: `broadcast` of `in` (sharded as `to` without the new
/// partial axes) into the new unreduced axes, on their DIDs, then `/` by
/// the product of the sum dims' sizes. Both are local: each device writes
/// its own index of the new axis from the value it holds.
TensorNum partition(FusionBuilder &fb, TensorMaker &make, TensorNum in, const Layout &to,
                    const std::map<int64_t, std::string> &fresh, const SourceLoc &loc) {
  std::vector<bool> flags;
  for (const auto &[k, _] : to.partial)
    flags.push_back(fresh.count(k) > 0);
  flags.resize(flags.size() + make.tensorDims(), false);
  TensorNum spread = make.make(to, loc);
  fb.expr(OpKind::Broadcast, "broadcast", {in}, spread, flags);
  locateLastExpr(fb, loc);
  return divided(fb, make, spread, to, sizeOfDimsWith(make, fresh, "sum"), loc);
}

/// `in` (sharded as `from`) -> a tensor sharded as `to` (afterReduction's
/// result): the edge into `to` without its new partials (a copy or a
/// reduction, left out when nothing changes), then their partition.
TensorNum transitionTo(FusionBuilder &fb, TensorMaker &make, TensorNum in, const Layout &from,
                       const Layout &to, const SourceLoc &loc) {
  std::map<int64_t, std::string> fresh = newPartials(from, to);
  Layout moved = to;
  for (const auto &[k, _] : fresh)
    moved.partial.erase(k);
  TensorNum t = in;
  if (fresh.empty() || moved.order != from.order || moved.partial != from.partial ||
      !moved.reduced.empty() || from.rankMajor) {
    t = make.make(moved, loc);
    transitionExpr(fb, in, t, from, moved, loc);
    t = averagedAfter(fb, make, t, from, moved, loc);
  }
  if (fresh.empty())
    return t;
  Layout spread = to;
  spread.reduced.clear();
  return partition(fb, make, t, spread, fresh, loc);
}

Fusion transitionFusion(const DTensorCase &c) {
  FusionBuilder fb;
  fb.fusion().kind = BlockKind::Kernel;
  fb.fusion().loc = c.loc;
  Layout from = layoutOf(c, c.source);
  Layout to = afterReduction(c, from, layoutOf(c, c.target), c.target, plansByGraph(c));
  TensorMaker make(fb, c);
  TensorNum in = make.make(from, c.source.loc);
  transitionTo(fb, make, in, from, to, c.target.loc);
  return fb.take();
}

} // namespace

// --- DTensor's steps. ---

/// The devices of mesh dim k's group through `device`, in coordinate order.
std::vector<int64_t> groupAlong(const DeviceMesh &mesh, int64_t k, int64_t device) {
  std::vector<int64_t> coords = mesh.coordinates(device);
  std::vector<int64_t> group;
  for (int64_t i = 0; i < mesh.shape()[k]; ++i) {
    coords[k] = i;
    group.push_back(mesh.deviceAt(coords));
  }
  return group;
}

namespace {

/// The team of `coll`: the group of the mesh's first device. Every rank's
/// group must be its row along one mesh dim (the one the team spans), so
/// the team stands for every parallel group; that mesh dim need not be the
/// step's: a collective over the wrong groups is then refuted by the
/// checker, with the element it misplaces.
std::vector<int64_t> teamOf(const DTensorCase &c, const IssuedCollective &coll) {
  int64_t first = c.mesh.devices().front();
  auto it = std::find_if(coll.ranks.begin(), coll.ranks.end(),
                         [&](const RankCall &r) { return r.rank == first; });
  if (it == coll.ranks.end())
    throwInputError("dtensor-schema",
                    "the " + coll.kind + " lists no call of device " + std::to_string(first) +
                        ", the mesh's first",
                    coll.loc);
  std::optional<int64_t> axis;
  for (int64_t k = 0; k < c.mesh.rank(); ++k)
    if (it->group == groupAlong(c.mesh, k, first))
      axis = k;
  for (const RankCall &r : coll.ranks)
    if (!c.mesh.contains(r.rank) || !axis || r.group != groupAlong(c.mesh, *axis, r.rank))
      unmapped("the " + coll.kind + " of rank " + std::to_string(r.rank) +
                   " runs over a group that is not its row along one mesh dim shared by every "
                   "rank: not modelled",
               coll.loc);
  if (coll.ranks.size() != static_cast<size_t>(c.mesh.size()))
    unmapped("the " + coll.kind + " lists " + std::to_string(coll.ranks.size()) +
                 " ranks' calls; the mesh has " + std::to_string(c.mesh.size()) + " devices",
             coll.loc);
  return it->group;
}

} // namespace

/// The IR collective of a DTensor collective kind the mapping models.
std::optional<CollectiveType> collectiveOf(const std::string &kind) {
  static const std::map<std::string, CollectiveType> kinds = {
      {"all_gather", CollectiveType::Allgather},
      {"reduce_scatter", CollectiveType::ReduceScatter},
      {"all_reduce", CollectiveType::Allreduce},
      {"all_to_all", CollectiveType::AllToAll}};
  auto it = kinds.find(kind);
  return it == kinds.end() ? std::nullopt : std::optional(it->second);
}

namespace {

/// Whether the split of tensor dim d by mesh dim k divides in `l`: its level
/// and every level outside it divide (below an uneven level, a group's rows
/// need not divide even where the ceiling chunk does: 9 over 2 is 5 and 4).
bool evenAt(const DTensorCase &c, const Layout &l, int64_t d, int64_t k) {
  int64_t extent = c.shape[d];
  auto it = l.order.find(d);
  if (it == l.order.end())
    return true;
  for (int64_t m : it->second) {
    int64_t n = c.mesh.shape()[m];
    if (extent % n != 0)
      return false;
    if (m == k)
      return true;
    extent /= n;
  }
  return true;
}

bool innermostOf(const Layout &l, int64_t d, int64_t k) {
  auto it = l.order.find(d);
  return it != l.order.end() && !it->second.empty() && it->second.back() == k;
}

/// `l` with mesh dim k's shard of dim d removed.
Layout withoutShard(Layout l, int64_t d, int64_t k) {
  auto &dims = l.order[d];
  dims.erase(std::remove(dims.begin(), dims.end(), k), dims.end());
  if (dims.empty())
    l.order.erase(d);
  return l;
}

/// Ceiling of a / b, for positive b.
int64_t ceilDiv(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

/// The extents of `l`'s buffer on the device at `coords`, one per tensor
/// dim, as DTensor holds it: torch.chunk's sizes of the rows the rank holds
/// at every level (nested uneven ones too), except in the dims of `padded`,
/// which DTensor pads before a collective (`pad_tensor`) by the group's own
/// chunk: the innermost level to the ceiling of the rows the enclosing
/// levels leave the rank over n, or a packing (rank-major, padTo) to n such
/// chunks. With `uniform`, every level's ceiling chunk of the ceiling chunk
/// above it: the mapped tensor's slots (the same on every device).
std::vector<int64_t> localExtents(const DTensorCase &c, const Layout &l,
                                  const std::vector<int64_t> &coords,
                                  const std::set<int64_t> &padded, bool uniform = false) {
  std::vector<int64_t> extents;
  for (size_t d = 0; d < c.shape.size(); ++d) {
    int64_t extent = c.shape[d];
    const bool pad = uniform || padded.count(static_cast<int64_t>(d)) > 0;
    std::optional<int64_t> packing;
    for (const auto &p : {l.rankMajor, l.padTo})
      if (p && p->first == static_cast<int64_t>(d))
        packing = p->second;
    auto it = l.order.find(static_cast<int64_t>(d));
    const size_t levels = it == l.order.end() ? 0 : it->second.size();
    for (size_t j = 0; j < levels; ++j) {
      int64_t k = it->second[j], n = c.mesh.shape()[k], chunk = ceilDiv(extent, n);
      bool padHere = uniform || (pad && !packing && j + 1 == levels);
      extent = padHere ? chunk : std::clamp<int64_t>(extent - coords[k] * chunk, 0, chunk);
    }
    if (pad && packing)
      extent = *packing * ceilDiv(extent, *packing);
    extents.push_back(extent);
  }
  return extents;
}

/// A recorded shape's element count; -1 when it overflows (it then matches
/// no mapped buffer).
int64_t elementsOf(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t s : shape)
    if (__builtin_mul_overflow(n, s, &n))
      return -1;
  return n;
}

/// The element count of `l`'s buffer on `device` as DTensor holds it
/// (localExtents).
int64_t localCount(const DTensorCase &c, const Layout &l, int64_t device,
                   const std::set<int64_t> &padded = {}) {
  return elementsOf(localExtents(c, l, c.mesh.coordinates(device), padded));
}

/// Whether DTensor's buffer of `l`, padded in `padded`, is the mapped
/// tensor's on every device: no dim is sharded unevenly but the padded
/// ones, and no group's chunk is short of the uniform one.
bool paddedAsMapped(const DTensorCase &c, const Layout &l, const std::set<int64_t> &padded) {
  const int64_t mapped =
      elementsOf(localExtents(c, l, c.mesh.coordinates(c.mesh.devices().front()), {}, true));
  for (int64_t device : c.mesh.devices())
    if (localCount(c, l, device, padded) != mapped)
      return false;
  return true;
}

/// Whether DTensor's buffers of `l`, padded in `padded`, have one shape on
/// every member of each team of mesh dim k (the devices whose coordinates
/// differ in k only). Each is then, dim by dim, a prefix of the mapped
/// buffer's slots (the rows a rank holds sit at its first slots, and a
/// group's chunk is at most the uniform one), the same on every member; so
/// DTensor's collective on them (rank-major, as the mapped one) moves, once
/// unpadded, the elements the padded collective on the mapped buffers moves:
/// the mapped buffers only add padding at the same places on every member.
bool uniformAlong(const DTensorCase &c, const Layout &l, const std::set<int64_t> &padded,
                  int64_t k) {
  std::map<std::vector<int64_t>, std::vector<int64_t>> extentsOfTeam;
  for (int64_t device : c.mesh.devices()) {
    std::vector<int64_t> team = c.mesh.coordinates(device);
    std::vector<int64_t> extents = localExtents(c, l, team, padded);
    team[k] = 0;
    if (extentsOfTeam.emplace(team, extents).first->second != extents)
      return false;
  }
  return true;
}

/// Whether DTensor's collective along mesh dim k on `l`'s buffers (padded in
/// `pads`, `padded` when DTensor pads the step's own dim) is mapped as a
/// padded Communication: when its buffers are not the mapped ones (some dim
/// is sharded unevenly) but one size in each team (uniformAlong). Else a
/// padded step is not mapped (nullopt), and an unpadded one stays plain (the
/// checker does not judge equal-size collectives on uneven buffers).
std::optional<bool> paddedMapping(const DTensorCase &c, const Layout &l,
                                  const std::set<int64_t> &pads, bool padded, int64_t k) {
  if (paddedAsMapped(c, l, pads))
    return padded;
  if (uniformAlong(c, l, pads, k))
    return true;
  return padded ? std::nullopt : std::optional<bool>(false);
}

std::string countText(int64_t n) {
  return n < 0 ? "more than 2^63" : std::to_string(n);
}

/// Refuses a recorded collective whose buffers are not those of the mapping
/// (`in` and `out` element counts per rank): its verdict would be about
/// buffers DTensor did not use.
void requireRecordedCounts(const DTensorCase &c, const IssuedCollective &coll,
                           const std::function<std::pair<int64_t, int64_t>(int64_t)> &counts,
                           bool padded = false) {
  for (const RankCall &r : coll.ranks) {
    auto [in, out] = counts(r.rank);
    if (elementsOf(r.inputShape) != in || elementsOf(r.outputShape) != out)
      unmapped("the " + coll.kind + " of rank " + std::to_string(r.rank) + " moved " +
                   countText(elementsOf(r.inputShape)) + " elements in and " +
                   countText(elementsOf(r.outputShape)) + " out, but the mapped buffers hold " +
                   std::to_string(in) + " and " + std::to_string(out) +
                   (padded ? " (DTensor's padding: each shard padded to its group's chunk, "
                             "ceil(L/n) of the L rows the group holds)"
                           : "") +
                   ": the mapping does not model what DTensor did",
               coll.loc);
  }
}

/// Refuses a recorded collective one of whose groups passes buffers of
/// different sizes: no one collective of DTensor's does (it pads every
/// member of a group to one chunk), and the padded Communication stands for
/// DTensor's only where each group's buffers are one prefix of the mapped
/// ones (uniformAlong), which a group along another mesh dim than the
/// step's need not be.
void requireOneSizePerGroup(const IssuedCollective &coll) {
  std::map<std::vector<int64_t>, std::pair<int64_t, const RankCall *>> inOfGroup;
  for (const RankCall &r : coll.ranks) {
    auto [it, fresh] = inOfGroup.emplace(r.group, std::pair{elementsOf(r.inputShape), &r});
    const RankCall &first = *it->second.second;
    if (!fresh && (it->second.first != elementsOf(r.inputShape) ||
                   elementsOf(first.outputShape) != elementsOf(r.outputShape)))
      unmapped("the " + coll.kind + " of ranks " + std::to_string(first.rank) + " and " +
                   std::to_string(r.rank) + ", one group, passes buffers of different sizes (" +
                   countText(elementsOf(first.inputShape)) + " and " +
                   countText(elementsOf(r.inputShape)) + " elements in, " +
                   countText(elementsOf(first.outputShape)) + " and " +
                   countText(elementsOf(r.outputShape)) +
                   " out): not one collective, so not DTensor's",
               coll.loc);
  }
}

/// Builds DTensor's sequence, one step at a time.
class StepChain {
public:
  explicit StepChain(const DTensorCase &c) : c_(c), make_(fb_, c) {
    fb_.fusion().kind = BlockKind::HostIr;
    fb_.fusion().loc = c.issued->loc;
  }

  Fusion build() {
    Layout layout = layoutOf(c_, c_.source);
    std::vector<Placement> current = c_.source.perMeshDim;
    TensorNum t = make_.make(layout, c_.source.loc);
    for (const IssuedStep &s : c_.issued->steps) {
      ++stepNumber_;
      Layout next = stepLayout(layout, current, s);
      t = step(s, t, layout, next);
      next.reduced.clear();
      current[s.meshDim] = s.to;
      layout = next;
    }
    // DTensor's steps must end in the target's sharding: the data the last
    // step leaves is what the target's placements declare, else this edge
    // needs communication and says so.
    Layout target = afterReduction(c_, layout, layoutOf(c_, c_.target), c_.target);
    if (target.order != layout.order || target.partial != layout.partial || !target.reduced.empty())
      transitionTo(fb_, make_, t, layout, target, c_.target.loc);
    return fb_.take();
  }

private:
  Layout stepLayout(const Layout &from, const std::vector<Placement> &current,
                    const IssuedStep &s) const;
  TensorNum step(const IssuedStep &s, TensorNum in, const Layout &from, const Layout &to);
  std::optional<TensorNum> collectiveStep(const IssuedStep &s, const IssuedCollective &coll,
                                          TensorNum in, const Layout &from, const Layout &to);
  std::optional<TensorNum> gatherStep(const IssuedStep &s, const IssuedCollective &coll,
                                      TensorNum in, const Layout &from);
  std::optional<TensorNum> allToAllStep(const IssuedStep &s, const IssuedCollective &coll,
                                        TensorNum in, const Layout &from, const Layout &to);
  TensorNum reducedAsIssued(const IssuedStep &s, const IssuedCollective &coll, TensorNum reduced,
                            const Layout &from, const Layout &to);
  std::optional<bool> recordedChunks(const IssuedCollective &coll, int64_t k, const Layout &chunk,
                                     const std::set<int64_t> &pads, bool padded,
                                     bool gathers) const;
  TensorNum communication(CollectiveType type, TensorNum in, const Layout &out,
                          const IssuedCollective &coll, bool padded);
  TensorNum localSet(TensorNum in, const Layout &out, const SourceLoc &loc) {
    TensorNum t = make_.make(out, loc);
    copy(fb_, in, t, loc);
    return t;
  }

  const DTensorCase &c_;
  FusionBuilder fb_;
  TensorMaker make_;
  int stepNumber_ = -1; ///< The step being built, from 0.
};

/// The sharding after step `s`, as DTensor's local ops leave the data: a
/// shard the step removes leaves its dim's chain, a shard it adds nests
/// innermost (DTensor chunks the local tensor), a partial it reduces is
/// reduced. The step's `from` must be the current placement (its split
/// factor aside: DTensor 2.11 reports a _StridedShard as the Shard it is in
/// its shard order).
Layout StepChain::stepLayout(const Layout &from, const std::vector<Placement> &current,
                             const IssuedStep &s) const {
  int64_t k = s.meshDim;
  if (k < 0 || k >= c_.mesh.rank())
    throwInputError("dtensor-schema", "mesh dim " + std::to_string(k) + " out of range", s.loc);
  const Placement &was = current[k];
  if (was.kind != s.from.kind || (was.isShard() && was.dim != s.from.dim) ||
      (was.isPartial() && was.reduceOp != s.from.reduceOp))
    unmapped("step " + std::to_string(stepNumber_) + " starts mesh dim " + std::to_string(k) +
                 " from " + s.from.spelling + ", but the steps before leave it " + was.spelling,
             s.from.loc);
  Layout next = from;
  next.reduced.clear();
  next.rankMajor.reset();
  if (was.isShard())
    next = withoutShard(next, was.dim, k);
  if (s.to.isShard()) {
    if (s.to.dim < 0 || s.to.dim >= static_cast<int64_t>(c_.shape.size()))
      unmapped(s.to.spelling + ": the tensor has " + std::to_string(c_.shape.size()) + " dims",
               s.to.loc);
    next.order[s.to.dim].push_back(k);
  }
  if (s.to.isPartial() && was.isShard())
    rejectShardToPartial(s.to, k);
  if (s.to.isPartial() && !was.isPartial())
    next.partial[k] = s.to.reduceOp;
  if (s.to.isPartial() && was.isPartial() && s.to.reduceOp != was.reduceOp)
    rejectReduceOpChange(s.to, k, was.reduceOp);
  if (was.isPartial() && !s.to.isPartial()) {
    next.partial.erase(k);
    next.reduced.insert(k);
  }
  return next;
}

TensorNum StepChain::communication(CollectiveType type, TensorNum in, const Layout &out,
                                   const IssuedCollective &coll, bool padded) {
  TensorNum t = make_.make(out, coll.loc);
  fb_.expr(OpKind::Communication, collectiveTypeName(type), {in}, t);
  Expr &e = fb_.fusion().exprs.back();
  // DTensor's collective on its padded chunks (the mapped buffers' slots,
  // padding included); a reduce op other than a sum is named. An average
  // (NCCL's ncclAvg) is its sum here, divided after it (averagedAfter).
  if (padded)
    e.attrs.emplace_back(kPaddedAttr, "true");
  if (isReductionCollective(type) && (coll.reduceOp == "max" || coll.reduceOp == "min"))
    e.attrs.emplace_back(kCommunicationOpAttr, coll.reduceOp);
  e.loc = coll.loc;
  CommunicationInfo info;
  // Named by DTensor's step, so a verdict says which step it is about.
  info.number = stepNumber_;
  info.type = type;
  info.team = teamOf(c_, coll);
  info.backend = "DTensor"; // flat-buffer collectives: no nvFuser buffer rules

  e.communication = info;
  return t;
}

/// The collective DTensor issued for one step, between packed temporaries;
/// nullopt when this mapping cannot express it (the step is then a plain
/// edge).
std::optional<TensorNum> StepChain::collectiveStep(const IssuedStep &s,
                                                   const IssuedCollective &coll, TensorNum in,
                                                   const Layout &from, const Layout &to) {
  int64_t k = s.meshDim, n = c_.mesh.shape()[k];
  auto type = collectiveOf(coll.kind);
  if (!type)
    return std::nullopt;
  if (*type == CollectiveType::Allgather && s.from.isShard())
    return gatherStep(s, coll, in, from);
  if (*type == CollectiveType::Allreduce && s.from.isPartial() && isMappedReduceOp(coll.reduceOp) &&
      !s.to.isShard()) {
    requireRecordedCounts(c_, coll, [&](int64_t r) {
      return std::pair{localCount(c_, from, r), localCount(c_, to, r)};
    });
    bool padded = *paddedMapping(c_, to, {}, /*padded=*/false, k); // never nullopt unpadded
    TensorNum sum = communication(*type, in, to, coll, padded);
    return reducedAsIssued(s, coll, sum, from, to);
  }
  if (*type == CollectiveType::ReduceScatter && s.from.isPartial() && s.to.isShard() &&
      isMappedReduceOp(coll.reduceOp) && innermostOf(to, s.to.dim, k)) {
    // DTensor pads the scattered dim to n chunks (`_reduce_shard_tensor`)
    // and stacks them along dim 0: the packed buffer is rank-major with
    // ceil(L / n) per chunk; each rank receives its padded chunk.
    bool padded = !evenAt(c_, to, s.to.dim, k);
    Layout packed = withoutShard(from, s.to.dim, k);
    packed.order = withoutShard(to, s.to.dim, k).order;
    packed.rankMajor = {s.to.dim, n};
    std::optional<bool> mapped = recordedChunks(coll, k, to, {s.to.dim}, padded, false);
    if (!mapped)
      return std::nullopt;
    TensorNum pre = localSet(in, packed, coll.loc);
    TensorNum sum = communication(*type, pre, to, coll, *mapped);
    return reducedAsIssued(s, coll, sum, from, to);
  }
  if (*type == CollectiveType::AllToAll && s.from.isShard() && s.to.isShard())
    return allToAllStep(s, coll, in, from, to);
  return std::nullopt;
}

/// DTensor's reduction as issued, after its Communication `reduced` (the
/// last expression): the Communication states the partial's reduce op and
/// the issued one (the checker refutes it where they differ, with a
/// witness), then an issued average divides by n (averagedAfter), whatever
/// the partial's op: the step computes what DTensor did.
TensorNum StepChain::reducedAsIssued(const IssuedStep &s, const IssuedCollective &coll,
                                     TensorNum reduced, const Layout &from, const Layout &to) {
  Expr &e = fb_.fusion().exprs.back();
  e.attrs.emplace_back(kPartialOpAttr, s.from.reduceOp);
  e.attrs.emplace_back(kIssuedOpAttr, coll.reduceOp);
  Layout issued = from;
  issued.partial[s.meshDim] = coll.reduceOp;
  return averagedAfter(fb_, make_, reduced, issued, to, coll.loc);
}

/// DTensor's all_to_all of `Shard(a)` to `Shard(b)` on mesh dim k
/// (`_to_new_shard_dim`, CUDA: `shard_dim_alltoall`): a local copy packing
/// dim b rank-major into n chunks, the AllToAll into a buffer rank-major
/// along a. Where a or b does not divide, DTensor pads a to its chunk
/// ceil(L_a / n) and b to n chunks of ceil(L_b / n) first: the packed
/// buffers' slots, padding at the end of each chunk (as the tail DTensor
/// trims after it); the Communication is then padded. Plain (nullopt)
/// where a or b is not k's innermost shard, or where b is sharded by
/// another mesh dim and padded (DTensor pads it by a logical shape not
/// modelled here).
std::optional<TensorNum> StepChain::allToAllStep(const IssuedStep &s, const IssuedCollective &coll,
                                                 TensorNum in, const Layout &from,
                                                 const Layout &to) {
  int64_t k = s.meshDim, n = c_.mesh.shape()[k], a = s.from.dim, b = s.to.dim;
  if (!innermostOf(from, a, k) || !innermostOf(to, b, k))
    return std::nullopt;
  bool padded = !evenAt(c_, from, a, k) || !evenAt(c_, to, b, k);
  if (padded && from.order.count(b))
    return std::nullopt;
  Layout packedIn = from;
  packedIn.rankMajor = {b, n};
  Layout packedOut = to;
  packedOut.rankMajor = {a, n};
  std::set<int64_t> pads;
  if (padded)
    pads = {a, b};
  std::optional<bool> mappedIn = paddedMapping(c_, packedIn, pads, padded, k);
  std::optional<bool> mappedOut = paddedMapping(c_, packedOut, pads, padded, k);
  if (!mappedIn || !mappedOut)
    return std::nullopt;
  requireRecordedCounts(
      c_, coll,
      [&](int64_t r) {
        return std::pair{localCount(c_, packedIn, r, pads), localCount(c_, packedOut, r, pads)};
      },
      padded);
  TensorNum pre = localSet(in, packedIn, coll.loc);
  return communication(*collectiveOf(coll.kind), pre, packedOut, coll, *mappedIn || *mappedOut);
}

/// Whether a gathering (in: `chunk`'s buffer, out: n of them, n the size of
/// the step's mesh dim k) or scattering (in: n, out: one) collective of
/// DTensor's is mapped, and then whether as a padded Communication
/// (paddedMapping; nullopt: not mapped). The recorded counts must be
/// DTensor's buffers', padded in `pads` only (rejected, located, when not).
std::optional<bool> StepChain::recordedChunks(const IssuedCollective &coll, int64_t k,
                                              const Layout &chunk, const std::set<int64_t> &pads,
                                              bool padded, bool gathers) const {
  std::optional<bool> mapped = paddedMapping(c_, chunk, pads, padded, k);
  if (!mapped)
    return std::nullopt;
  int64_t n = c_.mesh.shape()[k];
  requireRecordedCounts(
      c_, coll,
      [&](int64_t r) {
        int64_t one = localCount(c_, chunk, r, pads);
        return gathers ? std::pair{one, n * one} : std::pair{n * one, one};
      },
      padded);
  requireOneSizePerGroup(coll);
  return mapped;
}

/// DTensor's all_gather of mesh dim k's shard of dim d (`Shard ->
/// Replicate`, or the CPU fallback of `Shard(d) -> Shard(b)`): each rank's
/// shard padded to the chunk ceil(L / n) (`_to_replicate_tensor`; the
/// fallback also pads dim b to n chunks, `_to_new_shard_dim`), gathered
/// rank-major; the unpad is the local copy after it.
std::optional<TensorNum> StepChain::gatherStep(const IssuedStep &s, const IssuedCollective &coll,
                                               TensorNum in, const Layout &from) {
  int64_t k = s.meshDim, n = c_.mesh.shape()[k], d = s.from.dim;
  if (!innermostOf(from, d, k))
    return std::nullopt;
  bool padded = !evenAt(c_, from, d, k);
  Layout sent = from, gathered = withoutShard(from, d, k);
  gathered.rankMajor = {d, n};
  if (s.to.isShard() && s.to.dim != d && c_.shape[s.to.dim] % n != 0) {
    int64_t b = s.to.dim;
    if (from.order.count(b))
      return std::nullopt; // DTensor pads by a logical shape not modelled here.
    sent.padTo = gathered.padTo = std::pair{b, n};
    padded = true;
  }
  std::set<int64_t> pads{d};
  if (sent.padTo)
    pads.insert(sent.padTo->first);
  std::optional<bool> mapped = recordedChunks(coll, k, sent, pads, padded, /*gathers=*/true);
  if (!mapped)
    return std::nullopt;
  if (sent.padTo)
    in = localSet(in, sent, coll.loc);
  return communication(CollectiveType::Allgather, in, gathered, coll, *mapped);
}

TensorNum StepChain::step(const IssuedStep &s, TensorNum in, const Layout &from, const Layout &to) {
  if (s.collectives.size() == 1) {
    const IssuedCollective &coll = c_.issued->collectives[s.collectives[0]];
    if (auto out = collectiveStep(s, coll, in, from, to)) {
      // DTensor's local rearrangement into the step's placement (a chunk of
      // a gathered dim, the unpacking of rank-major chunks).
      return localSet(*out, Layout{to.order, to.partial, {}, {}, {}}, s.loc);
    }
  }
  // A local step (Replicate -> Partial among them), or a collective this
  // mapping does not express: the step as a plain edge.
  return transitionTo(fb_, make_, in, from, to, s.loc);
}

} // namespace

Document dtensorToDocument(const DTensorCase &c) {
  Document doc;
  doc.file = c.file;
  doc.fusions.push_back(transitionFusion(c));
  if (c.issued && !c.issued->steps.empty())
    doc.fusions.push_back(StepChain(c).build());
  return doc;
}

} // namespace shardcheck::dtensor
