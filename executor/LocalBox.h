// LocalBox: a device's local buffer as a dense row-major box of a tensor,
// found from the tensor's domains without enumerating its elements.
//
// TensorLayout (executor/Layout.h) says where every element lives by running
// the layout rules over every element, which is exact but costs memory and
// time proportional to the tensor: a 32768 x 8192 weight is 268M entries.
// Most tensors of tensor-parallel models have a much simpler layout: each
// logical data axis is either whole or cut by one device split into equal
// contiguous chunks, and the buffer keeps the logical axis order. Then the
// device's buffer is the row-major box [offset_k, offset_k + extent_k) of the
// reference shape (executor/Reference.h), and everything the executor needs
// (slot counts, the elements of an input, identity maps between equal boxes,
// a gemm's operands) follows from a few integers.
//
// localBoxOf recognizes that case conservatively and answers nullopt for
// anything else (merges, nested or inner device splits, uneven splits, mesh
// extents different from the split's, expanded broadcasts, allocation
// domains that reorder, tensors without a mesh that are device-parallel);
// callers then fall back to TensorLayout. tests/local_box_test.cpp checks
// every box it gives against TensorLayout over the corpus plans.
//
// This file does not decide whether a step is correct; it only describes
// buffers.
#pragma once

#include "executor/Reference.h"
#include "ir/Fusion.h"
#include "plan/Plan.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace shardcheck {

/// Per reference axis of a tensor: the first index the device holds and how
/// many (a broadcast axis: offset 0, extent 1).
struct LocalBox {
  std::vector<int64_t> shape; ///< The tensor's reference shape.
  std::vector<int64_t> offset, extent;

  int64_t slotCount() const;
  friend bool operator==(const LocalBox &a, const LocalBox &b) {
    return a.shape == b.shape && a.offset == b.offset && a.extent == b.extent;
  }
  friend bool operator!=(const LocalBox &a, const LocalBox &b) { return !(a == b); }
};

/// The box `device` holds of tensor `t` at `symbols`, when its buffer is one
/// (see the banner); nullopt otherwise, and for a device outside t's mesh.
/// Never throws for layouts it does not recognize; unbound symbols give
/// nullopt too (TensorLayout reports them).
std::optional<LocalBox> localBoxOf(const Fusion &fusion, TensorNum t, const Bindings &symbols,
                                   int64_t device);

/// The box of a plan buffer on `device`: a tensor buffer's tensor box, or
/// the consumer's box for the partial buffer of an Allreduce (which follows
/// the consumer's layout on each device). nullopt for other buffer kinds.
std::optional<LocalBox> bufferBoxOf(const Plan &plan, const PlanBuffer &buffer,
                                    const Bindings &symbols, int64_t device);

/// The elements of a box, in slot order (row-major over the box), named by
/// their row-major index over the reference shape as TensorLayout names them.
std::vector<int64_t> boxElements(const LocalBox &box);

/// The values of `box` cut out of a whole tensor, in slot order.
std::vector<double> extractBox(const HostTensor &whole, const LocalBox &box);

} // namespace shardcheck
