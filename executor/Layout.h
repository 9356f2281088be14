// TensorLayout: where each element of a tensor lives, at concrete sizes.
//
// The executor's own implementation of docs/semantics.md "Ownership" and
// "Local buffer layout": for one tensor of a fusion and concrete symbol
// values, which devices hold which elements and at which slot of each
// device's local buffer. It is written from the semantics page alone and
// shares no code with the checker's SMT encoding or its brute-force
// evaluator (checker/), so a plan the checker proved is run against a third,
// independent reading of the same rules: a disagreement shows up as a wrong
// result or a count error at run time.
//
// Elements are named by their linear row-major index over the tensor's
// reference shape (executor/Reference.h referenceShape: logical data IDs,
// broadcast axes extent 1, expanded broadcasts their expanded extent). A
// broadcast axis, expanded or not, always has index 0 in an element's name,
// so an expanded broadcast's elements at other indices are never named.
//
// What it does not do: decide anything about edges, move data, or guess.
// Resize, Swizzle, loop or allocation IDs not derived from the logical
// domain, a DID type the mesh has no axis for, and a DID-parallel tensor
// without a mesh are InputErrors located at the tensor; so are unbound
// symbols. Uneven device splits are supported: padding slots hold no element.
#pragma once

#include "executor/Reference.h"
#include "ir/Fusion.h"

#include <cstdint>
#include <map>
#include <vector>

namespace shardcheck {

/// The element stored in a padding slot of a local buffer.
constexpr int64_t kNoElement = -1;

class TensorLayout {
public:
  /// Builds the layout of tensor `t` of `fusion` with symbol values
  /// `symbols`. `meshlessDevices` are the devices that hold a tensor without
  /// a mesh (every device of every mesh of the fusion, or 0..N-1 when a run
  /// binds N devices). Throws InputError as the banner says.
  static TensorLayout build(const Fusion &fusion, TensorNum t, const Bindings &symbols,
                            const std::vector<int64_t> &meshlessDevices);

  TensorNum tensor() const { return tensor_; }
  /// The reference shape (see the banner) and its row-major element count.
  const std::vector<int64_t> &shape() const { return shape_; }
  int64_t elementCount() const;

  /// The devices that may hold elements, ascending: the mesh's devices, or
  /// `meshlessDevices`.
  const std::vector<int64_t> &devices() const { return devices_; }
  bool onDevice(int64_t device) const;

  /// The local buffer's shape on `device`: one extent per layout ID
  /// (allocation IDs, else logical data IDs with device-split inputs
  /// replaced by their inner part, innermost for nested shardings), DID-parallel, broadcast and
  /// reduction IDs contributing 1. Empty for a device not holding the tensor.
  std::vector<int64_t> localShape(int64_t device) const;
  /// The number of slots of `device`'s buffer (the product of localShape;
  /// 0 for a device outside devices()).
  int64_t slotCount(int64_t device) const;
  /// The number of elements `device` holds (slotCount minus padding).
  int64_t heldCount(int64_t device) const;
  /// Per slot of `device`'s buffer, in offset order, the element stored
  /// there or kNoElement for padding. Empty for a device outside devices().
  const std::vector<int64_t> &slots(int64_t device) const;
  /// The slot of `element` on `device`, or -1 when `device` does not hold it.
  int64_t slotOf(int64_t device, int64_t element) const;

  /// An element's multi-index over the reference shape, and back.
  std::vector<int64_t> indexOf(int64_t element) const;
  int64_t elementAt(const std::vector<int64_t> &index) const;
  /// For a tensor with a root domain different from its logical one
  /// (reshape, permute): the element's indices over the root data IDs
  /// (root IDs that are not reductions, in root order), found by running the
  /// root -> logical transforms backwards. For other tensors: indexOf.
  std::vector<int64_t> rootIndexOf(int64_t element) const;

private:
  /// One step of an index program over dense index registers: a split
  /// (in0 -> out0 outer, out1 inner; `extent` = inner extent) or a merge
  /// (in0 outer, in1 inner -> out0; `extent` = the inner input's extent).
  struct IndexStep {
    bool isSplit = true;
    int in0 = 0, in1 = 0, out0 = 0, out1 = 0;
    int64_t extent = 1;
    /// Chunked splits (docs/semantics.md, Chunked splits): the inner part is
    /// ceilDiv(valid length of the input, factor). The input's valid length
    /// is in register lengthIn, or is lengthConst (a logical extent) when
    /// lengthIn < 0; a split whose inner output feeds a chunked split
    /// writes that output's valid length to register lengthOut.
    bool chunked = false;
    int64_t factor = 1, lengthConst = 0;
    int lengthIn = -1, lengthOut = -1;
  };
  /// The devices that hold the same elements (equal coordinates on every
  /// sharded mesh axis) share one buffer.
  struct Group {
    std::vector<int64_t> slots;
    int64_t held = 0;
  };

  /// The group of `device`, or -1 outside devices().
  int groupOf(int64_t device) const;
  /// Computes everything at build time (defined in Layout.cpp).
  friend class TensorLayoutBuilder;

  TensorNum tensor_ = 0;
  std::vector<int64_t> shape_;
  std::vector<int64_t> devices_;
  std::vector<int> deviceGroup_; ///< Parallel to devices_.
  std::vector<int64_t> localShape_;
  std::vector<Group> groups_;
  std::vector<int64_t> elementSlot_; ///< Per element: its slot (on any holder), or -1.
  std::vector<int> elementGroup_;    ///< Per element: the group holding it, or -1.
  // rootIndexOf: logical data indices -> root data indices, run backwards.
  bool rootDiffers_ = false;
  int registers_ = 0;
  std::vector<int> logicalRegs_;     ///< Per reference axis (-1: broadcast, index 0).
  std::vector<IndexStep> rootSteps_; ///< Root -> logical, in forward order.
  std::vector<int> rootDataRegs_;    ///< Per root data ID.
  // (Private members may change freely; only the public API is a contract.)
};

} // namespace shardcheck
