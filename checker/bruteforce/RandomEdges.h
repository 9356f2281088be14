// Seeded random generator of well-formed one-edge fusions and candidate
// lowerings, for the SMT-vs-brute-force cross-check.
//
// Each case is a small fusion built only through Fusion's add* factories
// (via FusionBuilder), its edge as FusionGraph::build computes it, bindings
// for its symbols that satisfy the implied constraints, and candidate lowerings
// of every kind with teams derived from the meshes (with an uneven split, the
// padded forms of Allgather, AllToAll, Allreduce and ReduceScatter beside the
// plain ones). Cases cover: Set, unary,
// binary with a broadcast operand and single-axis sum reductions; 1-D and 2-D
// meshes of 1..8 devices, equal or different for producer and consumer, and
// occasionally no mesh; shardings on logical axes, outer-split by the mesh size
// (occasionally uneven, occasionally via an inner split), nested (a second
// mesh axis outer-splitting the local part of an outer split, with no
// allocation domain unless one is drawn), on broadcast IDs, or none; small constant and symbolic
// extents; occasional allocation domains that permute the implicit layout.
//
// The same seed and options always give the same sequence (std::mt19937_64
// with explicit distributions written here, not std::uniform_int_distribution,
// whose output differs across standard libraries).
//
// It does not check anything and does not decide which lowering is right.
#pragma once

#include "checker/Lowering.h"
#include "ir/Fusion.h"
#include "ir/FusionGraph.h"

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace shardcheck::bruteforce {

struct RandomEdgeOptions {
  int maxDevices = 8;            ///< Largest mesh (1..8).
  int maxRank = 3;               ///< Most data axes of the full-size tensor.
  int64_t maxExtent = 6;         ///< Largest constant extent.
  int symbolicPercent = 25;      ///< Chance an axis extent is a symbol.
  int allocationPercent = 20;    ///< Chance a tensor gets an allocation domain.
  int unevenPercent = 15;        ///< Chance a non-dividing constant split is kept.
  int differentMeshPercent = 25; ///< Chance the consumer's mesh differs.
  int noMeshPercent = 4;         ///< Chance the producer or the consumer has no mesh.
  int mesh2dPercent = 30;        ///< Chance a mesh is 2-D (when the devices allow).
  int nestedPercent = 50;        ///< Chance a split axis may take a second mesh axis's DID.
};

/// One generated edge with what is needed to check it.
struct RandomEdgeCase {
  Fusion fusion;
  FusionEdge edge;
  Bindings bindings;
  std::vector<Lowering> lowerings;
  /// One line naming the op, both tensors and the bindings (for failures).
  std::string description;
  /// Whether a tensor has a nested sharding (two DIDs on one logical axis).
  bool nested = false;
};

/// Builds one random case from `rng`.
RandomEdgeCase randomEdge(std::mt19937_64 &rng, const RandomEdgeOptions &options = {});

/// A seeded stream of random cases.
class RandomEdgeGenerator {
public:
  explicit RandomEdgeGenerator(uint64_t seed, RandomEdgeOptions options = {})
      : rng_(seed), options_(options) {}
  RandomEdgeCase next() { return randomEdge(rng_, options_); }

private:
  std::mt19937_64 rng_;
  RandomEdgeOptions options_;
};

/// Teams of devices along one mesh axis (the devices that differ only in
/// that coordinate), each ordered by that coordinate.
std::vector<std::vector<int64_t>> meshLines(const DeviceMesh &mesh, int axis);

} // namespace shardcheck::bruteforce
