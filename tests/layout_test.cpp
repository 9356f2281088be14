// TensorLayout (executor/Layout.h): ownership and local buffer layout.
//
// Expectations are worked out by hand from docs/semantics.md ("Ownership",
// "Local buffer layout") on small tensors built with FusionBuilder. The
// corpus test builds the layout of every tensor of the real dumps and checks
// the invariants that must hold whatever the sharding: held counts add up to
// the elements times the replication, and slots() and slotOf() agree.
#include "executor/Layout.h"
#include "ir/Constraints.h"
#include "ir/FusionBuilder.h"
#include "ir/reader/DumpReader.h"
#include "tests/TestPaths.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <numeric>
#include <set>

using namespace shardcheck;

namespace {

using Slots = std::vector<int64_t>;
constexpr int64_t X = kNoElement;

TensorLayout layoutOf(const FusionBuilder &b, TensorNum t, const Bindings &symbols = {},
                      const std::vector<int64_t> &meshless = {0, 1}) {
  return TensorLayout::build(b.fusion(), t, symbols, meshless);
}

/// The InputError code building the layout throws, or "" when it builds.
std::string errorCode(const Fusion &f, TensorNum t, const Bindings &symbols = {},
                      const std::vector<int64_t> &meshless = {0, 1}) {
  try {
    TensorLayout::build(f, t, symbols, meshless);
  } catch (const InputError &e) {
    return e.diagnostic().code;
  }
  return "";
}

DeviceMesh mesh1d(std::vector<int64_t> devices) {
  return DeviceMesh::linear(std::move(devices));
}

/// Every slot of every device, as a map device -> slots.
std::map<int64_t, Slots> allSlots(const TensorLayout &l) {
  std::map<int64_t, Slots> out;
  for (int64_t d : l.devices())
    out[d] = l.slots(d);
  return out;
}

} // namespace

// --- Replication and plain sharding ----------------------------------------------

TEST(LayoutReplicated, OneDimTensorIsWholeOnEveryMeshDevice) {
  FusionBuilder b;
  TensorNum t = b.tensor({b.iter(4)}, mesh1d({0, 1, 2}));
  TensorLayout l = layoutOf(b, t);
  EXPECT_EQ(l.tensor(), t);
  EXPECT_EQ(l.shape(), (std::vector<int64_t>{4}));
  EXPECT_EQ(l.elementCount(), 4);
  EXPECT_EQ(l.devices(), (std::vector<int64_t>{0, 1, 2}));
  for (int64_t d : {0, 1, 2}) {
    EXPECT_TRUE(l.onDevice(d));
    EXPECT_EQ(l.localShape(d), (std::vector<int64_t>{4}));
    EXPECT_EQ(l.slotCount(d), 4);
    EXPECT_EQ(l.heldCount(d), 4);
    EXPECT_EQ(l.slots(d), (Slots{0, 1, 2, 3}));
    EXPECT_EQ(l.slotOf(d, 2), 2);
  }
}

TEST(LayoutReplicated, MeshlessTensorIsOnTheMeshlessDevices) {
  FusionBuilder b;
  TensorNum t = b.tensor({b.iter(3)}, std::nullopt);
  TensorLayout l = layoutOf(b, t, {}, {3, 1, 1});
  EXPECT_EQ(l.devices(), (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(allSlots(l), (std::map<int64_t, Slots>{{1, {0, 1, 2}}, {3, {0, 1, 2}}}));
  EXPECT_FALSE(l.onDevice(0));
  EXPECT_EQ(l.slotOf(0, 1), -1);

  TensorLayout none = layoutOf(b, t, {}, {});
  EXPECT_TRUE(none.devices().empty());
  EXPECT_EQ(none.heldCount(0), 0);
  EXPECT_EQ(none.slotOf(0, 0), -1);
}

TEST(LayoutSharding, DidOnALogicalAxisGivesEachDeviceOneRow) {
  FusionBuilder b;
  TensorNum t = b.tensor({b.iter(2, ParallelType::DIDx), b.iter(3)}, mesh1d({0, 1}));
  TensorLayout l = layoutOf(b, t);
  EXPECT_EQ(l.shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(l.localShape(1), (std::vector<int64_t>{1, 3})); // The DID axis contributes 1.
  EXPECT_EQ(allSlots(l), (std::map<int64_t, Slots>{{0, {0, 1, 2}}, {1, {3, 4, 5}}}));
  EXPECT_EQ(l.slotOf(1, 4), 1);
  EXPECT_EQ(l.slotOf(0, 4), -1);
  EXPECT_EQ(l.heldCount(0), 3);
}

TEST(LayoutSharding, OuterSplitByDidKeepsTheLocalPartInPlace) {
  FusionBuilder b;
  IdNum a = b.iter(6), c = b.iter(2);
  auto s = b.split(a, 2, /*innerSplit=*/false, ParallelType::DIDx);
  TensorNum t = b.tensor({a, c}, mesh1d({0, 1}), {s.outer, s.inner, c});
  TensorLayout l = layoutOf(b, t);
  EXPECT_EQ(l.localShape(0), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(allSlots(l),
            (std::map<int64_t, Slots>{{0, {0, 1, 2, 3, 4, 5}}, {1, {6, 7, 8, 9, 10, 11}}}));
  EXPECT_EQ(l.slotOf(1, l.elementAt({4, 1})), 3);
}

TEST(LayoutSharding, OuterSplitOnThreeDevicesUsesMeshPositionsNotIds) {
  FusionBuilder b;
  IdNum a = b.iter(6);
  auto s = b.split(a, 3, /*innerSplit=*/false, ParallelType::DIDx);
  TensorNum t = b.tensor({a}, mesh1d({4, 2, 7}), {s.outer, s.inner});
  TensorLayout l = layoutOf(b, t);
  EXPECT_EQ(l.devices(), (std::vector<int64_t>{2, 4, 7}));
  // Device 4 is at mesh position 0, device 2 at 1, device 7 at 2.
  EXPECT_EQ(allSlots(l), (std::map<int64_t, Slots>{{4, {0, 1}}, {2, {2, 3}}, {7, {4, 5}}}));
  EXPECT_EQ(l.localShape(7), (std::vector<int64_t>{2}));
}

TEST(LayoutSharding, InnerSplitWithDidOnTheOuterOutputReplacesTheInputToo) {
  FusionBuilder b;
  IdNum a = b.iter(8);
  auto s = b.split(a, 2, /*innerSplit=*/true, ParallelType::DIDx); // outer {4} on DIDx
  TensorNum t = b.tensor({a}, mesh1d({0, 1, 2, 3}), {s.outer, s.inner});
  TensorLayout l = layoutOf(b, t);
  EXPECT_EQ(l.localShape(0), (std::vector<int64_t>{2}));
  EXPECT_EQ(allSlots(l),
            (std::map<int64_t, Slots>{{0, {0, 1}}, {1, {2, 3}}, {2, {4, 5}}, {3, {6, 7}}}));
}

TEST(LayoutSharding, DidOnTheInnerOutputKeepsTheWholeAxisWithPadding) {
  // A DID on a split's inner output (a lint error) still defines ownership;
  // the layout keeps the logical axis, so unheld indices are padding.
  FusionBuilder b;
  IdNum a = b.iter(8);
  auto s = b.split(a, 2, /*innerSplit=*/true);
  b.parallelize(s.inner, ParallelType::DIDx);
  TensorNum t = b.tensor({a}, mesh1d({0, 1}), {s.outer, s.inner});
  TensorLayout l = layoutOf(b, t);
  EXPECT_EQ(l.localShape(0), (std::vector<int64_t>{8}));
  EXPECT_EQ(allSlots(l), (std::map<int64_t, Slots>{{0, {0, X, 2, X, 4, X, 6, X}},
                                                   {1, {X, 1, X, 3, X, 5, X, 7}}}));
  EXPECT_EQ(l.heldCount(1), 4);
  EXPECT_EQ(l.slotCount(1), 8);
}

TEST(LayoutSharding, DidSplitAfterAnotherSplitKeepsTheLogicalAxis) {
  // Only a logical ID directly split by a DID is replaced by its local part
  // (docs/semantics.md); a DID reached through a second split is not.
  FusionBuilder b;
  IdNum a = b.iter(8);
  auto s = b.split(a, 4, /*innerSplit=*/true);                            // {2}, {4}
  auto d = b.split(s.outer, 2, /*innerSplit=*/false, ParallelType::DIDx); // {2}, {1}
  TensorNum t = b.tensor({a}, mesh1d({0, 1}), {d.outer, d.inner, s.inner});
  TensorLayout l = layoutOf(b, t);
  EXPECT_EQ(l.localShape(0), (std::vector<int64_t>{8}));
  EXPECT_EQ(allSlots(l), (std::map<int64_t, Slots>{{0, {0, 1, 2, 3, X, X, X, X}},
                                                   {1, {X, X, X, X, 4, 5, 6, 7}}}));
}

TEST(LayoutSharding, MergedThenSplitAxisFollowsTheMergedIndex) {
  FusionBuilder b;
  IdNum a = b.iter(2), c = b.iter(3);
  IdNum m = b.merge(a, c);
  auto s = b.split(m, 2, /*innerSplit=*/false, ParallelType::DIDx);
  TensorNum t = b.tensor({a, c}, mesh1d({0, 1}), {s.outer, s.inner});
  TensorLayout l = layoutOf(b, t);
  // No logical ID is directly device-split: the buffer has the logical shape.
  EXPECT_EQ(l.localShape(0), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(allSlots(l),
            (std::map<int64_t, Slots>{{0, {0, 1, 2, X, X, X}}, {1, {X, X, X, 3, 4, 5}}}));

  FusionBuilder b2;
  IdNum a2 = b2.iter(2), c2 = b2.iter(3);
  auto s2 = b2.split(b2.merge(a2, c2), 2, /*innerSplit=*/false, ParallelType::DIDx);
  TensorNum t2 = b2.tensor(FusionBuilder::TensorSpec{
      {}, {a2, c2}, {s2.outer, s2.inner}, {s2.outer, s2.inner}, mesh1d({0, 1})});
  TensorLayout dense = layoutOf(b2, t2);
  EXPECT_EQ(dense.localShape(1), (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(allSlots(dense), (std::map<int64_t, Slots>{{0, {0, 1, 2}}, {1, {3, 4, 5}}}));
}

TEST(LayoutSharding, TwoShardingIdsOfOneTypeMustBothMatch) {
  FusionBuilder b;
  TensorNum t =
      b.tensor({b.iter(2, ParallelType::DIDx), b.iter(2, ParallelType::DIDx)}, mesh1d({0, 1}));
  TensorLayout l = layoutOf(b, t);
  EXPECT_EQ(l.localShape(0), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(allSlots(l), (std::map<int64_t, Slots>{{0, {0}}, {1, {3}}}));
  EXPECT_EQ(l.slotOf(0, 1), -1); // [0, 1] is held by nobody.
  EXPECT_EQ(l.slotOf(1, 2), -1); // [1, 0] too.
}

TEST(LayoutSharding, DidExtentPastTheMeshLeavesElementsUnheld) {
  FusionBuilder b;
  TensorNum t = b.tensor({b.iter(4, ParallelType::DIDx)}, mesh1d({0, 1}));
  TensorLayout l = layoutOf(b, t);
  EXPECT_EQ(allSlots(l), (std::map<int64_t, Slots>{{0, {0}}, {1, {1}}}));
  EXPECT_EQ(l.slotOf(0, 2), -1);
  EXPECT_EQ(l.slotOf(1, 3), -1);
}

TEST(LayoutSharding, DeviceOutsideTheMeshHoldsNothing) {
  FusionBuilder b;
  TensorNum t = b.tensor({b.iter(2, ParallelType::DIDx)}, mesh1d({1, 2}));
  TensorLayout l = layoutOf(b, t, {}, {0, 1, 2, 3});
  EXPECT_EQ(l.devices(), (std::vector<int64_t>{1, 2}));
  for (int64_t d : {0, 3}) {
    EXPECT_FALSE(l.onDevice(d));
    EXPECT_TRUE(l.localShape(d).empty());
    EXPECT_EQ(l.slotCount(d), 0);
    EXPECT_EQ(l.heldCount(d), 0);
    EXPECT_TRUE(l.slots(d).empty());
    EXPECT_EQ(l.slotOf(d, 0), -1);
    EXPECT_EQ(l.slotOf(d, 1), -1);
  }
  EXPECT_EQ(allSlots(l), (std::map<int64_t, Slots>{{1, {0}}, {2, {1}}}));
}

// --- Allocation domains -------------------------------------------------------------

TEST(LayoutAllocation, TransposedAllocationOrdersSlotsColumnMajor) {
  FusionBuilder b;
  IdNum r = b.iter(2), c = b.iter(3);
  TensorNum t = b.tensor(FusionBuilder::TensorSpec{{}, {r, c}, {}, {c, r}, mesh1d({0})});
  TensorLayout l = layoutOf(b, t);
  EXPECT_EQ(l.localShape(0), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(l.slots(0), (Slots{0, 3, 1, 4, 2, 5}));
  EXPECT_EQ(l.slotOf(0, l.elementAt({1, 0})), 1);
}

TEST(LayoutAllocation, AllocationWithTheDidInTheMiddle) {
  FusionBuilder b;
  IdNum r = b.iter(4), c = b.iter(3);
  auto s = b.split(r, 2, /*innerSplit=*/false, ParallelType::DIDx);
  TensorNum t = b.tensor(FusionBuilder::TensorSpec{
      {}, {r, c}, {s.outer, s.inner, c}, {c, s.outer, s.inner}, mesh1d({0, 1})});
  TensorLayout l = layoutOf(b, t);
  EXPECT_EQ(l.localShape(1), (std::vector<int64_t>{3, 1, 2}));
  EXPECT_EQ(allSlots(l),
            (std::map<int64_t, Slots>{{0, {0, 3, 1, 4, 2, 5}}, {1, {6, 9, 7, 10, 8, 11}}}));
}

TEST(LayoutAllocation, AllocationThatDropsAnAxisIsNotOneToOne) {
  FusionBuilder b;
  IdNum r = b.iter(2), c = b.iter(3);
  TensorNum t = b.tensor(FusionBuilder::TensorSpec{{}, {r, c}, {}, {r}, mesh1d({0})});
  EXPECT_EQ(errorCode(b.fusion(), t), "layout-not-one-to-one");
}

// --- Multi-dimensional meshes ---------------------------------------------------------

TEST(LayoutMesh2d, DidxAndDidyOnDifferentAxes) {
  FusionBuilder b;
  IdNum r = b.iter(4), c = b.iter(6);
  auto sr = b.split(r, 2, /*innerSplit=*/false, ParallelType::DIDy);
  auto sc = b.split(c, 2, /*innerSplit=*/false, ParallelType::DIDx);
  DeviceMesh mesh = DeviceMesh::create({2, 2}, {0, 1, 2, 3});
  TensorNum t = b.tensor({r, c}, mesh, {sr.outer, sr.inner, sc.outer, sc.inner});
  TensorLayout l = layoutOf(b, t);
  EXPECT_EQ(l.localShape(3), (std::vector<int64_t>{2, 3}));
  // Device d has DIDy coordinate d / 2 (rows) and DIDx coordinate d % 2 (columns).
  EXPECT_EQ(allSlots(l), (std::map<int64_t, Slots>{{0, {0, 1, 2, 6, 7, 8}},
                                                   {1, {3, 4, 5, 9, 10, 11}},
                                                   {2, {12, 13, 14, 18, 19, 20}},
                                                   {3, {15, 16, 17, 21, 22, 23}}}));
}

TEST(LayoutMesh2d, NestedShardingKeepsTheInnermostPartWithoutAllocation) {
  // [Shard(0), Shard(0)]: rows split by DIDy, the local half again by DIDx.
  // The default layout follows both splits down (docs/semantics.md, Local
  // buffer layout): device (y, x) holds rows y*4 + x*2 .. y*4 + x*2 + 1.
  // The loop domain lists DIDx first: the order of the loop must not matter.
  FusionBuilder b;
  IdNum r = b.iter(8), c = b.iter(2);
  auto sy = b.split(r, 2, /*innerSplit=*/false, ParallelType::DIDy);
  auto sx = b.split(sy.inner, 2, /*innerSplit=*/false, ParallelType::DIDx);
  DeviceMesh mesh = DeviceMesh::create({2, 2}, {0, 1, 2, 3});
  TensorNum t = b.tensor({r, c}, mesh, {sx.outer, sy.outer, sx.inner, c});
  TensorLayout l = layoutOf(b, t);
  EXPECT_EQ(l.localShape(2), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(allSlots(l),
            (std::map<int64_t, Slots>{
                {0, {0, 1, 2, 3}}, {1, {4, 5, 6, 7}}, {2, {8, 9, 10, 11}}, {3, {12, 13, 14, 15}}}));
}

TEST(LayoutMesh2d, UnevenNestedShardingPadsTheInnermostPart) {
  // 10 rows: 5 per DIDy half, ceilDiv(5, 2) = 3 slots per DIDx quarter; x = 1
  // holds two rows and one padding slot.
  FusionBuilder b;
  IdNum r = b.iter(10);
  auto sy = b.split(r, 2, /*innerSplit=*/false, ParallelType::DIDy);
  auto sx = b.split(sy.inner, 2, /*innerSplit=*/false, ParallelType::DIDx);
  DeviceMesh mesh = DeviceMesh::create({2, 2}, {0, 1, 2, 3});
  TensorNum t = b.tensor({r}, mesh, {sy.outer, sx.outer, sx.inner});
  TensorLayout l = layoutOf(b, t);
  EXPECT_EQ(l.localShape(1), (std::vector<int64_t>{3}));
  EXPECT_EQ(allSlots(l), (std::map<int64_t, Slots>{
                             {0, {0, 1, 2}}, {1, {3, 4, X}}, {2, {5, 6, 7}}, {3, {8, 9, X}}}));
}

TEST(LayoutMesh2d, ReplicatedAlongTheUnusedAxis) {
  FusionBuilder b;
  IdNum r = b.iter(4), c = b.iter(3);
  auto s = b.split(r, 2, /*innerSplit=*/false, ParallelType::DIDx);
  TensorNum t = b.tensor({r, c}, DeviceMesh::create({2, 2}, {0, 1, 2, 3}), {s.outer, s.inner, c});
  TensorLayout l = layoutOf(b, t);
  Slots first{0, 1, 2, 3, 4, 5}, second{6, 7, 8, 9, 10, 11};
  EXPECT_EQ(allSlots(l),
            (std::map<int64_t, Slots>{{0, first}, {1, second}, {2, first}, {3, second}}));
  int64_t held = 0;
  for (int64_t d : l.devices())
    held += l.heldCount(d);
  EXPECT_EQ(held, l.elementCount() * 2);
}

TEST(LayoutMesh2d, DidyOnAOneDimensionalMeshIsAnError) {
  FusionBuilder b;
  TensorNum t = b.tensor({b.iter(2, ParallelType::DIDy)}, mesh1d({0, 1}));
  EXPECT_EQ(errorCode(b.fusion(), t), "did-not-in-mesh");
}

// --- Broadcasts and reductions ------------------------------------------------------

TEST(LayoutBroadcast, DidOnABroadcastIsVacuous) {
  FusionBuilder b;
  TensorNum t = b.tensor({b.broadcast(ParallelType::DIDx), b.iter(3)}, mesh1d({0, 1}));
  TensorLayout l = layoutOf(b, t);
  EXPECT_EQ(l.shape(), (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(l.localShape(0), (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(allSlots(l), (std::map<int64_t, Slots>{{0, {0, 1, 2}}, {1, {0, 1, 2}}}));

  // Even a DID type the mesh has no axis for: a broadcast shards nothing.
  FusionBuilder b2;
  TensorNum t2 = b2.tensor({b2.broadcast(ParallelType::DIDy)}, mesh1d({0, 1}));
  TensorLayout l2 = layoutOf(b2, t2);
  EXPECT_EQ(allSlots(l2), (std::map<int64_t, Slots>{{0, {0}}, {1, {0}}}));
}

TEST(LayoutBroadcast, ExpandedBroadcastNamesOnlyIndexZero) {
  FusionBuilder b;
  TensorNum t =
      b.tensor({b.broadcast(ParallelType::Serial, Extent::constant(4)), b.iter(3)}, std::nullopt);
  TensorLayout l = layoutOf(b, t);
  EXPECT_EQ(l.shape(), (std::vector<int64_t>{4, 3}));
  EXPECT_EQ(l.elementCount(), 12);
  EXPECT_EQ(l.localShape(0), (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(allSlots(l), (std::map<int64_t, Slots>{{0, {0, 1, 2}}, {1, {0, 1, 2}}}));
  EXPECT_EQ(l.heldCount(1), 3);
  EXPECT_EQ(l.slotOf(0, 2), 2);
  EXPECT_EQ(l.slotOf(0, 3), -1); // [1, 0]: an expanded index, never named.
}

TEST(LayoutReduction, ReductionIdsAreNotPartOfElements) {
  FusionBuilder b;
  IdNum i = b.iter(2), r = b.reduction(4);
  auto s = b.split(r, 2, /*innerSplit=*/false, ParallelType::DIDx); // rDIDx: not sharding
  TensorNum t = b.tensor({i, r}, mesh1d({0, 1}), {i, s.outer, s.inner});
  TensorLayout l = layoutOf(b, t);
  EXPECT_EQ(l.shape(), (std::vector<int64_t>{2}));
  EXPECT_EQ(l.localShape(0), (std::vector<int64_t>{2}));
  EXPECT_EQ(allSlots(l), (std::map<int64_t, Slots>{{0, {0, 1}}, {1, {0, 1}}}));

  FusionBuilder b2;
  IdNum i2 = b2.iter(2), r2 = b2.reduction(4);
  TensorNum t2 = b2.tensor(FusionBuilder::TensorSpec{{}, {i2, r2}, {}, {r2, i2}, mesh1d({0})});
  TensorLayout l2 = layoutOf(b2, t2);
  EXPECT_EQ(l2.localShape(0), (std::vector<int64_t>{1, 2})); // A reduction contributes 1.
  EXPECT_EQ(l2.slots(0), (Slots{0, 1}));
}

TEST(LayoutShape, ZeroDimTensorHasOneElementInOneSlot) {
  FusionBuilder b;
  TensorNum t = b.tensor(std::vector<IdNum>{}, mesh1d({0, 1}));
  TensorLayout l = layoutOf(b, t);
  EXPECT_TRUE(l.shape().empty());
  EXPECT_EQ(l.elementCount(), 1);
  EXPECT_TRUE(l.localShape(0).empty());
  EXPECT_EQ(l.slotCount(0), 1);
  EXPECT_EQ(allSlots(l), (std::map<int64_t, Slots>{{0, {0}}, {1, {0}}}));
  EXPECT_TRUE(l.indexOf(0).empty());
}

TEST(LayoutShape, IndexOfAndElementAtAreRowMajor) {
  FusionBuilder b;
  TensorNum t = b.tensor({b.iter(2), b.iter(3), b.iter(4)}, mesh1d({0}));
  TensorLayout l = layoutOf(b, t);
  EXPECT_EQ(l.indexOf(23), (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(l.indexOf(13), (std::vector<int64_t>{1, 0, 1}));
  EXPECT_EQ(l.elementAt({1, 0, 1}), 13);
  for (int64_t e = 0; e < l.elementCount(); ++e)
    EXPECT_EQ(l.elementAt(l.indexOf(e)), e);
  EXPECT_EQ(l.rootIndexOf(13), (std::vector<int64_t>{1, 0, 1})); // No root domain.
}

// --- Uneven splits and symbolic extents ------------------------------------------

TEST(LayoutUneven, ExtentSevenOverTwoDevicesPadsTheLastSlot) {
  FusionBuilder b;
  IdNum a = b.iter(7);
  auto s = b.split(a, 2, /*innerSplit=*/false, ParallelType::DIDx);
  TensorNum t = b.tensor({a}, mesh1d({0, 1}), {s.outer, s.inner});
  TensorLayout l = layoutOf(b, t);
  EXPECT_EQ(l.localShape(1), (std::vector<int64_t>{4}));
  EXPECT_EQ(allSlots(l), (std::map<int64_t, Slots>{{0, {0, 1, 2, 3}}, {1, {4, 5, 6, X}}}));
  EXPECT_EQ(l.heldCount(0), 4);
  EXPECT_EQ(l.heldCount(1), 3);
  EXPECT_EQ(l.slotCount(1), 4);
}

TEST(LayoutSymbolic, SymbolicExtentsTakeTheirBoundValues) {
  FusionBuilder b;
  IdNum a = b.iter("i0"), c = b.iter("i1");
  auto s = b.split(a, 2, /*innerSplit=*/false, ParallelType::DIDx);
  TensorNum t = b.tensor({a, c}, mesh1d({0, 1}), {s.outer, s.inner, c});
  TensorLayout l = layoutOf(b, t, {{"i0", 4}, {"i1", 3}});
  EXPECT_EQ(l.shape(), (std::vector<int64_t>{4, 3}));
  EXPECT_EQ(l.localShape(0), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(allSlots(l),
            (std::map<int64_t, Slots>{{0, {0, 1, 2, 3, 4, 5}}, {1, {6, 7, 8, 9, 10, 11}}}));

  // i0 = 5 does not divide: device 0 gets rows 0..2, device 1 rows 3..4.
  TensorLayout uneven = layoutOf(b, t, {{"i0", 5}, {"i1", 3}});
  EXPECT_EQ(uneven.localShape(1), (std::vector<int64_t>{3, 3}));
  EXPECT_EQ(uneven.slots(1), (Slots{9, 10, 11, 12, 13, 14, X, X, X}));
  EXPECT_EQ(uneven.heldCount(0), 9);
  EXPECT_EQ(uneven.heldCount(1), 6);
}

TEST(LayoutSymbolic, SymbolicSplitFactor) {
  FusionBuilder b;
  IdNum a = b.iter(6);
  auto s = b.split(a, Extent::symbol("n"), /*innerSplit=*/false, ParallelType::DIDx);
  TensorNum t = b.tensor({a}, mesh1d({0, 1, 2}), {s.outer, s.inner});
  TensorLayout l = layoutOf(b, t, {{"n", 3}});
  EXPECT_EQ(allSlots(l), (std::map<int64_t, Slots>{{0, {0, 1}}, {1, {2, 3}}, {2, {4, 5}}}));
  EXPECT_EQ(errorCode(b.fusion(), t), "unbound-symbol");
}

// --- Root domains -------------------------------------------------------------------

TEST(LayoutRoot, ReshapeMergeRunsBackwardsToRootIndices) {
  FusionBuilder b;
  IdNum ra = b.iter(4), rc = b.iter(3);
  IdNum m = b.merge(ra, rc);
  auto s = b.split(m, 2, /*innerSplit=*/false, ParallelType::DIDx);
  TensorNum t =
      b.tensor(FusionBuilder::TensorSpec{{ra, rc}, {m}, {s.outer, s.inner}, {}, mesh1d({0, 1})});
  TensorLayout l = layoutOf(b, t);
  EXPECT_EQ(l.shape(), (std::vector<int64_t>{12}));
  EXPECT_EQ(l.rootIndexOf(7), (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(l.rootIndexOf(0), (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(l.rootIndexOf(11), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(l.indexOf(7), (std::vector<int64_t>{7}));
  EXPECT_EQ(l.localShape(1), (std::vector<int64_t>{6}));
  EXPECT_EQ(l.slots(1), (Slots{6, 7, 8, 9, 10, 11}));
}

TEST(LayoutRoot, ReshapeSplitsRunBackwards) {
  FusionBuilder b;
  IdNum r = b.iter(12);
  auto s = b.split(r, 4, /*innerSplit=*/true); // {3}, {4}
  TensorNum t = b.tensor(FusionBuilder::TensorSpec{{r}, {s.outer, s.inner}, {}, {}, mesh1d({0})});
  TensorLayout l = layoutOf(b, t);
  EXPECT_EQ(l.shape(), (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(l.rootIndexOf(l.elementAt({2, 1})), (std::vector<int64_t>{9}));

  FusionBuilder b2;
  IdNum r2 = b2.iter(12);
  auto s2 = b2.split(r2, 4, /*innerSplit=*/false); // {4}, {3}
  TensorNum t2 =
      b2.tensor(FusionBuilder::TensorSpec{{r2}, {s2.outer, s2.inner}, {}, {}, mesh1d({0})});
  TensorLayout l2 = layoutOf(b2, t2);
  EXPECT_EQ(l2.shape(), (std::vector<int64_t>{4, 3}));
  EXPECT_EQ(l2.rootIndexOf(l2.elementAt({2, 1})), (std::vector<int64_t>{7}));
}

TEST(LayoutRoot, ReshapeWithABroadcastRootAxis) {
  FusionBuilder b;
  IdNum a = b.iter(4), bc = b.broadcast();
  IdNum m = b.merge(a, bc);
  TensorNum t = b.tensor(FusionBuilder::TensorSpec{{a, bc}, {m}, {}, {}, mesh1d({0})});
  TensorLayout l = layoutOf(b, t);
  EXPECT_EQ(l.shape(), (std::vector<int64_t>{4}));
  EXPECT_EQ(l.rootIndexOf(3), (std::vector<int64_t>{3, 0}));
  EXPECT_EQ(l.rootIndexOf(1), (std::vector<int64_t>{1, 0}));
}

TEST(LayoutRoot, PermuteReordersTheSameIds) {
  FusionBuilder b;
  IdNum a = b.iter(2), c = b.iter(3);
  TensorNum t = b.tensor(FusionBuilder::TensorSpec{{a, c}, {c, a}, {}, {}, mesh1d({0})});
  TensorLayout l = layoutOf(b, t);
  EXPECT_EQ(l.shape(), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(l.elementAt({2, 1}), 5);
  EXPECT_EQ(l.rootIndexOf(5), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(l.rootIndexOf(2), (std::vector<int64_t>{0, 1}));
}

TEST(LayoutRoot, UnevenReshapeSplitIsAnError) {
  FusionBuilder b;
  IdNum r = b.iter(10);
  auto s = b.split(r, 4, /*innerSplit=*/true);
  TensorNum t = b.tensor(FusionBuilder::TensorSpec{{r}, {s.outer, s.inner}, {}, {}, mesh1d({0})});
  EXPECT_EQ(errorCode(b.fusion(), t), "unsupported-layout");
}

TEST(LayoutRoot, ResizeBetweenRootAndLogicalIsAnError) {
  FusionBuilder b;
  IdNum r = b.iter(4);
  IdNum padded = b.unsupportedTransform(Transform::Kind::Resize, r);
  TensorNum t = b.tensor(FusionBuilder::TensorSpec{{r}, {padded}, {}, {}, mesh1d({0})});
  EXPECT_EQ(errorCode(b.fusion(), t), "unsupported-layout");
}

// --- Errors -------------------------------------------------------------------------

TEST(LayoutErrors, UnboundSymbolIsLocatedAtTheTensor) {
  FusionBuilder b;
  TensorNum t = b.tensor({b.iter("i0")}, mesh1d({0}));
  b.fusion().tensor(t).loc = SourceLoc{"dump.txt", 7, 3};
  try {
    TensorLayout::build(b.fusion(), t, {}, {});
    FAIL() << "expected an InputError";
  } catch (const InputError &e) {
    EXPECT_EQ(e.diagnostic().code, "unbound-symbol");
    EXPECT_EQ(e.diagnostic().loc.file, "dump.txt");
    EXPECT_EQ(e.diagnostic().loc.line, 7);
  }
  EXPECT_EQ(errorCode(b.fusion(), t, {{"i0", 3}}), "");
}

TEST(LayoutErrors, ResizeOrSwizzleInTheLoopOrAllocationDomain) {
  FusionBuilder b;
  IdNum a = b.iter(4);
  IdNum resized = b.unsupportedTransform(Transform::Kind::Resize, a);
  TensorNum t = b.tensor({a}, mesh1d({0}), {resized});
  b.fusion().tensor(t).loc = SourceLoc{"dump.txt", 12, 1};
  try {
    TensorLayout::build(b.fusion(), t, {}, {});
    FAIL() << "expected an InputError";
  } catch (const InputError &e) {
    EXPECT_EQ(e.diagnostic().code, "unsupported-layout");
    EXPECT_EQ(e.diagnostic().loc.line, 12);
    EXPECT_NE(e.diagnostic().message.find("Resize"), std::string::npos);
  }

  FusionBuilder b2;
  IdNum a2 = b2.iter(4);
  IdNum swizzled = b2.unsupportedTransform(Transform::Kind::Swizzle2D, a2);
  TensorNum t2 = b2.tensor(FusionBuilder::TensorSpec{{}, {a2}, {}, {swizzled}, mesh1d({0})});
  EXPECT_EQ(errorCode(b2.fusion(), t2), "unsupported-layout");
}

TEST(LayoutErrors, LoopIdNotDerivedFromLogical) {
  FusionBuilder b;
  IdNum a = b.iter(4);
  IdNum stray = b.iter(4, ParallelType::DIDx);
  TensorNum t = b.tensor({a}, mesh1d({0}), {stray});
  EXPECT_EQ(errorCode(b.fusion(), t), "unsupported-layout");
}

TEST(LayoutErrors, MeshProblems) {
  FusionBuilder b;
  TensorNum noMesh = b.tensor({b.iter(2, ParallelType::DIDx)}, std::nullopt);
  EXPECT_EQ(errorCode(b.fusion(), noMesh), "did-without-mesh");
  TensorNum twice = b.tensor({b.iter(2)}, mesh1d({0, 1, 1}));
  EXPECT_EQ(errorCode(b.fusion(), twice), "mesh-duplicate-device");
  IdNum a = b.iter(4);
  auto s = b.split(a, 0, /*innerSplit=*/false, ParallelType::DIDx);
  TensorNum zeroSplit = b.tensor({a}, mesh1d({0}), {s.outer, s.inner});
  EXPECT_EQ(errorCode(b.fusion(), zeroSplit), "invalid-extent");
}

// --- Size ---------------------------------------------------------------------------

// Correctness at scale only: how long it takes is a benchmark's business
// (timed assertions fail on a loaded CI machine), not a unit test's.
TEST(LayoutScale, FourMillionElementsOnEightDevices) {
  FusionBuilder b;
  IdNum r = b.iter(2048), c = b.iter(2048);
  auto s = b.split(r, 8, /*innerSplit=*/false, ParallelType::DIDx);
  TensorNum t = b.tensor({r, c}, mesh1d({0, 1, 2, 3, 4, 5, 6, 7}), {s.outer, s.inner, c});
  TensorLayout l = layoutOf(b, t);
  for (int64_t d = 0; d < 8; ++d)
    EXPECT_EQ(l.heldCount(d), 256 * 2048);
  EXPECT_EQ(l.slotOf(5, l.elementAt({5 * 256 + 3, 7})), 3 * 2048 + 7);
  EXPECT_EQ(l.slots(7).back(), 2048 * 2048 - 1);
}

// --- Real dumps ---------------------------------------------------------------------

namespace {

/// Symbol values satisfying the fusion's implied constraints: a DID's
/// symbolic extent is the mesh size along its axis, every other symbol 24
/// (divisible by every mesh size the corpus uses).
Bindings bindAll(const Fusion &f) {
  Bindings b;
  for (const auto &[n, tv] : f.tensors)
    for (IdNum i : tv.loop.empty() ? tv.logical : tv.loop) {
      const IterDomain &id = f.id(i);
      if (tv.mesh && id.isDeviceParallel() && id.extent.kind() == Extent::Kind::Symbol)
        b.emplace(id.extent.symbolName(), tv.mesh->extentOf(id.parallel));
    }
  std::set<std::string> symbols;
  for (const auto &[n, id] : f.ids) {
    id.extent.collectSymbols(symbols);
    if (id.expandedExtent)
      id.expandedExtent->collectSymbols(symbols);
  }
  for (const auto &t : f.transforms)
    t.factor.collectSymbols(symbols);
  // 24 where the implied constraints allow it (they can pin a symbol:
  // ceilDiv(i0, 4) == 2), else the first size from 1 up that they allow.
  std::vector<SizeConstraint> constraints;
  for (const auto &[n, tv] : f.tensors)
    for (const SizeConstraint &c : impliedConstraints(f, tv))
      constraints.push_back(c);
  auto allowed = [&](const Bindings &trial) {
    for (const SizeConstraint &c : constraints) {
      auto l = c.lhs.evaluate(trial), r = c.rhs.evaluate(trial);
      if (!l || !r)
        continue; // Not every symbol bound yet.
      bool ok = c.kind == SizeConstraint::Kind::Divisible ? *r > 0 && *l % *r == 0 : *l == *r;
      if (!ok)
        return false;
    }
    return true;
  };
  for (const auto &s : symbols) {
    if (b.count(s))
      continue;
    for (int64_t v : {24, 1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 32, 48, 64}) {
      b[s] = v;
      if (allowed(b))
        break;
    }
  }
  return b;
}

/// How many devices hold each element, if the tensor is well-formed (DIDs
/// on distinct types with extents equal to the mesh's): the mesh size over
/// the sizes of the axes its sharding IDs use. Nullopt otherwise.
std::optional<int64_t> replication(const Fusion &f, const TensorView &tv, const Bindings &b,
                                   int64_t meshlessCount) {
  if (!tv.mesh)
    return meshlessCount;
  int64_t copies = tv.mesh->size();
  std::set<ParallelType> used;
  for (IdNum n : tv.loop.empty() ? tv.logical : tv.loop) {
    const IterDomain &id = f.id(n);
    if (!id.isDeviceParallel() || id.isBroadcast() || id.isReduction())
      continue;
    if (!used.insert(id.parallel).second || id.extent.evaluate(b) != tv.mesh->extentOf(id.parallel))
      return std::nullopt;
    copies /= tv.mesh->extentOf(id.parallel);
  }
  return copies;
}

/// The number of named elements: the logical data extents, broadcasts 1.
int64_t namedCount(const Fusion &f, const TensorView &tv, const Bindings &b) {
  int64_t n = 1;
  for (IdNum id : tv.logical)
    if (!f.id(id).isReduction() && !f.id(id).isBroadcast())
      n *= *f.id(id).extent.evaluate(b);
  return n;
}

void checkInvariants(const TensorLayout &l, const std::string &what) {
  for (int64_t d : l.devices()) {
    const Slots &slots = l.slots(d);
    int64_t shapeProduct = 1;
    for (int64_t e : l.localShape(d))
      shapeProduct *= e;
    ASSERT_EQ(static_cast<int64_t>(slots.size()), l.slotCount(d)) << what;
    ASSERT_EQ(shapeProduct, l.slotCount(d)) << what;
    int64_t held = 0;
    for (int64_t t = 0; t < static_cast<int64_t>(slots.size()); ++t)
      if (slots[t] != kNoElement) {
        ++held;
        ASSERT_EQ(l.slotOf(d, slots[t]), t) << what << " device " << d;
      }
    ASSERT_EQ(held, l.heldCount(d)) << what << " device " << d;
    int64_t found = 0;
    for (int64_t e = 0; e < l.elementCount(); ++e)
      found += l.slotOf(d, e) >= 0;
    ASSERT_EQ(found, held) << what << " device " << d;
  }
}

} // namespace

TEST(LayoutCorpus, EveryTensorOfEveryDumpAddsUp) {
  namespace fs = std::filesystem;
  std::set<std::string> failures;
  int checked = 0, summed = 0;
  for (const auto &entry : fs::directory_iterator(fs::path(SHARDCHECK_SOURCE_DIR) / "corpus")) {
    if (entry.path().extension() != ".txt")
      continue;
    std::string file = entry.path().filename().string();
    Document doc = readDocumentFile(entry.path().string());
    for (const Fusion &f : doc.fusions) {
      Bindings b = bindAll(f);
      std::set<int64_t> meshDevices;
      for (const auto &[n, tv] : f.tensors)
        if (tv.mesh)
          meshDevices.insert(tv.mesh->devices().begin(), tv.mesh->devices().end());
      std::vector<int64_t> meshless(meshDevices.begin(), meshDevices.end());
      for (const auto &[n, tv] : f.tensors) {
        std::string what = file + " " + tv.name();
        std::optional<TensorLayout> l;
        try {
          l = TensorLayout::build(f, n, b, meshless);
        } catch (const InputError &e) {
          failures.insert(what + " " + e.diagnostic().code);
          continue;
        }
        ++checked;
        checkInvariants(*l, what);
        auto copies = replication(f, tv, b, static_cast<int64_t>(meshless.size()));
        if (!copies)
          continue;
        int64_t held = 0;
        for (int64_t d : l->devices())
          held += l->heldCount(d);
        EXPECT_EQ(held, namedCount(f, tv, b) * *copies) << what;
        ++summed;
      }
    }
  }
  EXPECT_EQ(failures, (std::set<std::string>{
                          "lint_did_not_in_mesh.txt T0 did-not-in-mesh",
                          "lint_did_without_mesh.txt T0 did-without-mesh",
                          "lint_mesh_duplicate_device.txt T0 mesh-duplicate-device",
                          "lint_mesh_duplicate_device.txt T1 mesh-duplicate-device",
                      }));
  EXPECT_GE(checked, 250);
  EXPECT_GE(summed, 250); // All but the tensors with lint errors on their DIDs.
}

namespace {

Fusion firstFusion(const std::string &name) {
  Document doc = readDocumentFile(std::string(SHARDCHECK_SOURCE_DIR) + "/corpus/" + name);
  return doc.fusions.at(0);
}

} // namespace

TEST(LayoutCorpus, UnevenDumpHoldsTwelveAndNineElements) {
  Fusion f = firstFusion("uneven_sharding_extent7.txt");
  TensorLayout l = TensorLayout::build(f, 0, {}, {});
  EXPECT_EQ(l.localShape(0), (std::vector<int64_t>{4, 3}));
  EXPECT_EQ(l.heldCount(0), 12);
  EXPECT_EQ(l.heldCount(1), 9);
  EXPECT_EQ(l.slots(1), (Slots{12, 13, 14, 15, 16, 17, 18, 19, 20, X, X, X}));
}

TEST(LayoutCorpus, ReshapeMergeDumpKeepsOwners) {
  Fusion f = firstFusion("op_reshape_merge_2026.txt");
  TensorLayout t0 = TensorLayout::build(f, 0, {}, {});
  TensorLayout t1 = TensorLayout::build(f, 1, {}, {});
  // T1 element m comes from T0's (m div 3, m mod 3); both live on m div 6.
  for (int64_t m = 0; m < 12; ++m) {
    std::vector<int64_t> root = t1.rootIndexOf(m);
    ASSERT_EQ(root, (std::vector<int64_t>{m / 3, m % 3}));
    int64_t owner = m / 6;
    EXPECT_GE(t1.slotOf(owner, m), 0);
    EXPECT_EQ(t1.slotOf(1 - owner, m), -1);
    EXPECT_GE(t0.slotOf(owner, t0.elementAt(root)), 0);
  }
  EXPECT_EQ(t0.localShape(0), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(t1.localShape(0), (std::vector<int64_t>{6}));
}

TEST(LayoutCorpus, ViewSplitDumpUsesItsAllocationDomain) {
  Fusion f = firstFusion("op_view_split_sharded_axis.txt");
  TensorLayout t1 = TensorLayout::build(f, 1, {}, {});
  EXPECT_EQ(t1.shape(), (std::vector<int64_t>{2, 3, 24, 4}));
  EXPECT_EQ(t1.localShape(1), (std::vector<int64_t>{1, 2, 3, 12, 4}));
  int64_t e = t1.elementAt({1, 2, 13, 3});
  EXPECT_EQ(t1.rootIndexOf(e), (std::vector<int64_t>{1, 2, 55}));
  EXPECT_EQ(t1.slotOf(0, e), -1);
  EXPECT_EQ(t1.slotOf(1, e), 247); // (b, s, j - 12, e') = (1, 2, 1, 3) over [2, 3, 12, 4].
  EXPECT_EQ(t1.heldCount(0), 288);
}

// --- Chunked splits (docs/semantics.md, Chunked splits) ---------------------------

TEST(LayoutChunked, ThreeLevelsChunkTheRowsEachLevelHolds) {
  // [7] by 2 (4, 3 rows), each by 2 chunked (2, 2 | 2, 1), each by 2 chunked
  // again (1, 1 | 1, 1 | 1, 1 | 1, 0): device (a, b, c) holds one row but the last.
  FusionBuilder b;
  IdNum r = b.iter(7);
  auto sz = b.split(r, 2, /*innerSplit=*/false, ParallelType::DIDz);
  auto sy = b.chunkedSplit(sz.inner, 2, ParallelType::DIDy);
  auto sx = b.chunkedSplit(sy.inner, 2, ParallelType::DIDx);
  std::vector<int64_t> devices(8);
  std::iota(devices.begin(), devices.end(), 0);
  TensorNum t = b.tensor({{},
                          {r},
                          {sz.outer, sy.outer, sx.outer, sx.inner},
                          {},
                          DeviceMesh::create({2, 2, 2}, devices)});
  TensorLayout l = layoutOf(b, t);
  EXPECT_EQ(l.localShape(0), (std::vector<int64_t>{1}));
  std::map<int64_t, Slots> expected;
  for (int64_t d = 0; d < 8; ++d)
    expected[d] = {d < 7 ? d : X};
  EXPECT_EQ(allSlots(l), expected);
}

TEST(LayoutChunked, ShortOuterChunkHoldsMorePadding) {
  FusionBuilder b;
  IdNum r = b.iter(5);
  auto sy = b.split(r, 2, /*innerSplit=*/false, ParallelType::DIDy);
  auto sx = b.chunkedSplit(sy.inner, 2, ParallelType::DIDx);
  TensorNum t = b.tensor(
      {{}, {r}, {sy.outer, sx.outer, sx.inner}, {}, DeviceMesh::create({2, 2}, {0, 1, 2, 3})});
  TensorLayout l = layoutOf(b, t);
  EXPECT_EQ(allSlots(l),
            (std::map<int64_t, Slots>{{0, {0, 1}}, {1, {2, X}}, {2, {3, X}}, {3, {4, X}}}));
}

TEST(LayoutChunked, SymbolicExtentIsALocatedError) {
  FusionBuilder b;
  IdNum r = b.iter(Extent::symbol("i0"));
  auto sy = b.split(r, 2, /*innerSplit=*/false, ParallelType::DIDy);
  auto sx = b.split(sy.inner, 2, /*innerSplit=*/false, ParallelType::DIDx);
  TensorNum t = b.tensor(
      {{}, {r}, {sy.outer, sx.outer, sx.inner}, {}, DeviceMesh::create({2, 2}, {0, 1, 2, 3})});
  Fusion f = b.take();
  f.transforms[*f.id(sx.outer).definition].chunked = true;
  EXPECT_EQ(errorCode(f, t, {{"i0", 5}}), "unsupported-layout");
}
