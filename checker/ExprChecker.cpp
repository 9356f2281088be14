// The expression-level partials query; see ExprChecker.h.
#include "checker/ExprChecker.h"

#include <algorithm>
#include <set>

namespace shardcheck {

namespace {

std::string listStr(const std::vector<int64_t> &v, const char *open, const char *close) {
  std::string s = open;
  for (size_t i = 0; i < v.size(); ++i)
    s += (i ? (open[0] == '[' ? ", " : " ") : "") + std::to_string(v[i]);
  return s + close;
}

std::vector<int64_t> modelValues(const smt::Model &m, const std::string &prefix) {
  std::vector<int64_t> r;
  for (size_t i = 0; m.count(prefix + std::to_string(i)); ++i)
    r.push_back(m.at(prefix + std::to_string(i)));
  return r;
}

} // namespace

bool isReductionEdge(const Fusion &fusion, const FusionEdge &edge) {
  for (size_t i = 0; i < edge.map.consumerIds.size(); ++i) {
    const auto &p = edge.map.producerIds[i];
    if (p && fusion.id(edge.map.consumerIds[i]).isReduction() && !fusion.id(*p).isBroadcast())
      return true;
  }
  return false;
}

ExprChecker::ExprChecker(const Fusion &fusion, std::vector<const FusionEdge *> operands,
                         smt::Context &ctx, std::vector<int64_t> universe)
    : fusion_(fusion), operands_(std::move(operands)),
      consumer_(fusion.tensor(operands_.at(0)->consumer)), ctx_(ctx), enc_(ctx, fusion),
      universe_(std::move(universe)) {}

std::vector<int64_t> ExprChecker::devicesOf(const TensorView &tv) const {
  return tv.mesh ? tv.mesh->devices() : universe_;
}

smt::Bool ExprChecker::baseConstraints() {
  std::vector<smt::Bool> c{enc_.impliedConstraints(consumer_)};
  for (const FusionEdge *e : operands_) {
    c.push_back(enc_.impliedConstraints(fusion_.tensor(e->producer)));
    c.push_back(enc_.edgeExtentConstraints(*e));
  }
  return ctx_.all(c);
}

Outcome ExprChecker::checkPartials(const Lowering &lowering) {
  if (!isReductionComm(lowering.kind))
    return Outcome::unsupported(lowering.str() + " is not a reduction");
  try {
    for (const Team &team : lowering.teams) {
      Outcome o = checkTeam(lowering, team);
      if (o.kind != Outcome::Kind::Proved)
        return o;
    }
    return Outcome::proved();
  } catch (const Unsupported &u) {
    return Outcome::unsupported(u.what());
  }
}

Outcome ExprChecker::checkTeam(const Lowering &lowering, const Team &team) {
  std::vector<int64_t> receivers = team.devices;
  if (lowering.kind == CommKind::Reduce)
    receivers = team.root ? std::vector<int64_t>{*team.root} : std::vector<int64_t>{};
  std::vector<smt::Bool> a;
  smt::Int d = ctx_.intVar("d");
  std::vector<smt::Bool> dIn;
  for (int64_t dev : receivers)
    dIn.push_back(d == dev);
  a.push_back(ctx_.any(dIn));
  ElementTerms y = enc_.element(consumer_, "y", /*useRoot=*/true);
  a.push_back(y.inRange);
  a.push_back(enc_.holds(consumer_, d, y));
  std::vector<std::string> vars{"d"};
  vars.insert(vars.end(), y.baseNames.begin(), y.baseNames.end());
  // One index per reduced consumer axis, shared by every operand.
  std::map<IdNum, smt::Int> reduced;
  for (IdNum c : consumer_.rootOrLogical()) {
    if (!fusion_.id(c).isReduction())
      continue;
    std::string name = "r" + std::to_string(reduced.size());
    smt::Int r = ctx_.intVar(name);
    a.push_back(0 <= r && r < enc_.extent(c));
    reduced.emplace(c, r);
    vars.push_back(name);
  }
  // The operands' elements of one term, and which members hold all of them.
  std::vector<smt::Bool> covers(team.devices.size(), ctx_.boolVal(true));
  for (size_t j = 0; j < operands_.size(); ++j) {
    const FusionEdge &edge = *operands_[j];
    const TensorView &p = fusion_.tensor(edge.producer);
    ElementTerms x = enc_.element(p, "a" + std::to_string(j) + "_", /*useRoot=*/false);
    a.push_back(x.inRange);
    for (size_t k = 0; k < x.baseIds.size(); ++k) {
      IdNum q = x.baseIds[k];
      if (fusion_.id(q).isBroadcast())
        continue;
      auto c = edge.map.consumerOf(q);
      if (!c)
        throw Unsupported(p.name() + "'s axis " + fusion_.id(q).str() + " maps to no axis of " +
                          consumer_.name());
      a.push_back(x.baseVars[k] == (reduced.count(*c) ? reduced.at(*c) : enc_.indexOf(y, *c)));
    }
    vars.insert(vars.end(), x.baseNames.begin(), x.baseNames.end());
    for (size_t i = 0; i < team.devices.size(); ++i)
      covers[i] = covers[i] && enc_.holds(p, ctx_.intVal(team.devices[i]), x);
  }
  smt::Int summed = ctx_.intVal(0);
  for (size_t i = 0; i < team.devices.size(); ++i) {
    std::string name = "h" + std::to_string(i);
    smt::Int h = ctx_.intVar(name);
    a.push_back(h == ctx_.ite(covers[i], ctx_.intVal(1), ctx_.intVal(0)));
    summed = summed + h;
    vars.push_back(name);
  }
  a.push_back(summed != ctx_.intVal(1));
  a.push_back(baseConstraints());
  a.push_back(enc_.symbolsPositive());
  auto symbols = enc_.symbolVars();
  vars.insert(vars.end(), symbols.begin(), symbols.end());
  auto r = ctx_.check("expr-partials-exact-once", a, vars);
  if (r.answer == smt::Answer::Unsat)
    return Outcome::proved();
  if (r.answer == smt::Answer::Unknown)
    return Outcome::unknown("expr-partials-exact-once: " + r.reason);
  return Outcome::refuted(counterexample(r.model, lowering, team));
}

Counterexample ExprChecker::counterexample(const smt::Model &m, const Lowering &lowering,
                                           const Team &team) {
  Counterexample cex;
  for (const auto &[canonical, user] : enc_.symbolNames())
    if (m.count(canonical))
      cex.bindings[user] = m.at(canonical);
  cex.device = m.at("d");
  cex.consumerIndex = modelValues(m, "y");
  std::vector<int64_t> summers;
  for (size_t i = 0; i < team.devices.size(); ++i)
    if (m.count("h" + std::to_string(i)) && m.at("h" + std::to_string(i)) == 1)
      summers.push_back(team.devices[i]);
  cex.holders = summers;
  std::string term;
  for (size_t j = 0; j < operands_.size(); ++j)
    term += (j ? " * " : "") + fusion_.tensor(operands_[j]->producer).name() +
            listStr(modelValues(m, "a" + std::to_string(j) + "_"), "[", "]");
  cex.message = "the term " + term + " of " + consumer_.name() +
                listStr(cex.consumerIndex, "[", "]") + " on device " + std::to_string(cex.device) +
                " is summed by " + std::to_string(summers.size()) + " members of " +
                lowering.str() +
                (summers.empty() ? std::string(": no member holds all its operands")
                                 : " " + listStr(summers, "(", ")")) +
                "; a partial needs every operand of a term on one device, and each term "
                "exactly once";
  return cex;
}

} // namespace shardcheck
