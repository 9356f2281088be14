// Collects what one printed block says about its IterDomains, tensors,
// transforms and expressions, checks that the facts agree, and builds the
// block's Fusion through Fusion's add* factories.
//
// nvFuser prints the same IterDomain and the same tensor in many places (in
// expressions, input lists, TransformPrinter entries). Each print is "noted";
// a print that disagrees with an earlier one (another extent, mesh, dtype,
// loop domain, ...) is an InputError naming both places. build() then checks
// the structure the factories assert (transform outputs defined once, no
// cycles, domains derived from the logical domain, contiguity lengths) and
// reports violations as located InputErrors, so the factories never fire.
//
// This file parses nothing; Parser.h feeds it.
#pragma once

#include "ir/Fusion.h"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

namespace shardcheck::reader {

/// One printed occurrence of a tensor (`T3_l_float[...] ca_pos( 2 ) (DeviceMesh{0 1})`).
struct TensorPrint {
  TensorNum number = 0;
  MemoryType memory = MemoryType::Global;
  DataType dtype = DataType::Unknown;
  std::vector<IdNum> loop;
  std::optional<int> caPos, producePos;
  std::optional<DeviceMesh> mesh;
  SourceLoc loc;
};

/// One TransformPrinter entry's domains.
struct DomainPrint {
  std::vector<IdNum> root, logical, allocation;
  std::optional<std::vector<IdNum>> loop;
  std::vector<Contiguity> contiguity;
  bool sawRoot = false, sawLogical = false, sawAllocation = false, sawContiguity = false;
  bool sawAlternateLoop = false;
  SourceLoc loc; ///< The entry's header line.
  SourceLoc rootLoc, logicalLoc, allocationLoc, contiguityLoc, loopLoc, alternateLoopLoc;
};

class BlockBuilder {
public:
  BlockBuilder(BlockKind kind, SourceLoc loc) : kind_(kind), loc_(std::move(loc)) {}

  BlockKind kind() const { return kind_; }
  const SourceLoc &loc() const { return loc_; }
  bool hasTensor(TensorNum t) const { return tensors_.count(t) > 0; }

  /// Records an IterDomain print; a different print of the same number is an
  /// error.
  void noteId(const IterDomain &id);
  /// Records a tensor print; all its loop IDs must have been noted.
  void noteTensor(const TensorPrint &print);
  /// Records a TransformPrinter entry of a noted tensor.
  void noteDomains(TensorNum tensor, DomainPrint domains);
  /// Records a transform whose IDs were noted. Printing the same transform
  /// again is fine; a different definition of an output is an error.
  void noteTransform(Transform t);
  /// Records an expression whose tensors were noted; returns its index.
  /// An identical expression printed twice is kept once.
  size_t noteExpr(Expr e);

  void setInputs(std::vector<TensorNum> inputs);
  void setOutputs(std::vector<TensorNum> outputs);
  void addGroup(SegmentGroup group) { groups_.push_back(std::move(group)); }
  size_t groupCount() const { return groups_.size(); }

  /// Validates the collected facts and builds the Fusion. `cut`: the input
  /// ended inside this block (a truncated paste).
  Fusion build(bool cut = false) const;

private:
  struct TensorFacts {
    TensorPrint print;
    std::optional<DomainPrint> domains;
  };

  // Spellings for messages, each bounded (shownToken): a dump may print a
  // huge extent or list.
  std::string idStr(IdNum n) const;
  std::string idListStr(const std::vector<IdNum> &ids) const;
  std::string transformStr(const Transform &t) const;
  void mergeDomains(const TensorFacts &facts, const DomainPrint &d) const;
  void checkTransformShape(const Transform &t) const;
  void checkNoCycles() const;
  void checkDerived(const TensorFacts &facts) const;
  void checkContiguity(const TensorFacts &facts) const;
  /// The first ID of `ids` not derived from `base` through transforms
  /// (undefined broadcast IDs count as derived), or nullopt.
  std::optional<IdNum> firstUnderived(const std::vector<IdNum> &ids,
                                      const std::set<IdNum> &base) const;
  TensorView makeTensorView(const TensorFacts &facts) const;
  void inferInputsAndOutputs(Fusion &f) const;
  std::vector<Expr> exprsWithoutWriteViews() const;
  std::set<TensorNum> orphanTensors(const std::vector<Expr> &exprs) const;
  std::set<IdNum> idsOf(const std::set<TensorNum> &tensors) const;

  BlockKind kind_;
  SourceLoc loc_;
  std::map<IdNum, IterDomain> ids_;
  std::map<TensorNum, TensorFacts> tensors_;
  std::vector<Transform> transforms_;
  std::map<IdNum, size_t> definedBy_; ///< ID -> index into transforms_.
  std::vector<Expr> exprs_;
  std::unordered_map<std::string, size_t> exprIndex_; ///< For deduplication.
  std::optional<std::vector<TensorNum>> inputs_, outputs_;
  std::vector<SegmentGroup> groups_;
};

} // namespace shardcheck::reader
