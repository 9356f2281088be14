// The sizes a fusion's shardings imply (docs/semantics.md, Elements).
//
// nvFuser requires every device split to divide its input evenly and every
// DID-parallel loop ID to span exactly the mesh axis it indexes. A proof over
// symbolic extents covers the bindings that satisfy these constraints, and a
// plan states them. Both the SMT encoding and the plan builder take them from
// here, so they cannot disagree.
//
// Extents are taken as derived (a split's outer output of `i0` by 4 is
// `ceilDiv(i0, 4)` whatever the dump printed for it), so a printed constant
// never hides a constraint on a symbol. Constraints between constants are not
// listed: a constant that violates them is a lint finding, not an assumption.
//
// This file does not check the constraints or decide anything; it lists them.
#pragma once

#include "ir/Fusion.h"

#include <string>
#include <vector>

namespace shardcheck {

struct SizeConstraint {
  enum class Kind { Divisible, Equal, Positive };
  Kind kind = Kind::Positive;
  Extent lhs, rhs;  ///< Divisible: lhs % rhs == 0; Equal: lhs == rhs; Positive: lhs >= 1.
  std::string text; ///< `i0 % 2 == 0`, `ceilDiv(i0, 4) == 2`.
};

/// An ID's extent computed from its definition (split: ceilDiv or the
/// factor; merge: the product); a broadcast's is 1.
Extent derivedExtent(const Fusion &fusion, IdNum id);

/// The constraints `tv`'s device splits and DIDs imply that involve symbols.
std::vector<SizeConstraint> impliedConstraints(const Fusion &fusion, const TensorView &tv);

} // namespace shardcheck
