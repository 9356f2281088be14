// Model search by evaluation; see ModelSearch.h for what it tries and why a
// model it returns is one.
#include "checker/smt/ModelSearch.h"

#include "util/Checked.h"

#include <algorithm>

namespace shardcheck::smt {

namespace {

constexpr int kConstantLevel = -1;
constexpr uint32_t kNone = UINT32_MAX;

/// The part of the DAG that some roots reach, renumbered densely in
/// post-order (kids before parents), with its top-level conjuncts.
struct LocalQuery {
  struct Local {
    Op op;
    int64_t value;
    uint32_t firstKid, kidCount;
    uint32_t dagNode;
  };
  std::vector<Local> nodes;
  std::vector<uint32_t> kids;
  std::vector<uint32_t> conjuncts; ///< Local numbers; And roots flattened.
  std::vector<uint32_t> vars;      ///< Local numbers of the variables.

  LocalQuery(const TermDag &dag, const std::vector<uint32_t> &roots);
  const uint32_t *kidsOf(uint32_t i) const { return kids.data() + nodes[i].firstKid; }
  uint32_t kid(uint32_t i, uint32_t k) const { return kids[nodes[i].firstKid + k]; }
};

LocalQuery::LocalQuery(const TermDag &dag, const std::vector<uint32_t> &roots) {
  std::vector<uint32_t> local(dag.size(), kNone); // DAG node -> local number
  auto add = [&](uint32_t i) {
    const Node &n = dag.node(i);
    Local l{n.op, n.value, static_cast<uint32_t>(kids.size()), n.kidCount, i};
    for (uint32_t k = 0; k < n.kidCount; ++k)
      kids.push_back(local[dag.kidsOf(n)[k]]);
    local[i] = static_cast<uint32_t>(nodes.size());
    if (n.op == Op::Var)
      vars.push_back(static_cast<uint32_t>(nodes.size()));
    nodes.push_back(l);
  };
  for (uint32_t root : roots)
    dag.postOrder(
        root, [&](uint32_t i) { return local[i] != kNone; }, add);
  std::vector<uint32_t> work;
  for (auto r = roots.rbegin(); r != roots.rend(); ++r)
    work.push_back(local[*r]);
  std::vector<bool> seen(nodes.size());
  while (!work.empty()) { // Flatten top-level conjunctions, in order.
    uint32_t i = work.back();
    work.pop_back();
    if (seen[i])
      continue;
    seen[i] = true;
    if (nodes[i].op != Op::And) {
      conjuncts.push_back(i);
      continue;
    }
    for (uint32_t k = nodes[i].kidCount; k-- > 0;)
      work.push_back(kid(i, k));
  }
}

/// Values of a LocalQuery's nodes (booleans as 0/1), each known or not.
class Values {
public:
  explicit Values(const LocalQuery &q) : q_(q), value_(q.nodes.size()), known_(q.nodes.size()) {}

  bool known(uint32_t i) const { return known_[i]; }
  int64_t value(uint32_t i) const { return value_[i]; }
  bool isTrue(uint32_t i) const { return known_[i] && value_[i] != 0; }
  void set(uint32_t i, int64_t v) {
    value_[i] = v;
    known_[i] = 1;
  }
  void copy(uint32_t to, uint32_t from) {
    value_[to] = value_[from];
    known_[to] = known_[from];
  }
  /// Evaluates operator node `i` from its kids' values.
  void evaluate(uint32_t i) {
    auto v = compute(i);
    known_[i] = v.has_value();
    value_[i] = v.value_or(0);
  }

private:
  std::optional<int64_t> compute(uint32_t i) const;
  std::optional<int64_t> arithmetic(Op op, int64_t a, int64_t b) const;
  std::optional<int64_t> connective(uint32_t i) const;

  const LocalQuery &q_;
  std::vector<int64_t> value_;
  std::vector<uint8_t> known_;
};

/// SMT-LIB's integer division and modulo (Euclidean: 0 <= r < |b|); nullopt
/// for a zero divisor, whose quotient SMT-LIB leaves unspecified, or on
/// overflow.
std::optional<std::pair<int64_t, int64_t>> euclidean(int64_t a, int64_t b) {
  if (b == 0 || (a == INT64_MIN && b == -1))
    return std::nullopt;
  int64_t q = a / b, r = a % b;
  if (r < 0) { // r + |b| is in (0, |b|), so neither step overflows (-b could).
    r = b < 0 ? r - b : r + b;
    q += b < 0 ? 1 : -1;
  }
  return std::make_pair(q, r);
}

std::optional<int64_t> Values::arithmetic(Op op, int64_t a, int64_t b) const {
  switch (op) {
  case Op::Add:
    return checkedAdd(a, b);
  case Op::Sub:
    return b == INT64_MIN ? std::nullopt : checkedAdd(a, -b);
  case Op::Mul:
    return checkedMul(a, b);
  case Op::Div:
  case Op::Mod: {
    auto qr = euclidean(a, b);
    if (!qr)
      return std::nullopt;
    return op == Op::Div ? qr->first : qr->second;
  }
  case Op::Eq:
    return a == b;
  case Op::Ne:
    return a != b;
  case Op::Lt:
    return a < b;
  case Op::Le:
    return a <= b;
  default:
    return std::nullopt;
  }
}

/// And, Or, Not, Implies and Ite in three-valued logic: a false conjunct
/// decides And whatever the others are (their values exist, unknown to us).
std::optional<int64_t> Values::connective(uint32_t i) const {
  const auto &n = q_.nodes[i];
  const uint32_t *k = q_.kidsOf(i);
  switch (n.op) {
  case Op::And:
  case Op::Or: {
    const int64_t decisive = n.op == Op::Or; // A true disjunct, a false conjunct.
    bool allKnown = true;
    for (uint32_t j = 0; j < n.kidCount; ++j) {
      if (known_[k[j]] && (value_[k[j]] != 0) == decisive)
        return decisive;
      allKnown = allKnown && known_[k[j]];
    }
    return allKnown ? std::optional<int64_t>(!decisive) : std::nullopt;
  }
  case Op::Not:
    return known_[k[0]] ? std::optional<int64_t>(value_[k[0]] == 0) : std::nullopt;
  case Op::Implies:
    if ((known_[k[0]] && value_[k[0]] == 0) || isTrue(k[1]))
      return 1;
    return known_[k[0]] && known_[k[1]] ? std::optional<int64_t>(0) : std::nullopt;
  case Op::Ite:
    if (!known_[k[0]])
      return std::nullopt;
    return known_[k[value_[k[0]] ? 1 : 2]] ? std::optional<int64_t>(value_[k[value_[k[0]] ? 1 : 2]])
                                           : std::nullopt;
  default:
    return std::nullopt;
  }
}

std::optional<int64_t> Values::compute(uint32_t i) const {
  const auto &n = q_.nodes[i];
  switch (n.op) {
  case Op::IntConst:
  case Op::BoolConst:
    return n.value;
  case Op::Var:
    return known_[i] ? std::optional<int64_t>(value_[i]) : std::nullopt;
  case Op::And:
  case Op::Or:
  case Op::Not:
  case Op::Implies:
  case Op::Ite:
    return connective(i);
  default: {
    const uint32_t *k = q_.kidsOf(i);
    if (!known_[k[0]] || !known_[k[1]])
      return std::nullopt;
    return arithmetic(n.op, value_[k[0]], value_[k[1]]);
  }
  }
}

/// One bound of a searched variable: v >= term + adjust (lower) or
/// v <= term + adjust (upper).
struct Bound {
  uint32_t term;
  int64_t adjust;
};

/// How a searched variable's candidates are drawn at its position.
struct Domain {
  uint32_t var = kNone;
  std::vector<Bound> lower, upper; ///< Usable there: over earlier variables.
  std::vector<int64_t> among;      ///< From `v == c1 || v == c2 ...`.
  bool unbounded = false;          ///< Counts up from its lower bound (or 0).
};

/// The search itself: definitions, variable order, evaluation levels, and
/// the depth-first enumeration.
class Search {
public:
  Search(const TermDag &dag, const std::vector<uint32_t> &roots, const ModelSearchLimits &limits)
      : q_(dag, roots), values_(q_), limits_(limits), definition_(q_.nodes.size(), kNone) {}

  std::optional<Model> run(const TermDag &dag);

private:
  void findDefinitions();
  bool dependsOn(uint32_t term, uint32_t var) const;
  bool orderEvaluation();
  void collectBounds();
  void noteBound(uint32_t var, bool isLower, Bound b);
  void orderVariables();
  size_t pickNext(uint64_t ordered) const;
  bool usable(const std::vector<Bound> &bounds, uint64_t ordered) const;
  void assignLevels();
  bool assign(size_t position, int64_t slack);
  bool tryValue(size_t position, int64_t value, int64_t slack);
  std::optional<int64_t> boundValue(const std::vector<Bound> &bounds, bool isLower) const;
  bool holdsAtLevel(size_t level);

  LocalQuery q_;
  Values values_;
  ModelSearchLimits limits_;
  uint64_t steps_ = 0;
  bool exhausted_ = false;                ///< The step budget ran out.
  std::vector<uint32_t> definition_;      ///< Variable -> its defining term, or kNone.
  std::vector<uint32_t> evaluationOrder_; ///< Kids and definitions before users.
  std::vector<uint64_t> searchedBelow_;   ///< Node -> mask of the searched variables it reads.
  std::vector<uint32_t> searched_;        ///< Searched variables by bit number.
  std::vector<Domain> bounds_;            ///< By bit number: every bound found.
  std::vector<Domain> order_;             ///< By position: the usable ones.
  std::vector<std::vector<uint32_t>> evaluateAt_, checkAt_; ///< By position; back(): constants.
  size_t lastUnbounded_ = SIZE_MAX;
};

/// A conjunct `v == T` defines a variable not defined yet when T does not
/// depend on v, also through definitions found before.
void Search::findDefinitions() {
  for (uint32_t c : q_.conjuncts) {
    if (q_.nodes[c].op != Op::Eq)
      continue;
    for (int side = 0; side < 2; ++side) {
      uint32_t v = q_.kid(c, side), t = q_.kid(c, 1 - side);
      if (q_.nodes[v].op == Op::Var && definition_[v] == kNone && !dependsOn(t, v)) {
        definition_[v] = t;
        break;
      }
    }
  }
}

bool Search::dependsOn(uint32_t term, uint32_t var) const {
  std::vector<uint32_t> work{term};
  std::vector<bool> seen(q_.nodes.size());
  while (!work.empty()) {
    uint32_t i = work.back();
    work.pop_back();
    if (i == var)
      return true;
    if (seen[i])
      continue;
    seen[i] = true;
    if (definition_[i] != kNone)
      work.push_back(definition_[i]);
    work.insert(work.end(), q_.kidsOf(i), q_.kidsOf(i) + q_.nodes[i].kidCount);
  }
  return false;
}

/// Orders the nodes so that kids and a variable's definition come first,
/// and numbers the searched (undefined) variables; false when there are
/// more of them than a mask holds.
bool Search::orderEvaluation() {
  std::vector<uint8_t> state(q_.nodes.size()); // 0 new, 1 open, 2 done
  for (uint32_t root = 0; root < q_.nodes.size(); ++root) {
    std::vector<uint32_t> stack{root};
    while (!stack.empty()) {
      uint32_t i = stack.back();
      if (state[i] == 2) {
        stack.pop_back();
        continue;
      }
      if (state[i] == 1) {
        state[i] = 2;
        evaluationOrder_.push_back(i);
        stack.pop_back();
        continue;
      }
      state[i] = 1;
      if (definition_[i] != kNone)
        stack.push_back(definition_[i]);
      for (uint32_t k = 0; k < q_.nodes[i].kidCount; ++k)
        if (!state[q_.kid(i, k)])
          stack.push_back(q_.kid(i, k));
    }
  }
  searchedBelow_.assign(q_.nodes.size(), 0);
  for (uint32_t i : evaluationOrder_) {
    if (q_.nodes[i].op == Op::Var && definition_[i] == kNone) {
      if (searched_.size() == 64)
        return false;
      searchedBelow_[i] = uint64_t{1} << searched_.size();
      searched_.push_back(i);
    } else if (definition_[i] != kNone) {
      searchedBelow_[i] = searchedBelow_[definition_[i]];
    }
    for (uint32_t k = 0; k < q_.nodes[i].kidCount; ++k)
      searchedBelow_[i] |= searchedBelow_[q_.kid(i, k)];
  }
  return true;
}

void Search::noteBound(uint32_t var, bool isLower, Bound b) {
  auto it = std::find(searched_.begin(), searched_.end(), var);
  if (it == searched_.end() || (searchedBelow_[b.term] >> (it - searched_.begin())) & 1)
    return; // Defined, a constant, or bounded by itself.
  Domain &d = bounds_[static_cast<size_t>(it - searched_.begin())];
  (isLower ? d.lower : d.upper).push_back(b);
}

/// Bounds of searched variables from top-level conjuncts.
void Search::collectBounds() {
  bounds_.assign(searched_.size(), Domain{});
  for (size_t b = 0; b < searched_.size(); ++b)
    bounds_[b].var = searched_[b];
  for (uint32_t c : q_.conjuncts) {
    const auto &n = q_.nodes[c];
    if (n.op == Op::Le || n.op == Op::Lt || n.op == Op::Eq) {
      uint32_t l = q_.kid(c, 0), r = q_.kid(c, 1);
      int64_t strict = n.op == Op::Lt;
      noteBound(l, false, {r, -strict});
      noteBound(r, true, {l, strict});
      if (n.op == Op::Eq) {
        noteBound(l, true, {r, 0});
        noteBound(r, false, {l, 0});
      }
    }
    if (n.op != Op::Or)
      continue;
    std::vector<int64_t> among;
    uint32_t var = kNone;
    for (uint32_t k = 0; k < n.kidCount; ++k) {
      uint32_t e = q_.kid(c, k);
      if (q_.nodes[e].op != Op::Eq || q_.nodes[q_.kid(e, 1)].op != Op::IntConst ||
          (var != kNone && q_.kid(e, 0) != var))
        break;
      var = q_.kid(e, 0);
      among.push_back(q_.nodes[q_.kid(e, 1)].value);
    }
    auto it = std::find(searched_.begin(), searched_.end(), var);
    if (among.size() == n.kidCount && it != searched_.end())
      bounds_[static_cast<size_t>(it - searched_.begin())].among = among;
  }
}

bool Search::usable(const std::vector<Bound> &bounds, uint64_t ordered) const {
  for (const Bound &b : bounds)
    if ((searchedBelow_[b.term] & ~ordered) == 0)
      return true;
  return false;
}

/// The next variable to enumerate: one with a finite range over the
/// variables before it; else one that bounds another (a symbolic extent),
/// which then counts up; else the first left.
size_t Search::pickNext(uint64_t ordered) const {
  size_t bounder = SIZE_MAX, first = SIZE_MAX;
  for (size_t b = 0; b < searched_.size(); ++b) {
    if ((ordered >> b) & 1)
      continue;
    const Domain &d = bounds_[b];
    if (!d.among.empty() || (usable(d.lower, ordered) && usable(d.upper, ordered)))
      return b;
    first = std::min(first, b);
    for (size_t o = 0; o < searched_.size() && bounder == SIZE_MAX; ++o)
      if (o != b && !((ordered >> o) & 1))
        for (const auto *side : {&bounds_[o].lower, &bounds_[o].upper})
          for (const Bound &bound : *side)
            if ((searchedBelow_[bound.term] >> b) & 1)
              bounder = b;
  }
  return bounder != SIZE_MAX ? bounder : first;
}

void Search::orderVariables() {
  uint64_t ordered = 0;
  while (order_.size() < searched_.size()) {
    size_t b = pickNext(ordered);
    Domain d;
    d.var = searched_[b];
    d.among = bounds_[b].among;
    for (const Bound &x : bounds_[b].lower)
      if ((searchedBelow_[x.term] & ~ordered) == 0)
        d.lower.push_back(x);
    for (const Bound &x : bounds_[b].upper)
      if ((searchedBelow_[x.term] & ~ordered) == 0)
        d.upper.push_back(x);
    d.unbounded = d.among.empty() && d.upper.empty();
    if (d.unbounded)
      lastUnbounded_ = order_.size();
    order_.push_back(std::move(d));
    ordered |= uint64_t{1} << b;
  }
}

/// Each node is evaluated, and each conjunct checked, right after the last
/// searched variable it reads gets a value (constants once, first).
void Search::assignLevels() {
  std::vector<size_t> positionOfBit(searched_.size());
  for (size_t p = 0; p < order_.size(); ++p)
    positionOfBit[static_cast<size_t>(std::find(searched_.begin(), searched_.end(), order_[p].var) -
                                      searched_.begin())] = p;
  auto levelOf = [&](uint32_t i) {
    size_t level = order_.size(); // Constants.
    for (size_t b = 0; b < searched_.size(); ++b)
      if ((searchedBelow_[i] >> b) & 1)
        level = level == order_.size() ? positionOfBit[b] : std::max(level, positionOfBit[b]);
    return level;
  };
  evaluateAt_.assign(order_.size() + 1, {});
  checkAt_.assign(order_.size() + 1, {});
  for (uint32_t i : evaluationOrder_)
    if (!(q_.nodes[i].op == Op::Var && definition_[i] == kNone))
      evaluateAt_[levelOf(i)].push_back(i);
  for (uint32_t c : q_.conjuncts)
    checkAt_[levelOf(c)].push_back(c);
}

/// Evaluates the nodes of `level` (a defined variable takes its term's
/// value), then checks its conjuncts.
bool Search::holdsAtLevel(size_t level) {
  for (uint32_t i : evaluateAt_[level]) {
    if (definition_[i] != kNone)
      values_.copy(i, definition_[i]);
    else
      values_.evaluate(i);
  }
  for (uint32_t c : checkAt_[level])
    if (!values_.isTrue(c))
      return false;
  return true;
}

std::optional<int64_t> Search::boundValue(const std::vector<Bound> &bounds, bool isLower) const {
  std::optional<int64_t> best;
  for (const Bound &b : bounds) {
    if (!values_.known(b.term))
      continue;
    auto v = checkedAdd(values_.value(b.term), b.adjust);
    if (v && (!best || (isLower ? *v > *best : *v < *best)))
      best = v;
  }
  return best;
}

bool Search::tryValue(size_t position, int64_t value, int64_t slack) {
  if (++steps_ > limits_.maxSteps) {
    exhausted_ = true;
    return false;
  }
  values_.set(order_[position].var, value);
  return holdsAtLevel(position) && assign(position + 1, slack);
}

/// Enumerates the variable at `position` and those after it; the unbounded
/// ones share exactly `slack` steps above their lower bounds, the last of
/// them taking what is left.
bool Search::assign(size_t position, int64_t slack) {
  if (position == order_.size())
    return slack == 0 || lastUnbounded_ == SIZE_MAX;
  const Domain &d = order_[position];
  if (!d.among.empty()) {
    for (int64_t v : d.among)
      if (tryValue(position, v, slack) || exhausted_)
        return !exhausted_;
    return false;
  }
  auto lo = boundValue(d.lower, true);
  if (d.unbounded) {
    int64_t base = lo.value_or(0);
    for (int64_t s = position == lastUnbounded_ ? slack : 0; s <= slack; ++s) {
      auto v = checkedAdd(base, s);
      if (v && (tryValue(position, *v, slack - s) || exhausted_))
        return !exhausted_;
    }
    return false;
  }
  auto hi = boundValue(d.upper, false);
  for (int64_t v = lo.value_or(1), end = hi.value_or(0); lo && hi && v <= end; ++v) {
    if (tryValue(position, v, slack) || exhausted_)
      return !exhausted_;
    if (v == INT64_MAX)
      break;
  }
  return false;
}

std::optional<Model> Search::run(const TermDag &dag) {
  findDefinitions();
  if (!orderEvaluation())
    return std::nullopt;
  collectBounds();
  orderVariables();
  assignLevels();
  if (!holdsAtLevel(order_.size()))
    return std::nullopt;
  bool found = false;
  const int64_t maxSlack = lastUnbounded_ == SIZE_MAX ? 0 : limits_.maxSlack;
  for (int64_t slack = 0; slack <= maxSlack && !found && !exhausted_; ++slack)
    found = assign(0, slack);
  if (!found)
    return std::nullopt;
  Model m;
  for (uint32_t v : q_.vars)
    m[dag.nameOf(dag.node(q_.nodes[v].dagNode))] = values_.value(v);
  return m;
}

} // namespace

std::optional<Model> searchModel(const TermDag &dag, const std::vector<uint32_t> &roots,
                                 const ModelSearchLimits &limits) {
  return Search(dag, roots, limits).run(dag);
}

bool holdsAt(const TermDag &dag, const std::vector<uint32_t> &roots, const Model &values) {
  LocalQuery q(dag, roots);
  Values v(q);
  for (uint32_t i = 0; i < q.nodes.size(); ++i) { // Post-order: kids first.
    if (q.nodes[i].op != Op::Var) {
      v.evaluate(i);
      continue;
    }
    auto it = values.find(dag.nameOf(dag.node(q.nodes[i].dagNode)));
    v.set(i, it != values.end() ? it->second : 0);
  }
  for (uint32_t c : q.conjuncts)
    if (!v.isTrue(c))
      return false;
  return true;
}

} // namespace shardcheck::smt
