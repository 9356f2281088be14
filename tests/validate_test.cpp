// Validation of sharded buffers against the reference (executor/Validate.h).
//
// Layouts come from small fusions built with FusionBuilder; each test first
// pins the slots it relies on, so a failure here is about validation and
// not about TensorLayout. Buffers start as the exact slice of the reference
// and each test perturbs the slots it is about.
#include "executor/Validate.h"
#include "ir/FusionBuilder.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace shardcheck;

namespace {

using Slots = std::vector<int64_t>;
using Buffers = std::map<int64_t, std::vector<double>>;
constexpr int64_t X = kNoElement;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

/// A [n] tensor on mesh (0 1), its only axis outer-split by DIDx: device 0
/// holds the first ceil(n/2) elements, device 1 the rest (padded when n is
/// odd).
TensorLayout sharded1d(int64_t n, DataType dtype = DataType::Float) {
  FusionBuilder b;
  IdNum i = b.iter(n);
  auto s = b.split(i, 2, /*innerSplit=*/false, ParallelType::DIDx);
  TensorNum t = b.tensor({i}, DeviceMesh::linear({0, 1}), {s.outer, s.inner}, dtype);
  return TensorLayout::build(b.fusion(), t, {}, {0, 1});
}

/// A [2, 4] tensor on mesh (0 1), its second axis outer-split by DIDx.
TensorLayout sharded2d() {
  FusionBuilder b;
  IdNum i0 = b.iter(2), i1 = b.iter(4);
  auto s = b.split(i1, 2, /*innerSplit=*/false, ParallelType::DIDx);
  TensorNum t = b.tensor({i0, i1}, DeviceMesh::linear({0, 1}), {i0, s.outer, s.inner});
  return TensorLayout::build(b.fusion(), t, {}, {0, 1});
}

/// A [n] tensor replicated on mesh (0 1 2).
TensorLayout replicated(int64_t n) {
  FusionBuilder b;
  TensorNum t = b.tensor({b.iter(n)}, DeviceMesh::linear({0, 1, 2}));
  return TensorLayout::build(b.fusion(), t, {}, {0, 1, 2});
}

/// The reference 10, 11, 12, ... over `layout`'s shape.
HostTensor referenceFor(const TensorLayout &layout, DataType dtype = DataType::Float) {
  HostTensor ref(layout.shape(), dtype);
  for (size_t e = 0; e < ref.data().size(); ++e)
    ref.data()[e] = 10.0 + static_cast<double>(e);
  return ref;
}

/// Every device's exact slice of `ref`; padding slots hold NaN, which must
/// not matter.
Buffers exactBuffers(const TensorLayout &layout, const HostTensor &ref) {
  Buffers out;
  for (int64_t d : layout.devices())
    for (int64_t e : layout.slots(d))
      out[d].push_back(e == X ? kNaN : ref.data()[static_cast<size_t>(e)]);
  return out;
}

OutputComparison compare(const TensorLayout &layout, const HostTensor &ref, const Buffers &bufs,
                         Tolerance tol = toleranceFor(DataType::Float)) {
  return compareWithReference(layout, ref, bufs, "T4", tol);
}

/// Whether a single value `got` matches `want` under `tol`, through a
/// one-element replicated tensor on one device.
bool matchesOne(double got, double want, Tolerance tol) {
  FusionBuilder b;
  TensorNum t = b.tensor({b.iter(1)}, DeviceMesh::linear({0}));
  TensorLayout layout = TensorLayout::build(b.fusion(), t, {}, {0});
  HostTensor ref({1}, DataType::Double, {want});
  return compareWithReference(layout, ref, {{0, {got}}}, "T0", tol).matches();
}

} // namespace

// --- Layout preconditions of the tests below ---------------------------------

TEST(ValidateFixture, LayoutsAreWhatTheTestsAssume) {
  TensorLayout even = sharded1d(8);
  EXPECT_EQ(even.slots(0), (Slots{0, 1, 2, 3}));
  EXPECT_EQ(even.slots(1), (Slots{4, 5, 6, 7}));
  TensorLayout odd = sharded1d(5);
  EXPECT_EQ(odd.slots(0), (Slots{0, 1, 2}));
  EXPECT_EQ(odd.slots(1), (Slots{3, 4, X}));
  TensorLayout two = sharded2d();
  EXPECT_EQ(two.slots(1), (Slots{2, 3, 6, 7}));
  TensorLayout rep = replicated(3);
  EXPECT_EQ(rep.devices(), (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(rep.slots(2), (Slots{0, 1, 2}));
}

// --- Comparison --------------------------------------------------------------

TEST(ValidateCompare, ExactMatch) {
  TensorLayout layout = sharded1d(8);
  HostTensor ref = referenceFor(layout, DataType::Half);
  OutputComparison c = compare(layout, ref, exactBuffers(layout, ref));
  EXPECT_TRUE(c.matches());
  EXPECT_EQ(c.tensor, layout.tensor());
  EXPECT_EQ(c.name, "T4");
  EXPECT_EQ(c.dtype, DataType::Half);
  EXPECT_EQ(c.tolerance.rtol, toleranceFor(DataType::Float).rtol);
  EXPECT_EQ(c.compared, 8);
  EXPECT_EQ(c.mismatched, 0);
  EXPECT_EQ(c.maxAbsError, 0);
  EXPECT_EQ(c.maxRelError, 0);
  EXPECT_FALSE(c.firstMismatch.has_value());
}

TEST(ValidateCompare, ReplicatedTensorIsComparedOnEveryDevice) {
  TensorLayout layout = replicated(3);
  HostTensor ref = referenceFor(layout);
  Buffers bufs = exactBuffers(layout, ref);
  EXPECT_EQ(compare(layout, ref, bufs).compared, 9);
  bufs[2][1] = 0;
  OutputComparison c = compare(layout, ref, bufs);
  EXPECT_EQ(c.mismatched, 1);
  ASSERT_TRUE(c.firstMismatch.has_value());
  EXPECT_EQ(c.firstMismatch->device, 2);
  EXPECT_EQ(c.firstMismatch->slot, 1);
}

TEST(ValidateCompare, MismatchReportsDeviceSlotIndexAndValues) {
  TensorLayout layout = sharded2d();
  HostTensor ref = referenceFor(layout);
  Buffers bufs = exactBuffers(layout, ref);
  bufs[1][2] = 99; // Device 1, slot 2: element 6, index [1, 2], expected 16.
  OutputComparison c = compare(layout, ref, bufs);
  EXPECT_FALSE(c.matches());
  EXPECT_EQ(c.compared, 8);
  EXPECT_EQ(c.mismatched, 1);
  ASSERT_TRUE(c.firstMismatch.has_value());
  EXPECT_EQ(c.firstMismatch->device, 1);
  EXPECT_EQ(c.firstMismatch->slot, 2);
  EXPECT_EQ(c.firstMismatch->index, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(c.firstMismatch->got, 99);
  EXPECT_EQ(c.firstMismatch->expected, 16);
  EXPECT_DOUBLE_EQ(c.maxAbsError, 83);
  EXPECT_DOUBLE_EQ(c.maxRelError, 83.0 / 16.0);
}

TEST(ValidateCompare, FirstMismatchIsInDeviceThenSlotOrder) {
  TensorLayout layout = sharded1d(8);
  HostTensor ref = referenceFor(layout);
  Buffers bufs = exactBuffers(layout, ref);
  bufs[1][0] = -1;
  bufs[0][3] = -1;
  bufs[0][2] = -1;
  OutputComparison c = compare(layout, ref, bufs);
  EXPECT_EQ(c.mismatched, 3);
  ASSERT_TRUE(c.firstMismatch.has_value());
  EXPECT_EQ(c.firstMismatch->device, 0);
  EXPECT_EQ(c.firstMismatch->slot, 2);
  EXPECT_EQ(c.firstMismatch->index, (std::vector<int64_t>{2}));
}

TEST(ValidateCompare, MaxErrorsOverSlotsWithinTolerance) {
  TensorLayout layout = sharded1d(4);
  HostTensor ref({4}, DataType::Float, {0, 2, -4, 8});
  Buffers bufs = {{0, {1e-6, 2 + 2e-6}}, {1, {-4, 8 - 4e-6}}};
  OutputComparison c = compare(layout, ref, bufs);
  EXPECT_TRUE(c.matches());
  EXPECT_NEAR(c.maxAbsError, 4e-6, 1e-15);
  EXPECT_NEAR(c.maxRelError, 1e-6, 1e-15); // Element 0 (want 0) is left out.
}

TEST(ValidateCompare, PaddingSlotsAreIgnored) {
  TensorLayout layout = sharded1d(5);
  HostTensor ref = referenceFor(layout);
  Buffers bufs = exactBuffers(layout, ref);
  bufs[1][2] = 12345; // The padding slot.
  OutputComparison c = compare(layout, ref, bufs);
  EXPECT_TRUE(c.matches());
  EXPECT_EQ(c.compared, 5);
}

TEST(ValidateCompare, MissingDeviceBufferIsAMismatchOfEveryHeldSlot) {
  TensorLayout layout = sharded1d(5);
  HostTensor ref = referenceFor(layout);
  Buffers bufs = exactBuffers(layout, ref);
  bufs.erase(1);
  OutputComparison c = compare(layout, ref, bufs);
  EXPECT_EQ(c.compared, 5);
  EXPECT_EQ(c.mismatched, 2); // Device 1 holds 2 elements and a padding slot.
  ASSERT_TRUE(c.firstMismatch.has_value());
  EXPECT_EQ(c.firstMismatch->device, 1);
  EXPECT_EQ(c.firstMismatch->slot, 0);
  EXPECT_EQ(c.firstMismatch->index, (std::vector<int64_t>{3}));
  EXPECT_TRUE(std::isnan(c.firstMismatch->got));
  EXPECT_EQ(c.firstMismatch->expected, 13);
  EXPECT_TRUE(std::isinf(c.maxAbsError));
}

TEST(ValidateCompare, MissingBufferMismatchesEvenANaNReference) {
  TensorLayout layout = sharded1d(4);
  HostTensor ref({4}, DataType::Float, {kNaN, kNaN, kNaN, kNaN});
  Buffers bufs = exactBuffers(layout, ref);
  EXPECT_TRUE(compare(layout, ref, bufs).matches());
  bufs.erase(0);
  EXPECT_EQ(compare(layout, ref, bufs).mismatched, 2);
}

TEST(ValidateCompare, WrongSizedBufferIsAMismatchOfEveryHeldSlot) {
  TensorLayout layout = sharded1d(8);
  HostTensor ref = referenceFor(layout);
  Buffers bufs = exactBuffers(layout, ref);
  bufs[0].push_back(0); // Five values where four slots are due.
  OutputComparison c = compare(layout, ref, bufs);
  EXPECT_EQ(c.compared, 8);
  EXPECT_EQ(c.mismatched, 4);
  ASSERT_TRUE(c.firstMismatch.has_value());
  EXPECT_EQ(c.firstMismatch->device, 0);
  EXPECT_TRUE(std::isnan(c.firstMismatch->got));
}

TEST(ValidateCompare, BuffersOfOtherDevicesAreNotLookedAt) {
  TensorLayout layout = sharded1d(4);
  HostTensor ref = referenceFor(layout);
  Buffers bufs = exactBuffers(layout, ref);
  bufs[7] = {1, 2, 3};
  OutputComparison c = compare(layout, ref, bufs);
  EXPECT_TRUE(c.matches());
  EXPECT_EQ(c.compared, 4);
}

// --- Non-finite values -------------------------------------------------------

TEST(ValidateNonFinite, NaNMatchesNaNOnly) {
  Tolerance loose{1, 1};
  EXPECT_TRUE(matchesOne(kNaN, kNaN, loose));
  EXPECT_FALSE(matchesOne(kNaN, 1, loose));
  EXPECT_FALSE(matchesOne(1, kNaN, loose));
  EXPECT_FALSE(matchesOne(kInf, kNaN, loose));
}

TEST(ValidateNonFinite, InfinityMatchesItselfOnly) {
  Tolerance loose{1, 1};
  EXPECT_TRUE(matchesOne(kInf, kInf, loose));
  EXPECT_TRUE(matchesOne(-kInf, -kInf, loose));
  EXPECT_FALSE(matchesOne(-kInf, kInf, loose));
  EXPECT_FALSE(matchesOne(1e308, kInf, loose));
  EXPECT_FALSE(matchesOne(kInf, 1e308, loose));
  EXPECT_FALSE(matchesOne(kNaN, kInf, loose));
}

TEST(ValidateNonFinite, MatchingNonFiniteValuesAddNoError) {
  TensorLayout layout = sharded1d(4);
  HostTensor ref({4}, DataType::Float, {kNaN, kInf, -kInf, 1});
  OutputComparison c = compare(layout, ref, exactBuffers(layout, ref));
  EXPECT_TRUE(c.matches());
  EXPECT_EQ(c.maxAbsError, 0);
  Buffers bufs = exactBuffers(layout, ref);
  bufs[0][1] = 5; // 5 where inf is due.
  c = compare(layout, ref, bufs);
  EXPECT_EQ(c.mismatched, 1);
  EXPECT_TRUE(std::isinf(c.maxAbsError));
}

// --- Tolerances --------------------------------------------------------------

TEST(ValidateTolerance, PerDtypeValues) {
  struct Row {
    DataType dtype;
    double rtol, atol;
  };
  for (Row r : {Row{DataType::Double, 1e-12, 1e-12}, Row{DataType::Float, 1.3e-6, 1e-5},
                Row{DataType::Unknown, 1.3e-6, 1e-5}, Row{DataType::Half, 1e-3, 1e-5},
                Row{DataType::BFloat16, 1.6e-2, 1e-5}, Row{DataType::Float8_e4m3, 0.125, 1e-3},
                Row{DataType::Float8_e5m2, 0.125, 1e-3}, Row{DataType::Int32, 0, 0},
                Row{DataType::Int64, 0, 0}, Row{DataType::UInt8, 0, 0}, Row{DataType::Bool, 0, 0},
                Row{DataType::Index, 0, 0}}) {
    Tolerance t = toleranceFor(r.dtype);
    EXPECT_EQ(t.rtol, r.rtol) << dataTypeName(r.dtype);
    EXPECT_EQ(t.atol, r.atol) << dataTypeName(r.dtype);
  }
}

TEST(ValidateTolerance, ReductionLengthWidensAtolOfFloatingTypesOnly) {
  EXPECT_EQ(toleranceFor(DataType::Float, 1).atol, 1e-5);
  EXPECT_EQ(toleranceFor(DataType::Float, 0).atol, 1e-5);
  EXPECT_DOUBLE_EQ(toleranceFor(DataType::Float, 100).atol, 1e-4); // max(1e-5, 1.3e-6) * 10
  EXPECT_EQ(toleranceFor(DataType::Float, 100).rtol, 1.3e-6);
  EXPECT_DOUBLE_EQ(toleranceFor(DataType::Half, 16).atol, 4e-3);      // max(1e-5, 1e-3) * 4
  EXPECT_DOUBLE_EQ(toleranceFor(DataType::BFloat16, 4).atol, 3.2e-2); // 1.6e-2 * 2
  EXPECT_DOUBLE_EQ(toleranceFor(DataType::Double, 4).atol, 2e-12);
  EXPECT_EQ(toleranceFor(DataType::Int32, 100).atol, 0);
  EXPECT_EQ(toleranceFor(DataType::Bool, 100).rtol, 0);
}

TEST(ValidateTolerance, BoundariesPerDtype) {
  // |got - want| <= atol + rtol * |want|: 1% inside passes, 1% outside fails.
  for (DataType d : {DataType::Double, DataType::Float, DataType::Unknown, DataType::Half,
                     DataType::BFloat16, DataType::Float8_e4m3, DataType::Float8_e5m2}) {
    Tolerance t = toleranceFor(d);
    for (double want : {2.0, -3.0, 0.0}) {
      double bound = t.atol + t.rtol * std::fabs(want);
      EXPECT_TRUE(matchesOne(want + 0.99 * bound, want, t)) << dataTypeName(d) << " " << want;
      EXPECT_TRUE(matchesOne(want - 0.99 * bound, want, t)) << dataTypeName(d) << " " << want;
      EXPECT_FALSE(matchesOne(want + 1.01 * bound, want, t)) << dataTypeName(d) << " " << want;
      EXPECT_FALSE(matchesOne(want - 1.01 * bound, want, t)) << dataTypeName(d) << " " << want;
    }
  }
}

TEST(ValidateTolerance, ReductionWidenedBoundary) {
  Tolerance t = toleranceFor(DataType::Float, 64); // atol = 1e-5 * 8.
  EXPECT_TRUE(matchesOne(7.9e-5, 0, t));
  EXPECT_FALSE(matchesOne(8.1e-5, 0, t));
}

TEST(ValidateTolerance, IntegerTypesAreExact) {
  for (DataType d : {DataType::Int32, DataType::Int64, DataType::Bool, DataType::Index}) {
    Tolerance t = toleranceFor(d, 1000);
    EXPECT_TRUE(matchesOne(3, 3, t)) << dataTypeName(d);
    EXPECT_FALSE(matchesOne(3 + 1e-9, 3, t)) << dataTypeName(d);
    EXPECT_FALSE(matchesOne(4, 3, t)) << dataTypeName(d);
  }
}
