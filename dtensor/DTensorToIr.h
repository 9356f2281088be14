// Maps a DTensor redistribute (DTensorCase) to shardcheck's IR, so that the
// existing checker judges it (docs/dtensor.md, "Mapping to the IR").
//
// The Document has one or two fusions:
//   [0] the transition: T0 (source placements) -> T1 (target placements),
//       a copy (`LoadStore`, which nvFuser would not lower, so no nvFuser
//       verdict is attached), or a `reduction` when partial mesh dims are
//       reduced (for Partial(avg) a sum, then a `/` by the sizes of the avg
//       mesh dims reduced); a target partial on a mesh dim the source
//       replicates (DTensor's Replicate -> Partial,
//       Partial._partition_value) is then written locally: a `broadcast`
//       into the new unreduced axis and, for a sum, a `/` by the mesh dim's
//       size (avg, max and min keep the value; a local step of [1] too);
//   [1] DTensor's own steps (when the document records them), a host IR
//       program: each step that issued a collective is a `Communication`
//       (DTensor's kind, and the group of the mesh's first device as its
//       team, standing for every parallel group), between temporaries laid
//       out the way DTensor packs its flat buffers (rank-major), followed by
//       a local copy into the step's placement; a local step is a copy. An
//       avg collective (NCCL's ncclAvg) is the sum Communication, then the
//       local `/` by the mesh dim's size.
//       Recorded buffer sizes must be DTensor's buffers (else rejected):
//       where a nested shard's outer level does not divide (chunked splits),
//       DTensor pads each group by its own chunk, so its buffers are, in
//       each group, one prefix of the mapped (uniform) ones, and the
//       Communication is padded (docs/dtensor.md, "Nested uneven shards:
//       each group's own padding").
// Expressions and tensors are located at the JSON values they come from
// (the step, the collective, the placements), so a verdict or
// counterexample names the step.
//
// Placement -> IR: mesh dim k is the DID of mesh axis k (DIDx the last);
// Shard(d) on mesh dims k1..km (outermost first, DTensor's shard order) is a
// chain of outer splits of logical axis d, the outer part of split j on the
// DID of kj; Replicate() is no DID; Partial(op) on mesh dim k is an extra
// logical axis of extent |k| on the DID of k that a reduction (op add, max,
// min; add then `/` |k| for avg) removes.
//
// Rejected with a located InputError (`dtensor-unmapped`), never guessed:
// a reduce op other than sum, avg, max and min, a change of reduce op (DTensor
// keeps the local values: the tensor's value changes), max or min partials
// reduced at once with another op, Shard -> Partial (DTensor refuses it too, except through
// Replicate in its graph-based planner, which the mapping follows), a
// `_StridedShard` whose split factor is not the product of the mesh dims
// nested outside it, meshes of more than 3 dims, a shard dim outside the
// tensor, recorded counts that are not DTensor's buffers or that differ
// within one group. Nested shards whose outer levels do not divide are
// chunked splits (DTensor chunks the rows each rank holds). A DTensor step
// that this mapping cannot express as a collective on the IR's buffers (an
// all_to_all on uneven sizes, a reduction other than the partial's, a
// gather of a shard that is not the innermost) becomes a plain edge: the
// checker then judges the step's data movement but gives no verdict on
// DTensor's collective.
//
// This file does not check anything and does not read JSON.
#pragma once

#include "dtensor/DTensorCase.h"
#include "ir/Fusion.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace shardcheck::dtensor {

/// The Document check-sharding checks for a DTensor document.
Document dtensorToDocument(const DTensorCase &c);

/// The mesh dims sharding each tensor dim of `ps`, outermost first
/// (DTensor's shard order: its default, `_StridedShard` nesting, or the
/// document's `shard_order`); a split factor no nesting expresses is a
/// `dtensor-unmapped` InputError.
std::map<int64_t, std::vector<int64_t>> shardOrder(const DTensorCase &c, const Placements &ps);

/// The devices of mesh dim k's group through `device`, in coordinate order.
std::vector<int64_t> groupAlong(const DeviceMesh &mesh, int64_t k, int64_t device);

/// The IR dtype of a torch dtype name (float32 when unknown).
DataType dataTypeOf(const std::string &torchName);

/// The IR collective of a DTensor collective kind the mapping models
/// (all_gather, reduce_scatter, all_reduce, all_to_all); nullopt for others.
std::optional<CollectiveType> collectiveOf(const std::string &kind);

} // namespace shardcheck::dtensor
