// Implementation of Extent; see Extent.h.
#include "ir/Extent.h"

#include "util/Checked.h"
#include "util/Diagnostics.h"

#include <cstdint>

namespace shardcheck {

struct Extent::Node {
  Kind kind;
  int64_t value = 0;
  std::string name;
  std::shared_ptr<const Node> a, b;
};

namespace {
const std::string kEmpty;

/// a `k` b on int64; nullopt on a division by zero or when the result does
/// not fit (then `*overflow` is set): sizes never wrap.
std::optional<int64_t> fold(Extent::Kind k, int64_t a, int64_t b, bool *overflow) {
  std::optional<int64_t> r;
  switch (k) {
  case Extent::Kind::Add:
    r = checkedAdd(a, b);
    break;
  case Extent::Kind::Sub:
    if (int64_t d = 0; !__builtin_sub_overflow(a, b, &d))
      r = d;
    break;
  case Extent::Kind::Mul:
    r = checkedMul(a, b);
    break;
  case Extent::Kind::Div:
  case Extent::Kind::Mod:
  case Extent::Kind::CeilDiv:
    if (b == 0)
      return std::nullopt;
    if (a == INT64_MIN && b == -1)
      break;
    if (k == Extent::Kind::Div)
      return a / b;
    if (k == Extent::Kind::Mod)
      return a % b;
    // ceilDiv without forming a + b - 1, which can overflow.
    return a / b + ((a % b != 0) && ((a < 0) == (b < 0)) ? 1 : 0);
  default:
    return std::nullopt;
  }
  if (!r)
    *overflow = true;
  return r;
}
} // namespace

Extent::Extent() : Extent(constant(1)) {}

Extent Extent::constant(int64_t value) {
  auto n = std::make_shared<Node>();
  n->kind = Kind::Constant;
  n->value = value;
  return Extent(std::move(n));
}

Extent Extent::symbol(std::string name) {
  SC_ASSERT(!name.empty(), "symbol needs a name");
  auto n = std::make_shared<Node>();
  n->kind = Kind::Symbol;
  n->name = std::move(name);
  return Extent(std::move(n));
}

Extent Extent::binary(Kind k, const Extent &a, const Extent &b) {
  auto ca = a.asConstant(), cb = b.asConstant();
  bool overflow = false;
  if (ca && cb && *ca >= 0 && *cb > 0)
    if (auto v = fold(k, *ca, *cb, &overflow))
      return constant(*v); // An overflowing one stays unfolded; evaluate() reports it.
  // Identities that keep printed extents short; all exact on integers.
  if ((k == Kind::Mul || k == Kind::Div || k == Kind::CeilDiv) && cb && *cb == 1)
    return a;
  if (k == Kind::Mul && ca && *ca == 1)
    return b;
  auto n = std::make_shared<Node>();
  n->kind = k;
  n->a = a.node_;
  n->b = b.node_;
  return Extent(std::move(n));
}

Extent Extent::add(const Extent &a, const Extent &b) {
  return binary(Kind::Add, a, b);
}
Extent Extent::sub(const Extent &a, const Extent &b) {
  return binary(Kind::Sub, a, b);
}
Extent Extent::mul(const Extent &a, const Extent &b) {
  return binary(Kind::Mul, a, b);
}
Extent Extent::div(const Extent &a, const Extent &b) {
  return binary(Kind::Div, a, b);
}
Extent Extent::mod(const Extent &a, const Extent &b) {
  return binary(Kind::Mod, a, b);
}
Extent Extent::ceilDiv(const Extent &a, const Extent &b) {
  return binary(Kind::CeilDiv, a, b);
}

Extent::Kind Extent::kind() const {
  return node_->kind;
}

std::optional<int64_t> Extent::asConstant() const {
  if (node_->kind == Kind::Constant)
    return node_->value;
  return std::nullopt;
}

const std::string &Extent::symbolName() const {
  return node_->kind == Kind::Symbol ? node_->name : kEmpty;
}

Extent Extent::lhs() const {
  SC_ASSERT(node_->a, "lhs() of a leaf extent");
  return Extent(node_->a);
}

Extent Extent::rhs() const {
  SC_ASSERT(node_->b, "rhs() of a leaf extent");
  return Extent(node_->b);
}

void Extent::collectSymbols(std::set<std::string> &out) const {
  if (node_->kind == Kind::Symbol)
    out.insert(node_->name);
  if (node_->a)
    Extent(node_->a).collectSymbols(out);
  if (node_->b)
    Extent(node_->b).collectSymbols(out);
}

std::set<std::string> Extent::symbols() const {
  std::set<std::string> s;
  collectSymbols(s);
  return s;
}

std::optional<int64_t> Extent::evaluate(const std::map<std::string, int64_t> &bindings) const {
  switch (node_->kind) {
  case Kind::Constant:
    return node_->value;
  case Kind::Symbol: {
    auto it = bindings.find(node_->name);
    if (it == bindings.end())
      return std::nullopt;
    return it->second;
  }
  default:
    break;
  }
  auto a = Extent(node_->a).evaluate(bindings);
  auto b = Extent(node_->b).evaluate(bindings);
  if (!a || !b)
    return std::nullopt;
  bool overflow = false;
  auto v = fold(node_->kind, *a, *b, &overflow);
  if (overflow)
    throwInputError("size-overflow", "extent " + shownToken(str()) +
                                         " overflows a signed 64-bit "
                                         "integer at the sizes given; see docs/limits.md");
  return v;
}

std::string Extent::strInner() const {
  const char *op = nullptr;
  switch (node_->kind) {
  case Kind::Constant:
    return std::to_string(node_->value);
  case Kind::Symbol:
    return node_->name;
  case Kind::Add:
    op = " + ";
    break;
  case Kind::Sub:
    op = " - ";
    break;
  case Kind::Mul:
    op = " * ";
    break;
  case Kind::Div:
    op = " / ";
    break;
  case Kind::Mod:
    op = " % ";
    break;
  case Kind::CeilDiv:
    return "ceilDiv(" + Extent(node_->a).str() + ", " + Extent(node_->b).str() + ")";
  }
  return Extent(node_->a).str() + op + Extent(node_->b).str();
}

std::string Extent::str() const {
  if (node_->kind == Kind::Constant || node_->kind == Kind::Symbol)
    return strInner();
  return "( " + strInner() + " )";
}

bool operator==(const Extent &a, const Extent &b) {
  if (a.node_ == b.node_)
    return true;
  const auto &x = *a.node_, &y = *b.node_;
  if (x.kind != y.kind)
    return false;
  switch (x.kind) {
  case Extent::Kind::Constant:
    return x.value == y.value;
  case Extent::Kind::Symbol:
    return x.name == y.name;
  default:
    return Extent(x.a) == Extent(y.a) && Extent(x.b) == Extent(y.b);
  }
}

} // namespace shardcheck
