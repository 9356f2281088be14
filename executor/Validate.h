// Validation of a sharded run: every device's buffer of an output against
// its slice of the unsharded reference, with tolerances per dtype.
//
// A slot of device d's buffer holding element x must equal reference[x]
// within |got - want| <= atol + rtol * |want|, where (rtol, atol) depend on
// the tensor's dtype (toleranceFor). NaN matches NaN and infinities match
// themselves; anything else involving a non-finite value is a mismatch.
// Padding slots are not compared. The comparison reports the maximum absolute
// and relative error over all compared slots and the first mismatch, in the
// user's terms (device, slot, element index, value, expected value).
//
// This file does not run anything and does not decide exit statuses.
#pragma once

#include "executor/Layout.h"
#include "executor/Tensor.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace shardcheck {

/// Tolerances of one dtype.
struct Tolerance {
  double rtol = 0;
  double atol = 0;
};

/// The tolerances of dtype `d`: tight for double, PyTorch's
/// torch.testing defaults for float, half and bfloat16, loose for fp8;
/// exact (0, 0) for integer and bool dtypes. `reductionLength` L (the number
/// of terms summed into an element, 1 for none) widens atol for floating
/// types, since a device sums in a different order and precision than the
/// reference: when L > 1, atol becomes max(atol, rtol) * sqrt(L) (each term's
/// rounding is up to ~rtol of a value of magnitude ~1, and L independent
/// roundings grow like sqrt(L)); rtol is unchanged. Unknown is treated like
/// Float (dumps without dtypes are float in practice).
Tolerance toleranceFor(DataType d, int64_t reductionLength = 1);

/// The first slot that did not match.
struct Mismatch {
  int64_t device = 0;
  int64_t slot = 0;
  std::vector<int64_t> index; ///< The element's index over the reference shape.
  double got = 0;
  double expected = 0;
};

/// The comparison of one tensor over all devices holding it.
struct OutputComparison {
  TensorNum tensor = 0;
  std::string name; ///< `T4`.
  DataType dtype = DataType::Unknown;
  Tolerance tolerance;
  int64_t compared = 0;   ///< Slots compared, over all devices.
  int64_t mismatched = 0; ///< Slots outside the tolerance.
  double maxAbsError = 0;
  double maxRelError = 0; ///< |got - want| / |want| over slots with want != 0.
  std::optional<Mismatch> firstMismatch;

  bool matches() const { return mismatched == 0; }
};

/// Compares `buffers` (device -> the tensor's local buffer on that device)
/// with `reference` through `layout`. A device of layout.devices() without a
/// buffer, or a buffer whose size is not layout.slotCount(device), is a
/// mismatch of every slot it should hold (reported with got = NaN). With
/// `devices`, only those devices are compared (a process holding some of the
/// devices validates its own).
OutputComparison compareWithReference(const TensorLayout &layout, const HostTensor &reference,
                                      const std::map<int64_t, std::vector<double>> &buffers,
                                      const std::string &name, Tolerance tolerance,
                                      const std::vector<int64_t> *devices = nullptr);

/// Merges comparisons of one tensor made on disjoint sets of devices (by
/// different processes): counts add, maxima combine, and the first mismatch
/// is the one of the lowest device.
OutputComparison mergeComparisons(const std::vector<OutputComparison> &parts);

} // namespace shardcheck
