// The loop claims of a Communication posted in a host loop; see
// LoopChecker.h.
#include "checker/LoopChecker.h"

#include "ir/FusionGraph.h"
#include "util/Checked.h"

#include <set>

namespace shardcheck {

namespace {

smt::Bool differ(const smt::Bool &a, const smt::Bool &b) {
  return (a && !b) || (!a && b);
}

std::string indexStr(const std::vector<int64_t> &index) {
  std::string s = "[";
  for (size_t i = 0; i < index.size(); ++i)
    s += (i ? ", " : "") + std::to_string(index[i]);
  return s + "]";
}

} // namespace

std::optional<Outcome> provedOrUnknown(const smt::QueryResult &r, const std::string &query) {
  if (r.answer == smt::Answer::Unsat)
    return Outcome::proved();
  if (r.answer == smt::Answer::Unknown)
    return Outcome::unknown(query + ": " + r.reason);
  return std::nullopt;
}

smt::Int loopBoundTerm(Encoder &enc, const Extent &bound, std::optional<IdNum> rangeId) {
  if (rangeId)
    return enc.extent(*rangeId);
  if (auto c = bound.asConstant())
    return enc.ctx().intVal(*c);
  return enc.symbol(bound.symbolName());
}

smt::Bool inHostLoopRange(Encoder &enc, const HostLoop &loop, const smt::Int &v) {
  return loopBoundTerm(enc, loop.lo, std::nullopt) <= v &&
         v < loopBoundTerm(enc, loop.hi, loop.rangeId);
}

smt::QueryResult solveWithSymbols(Encoder &enc, const std::string &name,
                                  std::vector<smt::Bool> assertions,
                                  std::vector<std::string> vars) {
  assertions.push_back(enc.symbolsPositive()); // last: every symbol exists by now
  auto symbols = enc.symbolVars();
  vars.insert(vars.end(), symbols.begin(), symbols.end());
  return enc.ctx().check(name, assertions, vars);
}

LoopChecker::LoopChecker(const Fusion &fusion, const LoopedStatement &loop, smt::Context &ctx,
                         std::vector<int64_t> universe)
    : fusion_(fusion), loop_(loop), ctx_(ctx), enc_(ctx, fusion), universe_(std::move(universe)) {}

smt::Int LoopChecker::bound(const Extent &e, std::optional<IdNum> id) {
  return loopBoundTerm(enc_, e, id);
}

smt::Bool LoopChecker::inLoop(const smt::Int &s) {
  return inHostLoopRange(enc_, loop_.loop, s);
}

smt::Bool LoopChecker::constraints() {
  std::vector<smt::Bool> c;
  for (const SliceView &read : loop_.reads)
    c.push_back(sliceConstraints(read));
  if (loop_.write)
    c.push_back(sliceConstraints(*loop_.write));
  return ctx_.all(c);
}

smt::Bool LoopChecker::sliceConstraints(const SliceView &view) {
  const TensorView &v = fusion_.tensor(view.view), &b = fusion_.tensor(view.base);
  std::vector<smt::Bool> c{enc_.impliedConstraints(v), enc_.impliedConstraints(b)};
  std::vector<IdNum> vIds = dataLogicalIds(fusion_, v), bIds = dataLogicalIds(fusion_, b);
  for (size_t k = 0, j = 0; k < bIds.size(); ++k)
    if (k != view.position)
      c.push_back(enc_.extent(bIds[k]) == enc_.extent(vIds[j++]));
  return ctx_.all(c);
}

smt::QueryResult LoopChecker::solve(const std::string &name, std::vector<smt::Bool> assertions,
                                    std::vector<std::string> vars) {
  return solveWithSymbols(enc_, name, std::move(assertions), std::move(vars));
}

std::string LoopChecker::iteration(const smt::Model &m) const {
  return "iteration " + loop_.loop.var + " = " + std::to_string(m.at("it"));
}

std::string LoopChecker::valueOf(const Extent &e, const Counterexample &c) const {
  if (auto v = e.evaluate(c.bindings))
    return std::to_string(*v);
  return e.str();
}

Outcome LoopChecker::checkView(const SliceView &view) {
  const TensorView &v = fusion_.tensor(view.view), &b = fusion_.tensor(view.base);
  smt::Int s = ctx_.intVar("it"), d = ctx_.intVar("d");
  ElementTerms y = enc_.element(v, "y", /*useRoot=*/false);
  ElementTerms x = enc_.element(b, "x", /*useRoot=*/false);
  std::set<int64_t> devices;
  for (const TensorView *t : {&v, &b})
    if (t->mesh)
      devices.insert(t->mesh->devices().begin(), t->mesh->devices().end());
    else
      devices.insert(universe_.begin(), universe_.end());
  std::vector<smt::Bool> a{constraints(), inLoop(s), y.inRange, x.inRange,
                           isAmong(ctx_, {devices.begin(), devices.end()}, d)};
  smt::Int index = view.swizzled ? swizzledSlot(view, s, d) : s;
  for (size_t k = 0, j = 0; k < x.baseVars.size(); ++k)
    a.push_back(k == view.position ? x.baseVars[k] == index : x.baseVars[k] == y.baseVars[j++]);
  smt::Bool holdsSlice = enc_.holds(v, d, y), holdsBase = enc_.holds(b, d, x);
  a.push_back(differ(holdsSlice, holdsBase));
  smt::Int heldFlag = ctx_.intVar("hs"); // which of the two d holds, for the message
  a.push_back(heldFlag == ctx_.ite(holdsSlice, ctx_.intVal(1), ctx_.intVal(0)));
  std::vector<std::string> vars{"it", "d", "hs"};
  vars.insert(vars.end(), y.baseNames.begin(), y.baseNames.end());
  vars.insert(vars.end(), x.baseNames.begin(), x.baseNames.end());
  smt::QueryResult r = solve("loop-view-slice", a, vars);
  if (auto decided = provedOrUnknown(r, "loop-view-slice"))
    return *decided;
  Counterexample c = counterexampleOf(r.model, enc_, "");
  std::string slice = v.name() + indexStr(c.consumerIndex);
  std::string whole = b.name() + indexStr(c.producerIndex);
  bool sliceHeld = r.model.at("hs") == 1;
  c.message = iteration(r.model) + ": " + slice + " is " + whole + " (" + v.name() +
              " is the slice of " + b.name() + " at index " + std::to_string(r.model.at("it")) +
              "), but device " + std::to_string(c.device) + " holds " +
              (sliceHeld ? slice + " and not " + whole : whole + " and not " + slice) + ": " +
              v.name() + " is not sharded as its part of " + b.name();
  return Outcome::refuted(std::move(c));
}

Outcome LoopChecker::checkReadsInRange(const SliceView &in) {
  smt::Int s = ctx_.intVar("it");
  smt::Int extent = enc_.extent(in.axis);
  smt::QueryResult r =
      solve("loop-reads-in-range", {constraints(), inLoop(s), !(0 <= s && s < extent)}, {"it"});
  if (auto decided = provedOrUnknown(r, "loop-reads-in-range"))
    return *decided;
  Counterexample c = counterexampleOf(r.model, enc_, "");
  const IterDomain &axis = fusion_.id(in.axis);
  c.message = iteration(r.model) + " reads index " + std::to_string(r.model.at("it")) + " of " +
              fusion_.tensor(in.base).name() + "'s axis " + axis.str() + ", whose extent is " +
              valueOf(axis.extent, c) + " (the loop `" + loop_.loop.header + "` runs " +
              loop_.loop.var + " from " + valueOf(loop_.loop.lo, c) + " to " +
              valueOf(loop_.loop.hi, c) + ")";
  return Outcome::refuted(std::move(c));
}

smt::Int LoopChecker::swizzledSlot(const SliceView &view, const smt::Int &s, const smt::Int &d) {
  const TensorView &base = fusion_.tensor(view.base);
  if (!base.mesh || base.mesh->rank() != 1)
    throw Unsupported("the swizzled slice " + fusion_.tensor(view.view).name() +
                      " is not of a tensor on a 1-D mesh");
  smt::Int t = enc_.coordinate(d, *base.mesh, ParallelType::DIDx);
  // nvFuser's ShardByStream: (index + team index) % team size; indices
  // are never negative here (the loop's lower bound is checked apart).
  return ctx_.mod(s + t, ctx_.intVal(base.mesh->size()));
}

Outcome LoopChecker::checkSwizzledCover() {
  const SliceView &out = *loop_.write;
  smt::Int lo = bound(loop_.loop.lo, std::nullopt), hi = bound(loop_.loop.hi, loop_.loop.rangeId);
  smt::Int extent = enc_.extent(out.axis);
  int64_t team = fusion_.tensor(out.base).mesh->size();
  smt::Int nlo = ctx_.intVar("lo"), nhi = ctx_.intVar("hi"), ne = ctx_.intVar("e");
  // Device t writes the slots (s + t) % team of consecutive s: every slot
  // once exactly when the loop runs `team` iterations from 0 or more over an
  // axis of `team` slots.
  smt::QueryResult r = solve("loop-covers-output",
                             {constraints(), nlo == lo, nhi == hi, ne == extent,
                              !(0 <= lo && hi == lo + team && extent == ctx_.intVal(team))},
                             {"lo", "hi", "e"});
  if (auto decided = provedOrUnknown(r, "loop-covers-output"))
    return *decided;
  Counterexample c = counterexampleOf(r.model, enc_, "");
  int64_t l = r.model.at("lo"), h = r.model.at("hi"), e = r.model.at("e");
  std::string base = fusion_.tensor(out.base).name();
  std::string range = "the loop `" + loop_.loop.header + "` runs " + loop_.loop.var + " from " +
                      std::to_string(l) + " to " + std::to_string(h) + ", and " + base +
                      "'s swizzled stream axis " + fusion_.id(out.axis).str() + " has extent " +
                      std::to_string(e) + " on a team of " + std::to_string(team);
  // The model's bounds may be any 64-bit values: l + team past them is no iteration short.
  std::optional<int64_t> full = checkedAdd(l, team);
  bool missing = full && h < *full;
  int64_t it = missing ? h : (full ? *full : h);
  c.message = "iteration " + loop_.loop.var + " = " + std::to_string(it) +
              (missing ? " is missing: a slot of " + base + " is written by no iteration ("
                       : " writes a slot of " + base + " that another iteration writes (") +
              range + ")";
  if (l >= 0 && full && h == *full)
    c.message = base + "'s swizzled stream axis has " + std::to_string(e) +
                " slots, but nvFuser's ShardByStream takes the slot modulo the team size " +
                std::to_string(team) + " (" + range + ")";
  if (l < 0) // ShardByStream's slot of a negative index is no slot
    c.message = "iteration " + loop_.loop.var + " = " + std::to_string(l) +
                " takes a negative stream index (" + range + ")";
  return Outcome::refuted(std::move(c));
}

Outcome LoopChecker::checkCoversOutput() {
  const SliceView &out = *loop_.write;
  if (out.swizzled)
    return checkSwizzledCover();
  smt::Int s = ctx_.intVar("it");
  smt::Int extent = enc_.extent(out.axis);
  smt::Bool inAxis = 0 <= s && s < extent;
  smt::QueryResult r =
      solve("loop-covers-output", {constraints(), differ(inLoop(s), inAxis)}, {"it"});
  if (auto decided = provedOrUnknown(r, "loop-covers-output"))
    return *decided;
  Counterexample c = counterexampleOf(r.model, enc_, "");
  const IterDomain &axis = fusion_.id(out.axis);
  std::string index = std::to_string(r.model.at("it"));
  std::string base = fusion_.tensor(out.base).name();
  std::string range = "the loop `" + loop_.loop.header + "` runs " + loop_.loop.var + " from " +
                      valueOf(loop_.loop.lo, c) + " to " + valueOf(loop_.loop.hi, c) + ", and " +
                      base + "'s axis " + axis.str() + " has extent " + valueOf(axis.extent, c);
  int64_t it = r.model.at("it");
  auto lo = loop_.loop.lo.evaluate(c.bindings), hi = loop_.loop.hi.evaluate(c.bindings);
  bool ran = lo && hi && *lo <= it && it < *hi;
  c.message = ran ? iteration(r.model) + " writes index " + index + " of " + base +
                        ", past its axis (" + range + ")"
                  : iteration(r.model) + " is missing: index " + index + " of " + base +
                        " is written by no iteration (" + range + ")";
  return Outcome::refuted(std::move(c));
}

Outcome LoopChecker::checkConstraints() {
  smt::QueryResult r = solve("loop-constraints-satisfiable", {constraints()}, {});
  if (r.answer == smt::Answer::Unsat)
    return Outcome::unsupported("no sizes satisfy the constraints of the loop's slices");
  if (r.answer == smt::Answer::Unknown)
    return Outcome::unknown("loop-constraints-satisfiable: " + r.reason);
  return Outcome::proved();
}

Outcome LoopChecker::check() {
  try {
    Outcome o = checkConstraints();
    for (const SliceView &read : loop_.reads)
      if (o.kind == Outcome::Kind::Proved)
        o = checkReadView(read);
    if (o.kind == Outcome::Kind::Proved && loop_.write)
      o = checkView(*loop_.write);
    if (o.kind == Outcome::Kind::Proved && loop_.write)
      o = checkCoversOutput();
    return o;
  } catch (const Unsupported &u) {
    return Outcome::unsupported(u.what());
  }
}

Outcome LoopChecker::checkReadView(const SliceView &read) {
  try {
    Outcome o = checkConstraints();
    if (o.kind == Outcome::Kind::Proved)
      o = checkView(read);
    if (o.kind == Outcome::Kind::Proved)
      o = checkReadsInRange(read);
    return o;
  } catch (const Unsupported &u) {
    return Outcome::unsupported(u.what());
  }
}

std::vector<std::string> LoopChecker::assumptions() const {
  return {enc_.assumptions().begin(), enc_.assumptions().end()};
}

} // namespace shardcheck
