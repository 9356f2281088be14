// The cost model of a collective: bytes one rank moves, from nccl-tests'
// bus-bandwidth factors (docs/dtensor.md, "Cost model"). One function, so
// that DTensor's recorded sequence, the model of DTensor's greedy plan
// (DTensorPlan.h) and shardcheck's own plans (bench/dtensor_sweep.cpp) are
// priced alike.
//
// A collective over n ranks whose rank passes buffers of `in` and `out`
// elements moves, per rank:
//   Allgather, ReduceScatter, AllToAll(v), Gather, Scatter:
//                                    (n-1)/n x the larger buffer
//   Allreduce:                       2(n-1)/n x the buffer
//   Broadcast, Reduce, SendRecv, CollectivePermute:
//                                    1 x the larger buffer
// (nccl-tests' busBw factors applied to the buffer they are defined on.)
// Until the planner of issue 17 owns a cost model in checker/, this is the
// one place the factors are written; it may move there.
//
// This file does not know tensors, plans or DTensor documents, and does not
// model latency, topology or algorithms.
#pragma once

#include "ir/Collectives.h"

#include <cstdint>

namespace shardcheck::dtensor {

/// Bytes one rank moves in a collective of `type` over `teamSize` ranks,
/// passing `inCount` and `outCount` elements of `elementSize` bytes (counts
/// as doubles: a recorded shape's product may exceed 64 bits).
double busBytes(CollectiveType type, double inCount, double outCount, int64_t teamSize,
                int elementSize);

} // namespace shardcheck::dtensor
