// Building a plan from a checked fusion; see PlanBuilder.h.
#include "checker/PlanBuilder.h"

#include "ir/ExprShape.h"

#include "checker/Encoding.h"
#include "checker/ExprChecker.h"

#include "ir/Constraints.h"
#include "ir/HostLoops.h"
#include "ir/RingPermute.h"
#include "util/Checked.h"
#include "util/Sha256.h"
#include "util/Version.h"

#include <algorithm>
#include <map>
#include <set>

namespace shardcheck {

namespace {

std::string tensorName(TensorNum t) {
  return "T" + std::to_string(t);
}

std::vector<IdNum> shardingIds(const Fusion &f, const TensorView &tv) {
  std::vector<IdNum> r;
  for (IdNum id : tv.loop.empty() ? tv.logical : tv.loop) {
    const IterDomain &d = f.id(id);
    if (d.isDeviceParallel() && !d.isBroadcast() && !d.isReduction())
      r.push_back(id);
  }
  return r;
}

/// The local buffer shape (docs/semantics.md, "Local buffer layout").
std::vector<Extent> localShape(const Fusion &f, const TensorView &tv) {
  std::vector<IdNum> layout;
  if (tv.hasAllocation()) {
    layout = tv.allocation;
  } else {
    std::vector<IdNum> sharding = shardingIds(f, tv);
    for (IdNum id : dataLogicalIds(f, tv))
      layout.push_back(localPartOf(f, id, sharding));
  }
  std::vector<Extent> shape;
  for (IdNum id : layout) {
    const IterDomain &d = f.id(id);
    bool trivial = d.isDeviceParallel() || d.isBroadcast() || d.isReduction();
    shape.push_back(trivial ? Extent::constant(1) : d.extent);
  }
  return shape;
}

/// Whether a DID-parallel ID derives from `id` (it would cut `id` again).
bool didBelow(const Fusion &f, IdNum id) {
  for (size_t u : f.id(id).uses)
    for (IdNum out : f.transforms[u].outputs)
      if (f.id(out).isDeviceParallel() || didBelow(f, out))
        return true;
  return false;
}

/// The elements `device` holds of `tv` when an uneven constant device split
/// leaves it fewer than its padded slots (docs/semantics.md, Padded
/// collectives): per logical axis, `clamp(n - c * ceilDiv(E, F), 0,
/// ceilDiv(E, F))` at the device's coordinate c of each outer split by F of
/// an ID of extent E holding n indices, down its nested device splits.
/// nullopt when every slot holds an element, and where this formula does not
/// apply (a symbolic extent, an inner device split, a device split below a
/// split that is not one).
std::optional<int64_t> heldOn(const Fusion &f, const TensorView &tv, int64_t device) {
  if (!tv.mesh)
    return std::nullopt;
  std::vector<IdNum> sharding = shardingIds(f, tv);
  int64_t held = 1;
  bool uneven = false;
  for (IdNum id : dataLogicalIds(f, tv)) {
    const IterDomain &d = f.id(id);
    if (d.isBroadcast() || d.isDeviceParallel())
      continue; // One index on every device.
    std::optional<int64_t> count = d.extent.asConstant(), extent = count;
    IdNum local = localPartOf(f, id, sharding);
    for (IdNum cur = id; cur != local;) {
      const Transform &t = *deviceCutOf(f, cur, sharding);
      auto factor = t.factor.asConstant();
      if (!count || !factor || *factor <= 0 || t.innerSplit)
        return std::nullopt;
      // A chunked split cuts the indices held (torch.chunk), a plain one its
      // declared extent; either way the next declared extent is the plain chunk.
      int64_t padded = (*extent + *factor - 1) / *factor;
      int64_t chunk = t.chunked ? (*count + *factor - 1) / *factor : padded;
      int64_t c = tv.mesh->coordinate(device, f.id(t.outputs[0]).parallel);
      uneven = uneven || *extent % *factor != 0 || chunk != padded;
      count = std::clamp<int64_t>(*count - c * chunk, 0, chunk);
      extent = padded;
      cur = t.outputs[1];
    }
    if (didBelow(f, local))
      return std::nullopt;
    auto product = count ? checkedMul(held, *count) : std::nullopt;
    if (!product)
      return std::nullopt;
    held = *product;
  }
  return uneven ? std::optional<int64_t>(held) : std::nullopt;
}

/// The global (reference) shape: logical data IDs, broadcasts 1, expanded
/// broadcasts their expanded extent.
std::vector<Extent> globalShape(const Fusion &f, const TensorView &tv) {
  std::vector<Extent> shape;
  for (IdNum id : dataLogicalIds(f, tv)) {
    const IterDomain &d = f.id(id);
    shape.push_back(d.expandedExtent  ? *d.expandedExtent
                    : d.isBroadcast() ? Extent::constant(1)
                                      : d.extent);
  }
  return shape;
}

std::vector<int64_t> fusionDevices(const Fusion &f, int64_t bound) {
  std::set<int64_t> all;
  for (const auto &[n, tv] : f.tensors)
    if (tv.mesh)
      all.insert(tv.mesh->devices().begin(), tv.mesh->devices().end());
  for (int64_t d = 0; d < bound; ++d)
    all.insert(d);
  if (all.empty())
    all.insert(0);
  return {all.begin(), all.end()};
}

class Builder {
public:
  Builder(const Fusion &f, const FusionGraph &g, const std::vector<EdgeVerdict> &verdicts,
          const PlanRequest &request)
      : f_(f), g_(g), verdicts_(verdicts), request_(request), sha_(sha256Hex(request.inputText)) {}

  Plan build();

private:
  /// The lowering an edge is planned with, and the verdict it rests on.
  struct Chosen {
    const FusionEdge *edge = nullptr;
    Lowering lowering;
    PlanVerdict verdict;
    bool compilerLowering = false; ///< The dump's own choice, not the checker's.
  };

  Chosen choose(size_t edgeIndex) const;
  /// A verdict about edge `edgeIndex`, its claim and status left to fill.
  PlanVerdict verdictAbout(size_t edgeIndex) const;
  /// The checker's own verdict on edge `edgeIndex` (a loop's read view).
  PlanVerdict checkerVerdict(size_t edgeIndex) const;
  std::vector<size_t> exprOrder() const;
  void addTensors();
  void addConstraints();
  void planExpr(size_t expr);
  /// Host loops (ir/HostLoops.h): the loop model of every looped statement,
  /// and each read or write view's buffer made a slice of its base.
  void addSlices();
  /// The statements `group` of one loop: a loop step, then their steps.
  void planLoop(const std::vector<size_t> &group);
  /// The plan's ring of the CollectivePermute of `c` (ir/RingPermute.h, ringShifts).
  PlanRing ringOf(const Chosen &c) const;
  /// Why the CollectivePermute `expr` is not planned: its ring (and with it
  /// the ring's loop claims) is not proved; nullopt otherwise.
  std::optional<std::string> unprovedRing(size_t expr) const;
  /// The loop claims a looped Communication's verdict carries.
  PlanVerdict loopVerdict(size_t edgeIndex, const HostLoop &loop) const;
  void planReduction(size_t expr, const std::vector<Chosen> &chosen);
  void planCopyLike(size_t expr, const Chosen &c);
  void planCompute(size_t expr, const std::vector<Chosen> &chosen);
  /// Steps moving the producer of `c` into buffer `target` by its lowering.
  void planCollective(const Chosen &c, const std::string &target);
  /// An Allgather of the producer of `c` into a new temporary ([n, local
  /// shape] per member); returns its name.
  std::string gatherInto(const Chosen &c, const std::string &target);

  std::vector<int64_t> devicesOf(TensorNum t) const {
    const TensorView &tv = f_.tensor(t);
    return tv.mesh ? tv.mesh->devices() : plan_.devices;
  }
  std::vector<PlanLocal> localsOf(TensorNum t) const {
    std::vector<PlanLocal> out;
    std::vector<Extent> shape = localShape(f_, f_.tensor(t));
    for (int64_t d : devicesOf(t))
      out.push_back(PlanLocal{d, shape, heldOn(f_, f_.tensor(t), d)});
    return out;
  }
  /// The elements a padded Allgather's temporary holds: what the members
  /// hold of `producer`; nullopt when no member's buffer has padding.
  std::optional<int64_t> gatheredHeld(TensorNum producer, const std::vector<int64_t> &members) {
    int64_t sum = 0;
    bool padded = false;
    for (const PlanLocal &l : plan_.buffer(tensorName(producer))->local) {
      if (!std::count(members.begin(), members.end(), l.device))
        continue;
      std::optional<int64_t> count = l.held ? l.held : localCount(l.shape).asConstant();
      if (!count)
        return std::nullopt;
      padded = padded || l.held;
      sum += *count;
    }
    return padded ? std::optional<int64_t>(sum) : std::nullopt;
  }
  std::optional<std::vector<Extent>> localOn(const std::string &buffer, int64_t device) const {
    for (const PlanLocal &l : plan_.buffer(buffer)->local)
      if (l.device == device)
        return l.shape;
    return std::nullopt;
  }
  std::string uniqueName(const std::string &base) const {
    std::string name = base;
    for (int i = 1; plan_.buffer(name); ++i)
      name = base + "." + std::to_string(i);
    return name;
  }
  PlanBuffer &addBuffer(PlanBuffer b) {
    plan_.buffers.push_back(std::move(b));
    return plan_.buffers.back();
  }
  void addStep(PlanStep s) { plan_.steps.push_back(std::move(s)); }
  PlanStep collectiveStep(CollectiveType collective, const std::vector<Team> &teams,
                          const std::string &in, const std::string &out,
                          const std::vector<PlanVerdict> &restsOn) const;

  const Fusion &f_;
  const FusionGraph &g_;
  const std::vector<EdgeVerdict> &verdicts_;
  const PlanRequest &request_;
  std::string sha_;
  Plan plan_;
  std::map<size_t, LoopedStatement> looped_; ///< By expression.
  std::vector<TensorNum> loopWritten_;
};

PlanStatus planStatus(EdgeResult r) {
  switch (r) {
  case EdgeResult::Proved:
    return PlanStatus::Proved;
  case EdgeResult::Refuted:
  case EdgeResult::Unsupported:
    return PlanStatus::Refuted;
  case EdgeResult::Unknown:
  case EdgeResult::Unmodelled:
    break;
  }
  return PlanStatus::Unknown;
}

PlanStatus planStatus(CompilerResult r) {
  switch (r) {
  case CompilerResult::Confirmed:
  case CompilerResult::Unnecessary:
    return PlanStatus::Proved;
  case CompilerResult::Refuted:
    return PlanStatus::Refuted;
  case CompilerResult::Unknown:
    break;
  }
  return PlanStatus::Unknown;
}

PlanVerdict Builder::verdictAbout(size_t edgeIndex) const {
  const FusionEdge &edge = g_.edges()[edgeIndex];
  PlanVerdict v;
  v.edge = tensorName(edge.producer) + " -> " + tensorName(edge.consumer);
  v.expr = edge.expr;
  v.source = "checker";
  v.checkerVersion = kShardcheckVersion;
  v.inputSha256 = sha_;
  return v;
}

PlanVerdict Builder::checkerVerdict(size_t edgeIndex) const {
  const EdgeVerdict &v = verdicts_[edgeIndex];
  PlanVerdict pv = verdictAbout(edgeIndex);
  pv.claim = v.lowering.str();
  pv.status = planStatus(v.result);
  if (v.result != EdgeResult::Proved)
    pv.detail = v.counterexample ? v.counterexample->message : v.reason;
  return pv;
}

Builder::Chosen Builder::choose(size_t edgeIndex) const {
  const FusionEdge &edge = g_.edges()[edgeIndex];
  const EdgeVerdict &v = verdicts_[edgeIndex];
  Chosen c;
  c.edge = &edge;
  c.verdict = verdictAbout(edgeIndex);
  bool useCompiler = request_.lowerings == PlanRequest::Lowerings::Compiler && v.compiler;
  const SourceLoc &loc = f_.exprs[edge.expr].loc;
  std::optional<Lowering> lowering;
  if (useCompiler) {
    c.compilerLowering = true;
    lowering = v.compiler->lowering;
    c.verdict.status = planStatus(v.compiler->result);
    c.verdict.source = "compiler: " + v.compiler->source;
    if (v.compiler->counterexample)
      c.verdict.detail = v.compiler->counterexample->message;
    else
      c.verdict.detail = v.compiler->reason;
  } else {
    if (!v.steps.empty())
      throw PlanError(
          c.verdict.edge +
              " has a multi-step plan: plan the fusion checker/PlanChain.h rewrites it to",
          loc);
    if (hasLowering(v.result))
      lowering = v.lowering;
    c.verdict.status = planStatus(v.result);
    c.verdict.source = "checker";
    if (v.result != EdgeResult::Proved)
      c.verdict.detail = v.counterexample ? v.counterexample->message : v.reason;
  }
  if (edge.map.unsupported)
    throw PlanError(c.verdict.edge + " has no element map (" + *edge.map.unsupported +
                        "); no plan can compute it",
                    loc);
  if (!lowering)
    throw PlanError(c.verdict.edge + " has no lowering (" +
                        (v.reason.empty() ? std::string(kNoLoweringName) : v.reason) +
                        "); no plan can move its data",
                    loc);
  c.lowering = std::move(*lowering);
  c.verdict.claim = c.lowering.str();
  return c;
}

/// Expressions in an order where every operand is produced first.
std::vector<size_t> Builder::exprOrder() const {
  if (!looped_.empty()) { // A host program: its own order, loops in place.
    std::vector<size_t> order;
    for (size_t e = 0; e < f_.exprs.size(); ++e)
      if (!f_.exprs[e].outputs.empty())
        order.push_back(e);
    return order;
  }
  std::map<TensorNum, size_t> position;
  for (size_t i = 0; i < g_.topologicalOrder().size(); ++i)
    position[g_.topologicalOrder()[i]] = i;
  std::vector<size_t> order;
  for (size_t e = 0; e < f_.exprs.size(); ++e)
    if (!f_.exprs[e].outputs.empty())
      order.push_back(e);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return position[f_.exprs[a].outputs[0]] < position[f_.exprs[b].outputs[0]];
  });
  return order;
}

void Builder::addTensors() {
  std::set<TensorNum> inputs(f_.inputs.begin(), f_.inputs.end());
  std::set<TensorNum> outputs(f_.outputs.begin(), f_.outputs.end());
  for (const auto &[t, tv] : f_.tensors) {
    PlanTensor pt;
    pt.tensor = t;
    bool loopWritten = std::find(loopWritten_.begin(), loopWritten_.end(), t) != loopWritten_.end();
    bool given = inputs.count(t) || (!f_.producerExpr(t) && !loopWritten);
    pt.role = outputs.count(t) && (f_.producerExpr(t) || inputs.count(t) || loopWritten) ? "output"
              : given                                                                    ? "input"
                      : "intermediate";
    pt.shape = globalShape(f_, tv);
    pt.sharding = f_.tensorStr(t);
    plan_.tensors.push_back(pt);
    PlanBuffer b;
    b.name = tensorName(t);
    b.kind = BufferKind::Tensor;
    b.tensor = t;
    b.dtype = tv.dtype;
    b.local = localsOf(t);
    addBuffer(std::move(b));
  }
}

void Builder::addConstraints() {
  std::set<std::string> seen;
  auto add = [&](PlanConstraint c) {
    if (seen.insert(c.text).second)
      plan_.constraints.push_back(std::move(c));
  };
  std::set<std::string> symbols;
  for (const auto &[n, id] : f_.ids)
    id.extent.collectSymbols(symbols);
  for (const Transform &t : f_.transforms)
    t.factor.collectSymbols(symbols);
  for (const std::string &s : symbols)
    add({PlanConstraint::Kind::Positive, Extent::symbol(s), Extent::constant(1), s + " >= 1"});
  for (const auto &[t, tv] : f_.tensors)
    for (const SizeConstraint &c : impliedConstraints(f_, tv))
      add(c);
  // A slice's extents are its base's, the sliced axis left out (the loop
  // claims assume so).
  for (const auto &[e, ls] : looped_) {
    std::vector<SliceView> views = ls.reads;
    if (ls.write)
      views.push_back(*ls.write);
    for (const SliceView &v : views) {
      std::vector<Extent> slice = globalShape(f_, f_.tensor(v.view));
      std::vector<Extent> base = globalShape(f_, f_.tensor(v.base));
      base.erase(base.begin() + static_cast<std::ptrdiff_t>(v.position));
      for (size_t k = 0; k < slice.size() && k < base.size(); ++k)
        if (slice[k].str() != base[k].str() && !(slice[k].isConstant() && base[k].isConstant()))
          add({PlanConstraint::Kind::Equal, slice[k], base[k],
               slice[k].str() + " == " + base[k].str()});
    }
  }
  for (const FusionEdge &e : g_.edges())
    for (size_t i = 0; i < e.map.consumerIds.size(); ++i) {
      const auto &p = e.map.producerIds[i];
      if (!p)
        continue;
      const IterDomain &cd = f_.id(e.map.consumerIds[i]), &pd = f_.id(*p);
      if (cd.isBroadcast() || pd.isBroadcast() || cd.extent == pd.extent ||
          (cd.extent.isConstant() && pd.extent.isConstant()))
        continue;
      add({PlanConstraint::Kind::Equal, cd.extent, pd.extent,
           cd.extent.str() + " == " + pd.extent.str()});
    }
}

PlanStep Builder::collectiveStep(CollectiveType collective, const std::vector<Team> &teams,
                                 const std::string &in, const std::string &out,
                                 const std::vector<PlanVerdict> &restsOn) const {
  PlanStep s;
  s.kind = StepKind::Collective;
  s.collective = collective;
  std::set<int64_t> devices;
  for (const Team &t : teams) {
    PlanTeam pt{t.devices, t.root, t.pairs};
    s.teams.push_back(pt);
    devices.insert(t.devices.begin(), t.devices.end());
    if (t.root)
      devices.insert(*t.root);
    for (const auto &[src, dst] : t.pairs)
      devices.insert({src, dst});
  }
  s.devices.assign(devices.begin(), devices.end());
  s.inputs = {in};
  s.output = out;
  for (int64_t d : s.devices) {
    PlanCount c{d, std::nullopt, std::nullopt};
    if (auto shape = localOn(in, d))
      c.in = localCount(*shape);
    if (auto shape = localOn(out, d))
      c.out = localCount(*shape);
    if (c.in || c.out)
      s.counts.push_back(c);
  }
  s.restsOn = restsOn;
  return s;
}

std::string Builder::gatherInto(const Chosen &c, const std::string &target) {
  PlanBuffer temp;
  temp.tensor = c.edge->producer;
  temp.dtype = f_.tensor(c.edge->producer).dtype;
  temp.name = uniqueName(target + ".gathered");
  temp.kind = BufferKind::Gathered;
  std::vector<Extent> producerShape = localShape(f_, f_.tensor(c.edge->producer));
  for (const Team &t : c.lowering.teams) {
    temp.teams.push_back(PlanTeam{t.devices, t.root, t.pairs});
    std::vector<Extent> shape{Extent::constant(static_cast<int64_t>(t.devices.size()))};
    shape.insert(shape.end(), producerShape.begin(), producerShape.end());
    std::optional<int64_t> held = gatheredHeld(c.edge->producer, t.devices);
    for (int64_t d : t.devices)
      temp.local.push_back(PlanLocal{d, shape, held});
  }
  std::string name = addBuffer(temp).name;
  addStep(collectiveStep(CollectiveType::Allgather, c.lowering.teams, tensorName(c.edge->producer),
                         name, {c.verdict}));
  return name;
}

void Builder::planCollective(const Chosen &c, const std::string &target) {
  const Lowering &l = c.lowering;
  std::string producer = tensorName(c.edge->producer);
  std::vector<PlanVerdict> rests{c.verdict};
  if (!l.localPermute) {
    addStep(collectiveStep(*collectiveOfCommKind(l.kind), l.teams, producer, target, rests));
    if (l.kind == CommKind::CollectivePermute)
      plan_.steps.back().ring = ringOf(c);
    return;
  }
  const PlanBuffer *targetBuffer = plan_.buffer(target);
  std::vector<Extent> producerShape = localShape(f_, f_.tensor(c.edge->producer));
  PlanBuffer temp;
  temp.tensor = c.edge->producer;
  temp.dtype = f_.tensor(c.edge->producer).dtype;
  for (const Team &t : l.teams)
    temp.teams.push_back(PlanTeam{t.devices, t.root, t.pairs});
  PlanStep copy;
  copy.kind = StepKind::Copy;
  copy.output = target;
  copy.expr = c.edge->expr;
  copy.operand = c.edge->operandIndex;
  copy.restsOn = rests;
  for (const PlanLocal &l2 : targetBuffer->local)
    copy.devices.push_back(l2.device);
  if (l.kind == CommKind::Allgather) {
    copy.inputs = {gatherInto(c, target)};
    addStep(copy);
    return;
  }
  if (l.kind != CommKind::AllToAll)
    throw PlanError(c.verdict.edge + ": " + l.str() + " has no plan form",
                    f_.exprs[c.edge->expr].loc);
  // AllToAll+permute: pack by destination, exchange, unpack.
  PlanBuffer packed = temp, unpacked = temp;
  packed.name = uniqueName(target + ".packed");
  packed.kind = BufferKind::Packed;
  unpacked.name = uniqueName(target + ".unpacked");
  unpacked.kind = BufferKind::Unpacked;
  packed.consumer = unpacked.consumer = c.edge->consumer;
  packed.expr = unpacked.expr = c.edge->expr;
  packed.operand = unpacked.operand = c.edge->operandIndex;
  for (const Team &t : l.teams)
    for (int64_t d : t.devices) {
      packed.local.push_back(PlanLocal{d, {localCount(producerShape)}});
      if (auto shape = localOn(target, d))
        unpacked.local.push_back(PlanLocal{d, {localCount(*shape)}});
    }
  std::string packedName = addBuffer(packed).name;
  std::string unpackedName = addBuffer(unpacked).name;
  PlanStep pack;
  pack.kind = StepKind::Copy;
  pack.inputs = {producer};
  pack.output = packedName;
  pack.restsOn = rests;
  for (const PlanLocal &pl : plan_.buffer(packedName)->local)
    pack.devices.push_back(pl.device);
  addStep(pack);
  addStep(collectiveStep(CollectiveType::AllToAllv, l.teams, packedName, unpackedName, rests));
  copy.inputs = {unpackedName};
  addStep(copy);
}

void Builder::planReduction(size_t expr, const std::vector<Chosen> &chosen) {
  const Expr &e = f_.exprs[expr];
  TensorNum out = e.outputs[0];
  const Chosen *reducing = nullptr;
  std::vector<PlanVerdict> rests;
  for (const Chosen &c : chosen) {
    rests.push_back(c.verdict);
    if (!isReductionComm(c.lowering.kind)) {
      if (c.lowering.kind != CommKind::None && c.lowering.kind != CommKind::Alias)
        throw PlanError(c.verdict.edge + " (" + c.lowering.str() +
                            ") feeds an expression whose reduction needs a collective; plans "
                            "do not combine the two yet",
                        e.loc);
      continue;
    }
    if (reducing && reducing->lowering.str() != c.lowering.str())
      throw PlanError("the operands of " + tensorName(out) + " need different reductions (" +
                          reducing->lowering.str() + ", " + c.lowering.str() + ")",
                      e.loc);
    reducing = &c;
  }
  const Lowering &l = reducing->lowering;
  std::optional<ReduceOp> op = reduceOpOf(e);
  if (!op)
    throw PlanError("the reduction defining " + tensorName(out) +
                        " has no operator a collective can apply",
                    e.loc);
  if (l.reduceInput == Lowering::ReduceInput::ProducerBuffer) {
    // The compiler's collective as its runtime runs it: on the producer's
    // own buffers, with no partial step and no initial value or bias.
    PlanStep coll = collectiveStep(*collectiveOfCommKind(l.kind), l.teams,
                                   tensorName(reducing->edge->producer), tensorName(out), rests);
    coll.reduceOp = op;
    addStep(coll);
    return;
  }
  // Partials: laid out as the consumer's buffer (Allreduce, Reduce) or as
  // the team's consumer buffers one after another (ReduceScatter).
  PlanBuffer partial;
  partial.name = uniqueName(tensorName(out) + ".partial");
  partial.kind = BufferKind::Partial;
  partial.tensor = out;
  partial.dtype = f_.tensor(out).dtype;
  partial.consumer = out;
  partial.expr = expr;
  partial.collective = collectiveOfCommKind(l.kind);
  std::vector<Extent> outShape = localShape(f_, f_.tensor(out));
  for (const Team &t : l.teams) {
    partial.teams.push_back(PlanTeam{t.devices, t.root, t.pairs});
    for (int64_t d : t.devices) {
      std::vector<Extent> shape = outShape;
      if (l.kind == CommKind::ReduceScatter)
        shape.insert(shape.begin(), Extent::constant(static_cast<int64_t>(t.devices.size())));
      partial.local.push_back(PlanLocal{d, shape});
    }
  }
  std::string partialName = addBuffer(partial).name;
  PlanStep compute;
  compute.kind = StepKind::Compute;
  compute.expr = expr;
  compute.mode = ComputeMode::Partial;
  for (const Operand &o : e.inputs)
    compute.inputs.push_back(o.tensor ? tensorName(*o.tensor) : "");
  compute.output = partialName;
  for (const PlanLocal &pl : plan_.buffer(partialName)->local)
    compute.devices.push_back(pl.device);
  compute.restsOn = rests;
  addStep(compute);
  PlanStep coll =
      collectiveStep(*collectiveOfCommKind(l.kind), l.teams, partialName, tensorName(out), rests);
  coll.reduceOp = op;
  addStep(coll);
  // The initial value of a reduction, or a linear's bias, is applied once,
  // after the partials are combined (for an identity initial value the
  // epilogue changes nothing).
  // A compiler's collective applies neither: its plan leaves the epilogue
  // out, so running it shows what the compiler's lowering computes.
  bool epilogue = ((e.kind == OpKind::Reduction && !e.attr("initial value").empty()) ||
                   (e.kind == OpKind::Linear && e.inputs.size() == 3)) &&
                  !reducing->compilerLowering;
  if (epilogue) {
    PlanStep epilogue = compute;
    epilogue.mode = ComputeMode::Epilogue;
    epilogue.output = tensorName(out);
    epilogue.devices = devicesOf(out);
    addStep(epilogue);
  }
}

void Builder::planCopyLike(size_t expr, const Chosen &c) {
  TensorNum out = f_.exprs[expr].outputs[0];
  switch (c.lowering.kind) {
  case CommKind::None:
    planCompute(expr, {c});
    return;
  case CommKind::Alias: {
    PlanStep s;
    s.kind = StepKind::Alias;
    s.expr = expr;
    s.devices = devicesOf(out);
    s.inputs = {tensorName(c.edge->producer)};
    s.output = tensorName(out);
    s.restsOn = {c.verdict};
    addStep(s);
    return;
  }
  default:
    planCollective(c, tensorName(out));
  }
}

void Builder::planCompute(size_t expr, const std::vector<Chosen> &chosen) {
  const Expr &e = f_.exprs[expr];
  TensorNum out = e.outputs[0];
  PlanStep compute;
  compute.kind = StepKind::Compute;
  compute.expr = expr;
  compute.mode = ComputeMode::Whole;
  compute.inputs.assign(e.inputs.size(), "");
  for (size_t i = 0; i < e.inputs.size(); ++i)
    if (e.inputs[i].tensor)
      compute.inputs[i] = tensorName(*e.inputs[i].tensor);
  for (const Chosen &c : chosen) {
    compute.restsOn.push_back(c.verdict);
    CommKind k = c.lowering.kind;
    if (k == CommKind::None || k == CommKind::Alias)
      continue; // The consumer reads the producer's own buffer.
    if (k == CommKind::Allgather && isReductionEdge(f_, *c.edge)) {
      // A consumer slot of a reduction needs many producer elements, so no
      // view lays them out per slot: the compute reads the gathered buffer.
      compute.inputs[c.edge->operandIndex] = gatherInto(c, tensorName(out));
      continue;
    }
    PlanBuffer view;
    view.name = uniqueName(tensorName(c.edge->producer) + "@" + tensorName(out));
    view.kind = BufferKind::View;
    view.tensor = c.edge->producer;
    view.dtype = f_.tensor(c.edge->producer).dtype;
    view.consumer = out;
    view.expr = expr;
    view.operand = c.edge->operandIndex;
    view.local = localsOf(out);
    std::string name = addBuffer(view).name;
    planCollective(c, name);
    compute.inputs[c.edge->operandIndex] = name;
  }
  compute.output = tensorName(out);
  compute.devices = devicesOf(out);
  addStep(compute);
}

void Builder::planExpr(size_t expr) {
  const Expr &e = f_.exprs[expr];
  if (e.outputs.size() != 1)
    throw PlanError(
        "expressions with " + std::to_string(e.outputs.size()) + " outputs are not planned", e.loc);
  std::vector<Chosen> chosen;
  for (size_t i = 0; i < g_.edges().size(); ++i)
    if (g_.edges()[i].expr == expr)
      chosen.push_back(choose(i));
  bool reduces = std::any_of(chosen.begin(), chosen.end(),
                             [](const Chosen &c) { return isReductionComm(c.lowering.kind); });
  if (reduces)
    planReduction(expr, chosen);
  else if (isCopyKind(e.kind) && chosen.size() == 1)
    planCopyLike(expr, chosen[0]);
  else
    planCompute(expr, chosen);
}

void Builder::addSlices() {
  for (const auto &[e, ls] : looped_) {
    std::vector<SliceView> views = ls.reads;
    if (ls.write)
      views.push_back(*ls.write);
    for (const SliceView &v : views) {
      PlanBuffer *b = nullptr;
      for (PlanBuffer &candidate : plan_.buffers)
        if (candidate.name == tensorName(v.view))
          b = &candidate;
      const TensorView &base = f_.tensor(v.base);
      size_t axis = v.position;
      if (base.hasAllocation()) {
        auto at = std::find(base.allocation.begin(), base.allocation.end(), v.axis);
        if (at == base.allocation.end())
          throw PlanError(tensorName(v.view) + " slices " + tensorName(v.base) +
                              " along an axis its allocation domain does not list",
                          f_.exprs[e].loc);
        axis = static_cast<size_t>(at - base.allocation.begin());
      }
      // A slice sharded unlike its part of the base (a refuted
      // loop-view-slice) is no window of the base's buffer.
      // Symbolic extents are equal where the constraints say so; the run
      // checks the window at bound sizes.
      std::vector<Extent> window = localShape(f_, base), own = localShape(f_, f_.tensor(v.view));
      window.erase(window.begin() + static_cast<std::ptrdiff_t>(std::min(axis, window.size() - 1)));
      bool differs = window.size() != own.size();
      for (size_t k = 0; !differs && k < own.size(); ++k)
        differs = window[k].isConstant() && own[k].isConstant() && window[k].str() != own[k].str();
      if (differs)
        throw PlanError(tensorName(v.view) + " is no window of " + tensorName(v.base) +
                            "'s buffer (it is sharded unlike its part of " + tensorName(v.base) +
                            "); no plan can slice it",
                        f_.exprs[e].loc);
      b->kind = BufferKind::Slice;
      b->base = tensorName(v.base);
      b->axis = axis;
      b->loopVar = ls.loop.var;
      if (v.swizzled) // Its slot is the device's (ir/Swizzle1D.h): its 1-D mesh orders the team.
        b->swizzleTeam = base.mesh->devices();
    }
  }
}

PlanRing Builder::ringOf(const Chosen &c) const {
  // The peers as printed (shift 0 for a proved ring), so that a run
  // exercises what the proof is about.
  const Expr &e = f_.exprs[c.edge->expr];
  auto ring = ringPermute(f_, e);
  auto *r = std::get_if<RingPermute>(&ring);
  auto shifts = r ? ringShifts(*r) : std::nullopt;
  if (!shifts)
    throw PlanError(c.verdict.edge + ": its peers (send_peer=" + e.attr("send_peer") +
                        ", recv_peer=" + e.attr("recv_peer") +
                        ") are not taken modulo the team size, which no plan's ring says",
                    e.loc);
  return PlanRing{r->loop.var, shifts->recv, shifts->send};
}

std::optional<std::string> Builder::unprovedRing(size_t expr) const {
  if (!isCollectivePermute(f_.exprs[expr]))
    return std::nullopt;
  for (size_t i = 0; i < g_.edges().size(); ++i) {
    if (g_.edges()[i].expr != expr)
      continue;
    // Its steps run the peers the proof is about; a wrong ring is shown by
    // the checker's counterexample, not by a plan.
    const EdgeVerdict &v = verdicts_[i];
    const auto &claims = v.loopClaims;
    if (v.result != EdgeResult::Proved || !claims || claims->status != LoopClaims::Status::Proved)
      return "its ring is not proved (" +
             (v.counterexample ? v.counterexample->message : v.reason) +
             "); a CollectivePermute is planned only on a proved ring";
  }
  return std::nullopt;
}

PlanVerdict Builder::loopVerdict(size_t edgeIndex, const HostLoop &loop) const {
  // The checker decides a looped Communication's loop claims once
  // (EdgeVerdict::loopClaims); the compiler's choice is confirmed only when
  // they hold, so the loop step needs both.
  const EdgeVerdict &v = verdicts_[edgeIndex];
  PlanVerdict pv = verdictAbout(edgeIndex);
  pv.claim = "the loop `" + loop.header + "` reads in range and covers the output";
  const auto &c = v.compiler;
  const auto &claims = v.loopClaims;
  bool confirmed =
      c && (c->result == CompilerResult::Confirmed || c->result == CompilerResult::Unnecessary);
  if (claims && claims->status != LoopClaims::Status::Proved) {
    pv.status =
        claims->status == LoopClaims::Status::Refuted ? PlanStatus::Refuted : PlanStatus::Unknown;
    pv.detail = claims->counterexample ? claims->counterexample->message : claims->reason;
  } else if (claims && confirmed) {
    pv.status = PlanStatus::Proved;
  } else {
    pv.status = PlanStatus::Unknown;
    pv.detail = claims ? "the compiler's Communication is not confirmed"
                       : "the loop claims were not established";
  }
  return pv;
}

void Builder::planLoop(const std::vector<size_t> &group) {
  size_t loopIndex = plan_.steps.size();
  const LoopedStatement *model = &looped_.at(group.front());
  PlanStep loop;
  loop.kind = StepKind::Loop;
  loop.loopVar = model->loop.var;
  loop.lo = model->loop.lo;
  loop.hi = model->loop.hi;
  addStep(loop);
  // A read view is the slice buffer itself, with no step: the loop step
  // rests on its verdict.
  for (size_t e : group) {
    if (!looped_.count(e))
      continue; // A read view.
    planExpr(e);
    for (const SliceView &read : looped_.at(e).reads)
      for (size_t i = 0; i < g_.edges().size(); ++i)
        if (g_.edges()[i].consumer == read.view && g_.edges()[i].producer == read.base)
          plan_.steps[loopIndex].restsOn.push_back(checkerVerdict(i));
  }
  for (size_t e : group)
    if (f_.exprs[e].kind == OpKind::Communication)
      for (size_t i = 0; i < g_.edges().size(); ++i)
        if (g_.edges()[i].expr == e)
          plan_.steps[loopIndex].restsOn.push_back(loopVerdict(i, model->loop));
  PlanStep &step = plan_.steps[loopIndex];
  step.body = plan_.steps.size() - loopIndex - 1;
  std::set<int64_t> devices;
  for (size_t j = loopIndex + 1; j < plan_.steps.size(); ++j)
    devices.insert(plan_.steps[j].devices.begin(), plan_.steps[j].devices.end());
  step.devices.assign(devices.begin(), devices.end());
  if (step.restsOn.empty()) // The loop itself rests on its statements' verdicts.
    for (size_t j = loopIndex + 1; j < plan_.steps.size(); ++j)
      step.restsOn.insert(step.restsOn.end(), plan_.steps[j].restsOn.begin(),
                          plan_.steps[j].restsOn.end());
}

Plan Builder::build() {
  plan_.version = kPlanVersion;
  plan_.checkerVersion = kShardcheckVersion;
  plan_.inputFile = request_.inputFile;
  plan_.inputSha256 = sha_;
  plan_.fusionIndex = request_.fusionIndex;
  plan_.lowerings = request_.lowerings == PlanRequest::Lowerings::Compiler ? "compiler" : "checker";
  plan_.devices = fusionDevices(f_, request_.devices);
  plan_.fusion = f_;
  // A run could only compare such an output with itself. A host IR program
  // printed on one device leaves outputs to other programs: they enter the
  // plan as inputs. Anywhere else the fusion lacks their computation.
  if (f_.kind != BlockKind::HostIr)
    for (TensorNum t : uncomputedOutputs(f_))
      throw PlanError(tensorName(t) + " is an output that no expression read defines: nothing "
                                      "computes it",
                      f_.tensor(t).loc);
  loopWritten_ = loopWrittenBases(f_);
  for (size_t e = 0; e < f_.exprs.size(); ++e)
    if (isInHostLoop(f_.exprs[e])) {
      auto model = loopedStatement(f_, f_.exprs[e]);
      if (auto why = unprovedRing(e); why && std::holds_alternative<LoopedStatement>(model))
        model = *why;
      if (auto *why = std::get_if<std::string>(&model))
        throw PlanError("no plan can run this statement of the loop `" +
                            f_.exprs[e].attr(kHostLoopAttr) + "`: " + *why,
                        f_.exprs[e].loc);
      looped_.emplace(e, std::get<LoopedStatement>(model));
    }
  addTensors();
  addSlices();
  addConstraints();
  std::vector<size_t> order = exprOrder();
  std::set<TensorNum> readViews;
  for (const auto &[e, ls] : looped_)
    for (const SliceView &read : ls.reads)
      readViews.insert(read.view);
  for (size_t i = 0; i < order.size();) {
    const Expr &e = f_.exprs[order[i]];
    if (isSliceView(e) && readViews.count(e.outputs[0])) {
      ++i; // Its buffer is a slice of its base (addSlices).
      continue;
    }
    if (!isInHostLoop(e)) {
      planExpr(order[i++]);
      continue;
    }
    std::vector<size_t> group{order[i++]};
    while (i < order.size() &&
           (sameHostLoop(f_.exprs[order[i]], f_.exprs[group[0]]) ||
            (isSliceView(f_.exprs[order[i]]) && readViews.count(f_.exprs[order[i]].outputs[0]))))
      group.push_back(order[i++]);
    planLoop(group);
  }
  return std::move(plan_);
}

} // namespace

Plan buildPlan(const Fusion &fusion, const FusionGraph &graph,
               const std::vector<EdgeVerdict> &verdicts, const PlanRequest &request) {
  SC_ASSERT(verdicts.size() == graph.edges().size(), "one verdict per edge");
  return Builder(fusion, graph, verdicts, request).build();
}

} // namespace shardcheck
