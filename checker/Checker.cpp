// Edge verdicts for a fusion; see Checker.h.
#include "checker/Checker.h"

#include "checker/EdgeChecker.h"
#include "checker/ExprChecker.h"
#include "checker/LoopChecker.h"
#include "checker/RingChecker.h"
#include "checker/Selection.h"

#include <algorithm>
#include <regex>
#include <set>

namespace shardcheck {

namespace {

/// Whether every device that holds consumer elements holds all of the
/// producer: then no op, whatever its semantics, needs communication.
bool producerFullyHeld(const Fusion &f, const FusionEdge &edge,
                       const std::vector<int64_t> &universe) {
  const TensorView &p = f.tensor(edge.producer), &c = f.tensor(edge.consumer);
  for (IdNum id : p.loop) {
    const IterDomain &d = f.id(id);
    if (d.isDeviceParallel() && !d.isBroadcast() && !d.isReduction())
      return false;
  }
  if (!p.mesh)
    return true;
  const auto &needers = c.mesh ? c.mesh->devices() : universe;
  return std::all_of(needers.begin(), needers.end(),
                     [&](int64_t d) { return p.mesh->contains(d); });
}

/// A Set.Permute: each consumer element copies one producer element, so
/// even when its permutation is unknown (no root domain printed) every
/// element it needs is a producer element.
bool isPlainCopy(const Expr &e) {
  return e.kind == OpKind::Permute && e.inputs.size() == 1;
}

std::string compilerSource(const Expr &e) {
  if (e.communication)
    return "host IR Communication " + std::to_string(e.communication->number);
  return std::string("nvFuser's lowering of a resharding ") +
         (e.kind == OpKind::Set ? "Set" : "reduction");
}

Lowering noLowering(CommKind k) {
  return Lowering{k, {}, false};
}

/// Names `edge` (its tensors, expression and location) in `v`.
void placeVerdict(const Fusion &fusion, const FusionEdge &edge, EdgeVerdict &v) {
  const Expr &expr = fusion.exprs[edge.expr];
  v.producer = edge.producer;
  v.consumer = edge.consumer;
  v.expr = edge.expr;
  v.exprName = expr.op;
  v.loc = expr.loc;
}

/// `v` without a lowering: `result` is Unsupported or Unmodelled.
void setNoLowering(EdgeVerdict &v, EdgeResult result, std::string reason) {
  v.result = result;
  v.lowering = noLowering(CommKind::None);
  v.reason = std::move(reason);
  v.steps.clear();
}

/// Replaces whole-word tensor names in a message.
std::string renameTensors(std::string text, const std::map<std::string, std::string> &renames) {
  // Two phases so that T1 -> T2 and T2 -> T1 do not interfere.
  size_t i = 0;
  std::map<std::string, std::string> placeholders;
  for (const auto &[from, to] : renames) {
    std::string ph = "\x01" + std::to_string(i++) + "\x01";
    text = std::regex_replace(text, std::regex("\\b" + from + "\\b"), ph);
    placeholders[ph] = to;
  }
  for (const auto &[ph, to] : placeholders) {
    size_t pos;
    while ((pos = text.find(ph)) != std::string::npos)
      text.replace(pos, ph.size(), to);
  }
  return text;
}

void renameVerdict(EdgeVerdict &v, const std::map<std::string, std::string> &renames) {
  auto fix = [&](std::optional<Counterexample> &c) {
    if (c)
      c->message = renameTensors(c->message, renames);
  };
  fix(v.counterexample);
  v.reason = renameTensors(v.reason, renames);
  if (v.compiler) {
    fix(v.compiler->counterexample);
    v.compiler->reason = renameTensors(v.compiler->reason, renames);
  }
}

/// Canonical naming of IDs and symbols while building an edge key.
class KeyBuilder {
public:
  explicit KeyBuilder(const Fusion &f) : f_(f) {}

  std::string tensor(const TensorView &tv) {
    std::string s = tv.mesh ? tv.mesh->str() : "nomesh";
    for (const auto *dom : {&tv.root, &tv.logical, &tv.allocation, &tv.loop}) {
      s += "|";
      for (IdNum id : *dom)
        s += idKey(id) + ",";
    }
    for (size_t i : connectedTransforms(tv)) {
      const auto &t = f_.transforms[i];
      s += std::string("|") + transformKindName(t.kind) +
           (t.innerSplit ? "i"
            : t.chunked  ? "c"
                         : "o") +
           "(" + extent(t.factor) + ":";
      for (IdNum x : t.inputs)
        s += idKey(x) + ",";
      s += "->";
      for (IdNum x : t.outputs)
        s += idKey(x) + ",";
      s += ")";
    }
    return s;
  }

  /// The transforms connected to the tensor's IDs, in fusion order.
  std::set<size_t> connectedTransforms(const TensorView &tv) const {
    std::set<IdNum> seen;
    std::vector<IdNum> work;
    for (const auto *dom : {&tv.root, &tv.logical, &tv.allocation, &tv.loop})
      work.insert(work.end(), dom->begin(), dom->end());
    std::set<size_t> used;
    while (!work.empty()) {
      IdNum id = work.back();
      work.pop_back();
      if (!seen.insert(id).second)
        continue;
      std::vector<size_t> touching = f_.id(id).uses;
      if (f_.id(id).definition)
        touching.push_back(*f_.id(id).definition);
      for (size_t i : touching) {
        if (!used.insert(i).second)
          continue;
        const auto &t = f_.transforms[i];
        work.insert(work.end(), t.inputs.begin(), t.inputs.end());
        work.insert(work.end(), t.outputs.begin(), t.outputs.end());
      }
    }
    return used;
  }

  std::string idKey(IdNum id) {
    auto it = ids_.find(id);
    if (it != ids_.end())
      return it->second;
    const IterDomain &d = f_.id(id);
    std::string k = std::to_string(ids_.size()) + iterTypeLetter(d.iterType) +
                    (d.isDeviceParallel() ? parallelTypeShortName(d.parallel) : "") + "{" +
                    extent(d.extent) + "}";
    ids_[id] = "#" + std::to_string(ids_.size());
    return k;
  }

  std::string extent(const Extent &e) {
    switch (e.kind()) {
    case Extent::Kind::Constant:
      return e.str();
    case Extent::Kind::Symbol: {
      auto [it, fresh] = symbols_.emplace(e.symbolName(), "s" + std::to_string(symbols_.size()));
      return it->second;
    }
    default:
      return "(" + extent(e.lhs()) + std::to_string(static_cast<int>(e.kind())) + extent(e.rhs()) +
             ")";
    }
  }

private:
  const Fusion &f_;
  std::map<IdNum, std::string> ids_;
  std::map<std::string, std::string> symbols_;
};

} // namespace

namespace {

/// An edge's key with the builder's numbering of IDs and symbols, so that
/// the keys of several edges built with one builder relate them too.
std::string edgeKey(KeyBuilder &kb, const Fusion &fusion, const FusionEdge &edge) {
  const Expr &e = fusion.exprs[edge.expr];
  // The op's spelling and attributes are part of what is checked (a
  // reduction's operator and initial value decide a compiler verdict).
  std::string key = std::string(opKindName(e.kind)) + ":" + e.op + "/" +
                    std::to_string(edge.operandIndex) +
                    "\nP:" + kb.tensor(fusion.tensor(edge.producer)) +
                    "\nC:" + kb.tensor(fusion.tensor(edge.consumer)) + "\nmap:";
  for (size_t i = 0; i < edge.map.consumerIds.size(); ++i)
    key += kb.idKey(edge.map.consumerIds[i]) + "=" +
           (edge.map.producerIds[i] ? kb.idKey(*edge.map.producerIds[i]) : "-") + ",";
  for (const auto &[name, value] : e.attrs)
    key += "\nattr:" + name + "=" + value;
  for (bool flag : e.flags)
    key += flag ? "1" : "0";
  if (edge.map.unsupported)
    key += "\nunsupported:" + *edge.map.unsupported;
  if (e.communication) {
    // The compiler's lowering is part of what is checked: its team and root
    // must match too, not only its kind.
    key += "\ncomm:" + std::string(collectiveTypeName(e.communication->type)) + " team:";
    for (int64_t d : e.communication->team)
      key += std::to_string(d) + ",";
    if (e.communication->root)
      key += " root:" + std::to_string(*e.communication->root);
  }
  return key;
}

} // namespace

std::string canonicalEdgeKey(const Fusion &fusion, const FusionEdge &edge) {
  KeyBuilder kb(fusion);
  return edgeKey(kb, fusion, edge);
}

bool hasProvedPlan(const EdgeVerdict &v) {
  return v.result == EdgeResult::Proved && !v.steps.empty() &&
         std::all_of(v.steps.begin(), v.steps.end(),
                     [](const auto &s) { return s.status == Status::Proved; });
}

const char *edgeResultStatusName(EdgeResult r) {
  switch (r) {
  case EdgeResult::Proved:
    return "proved";
  case EdgeResult::Refuted:
  case EdgeResult::Unsupported:
    return "refuted";
  case EdgeResult::Unknown:
  case EdgeResult::Unmodelled:
    break;
  }
  return "unknown";
}

const char *compilerResultStatusName(CompilerResult r) {
  switch (r) {
  case CompilerResult::Confirmed:
  case CompilerResult::Unnecessary:
    return "confirmed";
  case CompilerResult::Refuted:
    return "refuted";
  case CompilerResult::Unknown:
    break;
  }
  return "unknown";
}

std::string EdgeVerdict::loweringText() const {
  if (!hasLowering(result))
    return kNoLoweringName;
  return steps.empty() ? lowering.str() : kMultiStepName;
}

const char *EdgeVerdict::communicationName() const {
  if (!hasLowering(result))
    return kNoLoweringName;
  return steps.empty() ? commKindName(lowering.kind) : kMultiStepName;
}

std::string CompilerVerdict::loweringText() const {
  return lowering ? lowering->str() : kNoLoweringName;
}

const char *CompilerVerdict::communicationName() const {
  return lowering ? commKindName(lowering->kind) : kNoLoweringName;
}

namespace {

/// The verdict on the compiler's choice `cv` for an edge of `expr`:
/// refuted when a host IR Communication breaks a runtime rule of its
/// printed form, else as EdgeChecker decides it (unnecessary when the edge
/// is local).
CompilerVerdict judgeCompilerChoice(CompilerVerdict cv, const Expr &expr, EdgeChecker &ec,
                                    bool edgeIsLocal, std::optional<NvfuserRuntime> runtime) {
  std::optional<std::string> violation;
  if (expr.communication)
    violation = communicationRuleViolation(expr);
  Counterexample ruleBroken;
  if (violation) {
    ruleBroken.message = *violation;
    ruleBroken.rule = "communication-form";
  }
  Outcome o = violation     ? Outcome::refuted(ruleBroken)
              : cv.lowering ? ec.checkLowering(*cv.lowering, /*compilerLowering=*/true, runtime)
                            : Outcome::unsupported("no lowering to check");
  switch (o.kind) {
  case Outcome::Kind::Proved:
    cv.result = edgeIsLocal ? CompilerResult::Unnecessary : CompilerResult::Confirmed;
    break;
  case Outcome::Kind::Refuted:
    cv.result = CompilerResult::Refuted;
    cv.counterexample = o.counterexample;
    break;
  default:
    cv.result = CompilerResult::Unknown;
    cv.reason = o.reason;
    break;
  }
  return cv;
}

} // namespace

namespace {

/// The verdict on an edge that needs communication, from the proof of
/// `candidate`, the collective nvFuser's rules propose for it.
void proveCandidate(EdgeChecker &ec, const Expr &expr, Lowering candidate, EdgeVerdict &v) {
  Outcome o = proveWithPermuteFallback(ec, candidate);
  if (isReductionComm(candidate.kind) && reductionOperatorOf(expr).empty())
    o = Outcome::unsupported(std::string("`") + expr.op +
                             "` names no operator to combine partial results with");
  if (o.kind == Outcome::Kind::Proved) {
    v.lowering = candidate;
    v.result = EdgeResult::Proved;
  } else if (o.kind == Outcome::Kind::Refuted) {
    setNoLowering(v, EdgeResult::Unsupported, "the candidate " + candidate.str() + " is refuted");
    v.counterexample = o.counterexample;
  } else if (o.kind == Outcome::Kind::Unsupported) {
    setNoLowering(v, EdgeResult::Unmodelled,
                  "the candidate " + candidate.str() + " cannot be checked: " + o.reason);
  } else {
    v.lowering = candidate;
    v.result = EdgeResult::Unknown;
    v.reason = o.reason;
  }
}

} // namespace

Checker::Checker(CheckOptions options) : options_(std::move(options)) {}

std::optional<CompilerVerdict> Checker::compilerChoice(const Fusion &fusion,
                                                       const FusionEdge &edge) {
  const Expr &e = fusion.exprs[edge.expr];
  CompilerVerdict cv;
  cv.loc = e.loc;
  // nvFuser's runtime hands a reducing Communication every member's own
  // producer buffer, never partials laid out for the consumer.
  if (e.kind == OpKind::Communication && e.communication) {
    cv.lowering = loweringOfCommunication(fusion, e);
    if (cv.lowering)
      cv.lowering->reduceInput = Lowering::ReduceInput::ProducerBuffer;
    cv.source = compilerSource(e);
    return cv;
  }
  bool lowerable = e.kind == OpKind::Set || e.kind == OpKind::Reduction;
  if (!lowerable || edge.map.unsupported || !isSyntacticallyResharding(fusion, edge))
    return std::nullopt;
  Selection s = selectLowering(fusion, edge, SelectionReading::NvFuser);
  if (!s.lowering || s.lowering->kind == CommKind::None)
    return std::nullopt;
  // A reduction that reshards anything but its reduced axis is split by
  // nvFuser into a resharding Set and a local reduction: the collective is
  // that Set's, which the dump does not print.
  if (e.kind == OpKind::Reduction && !isReductionComm(s.lowering->kind))
    return std::nullopt;
  Lowering l = *s.lowering;
  // A resharding reduction is decomposed by nvFuser into a local reduction
  // (the partial, in the consumer's layout) and the collective on it; the
  // collective applies no initial value.
  l.reduceInput = Lowering::ReduceInput::Partials;
  // nvFuser's AllToAll makes each chunk contiguous before the exchange and
  // reorders after it; its Allgather writes the output buffer directly.
  l.localPermute = l.kind == CommKind::AllToAll;
  cv.lowering = std::move(l);
  cv.source = compilerSource(e);
  return cv;
}

std::optional<NvfuserRuntime> Checker::runtimeOf(const Expr &expr) const {
  // A host IR Communication is handed exactly the printed tensors, so the
  // runtime's buffer rules apply to them. A resharding Set is first
  // rearranged by nvFuser's own passes (ReorderShardedAxis), which are not
  // modelled: its plain collective is judged on the flat buffers.
  // A Communication whose backend is DTensor (read from a DTensor document,
  // docs/dtensor.md) is a functional collective on flat buffers: nvFuser's
  // buffer rules do not apply to it.
  if (expr.communication && expr.communication->backend != "DTensor")
    return options_.runtime;
  return std::nullopt;
}

EdgeVerdict Checker::notCheckedInTime(const Fusion &fusion, const FusionEdge &edge, EdgeVerdict v) {
  const std::string why = "not checked: the run's --time-limit was reached";
  v.lowering = noLowering(CommKind::None);
  v.result = EdgeResult::Unknown;
  v.reason = why;
  if (auto cv = compilerChoice(fusion, edge)) {
    cv->result = CompilerResult::Unknown;
    cv->reason = why;
    v.compiler = std::move(cv);
  }
  return v;
}

namespace {

/// The loop claims of a looped statement, from their outcome.
LoopClaims loopClaimsOf(const Outcome &o, const std::string &header) {
  LoopClaims c;
  c.header = header;
  switch (o.kind) {
  case Outcome::Kind::Proved:
    c.status = LoopClaims::Status::Proved;
    break;
  case Outcome::Kind::Refuted:
    c.status = LoopClaims::Status::Refuted;
    c.counterexample = o.counterexample;
    break;
  case Outcome::Kind::Unknown:
    c.status = LoopClaims::Status::Unknown;
    break;
  case Outcome::Kind::Unsupported:
    c.status = LoopClaims::Status::Unsupported;
    break;
  }
  c.reason = o.reason;
  return c;
}

} // namespace

EdgeVerdict Checker::checkRingEdge(const Fusion &fusion, const FusionEdge &edge, smt::Context &ctx,
                                   EdgeVerdict v) {
  const Expr &expr = fusion.exprs[edge.expr];
  RingPermute ring = std::get<RingPermute>(ringPermute(fusion, expr));
  RingChecker rc(fusion, ring, ctx);
  Outcome o = rc.check();
  if (auto violation = communicationRuleViolation(expr)) {
    Counterexample broken;
    broken.message = *violation;
    broken.rule = "communication-form";
    o = Outcome::refuted(broken);
  }
  CompilerVerdict cv = *compilerChoice(fusion, edge);
  // The ring is the compiler's own lowering and the only one the checker
  // has for this edge: its verdict is the edge's and the compiler's.
  v.lowering.kind = CommKind::CollectivePermute;
  v.lowering.teams = {Team{ring.team, std::nullopt, {}}};
  cv.lowering = v.lowering;
  switch (o.kind) {
  case Outcome::Kind::Proved:
    v.result = EdgeResult::Proved;
    cv.result = CompilerResult::Confirmed;
    v.assumptions = rc.assumptions();
    break;
  case Outcome::Kind::Refuted:
    v.result = EdgeResult::Refuted;
    v.counterexample = cv.counterexample = o.counterexample;
    cv.result = CompilerResult::Refuted;
    break;
  case Outcome::Kind::Unknown:
    v.result = EdgeResult::Unknown;
    v.reason = cv.reason = o.reason;
    cv.result = CompilerResult::Unknown;
    break;
  case Outcome::Kind::Unsupported:
    setNoLowering(v, EdgeResult::Unmodelled, o.reason);
    cv.result = CompilerResult::Unknown;
    cv.reason = o.reason;
    break;
  }
  v.compiler = std::move(cv);
  v.loopClaims = loopClaimsOf(o, ring.loop.header);
  return v;
}

EdgeVerdict Checker::checkEdge(const Fusion &fusion, const FusionEdge &edge,
                               const std::vector<int64_t> &universe) {
  EdgeVerdict v;
  const Expr &expr = fusion.exprs[edge.expr];
  placeVerdict(fusion, edge, v);

  smt::SolverOptions so = solverOptions();
  if (so.deadline && std::chrono::steady_clock::now() >= *so.deadline)
    return notCheckedInTime(fusion, edge, std::move(v));
  smt::Context ctx(so, &queryCache_, &stats_.solver, &solverBackend_);
  if (isCollectivePermute(expr) && !edge.map.unsupported)
    return checkRingEdge(fusion, edge, ctx, std::move(v));
  EdgeChecker ec(fusion, edge, ctx, universe);

  Outcome local = ec.checkLocal();
  // Every consumer device holds all of the producer: whatever the layouts,
  // nothing moves. Only for ops whose element map is modelled, or a permute
  // whose permutation alone is unknown (printed without its root domain): a proof never rests on an
  // op the reference cannot evaluate, and the plan builder refuses to compute an op without a map.
  // Never when the fusion's sizes contradict themselves (a Set mapping extent 1 onto 2): every
  // claim would hold vacuously.
  if (local.kind == Outcome::Kind::Unsupported && (!edge.map.unsupported || isPlainCopy(expr)) &&
      ec.checkConstraints().kind == Outcome::Kind::Proved &&
      producerFullyHeld(fusion, edge, universe))
    local = Outcome::proved();

  switch (local.kind) {
  case Outcome::Kind::Proved: {
    v.lowering = noLowering(CommKind::None);
    v.result = EdgeResult::Proved;
    // Alias: shardings that differ only in spelling, on an op whose consumer
    // may reuse its producer's buffer, and only where the reuse itself (same
    // element at every offset) is proved. A compute op reads its operand in
    // place: none.
    if (differsOnlyInSpelling(fusion, edge) && isCopyKind(expr.kind) &&
        ec.checkLowering(noLowering(CommKind::Alias)).kind == Outcome::Kind::Proved)
      v.lowering = noLowering(CommKind::Alias);
    break;
  }
  case Outcome::Kind::Unknown:
    v.lowering = noLowering(CommKind::None);
    v.result = EdgeResult::Unknown;
    v.reason = local.reason;
    break;
  case Outcome::Kind::Unsupported:
    setNoLowering(v, EdgeResult::Unmodelled, local.reason);
    break;
  case Outcome::Kind::Refuted: {
    v.counterexample = local.counterexample;
    Selection s = selectLowering(fusion, edge, SelectionReading::Semantic);
    if (!s.lowering || s.lowering->kind == CommKind::None)
      setNoLowering(v, EdgeResult::Unsupported,
                    s.lowering ? "communication is needed but nvFuser's rules propose none"
                               : s.reason);
    else
      proveCandidate(ec, expr, *s.lowering, v);
    // No single collective serves the edge: the planner's multi-step plan,
    // every step proved, makes it Proved (reports say "multi-step proved").
    // Looped statements are not planned: their loop claims (checkHostLoops)
    // are about the statement, not about a chain of steps.
    if (!hasLowering(v.result) && !isInHostLoop(expr)) {
      v.steps = planMultiStep(fusion, edge, universe);
      if (!v.steps.empty()) {
        v.result = EdgeResult::Proved;
        v.counterexample = local.counterexample; // why it communicates, not a refutation
      }
    }
    break;
  }
  }

  if (auto cv = compilerChoice(fusion, edge))
    v.compiler =
        judgeCompilerChoice(std::move(*cv), expr, ec,
                            /*edgeIsLocal=*/local.kind == Outcome::Kind::Proved, runtimeOf(expr));
  v.assumptions = ec.assumptions();
  for (const auto &step : v.steps)
    for (const auto &a : step.assumptions)
      if (std::find(v.assumptions.begin(), v.assumptions.end(), a) == v.assumptions.end())
        v.assumptions.push_back(a);
  return v;
}

std::vector<EdgeVerdict> Checker::checkFusion(const Fusion &fusion, const FusionGraph &graph) {
  std::set<int64_t> devices;
  for (const auto &[n, tv] : fusion.tensors)
    if (tv.mesh)
      devices.insert(tv.mesh->devices().begin(), tv.mesh->devices().end());
  std::vector<int64_t> universe(devices.begin(), devices.end());
  if (options_.devices > 0)
    for (int64_t d = 0; d < options_.devices; ++d)
      if (!devices.count(d))
        universe.push_back(d);
  if (universe.empty())
    universe.push_back(0);
  std::sort(universe.begin(), universe.end());
  std::string universeKey;
  for (int64_t d : universe)
    universeKey += std::to_string(d) + ",";

  std::vector<EdgeVerdict> verdicts;
  for (const auto &edge : graph.edges()) {
    ++stats_.edges;
    std::string key;
    // A ring's verdict rests on its printed peers, which the structural key
    // leaves out.
    bool cacheable = options_.useEdgeCache && !isCollectivePermute(fusion.exprs[edge.expr]);
    if (cacheable) {
      key = universeKey + "\n" + canonicalEdgeKey(fusion, edge);
      auto it = edgeCache_.find(key);
      // Verdicts whose reasons name IterDomains are recomputed: only tensor
      // names can be renamed safely.
      if (it != edgeCache_.end() && it->second.reason.empty() &&
          (!it->second.compiler || it->second.compiler->reason.empty())) {
        ++stats_.edgeCacheHits;
        EdgeVerdict v = it->second;
        renameVerdict(v, {{"T" + std::to_string(v.producer), fusion.tensor(edge.producer).name()},
                          {"T" + std::to_string(v.consumer), fusion.tensor(edge.consumer).name()}});
        const Expr &expr = fusion.exprs[edge.expr];
        placeVerdict(fusion, edge, v);
        if (v.compiler) {
          v.compiler->loc = expr.loc;
          v.compiler->source = compilerSource(expr);
        }
        v.fromCache = true;
        verdicts.push_back(std::move(v));
        continue;
      }
    }
    EdgeVerdict v = checkEdge(fusion, edge, universe);
    if (cacheable)
      edgeCache_[key] = v;
    verdicts.push_back(std::move(v));
  }
  for (size_t i = 0; i < verdicts.size(); ++i)
    verdicts[i].edge = i;
  demoteUnmodelledExpressions(fusion, graph, verdicts);
  checkReducedOperands(fusion, graph, universe, verdicts);
  checkHostLoops(fusion, graph, universe, verdicts);
  return verdicts;
}

std::vector<PlannedStep> Checker::planMultiStep(const Fusion &fusion, const FusionEdge &edge,
                                                const std::vector<int64_t> &universe) {
  return planEdge(fusion, edge, [&](const Fusion &f, const FusionEdge &e, const Lowering &l) {
    return proveStep(f, e, l, universe);
  });
}

StepProof Checker::proveStep(const Fusion &fusion, const FusionEdge &edge, const Lowering &lowering,
                             const std::vector<int64_t> &universe) {
  std::string key;
  for (int64_t d : universe)
    key += std::to_string(d) + ",";
  key += "\n" + canonicalEdgeKey(fusion, edge) + "\n" + lowering.str();
  auto it = stepProofs_.find(key);
  if (it != stepProofs_.end())
    return it->second;
  smt::Context ctx(solverOptions(), &queryCache_, &stats_.solver, &solverBackend_);
  EdgeChecker ec(fusion, edge, ctx, universe);
  StepProof r;
  r.lowering = lowering;
  Outcome o =
      lowering.kind == CommKind::None ? ec.checkLocal() : proveWithPermuteFallback(ec, r.lowering);
  r.kind = o.kind;
  r.reason = o.reason;
  if (o.kind == Outcome::Kind::Proved)
    r.assumptions = ec.assumptions();
  // An unknown (a timeout, the deadline) is not remembered: it may be decided later.
  if (o.kind != Outcome::Kind::Unknown)
    stepProofs_[key] = r;
  return r;
}

smt::SolverOptions Checker::solverOptions() const {
  smt::SolverOptions so;
  so.timeoutMs = options_.timeoutMs;
  so.smtDumpDir = options_.smtDumpDir;
  so.deadline = options_.deadline;
  return so;
}

namespace {

/// A failed (or undecided) loop claim on a verdict that was proved: refuted
/// with the claim's counterexample (it names the iteration; rule
/// `host-loop`), or unknown with the reason.
template <class Verdict, class Result>
void applyLoopFailure(const Outcome &loop, const std::string &header, Verdict &v, Result refuted,
                      Result unknown) {
  if (loop.kind == Outcome::Kind::Refuted) {
    v.result = refuted;
    v.counterexample = loop.counterexample;
    v.counterexample->rule = "host-loop";
    return;
  }
  v.result = unknown;
  v.counterexample.reset();
  v.reason = "its loop `" + header + "` is not proved: " + loop.reason;
}

/// The loop's verdict on the compiler's choice for a looped statement: a
/// failed loop claim refutes (or leaves unknown) what the per-iteration check
/// confirmed.
void applyLoopOutcome(const Outcome &loop, const std::string &header, EdgeVerdict &v) {
  if (!v.compiler || loop.kind == Outcome::Kind::Proved ||
      (v.compiler->result != CompilerResult::Confirmed &&
       v.compiler->result != CompilerResult::Unnecessary))
    return;
  applyLoopFailure(loop, header, *v.compiler, CompilerResult::Refuted, CompilerResult::Unknown);
}

/// A looped statement's edge whose loop claims failed: the statement as the
/// loop runs it is refuted or left unknown, whatever its one iteration's
/// edge proved.
void applyLoopOutcomeToEdge(const Outcome &loop, const std::string &header, EdgeVerdict &v) {
  if (v.result != EdgeResult::Proved || loop.kind == Outcome::Kind::Proved)
    return;
  applyLoopFailure(loop, header, v, EdgeResult::Refuted, EdgeResult::Unknown);
}

/// The read view edge (HirAliasSelect) feeding a looped statement: each
/// device holds its part of the slice already (none), proved per iteration.
void markReadViewLocal(const std::vector<std::string> &assumptions, EdgeVerdict &v) {
  v.lowering = Lowering{CommKind::None, {}, false};
  v.result = EdgeResult::Proved;
  v.steps.clear();
  v.reason.clear();
  v.counterexample.reset();
  v.assumptions = assumptions;
}

} // namespace

void Checker::checkReadViews(const Fusion &fusion, const FusionGraph &graph,
                             const LoopedStatement &ls, const std::vector<int64_t> &universe,
                             std::vector<EdgeVerdict> &verdicts) {
  for (const SliceView &read : ls.reads)
    for (size_t j = 0; j < graph.edges().size(); ++j) {
      const FusionEdge &view = graph.edges()[j];
      if (view.consumer != read.view || view.producer != read.base ||
          fusion.exprs[view.expr].op != "HirAliasSelect")
        continue;
      smt::Context viewCtx(solverOptions(), &queryCache_, &stats_.solver, &solverBackend_);
      LoopChecker reads(fusion, ls, viewCtx, universe);
      if (reads.checkReadView(read).kind == Outcome::Kind::Proved)
        markReadViewLocal(reads.assumptions(), verdicts[j]);
    }
}

void Checker::checkHostLoops(const Fusion &fusion, const FusionGraph &graph,
                             const std::vector<int64_t> &universe,
                             std::vector<EdgeVerdict> &verdicts) {
  std::map<size_t, std::optional<Outcome>> checked; // per statement, once
  for (size_t i = 0; i < graph.edges().size(); ++i) {
    size_t exprIndex = graph.edges()[i].expr;
    const Expr &e = fusion.exprs[exprIndex];
    if (!isInHostLoop(e) || graph.edges()[i].map.unsupported)
      continue;
    bool communication = e.kind == OpKind::Communication;
    auto model = communication ? loopedCommunication(fusion, e) : loopedStatement(fusion, e);
    const auto *ls = std::get_if<LoopedStatement>(&model);
    if (!ls)
      continue;
    if (!checked.count(exprIndex)) {
      smt::Context ctx(solverOptions(), &queryCache_, &stats_.solver, &solverBackend_);
      LoopChecker loop(fusion, *ls, ctx, universe);
      checked[exprIndex] = loop.check();
      checkReadViews(fusion, graph, *ls, universe, verdicts);
    }
    // The compiler's choice for any looped statement (a Communication, or
    // nvFuser's lowering of a looped resharding Set) holds only with the
    // loop claims; a looped statement's own edge too.
    verdicts[i].loopClaims = loopClaimsOf(*checked[exprIndex], ls->loop.header);
    applyLoopOutcome(*checked[exprIndex], ls->loop.header, verdicts[i]);
    if (!communication)
      applyLoopOutcomeToEdge(*checked[exprIndex], ls->loop.header, verdicts[i]);
  }
}

void Checker::demoteUnmodelledExpressions(const Fusion &fusion, const FusionGraph &graph,
                                          std::vector<EdgeVerdict> &verdicts) {
  std::map<size_t, std::string> unmodelled;
  for (const FusionEdge &e : graph.edges())
    if (e.map.unsupported && !unmodelled.count(e.expr))
      unmodelled[e.expr] = *e.map.unsupported;
  for (size_t i = 0; i < graph.edges().size(); ++i) {
    auto it = unmodelled.find(graph.edges()[i].expr);
    EdgeVerdict &v = verdicts[i];
    if (it == unmodelled.end() || graph.edges()[i].map.unsupported)
      continue;
    setNoLowering(v, EdgeResult::Unmodelled,
                  "another operand of the expression has no element map (" + it->second +
                      "), so this operand's is not trusted either");
    v.counterexample.reset();
    v.steps.clear();
  }
}

namespace {

void demote(EdgeVerdict &v, const Outcome &o, const std::string &what) {
  setNoLowering(v,
                o.kind == Outcome::Kind::Refuted ? EdgeResult::Unsupported : EdgeResult::Unmodelled,
                what + (o.reason.empty() ? std::string() : ": " + o.reason));
  v.counterexample = o.counterexample;
}

} // namespace

namespace {

/// The structure an expression-level partials proof depends on: the devices,
/// every reduced operand's edge (which includes the shared consumer) and
/// which operands are the same tensor, all numbered by one builder (a symbol
/// shared by two operands stays one symbol). Equal keys, equal proofs.
std::string expressionKey(const Fusion &fusion, const std::vector<const FusionEdge *> &operands,
                          const std::vector<int64_t> &universe) {
  KeyBuilder kb(fusion);
  std::string key;
  for (int64_t d : universe)
    key += std::to_string(d) + ",";
  for (size_t i = 0; i < operands.size(); ++i) {
    size_t first = i;
    for (size_t j = 0; j < i; ++j)
      if (operands[j]->producer == operands[i]->producer && first == i)
        first = j;
    key += "\noperand " + std::to_string(first) + ":" + edgeKey(kb, fusion, *operands[i]);
  }
  return key + "\nlowering:";
}

} // namespace

void Checker::checkReducedOperands(const Fusion &fusion, const FusionGraph &graph,
                                   const std::vector<int64_t> &universe,
                                   std::vector<EdgeVerdict> &verdicts) {
  std::map<size_t, std::vector<size_t>> reducedByExpr, byExpr;
  for (size_t i = 0; i < graph.edges().size(); ++i) {
    byExpr[graph.edges()[i].expr].push_back(i);
    if (isReductionEdge(fusion, graph.edges()[i]))
      reducedByExpr[graph.edges()[i].expr].push_back(i);
  }
  // A reduction collective combines the operands' partials; an operand that
  // needs another collective first (a linear's bias to gather) is not
  // modelled with it, and no plan combines the two.
  for (const auto &[expr, edges] : byExpr) {
    bool reduces = false, moves = false;
    for (size_t i : edges) {
      CommKind k = verdicts[i].lowering.kind;
      reduces = reduces || (isReductionComm(k) && verdicts[i].result == EdgeResult::Proved);
      // A multi-step plan (lowering None) moves data too.
      moves = moves || hasProvedPlan(verdicts[i]) ||
              (hasLowering(verdicts[i].result) && !isReductionComm(k) && k != CommKind::None &&
               k != CommKind::Alias);
    }
    if (!reduces || !moves)
      continue;
    for (size_t i : edges)
      if (isReductionComm(verdicts[i].lowering.kind))
        demote(verdicts[i], Outcome::unsupported("another operand needs a different collective"),
               "the candidate " + verdicts[i].lowering.str() + " for " +
                   fusion.tensor(verdicts[i].consumer).name() + " is not modelled");
  }
  for (const auto &[expr, edges] : reducedByExpr) {
    if (edges.size() < 2)
      continue; // One reduced operand: its edge's own partials query decides.
    std::vector<const FusionEdge *> operands;
    bool otherCollective = false;
    for (size_t i : edges) {
      operands.push_back(&graph.edges()[i]);
      // An operand no lowering serves counts as one needing another collective.
      CommKind k = verdicts[i].lowering.kind;
      otherCollective = otherCollective || !hasLowering(verdicts[i].result) ||
                        hasProvedPlan(verdicts[i]) ||
                        (!isReductionComm(k) && k != CommKind::None && k != CommKind::Alias);
    }
    for (size_t i : edges) {
      EdgeVerdict &v = verdicts[i];
      if (!isReductionComm(v.lowering.kind) || v.result != EdgeResult::Proved)
        continue;
      std::string what = "the candidate " + v.lowering.str() + " for the operands of " +
                         fusion.tensor(v.consumer).name() + " together";
      if (otherCollective) {
        demote(v, Outcome::unsupported("another reduced operand needs a different collective"),
               what + " is not modelled");
        continue;
      }
      std::string key = options_.useEdgeCache
                            ? expressionKey(fusion, operands, universe) + v.lowering.str()
                            : std::string();
      if (!key.empty() && provedExpressions_.count(key))
        continue;
      smt::Context ctx(solverOptions(), &queryCache_, &stats_.solver, &solverBackend_);
      Outcome o = ExprChecker(fusion, operands, ctx, universe).checkPartials(v.lowering);
      if (o.kind == Outcome::Kind::Proved) {
        if (!key.empty())
          provedExpressions_.insert(key);
        continue;
      }
      demote(v, o, what + (o.kind == Outcome::Kind::Refuted ? " is refuted" : " is not proved"));
    }
  }
}

} // namespace shardcheck
