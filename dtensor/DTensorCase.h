// A PyTorch DTensor redistribute as shardcheck reads it (docs/dtensor.md,
// `"format": "shardcheck-dtensor/1"`): the device mesh, the global tensor,
// the source and target placements, and optionally what DTensor did (its
// steps, one mesh dim changing per step, and the collectives each step
// issued, with every rank's group and buffer shapes, as recorded under
// CommDebugMode by tools/dtensor_record.py).
//
// This file does not read JSON (DTensorReader.h does), map to the IR
// (DTensorToIr.h does) or decide anything; it holds what the document says,
// each part with the location it was read from.
#pragma once

#include "ir/DeviceMesh.h"
#include "util/Diagnostics.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace shardcheck::dtensor {

/// One placement of one mesh dim: `Shard(d)`, `_StridedShard(d,
/// split_factor=f)`, `Replicate()`, `Partial(op)`.
struct Placement {
  enum class Kind { Shard, Replicate, Partial };
  Kind kind = Kind::Replicate;
  int64_t dim = 0;                    ///< Shard: the tensor dim.
  std::optional<int64_t> splitFactor; ///< `_StridedShard` only.
  std::string reduceOp;               ///< Partial: sum, avg, max, min.
  std::string spelling;               ///< As written.
  SourceLoc loc;

  bool isShard() const { return kind == Kind::Shard; }
  bool isPartial() const { return kind == Kind::Partial; }
  bool sameAs(const Placement &o) const {
    return kind == o.kind && dim == o.dim && splitFactor == o.splitFactor && reduceOp == o.reduceOp;
  }
};

/// The mesh dims that shard one tensor dim, outermost split first.
struct ShardOrderEntry {
  int64_t tensorDim = 0;
  std::vector<int64_t> meshDims;
};

/// A DTensor's placements (one per mesh dim) and, where given, the order of
/// shards that share a tensor dim (DTensor's `shard_order`).
struct Placements {
  std::vector<Placement> perMeshDim;
  std::vector<ShardOrderEntry> shardOrder; ///< Empty: DTensor's default.
  SourceLoc loc;
};

/// One rank's view of one collective.
struct RankCall {
  int64_t rank = 0;
  std::vector<int64_t> group;
  std::vector<int64_t> inputShape, outputShape;
};

/// One collective DTensor issued (the same call on every rank).
struct IssuedCollective {
  std::string kind;     ///< all_gather, reduce_scatter, all_reduce, all_to_all, broadcast
  std::string op;       ///< The recorded op name (informational).
  std::string reduceOp; ///< Reductions: sum, avg, max, min; else empty.
  std::vector<RankCall> ranks;
  SourceLoc loc;
};

/// One of DTensor's steps: mesh dim `meshDim` goes from `from` to `to`.
struct IssuedStep {
  int64_t meshDim = 0;
  Placement from, to;
  std::vector<size_t> collectives; ///< Indices into Issued::collectives.
  SourceLoc loc;
};

/// What DTensor did for the redistribute.
struct Issued {
  std::string torchVersion;
  std::vector<IssuedStep> steps;
  std::vector<IssuedCollective> collectives;
  SourceLoc loc;
};

struct DTensorCase {
  std::string file;
  std::string name;
  DeviceMesh mesh;
  std::vector<std::string> meshDimNames;
  std::vector<int64_t> shape;
  std::string dtype; ///< torch spelling: float32, bfloat16, ...
  Placements source, target;
  std::optional<Issued> issued;
  std::optional<std::string> recorderError;
  SourceLoc loc, meshLoc, tensorLoc;
};

} // namespace shardcheck::dtensor
