// Brute-force expression-level partials; see ExprPartials.h.
#include "checker/bruteforce/ExprPartials.h"

#include "checker/bruteforce/ConcreteTensor.h"

#include <algorithm>
#include <variant>

namespace shardcheck::bruteforce {

namespace {

/// Where one producer coordinate of a term comes from.
struct CoordRule {
  enum class Kind { Zero, Consumer, Reduced } kind = Kind::Zero;
  size_t position = 0; ///< Consumer element coordinate, or reduced axis.
};

struct Operand {
  ConcreteTensor tensor;
  std::vector<CoordRule> rules; ///< One per producer logical data ID.
};

template <class T> T built(std::variant<T, BruteResult> v) {
  if (auto *r = std::get_if<BruteResult>(&v))
    throw Stop{r->outcome, r->reason};
  return std::move(std::get<T>(v));
}

class ExprModel {
public:
  ExprModel(const Fusion &f, const std::vector<const FusionEdge *> &operands, const Bindings &b)
      : f_(f), consumer_(built(
                   ConcreteTensor::build(f, operands.at(0)->consumer, b, ElementBasis::Root))) {
    for (IdNum c : f.tensor(consumer_.number()).rootOrLogical())
      if (f.id(c).isReduction()) {
        reducedIds_.push_back(c);
        auto e = consumer_.extentOf(c);
        if (!e)
          stopUnsupported("the extent of " + f.id(c).str() + " is unknown");
        reducedExtents_.push_back(*e);
      }
    for (const FusionEdge *edge : operands)
      operands_.push_back(operandOf(*edge, b));
  }

  BruteResult check(const Lowering &lowering) const {
    int64_t work = 0;
    for (const Team &team : lowering.teams) {
      std::vector<int64_t> receivers = team.devices;
      if (lowering.kind == CommKind::Reduce)
        receivers = team.root ? std::vector<int64_t>{*team.root} : std::vector<int64_t>{};
      std::sort(receivers.begin(), receivers.end());
      for (int64_t d : receivers)
        for (int64_t y : consumer_.heldBy(d)) {
          std::vector<int64_t> r(reducedIds_.size(), 0);
          do {
            if ((work += static_cast<int64_t>(team.devices.size())) > kWorkLimit)
              return BruteResult::unsupported("too large for brute force");
            if (auto failure = checkTerm(lowering, team, d, y, r))
              return *failure;
          } while (next(r));
        }
    }
    return BruteResult::holding();
  }

private:
  Operand operandOf(const FusionEdge &edge, const Bindings &b) const {
    Operand o{built(ConcreteTensor::build(f_, edge.producer, b, ElementBasis::Logical)), {}};
    const auto &cIds = consumer_.elementIds();
    for (IdNum q : o.tensor.logicalDataIds()) {
      CoordRule rule;
      auto c = edge.map.consumerOf(q);
      if (f_.id(q).isBroadcast()) {
        rule.kind = CoordRule::Kind::Zero;
      } else if (!c) {
        stopUnsupported(o.tensor.name() + "'s axis " + f_.id(q).str() + " maps to no axis of " +
                        consumer_.name());
      } else if (auto it = std::find(reducedIds_.begin(), reducedIds_.end(), *c);
                 it != reducedIds_.end()) {
        rule = {CoordRule::Kind::Reduced, static_cast<size_t>(it - reducedIds_.begin())};
      } else if (auto jt = std::find(cIds.begin(), cIds.end(), *c); jt != cIds.end()) {
        rule = {CoordRule::Kind::Consumer, static_cast<size_t>(jt - cIds.begin())};
      } else {
        stopUnsupported(f_.id(*c).str() + " is not an element axis of " + consumer_.name());
      }
      o.rules.push_back(rule);
    }
    return o;
  }

  bool next(std::vector<int64_t> &r) const {
    for (size_t i = r.size(); i-- > 0;) {
      if (++r[i] < reducedExtents_[i])
        return true;
      r[i] = 0;
    }
    return false;
  }

  std::optional<BruteResult> checkTerm(const Lowering &lowering, const Team &team, int64_t d,
                                       int64_t y, const std::vector<int64_t> &r) const {
    Coords yc = consumer_.coordsOf(y);
    std::vector<int64_t> elements;
    for (const Operand &o : operands_) {
      Coords x;
      for (const CoordRule &rule : o.rules)
        x.push_back(rule.kind == CoordRule::Kind::Zero      ? 0
                    : rule.kind == CoordRule::Kind::Reduced ? r[rule.position]
                                                            : yc[rule.position]);
      auto e = o.tensor.elementAt(x);
      if (!e)
        stopInvalidBindings("mapped axes of " + o.tensor.name() + " and " + consumer_.name() +
                            " have different extents");
      elements.push_back(*e);
    }
    std::vector<int64_t> summers;
    for (int64_t m : team.devices) {
      bool all = true;
      for (size_t j = 0; j < operands_.size(); ++j)
        all = all && operands_[j].tensor.holds(m, elements[j]);
      if (all)
        summers.push_back(m);
    }
    if (summers.size() == 1)
      return std::nullopt;
    Counterexample cex;
    cex.device = d;
    cex.consumerIndex = yc;
    cex.holders = summers;
    std::string term;
    for (size_t j = 0; j < operands_.size(); ++j)
      term += (j ? " * " : "") + operands_[j].tensor.elementStr(elements[j]);
    cex.message = "the term " + term + " of " + consumer_.elementStr(y) + " on device " +
                  std::to_string(d) + " is summed by " + std::to_string(summers.size()) +
                  " members of " + lowering.str();
    return BruteResult::failing(std::move(cex));
  }

  const Fusion &f_;
  ConcreteTensor consumer_;
  std::vector<IdNum> reducedIds_;
  std::vector<int64_t> reducedExtents_;
  std::vector<Operand> operands_;
};

} // namespace

BruteResult bruteCheckExprPartials(const Fusion &fusion,
                                   const std::vector<const FusionEdge *> &operands,
                                   const Bindings &bindings, const Lowering &lowering) {
  if (!isReductionComm(lowering.kind))
    return BruteResult::unsupported(lowering.str() + " is not a reduction");
  try {
    ExprModel model(fusion, operands, bindings);
    return model.check(lowering);
  } catch (const Stop &s) {
    return s.outcome == BruteOutcome::InvalidBindings ? BruteResult::invalidBindings(s.reason)
                                                      : BruteResult::unsupported(s.reason);
  }
}

} // namespace shardcheck::bruteforce
