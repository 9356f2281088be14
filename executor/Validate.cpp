// Validation of a sharded run against the unsharded reference; see
// Validate.h.
//
// Structure: toleranceFor is a table per dtype; compareWithReference walks
// every device of the layout and every slot of its buffer, compares the slot
// with the reference element the layout says it holds, and accumulates the
// counts, the maximum errors and the first mismatch (in device order, then
// slot order, so the report is deterministic).
#include "executor/Validate.h"

#include "util/Diagnostics.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace shardcheck {

namespace {

/// The tolerances of one element, before widening for reductions.
Tolerance baseTolerance(DataType d) {
  switch (d) {
  case DataType::Double:
  case DataType::ComplexDouble:
    return {1e-12, 1e-12};
  case DataType::Unknown: // Dumps without dtypes are float in practice.
  case DataType::Float:
  case DataType::ComplexFloat:
    return {1.3e-6, 1e-5}; // torch.testing's float32 defaults.
  case DataType::Half:
    return {1e-3, 1e-5}; // torch.testing's float16 defaults.
  case DataType::BFloat16:
    return {1.6e-2, 1e-5}; // torch.testing's bfloat16 defaults.
  case DataType::Float8_e4m3:
  case DataType::Float8_e5m2:
    return {0.125, 1e-3}; // Half an ulp of e5m2's 2 mantissa bits.
  case DataType::Float4_e2m1:
    return {0.25, 1e-3}; // Half an ulp of 1 mantissa bit.
  case DataType::Float8_e8m0:
    return {0.5, 1e-3}; // Powers of two only.
  case DataType::Int32:
  case DataType::Int64:
  case DataType::Int8:
  case DataType::UInt8:
  case DataType::Int16:
  case DataType::UInt16:
  case DataType::UInt32:
  case DataType::UInt64:
  case DataType::Bool:
  case DataType::Index:
    return {0, 0};
  }
  return {0, 0};
}

/// Whether `got` matches `want` within `tol` (NaN matches NaN, an infinity
/// only itself).
bool withinTolerance(double got, double want, const Tolerance &tol) {
  if (std::isnan(got) || std::isnan(want))
    return std::isnan(got) && std::isnan(want);
  if (std::isinf(got) || std::isinf(want))
    return got == want;
  return std::fabs(got - want) <= tol.atol + tol.rtol * std::fabs(want);
}

/// Accumulates one slot's comparison into `c`.
void record(OutputComparison &c, const TensorLayout &layout, int64_t device, int64_t slot,
            int64_t element, double got, double want) {
  ++c.compared;
  bool ok = withinTolerance(got, want, c.tolerance);
  if (std::isfinite(got) && std::isfinite(want)) {
    double abs = std::fabs(got - want);
    c.maxAbsError = std::max(c.maxAbsError, abs);
    if (want != 0)
      c.maxRelError = std::max(c.maxRelError, abs / std::fabs(want));
  } else if (!ok) {
    // A non-finite mismatch (NaN where a number was due, a wrong infinity)
    // has no finite error; infinity keeps it from looking small.
    c.maxAbsError = c.maxRelError = std::numeric_limits<double>::infinity();
  }
  if (ok)
    return;
  ++c.mismatched;
  if (!c.firstMismatch)
    c.firstMismatch = Mismatch{device, slot, layout.indexOf(element), got, want};
}

/// Records a held slot of a missing or misshapen buffer: a mismatch with got
/// = NaN (counted directly, since NaN would match a NaN reference element).
void recordMissing(OutputComparison &c, const TensorLayout &layout, int64_t device, int64_t slot,
                   int64_t element, double want) {
  double nan = std::numeric_limits<double>::quiet_NaN();
  ++c.compared;
  ++c.mismatched;
  c.maxAbsError = c.maxRelError = std::numeric_limits<double>::infinity();
  if (!c.firstMismatch)
    c.firstMismatch = Mismatch{device, slot, layout.indexOf(element), nan, want};
}

} // namespace

Tolerance toleranceFor(DataType d, int64_t reductionLength) {
  Tolerance t = baseTolerance(d);
  if (t.rtol == 0 && t.atol == 0) // Exact types stay exact.
    return t;
  if (reductionLength > 1)
    t.atol = std::max(t.atol, t.rtol) * std::sqrt(static_cast<double>(reductionLength));
  return t;
}

OutputComparison compareWithReference(const TensorLayout &layout, const HostTensor &reference,
                                      const std::map<int64_t, std::vector<double>> &buffers,
                                      const std::string &name, Tolerance tolerance,
                                      const std::vector<int64_t> *devices) {
  SC_ASSERT(reference.shape() == layout.shape(),
            "the reference of " + name + " does not have its layout's shape");
  OutputComparison c;
  c.tensor = layout.tensor();
  c.name = name;
  c.dtype = reference.dtype();
  c.tolerance = tolerance;
  const std::vector<double> &want = reference.data();
  for (int64_t device : layout.devices()) {
    if (devices && std::find(devices->begin(), devices->end(), device) == devices->end())
      continue;
    const std::vector<int64_t> &slots = layout.slots(device);
    auto it = buffers.find(device);
    // A missing or misshapen buffer has no slot to trust. Buffers of devices
    // outside layout.devices() are not looked at: they hold nothing of it.
    bool usable = it != buffers.end() && it->second.size() == slots.size();
    for (size_t slot = 0; slot < slots.size(); ++slot) {
      int64_t element = slots[slot];
      if (element == kNoElement)
        continue;
      double expected = want[static_cast<size_t>(element)];
      if (!usable) {
        recordMissing(c, layout, device, static_cast<int64_t>(slot), element, expected);
        continue;
      }
      double got = it->second[slot];
      record(c, layout, device, static_cast<int64_t>(slot), element, got, expected);
    }
  }
  return c;
}

OutputComparison mergeComparisons(const std::vector<OutputComparison> &parts) {
  SC_ASSERT(!parts.empty(), "nothing to merge");
  OutputComparison merged = parts.front();
  for (size_t i = 1; i < parts.size(); ++i) {
    const OutputComparison &p = parts[i];
    merged.compared += p.compared;
    merged.mismatched += p.mismatched;
    merged.maxAbsError = std::max(merged.maxAbsError, p.maxAbsError);
    merged.maxRelError = std::max(merged.maxRelError, p.maxRelError);
    if (p.firstMismatch &&
        (!merged.firstMismatch || p.firstMismatch->device < merged.firstMismatch->device))
      merged.firstMismatch = p.firstMismatch;
  }
  return merged;
}

} // namespace shardcheck
