// The collective rules every backend runs by: one call over one team, who
// in it sends and who receives, the per-rank chunk, the buffer counts each
// kind requires, and the bytes a call moves (DESIGN section 3's table; the
// columns of ir/Collectives.h drive what they can).
//
// Every backend checks a call's counts here before moving anything, on
// every process with the sizes of every device (so that a bad plan fails
// the same step the same way everywhere instead of hanging one process in a
// mismatched call); the sim collectives, MPI and NCCL then trust them. The
// error messages keep nvFuser's words ("all buffers must have the same
// number of elements") so that a user who saw nvFuser fail recognizes the
// same failure.
//
// What it does not do: move data (executor/sim/SimCollectives.h states the
// semantics on host buffers; executor/mpi/ and executor/gpu/ call their
// libraries), know tensors or layouts.
#pragma once

#include "ir/Collectives.h"
#include "plan/Plan.h"

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace shardcheck {

/// One collective call over one team.
struct CollectiveCall {
  /// One of DESIGN section 3's table, or AllToAllv (see `counts`).
  CollectiveType kind = CollectiveType::Allgather;
  /// Members in rank order (for SendRecv: empty, see `pairs`).
  std::vector<int64_t> team;
  /// Gather, Scatter, Broadcast, Reduce. The root need not be a member: a
  /// Gather root that is not a member only receives, a Scatter or Broadcast
  /// root that is not a member only sends.
  std::optional<int64_t> root;
  /// SendRecv: (source, destination) pairs.
  std::vector<std::pair<int64_t, int64_t>> pairs;
  /// AllToAllv: counts[s][d] elements go from team rank s to team rank d.
  std::vector<std::vector<int64_t>> counts;
  ReduceOp op = ReduceOp::Sum;
  /// Names used in error messages, e.g. "T1" and "T3".
  std::string inputName = "input", outputName = "output";
};

/// A collective's buffers do not fit its kind. `what()` reads like
/// "Allgather over team (0 1): all buffers must have the same number of
/// elements: output T3 on device 0 has 1, the team needs 2 x 1 = 2".
class CollectiveError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// What one device does in a call of `kind`: a member of the team, the
/// root, or both. Rooted kinds: the root sends (Scatter, Broadcast) or
/// receives (Gather, Reduce), the members do the other; unrooted kinds:
/// members do both. SendRecv and AllToAllv are per pair (not answered here).
struct CollectiveRole {
  bool sends = false, receives = false;
};
CollectiveRole collectiveRole(CollectiveType kind, bool member, bool root);

/// The devices a team's call involves: the members, a root outside them,
/// and every SendRecv pair's ends, ascending.
std::vector<int64_t> teamParticipants(const PlanTeam &team);
/// The devices of a team's communicator in rank order: the members, then a
/// root outside them (the root joins last).
std::vector<int64_t> communicatorOrder(const CollectiveCall &call);

/// "(0 1)": a team's devices in rank order, for messages.
std::string teamText(const std::vector<int64_t> &team);
/// "Gather over team (0 1) to root 2": how every error of `call` starts.
std::string describeCollective(const CollectiveCall &call);

/// The count checks of a call on buffer sizes alone (device -> element
/// count; a device without an entry has no buffer). Counts required:
/// Allgather/Gather |out| = n*|in| and all |in| equal; Scatter |in_root| =
/// n*|out|; Broadcast |out| = |in_root|; AllToAll all |in| = |out| divisible
/// by n; Allreduce/Reduce all equal; ReduceScatter |in| = n*|out|; SendRecv
/// |out_dst| = |in_src|; AllToAllv: see allToAllvOffsets. Throws
/// CollectiveError naming the collective, the team, the buffer and the counts.
void checkCollectiveCounts(const CollectiveCall &call, const std::map<int64_t, int64_t> &in,
                           const std::map<int64_t, int64_t> &out);

/// AllToAllv's count rules: an n x n matrix of non-negative counts whose
/// rows the inputs hold and whose columns the outputs receive. Returns
/// offsets[s][d], where s's chunk for d starts in in_s (offsets[s][n] is the
/// total s sends). Throws CollectiveError.
std::vector<std::vector<size_t>> allToAllvOffsets(const CollectiveCall &call,
                                                  const std::map<int64_t, int64_t> &in,
                                                  const std::map<int64_t, int64_t> &out);

/// The per-rank chunk k of `call` from the sizes checkCollectiveCounts
/// accepted: its sender's input over the input's chunk multiple
/// (ir/Collectives.h). SendRecv and AllToAllv have none (0).
int64_t perRankChunk(const CollectiveCall &call, const std::map<int64_t, int64_t> &in);

/// Per device, the bytes a call delivers to it from other devices
/// (StepReport::bytesReceived; their sum is StepReport::bytesMoved), from
/// every participant's buffer sizes: a logical count, independent of any
/// algorithm. Devices that receive nothing have no entry.
std::map<int64_t, int64_t> collectiveBytesReceived(const CollectiveCall &call,
                                                   const std::map<int64_t, int64_t> &in,
                                                   const std::map<int64_t, int64_t> &out,
                                                   int elementSize);

} // namespace shardcheck
