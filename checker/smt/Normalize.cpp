// Arithmetic normalization of a query; see Normalize.h for the rewrites and
// why each is an identity.
#include "checker/smt/Normalize.h"

#include "util/Checked.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

namespace shardcheck::smt {

namespace {

/// A product of atoms: sorted atom numbers (repeats allowed).
using Monomial = std::vector<uint32_t>;
/// A sum of monomials with nonzero coefficients; the constant is the empty
/// monomial's coefficient.
using Poly = std::map<Monomial, int64_t>;

/// Thrown when a coefficient overflows or a polynomial grows too large; the
/// query is then asked as built.
struct GiveUp {};

constexpr size_t kMaxMonomials = 256;

int64_t add(int64_t a, int64_t b) {
  auto r = checkedAdd(a, b);
  if (!r)
    throw GiveUp{};
  return *r;
}

int64_t mul(int64_t a, int64_t b) {
  auto r = checkedMul(a, b);
  if (!r)
    throw GiveUp{};
  return *r;
}

void addTerm(Poly &p, const Monomial &m, int64_t coef) {
  int64_t &c = p[m];
  c = add(c, coef);
  if (c == 0)
    p.erase(m);
  if (p.size() > kMaxMonomials)
    throw GiveUp{};
}

Poly constantPoly(int64_t v) {
  Poly p;
  if (v != 0)
    p[{}] = v;
  return p;
}

std::optional<int64_t> constantOf(const Poly &p) {
  if (p.empty())
    return 0;
  if (p.size() == 1 && p.begin()->first.empty())
    return p.begin()->second;
  return std::nullopt;
}

Poly sum(const Poly &a, const Poly &b, int64_t bSign) {
  Poly r = a;
  for (const auto &[m, c] : b)
    addTerm(r, m, mul(c, bSign));
  return r;
}

Poly product(const Poly &a, const Poly &b) {
  Poly r;
  for (const auto &[ma, ca] : a)
    for (const auto &[mb, cb] : b) {
      Monomial m = ma;
      m.insert(m.end(), mb.begin(), mb.end());
      std::sort(m.begin(), m.end());
      addTerm(r, m, mul(ca, cb));
    }
  return r;
}

/// `m` without the atoms of `divisor`, or nullopt when `divisor` is not a
/// sub-multiset of `m`.
std::optional<Monomial> quotientOf(const Monomial &m, const Monomial &divisor) {
  Monomial rest;
  size_t j = 0;
  for (uint32_t atom : m) {
    if (j < divisor.size() && divisor[j] == atom)
      ++j;
    else
      rest.push_back(atom);
  }
  if (j != divisor.size())
    return std::nullopt;
  return rest;
}

int64_t floorDiv(int64_t a, int64_t d) {
  int64_t q = a / d;
  return (a % d != 0 && (a < 0) != (d < 0)) ? q - 1 : q;
}

/// P = D*A + B for a divisor c*M: A gathers the monomials that are
/// multiples of M with coefficients divisible by c (and, for a constant
/// divisor, the floor part of the constant), B the rest.
std::pair<Poly, Poly> splitMultiples(const Poly &p, const Monomial &divisorMono,
                                     int64_t divisorCoef) {
  Poly a, b;
  for (const auto &[m, c] : p) {
    auto rest = quotientOf(m, divisorMono);
    if (divisorMono.empty() && m.empty()) {
      int64_t q = floorDiv(c, divisorCoef);
      addTerm(a, {}, q);
      addTerm(b, {}, add(c, -mul(q, divisorCoef)));
    } else if (rest && c % divisorCoef == 0) {
      addTerm(a, *rest, c / divisorCoef);
    } else {
      addTerm(b, m, c);
    }
  }
  return {a, b};
}

/// Calls f once for each node below `root` (root included) not in `seen`.
template <typename F>
void forEachBelow(const TermDag &dag, uint32_t root, std::set<uint32_t> &seen, F f) {
  std::vector<uint32_t> work{root};
  while (!work.empty()) {
    uint32_t i = work.back();
    work.pop_back();
    if (!seen.insert(i).second)
      continue;
    f(i);
    const Node &n = dag.node(i);
    work.insert(work.end(), dag.kidsOf(n), dag.kidsOf(n) + n.kidCount);
  }
}

bool isIntOp(Op op) {
  switch (op) {
  case Op::Var:
  case Op::IntConst:
  case Op::Add:
  case Op::Sub:
  case Op::Mul:
  case Op::Div:
  case Op::Mod:
  case Op::Ite:
    return true;
  default:
    return false;
  }
}

class Normalizer {
public:
  explicit Normalizer(TermDag &dag) : dag_(dag) {}

  std::vector<uint32_t> run(const std::vector<uint32_t> &roots);

private:
  void gatherFacts(const std::vector<uint32_t> &roots);
  void notePositive(uint32_t i);
  void noteBound(uint32_t i);
  void noteDivisibility(uint32_t i, const std::vector<uint32_t> &roots);
  std::string freshName(std::string name, const std::vector<uint32_t> &roots);
  void noteDefinition(uint32_t i);
  bool mentions(uint32_t node, uint32_t var) const;
  void visit(uint32_t i);
  uint32_t visitBool(uint32_t i, const Node &n, const std::vector<uint32_t> &k);
  bool holdsByRange(bool strict, const Poly &l, const Poly &r) const;
  std::optional<bool> constantConnective(Op op, const std::vector<uint32_t> &kids) const;
  Poly divide(const Poly &p, const Poly &d, bool isMod);
  std::optional<Poly> mixedRadix(const Poly &p, int64_t dCoef, const Monomial &dMono, bool isMod);
  bool provenInRange(const Poly &b, const Poly &m, int depth);
  std::optional<Poly> upperOf(uint32_t atomNum);
  Poly polyOf(uint32_t node);
  Poly leftoverDivision(const Poly &b, const Poly &d, bool isMod);
  uint32_t equality(const Poly &l, const Poly &r, int depth);
  Poly atom(uint32_t node);
  uint32_t term(const Poly &p);
  uint32_t monomialTerm(const Monomial &m, int64_t coef);
  bool isPositive(const Monomial &m) const;
  const Poly &intOf(uint32_t i) const { return ints_.at(i); }
  uint32_t constant(int64_t v) { return dag_.constant(Op::IntConst, v); }

  TermDag &dag_;
  std::unordered_map<uint32_t, uint32_t> atomNumber_; ///< node -> atom number
  std::vector<uint32_t> atomNode_;                    ///< atom number -> node
  std::set<uint32_t> positiveNodes_;                  ///< atoms known >= 1
  /// Variables with asserted `0 <= v` and `v < X`: v -> X (first found).
  std::set<uint32_t> nonNegative_;
  std::map<uint32_t, uint32_t> strictUpper_;
  std::vector<uint32_t> boundsInOrder_; ///< The X of each, in conjunct order.
  /// Division atoms with a known range: atom number -> U, 0 <= atom < U.
  std::map<uint32_t, Poly> atomUpper_;
  /// Off while a bound itself is normalized: no bound is used to rewrite a
  /// bound (else `v < X` could rewrite X using itself).
  bool useBounds_ = true;
  std::map<uint32_t, Poly> substituted_;         ///< variable node -> c * q or T
  std::vector<uint32_t> definitions_;            ///< v == c * q, v == T: asserted
  std::unordered_map<uint32_t, Poly> ints_;      ///< original node -> polynomial
  std::unordered_map<uint32_t, uint32_t> bools_; ///< original node -> new node
  /// The names of the query's variables, gathered when a fresh one is first
  /// needed (most queries need none).
  std::optional<std::set<std::string>> names_;
};

std::vector<uint32_t> Normalizer::run(const std::vector<uint32_t> &roots) {
  gatherFacts(roots);
  std::vector<uint32_t> out;
  for (uint32_t root : roots) {
    dag_.postOrder(
        root, [&](uint32_t i) { return ints_.count(i) > 0 || bools_.count(i) > 0; },
        [&](uint32_t i) { visit(i); });
    out.push_back(bools_.at(root));
  }
  out.insert(out.end(), definitions_.begin(), definitions_.end());
  return out;
}

void Normalizer::gatherFacts(const std::vector<uint32_t> &roots) {
  std::vector<uint32_t> work(roots.rbegin(), roots.rend());
  std::set<uint32_t> seen;
  std::vector<uint32_t> conjuncts;
  while (!work.empty()) { // Top-level conjuncts, in order.
    uint32_t i = work.back();
    work.pop_back();
    if (!seen.insert(i).second)
      continue;
    const Node &n = dag_.node(i);
    if (n.op != Op::And) {
      conjuncts.push_back(i);
      continue;
    }
    for (uint32_t k = n.kidCount; k-- > 0;)
      work.push_back(dag_.kidsOf(n)[k]);
  }
  for (uint32_t i : conjuncts) {
    notePositive(i);
    noteBound(i);
  }
  for (uint32_t i : conjuncts)
    noteDivisibility(i, roots);
  // The bounds before anything that uses a bound, and without bounds: then
  // each conjunct `v < X` (and `c <= v`) of the result follows from the
  // query's own by substitutions and identities alone, so the result keeps
  // every bound that any other rewrite relies on.
  useBounds_ = false;
  for (uint32_t bound : boundsInOrder_)
    (void)polyOf(bound);
  useBounds_ = true;
  for (uint32_t i : conjuncts)
    noteDefinition(i);
}

/// Substitutes T for v in the rest of the query for a conjunct `v == T`
/// (v not defined yet, T not mentioning v after substitution), keeping
/// `v == T` (T normalized) as a conjunct: every substitution of v is then an
/// identity under a conjunct of the result.
void Normalizer::noteDefinition(uint32_t i) {
  const Node &n = dag_.node(i);
  if (n.op != Op::Eq)
    return;
  uint32_t v = dag_.kidsOf(n)[0], t = dag_.kidsOf(n)[1];
  if (dag_.node(v).op != Op::Var || substituted_.count(v) || !isIntOp(dag_.node(t).op))
    return;
  Poly value = polyOf(t);
  uint32_t valueTerm = term(value);
  if (mentions(valueTerm, v))
    return;
  substituted_[v] = value;
  definitions_.push_back(dag_.apply(Op::Eq, {v, valueTerm}));
}

bool Normalizer::mentions(uint32_t node, uint32_t var) const {
  bool found = false;
  std::set<uint32_t> seen;
  forEachBelow(dag_, node, seen, [&](uint32_t i) { found = found || i == var; });
  return found;
}

/// Records `c <= v` (c >= 1) as v positive.
void Normalizer::notePositive(uint32_t i) {
  const Node &n = dag_.node(i);
  if (n.op != Op::Le)
    return;
  const Node &l = dag_.node(dag_.kidsOf(n)[0]), &r = dag_.node(dag_.kidsOf(n)[1]);
  if (l.op == Op::IntConst && l.value >= 1 && r.op == Op::Var)
    positiveNodes_.insert(dag_.kidsOf(n)[1]);
}

/// Records `c <= v` (c >= 0) and `v < X`, the ranges of element indices.
void Normalizer::noteBound(uint32_t i) {
  const Node &n = dag_.node(i);
  if (n.op != Op::Le && n.op != Op::Lt)
    return;
  uint32_t lhs = dag_.kidsOf(n)[0], rhs = dag_.kidsOf(n)[1];
  const Node &l = dag_.node(lhs), &r = dag_.node(rhs);
  if (n.op == Op::Le && l.op == Op::IntConst && l.value >= 0 && r.op == Op::Var)
    nonNegative_.insert(rhs);
  if (n.op == Op::Lt && l.op == Op::Var && strictUpper_.emplace(lhs, rhs).second)
    boundsInOrder_.push_back(rhs);
}

/// Substitutes `c * q` for the variable of the first `v mod c == 0`
/// (c >= 2) of each v.
void Normalizer::noteDivisibility(uint32_t i, const std::vector<uint32_t> &roots) {
  const Node &n = dag_.node(i);
  if (n.op != Op::Eq)
    return;
  const Node &l = dag_.node(dag_.kidsOf(n)[0]), &r = dag_.node(dag_.kidsOf(n)[1]);
  if (r.op != Op::IntConst || r.value != 0 || l.op != Op::Mod)
    return;
  uint32_t v = dag_.kidsOf(l)[0];
  const Node divisor = dag_.node(dag_.kidsOf(l)[1]); // A copy: dag_ grows below.
  if (dag_.node(v).op != Op::Var || divisor.op != Op::IntConst || divisor.value < 2 ||
      substituted_.count(v))
    return;
  uint32_t q = dag_.var(freshName("q!" + dag_.nameOf(dag_.node(v)), roots));
  substituted_[v] = product(constantPoly(divisor.value), atom(q));
  definitions_.push_back(dag_.apply(Op::Eq, {v, term(substituted_[v])}));
  if (positiveNodes_.count(v)) // c*q = v >= 1 with c >= 2: q >= 1.
    positiveNodes_.insert(q);
}

/// `name`, with "!" appended until no variable of the query has it.
std::string Normalizer::freshName(std::string name, const std::vector<uint32_t> &roots) {
  if (!names_) {
    names_.emplace();
    std::set<uint32_t> below;
    for (uint32_t root : roots)
      forEachBelow(dag_, root, below, [&](uint32_t i) {
        if (dag_.node(i).op == Op::Var)
          names_->insert(dag_.nameOf(dag_.node(i)));
      });
  }
  while (names_->count(name))
    name += "!";
  return name;
}

void Normalizer::visit(uint32_t i) {
  // Copies: new nodes may move the DAG's node and kid arrays.
  const Node n = dag_.node(i);
  const std::vector<uint32_t> k(dag_.kidsOf(n), dag_.kidsOf(n) + n.kidCount);
  switch (n.op) {
  case Op::Var:
    ints_[i] = substituted_.count(i) ? substituted_.at(i) : atom(i);
    return;
  case Op::IntConst:
    ints_[i] = constantPoly(n.value);
    return;
  case Op::Add:
    ints_[i] = sum(intOf(k[0]), intOf(k[1]), 1);
    return;
  case Op::Sub:
    ints_[i] = sum(intOf(k[0]), intOf(k[1]), -1);
    return;
  case Op::Mul:
    ints_[i] = product(intOf(k[0]), intOf(k[1]));
    return;
  case Op::Div:
  case Op::Mod:
    ints_[i] = divide(intOf(k[0]), intOf(k[1]), n.op == Op::Mod);
    return;
  case Op::Ite: {
    uint32_t c = bools_.at(k[0]);
    const Node &cn = dag_.node(c);
    if (cn.op == Op::BoolConst)
      ints_[i] = cn.value ? intOf(k[1]) : intOf(k[2]);
    else
      ints_[i] = atom(dag_.apply(Op::Ite, {c, term(intOf(k[1])), term(intOf(k[2]))}));
    return;
  }
  default:
    bools_[i] = visitBool(i, n, k);
  }
}

uint32_t Normalizer::visitBool(uint32_t i, const Node &n, const std::vector<uint32_t> &k) {
  if (n.op == Op::BoolConst)
    return i;
  std::vector<uint32_t> kids;
  for (uint32_t j = 0; j < n.kidCount; ++j)
    kids.push_back(isIntOp(dag_.node(k[j]).op) ? term(intOf(k[j])) : bools_.at(k[j]));
  if (n.kidCount == 2 && isIntOp(dag_.node(k[0]).op)) {
    auto a = constantOf(intOf(k[0])), b = constantOf(intOf(k[1]));
    if (a && b) {
      bool v = n.op == Op::Eq   ? *a == *b
               : n.op == Op::Ne ? *a != *b
               : n.op == Op::Lt ? *a < *b
                                : *a <= *b;
      return dag_.constant(Op::BoolConst, v);
    }
  }
  if (useBounds_ && (n.op == Op::Le || n.op == Op::Lt) && isIntOp(dag_.node(k[0]).op) &&
      holdsByRange(n.op == Op::Lt, intOf(k[0]), intOf(k[1])))
    return dag_.constant(Op::BoolConst, true);
  if (auto decided = constantConnective(n.op, kids))
    return dag_.constant(Op::BoolConst, *decided);
  if (n.op == Op::Eq && useBounds_)
    return equality(intOf(k[0]), intOf(k[1]), 0);
  if (n.kidCount == 2 && kids[0] == kids[1] && isIntOp(dag_.node(k[0]).op))
    return dag_.constant(Op::BoolConst, n.op == Op::Eq || n.op == Op::Le);
  return dag_.apply(n.op, kids);
}

/// Whether `l < r` (strict) or `l <= r` follows from the range 0 <= A < U
/// of a division atom A (leftoverDivision records them; they follow from
/// bounds of variables, never from a comparison of a division atom, so no
/// fact rewrites its own source): `c <= A` for c <= 0, `c < A` for c < 0,
/// `A < U`, and A against a constant at least U - 1 (or U). Slot queries
/// guard a chunk number with `0 <= A && A < U`; folded, their `ite` goes.
bool Normalizer::holdsByRange(bool strict, const Poly &l, const Poly &r) const {
  auto rangedAtom = [&](const Poly &p) -> const Poly * {
    if (p.size() != 1 || p.begin()->second != 1 || p.begin()->first.size() != 1)
      return nullptr;
    auto it = atomUpper_.find(p.begin()->first[0]);
    return it == atomUpper_.end() ? nullptr : &it->second;
  };
  auto lc = constantOf(l), rc = constantOf(r);
  if (lc && rangedAtom(r))
    return strict ? *lc < 0 : *lc <= 0;
  const Poly *upper = rangedAtom(l);
  if (!upper)
    return false;
  auto uc = constantOf(*upper);
  if (strict && *upper == r)
    return true;
  return uc && rc && (*uc <= *rc || (!strict && *uc - 1 == *rc));
}

/// And, Or and Not decided by constant kids: a false conjunct, a true
/// disjunct, or all kids constant.
std::optional<bool> Normalizer::constantConnective(Op op, const std::vector<uint32_t> &kids) const {
  if (op != Op::And && op != Op::Or && op != Op::Not)
    return std::nullopt;
  bool allConstant = true, any = false, all = true;
  for (uint32_t kid : kids) {
    const Node &n = dag_.node(kid);
    if (n.op != Op::BoolConst) {
      allConstant = false;
      continue;
    }
    any = any || n.value;
    all = all && n.value;
  }
  if (op == Op::Not)
    return allConstant ? std::optional<bool>(!any) : std::nullopt;
  if (op == Op::And && (!all || allConstant))
    return all && allConstant;
  if (op == Op::Or && (any || allConstant))
    return any;
  return std::nullopt;
}

/// div or mod of p by d after splitting off d's multiples (Normalize.h);
/// what is left over stays a division node.
Poly Normalizer::divide(const Poly &p, const Poly &d, bool isMod) {
  auto dc = constantOf(d);
  const bool symbolic = !dc && d.size() == 1 && isPositive(d.begin()->first);
  if (!(dc && *dc > 0) && !symbolic) {
    return atom(dag_.apply(isMod ? Op::Mod : Op::Div, {term(p), term(d)}));
  }
  const Monomial divisorMono = dc ? Monomial{} : d.begin()->first;
  const int64_t divisorCoef = dc ? *dc : d.begin()->second;
  if (divisorCoef > 0 && useBounds_)
    if (auto r = mixedRadix(p, divisorCoef, divisorMono, isMod))
      return *r;
  auto [a, b] = splitMultiples(p, divisorMono, divisorCoef);
  auto rest = constantOf(b);
  if (rest && *rest == 0)
    return isMod ? Poly{} : a;
  if (dc && rest) // 0 < rest < d: b div d = 0, b mod d = rest.
    return isMod ? b : a;
  if (symbolic && rest && *rest == -1 && divisorCoef > 0) // -1 = d * (-1) + (d - 1)
    return isMod ? sum(d, constantPoly(1), -1) : sum(a, constantPoly(1), -1);
  Poly left = leftoverDivision(b, d, isMod);
  return isMod ? left : sum(a, left, 1);
}

/// l == r, split into digits where both sides are mixed-radix numbers:
/// M*A1 + B1 == M*A2 + B2 with 0 <= B1, B2 < M and M positive holds exactly
/// when A1 == A2 and B1 == B2 (divide both sides by M). M is tried among the
/// positive atoms and the coefficients of either side.
uint32_t Normalizer::equality(const Poly &l, const Poly &r, int depth) {
  std::set<std::pair<int64_t, uint32_t>> candidates; // (constant, 0) or (1, atom + 1)
  for (const Poly *side : {&l, &r})
    for (const auto &[mono, c] : *side) {
      if (c > 1)
        candidates.insert({c, 0});
      for (uint32_t a : mono)
        if (positiveNodes_.count(atomNode_[a]))
          candidates.insert({1, a + 1});
    }
  for (const auto &[mc, atomPlusOne] : depth < 8 ? candidates : decltype(candidates){}) {
    Monomial mm;
    if (atomPlusOne)
      mm.push_back(atomPlusOne - 1);
    auto [a1, b1] = splitMultiples(l, mm, mc);
    auto [a2, b2] = splitMultiples(r, mm, mc);
    if ((a1.empty() && a2.empty()) || (b1.empty() && b2.empty()))
      continue;
    Poly m = mm.empty() ? constantPoly(mc) : Poly{{mm, 1}};
    if (provenInRange(b1, m, 0) && provenInRange(b2, m, 0))
      return dag_.apply(Op::And, {equality(a1, a2, depth + 1), equality(b1, b2, depth + 1)});
  }
  auto lc = constantOf(l), rc = constantOf(r);
  if (lc && rc)
    return dag_.constant(Op::BoolConst, *lc == *rc);
  uint32_t lt = term(l), rt = term(r);
  return lt == rt ? dag_.constant(Op::BoolConst, true) : dag_.apply(Op::Eq, {lt, rt});
}

/// b div d or b mod d as an atom, with its range when d is positive:
/// 0 <= b mod d < d; 0 <= b div d < K when 0 <= b < K*d.
Poly Normalizer::leftoverDivision(const Poly &b, const Poly &d, bool isMod) {
  Poly left = atom(dag_.apply(isMod ? Op::Mod : Op::Div, {term(b), term(d)}));
  uint32_t num = left.begin()->first[0];
  auto dc = constantOf(d);
  bool positive =
      dc ? *dc > 0 : d.size() == 1 && d.begin()->second > 0 && isPositive(d.begin()->first);
  if (!positive || atomUpper_.count(num))
    return left;
  if (isMod) {
    atomUpper_.emplace(num, d);
    return left;
  }
  if (b.size() != 1 || b.begin()->second != 1 || b.begin()->first.size() != 1)
    return left;
  auto upper = upperOf(b.begin()->first[0]);
  if (!upper)
    return left;
  auto [k, rest] =
      splitMultiples(*upper, dc ? Monomial{} : d.begin()->first, dc ? *dc : d.begin()->second);
  if (rest.empty())
    atomUpper_.emplace(num, k);
  return left;
}

/// Mixed-radix digits: with p = A*M + B and a positive divisor K*M,
/// p div (K*M) = (A + B div M) div K and
/// p mod (K*M) = ((A + B div M) mod K)*M + B mod M (floor division nests).
/// When 0 <= B < M, B div M = 0 and B mod M = B. M ranges over the parts of
/// the divisor, largest first; one whose B is in range wins.
std::optional<Poly> Normalizer::mixedRadix(const Poly &p, int64_t dCoef, const Monomial &dMono,
                                           bool isMod) {
  if (dMono.size() > 4)
    return std::nullopt;
  struct Digit {
    Poly a, b, m, k;
  };
  std::optional<Digit> nested;
  std::set<std::pair<int64_t, Monomial>> tried;
  for (int64_t mc : {dCoef, int64_t{1}})
    for (unsigned mask = (1u << dMono.size()); mask-- > 0;) {
      Monomial mm, km;
      for (size_t j = 0; j < dMono.size(); ++j)
        ((mask >> j) & 1 ? mm : km).push_back(dMono[j]);
      if ((mc == 1 && mm.empty()) || !tried.insert({mc, mm}).second)
        continue;
      auto [a, b] = splitMultiples(p, mm, mc);
      Poly m = product(constantPoly(mc), mm.empty() ? constantPoly(1) : Poly{{mm, 1}});
      Poly k = km.empty() ? constantPoly(dCoef / mc) : Poly{{km, dCoef / mc}};
      if (provenInRange(b, m, 0))
        return isMod ? sum(product(divide(a, k, true), m), b, 1) : divide(a, k, false);
      if (!nested && !a.empty() && !b.empty() && k != constantPoly(1))
        nested = Digit{a, b, m, k};
    }
  if (!nested)
    return std::nullopt;
  Poly high = sum(nested->a, divide(nested->b, nested->m, false), 1);
  if (!isMod)
    return divide(high, nested->k, false);
  return sum(product(divide(high, nested->k, true), nested->m), divide(nested->b, nested->m, true),
             1);
}

/// Whether 0 <= b < m follows from the asserted ranges: b is a constant in
/// range, or b = v*R + S with 0 <= v < U, R a positive constant times a
/// positive monomial (or 1), 0 <= S < R and m = U*R (then
/// 0 <= b <= (U-1)*R + R-1 < m). A constant in R covers digits of a
/// constant radix, `2*y1 + y2 < 8` with y1 < 4 and y2 < 2.
bool Normalizer::provenInRange(const Poly &b, const Poly &m, int depth) {
  auto bc = constantOf(b), mc = constantOf(m);
  if (bc && *bc >= 0 &&
      ((mc && *bc < *mc) ||
       (*bc == 0 && m.size() == 1 && m.begin()->second > 0 && isPositive(m.begin()->first))))
    return true;
  if (depth > 6 || bc)
    return false;
  std::set<uint32_t> atoms;
  for (const auto &[mono, c] : b)
    atoms.insert(mono.begin(), mono.end());
  for (uint32_t v : atoms) {
    auto upper = upperOf(v);
    if (!upper)
      continue;
    Poly rest, r;
    bool linear = true;
    for (const auto &[mono, c] : b) {
      auto q = quotientOf(mono, {v});
      if (!q) {
        addTerm(rest, mono, c);
      } else {
        linear = linear && c >= 1 && !std::count(q->begin(), q->end(), v) && r.empty();
        addTerm(r, *q, c);
      }
    }
    if (!linear || r.size() != 1 || r.begin()->second < 1 || !isPositive(r.begin()->first))
      continue;
    if (product(*upper, r) == m && provenInRange(rest, r, depth + 1))
      return true;
  }
  return false;
}

/// U with 0 <= atom < U: a division atom's range, or a variable's asserted
/// bounds (normalized first, by run).
std::optional<Poly> Normalizer::upperOf(uint32_t atomNum) {
  if (auto known = atomUpper_.find(atomNum); known != atomUpper_.end())
    return known->second;
  uint32_t node = atomNode_[atomNum];
  if (!nonNegative_.count(node) || !strictUpper_.count(node))
    return std::nullopt;
  auto it = ints_.find(strictUpper_.at(node));
  if (it == ints_.end())
    return std::nullopt;
  return it->second;
}

Poly Normalizer::polyOf(uint32_t node) {
  dag_.postOrder(
      node, [&](uint32_t i) { return ints_.count(i) > 0 || bools_.count(i) > 0; },
      [&](uint32_t i) { visit(i); });
  return ints_.at(node);
}

bool Normalizer::isPositive(const Monomial &m) const {
  for (uint32_t atomNum : m)
    if (!positiveNodes_.count(atomNode_[atomNum]))
      return false;
  return true;
}

Poly Normalizer::atom(uint32_t node) {
  auto [it, fresh] = atomNumber_.emplace(node, static_cast<uint32_t>(atomNode_.size()));
  if (fresh)
    atomNode_.push_back(node);
  Poly p;
  p[{it->second}] = 1;
  return p;
}

uint32_t Normalizer::monomialTerm(const Monomial &m, int64_t coef) {
  uint32_t t = 0;
  bool first = true;
  for (uint32_t atomNum : m) {
    t = first ? atomNode_[atomNum] : dag_.apply(Op::Mul, {t, atomNode_[atomNum]});
    first = false;
  }
  if (first)
    return constant(coef);
  return coef == 1 ? t : dag_.apply(Op::Mul, {constant(coef), t});
}

uint32_t Normalizer::term(const Poly &p) {
  if (p.empty())
    return constant(0);
  uint32_t t = 0;
  bool first = true;
  for (const auto &[m, c] : p) { // The constant (empty monomial) first.
    uint32_t mt = monomialTerm(m, c);
    t = first ? mt : dag_.apply(Op::Add, {t, mt});
    first = false;
  }
  return t;
}

} // namespace

std::vector<uint32_t> normalizeQuery(TermDag &dag, const std::vector<uint32_t> &roots) {
  try {
    return Normalizer(dag).run(roots);
  } catch (const GiveUp &) {
    return roots;
  }
}

} // namespace shardcheck::smt
