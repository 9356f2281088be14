// The sharding semantics of docs/semantics.md as SMT terms.
//
// An Encoder is bound to one smt::Context and one fusion. It names variables
// canonically (symbols `s0, s1, ...` in order of first use, elements
// `<prefix>0, <prefix>1, ...`, devices by the caller), so that structurally
// identical edges produce identical query text and share cache entries. It
// offers the semantic building blocks in the domain's words: extents, element
// index vectors, IterDomain indices, device membership and mesh coordinates,
// ownership (`holds`), local buffer offsets and counts, and the fusion's
// implied constraints on symbols.
//
// Anything the semantics does not cover (Resize, Swizzle, a loop ID not
// derived from logical, a DID type without a mesh axis, a layout that is not a
// dense cut of the logical domain) throws Unsupported with a reason; the
// checker reports that edge as `unsupported`, never as proved.
#pragma once

#include "checker/smt/Smt.h"
#include "ir/Fusion.h"
#include "ir/FusionGraph.h"

#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace shardcheck {

/// An encoding limit: the construct is outside the implemented semantics.
class Unsupported : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// One element of a tensor: an index term per ID, starting from its base
/// domain (root for a consumer with a root domain, else logical).
struct ElementTerms {
  TensorNum tensor = 0;
  /// Variables over the base data IDs, in order, and their names.
  std::vector<IdNum> baseIds;
  std::vector<smt::Int> baseVars;
  std::vector<std::string> baseNames;
  /// Index of every ID computable from the base (forward through splits and
  /// merges).
  std::map<IdNum, smt::Int> index;
  /// Range constraints of the base variables.
  smt::Bool inRange;
};

// Device lists (meshes, teams) as terms. A list that is an arithmetic
// progression (devices[i] = base + step * i: consecutive, reversed or strided,
// as most real meshes and teams are) becomes arithmetic whose size does not
// depend on its length, so that a 1,024-device mesh costs what a 2-device one
// does; any other list becomes a table with one entry per device.

struct Progression {
  int64_t base = 0;
  int64_t step = 1; ///< Never 0.
};
/// The progression the list follows, or nullopt.
std::optional<Progression> progressionOf(const std::vector<int64_t> &devices);
/// members[i] for 0 <= i < n, else -1.
smt::Int memberAt(smt::Context &ctx, const std::vector<int64_t> &members, const smt::Int &i);
/// The rank of `d` among `members`, or -1 when it is not one.
smt::Int rankIn(smt::Context &ctx, const std::vector<int64_t> &members, const smt::Int &d);
/// Whether `d` is one of `devices`.
smt::Bool isAmong(smt::Context &ctx, const std::vector<int64_t> &devices, const smt::Int &d);

/// The split of `id` whose outer output is one of `sharding`, or nullptr.
const Transform *deviceCutOf(const Fusion &fusion, IdNum id, const std::vector<IdNum> &sharding);
/// The local part of logical data ID `logical` (docs/semantics.md, Local
/// buffer layout): the inner output of the split whose outer output is one
/// of `sharding`, followed down through nested shardings; `logical` itself
/// when no sharding ID cuts it.
IdNum localPartOf(const Fusion &fusion, IdNum logical, const std::vector<IdNum> &sharding);

class Encoder {
public:
  Encoder(smt::Context &ctx, const Fusion &fusion);

  /// Allows padded layouts while it lives (allowPaddedSplits).
  class PaddedLayouts {
  public:
    PaddedLayouts(Encoder &enc, bool allow) : enc_(enc) { enc_.allowPaddedSplits(allow); }
    ~PaddedLayouts() { enc_.allowPaddedSplits(false); }
    PaddedLayouts(const PaddedLayouts &) = delete;
    PaddedLayouts &operator=(const PaddedLayouts &) = delete;

  private:
    Encoder &enc_;
  };

  smt::Context &ctx() { return ctx_; }

  /// The extent term of an ID (derived through its definition when it has
  /// one; broadcast IDs have extent 1).
  smt::Int extent(IdNum id);
  /// A symbol's canonical variable.
  smt::Int symbol(const std::string &name);
  /// Canonical name -> user symbol name, for counterexamples.
  const std::map<std::string, std::string> &symbolNames() const { return canonicalToUser_; }

  /// A fresh element of `tv` over its base domain. When `useRoot` is false
  /// the base is the logical domain even if the tensor has a root.
  ElementTerms element(const TensorView &tv, const std::string &prefix, bool useRoot);
  /// The element's index of `id`; Unsupported when not computable.
  smt::Int indexOf(const ElementTerms &e, IdNum id) const;
  /// Logical data indices of an element (in logical order).
  std::vector<smt::Int> logicalIndices(const ElementTerms &e);

  /// Device variable constrained to the devices of `mesh`.
  smt::Bool inMesh(const smt::Int &device, const DeviceMesh &mesh);
  /// The device's coordinate along the axis of `didType` (ite table).
  smt::Int coordinate(const smt::Int &device, const DeviceMesh &mesh, ParallelType didType);

  /// Whether `device` holds element `e` of `tv` (docs/semantics.md,
  /// Ownership). A tensor without a mesh is held by every device.
  smt::Bool holds(const TensorView &tv, const smt::Int &device, const ElementTerms &e);

  /// Row-major offset of `e` in its device's local buffer, and the buffer's
  /// element count (equal on every device under the implied constraints).
  /// Both throw Unsupported when the layout is not a dense cut.
  smt::Int offset(const TensorView &tv, const ElementTerms &e);
  smt::Int count(const TensorView &tv);

  /// The sharding IDs of a tensor: DID loop IDs that are neither broadcast
  /// nor reduction IDs.
  std::vector<IdNum> shardingIds(const TensorView &tv) const;
  /// Layout IDs (docs/semantics.md, Local buffer layout).
  std::vector<IdNum> layoutIds(const TensorView &tv) const;
  /// Throws Unsupported unless layout IDs plus sharding IDs form a dense cut
  /// of the logical data domain (with allowPaddedSplits, a cut whose splits
  /// of constant extents that do not divide leave padding slots).
  void requireDenseLayout(const TensorView &tv) const;
  /// Whether layouts may be padded: a split of constant extents that does
  /// not divide (a DTensor buffer padded to n chunks, docs/dtensor.md)
  /// leaves slots that hold nothing. Only queries that ask for an element at
  /// its slot (a padded collective moved slot for slot) are sound on such a
  /// buffer; EdgeChecker sets it for those alone (PaddedLayouts).
  void allowPaddedSplits(bool allow) { paddedSplits_ = allow; }

  /// The implied constraints of a tensor that involve symbols (DID splits
  /// even, DID extents equal mesh sizes). Constant violations are lint
  /// findings and are reported by constantUnevenness instead. Records
  /// human-readable forms in assumptions().
  smt::Bool impliedConstraints(const TensorView &tv);
  /// Every symbol created so far is >= 1. Call last, when assembling a query.
  smt::Bool symbolsPositive();
  /// Why `tv`'s device splits give devices different counts, for constant
  /// extents (uneven split, DID extent != mesh size); empty when even.
  std::string constantUnevenness(const TensorView &tv) const;
  /// Mapped non-broadcast IDs of an edge have equal extents.
  smt::Bool edgeExtentConstraints(const FusionEdge &edge);
  /// Human-readable forms of every implied constraint used so far.
  const std::set<std::string> &assumptions() const { return assumptions_; }
  /// Every canonical symbol variable created so far.
  std::vector<std::string> symbolVars() const;

private:
  smt::Int extentTerm(const Extent &e);
  void propagate(ElementTerms &e, const TensorView &tv);
  /// A valid length of an ID (docs/semantics.md, Chunked splits) and when
  /// it holds, over the enclosing outer indices; cases of length 0 are left
  /// out (no element reaches them). Throws Unsupported off the modelled form.
  struct LengthCase {
    smt::Bool when;
    int64_t length;
  };
  std::vector<LengthCase> validLengthCases(const ElementTerms &e, const TensorView &tv, IdNum id);
  /// The outer and inner indices of a chunked split, as ite over those cases.
  void chunkedSplitIndices(ElementTerms &e, const TensorView &tv, const Transform &t);
  bool isDataBroadcast(IdNum id) const;

  smt::Context &ctx_;
  const Fusion &fusion_;
  std::map<std::string, std::string> userToCanonical_, canonicalToUser_;
  std::map<IdNum, smt::Int> extentCache_;
  /// Tensors whose mesh was checked for duplicate devices (once each: a
  /// 65,536-device mesh is asked about once per device).
  std::set<TensorNum> meshChecked_;
  std::set<std::string> assumptions_;
  std::vector<smt::Bool> symbolConstraints_;
  bool paddedSplits_ = false;
};

} // namespace shardcheck
