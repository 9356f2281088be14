// Extent: an IterDomain's size, an integer or a symbolic expression.
//
// nvFuser prints extents as integers (`128`), symbols (`i0`, `blockDim.x`) or
// parenthesized expressions (`( i0 * i1 )`, `( ceilDiv(i3, 2) )`). Extent is an
// immutable value type over a small expression tree with structural equality.
// Factories fold constants, so `Extent::ceilDiv(8, 2)` is the constant 4;
// a fold that would overflow int64 is left unfolded.
//
// This file knows nothing of SMT; the checker translates extents itself.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

namespace shardcheck {

class Extent {
public:
  enum class Kind { Constant, Symbol, Add, Sub, Mul, Div, Mod, CeilDiv };

  /// The constant 1 (a broadcast's extent).
  Extent();
  static Extent constant(int64_t value);
  static Extent symbol(std::string name);
  static Extent add(const Extent &a, const Extent &b);
  static Extent sub(const Extent &a, const Extent &b);
  static Extent mul(const Extent &a, const Extent &b);
  /// Floor division (C++ `/` on non-negative values).
  static Extent div(const Extent &a, const Extent &b);
  static Extent mod(const Extent &a, const Extent &b);
  static Extent ceilDiv(const Extent &a, const Extent &b);

  Kind kind() const;
  bool isConstant() const { return kind() == Kind::Constant; }
  std::optional<int64_t> asConstant() const;
  /// For Symbol: its name. Empty otherwise.
  const std::string &symbolName() const;
  /// For binary kinds: the operands.
  Extent lhs() const;
  Extent rhs() const;

  /// Every symbol the expression mentions.
  void collectSymbols(std::set<std::string> &out) const;
  std::set<std::string> symbols() const;

  /// Evaluates with the given symbol values; nullopt if a symbol is unbound
  /// or a division by zero occurs. Throws an InputError `size-overflow` when
  /// a value does not fit in int64 (sizes never wrap).
  std::optional<int64_t> evaluate(const std::map<std::string, int64_t> &bindings) const;

  /// nvFuser's spelling: `8`, `i0`, `( i0 * i1 )`, `( ceilDiv(i3, 2) )`.
  std::string str() const;

  friend bool operator==(const Extent &a, const Extent &b);
  friend bool operator!=(const Extent &a, const Extent &b) { return !(a == b); }
  friend bool operator<(const Extent &a, const Extent &b) { return a.str() < b.str(); }

private:
  struct Node;
  explicit Extent(std::shared_ptr<const Node> n) : node_(std::move(n)) {}
  static Extent binary(Kind k, const Extent &a, const Extent &b);
  std::string strInner() const;
  std::shared_ptr<const Node> node_;
};

} // namespace shardcheck
