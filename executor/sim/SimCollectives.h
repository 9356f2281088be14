// The collectives of DESIGN section 3, on flat host buffers of simulated
// devices: what the sim backend moves data with.
//
// Each function implements one row of the table in DESIGN section 3
// ("Collectives, as functions on flat buffers") directly, for one team: it
// reads the members' input buffers and writes the receivers' output buffers.
// It is written from that table alone, not from the checker's encoding, so a
// proved plan is run by an independent implementation.
//
// Buffer counts are checked first, by the rules every backend shares
// (executor/core/CollectiveRules.h): a collective whose buffers do not have
// the counts its kind requires throws CollectiveError and writes nothing.
// That is how a refuted lowering such as the seed's Allgather of 1-element
// buffers into a 1-element output fails at run time.
//
// What it does not do: know tensors, layouts or plans; allocate buffers;
// check that the values delivered are right (validation does).
#pragma once

#include "executor/Pointwise.h" // reduceCombine
#include "executor/core/CollectiveRules.h"

#include <cstdint>
#include <map>
#include <vector>

namespace shardcheck {

/// A device's buffer: its values, one double per slot.
using SimBuffer = std::vector<double>;

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
///   AllToAllv     out_d is the concatenation over sources s in team order
///                 of the chunk s sends to d (call.counts[s][d] elements);
///                 in_s the concatenation over destinations in team order
void runSimCollective(const CollectiveCall &call, const std::map<int64_t, const SimBuffer *> &in,
                      const std::map<int64_t, SimBuffer *> &out);

} // namespace shardcheck
