// The collectives of DESIGN section 3, on flat host buffers of simulated
// devices.
//
// Each function implements one row of the table in DESIGN section 3
// ("Collectives, as functions on flat buffers") directly, for one team: it
// reads the members' input buffers and writes the receivers' output buffers.
// It is written from that table alone, not from the checker's encoding, so a
// proved plan is run by an independent implementation.
//
// Buffer counts are checked first, the way a communication library (and
// nvFuser's communication.cpp) checks them: a collective whose buffers do not
// have the counts its kind requires throws CollectiveError naming the
// collective, the team, the buffer and the counts, and writes nothing. That is
// how a refuted lowering such as the seed's Allgather of 1-element buffers into
// a 1-element output fails at run time.
//
// What it does not do: know tensors, layouts or plans; allocate buffers;
// check that the values delivered are right (validation does).
#pragma once

#include "ir/Collectives.h"

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace shardcheck {

/// A device's buffer: its values, one double per slot.
using SimBuffer = std::vector<double>;

/// `op` applied to two values; Max and Min propagate NaN (as torch.max
/// does), so a NaN on one device cannot vanish from the result.
double reduceCombine(ReduceOp op, double a, double b);

/// One collective call over one team.
struct SimCollectiveCall {
  /// One of DESIGN section 3's table (not AllToAllv: runSimAllToAllv).
  CollectiveType kind = CollectiveType::Allgather;
  /// Members in rank order (for SendRecv: empty, see `pairs`).
  std::vector<int64_t> team;
  /// Gather, Scatter, Broadcast, Reduce. The root need not be a member: a
  /// Gather root that is not a member only receives, a Scatter or Broadcast
  /// root that is not a member only sends.
  std::optional<int64_t> root;
  /// SendRecv: (source, destination) pairs.
  std::vector<std::pair<int64_t, int64_t>> pairs;
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

/// Runs `call`. `in` and `out` map a device to its buffer; every device that
/// sends must have an `in` entry and every device that receives an `out`
/// entry (a missing one is a CollectiveError too). `in` and `out` may name the
/// same vector for a device only for Allreduce (in place). Semantics, with k
/// the per-rank chunk and r(d) d's rank in the team:
///   Allgather     out_d[i*k + t] = in_team[i][t]             (all members)
///   Gather        the same, on the root only
///   Scatter       out_d[t] = in_root[r(d)*k + t]
///   Broadcast     out_d[t] = in_root[t]                       (members receive)
///   AllToAll      out_d[i*k + t] = in_team[i][r(d)*k + t]
///   Allreduce     out_d[t] = op over i of in_team[i][t]
///   Reduce        the same, on the root only
///   ReduceScatter out_d[t] = op over i of in_team[i][r(d)*k + t]
///   SendRecv      out_dst[t] = in_src[t] for each pair
/// Counts required: Allgather/Gather |out| = n*|in| and all |in| equal;
/// Scatter |in_root| = n*|out|; Broadcast |out| = |in_root|; AllToAll all
/// |in| = |out| divisible by n; Allreduce/Reduce all equal; ReduceScatter
/// |in| = n*|out|; SendRecv |out_dst| = |in_src|.
void runSimCollective(const SimCollectiveCall &call, const std::map<int64_t, const SimBuffer *> &in,
                      const std::map<int64_t, SimBuffer *> &out);

/// The count checks of runSimCollective on buffer sizes alone (device ->
/// element count; a device without an entry has no buffer). Throws the
/// CollectiveError runSimCollective would. Backends whose processes each
/// hold only their own buffers (mpi, nccl) run it on every process with the
/// sizes of all devices, so that all of them fail the same step the same
/// way instead of hanging in a mismatched call.
void checkCollectiveCounts(const SimCollectiveCall &call, const std::map<int64_t, int64_t> &in,
                           const std::map<int64_t, int64_t> &out);

/// The per-rank chunk k of `call` (the k above) from the sizes
/// checkCollectiveCounts accepted: its sender's input over the input's chunk
/// multiple (ir/Collectives.h). SendRecv has none (0).
int64_t perRankChunk(const SimCollectiveCall &call, const std::map<int64_t, int64_t> &in);

/// AllToAll with a chunk size per (source, destination) pair (MPI's
/// Alltoallv, NCCL's grouped send/recv): out_d is the concatenation over
/// sources s in team order of the chunk s sends to d; in_s is the
/// concatenation over destinations d in team order of the chunk for d.
/// `counts[s][d]` is the size of the chunk from s to d (team ranks).
void runSimAllToAllv(const std::vector<int64_t> &team,
                     const std::vector<std::vector<int64_t>> &counts,
                     const std::map<int64_t, const SimBuffer *> &in,
                     const std::map<int64_t, SimBuffer *> &out, const std::string &inputName,
                     const std::string &outputName);

} // namespace shardcheck
