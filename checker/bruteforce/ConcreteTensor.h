// A concrete model of one tensor under given bindings, by enumeration.
//
// ConcreteTensor evaluates docs/semantics.md for one TensorView at concrete
// sizes: the extent of every ID of its domains, the index of any ID as a
// function of an element (forward through Split and Merge from logical, and
// from root to logical for tensors enumerated by root), which devices hold each
// element, the local buffer layout (layout IDs, offsets) and, per device, the
// held elements in offset order.
//
// It is deliberately plain: every element is enumerated and every fact is
// stored in std::vector / std::map. Work is bounded by kWorkLimit.
//
// What it does not do: decide anything about edges (BruteForce.h does), or
// guess. Resize, Swizzle, IDs not derived from logical, iter types other than
// Iteration/Broadcast/Reduction, sharded tensors without a mesh and DID types
// the mesh has no axis for make the tensor Unsupported; unbound symbols and
// bindings that violate the implied constraints make it InvalidBindings. A
// layout that is not a function of logical data indices, or that puts two held
// elements at one offset, is recorded in layoutError(): ownership and counts
// stay valid, buffers do not.
//
// It shares no code with the SMT encoding; it only uses ir/.
#pragma once

#include "checker/Lowering.h"
#include "checker/bruteforce/Outcome.h"
#include "ir/Fusion.h"

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <variant>
#include <vector>

namespace shardcheck::bruteforce {

/// An element's coordinates over the tensor's element IDs.
using Coords = std::vector<int64_t>;

/// Which IDs index a tensor's elements.
enum class ElementBasis {
  Logical, ///< Logical data IDs (how a producer element is named).
  Root,    ///< Root data IDs when the tensor has a root domain (how a consumer
           ///< element is named); logical then follows forward from root.
};

/// One slot of a local buffer: the element stored at an offset.
struct BufferSlot {
  int64_t offset = 0;
  int64_t element = 0; ///< Linear element number (row-major over coords).
};

class ConcreteTensor {
public:
  /// Builds the model of `tensor`, or an Unsupported / InvalidBindings result.
  /// The model refers to `fusion`, which must outlive it.
  static std::variant<ConcreteTensor, BruteResult>
  build(const Fusion &fusion, TensorNum tensor, const Bindings &bindings, ElementBasis basis);

  TensorNum number() const { return number_; }
  /// `T3`.
  const std::string &name() const { return name_; }

  // --- Elements. ---
  /// The IDs an element's coordinates range over (root or logical data IDs).
  const std::vector<IdNum> &elementIds() const { return elementIds_; }
  const std::vector<int64_t> &elementExtents() const { return elementExtents_; }
  /// Number of elements (product of elementExtents).
  int64_t elementCount() const { return elementCount_; }
  Coords coordsOf(int64_t element) const;
  /// The element at `coords`, or nullopt when a coordinate is out of range.
  std::optional<int64_t> elementAt(const Coords &coords) const;
  /// `T3[1, 0]`.
  std::string elementStr(int64_t element) const;

  // --- Index functions. ---
  /// The logical data IDs and an element's indices over them.
  const std::vector<IdNum> &logicalDataIds() const { return logicalDataIds_; }
  const Coords &logicalIndex(int64_t element) const { return logical_[element]; }
  /// The index of any ID of the tensor at `element`, or nullopt when it is
  /// not a function of the element (not derived from logical data IDs).
  std::optional<int64_t> indexOf(int64_t element, IdNum id) const;
  /// The extent the semantics give an ID (formulas for derived IDs;
  /// broadcasts 1), or nullopt for an ID outside the tensor's domains.
  std::optional<int64_t> extentOf(IdNum id) const;

  // --- Ownership. ---
  /// The devices that may hold the tensor, ascending: its mesh, or every
  /// device of every mesh in the fusion when it has none.
  const std::vector<int64_t> &devices() const { return devices_; }
  /// The sharding IDs: non-broadcast, non-reduction loop IDs with a DID.
  const std::vector<IdNum> &shardingIds() const { return shardingIds_; }
  bool holds(int64_t device, int64_t element) const;
  /// Devices holding `element`, ascending.
  std::vector<int64_t> holders(int64_t element) const;
  /// Elements `device` holds, ascending (empty for other devices).
  const std::vector<int64_t> &heldBy(int64_t device) const;
  /// Number of elements `device` holds.
  int64_t count(int64_t device) const { return static_cast<int64_t>(heldBy(device).size()); }

  // --- Local buffer layout. ---
  /// Why buffers are unavailable (layout not a function of logical data
  /// indices, or two held elements at one offset); nullopt when they are.
  const std::optional<std::string> &layoutError() const { return layoutError_; }
  /// The layout IDs and the extent each contributes (1 for DID, broadcast
  /// and reduction IDs).
  const std::vector<IdNum> &layoutIds() const { return layoutIds_; }
  const std::vector<int64_t> &layoutExtents() const { return layoutExtents_; }
  /// The element's offset in any buffer holding it. Requires !layoutError().
  int64_t offsetOf(int64_t element) const;
  /// `device`'s buffer in offset order. Requires !layoutError().
  const std::vector<BufferSlot> &buffer(int64_t device) const;
  /// The element at `offset` of `device`'s buffer, if any (padding and
  /// out-of-range offsets hold none). Requires !layoutError().
  std::optional<int64_t> elementAtOffset(int64_t device, int64_t offset) const;

private:
  struct ExtentValue {
    int64_t value = 0;
    bool symbolic = false; ///< Depends on a bound symbol.
  };

  ConcreteTensor(const Fusion &fusion, TensorNum tensor, const Bindings &bindings,
                 ElementBasis basis);

  // Build steps, in order. Each throws Stop on an unsupported construct or
  // invalid bindings.
  void checkIterTypes() const;
  void computeExtents();
  void chooseElementIds();
  void findShardingIds();
  void findDevices();
  void chooseLayout();
  void enumerateElements();
  void buildBuffers();

  ExtentValue evaluateExtent(const Extent &e, const std::string &what) const;
  ExtentValue baseExtent(IdNum id) const;
  /// The extent of `id`, derived by the split/merge formulas from `known`
  /// (which starts as the base domain's extents and memoizes the rest).
  ExtentValue deriveExtent(IdNum id, std::map<IdNum, ExtentValue> &known,
                           const std::string &fromName, int depth);
  void checkImpliedConstraint(const Transform &split, ExtentValue in, ExtentValue factor) const;
  /// Throws unless `id` is computed from `base` by Split/Merge only, without
  /// passing through another member of `stops` (e.g. a reduction logical ID).
  void requireDerived(IdNum id, const std::set<IdNum> &base, const std::set<IdNum> &stops,
                      const std::string &fromName) const;
  int64_t evaluateIndex(IdNum id, std::map<IdNum, int64_t> &known) const;
  /// The valid length of `id` for the element whose indices `known` holds
  /// (docs/semantics.md, Chunked splits); checkChunkedSplit vetted the chain.
  int64_t validLength(IdNum id, std::map<IdNum, int64_t> &known) const;
  /// Stops as unsupported unless a chunked split is of the modelled form.
  void checkChunkedSplit(const Transform &split, const ExtentValue &in, const ExtentValue &factor,
                         const std::string &fromName) const;
  std::map<IdNum, int64_t> logicalValues(int64_t element) const;
  std::string idStr(IdNum id) const;

  const Fusion *fusion_ = nullptr;
  TensorNum number_ = 0;
  std::string name_;
  Bindings bindings_;
  ElementBasis basis_ = ElementBasis::Logical;

  std::map<IdNum, ExtentValue> extents_;
  std::vector<IdNum> elementIds_;
  std::vector<int64_t> elementExtents_;
  int64_t elementCount_ = 0;
  std::vector<IdNum> logicalDataIds_;
  std::vector<Coords> logical_; ///< Per element, over logicalDataIds_.

  std::vector<IdNum> shardingIds_;
  std::vector<ParallelType> shardingTypes_;
  std::vector<Coords> shardingIndex_; ///< Per element, per sharding ID.
  std::vector<int64_t> devices_;
  std::map<int64_t, Coords> deviceCoords_; ///< c_p(d) per sharding ID.
  std::map<int64_t, std::vector<int64_t>> held_;

  std::vector<IdNum> layoutIds_;
  std::vector<int64_t> layoutExtents_;
  std::vector<bool> layoutTrivial_; ///< Contributes index 0.
  std::optional<std::string> layoutError_;
  std::vector<int64_t> offset_; ///< Per element.
  std::map<int64_t, std::vector<BufferSlot>> buffers_;
};

/// Every device of every mesh in the fusion, ascending and distinct.
std::vector<int64_t> fusionDevices(const Fusion &fusion);

} // namespace shardcheck::bruteforce
