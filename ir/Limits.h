// Structural limits every fusion must respect before any walk over it.
//
// Walks over a fusion (extent encoding, layouts, printing, the extents a
// split derives) recurse along chains of transforms. A real nvFuser fusion
// derives an IterDomain through at most a few dozen splits and merges; an
// adversarial one through 30,000 would overflow the stack. The readers call
// checkFusionLimits on every fusion they build, so that such an input ends in
// a located error instead (docs/limits.md lists every limit).
//
// This file does not check sharding well-formedness (ir/Lints.h does), and
// of sizes checks only each tensor's constant element count: sizes that
// depend on symbols are checked where they are computed (util/Checked.h).
#pragma once

#include "ir/Fusion.h"

namespace shardcheck {

/// The longest chain of transforms (splits, merges, resizes, swizzles) an
/// IterDomain may be derived through.
inline constexpr int kMaxTransformDepth = 1000;

/// Throws an InputError, located at the offending transform or tensor:
/// `transform-depth` for a chain longer than kMaxTransformDepth,
/// `transform-cycle` for an IterDomain derived from itself, `size-overflow`
/// for a tensor whose constant extents multiply past int64.
void checkFusionLimits(const Fusion &fusion);

} // namespace shardcheck
