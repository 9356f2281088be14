// FusionBuilder: a small convenience layer over Fusion's factories for code
// that builds fusions programmatically (tests, benchmark generators).
//
// It numbers IterDomains and tensors itself, and its helpers express the
// common sharding patterns in one call: a logical axis parallelized on a DID,
// a loop split of an axis by a device count. Everything goes through
// Fusion::add*, so the same invariants hold as for parsed fusions.
#pragma once

#include "ir/Fusion.h"

#include <optional>
#include <string>
#include <vector>

namespace shardcheck {

class FusionBuilder {
public:
  explicit FusionBuilder(BlockKind kind = BlockKind::Kernel) { fusion_.kind = kind; }

  /// A fresh IterDomain.
  IdNum id(IterType type, Extent extent, ParallelType parallel = ParallelType::Serial);
  IdNum iter(int64_t extent, ParallelType p = ParallelType::Serial) {
    return id(IterType::Iteration, Extent::constant(extent), p);
  }
  IdNum iter(const std::string &symbol, ParallelType p = ParallelType::Serial) {
    return id(IterType::Iteration, Extent::symbol(symbol), p);
  }
  IdNum bcast(ParallelType p = ParallelType::Serial) {
    return id(IterType::Broadcast, Extent::constant(1), p);
  }
  IdNum red(Extent extent, ParallelType p = ParallelType::Serial) {
    return id(IterType::Reduction, std::move(extent), p);
  }

  /// Splits `in`; returns {outer, inner}. Outer split: outer extent = factor
  /// (DID sharding uses it); inner split: inner extent = factor. The outputs
  /// keep `in`'s iter type; `outerParallel` parallelizes the outer output.
  std::pair<IdNum, IdNum> split(IdNum in, Extent factor, bool innerSplit,
                                ParallelType outerParallel = ParallelType::Serial);
  /// Merges `outer` and `inner` into one ID.
  IdNum merge(IdNum outer, IdNum inner);

  /// A tensor with the given logical domain; loop = logical unless given.
  TensorNum tensor(std::vector<IdNum> logical, std::optional<DeviceMesh> mesh,
                   DataType dtype = DataType::Float, std::vector<IdNum> loop = {},
                   std::vector<IdNum> allocation = {}, std::vector<IdNum> root = {});

  /// Adds an expression `out = op(inputs)`.
  void expr(OpKind kind, std::string op, std::vector<TensorNum> inputs, TensorNum output,
            std::vector<bool> flags = {},
            std::vector<std::pair<std::string, std::string>> attrs = {});

  void input(TensorNum t) { fusion_.inputs.push_back(t); }
  void output(TensorNum t) { fusion_.outputs.push_back(t); }

  Fusion &fusion() { return fusion_; }
  Fusion take() { return std::move(fusion_); }

private:
  Fusion fusion_;
  IdNum nextId_ = 0;
  TensorNum nextTensor_ = 0;
};

} // namespace shardcheck
