// Seeded random DTensor redistributes for the end-to-end oracle
// (tests/oracle/Oracle.h): a document in docs/dtensor.md's format (a random
// mesh of 1 to 3 dims and up to 8 devices, ids sometimes permuted; a tensor
// of 1 to 3 dims, sizes 1 to 9, even or not; random source and target
// placements: Replicate, Shard(d), Partial(sum|max|min|avg); on a fifth of the
// meshes of several dims, one partial op on every source mesh dim, so that
// the planner's split reductions are exercised), read and mapped to
// the IR by dtensor/ as check-sharding maps it. The oracle then runs:
//   [0] the transition (fusion 0 of the mapping), and
//   [1] DTensor's own sequence as the model of its plan issues it
//       (dtensor/DTensorPlan.h, on a CPU or a CUDA process group by seed),
//       put in the document as if recorded and mapped to fusion 1, where
//       the model knows the plan and the mapping takes it, and
//   [2] that sequence made wrong in one way, as a wrong recording would be
//       (one collective's groups along another mesh dim or out of order,
//       one rank's counts, the reduce op, or the pad of a padded
//       collective dropped), preferring DTensor's padded collectives
//       (nested uneven shards among them, each group padded by its own
//       chunk: counted apart, `nestedUneven`):
// each checked, planned and run on simulated devices against the reference.
// The oracle requires the wrong collective never to be confirmed.
//
// It does not check, plan or run anything, and it does not decide which
// placements are right; documents the reader rejects (placements with no
// faithful mapping) are counted as rejected, not run.
#pragma once

#include "ir/Fusion.h"

#include <cstdint>
#include <string>
#include <vector>

namespace shardcheck::oracle {

struct DTensorDraw {
  uint64_t seed = 0;
  std::string document; ///< The drawn document (JSON text, no recording).
  std::string rejected; ///< The reader's message when it rejects it; else empty.
  /// The transition, then DTensor's modelled sequence where mapped.
  std::vector<Fusion> fusions;
  std::string sequence; ///< Where [1] comes from, or why there is none.
  /// DTensor's sequence made wrong in one way (wrongDTensorSequence), when
  /// the model gives one: the mutation's name (`wrong-groups`,
  /// `wrong-counts`, `wrong-op`, `missing-pad`), whether the mutated
  /// collective is a padded one, the step it is (its Communication's
  /// number), and either its fusion's index in `fusions` or the mapping's
  /// message rejecting it.
  std::string wrongMutation;
  bool wrongPadded = false;
  int wrongStep = -1;
  int wrongFusion = -1;
  std::string wrongRejected;
  /// Whether the source or the target nests a shard inside a level that
  /// does not divide (DTensor pads each group by its own chunk there).
  bool nestedUneven = false;
  /// For such a draw whose modelled sequence has a collective whose ranks
  /// pass different sizes (each group padded by its own chunk): whether
  /// that sequence with every rank given the largest group's shapes (the
  /// uniform padding DTensor does not do) is `rejected` by the mapping, as
  /// it must be where the collective is mapped, `plain-edge` (its step not
  /// mapped as the collective) or `mapped`; else empty.
  std::string uniformCounts;
};

/// DTensorDraw::sequence where the model's plan has no steps.
inline constexpr const char *kNoRedistribute = "DTensor does not redistribute";

/// The redistribute drawn from `seed` and its fusions.
DTensorDraw randomDTensor(uint64_t seed);

} // namespace shardcheck::oracle
