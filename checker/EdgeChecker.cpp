// The named SMT queries about one edge; see EdgeChecker.h and
// docs/semantics.md (Lowerings) for what each query states.
#include "checker/EdgeChecker.h"

#include "checker/ExprChecker.h"

#include <algorithm>
#include <numeric>
#include <set>

namespace shardcheck {

const char *outcomeKindName(Outcome::Kind k) {
  switch (k) {
  case Outcome::Kind::Proved:
    return "proved";
  case Outcome::Kind::Refuted:
    return "refuted";
  case Outcome::Kind::Unknown:
    return "unknown";
  case Outcome::Kind::Unsupported:
    return "unsupported";
  }
  return "unknown";
}

namespace {

/// The most producer devices a counterexample names as holders.
constexpr size_t kMaxListedHolders = 64;

std::string indexStr(const std::vector<int64_t> &v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i)
    s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

/// Devices that receive data in a team, per kind. A Broadcast or Scatter
/// root listed in its team only sends when it is outside the consumer's
/// devices (nvFuser lists it there).
std::vector<int64_t> receivers(const Lowering &l, const Team &team,
                               const std::vector<int64_t> &consumerDevices) {
  switch (l.kind) {
  case CommKind::Broadcast:
  case CommKind::Scatter: {
    std::vector<int64_t> r;
    for (int64_t d : team.devices)
      if (!team.root || d != *team.root ||
          std::count(consumerDevices.begin(), consumerDevices.end(), d))
        r.push_back(d);
    return r;
  }
  case CommKind::Gather:
  case CommKind::Reduce:
    return team.root ? std::vector<int64_t>{*team.root} : std::vector<int64_t>{};
  case CommKind::SendRecv: {
    std::vector<int64_t> r;
    for (const auto &[src, dst] : team.pairs)
      r.push_back(dst);
    return r;
  }
  default:
    return team.devices;
  }
}

/// Devices whose producer buffers a team reads. Members of a reduction that
/// hold nothing contribute zero partials, so they need no producer buffer.
std::vector<int64_t> senders(const Lowering &l, const Team &team) {
  switch (l.kind) {
  case CommKind::Allreduce:
  case CommKind::Reduce:
  case CommKind::ReduceScatter:
    // nvFuser's runtime hands every member's own producer buffer to the
    // collective, so every member must have one.
    if (l.reduceInput == Lowering::ReduceInput::ProducerBuffer)
      return team.devices;
    return {};
  case CommKind::Scatter:
  case CommKind::Broadcast:
    return team.root ? std::vector<int64_t>{*team.root} : std::vector<int64_t>{};
  case CommKind::SendRecv: {
    std::vector<int64_t> r;
    for (const auto &[src, dst] : team.pairs)
      r.push_back(src);
    return r;
  }
  default:
    return team.devices;
  }
}

} // namespace

EdgeChecker::EdgeChecker(const Fusion &fusion, const FusionEdge &edge, smt::Context &ctx,
                         std::vector<int64_t> universe)
    : fusion_(fusion), edge_(edge), producer_(fusion.tensor(edge.producer)),
      consumer_(fusion.tensor(edge.consumer)), ctx_(ctx), enc_(ctx, fusion),
      universe_(std::move(universe)) {}

std::vector<int64_t> EdgeChecker::consumerDevices() const {
  return consumer_.mesh ? consumer_.mesh->devices() : universe_;
}

std::vector<int64_t> EdgeChecker::producerDevices() const {
  return producer_.mesh ? producer_.mesh->devices() : universe_;
}

std::vector<std::string> EdgeChecker::assumptions() const {
  return {enc_.assumptions().begin(), enc_.assumptions().end()};
}

bool EdgeChecker::isReductionEdge() const {
  return shardcheck::isReductionEdge(fusion_, edge_);
}

smt::Bool EdgeChecker::baseConstraints() {
  return enc_.impliedConstraints(producer_) && enc_.impliedConstraints(consumer_) &&
         enc_.edgeExtentConstraints(edge_);
}

ElementTerms EdgeChecker::neededElement(const ElementTerms &y, const std::string &prefix,
                                        std::vector<smt::Bool> &constraints) {
  ElementTerms x = enc_.element(producer_, prefix, /*useRoot=*/false);
  constraints.push_back(x.inRange);
  for (size_t k = 0; k < x.baseIds.size(); ++k) {
    IdNum q = x.baseIds[k];
    auto c = edge_.map.consumerOf(q);
    if (fusion_.id(q).isBroadcast())
      continue; // Index 0, fixed by inRange.
    if (!c)
      throw Unsupported(producer_.name() + "'s axis " + fusion_.id(q).str() +
                        " maps to no axis of " + consumer_.name());
    if (fusion_.id(*c).isReduction())
      continue; // Ranges over the reduced axis.
    constraints.push_back(x.baseVars[k] == enc_.indexOf(y, *c));
  }
  return x;
}

namespace {

/// Names of the element variables of an ElementTerms.
void addNames(std::vector<std::string> &vars, const ElementTerms &e) {
  vars.insert(vars.end(), e.baseNames.begin(), e.baseNames.end());
}

smt::Int sumOf(smt::Context &ctx, const std::vector<std::string> &vars) {
  smt::Int s = ctx.intVal(0);
  for (const auto &v : vars)
    s = s + ctx.intVar(v);
  return s;
}

} // namespace

smt::Int EdgeChecker::deviceAmong(const std::string &name, const std::vector<int64_t> &devices,
                                  std::vector<smt::Bool> &constraints) {
  smt::Int d = ctx_.intVar(name);
  constraints.push_back(isAmong(ctx_, devices, d));
  return d;
}

ElementTerms EdgeChecker::heldConsumerElement(const smt::Int &device,
                                              std::vector<smt::Bool> &constraints) {
  ElementTerms y = enc_.element(consumer_, "y", /*useRoot=*/true);
  constraints.push_back(y.inRange);
  constraints.push_back(enc_.holds(consumer_, device, y));
  return y;
}

smt::QueryResult EdgeChecker::solve(const std::string &name, std::vector<smt::Bool> assertions,
                                    std::vector<std::string> vars, bool minimizeSizes) {
  assertions.push_back(baseConstraints());
  assertions.push_back(enc_.symbolsPositive()); // last: every symbol exists by now
  auto symbols = enc_.symbolVars();
  vars.insert(vars.end(), symbols.begin(), symbols.end());
  if (!minimizeSizes || symbols.empty())
    return ctx_.check(name, assertions, vars);
  return ctx_.checkMinimized(name, assertions, vars, sumOf(ctx_, symbols));
}

Counterexample counterexampleOf(const smt::Model &m, const Encoder &enc, std::string message) {
  Counterexample c;
  for (const auto &[canonical, user] : enc.symbolNames())
    if (m.count(canonical))
      c.bindings[user] = m.at(canonical);
  if (m.count("d"))
    c.device = m.at("d");
  for (size_t i = 0; m.count("y" + std::to_string(i)); ++i)
    c.consumerIndex.push_back(m.at("y" + std::to_string(i)));
  for (size_t i = 0; m.count("x" + std::to_string(i)); ++i)
    c.producerIndex.push_back(m.at("x" + std::to_string(i)));
  c.message = std::move(message);
  return c;
}

Counterexample EdgeChecker::makeCounterexample(const smt::Model &m, const std::string &message) {
  Counterexample c = counterexampleOf(m, enc_, message);
  auto producers = producerDevices();
  for (size_t i = 0; i < producers.size(); ++i)
    if (m.count("h" + std::to_string(i)) && m.at("h" + std::to_string(i)) == 1)
      c.holders.push_back(producers[i]);
  if (m.count("t"))
    c.offset = m.at("t");
  return c;
}

Outcome EdgeChecker::checkConstraints() {
  if (constraintsOutcome_)
    return *constraintsOutcome_;
  std::vector<smt::Bool> a{baseConstraints()};
  a.push_back(enc_.symbolsPositive());
  auto r = ctx_.check("constraints-satisfiable", a, {});
  if (r.answer == smt::Answer::Unsat) {
    std::string list;
    for (const auto &s : enc_.assumptions())
      list += (list.empty() ? "" : ", ") + s;
    constraintsOutcome_ =
        Outcome::unsupported("no extents satisfy the constraints the fusion implies" +
                             (list.empty() ? std::string() : " (" + list + ")"));
  } else if (r.answer == smt::Answer::Unknown) {
    constraintsOutcome_ = Outcome::unknown("constraints-satisfiable: " + r.reason);
  } else {
    constraintsOutcome_ = Outcome::proved();
  }
  return *constraintsOutcome_;
}

Outcome EdgeChecker::checkLocal() {
  try {
    if (edge_.map.unsupported)
      return Outcome::unsupported(*edge_.map.unsupported);
    Outcome c = checkConstraints();
    if (c.kind != Outcome::Kind::Proved)
      return c;
    std::vector<smt::Bool> a;
    smt::Int d = deviceAmong("d", consumerDevices(), a);
    ElementTerms y = heldConsumerElement(d, a);
    ElementTerms x = neededElement(y, "x", a);
    a.push_back(!enc_.holds(producer_, d, x));
    auto producers = producerDevices();
    // The holders are for the counterexample only: one variable per device,
    // so they are not asked for on large meshes.
    const bool listHolders = producers.size() <= kMaxListedHolders;
    std::vector<std::string> vars{"d"};
    for (size_t i = 0; listHolders && i < producers.size(); ++i) {
      smt::Int h = ctx_.intVar("h" + std::to_string(i));
      a.push_back(h == ctx_.ite(enc_.holds(producer_, ctx_.intVal(producers[i]), x), ctx_.intVal(1),
                                ctx_.intVal(0)));
      vars.push_back("h" + std::to_string(i));
    }
    addNames(vars, y);
    addNames(vars, x);
    auto r = solve("edge-local", a, vars, /*minimizeSizes=*/true);
    if (r.answer == smt::Answer::Unsat)
      return Outcome::proved();
    if (r.answer == smt::Answer::Unknown)
      return Outcome::unknown("edge-local: " + r.reason);
    Counterexample cex = makeCounterexample(r.model, "");
    cex.message = "device " + std::to_string(cex.device) + " holds " + consumer_.name() +
                  indexStr(cex.consumerIndex) + ", which needs " + producer_.name() +
                  indexStr(cex.producerIndex) + ", but does not hold it; " +
                  (!listHolders ? "its holders are not listed on a mesh of more than " +
                                      std::to_string(kMaxListedHolders) + " devices"
                   : cex.holders.empty() ? std::string("no device holds it")
                                         : "it is held by devices " + devicesStr(cex.holders));
    return Outcome::refuted(std::move(cex));
  } catch (const Unsupported &u) {
    return Outcome::unsupported(u.what());
  }
}

Outcome EdgeChecker::checkUncoveredDevices(const Lowering &lowering) {
  std::set<int64_t> covered;
  for (const auto &team : lowering.teams)
    for (int64_t r : receivers(lowering, team, consumerDevices()))
      covered.insert(r);
  std::vector<int64_t> uncovered;
  for (int64_t dev : consumerDevices())
    if (!covered.count(dev))
      uncovered.push_back(dev);
  if (uncovered.empty())
    return Outcome::proved();
  std::vector<smt::Bool> a;
  smt::Int d = deviceAmong("d", uncovered, a);
  ElementTerms y = heldConsumerElement(d, a);
  ElementTerms x = neededElement(y, "x", a);
  a.push_back(!enc_.holds(producer_, d, x));
  std::vector<std::string> vars{"d"};
  addNames(vars, y);
  addNames(vars, x);
  auto r = solve("lowering-uncovered-devices", a, vars);
  if (r.answer == smt::Answer::Unsat)
    return Outcome::proved();
  if (r.answer == smt::Answer::Unknown)
    return Outcome::unknown("lowering-uncovered-devices: " + r.reason);
  Counterexample cex = makeCounterexample(r.model, "");
  cex.message = "device " + std::to_string(cex.device) + " takes part in no team of the " +
                lowering.str() + " but needs " + producer_.name() + indexStr(cex.producerIndex) +
                " for " + consumer_.name() + indexStr(cex.consumerIndex) +
                ", which it does not hold";
  return Outcome::refuted(std::move(cex));
}

Outcome EdgeChecker::checkEveryDeviceWritten(const Lowering &lowering) {
  std::set<int64_t> covered;
  for (const auto &team : lowering.teams)
    for (int64_t r : receivers(lowering, team, consumerDevices()))
      covered.insert(r);
  // A Broadcast or Scatter root listed in the consumer's mesh writes its own
  // output too (receivers() counts it).
  for (int64_t dev : consumerDevices())
    if (!covered.count(dev)) {
      Counterexample cex;
      cex.device = dev;
      cex.message = "device " + std::to_string(dev) + " holds " + consumer_.name() + " but " +
                    lowering.str() +
                    " writes nothing there, and nvFuser's runtime fills no "
                    "output outside the collective";
      return Outcome::refuted(std::move(cex));
    }
  return Outcome::proved();
}

Outcome EdgeChecker::checkCounts(const Lowering &lowering, const Team &team) {
  CommKind k = lowering.kind;
  if (isReductionComm(k) && lowering.reduceInput == Lowering::ReduceInput::Partials)
    return Outcome::proved(); // Partials are computed locally in the consumer's layout.
  auto n = static_cast<int64_t>(team.devices.size());
  smt::Int nP = ctx_.intVar("nP"), nC = ctx_.intVar("nC");
  std::vector<smt::Bool> a{nP == enc_.count(producer_), nC == enc_.count(consumer_)};
  smt::Bool ok = ctx_.boolVal(true);
  std::string need;
  switch (k) {
  case CommKind::Allgather:
  case CommKind::Gather:
    ok = nC == nP * n;
    need = "an output of " + std::to_string(n) + " x ";
    break;
  case CommKind::Scatter:
  case CommKind::ReduceScatter:
    ok = nP == nC * n;
    need = "an input of " + std::to_string(n) + " x ";
    break;
  case CommKind::AllToAll:
    ok = nP == nC && ctx_.mod(nC, ctx_.intVal(n)) == 0;
    break;
  default: // Broadcast, SendRecv, alias: same-size buffers.
    ok = nP == nC;
    break;
  }
  a.push_back(!ok);
  std::vector<std::string> vars{"nP", "nC"};
  auto r = solve("lowering-counts", a, vars, /*minimizeSizes=*/true);
  if (r.answer == smt::Answer::Unsat)
    return Outcome::proved();
  if (r.answer == smt::Answer::Unknown)
    return Outcome::unknown("lowering-counts: " + r.reason);
  int64_t p = r.model.at("nP"), c = r.model.at("nC");
  Counterexample cex = makeCounterexample(r.model, "");
  std::string teamStr = " over team " + devicesStr(team.devices);
  switch (k) {
  case CommKind::Allgather:
  case CommKind::Gather:
    cex.message = std::string(commKindName(k)) + teamStr + " needs " + need + std::to_string(p) +
                  " elements but " + consumer_.name() + " holds " + std::to_string(c) +
                  " on each device";
    break;
  case CommKind::Scatter:
  case CommKind::ReduceScatter:
    cex.message = std::string(commKindName(k)) + teamStr + " needs " + need + std::to_string(c) +
                  " elements but " + producer_.name() + " holds " + std::to_string(p) +
                  (k == CommKind::Scatter ? " on the root" : " on each member");
    break;
  case CommKind::AllToAll:
    // With a local permute the plan packs per destination and exchanges
    // chunks of any size; nvFuser's AllToAll needs equal chunks.
    if (lowering.localPermute)
      cex.rule = "equal-chunks";
    cex.message = "AllToAll" + teamStr + " needs equal buffers divisible by " + std::to_string(n) +
                  " but " + producer_.name() + " holds " + std::to_string(p) + " and " +
                  consumer_.name() + " " + std::to_string(c) + " elements per device";
    break;
  default:
    cex.message = std::string(lowering.kind == CommKind::Alias ? "alias" : commKindName(k)) +
                  " needs buffers of equal size but " + producer_.name() + " holds " +
                  std::to_string(p) + " and " + consumer_.name() + " " + std::to_string(c) +
                  " elements per device";
  }
  return Outcome::refuted(std::move(cex));
}

std::pair<smt::Int, smt::Int> EdgeChecker::slotSource(const Lowering &lowering, const Team &team,
                                                      const smt::Int &d, const smt::Int &t) {
  const auto &members = team.devices;
  auto n = static_cast<int64_t>(members.size());
  auto member = [&](const smt::Int &i) { return memberAt(ctx_, members, i); };
  smt::Int rank = rankIn(ctx_, members, d);
  switch (lowering.kind) {
  case CommKind::Allgather:
  case CommKind::Gather: {
    smt::Int chunk = enc_.count(producer_);
    return {member(ctx_.div(t, chunk)), ctx_.mod(t, chunk)};
  }
  case CommKind::Scatter:
    return {ctx_.intVal(*team.root), rank * enc_.count(consumer_) + t};
  case CommKind::Broadcast:
    return {ctx_.intVal(*team.root), t};
  case CommKind::AllToAll: {
    smt::Int chunk = ctx_.div(enc_.count(consumer_), ctx_.intVal(n));
    return {member(ctx_.div(t, chunk)), rank * chunk + ctx_.mod(t, chunk)};
  }
  case CommKind::SendRecv: {
    smt::Int s = ctx_.intVal(-1);
    for (const auto &[from, to] : team.pairs)
      s = ctx_.ite(d == to, ctx_.intVal(from), s);
    return {s, t};
  }
  default: // alias
    return {d, t};
  }
}

EdgeChecker::SlotQuery EdgeChecker::slotQuery(const Lowering &lowering, const Team &team,
                                              std::vector<smt::Bool> &a) {
  smt::Int d = deviceAmong("d", receivers(lowering, team, consumerDevices()), a);
  ElementTerms y = heldConsumerElement(d, a);
  ElementTerms x = neededElement(y, "x", a);
  smt::Int t = ctx_.intVar("t");
  a.push_back(t == enc_.offset(consumer_, y));
  auto [src, srcOffset] = slotSource(lowering, team, d, t);
  smt::Int srcVar = ctx_.intVar("src");
  a.push_back(srcVar == src);
  return SlotQuery{y, x, srcVar, srcOffset};
}

Outcome EdgeChecker::checkSlots(const Lowering &lowering, const Team &team) {
  std::vector<smt::Bool> a;
  auto [y, x, srcVar, srcOffset] = slotQuery(lowering, team, a);
  ElementTerms z = enc_.element(producer_, "z", false);
  a.push_back(z.inRange);
  a.push_back(enc_.holds(producer_, srcVar, z));
  a.push_back(enc_.offset(producer_, z) == srcOffset);
  std::vector<smt::Bool> differs;
  for (size_t i = 0; i < z.baseVars.size(); ++i)
    differs.push_back(z.baseVars[i] != x.baseVars[i]);
  a.push_back(ctx_.any(differs));
  std::vector<std::string> vars{"d", "t", "src"};
  addNames(vars, y);
  addNames(vars, x);
  addNames(vars, z);
  auto r = solve("lowering-slots", a, vars);
  if (r.answer == smt::Answer::Unsat)
    return Outcome::proved();
  if (r.answer == smt::Answer::Unknown)
    return Outcome::unknown("lowering-slots: " + r.reason);
  Counterexample cex = makeCounterexample(r.model, "");
  std::vector<int64_t> delivered;
  for (size_t i = 0; r.model.count("z" + std::to_string(i)); ++i)
    delivered.push_back(r.model.at("z" + std::to_string(i)));
  cex.message = "device " + std::to_string(cex.device) + " expects " + producer_.name() +
                indexStr(cex.producerIndex) + " at offset " + std::to_string(r.model.at("t")) +
                " of its " + consumer_.name() + " buffer (for " + consumer_.name() +
                indexStr(cex.consumerIndex) + ") but " + lowering.str() + " delivers " +
                producer_.name() + indexStr(delivered) + " from device " +
                std::to_string(r.model.at("src"));
  return Outcome::refuted(std::move(cex));
}

Outcome EdgeChecker::checkPartials(const Lowering &lowering, const Team &team) {
  const auto &members = team.devices;
  // Query 1 (Allreduce only): every member's slot t holds the same consumer
  // element, so that summing slot t sums partials of one element.
  std::vector<int64_t> recv = receivers(lowering, team, consumerDevices());
  auto receiverConstraint = [&](const smt::Int &d) {
    std::vector<smt::Bool> in;
    for (int64_t dev : recv)
      in.push_back(d == dev);
    return ctx_.any(in);
  };
  if (lowering.kind == CommKind::Allreduce) {
    std::vector<smt::Bool> a;
    smt::Int d = ctx_.intVar("d"), m = ctx_.intVar("m");
    a.push_back(receiverConstraint(d));
    std::vector<smt::Bool> mIn;
    for (int64_t dev : members)
      mIn.push_back(m == dev);
    a.push_back(ctx_.any(mIn));
    ElementTerms y = enc_.element(consumer_, "y", true);
    ElementTerms z = enc_.element(consumer_, "w", true);
    a.push_back(y.inRange && z.inRange);
    if (lowering.padded) {
      // A member's slot t may be padding, whose partial is the identity, so
      // a member without y at slot t would drop its part of y: every member
      // must hold y itself (offsets are the same on every device).
      a.push_back(enc_.holds(consumer_, d, y) && !enc_.holds(consumer_, m, y));
    } else {
      a.push_back(enc_.holds(consumer_, d, y) && enc_.holds(consumer_, m, z));
      a.push_back(enc_.offset(consumer_, y) == enc_.offset(consumer_, z));
      std::vector<smt::Bool> differs;
      for (size_t i = 0; i < y.baseVars.size(); ++i)
        differs.push_back(y.baseVars[i] != z.baseVars[i]);
      a.push_back(ctx_.any(differs));
    }
    std::vector<std::string> vars{"d", "m"};
    addNames(vars, y);
    addNames(vars, z);
    const std::string name =
        lowering.padded ? "lowering-padded-partials-agree" : "lowering-partials-agree";
    auto r = solve(name, a, vars);
    if (r.answer == smt::Answer::Unknown)
      return Outcome::unknown(name + ": " + r.reason);
    if (r.answer == smt::Answer::Sat) {
      Counterexample cex = makeCounterexample(r.model, "");
      cex.message = std::string(lowering.padded ? "Allreduce+pad" : "Allreduce") + " over team " +
                    devicesStr(members) + " sums device " + std::to_string(r.model.at("m")) +
                    "'s partial of " +
                    (lowering.padded ? "another element or padding"
                                     : "a different " + consumer_.name() + " element") +
                    " into device " + std::to_string(cex.device) + "'s " + consumer_.name() +
                    indexStr(cex.consumerIndex);
      return Outcome::refuted(std::move(cex));
    }
  }
  // Query 2: every producer element the consumer element needs is summed by
  // exactly one member.
  std::vector<smt::Bool> a;
  smt::Int d = ctx_.intVar("d");
  a.push_back(receiverConstraint(d));
  ElementTerms y = enc_.element(consumer_, "y", true);
  a.push_back(y.inRange);
  a.push_back(enc_.holds(consumer_, d, y));
  ElementTerms x = neededElement(y, "x", a);
  smt::Int contributors = ctx_.intVal(0);
  std::vector<std::string> vars{"d"};
  auto producers = producerDevices();
  for (size_t i = 0; i < producers.size(); ++i) {
    bool isMember = std::count(members.begin(), members.end(), producers[i]) > 0;
    smt::Int h = ctx_.intVar("h" + std::to_string(i));
    smt::Bool held =
        isMember ? enc_.holds(producer_, ctx_.intVal(producers[i]), x) : ctx_.boolVal(false);
    a.push_back(h == ctx_.ite(held, ctx_.intVal(1), ctx_.intVal(0)));
    contributors = contributors + h;
    vars.push_back("h" + std::to_string(i));
  }
  a.push_back(contributors != ctx_.intVal(1));
  addNames(vars, y);
  addNames(vars, x);
  auto r = solve("lowering-partials-exact-once", a, vars);
  if (r.answer == smt::Answer::Unsat)
    return Outcome::proved();
  if (r.answer == smt::Answer::Unknown)
    return Outcome::unknown("lowering-partials-exact-once: " + r.reason);
  Counterexample cex = makeCounterexample(r.model, "");
  cex.message = producer_.name() + indexStr(cex.producerIndex) + " is summed into " +
                consumer_.name() + indexStr(cex.consumerIndex) + " on device " +
                std::to_string(cex.device) + " by " + std::to_string(cex.holders.size()) +
                " members of team " + devicesStr(members) +
                (cex.holders.empty() ? std::string() : " " + devicesStr(cex.holders)) +
                "; it must be counted exactly once";
  return Outcome::refuted(std::move(cex));
}

Outcome EdgeChecker::checkPermuteComposite(const Lowering &lowering, const Team &team) {
  // The collective fills a temporary (AllToAll: from packs made per
  // destination); a local copy then places each element. Correct iff every
  // element a receiver needs is held by some member of its team (and, for
  // AllToAll, every held element has exactly one destination).
  const auto &members = team.devices;
  std::vector<smt::Bool> a;
  smt::Int d = deviceAmong("d", members, a);
  ElementTerms y = heldConsumerElement(d, a);
  ElementTerms x = neededElement(y, "x", a);
  for (int64_t m : members)
    a.push_back(!enc_.holds(producer_, ctx_.intVal(m), x));
  std::vector<std::string> vars{"d"};
  addNames(vars, y);
  addNames(vars, x);
  auto r = solve("lowering-permute-coverage", a, vars);
  if (r.answer == smt::Answer::Unsat)
    return lowering.kind == CommKind::AllToAll ? checkUniqueDestination(team) : Outcome::proved();
  if (r.answer == smt::Answer::Unknown)
    return Outcome::unknown("lowering-permute-coverage: " + r.reason);
  Counterexample cex = makeCounterexample(r.model, "");
  cex.message = "no member of team " + devicesStr(members) + " sends " + producer_.name() +
                indexStr(cex.producerIndex) + " to device " + std::to_string(cex.device) +
                ", which needs it for " + consumer_.name() + indexStr(cex.consumerIndex);
  return Outcome::refuted(std::move(cex));
}

Outcome EdgeChecker::checkPaddedSources(const Lowering &lowering, const Team &team) {
  // Allgather+pad: member i's padded buffer (kP slots, padding holding
  // nothing) is chunk i of the temporary, and the unpad copy reads each
  // consumer element y at the slot i * kP + offset(x) of the member i that
  // holds the element x it needs. Correct iff for every receiver and every
  // y it holds, some member holds x at a slot inside its padded buffer: a
  // valid slot that is not padding.
  const auto &members = team.devices;
  std::vector<smt::Bool> a;
  smt::Int d = deviceAmong("d", receivers(lowering, team, consumerDevices()), a);
  ElementTerms y = heldConsumerElement(d, a);
  ElementTerms x = neededElement(y, "x", a);
  smt::Int kP = enc_.count(producer_), slot = enc_.offset(producer_, x);
  smt::Bool inChunk = 0 <= slot && slot < kP;
  for (int64_t m : members)
    a.push_back(!(enc_.holds(producer_, ctx_.intVal(m), x) && inChunk));
  std::vector<std::string> vars{"d"};
  addNames(vars, y);
  addNames(vars, x);
  auto r = solve("lowering-padded-sources", a, vars, /*minimizeSizes=*/true);
  if (r.answer == smt::Answer::Unsat)
    return Outcome::proved();
  if (r.answer == smt::Answer::Unknown)
    return Outcome::unknown("lowering-padded-sources: " + r.reason);
  Counterexample cex = makeCounterexample(r.model, "");
  cex.message = "no member of team " + devicesStr(members) + " holds " + producer_.name() +
                indexStr(cex.producerIndex) + " in its padded buffer, so " + lowering.str() +
                " does not deliver it to device " + std::to_string(cex.device) +
                ", which needs it for " + consumer_.name() + indexStr(cex.consumerIndex);
  return Outcome::refuted(std::move(cex));
}

Outcome EdgeChecker::checkPaddedSlots(const Lowering &lowering, const Team &team) {
  // A padded collective moved slot for slot: SendRecv+pad copies its
  // sender's padded buffer (the counts query made the padded counts equal);
  // a compiler's Allgather+pad or AllToAll+pad (a DTensor collective on the
  // padded chunks, docs/dtensor.md) writes member i's padded buffer as chunk
  // i. Correct iff for every receiver d and every y it holds at offset t, the
  // slot the collective copies to t (slotSource) holds the element x that y
  // needs: a padding slot holds nothing, so the slot query alone (nothing
  // else at that slot) would not do.
  if (isReductionEdge())
    return Outcome::unsupported(lowering.str() + " does not reduce");
  std::vector<smt::Bool> a;
  auto [y, x, srcVar, srcOffset] = slotQuery(lowering, team, a);
  smt::Int srcSlot = ctx_.intVar("s");
  a.push_back(srcSlot == srcOffset);
  a.push_back(!(enc_.holds(producer_, srcVar, x) && enc_.offset(producer_, x) == srcSlot));
  std::vector<std::string> vars{"d", "t", "src", "s"};
  addNames(vars, y);
  addNames(vars, x);
  const bool pairs = lowering.kind == CommKind::SendRecv;
  const std::string query = pairs ? "lowering-padded-pairs" : "lowering-padded-slots";
  auto r = solve(query, a, vars, /*minimizeSizes=*/true);
  if (r.answer == smt::Answer::Unsat)
    return Outcome::proved();
  if (r.answer == smt::Answer::Unknown)
    return Outcome::unknown(query + ": " + r.reason);
  Counterexample cex = makeCounterexample(r.model, "");
  std::string needs = "device " + std::to_string(cex.device) + " needs " + producer_.name() +
                      indexStr(cex.producerIndex) + " for " + consumer_.name() +
                      indexStr(cex.consumerIndex);
  cex.offset = r.model.at("t");
  cex.message = pairs ? needs + " but its sender in " + lowering.str() +
                            " does not hold it at the same offset of its padded buffer"
                      : needs + " at offset " + std::to_string(r.model.at("t")) + " of its " +
                            consumer_.name() + " buffer, but " + lowering.str() +
                            " copies there slot " + std::to_string(r.model.at("s")) +
                            " of device " + std::to_string(r.model.at("src")) +
                            "'s padded buffer, which does not hold it there";
  return Outcome::refuted(std::move(cex));
}

Outcome EdgeChecker::checkUniqueDestination(const Team &team) {
  // AllToAll+permute packs each member's elements by destination: every
  // element a member holds must be needed by exactly one member, so that the
  // exchange neither drops nor duplicates data. Stated for one-to-one edges.
  const auto &members = team.devices;
  std::vector<smt::Bool> a;
  smt::Int m = ctx_.intVar("m");
  std::vector<smt::Bool> mIn;
  for (int64_t dev : members)
    mIn.push_back(m == dev);
  a.push_back(ctx_.any(mIn));
  ElementTerms x = enc_.element(producer_, "x", false);
  a.push_back(x.inRange);
  a.push_back(enc_.holds(producer_, m, x));
  ElementTerms y = enc_.element(consumer_, "y", true);
  a.push_back(y.inRange);
  for (size_t k = 0; k < y.baseIds.size(); ++k) {
    IdNum c = y.baseIds[k];
    auto q = edge_.map.producerOf(c);
    if (fusion_.id(c).isBroadcast())
      continue;
    if (!q || fusion_.id(*q).isBroadcast())
      throw Unsupported("AllToAll+permute is checked for one-to-one edges only; " +
                        consumer_.name() + "'s axis " + fusion_.id(c).str() +
                        " has no producer axis");
    auto pos = std::find(x.baseIds.begin(), x.baseIds.end(), *q) - x.baseIds.begin();
    a.push_back(y.baseVars[k] == x.baseVars[pos]);
  }
  smt::Int owners = ctx_.intVal(0);
  for (int64_t dev : members)
    owners = owners +
             ctx_.ite(enc_.holds(consumer_, ctx_.intVal(dev), y), ctx_.intVal(1), ctx_.intVal(0));
  smt::Int ownerCount = ctx_.intVar("owners");
  a.push_back(ownerCount == owners);
  a.push_back(ownerCount != ctx_.intVal(1));
  std::vector<std::string> vars{"m", "owners"};
  addNames(vars, x);
  auto r = solve("lowering-alltoall-destinations", a, vars);
  if (r.answer == smt::Answer::Unsat)
    return Outcome::proved();
  if (r.answer == smt::Answer::Unknown)
    return Outcome::unknown("lowering-alltoall-destinations: " + r.reason);
  Counterexample cex = makeCounterexample(r.model, "");
  cex.device = r.model.at("m");
  cex.rule = "one-destination"; // The plan's packing could send it twice; AllToAll cannot.
  cex.message = producer_.name() + indexStr(cex.producerIndex) + " on device " +
                std::to_string(cex.device) + " is needed by " +
                std::to_string(r.model.at("owners")) + " members of team " + devicesStr(members) +
                "; an AllToAll sends each element to exactly one";
  return Outcome::refuted(std::move(cex));
}

Outcome EdgeChecker::checkInitialValue(const Lowering &lowering) {
  const Expr &e = fusion_.exprs[edge_.expr];
  if (e.kind != OpKind::Reduction || e.attr("initial value").empty())
    return Outcome::proved();
  std::optional<bool> identity = initialValueIsIdentity(e);
  if (!identity)
    return Outcome::unknown("cannot read the initial value `" + e.attr("initial value") +
                            "` of the reduction");
  if (*identity)
    return Outcome::proved();
  Counterexample cex;
  cex.rule = "initial-value";
  cex.message = lowering.str() + " reduces " + producer_.name() +
                "'s buffers as they are and applies no initial value, but " + consumer_.name() +
                " starts from " + e.attr("initial value") + ", which is not the identity of `" +
                e.attr("op") + "`";
  return Outcome::refuted(std::move(cex));
}

Outcome EdgeChecker::checkBufferSum(const Lowering &lowering, const Team &team) {
  // Slot t of a receiver of rank r sums slot src(t) of every member's
  // producer buffer: src(t) = t (Allreduce, Reduce), r * |out| + t
  // (ReduceScatter, whose input splits into one chunk per rank). Correct iff
  // the members' elements at src(t) are exactly the elements the consumer's
  // element at t needs, each once.
  const auto &members = team.devices;
  std::vector<int64_t> recv = receivers(lowering, team, consumerDevices());
  smt::Int srcT = ctx_.intVar("s");
  auto slotOf = [&](std::vector<smt::Bool> &a, ElementTerms &y, const smt::Int &d) {
    smt::Int t = ctx_.intVar("t");
    a.push_back(t == enc_.offset(consumer_, y));
    smt::Int rank = rankIn(ctx_, members, d); // d receives, so it is a member.
    if (lowering.kind == CommKind::ReduceScatter) {
      requireFlatScatter();
      a.push_back(srcT == rank * enc_.count(consumer_) + t);
    } else {
      a.push_back(srcT == t);
    }
  };
  auto neededBy = [&](const ElementTerms &x, const ElementTerms &y) {
    std::vector<smt::Bool> same;
    for (size_t k = 0; k < x.baseIds.size(); ++k) {
      IdNum q = x.baseIds[k];
      auto c = edge_.map.consumerOf(q);
      if (fusion_.id(q).isBroadcast() || (c && fusion_.id(*c).isReduction()))
        continue;
      if (!c)
        throw Unsupported(producer_.name() + "'s axis " + fusion_.id(q).str() +
                          " maps to no axis of " + consumer_.name());
      same.push_back(x.baseVars[k] == enc_.indexOf(y, *c));
    }
    return ctx_.all(same);
  };
  {
    // Query 1: every member contributes only elements the slot needs.
    std::vector<smt::Bool> a;
    smt::Int d = deviceAmong("d", recv, a);
    ElementTerms y = heldConsumerElement(d, a);
    slotOf(a, y, d);
    smt::Int m = deviceAmong("m", members, a);
    ElementTerms z = enc_.element(producer_, "x", false);
    a.push_back(z.inRange && enc_.holds(producer_, m, z));
    a.push_back(enc_.offset(producer_, z) == srcT);
    a.push_back(!neededBy(z, y));
    std::vector<std::string> vars{"d", "m", "t", "s"};
    addNames(vars, y);
    addNames(vars, z);
    auto r = solve("lowering-buffer-contributions", a, vars, /*minimizeSizes=*/true);
    if (r.answer == smt::Answer::Unknown)
      return Outcome::unknown("lowering-buffer-contributions: " + r.reason);
    if (r.answer == smt::Answer::Sat) {
      Counterexample cex = makeCounterexample(r.model, "");
      cex.message = lowering.str() + " sums " + producer_.name() + indexStr(cex.producerIndex) +
                    " (offset " + std::to_string(r.model.at("s")) + " of device " +
                    std::to_string(r.model.at("m")) + "'s buffer) into " + consumer_.name() +
                    indexStr(cex.consumerIndex) + " on device " + std::to_string(cex.device) +
                    ", which does not need it";
      return Outcome::refuted(std::move(cex));
    }
  }
  // Query 2: every element the slot needs is contributed by exactly one
  // member.
  std::vector<smt::Bool> a;
  smt::Int d = deviceAmong("d", recv, a);
  ElementTerms y = heldConsumerElement(d, a);
  slotOf(a, y, d);
  ElementTerms x = neededElement(y, "x", a);
  smt::Int contributions = ctx_.intVal(0);
  std::vector<std::string> vars{"d", "t", "s"};
  auto producers = producerDevices();
  for (size_t i = 0; i < producers.size(); ++i) {
    bool isMember = std::count(members.begin(), members.end(), producers[i]) > 0;
    smt::Bool at = isMember ? enc_.holds(producer_, ctx_.intVal(producers[i]), x) &&
                                  enc_.offset(producer_, x) == srcT
                            : ctx_.boolVal(false);
    smt::Int h = ctx_.intVar("h" + std::to_string(i));
    a.push_back(h == ctx_.ite(at, ctx_.intVal(1), ctx_.intVal(0)));
    contributions = contributions + h;
    vars.push_back("h" + std::to_string(i));
  }
  a.push_back(contributions != ctx_.intVal(1));
  addNames(vars, y);
  addNames(vars, x);
  auto r = solve("lowering-buffer-exact-once", a, vars, /*minimizeSizes=*/true);
  if (r.answer == smt::Answer::Unsat)
    return Outcome::proved();
  if (r.answer == smt::Answer::Unknown)
    return Outcome::unknown("lowering-buffer-exact-once: " + r.reason);
  Counterexample cex = makeCounterexample(r.model, "");
  cex.message = consumer_.name() + indexStr(cex.consumerIndex) + " on device " +
                std::to_string(cex.device) + " needs " + producer_.name() +
                indexStr(cex.producerIndex) + " once, but " + lowering.str() + " sums it from " +
                std::to_string(cex.holders.size()) + " members" +
                (cex.holders.empty() ? std::string() : " " + devicesStr(cex.holders)) +
                " (offset " + std::to_string(r.model.at("s")) + " of their buffers)";
  return Outcome::refuted(std::move(cex));
}

std::vector<smt::Int> EdgeChecker::localLogicalShape(const TensorView &tv) {
  auto sharding = enc_.shardingIds(tv);
  std::vector<smt::Int> shape;
  for (IdNum id : dataLogicalIds(fusion_, tv)) {
    const IterDomain &d = fusion_.id(id);
    IdNum local = localPartOf(fusion_, id, sharding);
    bool whole = d.isBroadcast() || (d.isDeviceParallel() && !d.isReduction());
    shape.push_back(local != id ? enc_.extent(local) : whole ? ctx_.intVal(1) : enc_.extent(id));
  }
  return shape;
}

Outcome EdgeChecker::checkRuntimeShapes(const Lowering &lowering, const Team &team,
                                        NvfuserRuntime runtime) {
  CommKind k = lowering.kind;
  if (lowering.localPermute ||
      (k != CommKind::Allgather && k != CommKind::Gather && k != CommKind::Scatter))
    return Outcome::proved();
  // Allgather splits its output into n pieces along dim 0, each compared
  // with the input; Gather and Scatter slice dim 0 one index per member.
  bool gathers = k != CommKind::Scatter;
  std::vector<smt::Int> whole = localLogicalShape(gathers ? consumer_ : producer_);
  std::vector<smt::Int> piece = localLogicalShape(gathers ? producer_ : consumer_);
  const TensorView &wholeTv = gathers ? consumer_ : producer_;
  const TensorView &pieceTv = gathers ? producer_ : consumer_;
  auto n = static_cast<int64_t>(team.devices.size());
  std::string rules = std::string("nvFuser's runtime (") + nvfuserRuntimeName(runtime) +
                      " rules) splits " + wholeTv.name() + "'s local buffer along dim 0 into " +
                      std::to_string(n) + " pieces";
  if (whole.empty() || (runtime == NvfuserRuntime::Dec2024 && whole.size() != piece.size())) {
    Counterexample cex;
    cex.rule = "runtime-shapes";
    cex.message = rules + " of " + pieceTv.name() + "'s shape, but " + wholeTv.name() + " has " +
                  std::to_string(whole.size()) + " dimension(s) and " + pieceTv.name() + " " +
                  std::to_string(piece.size());
    return Outcome::refuted(std::move(cex));
  }
  smt::Bool ok = ctx_.boolVal(true);
  if (runtime == NvfuserRuntime::Nov2024) {
    // Equal element counts per piece: given the counts already proved, dim 0
    // must split evenly (Allgather) or be one index per member.
    ok = k == CommKind::Allgather ? ctx_.mod(whole[0], ctx_.intVal(n)) == 0 : whole[0] == n;
  } else {
    ok = k == CommKind::Allgather ? whole[0] == piece[0] * n : whole[0] == n && piece[0] == 1;
    for (size_t i = 1; i < whole.size(); ++i)
      ok = ok && whole[i] == piece[i];
  }
  std::vector<smt::Bool> a;
  std::vector<std::string> vars;
  auto name = [&](std::vector<smt::Int> &dims, const std::string &prefix) {
    for (size_t i = 0; i < dims.size(); ++i) {
      smt::Int v = ctx_.intVar(prefix + std::to_string(i));
      a.push_back(v == dims[i]);
      vars.push_back(prefix + std::to_string(i));
    }
  };
  name(whole, "w");
  name(piece, "p");
  a.push_back(!ok);
  auto r = solve("lowering-runtime-shapes", a, vars, /*minimizeSizes=*/true);
  if (r.answer == smt::Answer::Unsat)
    return Outcome::proved();
  if (r.answer == smt::Answer::Unknown)
    return Outcome::unknown("lowering-runtime-shapes: " + r.reason);
  auto shapeStr = [&](const std::string &prefix, size_t rank) {
    std::vector<int64_t> v;
    for (size_t i = 0; i < rank; ++i)
      v.push_back(r.model.at(prefix + std::to_string(i)));
    return indexStr(v);
  };
  Counterexample cex = makeCounterexample(r.model, "");
  cex.rule = "runtime-shapes";
  cex.message = rules + (k == CommKind::Allgather ? "" : " of one index") + " to match " +
                pieceTv.name() + "'s buffers, which fails: " + wholeTv.name() + " is " +
                shapeStr("w", whole.size()) + " and " + pieceTv.name() + " " +
                shapeStr("p", piece.size()) + " on each device";
  return Outcome::refuted(std::move(cex));
}

void EdgeChecker::requireFlatScatter() {
  // nvFuser splits a ReduceScatter's input along its scattered axis: the
  // producer axis that carries the consumer's device axis. The chunks are the
  // flat ranges r * |out| + t only when no layout ID before that axis holds
  // more than one index locally.
  std::vector<IdNum> layout = enc_.layoutIds(producer_);
  for (IdNum s : enc_.shardingIds(consumer_)) {
    std::optional<IdNum> base;
    for (IdNum id = s;;) {
      if (std::count(consumer_.rootOrLogical().begin(), consumer_.rootOrLogical().end(), id)) {
        base = id;
        break;
      }
      const Transform *t = fusion_.definition(id);
      if (!t || t->inputs.size() != 1)
        break;
      id = t->inputs[0];
    }
    auto q = base ? edge_.map.producerOf(*base) : std::nullopt;
    if (!q)
      continue;
    for (IdNum id : layout) {
      if (id == *q || (fusion_.definition(id) && fusion_.definition(id)->inputs[0] == *q))
        return;
      const IterDomain &d = fusion_.id(id);
      if (!d.isDeviceParallel() && !d.isBroadcast() && !d.isReduction() &&
          d.extent.asConstant() != std::optional<int64_t>(1))
        throw Unsupported("the ReduceScatter's scattered axis " + fusion_.id(*q).str() +
                          " is not outermost in " + producer_.name() +
                          "'s buffer; splitting along an inner axis is not modelled");
    }
  }
  throw Unsupported("the ReduceScatter's scattered axis (the axis of " + producer_.name() +
                    " that carries " + consumer_.name() + "'s device split) is not found");
}

Outcome EdgeChecker::checkLowering(const Lowering &lowering, bool compilerLowering,
                                   std::optional<NvfuserRuntime> compilerRuntime) {
  if (lowering.kind == CommKind::None)
    return checkLocal();
  try {
    if (edge_.map.unsupported)
      return Outcome::unsupported(*edge_.map.unsupported);
    if (lowering.kind == CommKind::CollectivePermute)
      return Outcome::unsupported("a CollectivePermute is checked as a ring step (RingChecker)");
    Outcome c = checkConstraints();
    if (c.kind != Outcome::Kind::Proved)
      return c;
    if (lowering.localPermute && isReductionEdge())
      return Outcome::unsupported("a local permute after a collective does not reduce: " +
                                  lowering.str() + " cannot lower a reduction");
    if (compilerLowering && isReductionComm(lowering.kind)) {
      Outcome init = checkInitialValue(lowering);
      if (init.kind != Outcome::Kind::Proved)
        return init;
    }
    // A compiler's padded collective runs slot for slot: the unpad copy
    // (localPermute) is shardcheck's own construct, never a compiler's.
    if (lowering.padded &&
        (!isModelledPadding(lowering) || (compilerLowering && lowering.localPermute)))
      return Outcome::unsupported(lowering.str() +
                                  ": padding is modelled for Allgather and AllToAll (with the "
                                  "unpad copy, or slot for slot), SendRecv pairs, and "
                                  "reductions");
    if (std::string uneven = unevenness(); !uneven.empty() && !lowering.padded)
      return Outcome::unsupported(uneven + "; equal-size collectives cannot move it");
    // A padded collective whose every query asks for an element at its slot
    // (checkPaddedSlots, checkBufferSum; checkPaddedSources for Allgather
    // with the unpad copy) may read and write padded layouts.
    const bool slotForSlot = lowering.padded && !lowering.localPermute &&
                             (!isReductionComm(lowering.kind) ||
                              lowering.reduceInput == Lowering::ReduceInput::ProducerBuffer);
    const bool unpadsGather =
        lowering.padded && lowering.localPermute && lowering.kind == CommKind::Allgather;
    Encoder::PaddedLayouts paddedLayouts(enc_, slotForSlot || unpadsGather);
    // Team sanity, concretely: roots present, senders hold the producer,
    // receivers hold the consumer.
    auto pDev = producerDevices(), cDev = consumerDevices();
    auto has = [](const std::vector<int64_t> &v, int64_t d) {
      return std::find(v.begin(), v.end(), d) != v.end();
    };
    Lowering effective = lowering;
    if (lowering.kind == CommKind::Alias)
      effective.teams = {Team{cDev, std::nullopt, {}}};
    for (const auto &team : effective.teams) {
      if (isRootedComm(lowering.kind) && !team.root)
        return Outcome::unsupported(lowering.str() + " names no root");
      for (int64_t s : senders(effective, team))
        if (!has(pDev, s)) {
          Counterexample cex;
          cex.device = s;
          cex.message = lowering.str() + " reads " + producer_.name() + " on device " +
                        std::to_string(s) + ", which holds none of it (it is outside " +
                        (producer_.mesh ? producer_.mesh->str() : std::string("the mesh")) + ")";
          return Outcome::refuted(std::move(cex));
        }
      for (int64_t r : receivers(effective, team, cDev))
        if (!has(cDev, r)) {
          Counterexample cex;
          cex.device = r;
          cex.message = lowering.str() + " writes " + consumer_.name() + " on device " +
                        std::to_string(r) + ", which is outside " +
                        (consumer_.mesh ? consumer_.mesh->str() : std::string("its mesh"));
          return Outcome::refuted(std::move(cex));
        }
    }
    // shardcheck's plan copies locally for a device no team writes; a
    // compiler's collective does not, so every consumer device must receive.
    Outcome uncovered =
        compilerLowering ? checkEveryDeviceWritten(effective) : checkUncoveredDevices(effective);
    if (uncovered.kind != Outcome::Kind::Proved)
      return uncovered;
    for (const auto &team : effective.teams) {
      // A padded lowering's buffers are its members' padded buffers, equal
      // by construction (the layout's ceilDiv extents); what lands where is
      // the slot query's.
      // (A padded collective moved slot for slot, SendRecv+pad or a
      // compiler's, copies whole padded buffers: those must fit.)
      bool padChunks = lowering.padded && lowering.localPermute;
      Outcome o = padChunks ? Outcome::proved() : checkCounts(effective, team);
      if (o.kind == Outcome::Kind::Proved && compilerRuntime)
        o = checkRuntimeShapes(effective, team, *compilerRuntime);
      if (o.kind != Outcome::Kind::Proved)
        return o;
      if (isReductionComm(lowering.kind) &&
          lowering.reduceInput == Lowering::ReduceInput::ProducerBuffer)
        o = checkBufferSum(effective, team);
      else if (isReductionComm(lowering.kind))
        o = checkPartials(effective, team);
      else if (lowering.padded && lowering.kind == CommKind::Allgather && lowering.localPermute)
        o = checkPaddedSources(effective, team);
      else if (lowering.padded && !lowering.localPermute)
        o = checkPaddedSlots(effective, team);
      else if (lowering.localPermute)
        o = checkPermuteComposite(effective, team);
      else
        o = checkSlots(effective, team);
      if (o.kind != Outcome::Kind::Proved)
        return o;
    }
    return Outcome::proved();
  } catch (const Unsupported &u) {
    return Outcome::unsupported(u.what());
  }
}

std::string EdgeChecker::unevenness() const {
  for (const auto *tv : {&producer_, &consumer_})
    if (std::string why = enc_.constantUnevenness(*tv); !why.empty())
      return why;
  return {};
}

Outcome proveWithPermuteFallback(EdgeChecker &checker, Lowering &lowering) {
  if (!checker.unevenness().empty()) {
    // Uneven buffers: only a padded lowering can move them.
    std::optional<Lowering> padded = paddedLowering(lowering);
    Outcome o = checker.checkLowering(padded ? *padded : lowering);
    if (padded && o.kind == Outcome::Kind::Proved)
      lowering = *padded;
    return o;
  }
  Outcome o = checker.checkLowering(lowering);
  bool permutable = lowering.kind == CommKind::Allgather || lowering.kind == CommKind::AllToAll;
  if (o.kind != Outcome::Kind::Refuted || !permutable || lowering.localPermute)
    return o;
  Lowering permuted = lowering;
  permuted.localPermute = true;
  Outcome p = checker.checkLowering(permuted);
  if (p.kind != Outcome::Kind::Proved)
    return o;
  lowering = permuted;
  return p;
}

} // namespace shardcheck
