// Tests of the brute-force evaluator (checker/bruteforce) on hand-computed
// cases: the seed's repros, each collective kind correct and incorrect, counts,
// reductions' exact-once rule, 2-D meshes, uneven splits, symbolic extents,
// unsupported constructs, and the random edge generator's basic guarantees.
//
// Every expected value here was computed by hand from docs/semantics.md; the
// comments show the arithmetic. Not covered here: agreement with the SMT
// checker (that is the cross-check suite's job).
#include "checker/bruteforce/BruteForce.h"
#include "checker/bruteforce/RandomEdges.h"
#include "dtensor/DTensorInput.h"
#include "ir/FusionBuilder.h"
#include "tests/TestPaths.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

namespace shardcheck::bruteforce {
namespace {

constexpr ParallelType kSerial = ParallelType::Serial;
constexpr ParallelType kDIDx = ParallelType::DIDx;
constexpr ParallelType kDIDy = ParallelType::DIDy;

DeviceMesh mesh(std::vector<int64_t> devices) {
  return DeviceMesh::linear(std::move(devices));
}

/// A lowering whose every team has `root`.
Lowering lowering(CommKind kind, std::vector<std::vector<int64_t>> teams,
                  std::optional<int64_t> root = std::nullopt, bool localPermute = false) {
  Lowering l;
  l.kind = kind;
  l.localPermute = localPermute;
  for (auto &devices : teams)
    l.teams.push_back(Team{std::move(devices), root, {}});
  return l;
}

Lowering sendRecv(std::vector<std::pair<int64_t, int64_t>> pairs) {
  Lowering l;
  l.kind = CommKind::SendRecv;
  l.teams.push_back(Team{{}, std::nullopt, std::move(pairs)});
  return l;
}

ConcreteTensor concrete(const FusionBuilder &b, TensorNum t, const Bindings &bindings = {},
                        ElementBasis basis = ElementBasis::Logical) {
  auto built = ConcreteTensor::build(b.fusion(), t, bindings, basis);
  if (auto *failed = std::get_if<BruteResult>(&built))
    ADD_FAILURE() << "model of T" << t << " failed: " << failed->reason;
  return std::get<ConcreteTensor>(std::move(built));
}

BruteResult needsNone(const FusionBuilder &b, TensorNum p, TensorNum c,
                      const Bindings &bindings = {}) {
  return bruteNeedsNoCommunication(b.fusion(), b.edge(p, c), bindings);
}

BruteResult check(const FusionBuilder &b, TensorNum p, TensorNum c, const Lowering &l,
                  const Bindings &bindings = {}) {
  return bruteCheckLowering(b.fusion(), b.edge(p, c), bindings, l);
}

std::string messageOf(const BruteResult &r) {
  return r.counterexample ? r.counterexample->message : "(no counterexample: " + r.reason + ")";
}

/// A 1-D tensor [E] on `m`: replicated, DIDx on the logical ID, or outer-split
/// by the mesh size with DIDx on the outer part.
enum class Shard { None, Logical, Split };
TensorNum vector1d(FusionBuilder &b, Extent extent, Shard shard, const DeviceMesh &m) {
  IdNum id = b.iter(extent, shard == Shard::Logical ? kDIDx : kSerial);
  std::vector<IdNum> loop{id};
  if (shard == Shard::Split) {
    auto s = b.split(id, m.size(), /*innerSplit=*/false, kDIDx);
    loop = {s.outer, s.inner};
  }
  return b.tensor({{}, {id}, loop, {}, m});
}

TEST(BruteForceLayout, NestedShardingKeepsTheInnermostPartInOrder) {
  // Rows split by DIDy, the local half again by DIDx, no allocation domain:
  // device (y, x) holds rows y*4 + x*2 and y*4 + x*2 + 1 at offsets 0 and 1
  // (docs/semantics.md, Local buffer layout), whatever the loop order.
  FusionBuilder b;
  IdNum r = b.iter(8);
  auto sy = b.split(r, 2, /*innerSplit=*/false, kDIDy);
  auto sx = b.split(sy.inner, 2, /*innerSplit=*/false, kDIDx);
  TensorNum t = b.tensor(
      {{}, {r}, {sx.outer, sy.outer, sx.inner}, {}, DeviceMesh::create({2, 2}, {0, 1, 2, 3})});
  auto c = concrete(b, t);
  EXPECT_EQ(c.layoutExtents(), (std::vector<int64_t>{2}));
  for (int64_t device = 0; device < 4; ++device) {
    EXPECT_EQ(c.heldBy(device), (std::vector<int64_t>{2 * device, 2 * device + 1}));
    EXPECT_EQ(c.offsetOf(2 * device), 0);
    EXPECT_EQ(c.offsetOf(2 * device + 1), 1);
  }
}

// --- The seed: a Set between bDIDx{1} and b{1} (and back). ---

struct SeedSet {
  FusionBuilder b;
  TensorNum y = 0, z = 0;
  SeedSet(ParallelType producer, ParallelType consumer) {
    y = b.tensor({{}, {b.broadcast(producer)}, {}, {}, mesh({0, 1})});
    z = b.tensor({{}, {b.broadcast(consumer)}, {}, {}, mesh({0, 1})});
    b.set(y, z);
  }
};

TEST(BruteForceSeed, BroadcastDidToBroadcastNeedsNoCommunication) {
  SeedSet s(kDIDx, kSerial);
  EXPECT_TRUE(needsNone(s.b, s.y, s.z).holds());
  SeedSet back(kSerial, kDIDx);
  EXPECT_TRUE(needsNone(back.b, back.y, back.z).holds());
}

TEST(BruteForceSeed, AliasHolds) {
  SeedSet s(kDIDx, kSerial);
  auto r = check(s.b, s.y, s.z, lowering(CommKind::Alias, {}));
  EXPECT_TRUE(r.holds()) << messageOf(r);
  // Each device holds the single element: counts 1 and 1.
  auto y = concrete(s.b, s.y);
  EXPECT_EQ(y.count(0), 1);
  EXPECT_EQ(y.count(1), 1);
  EXPECT_TRUE(y.shardingIds().empty()); // bDIDx is vacuous.
}

TEST(BruteForceSeed, AllgatherFailsOnElementCount) {
  SeedSet s(kDIDx, kSerial);
  auto r = check(s.b, s.y, s.z, lowering(CommKind::Allgather, {{0, 1}}));
  ASSERT_TRUE(r.fails());
  // 2 devices x 1 element each = 2, but the output holds 1.
  EXPECT_EQ(r.counterexample->message,
            "Allgather over team (0 1) needs an output of 2 x 1 elements but T1 holds 1 on each "
            "device");
  EXPECT_EQ(r.counterexample->device, 0);
}

TEST(BruteForceSeed, ScatterFailsOnElementCount) {
  SeedSet s(kSerial, kDIDx);
  auto r = check(s.b, s.y, s.z, lowering(CommKind::Scatter, {{0, 1}}, 0));
  ASSERT_TRUE(r.fails());
  // Outputs hold 1 each, so the root's input must hold 2 x 1; it holds 1.
  EXPECT_EQ(r.counterexample->message, "Scatter over team (0 1) from root 0 needs an input of 2 x "
                                       "1 elements on the root but T0 holds 1 on device 0");
}

TEST(BruteForceSeed, AddWithBroadcastEdgesNeedNoCommunication) {
  for (bool shardX : {false, true}) {
    FusionBuilder b;
    auto m = mesh({0, 1});
    TensorNum x = vector1d(b, Extent::constant(2), shardX ? Shard::Logical : Shard::None, m);
    TensorNum y = b.tensor({{}, {b.broadcast(shardX ? kSerial : kDIDx)}, {}, {}, m});
    TensorNum z = vector1d(b, Extent::constant(2), shardX ? Shard::Logical : Shard::None, m);
    b.expr(OpKind::Binary, "+", {x, y}, z);
    EXPECT_TRUE(needsNone(b, x, z).holds()) << "shardX=" << shardX;
    EXPECT_TRUE(needsNone(b, y, z).holds()) << "shardX=" << shardX;
    EXPECT_TRUE(check(b, y, z, lowering(CommKind::None, {})).holds());
  }
}

// --- Index functions, ownership, layout. ---

TEST(BruteForceTensor, OuterSplitIndicesAndOwnership) {
  FusionBuilder b;
  IdNum i = b.iter(6);
  auto s = b.split(i, 2, /*innerSplit=*/false, kDIDx); // outer{2}, inner{3}
  TensorNum t = b.tensor({{}, {i}, {s.outer, s.inner}, {}, mesh({0, 1})});
  auto c = concrete(b, t);
  EXPECT_EQ(c.extentOf(s.outer), 2);
  EXPECT_EQ(c.extentOf(s.inner), 3);
  EXPECT_EQ(c.indexOf(4, s.outer), 1); // 4 div 3
  EXPECT_EQ(c.indexOf(4, s.inner), 1); // 4 mod 3
  EXPECT_EQ(c.holders(4), (std::vector<int64_t>{1}));
  EXPECT_EQ(c.heldBy(0), (std::vector<int64_t>{0, 1, 2}));
  // Implicit layout: the inner part; dense offsets 0..2 on each device.
  EXPECT_EQ(c.layoutIds(), (std::vector<IdNum>{s.inner}));
  ASSERT_EQ(c.buffer(1).size(), 3u);
  EXPECT_EQ(c.buffer(1)[0].element, 3);
  EXPECT_EQ(c.elementAtOffset(1, 2), 5);
}

TEST(BruteForceTensor, InnerSplitAndMergeIndices) {
  FusionBuilder b;
  IdNum a = b.iter(2), c = b.iter(3);
  IdNum m = b.merge(a, c);                              // {6}
  auto s = b.split(m, 4, /*innerSplit=*/true, kSerial); // outer{2}, inner{4}
  TensorNum t = b.tensor({{}, {a, c}, {s.outer, s.inner}, {}, mesh({0})});
  auto model = concrete(b, t);
  int64_t element = *model.elementAt({1, 2});
  EXPECT_EQ(model.indexOf(element, m), 5);       // 1 * 3 + 2
  EXPECT_EQ(model.indexOf(element, s.outer), 1); // 5 div 4
  EXPECT_EQ(model.indexOf(element, s.inner), 1); // 5 mod 4
  EXPECT_EQ(model.extentOf(s.outer), 2);         // ceilDiv(6, 4)
}

TEST(BruteForceTensor, TwoDimensionalMeshCoordinates) {
  FusionBuilder b;
  auto m = DeviceMesh::create({2, 3}, {0, 1, 2, 3, 4, 5});
  // DIDy indexes the first mesh axis, DIDx the last.
  TensorNum t = b.tensor({{}, {b.iter(2, kDIDy), b.iter(3, kDIDx)}, {}, {}, m});
  auto c = concrete(b, t);
  EXPECT_EQ(c.heldBy(4), (std::vector<int64_t>{*c.elementAt({1, 1})})); // coords [1, 1]
  EXPECT_EQ(c.heldBy(2), (std::vector<int64_t>{*c.elementAt({0, 2})})); // coords [0, 2]
  EXPECT_EQ(c.holders(*c.elementAt({1, 0})), (std::vector<int64_t>{3}));
}

TEST(BruteForceTensor, AllocationDomainPermutesOffsets) {
  FusionBuilder b;
  IdNum i = b.iter(2), j = b.iter(3);
  TensorNum t = b.tensor({{}, {i, j}, {}, {j, i}, mesh({0})});
  auto c = concrete(b, t);
  // offset(i, j) = j * 2 + i.
  EXPECT_EQ(c.offsetOf(*c.elementAt({1, 0})), 1);
  EXPECT_EQ(c.offsetOf(*c.elementAt({0, 2})), 4);
}

TEST(BruteForceTensor, RootBasisEnumeratesByRoot) {
  FusionBuilder b;
  IdNum r = b.iter(6);
  auto s = b.split(r, 3, /*innerSplit=*/true, kSerial); // logical [o{2}, i{3}]
  TensorNum t = b.tensor({{r}, {s.outer, s.inner}, {}, {}, mesh({0})});
  auto c = concrete(b, t, {}, ElementBasis::Root);
  EXPECT_EQ(c.elementIds(), (std::vector<IdNum>{r}));
  EXPECT_EQ(c.logicalIndex(4), (Coords{1, 1})); // 4 div 3, 4 mod 3
}

// --- Allgather. ---

TEST(BruteForceAllgather, CorrectOnTwoDevices) {
  FusionBuilder b;
  auto m = mesh({0, 1});
  TensorNum p = vector1d(b, Extent::constant(2), Shard::Logical, m);
  TensorNum c = vector1d(b, Extent::constant(2), Shard::None, m);
  b.set(p, c);
  auto r = check(b, p, c, lowering(CommKind::Allgather, {{0, 1}}));
  EXPECT_TRUE(r.holds()) << messageOf(r);
}

TEST(BruteForceAllgather, CorrectOnFourDevicesWithSplit) {
  FusionBuilder b;
  auto m = mesh({0, 1, 2, 3});
  TensorNum p = vector1d(b, Extent::constant(8), Shard::Split, m); // 2 per device
  TensorNum c = vector1d(b, Extent::constant(8), Shard::None, m);
  b.set(p, c);
  auto r = check(b, p, c, lowering(CommKind::Allgather, {{0, 1, 2, 3}}));
  EXPECT_TRUE(r.holds()) << messageOf(r);
  // Team order matters: rank 0 must be device 0.
  auto wrong = check(b, p, c, lowering(CommKind::Allgather, {{1, 0, 2, 3}}));
  ASSERT_TRUE(wrong.fails());
  EXPECT_EQ(wrong.counterexample->offset, 0);
}

TEST(BruteForceAllgather, NeedsCommunicationCounterexample) {
  FusionBuilder b;
  auto m = mesh({0, 1});
  TensorNum p = vector1d(b, Extent::constant(2), Shard::Logical, m);
  TensorNum c = vector1d(b, Extent::constant(2), Shard::None, m);
  b.set(p, c);
  auto r = needsNone(b, p, c);
  ASSERT_TRUE(r.fails());
  const auto &cex = *r.counterexample;
  EXPECT_EQ(cex.device, 0);
  EXPECT_EQ(cex.consumerIndex, (std::vector<int64_t>{1}));
  EXPECT_EQ(cex.producerIndex, (std::vector<int64_t>{1}));
  EXPECT_EQ(cex.holders, (std::vector<int64_t>{1}));
  EXPECT_EQ(cex.message, "device 0 holds T1[1] but lacks T0[1], which it needs (held by 1)");
  EXPECT_TRUE(check(b, p, c, lowering(CommKind::None, {})).fails());
}

/// P [iDIDx{2}, i{3}] -> C [i{2}, i{3}] with C allocated [j, i].
struct GatheredAxisInner {
  FusionBuilder b;
  TensorNum p = 0, c = 0;
  GatheredAxisInner() {
    auto m = mesh({0, 1});
    p = b.tensor({{}, {b.iter(2, kDIDx), b.iter(3)}, {}, {}, m});
    IdNum i = b.iter(2), j = b.iter(3);
    c = b.tensor({{}, {i, j}, {}, {j, i}, m});
    b.set(p, c);
  }
};

TEST(BruteForceAllgather, WrongWhenGatheredAxisIsNotOutermost) {
  GatheredAxisInner g;
  auto r = check(g.b, g.p, g.c, lowering(CommKind::Allgather, {{0, 1}}));
  ASSERT_TRUE(r.fails());
  // Offset 1 of C is (1, 0) (offset = j * 2 + i); Allgather puts device 0's
  // element at offset 1 there, which is (0, 1).
  EXPECT_EQ(r.counterexample->message, "Allgather over team (0 1) delivers T0[0, 1] to offset 1 "
                                       "of T1 on device 0, which expects T0[1, 0]");
  EXPECT_EQ(r.counterexample->offset, 1);
  EXPECT_EQ(r.counterexample->consumerIndex, (std::vector<int64_t>{1, 0}));
}

TEST(BruteForceAllgather, CorrectWithLocalPermute) {
  GatheredAxisInner g;
  auto r = check(g.b, g.p, g.c, lowering(CommKind::Allgather, {{0, 1}}, std::nullopt, true));
  EXPECT_TRUE(r.holds()) << messageOf(r);
}

TEST(BruteForceAllgather, DeviceOutsideEveryTeamMustHoldWhatItNeeds) {
  FusionBuilder b;
  TensorNum p = vector1d(b, Extent::constant(2), Shard::Logical, mesh({0, 1}));
  TensorNum c = vector1d(b, Extent::constant(2), Shard::None, mesh({0, 1, 2}));
  b.set(p, c);
  auto r = check(b, p, c, lowering(CommKind::Allgather, {{0, 1}}));
  ASSERT_TRUE(r.fails());
  EXPECT_EQ(r.counterexample->device, 2);
  EXPECT_EQ(r.counterexample->message, "device 2 receives nothing from the Allgather and lacks "
                                       "T0[0], which T1[0] at offset 0 needs (held by 0)");
}

TEST(BruteForceAllgather, UnevenSplitCountsDiffer) {
  FusionBuilder b;
  auto m = mesh({0, 1});
  TensorNum p = vector1d(b, Extent::constant(5), Shard::Split, m); // inner ceilDiv(5,2)=3
  TensorNum c = vector1d(b, Extent::constant(5), Shard::None, m);
  b.set(p, c);
  auto model = concrete(b, p);
  EXPECT_EQ(model.count(0), 3); // 0, 1, 2
  EXPECT_EQ(model.count(1), 2); // 3, 4; index 5 is padding
  auto r = check(b, p, c, lowering(CommKind::Allgather, {{0, 1}}));
  ASSERT_TRUE(r.fails());
  EXPECT_EQ(r.counterexample->message, "Allgather over team (0 1) needs inputs of equal size but "
                                       "T0 holds 3 on device 0 and 2 on device 1");
}

TEST(BruteForceAllgather, PaddedGatherOfUnevenSplitHolds) {
  FusionBuilder b;
  auto m = mesh({0, 1});
  TensorNum p = vector1d(b, Extent::constant(5), Shard::Split, m);
  TensorNum c = vector1d(b, Extent::constant(5), Shard::None, m);
  b.set(p, c);
  Lowering l = *paddedLowering(lowering(CommKind::Allgather, {{0, 1}}));
  EXPECT_TRUE(check(b, p, c, l).holds());
  Lowering alone = *paddedLowering(lowering(CommKind::Allgather, {{0}, {1}}));
  auto r = check(b, p, c, alone);
  ASSERT_TRUE(r.fails());
  EXPECT_EQ(r.counterexample->message,
            "no member of Allgather+pad over team (0) has T0[3] in its padded buffer, which T1[3] "
            "at offset 3 on device 0 needs (held by 1)");
}

TEST(BruteForceAllgather, RowWiseOnTwoDimensionalMesh) {
  FusionBuilder b;
  auto m = DeviceMesh::create({2, 2}, {0, 1, 2, 3});
  IdNum a = b.iter(2, kDIDy), x = b.iter(4);
  auto s = b.split(x, 2, /*innerSplit=*/false, kDIDx);
  TensorNum p = b.tensor({{}, {a, x}, {a, s.outer, s.inner}, {}, m});
  TensorNum c = b.tensor({{}, {b.iter(2, kDIDy), b.iter(4)}, {}, {}, m});
  b.set(p, c);
  // Rows share the DIDy coordinate: (0 1) and (2 3).
  auto rows = check(b, p, c, lowering(CommKind::Allgather, {{0, 1}, {2, 3}}));
  EXPECT_TRUE(rows.holds()) << messageOf(rows);
  // Columns gather across DIDy: device 0 receives (1, 0) at offset 2, needs (0, 2).
  auto columns = check(b, p, c, lowering(CommKind::Allgather, {{0, 2}, {1, 3}}));
  ASSERT_TRUE(columns.fails());
  EXPECT_EQ(columns.counterexample->device, 0);
  EXPECT_EQ(columns.counterexample->offset, 2);
}

TEST(BruteForceAllgather, SymbolicExtentUnderBindings) {
  FusionBuilder b;
  auto m = mesh({0, 1});
  TensorNum p = vector1d(b, Extent::symbol("i0"), Shard::Split, m);
  TensorNum c = vector1d(b, Extent::symbol("i0"), Shard::None, m);
  b.set(p, c);
  auto l = lowering(CommKind::Allgather, {{0, 1}});
  EXPECT_TRUE(check(b, p, c, l, {{"i0", 6}}).holds());
  EXPECT_TRUE(check(b, p, c, l, {{"i0", 2}}).holds());
  // 5 mod 2 != 0 violates the implied constraint of the device split.
  auto odd = check(b, p, c, l, {{"i0", 5}});
  EXPECT_EQ(odd.outcome, BruteOutcome::InvalidBindings);
  EXPECT_NE(odd.reason.find("implied constraint"), std::string::npos) << odd.reason;
  EXPECT_EQ(check(b, p, c, l, {}).outcome, BruteOutcome::InvalidBindings);
  EXPECT_EQ(check(b, p, c, l, {{"i0", 0}}).outcome, BruteOutcome::InvalidBindings);
}

// --- Scatter, Broadcast, Gather, SendRecv, AllToAll. ---

TEST(BruteForceScatter, FromSingleDeviceMesh) {
  FusionBuilder b;
  TensorNum p = vector1d(b, Extent::constant(4), Shard::None, mesh({0}));
  TensorNum c = vector1d(b, Extent::constant(4), Shard::Split, mesh({0, 1}));
  b.set(p, c);
  auto r = check(b, p, c, lowering(CommKind::Scatter, {{0, 1}}, 0));
  EXPECT_TRUE(r.holds()) << messageOf(r);
  EXPECT_TRUE(needsNone(b, p, c).fails()); // Device 1 holds nothing of T0.
}

TEST(BruteForceScatter, RootOutsideTheTeamAndTheConsumerMesh) {
  FusionBuilder b;
  TensorNum p = vector1d(b, Extent::constant(4), Shard::None, mesh({0}));
  TensorNum c = vector1d(b, Extent::constant(4), Shard::Split, mesh({1, 2}));
  b.set(p, c);
  auto r = check(b, p, c, lowering(CommKind::Scatter, {{1, 2}}, 0));
  EXPECT_TRUE(r.holds()) << messageOf(r);
}

TEST(BruteForceScatter, ReplicatedProducerOnSameMeshNeedsNoCommunication) {
  FusionBuilder b;
  auto m = mesh({0, 1});
  TensorNum p = vector1d(b, Extent::constant(4), Shard::None, m);
  TensorNum c = vector1d(b, Extent::constant(4), Shard::Split, m);
  b.set(p, c);
  EXPECT_TRUE(needsNone(b, p, c).holds());
  EXPECT_TRUE(check(b, p, c, lowering(CommKind::None, {})).holds());
  // Alias would need equal counts: 2 vs 4.
  EXPECT_TRUE(check(b, p, c, lowering(CommKind::Alias, {})).fails());
}

TEST(BruteForceBroadcast, ToAnotherMesh) {
  FusionBuilder b;
  TensorNum p = vector1d(b, Extent::constant(3), Shard::None, mesh({0}));
  TensorNum c = vector1d(b, Extent::constant(3), Shard::None, mesh({1, 2}));
  b.set(p, c);
  EXPECT_TRUE(check(b, p, c, lowering(CommKind::Broadcast, {{1, 2}}, 0)).holds());
  // The root may join the team; outside the consumer's mesh it only sends.
  EXPECT_TRUE(check(b, p, c, lowering(CommKind::Broadcast, {{1, 2, 0}}, 0)).holds());
  // Rooted at a device that holds nothing of T0: the counts differ (0 vs 3).
  EXPECT_TRUE(check(b, p, c, lowering(CommKind::Broadcast, {{1, 2}}, 1)).fails());
}

TEST(BruteForceGather, ToSingleDeviceMesh) {
  FusionBuilder b;
  auto m = mesh({0, 1});
  TensorNum p = b.tensor({{}, {b.iter(2, kDIDx), b.iter(3)}, {}, {}, m});
  TensorNum c = b.tensor({{}, {b.iter(2), b.iter(3)}, {}, {}, mesh({0})});
  b.set(p, c);
  auto r = check(b, p, c, lowering(CommKind::Gather, {{0, 1}}, 0));
  EXPECT_TRUE(r.holds()) << messageOf(r);
  // Rooted at 1, device 0 of the consumer receives nothing and lacks (1, 0).
  auto wrongRoot = check(b, p, c, lowering(CommKind::Gather, {{0, 1}}, 1));
  ASSERT_TRUE(wrongRoot.fails());
  EXPECT_EQ(wrongRoot.counterexample->device, 1); // counts: root 1 holds no T1
}

TEST(BruteForceSendRecv, PairsBetweenMeshes) {
  FusionBuilder b;
  TensorNum p = vector1d(b, Extent::constant(2), Shard::Logical, mesh({0, 1}));
  TensorNum c = vector1d(b, Extent::constant(2), Shard::Logical, mesh({2, 3}));
  b.set(p, c);
  EXPECT_TRUE(check(b, p, c, sendRecv({{0, 2}, {1, 3}})).holds());
  auto swapped = check(b, p, c, sendRecv({{0, 3}, {1, 2}}));
  ASSERT_TRUE(swapped.fails());
  EXPECT_EQ(swapped.counterexample->message, "SendRecv delivers T0[1] to offset 0 of T1 on device "
                                             "2, which expects T0[0]");
}

TEST(BruteForceAllToAll, MovesTheShardedAxis) {
  FusionBuilder b;
  auto m = mesh({0, 1});
  TensorNum p = b.tensor({{}, {b.iter(2, kDIDx), b.iter(2)}, {}, {}, m});
  TensorNum c = b.tensor({{}, {b.iter(2), b.iter(2, kDIDx)}, {}, {}, m});
  b.set(p, c);
  // k = 1: out_d[t] = in_t[d] = P(t, d), which is C's element at offset t.
  auto r = check(b, p, c, lowering(CommKind::AllToAll, {{0, 1}}));
  EXPECT_TRUE(r.holds()) << messageOf(r);
  auto allgather = check(b, p, c, lowering(CommKind::Allgather, {{0, 1}}));
  EXPECT_TRUE(allgather.fails()); // Needs 2 x 2 outputs; T1 holds 2.
}

// --- Reductions. ---

/// P [i{2} (sharded or not), i{W}] -> sum over axis 0 -> C [r{2}, i{W}].
struct SumOverAxis0 {
  FusionBuilder b;
  TensorNum p = 0, c = 0;
  SumOverAxis0(bool shardProducer, Shard consumerShard, int64_t width,
               const DeviceMesh &producerMesh, const DeviceMesh &consumerMesh) {
    p = b.tensor(
        {{}, {b.iter(2, shardProducer ? kDIDx : kSerial), b.iter(width)}, {}, {}, producerMesh});
    IdNum r = b.reduction(2), w = b.iter(width);
    std::vector<IdNum> loop{r, w};
    if (consumerShard == Shard::Split) {
      auto s = b.split(w, consumerMesh.size(), /*innerSplit=*/false, kDIDx);
      loop = {r, s.outer, s.inner};
    }
    c = b.tensor({{}, {r, w}, loop, {}, consumerMesh});
    b.expr(OpKind::Reduction, "reduction", {p}, c);
  }
};

TEST(BruteForceReduction, AllreduceOverShardedAxis) {
  SumOverAxis0 s(true, Shard::None, 3, mesh({0, 1}), mesh({0, 1}));
  auto model = EdgeModel::build(s.b.fusion(), s.b.edge(s.p, s.c), {});
  ASSERT_TRUE(std::holds_alternative<EdgeModel>(model));
  EXPECT_TRUE(std::get<EdgeModel>(model).isReductionEdge());
  EXPECT_EQ(std::get<EdgeModel>(model).needs(1), (std::vector<int64_t>{1, 4})); // (0,1), (1,1)
  auto r = check(s.b, s.p, s.c, lowering(CommKind::Allreduce, {{0, 1}}));
  EXPECT_TRUE(r.holds()) << messageOf(r);
  EXPECT_TRUE(needsNone(s.b, s.p, s.c).fails());
}

TEST(BruteForceReduction, AllreduceDoubleCountsReplicatedProducer) {
  SumOverAxis0 s(false, Shard::None, 3, mesh({0, 1}), mesh({0, 1}));
  auto r = check(s.b, s.p, s.c, lowering(CommKind::Allreduce, {{0, 1}}));
  ASSERT_TRUE(r.fails());
  EXPECT_EQ(r.counterexample->message, "Allreduce over team (0 1) counts T0[0, 0] 2 times for "
                                       "T1[0] at offset 0 on device 0 (held by 0 1)");
  EXPECT_EQ(r.counterexample->holders, (std::vector<int64_t>{0, 1}));
  // Every device holds all of T0: the local reduction is right.
  EXPECT_TRUE(check(s.b, s.p, s.c, lowering(CommKind::None, {})).holds());
}

TEST(BruteForceReduction, AllreduceMissesElementsOutsideTheTeam) {
  SumOverAxis0 s(true, Shard::None, 3, mesh({0, 1}), mesh({0, 1}));
  auto r = check(s.b, s.p, s.c, lowering(CommKind::Allreduce, {{0}, {1}}));
  ASSERT_TRUE(r.fails());
  EXPECT_EQ(r.counterexample->message, "Allreduce over team (0) misses T0[1, 0], which T1[0] at "
                                       "offset 0 on device 0 needs (held by 1)");
}

TEST(BruteForceReduction, ReduceToSingleDevice) {
  SumOverAxis0 s(true, Shard::None, 3, mesh({0, 1}), mesh({0}));
  auto r = check(s.b, s.p, s.c, lowering(CommKind::Reduce, {{0, 1}}, 0));
  EXPECT_TRUE(r.holds()) << messageOf(r);
}

TEST(BruteForceReduction, ReduceScatter) {
  SumOverAxis0 s(true, Shard::Split, 4, mesh({0, 1}), mesh({0, 1}));
  // Each device has partials for all 4 columns = 2 x 2 outputs.
  auto r = check(s.b, s.p, s.c, lowering(CommKind::ReduceScatter, {{0, 1}}));
  EXPECT_TRUE(r.holds()) << messageOf(r);
  // A replicated producer: both members hold every element, so each sum
  // counts it twice.
  SumOverAxis0 unsharded(false, Shard::Split, 4, mesh({0, 1}), mesh({0, 1}));
  auto bad =
      check(unsharded.b, unsharded.p, unsharded.c, lowering(CommKind::ReduceScatter, {{0, 1}}));
  ASSERT_TRUE(bad.fails());
  EXPECT_NE(bad.counterexample->message.find("2 times"), std::string::npos)
      << bad.counterexample->message;
}

// --- Reshape, meshes, unsupported constructs, limits. ---

TEST(BruteForceEdge, ReshapeConsumerEnumeratedByRoot) {
  FusionBuilder b;
  auto m = mesh({0, 1});
  TensorNum p = vector1d(b, Extent::constant(6), Shard::Split, m); // 3 per device
  IdNum root = b.iter(6);
  auto s = b.split(root, 3, /*innerSplit=*/true, kSerial); // logical [o{2}, i{3}]
  b.parallelize(s.outer, kDIDx);
  TensorNum c = b.tensor({{root}, {s.outer, s.inner}, {}, {}, m});
  b.expr(OpKind::Reshape, "reshape", {p}, c);
  // Element k of T1 is (k div 3, k mod 3) on device k div 3, as T0[k] is.
  EXPECT_TRUE(needsNone(b, p, c).holds());
  EXPECT_TRUE(check(b, p, c, lowering(CommKind::Alias, {})).holds());
}

TEST(BruteForceEdge, TensorWithoutMeshIsHeldEverywhere) {
  FusionBuilder b;
  TensorNum p = b.tensor({{}, {b.iter(2)}, {}, {}, std::nullopt});
  TensorNum c = vector1d(b, Extent::constant(2), Shard::Logical, mesh({0, 1}));
  b.set(p, c);
  EXPECT_TRUE(needsNone(b, p, c).holds());
  EXPECT_EQ(concrete(b, p).devices(), (std::vector<int64_t>{0, 1}));
  FusionBuilder sharded;
  TensorNum q = sharded.tensor({{}, {sharded.iter(2, kDIDx)}, {}, {}, std::nullopt});
  TensorNum d = vector1d(sharded, Extent::constant(2), Shard::None, mesh({0, 1}));
  sharded.set(q, d);
  EXPECT_EQ(needsNone(sharded, q, d).outcome, BruteOutcome::Unsupported);
}

TEST(BruteForceEdge, UnsupportedConstructs) {
  {
    FusionBuilder b; // A Resize in the loop domain.
    IdNum i = b.iter(4);
    IdNum resized = b.unsupportedTransform(Transform::Kind::Resize, i);
    TensorNum p = b.tensor({{}, {i}, {resized}, {}, mesh({0, 1})});
    TensorNum c = vector1d(b, Extent::constant(4), Shard::None, mesh({0, 1}));
    b.set(p, c);
    auto r = needsNone(b, p, c);
    EXPECT_EQ(r.outcome, BruteOutcome::Unsupported);
    EXPECT_NE(r.reason.find("Resize"), std::string::npos) << r.reason;
  }
  {
    FusionBuilder b; // DIDy on a 1-D mesh.
    TensorNum p = b.tensor({{}, {b.iter(2, kDIDy)}, {}, {}, mesh({0, 1})});
    TensorNum c = vector1d(b, Extent::constant(2), Shard::None, mesh({0, 1}));
    b.set(p, c);
    auto r = needsNone(b, p, c);
    EXPECT_EQ(r.outcome, BruteOutcome::Unsupported);
    EXPECT_NE(r.reason.find("no axis"), std::string::npos) << r.reason;
  }
  {
    FusionBuilder b; // A loop ID not derived from logical.
    TensorNum p = b.tensor({{}, {b.iter(2)}, {b.iter(2, kDIDx)}, {}, mesh({0, 1})});
    TensorNum c = vector1d(b, Extent::constant(2), Shard::None, mesh({0, 1}));
    b.set(p, c);
    auto r = needsNone(b, p, c);
    EXPECT_EQ(r.outcome, BruteOutcome::Unsupported);
    EXPECT_NE(r.reason.find("not derived"), std::string::npos) << r.reason;
  }
  {
    FusionBuilder b; // Ranks that do not fit the op: the domain map says so.
    TensorNum p = b.tensor({{}, {b.iter(2), b.iter(2)}, {}, {}, mesh({0})});
    TensorNum c = vector1d(b, Extent::constant(2), Shard::None, mesh({0}));
    b.set(p, c);
    EXPECT_EQ(needsNone(b, p, c).outcome, BruteOutcome::Unsupported);
  }
}

TEST(BruteForceEdge, TooLargeIsUnsupportedNotSlow) {
  FusionBuilder b;
  auto m = mesh({0, 1});
  TensorNum p = b.tensor({{}, {b.iter(2048), b.iter(1024)}, {}, {}, m});
  TensorNum c = b.tensor({{}, {b.iter(2048), b.iter(1024)}, {}, {}, m});
  b.set(p, c);
  auto r = needsNone(b, p, c);
  EXPECT_EQ(r.outcome, BruteOutcome::Unsupported);
  EXPECT_NE(r.reason.find("too large"), std::string::npos) << r.reason;
}

TEST(BruteForceEdge, MalformedTeamsFail) {
  FusionBuilder b;
  auto m = mesh({0, 1});
  TensorNum p = vector1d(b, Extent::constant(2), Shard::Logical, m);
  TensorNum c = vector1d(b, Extent::constant(2), Shard::None, m);
  b.set(p, c);
  auto r = check(b, p, c, lowering(CommKind::Allgather, {{0, 1}, {1}}));
  ASSERT_TRUE(r.fails());
  EXPECT_NE(r.counterexample->message.find("malformed"), std::string::npos);
}

// --- The random edge generator. ---

TEST(RandomEdges, DeterministicForASeed) {
  RandomEdgeGenerator a(42), b(42), c(43);
  bool differs = false;
  for (int i = 0; i < 20; ++i) {
    auto x = a.next(), y = b.next(), z = c.next();
    EXPECT_EQ(x.description, y.description);
    EXPECT_EQ(x.lowerings.size(), y.lowerings.size());
    differs = differs || x.description != z.description;
  }
  EXPECT_TRUE(differs);
}

TEST(RandomEdges, CasesAreCheckableAndSelfConsistent) {
  RandomEdgeGenerator gen(7);
  std::map<std::string, int> holds, fails, unsupported;
  for (int i = 0; i < 300; ++i) {
    auto rc = gen.next();
    auto built = EdgeModel::build(rc.fusion, rc.edge, rc.bindings);
    if (auto *failed = std::get_if<BruteResult>(&built)) {
      // Generated bindings always satisfy the implied constraints.
      EXPECT_NE(failed->outcome, BruteOutcome::InvalidBindings) << failed->reason << "\n"
                                                                << rc.description;
      unsupported["edge"]++;
      continue;
    }
    const auto &model = std::get<EdgeModel>(built);
    auto needs = bruteNeedsNoCommunication(model);
    for (const auto &l : rc.lowerings) {
      auto r = bruteCheckLowering(model, l);
      std::string kind = commKindName(l.kind);
      (r.holds() ? holds : r.fails() ? fails : unsupported)[kind]++;
      EXPECT_NE(r.outcome, BruteOutcome::InvalidBindings) << rc.description;
      if (r.fails()) {
        EXPECT_TRUE(r.counterexample && !r.counterexample->message.empty());
      }
      // `none` is needs-no-communication, enumerated through the buffer.
      if (l.kind == CommKind::None && r.outcome != BruteOutcome::Unsupported) {
        EXPECT_EQ(r.outcome, needs.outcome) << rc.description;
      }
      // An alias moves nothing, so it can only hold without communication.
      if (l.kind == CommKind::Alias && r.holds()) {
        EXPECT_TRUE(needs.holds()) << rc.description;
      }
    }
  }
  // The generator reaches both verdicts for the main kinds.
  for (const char *kind : {"none", "alias", "Allgather", "Allreduce"}) {
    EXPECT_GT(holds[kind], 0) << kind;
    EXPECT_GT(fails[kind], 0) << kind;
  }
}

/// A forward simulation of the non-reduction collectives, written from
/// DESIGN section 3's table (sources write into destinations) rather than from
/// the evaluator's per-slot formulas. Returns nullopt when it does not apply.
/// Counts are the table's; a device of the consumer that receives nothing
/// must hold what it needs.
std::optional<bool> simulate(const EdgeModel &m, const Lowering &l) {
  const auto &p = m.producer();
  const auto &c = m.consumer();
  bool rooted = l.kind == CommKind::Scatter || l.kind == CommKind::Broadcast;
  if (l.localPermute || p.layoutError() || c.layoutError() ||
      !(l.kind == CommKind::Allgather || l.kind == CommKind::AllToAll || rooted))
    return std::nullopt;
  auto in = [&](int64_t d, int64_t offset) { return p.elementAtOffset(d, offset).value_or(-1); };
  std::map<int64_t, std::map<int64_t, int64_t>> written; // device -> offset -> element
  for (const Team &team : l.teams) {
    const auto &ds = team.devices;
    const int64_t n = static_cast<int64_t>(ds.size());
    auto isConsumerDevice = [&](int64_t d) {
      return std::count(c.devices().begin(), c.devices().end(), d) > 0;
    };
    if (l.kind == CommKind::Allgather) {
      const int64_t k = p.count(ds[0]);
      for (int64_t d : ds)
        if (p.count(d) != k || c.count(d) != n * k)
          return false;
      for (int64_t d : ds)
        for (int64_t i = 0; i < n; ++i)
          for (int64_t t = 0; t < k; ++t)
            written[d][i * k + t] = in(ds[i], t);
    } else if (l.kind == CommKind::AllToAll) {
      if (p.count(ds[0]) % n != 0)
        return false;
      const int64_t k = p.count(ds[0]) / n;
      for (int64_t d : ds)
        if (p.count(d) != n * k || c.count(d) != n * k)
          return false;
      for (int64_t r = 0; r < n; ++r)
        for (int64_t i = 0; i < n; ++i)
          for (int64_t t = 0; t < k; ++t)
            written[ds[r]][i * k + t] = in(ds[i], r * k + t);
    } else {
      const int64_t root = *team.root;
      std::vector<int64_t> receivers;
      for (int64_t d : ds)
        if (d != root || isConsumerDevice(d))
          receivers.push_back(d);
      const int64_t k = l.kind == CommKind::Broadcast ? p.count(root)
                        : receivers.empty()           ? 0
                                                      : c.count(receivers[0]);
      for (int64_t d : receivers)
        if (c.count(d) != k)
          return false;
      if (l.kind == CommKind::Scatter && p.count(root) != n * k)
        return false;
      for (int64_t d : receivers) {
        int64_t rank = std::find(ds.begin(), ds.end(), d) - ds.begin();
        for (int64_t t = 0; t < k; ++t)
          written[d][t] = in(root, (l.kind == CommKind::Scatter ? rank * k : 0) + t);
      }
    }
  }
  for (int64_t d : c.devices())
    for (const auto &slot : c.buffer(d)) {
      auto needed = m.needs(slot.element);
      if (!written.count(d)) {
        for (int64_t x : needed)
          if (!p.holds(d, x))
            return false;
        continue;
      }
      auto it = written[d].find(slot.offset);
      if (needed.size() != 1 || it == written[d].end() || it->second != needed[0])
        return false;
    }
  return true;
}

TEST(RandomEdges, SlotFormulasAgreeWithForwardSimulation) {
  RandomEdgeGenerator gen(11);
  int compared = 0, held = 0;
  for (int i = 0; i < 400; ++i) {
    auto rc = gen.next();
    auto built = EdgeModel::build(rc.fusion, rc.edge, rc.bindings);
    if (!std::holds_alternative<EdgeModel>(built))
      continue;
    const auto &model = std::get<EdgeModel>(built);
    for (const auto &l : rc.lowerings) {
      auto simulated = simulate(model, l);
      if (!simulated)
        continue;
      auto r = bruteCheckLowering(model, l);
      ASSERT_NE(r.outcome, BruteOutcome::Unsupported) << rc.description;
      EXPECT_EQ(r.holds(), *simulated) << l.str() << "\n" << rc.description << "\n" << messageOf(r);
      ++compared;
      held += r.holds();
    }
  }
  EXPECT_GT(compared, 1000);
  EXPECT_GT(held, 50);
}

// DTensor's recorded padded ReduceScatter (corpus/dtensor/
// rec_1d_pmax_to_s1_uneven.json, its sequence): the brute force runs it slot
// for slot on the members' padded buffers, as a compiler's collective; in
// the other rank order rank 0 sums the last chunk, padding, and it fails.
TEST(BruteForcePadded, DTensorsRecordedReduceScatterRunsSlotForSlot) {
  Document doc = dtensor::readInputDocumentFile(std::string(SHARDCHECK_SOURCE_DIR) +
                                                "/corpus/dtensor/rec_1d_pmax_to_s1_uneven.json")
                     .doc;
  const Fusion &f = doc.fusions.at(1);
  DiagnosticEngine diags;
  auto graph = FusionGraph::build(f, diags);
  ASSERT_TRUE(graph);
  const FusionEdge *edge = nullptr;
  for (const FusionEdge &e : graph->edges())
    if (f.exprs[e.expr].kind == OpKind::Communication)
      edge = &e;
  ASSERT_NE(edge, nullptr);
  const Expr &expr = f.exprs[edge->expr];
  Lowering l;
  l.kind = *commKindFromCollective(expr.communication->type);
  l.padded = isPaddedCommunication(expr);
  l.reduceInput = Lowering::ReduceInput::ProducerBuffer;
  l.teams = {Team{expr.communication->team, std::nullopt, {}}};
  ASSERT_EQ(l.str(), "ReduceScatter+pad over team (0 1 2 3)");
  BruteResult right = bruteCheckLowering(f, *edge, {}, l, Issuer::Compiler);
  EXPECT_TRUE(right.holds()) << messageOf(right);
  Lowering reversed = l;
  std::reverse(reversed.teams[0].devices.begin(), reversed.teams[0].devices.end());
  BruteResult wrong = bruteCheckLowering(f, *edge, {}, reversed, Issuer::Compiler);
  ASSERT_TRUE(wrong.fails());
  EXPECT_NE(wrong.counterexample->message.find("sums {}"), std::string::npos) << messageOf(wrong);
}

TEST(BruteForceLayout, ChunkedNestingChunksTheRowsARankHolds) {
  // [5] by DIDy (chunks of 3: rows 0-2, 3-4), each rank's rows chunked by
  // DIDx as torch.chunk does: (0,0) rows 0, 1; (0,1) row 2; (1,0) row 3;
  // (1,1) row 4. Buffers keep the padded extent 2 (docs/semantics.md,
  // Chunked splits).
  FusionBuilder b;
  IdNum r = b.iter(5);
  auto sy = b.split(r, 2, /*innerSplit=*/false, kDIDy);
  auto sx = b.chunkedSplit(sy.inner, 2, kDIDx);
  TensorNum t = b.tensor(
      {{}, {r}, {sy.outer, sx.outer, sx.inner}, {}, DeviceMesh::create({2, 2}, {0, 1, 2, 3})});
  auto c = concrete(b, t);
  EXPECT_EQ(c.layoutExtents(), (std::vector<int64_t>{2}));
  EXPECT_EQ(c.heldBy(0), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(c.heldBy(1), (std::vector<int64_t>{2}));
  EXPECT_EQ(c.heldBy(2), (std::vector<int64_t>{3}));
  EXPECT_EQ(c.heldBy(3), (std::vector<int64_t>{4}));
  EXPECT_EQ(c.offsetOf(4), 0);
}

TEST(BruteForceLayout, ChunkedSplitOfASymbolicExtentIsUnsupported) {
  FusionBuilder b;
  IdNum r = b.iter(Extent::symbol("i0"));
  auto sy = b.split(r, 2, /*innerSplit=*/false, kDIDy);
  auto sx = b.split(sy.inner, 2, /*innerSplit=*/false, kDIDx);
  TensorNum t = b.tensor(
      {{}, {r}, {sy.outer, sx.outer, sx.inner}, {}, DeviceMesh::create({2, 2}, {0, 1, 2, 3})});
  Fusion f = b.take();
  f.transforms[*f.id(sx.outer).definition].chunked = true; // What a reader may hand over.
  auto built = ConcreteTensor::build(f, t, {{"i0", 8}}, ElementBasis::Logical);
  ASSERT_TRUE(std::holds_alternative<BruteResult>(built));
  EXPECT_EQ(std::get<BruteResult>(built).outcome, BruteOutcome::Unsupported);
}

} // namespace
} // namespace shardcheck::bruteforce
