// Seeded random fusions for the end-to-end oracle (tests/oracle/Oracle.h).
//
// A random fusion is first drawn as a FusionSpec: a small declarative recipe
// (global sizes, meshes, tensors whose axes refer to those sizes, and
// expressions), then built into a Fusion with ir/FusionBuilder.h. Keeping the
// recipe lets the oracle's minimizer drop expressions, shrink sizes and drop
// shardings and rebuild a consistent fusion every time.
//
// What the generator draws, over seeds:
// - chains of 1 to 4 expressions (sometimes branching off an earlier tensor):
//   Set and unary ops (now and then `cumsum`, an op nothing models), binary `+`/`*` with a
//   broadcast operand, reductions (add, max, mul; over one or several axes; initial value the
//   identity or not), matmul A[.., M, K] x B[.., K, N] and linear A[.., K] x W[N, K] (sometimes
//   with a bias), Set.Permute with a root domain, broadcast, squeeze, expand, and reshape (a merge
//   of two adjacent axes);
// - shardings on logical IDs, outer (loop) splits by the mesh size with the
//   DID on the outer output (sometimes nested: a second DID outer-splitting
//   the inner part, plain or a chunked split, torch.chunk's nesting), or the
//   equivalent inner split; on reduction IDs (a partial sum, as nvFuser marks
//   a sharded contraction) and on broadcast IDs (vacuous); each size has a
//   preferred DID that most of its axes follow, and sometimes a preferred
//   nesting below it (a second DID, chunked or not), so that both consistent
//   and resharding edges are common, nested uneven ones included; some Sets
//   on one mesh draw their consumer's DIDs afresh (several DIDs move at once:
//   the multi-step planner's edges, from and to chunked nestings too);
// - 1-D, 2-D and 3-D meshes of up to 8 devices with permuted device ids, a
//   second mesh for some tensors (a single device, a disjoint or reversed
//   mesh), occasionally no mesh;
// - uneven sizes (a device split that does not divide), symbolic sizes;
// - allocation domains that permute the layout, sometimes with the DID IDs;
// - host IR fusions: a Communication (every collective type) between a
//   producer and a consumer drawn for it, with its team and root either as a
//   compiler would write them or deliberately wrong (team order, type, root,
//   a missing member, the consumer's sharding), with a local op before or
//   after it.
// Every tensor is Double and the values stay small enough (bounded while
// drawing) that the oracle's integer inputs give exact results.
//
// The same seed always gives the same spec (std::mt19937_64 with the draws
// written here, not the standard distributions, whose output differs across
// standard libraries).
//
// It does not check, plan or run anything, and it does not decide which
// sharding or communication is right: right and wrong Communications are
// drawn alike, and the checker and the executor judge them.
#pragma once

#include "ir/Fusion.h"

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace shardcheck::oracle {

/// How a logical axis carries a DID.
enum class ShardStyle {
  Logical,    ///< The DID on the logical ID itself (its extent is the mesh axis size).
  OuterSplit, ///< A loop split: outer split by the mesh axis size, DID on the outer output.
  InnerSplit, ///< The same split written as an inner split by extent / mesh size.
};

struct Shard {
  ParallelType did = ParallelType::DIDx;
  ShardStyle style = ShardStyle::OuterSplit;
  /// OuterSplit only: a second DID cutting the split's inner (local) part
  /// again by its mesh axis size, a nested sharding (DTensor's Shard(d) on
  /// two mesh dims) that needs no allocation domain.
  std::optional<ParallelType> nested;
  /// With `nested`, on a size of constant extent: the nested cut is a chunked
  /// split (ir/Fusion.h Transform::chunked, torch.chunk's nesting): it cuts
  /// the rows each outer device holds, which differs from the plain nesting
  /// where the outer split does not divide.
  bool chunked = false;
  /// With `chunked`: the outer split is a chunked split too (the same as the
  /// plain one at the outermost level, docs/semantics.md "Chunked splits").
  bool chunkedOuter = false;
};

/// One global size; the axes of different tensors that must agree share it.
struct Dim {
  int64_t extent = 1;
  bool symbolic = false; ///< Printed as the symbol `i<index>`, bound to `extent`.
};

struct AxisSpec {
  IterType type = IterType::Iteration; ///< Iteration, Broadcast or Reduction.
  /// Index into FusionSpec::dims; for a broadcast its expanded size, or -1.
  int dim = -1;
  std::optional<Shard> shard;
};

struct TensorSpec {
  /// The axes in logical order, or in root order for Set.Permute and
  /// reshape outputs.
  std::vector<AxisSpec> axes;
  /// Set.Permute outputs: logical position k holds axes[permutation[k]].
  std::vector<int> permutation;
  /// Reshape outputs: the logical domain merges axes[mergeAt] and
  /// axes[mergeAt + 1] (both of constant size) into one ID of size
  /// dims[mergedDim] (their product); mergedShard shards the merged ID.
  int mergeAt = -1;
  int mergedDim = -1;
  std::optional<Shard> mergedShard;
  int mesh = -1; ///< Index into FusionSpec::meshes; -1: no mesh.
  /// An allocation domain: the layout IDs (logical IDs, each split one by
  /// its inner part, then the DID IDs when allocationWithDevices) sorted by
  /// these keys (key i for layout ID i; missing keys: i). Empty: none.
  std::vector<int> allocationKeys;
  bool allocationWithDevices = false;
};

struct ExprSpec {
  OpKind kind = OpKind::Set;
  std::string op;
  std::vector<int> inputs; ///< Tensor indices.
  int output = 0;
  std::vector<bool> flags;
  std::vector<std::pair<std::string, std::string>> attrs;
  std::optional<CommunicationInfo> communication;
};

struct FusionSpec {
  uint64_t seed = 0;
  bool hostIr = false;
  std::vector<Dim> dims;
  std::vector<DeviceMesh> meshes;
  /// Tensor i of the built fusion is T<i>.
  std::vector<TensorSpec> tensors;
  std::vector<ExprSpec> exprs;
};

struct RandomFusionOptions {
  int maxExprs = 4;
  int symbolicPercent = 12; ///< Chance a new size is symbolic.
  int unevenPercent = 8;    ///< Chance a non-dividing device split is kept.
  /// Chance a size of constant extent with a preferred nesting nests by
  /// chunked splits (its axes then keep a device split that does not divide
  /// more often); half of it: a nesting drawn at random is chunked.
  int chunkedPercent = 60;
  int hostIrPercent = 22; ///< Chance of a host IR fusion with a Communication.
  int integerRange = 2;   ///< The oracle's inputs are nonzero integers in [-n, n].
};

/// The spec drawn from `seed`.
FusionSpec randomFusion(uint64_t seed, const RandomFusionOptions &options = {});

/// The fusion a spec describes (tensor i is T<i>), built with FusionBuilder.
Fusion buildFusion(const FusionSpec &spec);

/// Values for the symbolic sizes of `spec`: each symbol its size's extent.
std::map<std::string, int64_t> specBindings(const FusionSpec &spec);

/// The largest absolute value any tensor can take with inputs in [-range,
/// range] (saturating at 2^62); exact runs need it below 2^53.
double valueBound(const FusionSpec &spec, int range);

/// The constructs `spec` contains, named for coverage counts: `op:matmul`,
/// `reduction:max`, `init:non-identity`, `mesh:3d`, `mesh:permuted`,
/// `shard:loop-split`, `comm:Allgather`, `chain:3`, ...
std::set<std::string> specFeatures(const FusionSpec &spec);

/// Drops tensors no expression uses or defines (keeping at least one),
/// renumbers the rest in order and recomputes merged sizes (a reshape's
/// merged size is the product of its two axes'). The minimizer calls it
/// after each edit.
FusionSpec compactSpec(FusionSpec spec);

} // namespace shardcheck::oracle
