// IR invariants and pieces: extents, meshes, domain maps, graph errors, lints.
#include "ir/FusionBuilder.h"
#include "ir/FusionGraph.h"
#include "ir/Lints.h"

#include <gtest/gtest.h>

using namespace shardcheck;

namespace {

TEST(Extent, FoldsConstantsAndPrintsNvFuserStyle) {
  EXPECT_EQ(Extent::ceilDiv(Extent::constant(7), Extent::constant(2)).asConstant(), 4);
  Extent e = Extent::ceilDiv(Extent::symbol("i3"), Extent::constant(2));
  EXPECT_EQ(e.str(), "( ceilDiv(i3, 2) )");
  EXPECT_EQ(Extent::mul(Extent::symbol("i0"), Extent::symbol("i1")).str(), "( i0 * i1 )");
  EXPECT_EQ(e.evaluate({{"i3", 9}}), 5);
  EXPECT_FALSE(e.evaluate({}).has_value());
  EXPECT_EQ(e.symbols(), std::set<std::string>{"i3"});
}

TEST(DeviceMesh, DidxIndexesTheLastAxis) {
  auto m = DeviceMesh::create({2, 3}, {0, 1, 2, 3, 4, 5});
  EXPECT_EQ(m.str(), "DeviceMesh{{0 1 2}{3 4 5}}");
  EXPECT_EQ(m.extentOf(ParallelType::DIDx), 3);
  EXPECT_EQ(m.extentOf(ParallelType::DIDy), 2);
  EXPECT_EQ(m.coordinate(4, ParallelType::DIDx), 1);
  EXPECT_EQ(m.coordinate(4, ParallelType::DIDy), 1);
  EXPECT_FALSE(m.axisOf(ParallelType::DIDz).has_value());
  EXPECT_EQ(m.deviceAt({1, 2}), 5);
}

TEST(DomainMap, BroadcastNewAxesMapToNothing) {
  FusionBuilder b;
  TensorNum x = b.tensor({b.iter(4)}, std::nullopt);
  TensorNum y = b.tensor({b.iter(4), b.broadcast()}, std::nullopt);
  b.expr(OpKind::Broadcast, "broadcast", {x}, y, {false, true});
  Fusion f = b.take();
  DomainMap m = computeDomainMap(f, f.exprs[0], 0, y);
  ASSERT_EQ(m.producerIds.size(), 2u);
  EXPECT_EQ(m.producerIds[0], f.tensor(x).logical[0]);
  EXPECT_FALSE(m.producerIds[1].has_value());
  EXPECT_FALSE(m.unsupported);
}

TEST(DomainMap, ReductionMapsReducedAxisToReductionId) {
  FusionBuilder b;
  TensorNum x = b.tensor({b.iter(4), b.iter(3)}, std::nullopt);
  TensorNum y = b.tensor({b.reduction(4), b.iter(3)}, std::nullopt);
  b.expr(OpKind::Reduction, "reduction", {x}, y);
  Fusion f = b.take();
  DomainMap m = computeDomainMap(f, f.exprs[0], 0, y);
  EXPECT_EQ(m.producerOf(f.tensor(y).logical[0]), f.tensor(x).logical[0]);
}

TEST(DomainMap, RankMismatchIsUnsupportedNotACrash) {
  FusionBuilder b;
  TensorNum x = b.tensor({b.iter(4), b.iter(3)}, std::nullopt);
  TensorNum y = b.tensor({b.iter(12)}, std::nullopt);
  b.expr(OpKind::Set, "Set", {x}, y);
  Fusion f = b.take();
  DomainMap m = computeDomainMap(f, f.exprs[0], 0, y);
  ASSERT_TRUE(m.unsupported.has_value());
  EXPECT_NE(m.unsupported->find("ranks differ"), std::string::npos);
}

TEST(DomainMap, LinearMapsContractionToReduction) {
  FusionBuilder b;
  TensorNum a = b.tensor({b.iter(8), b.iter(16)}, std::nullopt);
  TensorNum w = b.tensor({b.iter(32), b.iter(16)}, std::nullopt);
  TensorNum y = b.tensor({b.iter(8), b.iter(32), b.reduction(16)}, std::nullopt);
  b.expr(OpKind::Linear, "linear", {a, w}, y);
  Fusion f = b.take();
  const auto &yl = f.tensor(y).logical;
  DomainMap ma = computeDomainMap(f, f.exprs[0], 0, y);
  EXPECT_EQ(ma.producerOf(yl[0]), f.tensor(a).logical[0]);
  EXPECT_FALSE(ma.producerOf(yl[1]).has_value());
  EXPECT_EQ(ma.producerOf(yl[2]), f.tensor(a).logical[1]);
  DomainMap mw = computeDomainMap(f, f.exprs[0], 1, y);
  EXPECT_EQ(mw.producerOf(yl[1]), f.tensor(w).logical[0]);
  EXPECT_EQ(mw.producerOf(yl[2]), f.tensor(w).logical[1]);
}

TEST(FusionGraph, TopologicalOrderPutsProducersFirst) {
  FusionBuilder b;
  TensorNum x = b.tensor({b.iter(4)}, std::nullopt);
  TensorNum y = b.tensor({b.iter(4)}, std::nullopt);
  TensorNum z = b.tensor({b.iter(4)}, std::nullopt);
  b.expr(OpKind::Unary, "relu", {x}, y);
  b.expr(OpKind::Binary, "+", {x, y}, z);
  Fusion f = b.take();
  DiagnosticEngine diags;
  auto g = FusionGraph::build(f, diags);
  ASSERT_TRUE(g);
  EXPECT_EQ(g->edges().size(), 3u);
  const auto &order = g->topologicalOrder();
  auto pos = [&](TensorNum t) { return std::find(order.begin(), order.end(), t) - order.begin(); };
  EXPECT_LT(pos(x), pos(y));
  EXPECT_LT(pos(y), pos(z));
}

TEST(FusionGraph, CycleIsAnInputError) {
  FusionBuilder b;
  TensorNum x = b.tensor({b.iter(4)}, std::nullopt);
  TensorNum y = b.tensor({b.iter(4)}, std::nullopt);
  b.expr(OpKind::Unary, "relu", {x}, y);
  b.expr(OpKind::Unary, "relu", {y}, x);
  Fusion f = b.take();
  DiagnosticEngine diags;
  EXPECT_FALSE(FusionGraph::build(f, diags).has_value());
  ASSERT_TRUE(diags.hasErrors());
  EXPECT_EQ(diags.diagnostics()[0].code, "cycle");
}

TEST(FusionGraph, UseBeforeDefinitionIsAnInputError) {
  FusionBuilder b;
  TensorNum x = b.tensor({b.iter(4)}, std::nullopt);
  TensorNum y = b.tensor({b.iter(4)}, std::nullopt);
  TensorNum z = b.tensor({b.iter(4)}, std::nullopt);
  b.expr(OpKind::Unary, "relu", {y}, z);
  b.expr(OpKind::Unary, "relu", {x}, y);
  Fusion f = b.take();
  DiagnosticEngine diags;
  EXPECT_FALSE(FusionGraph::build(f, diags).has_value());
  EXPECT_EQ(diags.diagnostics()[0].code, "use-before-definition");
}

std::vector<std::string> lintCodes(const Fusion &f) {
  DiagnosticEngine diags;
  lintFusion(f, diags);
  std::vector<std::string> codes;
  for (const auto &d : diags.diagnostics())
    codes.push_back(d.code);
  return codes;
}

TEST(Lints, DuplicateDidsOnBroadcastsAreAnErrorWithANote) {
  FusionBuilder b;
  auto mesh = DeviceMesh::linear({0, 1});
  IdNum bid = b.broadcast(ParallelType::DIDx);
  auto s = b.split(bid, 128, true);
  b.parallelize(s.outer, ParallelType::DIDx);
  b.parallelize(s.inner, ParallelType::DIDx);
  b.tensor({bid}, mesh, {s.outer, s.inner});
  Fusion f = b.take();
  DiagnosticEngine diags;
  lintFusion(f, diags);
  ASSERT_EQ(diags.diagnostics().size(), 1u);
  const auto &d = diags.diagnostics()[0];
  EXPECT_EQ(d.code, "duplicate-did");
  bool dataNote = false;
  for (const auto &n : d.notes)
    dataNote = dataNote || n.message.find("data itself is unaffected") != std::string::npos;
  EXPECT_TRUE(dataNote);
}

TEST(Lints, ExtentMeshAndSplitFindings) {
  auto mesh = DeviceMesh::linear({0, 1});
  {
    FusionBuilder b;
    b.tensor({b.iter(3, ParallelType::DIDx)}, mesh);
    EXPECT_EQ(lintCodes(b.fusion()), std::vector<std::string>{"did-extent-mismatch"});
  }
  {
    FusionBuilder b;
    b.tensor({b.iter(2, ParallelType::DIDy)}, mesh);
    EXPECT_EQ(lintCodes(b.fusion()), std::vector<std::string>{"did-not-in-mesh"});
  }
  {
    FusionBuilder b;
    b.tensor({b.iter(2, ParallelType::DIDx)}, std::nullopt);
    EXPECT_EQ(lintCodes(b.fusion()), std::vector<std::string>{"did-without-mesh"});
  }
  {
    FusionBuilder b;
    IdNum i = b.iter(7);
    auto s = b.split(i, 2, false, ParallelType::DIDx);
    b.tensor({i}, mesh, {s.outer, s.inner});
    EXPECT_EQ(lintCodes(b.fusion()), std::vector<std::string>{"uneven-sharding"});
  }
  {
    FusionBuilder b;
    IdNum i = b.iter(8);
    auto s = b.split(i, 2, true);
    b.parallelize(s.inner, ParallelType::DIDx);
    b.tensor({i}, mesh, {s.outer, s.inner});
    EXPECT_EQ(lintCodes(b.fusion()), std::vector<std::string>{"did-on-inner-split"});
  }
  {
    FusionBuilder b;
    b.tensor({b.iter(2)}, DeviceMesh::linear({0, 0}));
    EXPECT_EQ(lintCodes(b.fusion()), std::vector<std::string>{"mesh-duplicate-device"});
  }
}

} // namespace
