// Seeded random compiler padded Communications, right and wrong, for the
// SMT-vs-brute-force cross-check (tests/crosscheck_test.cpp).
//
// A compiler's Communication with `padded=true` (docs/semantics.md, Padded
// collectives; DTensor's collectives on its padded chunks, docs/dtensor.md)
// moves the members' padded buffers slot for slot. Each case is one such
// edge in the shapes DTensor's mapping gives them (dtensor/DTensorToIr.cpp),
// on a 1-D or 2-D mesh of 2 to 8 devices (ids sometimes permuted), a tensor
// [A, E] with small constant sizes, E (or A) split unevenly:
//   - Allgather: Shard(E) -> E gathered rank-major, padded to n chunks;
//   - ReduceScatter: a partial axis, E padded to n chunks rank-major ->
//     Shard(E);
//   - Allreduce: a partial axis -> reduced, E padded (by a non-device split,
//     or sharded unevenly on the other mesh axis);
//   - AllToAll: Shard(A) -> Shard(E), both uneven, each padded rank-major;
//   - SendRecv: Shard(E) on one mesh -> the same on another.
// A drawn case is right, or wrong in exactly one way that makes it wrong by
// construction (the comment of each says why): the team order, the padded
// shape (a pad factor whose padded count differs), the collective kind, or
// the slots (the rank-major order broken by a permuted layout). A
// `missing-pad` case is a right one with `padded` cleared: an equal-size
// collective on padded buffers, which docs/semantics.md leaves unsupported
// (never proved); it may move the right data, so it is no wrong case.
//
// It does not check anything (both the SMT checker and the brute force
// judge the cases) and shares no code with either; it only builds fusions
// through ir/FusionBuilder.h and lowerings in checker/Lowering.h's terms.
#pragma once

#include "checker/Lowering.h"
#include "ir/Fusion.h"
#include "ir/FusionGraph.h"

#include <cstdint>
#include <string>

namespace shardcheck::bruteforce {

/// How a drawn padded Communication is meant: right, or wrong in one way.
#define SC_PADDED_DRAWS(X)                                                                         \
  X(Right, "right")                                                                                \
  X(WrongTeam, "wrong-team")                                                                       \
  X(WrongShape, "wrong-shape")                                                                     \
  X(WrongKind, "wrong-kind")                                                                       \
  X(WrongSlots, "wrong-slots")                                                                     \
  X(MissingPad, "missing-pad")

enum class PaddedDraw {
#define SC_PADDED_DRAW_ENUM(name, spelling) name,
  SC_PADDED_DRAWS(SC_PADDED_DRAW_ENUM)
#undef SC_PADDED_DRAW_ENUM
};

/// `right`, `wrong-team`, ...
const char *paddedDrawName(PaddedDraw draw);

/// One drawn compiler padded Communication.
struct RandomPaddedCase {
  Fusion fusion; ///< Producer, consumer and the Communication between them.
  FusionEdge edge;
  /// Padded, without the unpad copy; a reduction reads the members' own
  /// buffers (what nvFuser's runtime and DTensor hand a collective).
  Lowering lowering;
  PaddedDraw draw = PaddedDraw::Right;
  /// One line: the collective, the mesh, the sizes and the draw.
  std::string description;
};

/// The case of `seed` (the same seed always gives the same case).
RandomPaddedCase randomPaddedCommunication(uint64_t seed);

} // namespace shardcheck::bruteforce
