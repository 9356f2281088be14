// Implementation of Extent; see Extent.h.
#include "ir/Extent.h"

#include "util/Diagnostics.h"

namespace shardcheck {

struct Extent::Node {
  Kind kind;
  int64_t value = 0;
  std::string name;
  std::shared_ptr<const Node> a, b;
};

namespace {
const std::string kEmpty;

std::optional<int64_t> fold(Extent::Kind k, int64_t a, int64_t b) {
  switch (k) {
  case Extent::Kind::Add:
    return a + b;
  case Extent::Kind::Sub:
    return a - b;
  case Extent::Kind::Mul:
    return a * b;
  case Extent::Kind::Div:
    if (b == 0)
      return std::nullopt;
    return a / b;
  case Extent::Kind::Mod:
    if (b == 0)
      return std::nullopt;
    return a % b;
  case Extent::Kind::CeilDiv:
    if (b == 0)
      return std::nullopt;
    return (a + b - 1) / b;
  default:
    return std::nullopt;
  }
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
  if (ca && cb && *ca >= 0 && *cb > 0)
    if (auto v = fold(k, *ca, *cb))
      return constant(*v);
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
  return fold(node_->kind, *a, *b);
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
