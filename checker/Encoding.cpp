// SMT encoding of the sharding semantics; see Encoding.h and
// docs/semantics.md. Every function here mirrors one paragraph of that page.
#include "checker/Encoding.h"

#include "ir/Constraints.h"
#include "util/Checked.h"

#include <algorithm>
#include <cstdlib>
#include <deque>

namespace shardcheck {

namespace {

const Transform *splitDefining(const Fusion &f, IdNum id) {
  const Transform *t = f.definition(id);
  return t && t->kind == Transform::Kind::Split ? t : nullptr;
}

/// The most cases a chunked split's divisor is chosen among: beyond it the
/// query would grow past what a proof is worth.
constexpr size_t kMaxChunkCases = 4096;

int64_t ceilDivConst(int64_t a, int64_t b) {
  return a / b + (a % b != 0);
}

/// The declared extent of `id` as a constant (a logical ID's printed one,
/// a split's outputs by the index-function formulas); nullopt if symbolic.
std::optional<int64_t> constantExtent(const Fusion &f, const std::set<IdNum> &logical, IdNum id) {
  const Transform *t = f.definition(id);
  if (logical.count(id) || !t)
    return f.id(id).extent.asConstant();
  if (t->kind != Transform::Kind::Split)
    return std::nullopt;
  auto in = constantExtent(f, logical, t->inputs[0]);
  auto factor = t->factor.asConstant();
  if (!in || !factor || *factor <= 0)
    return std::nullopt;
  bool isOuter = t->outputs[0] == id;
  return isOuter == t->innerSplit ? ceilDivConst(*in, *factor) : *factor;
}

} // namespace

Encoder::Encoder(smt::Context &ctx, const Fusion &fusion) : ctx_(ctx), fusion_(fusion) {}

smt::Int Encoder::symbol(const std::string &name) {
  auto it = userToCanonical_.find(name);
  if (it == userToCanonical_.end()) {
    std::string canonical = "s" + std::to_string(userToCanonical_.size());
    it = userToCanonical_.emplace(name, canonical).first;
    canonicalToUser_[canonical] = name;
    symbolConstraints_.push_back(1 <= ctx_.intVar(canonical));
  }
  return ctx_.intVar(it->second);
}

std::vector<std::string> Encoder::symbolVars() const {
  std::vector<std::string> r;
  for (const auto &[canonical, user] : canonicalToUser_)
    r.push_back(canonical);
  return r;
}

smt::Int Encoder::extentTerm(const Extent &e) {
  switch (e.kind()) {
  case Extent::Kind::Constant:
    return ctx_.intVal(*e.asConstant());
  case Extent::Kind::Symbol:
    return symbol(e.symbolName());
  case Extent::Kind::Add:
    return extentTerm(e.lhs()) + extentTerm(e.rhs());
  case Extent::Kind::Sub:
    return extentTerm(e.lhs()) - extentTerm(e.rhs());
  case Extent::Kind::Mul:
    return extentTerm(e.lhs()) * extentTerm(e.rhs());
  case Extent::Kind::Div:
    return ctx_.div(extentTerm(e.lhs()), extentTerm(e.rhs()));
  case Extent::Kind::Mod:
    return ctx_.mod(extentTerm(e.lhs()), extentTerm(e.rhs()));
  case Extent::Kind::CeilDiv: {
    smt::Int b = extentTerm(e.rhs());
    return ctx_.div(extentTerm(e.lhs()) + b - ctx_.intVal(1), b);
  }
  }
  throw Unsupported("unknown extent kind");
}

bool Encoder::isDataBroadcast(IdNum id) const {
  return fusion_.id(id).isBroadcast();
}

smt::Int Encoder::extent(IdNum id) {
  if (isDataBroadcast(id))
    return ctx_.intVal(1);
  auto cached = extentCache_.find(id);
  if (cached != extentCache_.end())
    return cached->second;
  smt::Int result = extentTerm(fusion_.id(id).extent);
  if (const Transform *t = fusion_.definition(id)) {
    if (t->kind == Transform::Kind::Split) {
      smt::Int in = extent(t->inputs[0]);
      smt::Int factor = extentTerm(t->factor);
      smt::Int ceil = ctx_.div(in + factor - ctx_.intVal(1), factor);
      bool isOuter = t->outputs[0] == id;
      result = (isOuter == t->innerSplit) ? ceil : factor;
    } else if (t->kind == Transform::Kind::Merge) {
      result = extent(t->inputs[0]) * extent(t->inputs[1]);
    }
  }
  extentCache_.emplace(id, result);
  return result;
}

ElementTerms Encoder::element(const TensorView &tv, const std::string &prefix, bool useRoot) {
  ElementTerms e;
  e.tensor = tv.number;
  const auto &base = useRoot ? tv.rootOrLogical() : tv.logical;
  std::vector<smt::Bool> ranges;
  for (IdNum id : base) {
    if (fusion_.id(id).isReduction())
      continue;
    std::string name = prefix + std::to_string(e.baseIds.size());
    smt::Int v = ctx_.intVar(name);
    if (isDataBroadcast(id))
      ranges.push_back(v == 0);
    else
      ranges.push_back(0 <= v && v < extent(id));
    e.baseIds.push_back(id);
    e.baseVars.push_back(v);
    e.baseNames.push_back(name);
    e.index.emplace(id, v);
  }
  e.inRange = ctx_.all(ranges);
  propagate(e, tv);
  return e;
}

void Encoder::propagate(ElementTerms &e, const TensorView &tv) {
  // Forward through every split and merge whose inputs are known, following
  // each known ID's uses (a walk over the fusion's whole transform list per
  // element made a 10^4-edge model quadratic).
  std::vector<IdNum> work;
  for (const auto &[id, term] : e.index)
    work.push_back(id);
  while (!work.empty()) {
    IdNum known = work.back();
    work.pop_back();
    for (size_t use : fusion_.id(known).uses) {
      const Transform &t = fusion_.transforms[use];
      if (t.kind != Transform::Kind::Split && t.kind != Transform::Kind::Merge)
        continue;
      bool ready = std::all_of(t.inputs.begin(), t.inputs.end(),
                               [&](IdNum in) { return e.index.count(in) > 0; });
      bool done = std::all_of(t.outputs.begin(), t.outputs.end(),
                              [&](IdNum out) { return e.index.count(out) > 0; });
      if (!ready || done)
        continue;
      if (t.kind == Transform::Kind::Split && t.chunked) {
        chunkedSplitIndices(e, tv, t);
      } else if (t.kind == Transform::Kind::Split) {
        smt::Int in = e.index.at(t.inputs[0]);
        smt::Int innerExtent = extent(t.outputs[1]);
        e.index.emplace(t.outputs[0],
                        isDataBroadcast(t.outputs[0]) ? ctx_.intVal(0) : ctx_.div(in, innerExtent));
        e.index.emplace(t.outputs[1],
                        isDataBroadcast(t.outputs[1]) ? ctx_.intVal(0) : ctx_.mod(in, innerExtent));
      } else {
        smt::Int m = e.index.at(t.inputs[0]) * extent(t.inputs[1]) + e.index.at(t.inputs[1]);
        e.index.emplace(t.outputs[0], isDataBroadcast(t.outputs[0]) ? ctx_.intVal(0) : m);
      }
      work.insert(work.end(), t.outputs.begin(), t.outputs.end());
    }
  }
}

std::vector<Encoder::LengthCase> Encoder::validLengthCases(const ElementTerms &e,
                                                           const TensorView &tv, IdNum id) {
  std::set<IdNum> logical(tv.logical.begin(), tv.logical.end());
  if (logical.count(id)) {
    auto extent = fusion_.id(id).extent.asConstant();
    if (!extent)
      throw Unsupported(tv.name() + " has a chunked split of the symbolic " + fusion_.id(id).str() +
                        ": chunked splits are modelled for constant extents only");
    return {{ctx_.boolVal(true), *extent}};
  }
  const Transform *t = fusion_.definition(id);
  auto factor = t ? t->factor.asConstant() : std::nullopt;
  if (!t || t->kind != Transform::Kind::Split || t->innerSplit || t->outputs[1] != id || !factor ||
      *factor <= 0)
    throw Unsupported(tv.name() + " has a chunked split of " + fusion_.id(id).str() +
                      ", which is not a logical ID or the inner output of an outer split by a "
                      "constant (docs/semantics.md, Chunked splits)");
  auto declaredInner = constantExtent(fusion_, logical, id);
  if (!declaredInner)
    throw Unsupported(tv.name() + " has a chunked split below the symbolic " +
                      fusion_.id(id).str());
  smt::Int outer = indexOf(e, t->outputs[0]);
  std::vector<LengthCase> cases;
  for (const auto &[cond, length] : validLengthCases(e, tv, t->inputs[0])) {
    int64_t chunk = t->chunked ? ceilDivConst(length, *factor) : *declaredInner;
    for (int64_t o = 0; o < *factor; ++o) {
      int64_t held = std::clamp(length - o * chunk, int64_t{0}, chunk);
      if (held > 0) // No element reaches an empty chunk.
        cases.push_back({cond && outer == ctx_.intVal(o), held});
      // Checked per case, so that a huge constant factor cannot loop long.
      if (cases.size() > kMaxChunkCases || held == 0)
        break;
    }
    if (cases.size() > kMaxChunkCases)
      throw Unsupported(tv.name() + "'s chunked splits have too many cases to encode");
  }
  return cases;
}

void Encoder::chunkedSplitIndices(ElementTerms &e, const TensorView &tv, const Transform &t) {
  auto factor = t.factor.asConstant();
  if (!factor || *factor <= 0)
    throw Unsupported(tv.name() + " has a chunked split by the symbolic " + t.factor.str());
  // The inner chunk per case, grouped by divisor: each branch divides by a
  // constant, so the query stays linear.
  std::map<int64_t, std::vector<smt::Bool>> byChunk;
  for (const auto &[cond, length] : validLengthCases(e, tv, t.inputs[0]))
    byChunk[ceilDivConst(length, *factor)].push_back(cond);
  smt::Int in = e.index.at(t.inputs[0]);
  smt::Int outer = ctx_.intVal(0), inner = in;
  for (const auto &[chunk, conds] : byChunk) {
    smt::Bool here = ctx_.any(conds);
    outer = ctx_.ite(here, ctx_.div(in, ctx_.intVal(chunk)), outer);
    inner = ctx_.ite(here, ctx_.mod(in, ctx_.intVal(chunk)), inner);
  }
  e.index.emplace(t.outputs[0], outer);
  e.index.emplace(t.outputs[1], inner);
}

smt::Int Encoder::indexOf(const ElementTerms &e, IdNum id) const {
  auto it = e.index.find(id);
  if (it == e.index.end())
    throw Unsupported("the index of " + fusion_.id(id).str() + " of T" + std::to_string(e.tensor) +
                      " is not determined by its logical domain through splits and merges");
  return it->second;
}

std::vector<smt::Int> Encoder::logicalIndices(const ElementTerms &e) {
  std::vector<smt::Int> r;
  for (IdNum id : dataLogicalIds(fusion_, fusion_.tensor(e.tensor)))
    r.push_back(indexOf(e, id));
  return r;
}

std::optional<Progression> progressionOf(const std::vector<int64_t> &d) {
  if (d.empty())
    return std::nullopt;
  auto step = d.size() > 1 ? checkedAdd(d[1], -d[0]) : std::optional<int64_t>(1);
  if (!step || *step == 0)
    return std::nullopt;
  for (size_t i = 1; i < d.size(); ++i)
    if (checkedAdd(d[i], -d[i - 1]) != step)
      return std::nullopt;
  return Progression{d[0], *step};
}

namespace {
/// i of devices[i] = base + step * i, for a device of the list.
smt::Int positionIn(smt::Context &ctx, const Progression &p, const smt::Int &d) {
  smt::Int offset = d + (-p.base);
  return p.step == 1 ? offset : ctx.div(offset, ctx.intVal(p.step));
}
} // namespace

smt::Bool isAmong(smt::Context &ctx, const std::vector<int64_t> &devices, const smt::Int &d) {
  if (auto p = progressionOf(devices)) {
    int64_t last = devices.back();
    int64_t lo = std::min(p->base, last), hi = std::max(p->base, last);
    smt::Bool inRange = lo <= d && d <= ctx.intVal(hi);
    if (p->step == 1 || p->step == -1)
      return inRange;
    return inRange && ctx.mod(d + (-p->base), ctx.intVal(std::abs(p->step))) == 0;
  }
  std::vector<smt::Bool> options;
  for (int64_t dev : devices)
    options.push_back(d == dev);
  return ctx.any(options);
}

smt::Int memberAt(smt::Context &ctx, const std::vector<int64_t> &members, const smt::Int &i) {
  auto n = static_cast<int64_t>(members.size());
  if (auto p = progressionOf(members))
    return ctx.ite(0 <= i && i < n, i * p->step + p->base, ctx.intVal(-1));
  smt::Int m = ctx.intVal(-1);
  for (int64_t r = n - 1; r >= 0; --r)
    m = ctx.ite(i == r, ctx.intVal(members[r]), m);
  return m;
}

smt::Int rankIn(smt::Context &ctx, const std::vector<int64_t> &members, const smt::Int &d) {
  auto n = static_cast<int64_t>(members.size());
  if (auto p = progressionOf(members))
    return ctx.ite(isAmong(ctx, members, d), positionIn(ctx, *p, d), ctx.intVal(-1));
  smt::Int rank = ctx.intVal(-1);
  for (int64_t r = n - 1; r >= 0; --r)
    rank = ctx.ite(d == members[r], ctx.intVal(r), rank);
  return rank;
}

// A mesh whose devices form an arithmetic progression is encoded by
// arithmetic on the device number, in terms whose size does not depend on the
// mesh size; only a permuted mesh needs a table with one entry per device.
smt::Bool Encoder::inMesh(const smt::Int &device, const DeviceMesh &mesh) {
  return isAmong(ctx_, mesh.devices(), device);
}

smt::Int Encoder::coordinate(const smt::Int &device, const DeviceMesh &mesh, ParallelType didType) {
  auto axis = mesh.axisOf(didType);
  if (!axis)
    throw Unsupported(std::string(parallelTypeName(didType)) + " has no axis in " + mesh.str());
  int64_t stride = 1; // Of the axis in the row-major device list.
  for (int k = mesh.rank() - 1; k > *axis; --k)
    stride *= mesh.shape()[k];
  const int64_t extent = mesh.shape()[*axis];
  if (auto p = progressionOf(mesh.devices()))
    return ctx_.mod(ctx_.div(positionIn(ctx_, *p, device), ctx_.intVal(stride)),
                    ctx_.intVal(extent));
  smt::Int c = ctx_.intVal(0);
  for (size_t flat = 0; flat < mesh.devices().size(); ++flat)
    c = ctx_.ite(device == mesh.devices()[flat],
                 ctx_.intVal(static_cast<int64_t>(flat) / stride % extent), c);
  return c;
}

std::vector<IdNum> Encoder::shardingIds(const TensorView &tv) const {
  std::vector<IdNum> r;
  for (IdNum id : tv.loop) {
    const IterDomain &d = fusion_.id(id);
    if (d.isDeviceParallel() && !d.isBroadcast() && !d.isReduction())
      r.push_back(id);
  }
  return r;
}

smt::Bool Encoder::holds(const TensorView &tv, const smt::Int &device, const ElementTerms &e) {
  if (!tv.mesh) {
    if (!shardingIds(tv).empty())
      throw Unsupported(tv.name() + " is parallelized on a device dimension but has no mesh, so "
                                    "its ownership is undefined");
    return ctx_.boolVal(true);
  }
  if (meshChecked_.insert(tv.number).second) {
    std::set<int64_t> distinct(tv.mesh->devices().begin(), tv.mesh->devices().end());
    if (distinct.size() != tv.mesh->devices().size())
      throw Unsupported(tv.mesh->str() + " of " + tv.name() +
                        " lists a device twice, so its ownership is undefined");
  }
  std::vector<smt::Bool> conds{inMesh(device, *tv.mesh)};
  for (IdNum id : shardingIds(tv))
    conds.push_back(indexOf(e, id) == coordinate(device, *tv.mesh, fusion_.id(id).parallel));
  return ctx_.all(conds);
}

std::vector<IdNum> Encoder::layoutIds(const TensorView &tv) const {
  if (tv.hasAllocation())
    return tv.allocation;
  auto sharding = shardingIds(tv);
  std::vector<IdNum> r;
  for (IdNum id : dataLogicalIds(fusion_, tv))
    r.push_back(localPartOf(fusion_, id, sharding));
  return r;
}

const Transform *deviceCutOf(const Fusion &fusion, IdNum id, const std::vector<IdNum> &sharding) {
  for (const Transform &t : fusion.transforms)
    if (t.kind == Transform::Kind::Split && t.inputs[0] == id &&
        std::count(sharding.begin(), sharding.end(), t.outputs[0]))
      return &t;
  return nullptr;
}

IdNum localPartOf(const Fusion &fusion, IdNum logical, const std::vector<IdNum> &sharding) {
  // Nested shardings cut the local part again: descend while a split's outer
  // output is a sharding ID. At most one step per transform: a cycle in
  // malformed input must not hold the walk.
  IdNum cur = logical;
  for (size_t step = 0; step < fusion.transforms.size(); ++step) {
    const Transform *cut = deviceCutOf(fusion, cur, sharding);
    if (!cut)
      break;
    cur = cut->outputs[1];
  }
  return cur;
}

namespace {

bool contributesToLayout(const IterDomain &d) {
  return !d.isDeviceParallel() && !d.isBroadcast() && !d.isReduction();
}

} // namespace

void Encoder::requireDenseLayout(const TensorView &tv) const {
  auto sharding = shardingIds(tv);
  std::set<IdNum> targets(sharding.begin(), sharding.end());
  for (IdNum id : layoutIds(tv))
    if (contributesToLayout(fusion_.id(id)))
      targets.insert(id);
  // Ancestors of the targets: the transforms that lead to them.
  std::set<IdNum> ancestors;
  std::deque<IdNum> work(targets.begin(), targets.end());
  while (!work.empty()) {
    IdNum id = work.front();
    work.pop_front();
    if (const Transform *t = fusion_.definition(id))
      for (IdNum in : t->inputs)
        if (ancestors.insert(in).second)
          work.push_back(in);
  }
  std::set<IdNum> frontier(tv.logical.begin(), tv.logical.end());
  bool changed = true;
  while (changed) {
    changed = false;
    for (const auto &t : fusion_.transforms) {
      bool relevant = std::any_of(t.outputs.begin(), t.outputs.end(),
                                  [&](IdNum o) { return targets.count(o) || ancestors.count(o); });
      bool ready = std::all_of(t.inputs.begin(), t.inputs.end(),
                               [&](IdNum in) { return frontier.count(in) > 0; });
      if (!relevant || !ready)
        continue;
      if (t.kind != Transform::Kind::Split && t.kind != Transform::Kind::Merge)
        throw Unsupported(tv.name() + "'s layout goes through a " + transformKindName(t.kind) +
                          ", which shardcheck does not model yet");
      if (t.kind == Transform::Kind::Split) {
        // A split that is not a device split must divide evenly, else the
        // buffer has padding holes (allowed, for constant extents, where the
        // caller's query is sound on them: allowPaddedSplits). With both
        // outputs in the layout, only a constant split known not to divide
        // is refused (a symbolic one's extents are the layout's as written).
        auto e = fusion_.id(t.inputs[0]).extent.asConstant();
        auto f = t.factor.asConstant();
        bool isDeviceSplit = fusion_.id(t.outputs[0]).isDeviceParallel();
        bool padded = paddedSplits_ && e && f && *f > 0;
        bool mayNotDivide = !e || !f || *f <= 0 || *e % *f != 0;
        if (targets.count(t.outputs[0]))
          mayNotDivide = e && f && *f > 0 && *e % *f != 0;
        if (!isDeviceSplit && !padded && mayNotDivide)
          throw Unsupported(tv.name() + "'s layout splits " + fusion_.id(t.inputs[0]).str() +
                            " by " + t.factor.str() + ", which may not divide evenly");
      }
      for (IdNum in : t.inputs)
        frontier.erase(in);
      for (IdNum out : t.outputs)
        frontier.insert(out);
      changed = true;
    }
  }
  std::set<IdNum> reached;
  for (IdNum id : frontier) {
    const IterDomain &d = fusion_.id(id);
    if (!d.isBroadcast() && !d.isReduction())
      reached.insert(id);
  }
  if (reached != targets)
    throw Unsupported("the local buffer layout of " + tv.name() +
                      " (its allocation domain and device splits) is not a dense "
                      "arrangement of its logical domain");
}

smt::Int Encoder::offset(const TensorView &tv, const ElementTerms &e) {
  requireDenseLayout(tv);
  smt::Int off = ctx_.intVal(0);
  for (IdNum id : layoutIds(tv))
    if (contributesToLayout(fusion_.id(id)))
      off = off * extent(id) + indexOf(e, id);
  return off;
}

smt::Int Encoder::count(const TensorView &tv) {
  requireDenseLayout(tv);
  smt::Int n = ctx_.intVal(1);
  for (IdNum id : layoutIds(tv))
    if (contributesToLayout(fusion_.id(id)))
      n = n * extent(id);
  return n;
}

smt::Bool Encoder::impliedConstraints(const TensorView &tv) {
  std::vector<smt::Bool> conds;
  for (const SizeConstraint &c : shardcheck::impliedConstraints(fusion_, tv)) {
    smt::Int lhs = extentTerm(c.lhs), rhs = extentTerm(c.rhs);
    conds.push_back(c.kind == SizeConstraint::Kind::Divisible ? ctx_.mod(lhs, rhs) == 0
                                                              : lhs == rhs);
    assumptions_.insert(c.text);
  }
  // Touch every extent of the tensor so its symbols exist (and are >= 1).
  for (const auto *dom : {&tv.root, &tv.logical, &tv.allocation, &tv.loop})
    for (IdNum id : *dom)
      (void)extent(id);
  return ctx_.all(conds);
}

smt::Bool Encoder::symbolsPositive() {
  return ctx_.all(symbolConstraints_);
}

std::string Encoder::constantUnevenness(const TensorView &tv) const {
  for (IdNum id : shardingIds(tv)) {
    const IterDomain &d = fusion_.id(id);
    const Transform *split = splitDefining(fusion_, id);
    if (split && split->outputs[0] == id) {
      auto e = fusion_.id(split->inputs[0]).extent.asConstant();
      auto f = split->factor.asConstant();
      if (e && f && *f > 0 && *e % *f != 0)
        return tv.name() + " is sharded unevenly: " + fusion_.id(split->inputs[0]).str() +
               " split by " + std::to_string(*f) + " leaves devices with different counts";
    }
    auto e = d.extent.asConstant();
    if (tv.mesh && tv.mesh->axisOf(d.parallel) && e && *e != tv.mesh->extentOf(d.parallel))
      return tv.name() + ": " + d.str() + " does not match the " +
             std::to_string(tv.mesh->extentOf(d.parallel)) + " devices of " + tv.mesh->str() +
             " along " + parallelTypeName(d.parallel);
  }
  return {};
}

smt::Bool Encoder::edgeExtentConstraints(const FusionEdge &edge) {
  std::vector<smt::Bool> conds;
  for (size_t i = 0; i < edge.map.consumerIds.size(); ++i) {
    const auto &p = edge.map.producerIds[i];
    IdNum c = edge.map.consumerIds[i];
    if (!p || isDataBroadcast(*p) || isDataBroadcast(c))
      continue;
    conds.push_back(extent(c) == extent(*p));
    const Extent &ce = fusion_.id(c).extent, &pe = fusion_.id(*p).extent;
    if (ce != pe && !(ce.isConstant() && pe.isConstant()))
      assumptions_.insert(ce.str() + " == " + pe.str());
  }
  return ctx_.all(conds);
}

} // namespace shardcheck
