// The planner's abstract sharding state of a tensor, and the tensors built
// from it.
//
// A ShardState lists, for every logical axis of an edge's producer (in its
// logical order), the DID types that shard it as a chain of outer splits by
// their mesh axis sizes, outermost first (DTensor's shard order), and which
// of those axes the edge's consumer reduces. That is all a same-mesh
// resharding changes, so the planner (checker/Planner.h) searches over these
// states and builds one tensor per state it needs.
//
// readShardState reads a tensor's state when its sharding has that shape
// (a DID on a logical ID, or outer splits by the mesh axis size with the DID
// on the outer part, nested on the inner part); anything else (inner splits,
// DIDs below loop splits) is not read, and the planner leaves the edge alone.
// addStateTensor adds a tensor of a given state to a fusion: fresh IDs cloned
// from the producer's logical domain and the splits, without an allocation
// domain: the default layout (docs/semantics.md, Local buffer layout) keeps
// each axis's innermost local part, nested shardings included, which is
// DTensor's buffer.
//
// A reduction may be split (checker/Planner.h): a state between the
// producer's and the consumer's may have reduced some of the consumer's
// reduced axes and not yet the others, which are still data axes sharded by
// their DIDs: a partial over those DIDs, written as DTensor's Partial
// placements are (dtensor/DTensorToIr.cpp).
//
// This file does not decide or prove anything.
#pragma once

#include "ir/Fusion.h"

#include <optional>
#include <string>
#include <vector>

namespace shardcheck {

struct ShardState {
  /// Per producer logical axis: the DID types splitting it, outermost first.
  std::vector<std::vector<ParallelType>> axes;
  /// Per producer logical axis: whether it is reduced in this state (the
  /// consumer's: its reduction IDs; an intermediate's: those reduced so far).
  std::vector<bool> reduced;
  /// Whether nested levels are chunked splits (DTensor's torch.chunk
  /// nesting, docs/semantics.md "Chunked splits"), as read from a tensor that
  /// has one; a property of the whole search (the planner gives source and
  /// target the same), so moves keep it.
  bool chunked = false;

  /// `[DIDy DIDx | - | r:DIDz]`: canonical, one per state (memo key).
  std::string key() const;
  /// Where `t` shards: the axis, or nullopt.
  std::optional<size_t> axisOf(ParallelType t) const;
  /// The DIDs on reduced axes, in mesh-axis order (DIDz, DIDy, DIDx).
  std::vector<ParallelType> reducedDids() const;
  /// A state after (a part of) the edge's reduction: some axis is marked
  /// reduced (and carries no DID). Before it, or on a copy edge, none is.
  bool afterReduction() const;
  /// The axes reduced in `to` and not in this state.
  std::vector<bool> reducedBy(const ShardState &to) const;
  bool operator==(const ShardState &o) const {
    return axes == o.axes && reduced == o.reduced && chunked == o.chunked;
  }
};

/// The state of `tv` (a producer, or a consumer whose logical axes map
/// positionally onto `positions` of the producer), or nullopt when its
/// sharding is not of the shape above. `reducedAxes`: the consumer's
/// reduction IDs, marked reduced and with no DIDs.
std::optional<ShardState> readShardState(const Fusion &f, const TensorView &tv,
                                         const DeviceMesh &mesh);

/// Adds to `f` a tensor on `mesh` whose logical domain clones `like`'s and
/// whose sharding is `state`. Unreduced axes are data axes; a reduced axis
/// is a reduction ID when `reducedEarlier` (per axis; empty: none) does not
/// mark it (the output of the reduction step that reduces it) and is left
/// out when it does (a tensor written after that step, whose data axes are
/// the others). Returns its number.
TensorNum addStateTensor(Fusion &f, const TensorView &like, const ShardState &state,
                         const DeviceMesh &mesh, const std::vector<bool> &reducedEarlier = {});

} // namespace shardcheck
