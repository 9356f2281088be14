// FusionBuilder: builds fusions in code (tests, the random edge generator,
// benchmark generators).
//
// It numbers IterDomains and tensors itself and goes only through Fusion's
// add* factories, so everything it builds satisfies the factories' invariants.
// Derived IDs get the extents nvFuser would print (inner split: inner =
// factor, outer = ceilDiv; outer split: the reverse); the brute-force evaluator
// recomputes them from the spec's formulas anyway.
//
// It does not validate shardings (lints do) and decides nothing.
#pragma once

#include "ir/Fusion.h"
#include "ir/FusionGraph.h"

#include <optional>
#include <string>
#include <vector>

namespace shardcheck {

class FusionBuilder {
public:
  FusionBuilder() = default;
  /// Continues `fusion`: new IDs and tensors are numbered past its own.
  explicit FusionBuilder(Fusion fusion);

  /// An Iteration ID.
  IdNum iter(Extent extent, ParallelType parallel = ParallelType::Serial);
  /// An Iteration ID of symbolic extent, e.g. iter("i0").
  IdNum iter(const char *symbol, ParallelType parallel = ParallelType::Serial) {
    return iter(Extent::symbol(symbol), parallel);
  }
  IdNum iter(int64_t extent, ParallelType parallel = ParallelType::Serial) {
    return iter(Extent::constant(extent), parallel);
  }
  /// A Broadcast ID (extent 1), optionally expanded.
  IdNum broadcast(ParallelType parallel = ParallelType::Serial,
                  std::optional<Extent> expanded = std::nullopt);
  /// A Reduction ID.
  IdNum reduction(Extent extent, ParallelType parallel = ParallelType::Serial);
  IdNum reduction(int64_t extent, ParallelType parallel = ParallelType::Serial) {
    return reduction(Extent::constant(extent), parallel);
  }

  struct SplitIds {
    IdNum outer = 0;
    IdNum inner = 0;
  };
  /// Splits `in` by `factor`; the outputs inherit its iter type, the outer
  /// one gets `outerParallel`.
  SplitIds split(IdNum in, Extent factor, bool innerSplit,
                 ParallelType outerParallel = ParallelType::Serial);
  SplitIds split(IdNum in, int64_t factor, bool innerSplit,
                 ParallelType outerParallel = ParallelType::Serial) {
    return split(in, Extent::constant(factor), innerSplit, outerParallel);
  }
  /// A chunked outer split of `in` by `factor` (ir/Fusion.h Transform::
  /// chunked). Asserts its invariants: a constant positive factor, and `in`
  /// an underived ID of constant extent or the inner output of an outer
  /// split by a constant of such an input, recursively.
  SplitIds chunkedSplit(IdNum in, int64_t factor, ParallelType outerParallel);
  /// Merges `outer` and `inner` into one ID.
  IdNum merge(IdNum outer, IdNum inner);
  /// Adds a transform of another kind (Resize, Swizzle) from `in` to a new ID.
  IdNum unsupportedTransform(Transform::Kind kind, IdNum in);
  void parallelize(IdNum id, ParallelType parallel);

  struct TensorSpec {
    std::vector<IdNum> root, logical, loop, allocation;
    std::optional<DeviceMesh> mesh;
    DataType dtype = DataType::Float;
  };
  /// Adds a tensor; an empty loop domain defaults to the logical one.
  TensorNum tensor(TensorSpec spec);
  /// Shorthand: a tensor with a logical (and optionally a loop) domain.
  TensorNum tensor(std::vector<IdNum> logical, std::optional<DeviceMesh> mesh,
                   std::vector<IdNum> loop = {}, DataType dtype = DataType::Float) {
    return tensor(TensorSpec{{}, std::move(logical), std::move(loop), {}, std::move(mesh), dtype});
  }

  /// Adds `out = op(ins...)` and keeps the fusion's inputs/outputs current.
  void expr(OpKind kind, std::string op, std::vector<TensorNum> ins, TensorNum out,
            std::vector<bool> flags = {},
            std::vector<std::pair<std::string, std::string>> attrs = {});
  void set(TensorNum in, TensorNum out) { expr(OpKind::Set, "Set", {in}, out); }

  Fusion &fusion() { return fusion_; }
  Fusion take() { return std::move(fusion_); }
  const Fusion &fusion() const { return fusion_; }

  /// The edge producer -> consumer, built with FusionGraph::build. Asserts
  /// that the graph builds and the edge exists.
  FusionEdge edge(TensorNum producer, TensorNum consumer) const;

private:
  IdNum add(IterType type, Extent extent, ParallelType parallel);

  Fusion fusion_;
  IdNum nextId_ = 1;
  TensorNum nextTensor_ = 0;
};

} // namespace shardcheck
