// A model of DTensor's own redistribute plan (PyTorch 2.11,
// torch/distributed/tensor/_redistribute.py and placement_types.py): given
// a DTensor document, the steps DTensor takes and the collectives each
// issues, with every rank's group and buffer shapes, in the same form as a
// recording (Issued, DTensorCase.h), so that the two compare field by field
// and are priced by one cost model (checker/CostModel.h). docs/dtensor.md, "DTensor's
// plan, modelled", states the rules.
//
// What is modelled: the greedy planner DTensor uses for default shard orders
// (a 1-D mesh: one direct step; else inner-to-outer mesh dims, replicating
// a dim first where the shards before it on its tensor dim are misaligned
// with the target's, then outer-to-inner for the rest), each step's local
// op or collective (Shard->Replicate all_gather, Partial->Replicate
// all_reduce, Partial->Shard reduce_scatter, Replicate->Shard a local chunk,
// Shard(a)->Shard(b) all_to_all, or on a CPU process group the all_gather
// and chunk DTensor falls back to), and DTensor's padding of uneven shards
// (its per-mesh-dim logical shapes, computed once from the source).
//
// What is not: DTensor's graph-based planner (Dijkstra over its own cost
// model), which it uses for non-default shard orders (`_StridedShard`, an
// explicit `shard_order`), except the one case whose plan is forced (one
// sharded tensor dim gathered to all-Replicate); a step DTensor raises on
// (Shard -> Partial); a step whose ranks would pass different sizes to one
// collective. Those answer "unknown" with the reason, never a guess. This
// file does not check anything and does not read JSON.
#pragma once

#include "dtensor/DTensorCase.h"

#include <map>
#include <optional>
#include <string>

namespace shardcheck::dtensor {

/// The process group's device type: DTensor on a CPU mesh has no all-to-all
/// and gathers and chunks instead (the recordings in corpus/dtensor are
/// made on a fake process group, CPU or, `_cuda`, CUDA).
enum class DTensorBackend { Cpu, Cuda };

/// The device type a recording was made on, as its collectives show it:
/// CUDA where it issued an all_to_all (a CPU mesh has none), else CPU
/// (the two issue the same otherwise).
DTensorBackend recordedBackend(const Issued &recorded);

/// DTensor's plan for a document, or why the model does not know it.
struct ModelledPlan {
  std::optional<Issued> plan; ///< nullopt: unknown.
  std::string unknownWhy;
};

ModelledPlan modelDTensorPlan(const DTensorCase &c, DTensorBackend backend);

/// The first difference between a recorded and a modelled sequence (steps:
/// mesh dim, from, to, collectives; collectives: kind, reduce op, every
/// rank's group and shapes), as a sentence; empty when they agree.
std::string firstDifference(const Issued &recorded, const Issued &modelled);

/// Bytes each rank moves in `seq` (checker/CostModel.h, collectiveBytes),
/// by rank.
std::map<int64_t, double> bytesPerRank(const Issued &seq, int elementSize);

/// The most any rank moves in `seq`.
double mostBytesPerRank(const Issued &seq, int elementSize);

/// The sequence reports price as DTensor's: the recording when the document
/// has one, else the model of its greedy plan on CUDA (all_to_all), or
/// nullopt with the model's reason; `source` says which ("from the
/// recording", ...).
ModelledPlan reportedSequence(const DTensorCase &c, std::string &source);

/// DTensor's plan's bytes per rank for the report, one line each: from the
/// recording when the document has one (with whether the model, on the
/// process group it was recorded on (recordedBackend), agrees), else from the model (CUDA:
/// all_to_all), saying which; "unknown" with the reason where the model
/// does not know the plan.
std::string dtensorBytesReport(const DTensorCase &c);

} // namespace shardcheck::dtensor
