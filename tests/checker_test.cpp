// Unit tests of the checker on fusions built programmatically: the seed's two
// repros, every selection rule's happy path, counterexamples, symbolic sizes.
// Verdicts are also asserted against hand-derived expectations here; the
// brute-force cross-check lives in crosscheck_test.cpp.
#include "checker/Checker.h"
#include "checker/EdgeChecker.h"
#include "checker/Selection.h"
#include "ir/FusionBuilder.h"

#include <gtest/gtest.h>

using namespace shardcheck;

namespace {

constexpr ParallelType DIDx = ParallelType::DIDx;
constexpr ParallelType DIDy = ParallelType::DIDy;

DeviceMesh mesh1d(int n) {
  std::vector<int64_t> d(n);
  for (int i = 0; i < n; ++i)
    d[i] = i;
  return DeviceMesh::linear(d);
}

/// Checks the only edge whose producer and consumer are given.
EdgeVerdict verdictOf(const Fusion &f, TensorNum p, TensorNum c) {
  DiagnosticEngine diags;
  auto graph = FusionGraph::build(f, diags);
  EXPECT_TRUE(graph.has_value());
  Checker checker(CheckOptions{});
  for (auto &v : checker.checkFusion(f, *graph))
    if (v.producer == p && v.consumer == c)
      return v;
  ADD_FAILURE() << "no edge T" << p << " -> T" << c;
  return {};
}

TEST(Checker, SeedRepro1BroadcastDidSetIsAlias) {
  // y: [bDIDx{1}] on {0 1}; set -> [b{1}]: no data moves.
  FusionBuilder b;
  auto mesh = mesh1d(2);
  TensorNum y = b.tensor({b.broadcast(DIDx)}, mesh);
  TensorNum y2 = b.tensor({b.broadcast()}, mesh);
  b.expr(OpKind::Set, "Set", {y}, y2);
  Fusion f = b.take();
  EdgeVerdict v = verdictOf(f, y, y2);
  EXPECT_EQ(v.lowering.kind, CommKind::Alias);
  EXPECT_EQ(v.result, EdgeResult::Proved);
  ASSERT_TRUE(v.compiler.has_value());
  EXPECT_EQ(v.compiler->lowering.value().kind, CommKind::Allgather);
  EXPECT_EQ(v.compiler->result, CompilerResult::Refuted);
  ASSERT_TRUE(v.compiler->counterexample.has_value());
  EXPECT_EQ(v.compiler->counterexample->message,
            "Allgather over team (0 1) needs an output of 2 x 1 elements but T1 holds 1 on "
            "each device");
}

TEST(Checker, SeedRepro2ScatterIsRefuted) {
  FusionBuilder b;
  auto mesh = mesh1d(2);
  TensorNum y = b.tensor({b.broadcast()}, mesh);
  TensorNum y2 = b.tensor({b.broadcast(DIDx)}, mesh);
  b.expr(OpKind::Set, "Set", {y}, y2);
  Fusion f = b.take();
  EdgeVerdict v = verdictOf(f, y, y2);
  EXPECT_EQ(v.lowering.kind, CommKind::Alias);
  EXPECT_EQ(v.result, EdgeResult::Proved);
  ASSERT_TRUE(v.compiler.has_value());
  EXPECT_EQ(v.compiler->lowering.value().kind, CommKind::Scatter);
  EXPECT_EQ(v.compiler->result, CompilerResult::Refuted);
  EXPECT_NE(v.compiler->counterexample->message.find("needs an input of 2 x 1 elements"),
            std::string::npos)
      << v.compiler->counterexample->message;
}

TEST(Checker, AllgatherOfShardedAxis) {
  for (int n : {2, 4, 8}) {
    FusionBuilder b;
    auto mesh = mesh1d(n);
    TensorNum x = b.tensor({b.iter(n, DIDx), b.iter(6)}, mesh);
    TensorNum y = b.tensor({b.iter(n), b.iter(6)}, mesh);
    b.expr(OpKind::Set, "Set", {x}, y);
    Fusion f = b.take();
    EdgeVerdict v = verdictOf(f, x, y);
    EXPECT_EQ(v.lowering.kind, CommKind::Allgather) << n;
    EXPECT_FALSE(v.lowering.localPermute);
    EXPECT_EQ(v.result, EdgeResult::Proved) << v.reason;
    ASSERT_TRUE(v.counterexample.has_value()); // why communication is needed
    ASSERT_TRUE(v.compiler.has_value());
    EXPECT_EQ(v.compiler->result, CompilerResult::Confirmed);
  }
}

TEST(Checker, AllgatherOfInnerAxisNeedsPermute) {
  FusionBuilder b;
  auto mesh = mesh1d(2);
  TensorNum x = b.tensor({b.iter(3), b.iter(2, DIDx)}, mesh);
  TensorNum y = b.tensor({b.iter(3), b.iter(2)}, mesh);
  b.expr(OpKind::Set, "Set", {x}, y);
  Fusion f = b.take();
  EdgeVerdict v = verdictOf(f, x, y);
  EXPECT_EQ(v.lowering.kind, CommKind::Allgather);
  EXPECT_TRUE(v.lowering.localPermute);
  EXPECT_EQ(v.result, EdgeResult::Proved);
  ASSERT_TRUE(v.compiler.has_value());
  EXPECT_EQ(v.compiler->result, CompilerResult::Refuted); // plain Allgather misplaces elements
}

TEST(Checker, ReplicatedToShardedNeedsNothing) {
  FusionBuilder b;
  auto mesh = mesh1d(4);
  TensorNum x = b.tensor({b.iter(4), b.iter(8)}, mesh);
  TensorNum y = b.tensor({b.iter(4, DIDx), b.iter(8)}, mesh);
  b.expr(OpKind::Set, "Set", {x}, y);
  Fusion f = b.take();
  EdgeVerdict v = verdictOf(f, x, y);
  EXPECT_EQ(v.lowering.kind, CommKind::None);
  EXPECT_EQ(v.result, EdgeResult::Proved);
  ASSERT_TRUE(v.compiler.has_value()); // nvFuser scatters
  EXPECT_EQ(v.compiler->lowering.value().kind, CommKind::Scatter);
}

TEST(Checker, LoopSplitShardingSymbolic) {
  // x[i0] outer-split by 2 on DIDx -> y unsharded: Allgather for all even i0.
  FusionBuilder b;
  auto mesh = mesh1d(2);
  IdNum xi = b.iter("i0");
  auto [xo, xin] = b.split(xi, Extent::constant(2), /*innerSplit=*/false, DIDx);
  TensorNum x = b.tensor({xi}, mesh, {xo, xin});
  TensorNum y = b.tensor({b.iter("i0")}, mesh);
  b.expr(OpKind::Set, "Set", {x}, y);
  Fusion f = b.take();
  EdgeVerdict v = verdictOf(f, x, y);
  EXPECT_EQ(v.lowering.kind, CommKind::Allgather);
  EXPECT_EQ(v.result, EdgeResult::Proved) << v.reason;
  EXPECT_NE(std::find(v.assumptions.begin(), v.assumptions.end(), "i0 % 2 == 0"),
            v.assumptions.end());
}

TEST(Checker, SumOverShardedAxisIsAllreduce) {
  FusionBuilder b;
  auto mesh = mesh1d(4);
  TensorNum x = b.tensor({b.iter(4, DIDx), b.iter(3)}, mesh);
  TensorNum y = b.tensor({b.reduction(Extent::constant(4), DIDx), b.iter(3)}, mesh);
  b.expr(OpKind::Reduction, "reduction", {x}, y, {}, {{"op", "add"}});
  Fusion f = b.take();
  EdgeVerdict v = verdictOf(f, x, y);
  EXPECT_EQ(v.lowering.kind, CommKind::Allreduce);
  EXPECT_EQ(v.result, EdgeResult::Proved) << v.reason;
}

TEST(Checker, ReduceScatter) {
  // x[DIDx{2}, 4] sum over axis 0 -> y[r{2}, 4 split outer by 2 on DIDx].
  FusionBuilder b;
  auto mesh = mesh1d(2);
  TensorNum x = b.tensor({b.iter(2, DIDx), b.iter(4)}, mesh);
  IdNum r = b.reduction(Extent::constant(2));
  IdNum yi = b.iter(4);
  auto [yo, yin] = b.split(yi, Extent::constant(2), false, DIDx);
  TensorNum y = b.tensor({r, yi}, mesh, {r, yo, yin});
  b.expr(OpKind::Reduction, "reduction", {x}, y, {}, {{"op", "add"}});
  Fusion f = b.take();
  EdgeVerdict v = verdictOf(f, x, y);
  EXPECT_EQ(v.lowering.kind, CommKind::ReduceScatter);
  EXPECT_EQ(v.result, EdgeResult::Proved) << v.reason;
}

TEST(Checker, TwoDMeshRowAllgather) {
  auto mesh = DeviceMesh::create({2, 2}, {0, 1, 2, 3});
  FusionBuilder b;
  TensorNum x = b.tensor({b.iter(2, DIDy), b.iter(2, DIDx), b.iter(3)}, mesh);
  TensorNum y = b.tensor({b.iter(2, DIDy), b.iter(2), b.iter(3)}, mesh);
  b.expr(OpKind::Set, "Set", {x}, y);
  Fusion f = b.take();
  EdgeVerdict v = verdictOf(f, x, y);
  EXPECT_EQ(v.lowering.kind, CommKind::Allgather);
  EXPECT_EQ(v.lowering.teams.size(), 2u);
  EXPECT_EQ(v.result, EdgeResult::Proved) << v.reason;
}

/// A [8, 3] tensor on a 2x2 mesh whose rows are split by DIDy and the local
/// half again by DIDx (a nested sharding), with no allocation domain.
TensorNum nestedRows(FusionBuilder &b, const DeviceMesh &mesh) {
  IdNum r = b.iter(8), c = b.iter(3);
  auto sy = b.split(r, 2, /*innerSplit=*/false, DIDy);
  auto sx = b.split(sy.inner, 2, /*innerSplit=*/false, DIDx);
  return b.tensor({r, c}, mesh, {sy.outer, sx.outer, sx.inner, c});
}

TEST(Checker, NestedShardingGathersIntoItsOuterShardWithItsDefaultLayout) {
  // Device (y, x) holds rows y*4 + x*2 .. +1, its buffer the innermost part
  // [2, 3] (docs/semantics.md, Local buffer layout): gathering DIDx within a
  // row of the mesh gives the DIDy half [4, 3] in order, no permute.
  auto mesh = DeviceMesh::create({2, 2}, {0, 1, 2, 3});
  FusionBuilder b;
  TensorNum x = nestedRows(b, mesh);
  IdNum r = b.iter(8);
  auto sy = b.split(r, 2, /*innerSplit=*/false, DIDy);
  IdNum c = b.iter(3);
  TensorNum y = b.tensor({r, c}, mesh, {sy.outer, sy.inner, c});
  b.expr(OpKind::Set, "Set", {x}, y);
  TensorNum z = nestedRows(b, mesh);
  b.expr(OpKind::Set, "Set", {y}, z);
  Fusion f = b.take();
  EdgeVerdict gather = verdictOf(f, x, y);
  EXPECT_EQ(gather.lowering.kind, CommKind::Allgather);
  EXPECT_EQ(gather.loweringText(), "Allgather over teams (0 1)(2 3)");
  EXPECT_EQ(gather.result, EdgeResult::Proved) << gather.reason;
  EdgeVerdict slice = verdictOf(f, y, z);
  EXPECT_EQ(slice.lowering.kind, CommKind::None);
  EXPECT_EQ(slice.result, EdgeResult::Proved) << slice.reason;
}

TEST(Checker, TwoDidChangesGetAMultiStepPlan) {
  auto mesh = DeviceMesh::create({2, 2}, {0, 1, 2, 3});
  FusionBuilder b;
  TensorNum x = b.tensor({b.iter(2, DIDy), b.iter(2, DIDx)}, mesh);
  TensorNum y = b.tensor({b.iter(2), b.iter(2)}, mesh);
  b.expr(OpKind::Set, "Set", {x}, y);
  Fusion f = b.take();
  EdgeVerdict v = verdictOf(f, x, y);
  // No single collective; the planner's two Allgathers, each proved.
  EXPECT_EQ(v.result, EdgeResult::Proved);
  EXPECT_EQ(v.loweringText(), kMultiStepName);
  EXPECT_TRUE(hasProvedPlan(v));
  ASSERT_EQ(v.steps.size(), 2u);
  for (const auto &step : v.steps) {
    EXPECT_EQ(step.lowering.kind, CommKind::Allgather);
    EXPECT_EQ(step.status, Status::Proved) << step.reason;
  }
}

TEST(Checker, GatherToSingleDeviceAndScatterBack) {
  FusionBuilder b;
  TensorNum x = b.tensor({b.iter(2, DIDx), b.iter(5)}, mesh1d(2));
  TensorNum y = b.tensor({b.iter(2), b.iter(5)}, DeviceMesh::linear({0}));
  TensorNum z = b.tensor({b.iter(2, DIDx), b.iter(5)}, mesh1d(2));
  b.expr(OpKind::Set, "Set", {x}, y);
  b.expr(OpKind::Set, "Set", {y}, z);
  Fusion f = b.take();
  EdgeVerdict g = verdictOf(f, x, y);
  EXPECT_EQ(g.lowering.kind, CommKind::Gather);
  EXPECT_EQ(g.result, EdgeResult::Proved) << g.reason;
  EdgeVerdict s = verdictOf(f, y, z);
  EXPECT_EQ(s.lowering.kind, CommKind::Scatter);
  EXPECT_EQ(s.result, EdgeResult::Proved) << s.reason;
}

namespace {

/// x[7 split by 2 on DIDx] -> y[7] on (0 1): device 0 holds 4 rows, device
/// 1 holds 3 (one padding slot).
Fusion unevenGather(TensorNum &x, TensorNum &y) {
  FusionBuilder b;
  auto mesh = mesh1d(2);
  IdNum xi = b.iter(7);
  auto [xo, xin] = b.split(xi, Extent::constant(2), false, DIDx);
  x = b.tensor({xi}, mesh, {xo, xin});
  y = b.tensor({b.iter(7)}, mesh);
  b.expr(OpKind::Set, "Set", {x}, y);
  return b.take();
}

} // namespace

TEST(Checker, UnevenSplitGathersPaddedBuffers) {
  // The padded Allgather is proved; nvFuser's plain Allgather of unequal
  // buffers is not.
  TensorNum x = 0, y = 0;
  Fusion f = unevenGather(x, y);
  EdgeVerdict v = verdictOf(f, x, y);
  EXPECT_EQ(v.lowering.kind, CommKind::Allgather);
  EXPECT_TRUE(v.lowering.padded);
  EXPECT_EQ(v.lowering.str(), "Allgather+pad over team (0 1)");
  EXPECT_EQ(v.result, EdgeResult::Proved) << v.reason;
  ASSERT_TRUE(v.compiler.has_value());
  EXPECT_NE(v.compiler->result, CompilerResult::Confirmed);
}

TEST(Checker, UnevenReduceScatterIsPadded) {
  // x[DIDx{2}, 5] summed over axis 0 into y[r{2}, 5 split by 2 on DIDx]:
  // the consumer's padded chunk is 3 slots, device 1 holds 2 of them.
  FusionBuilder b;
  auto mesh = mesh1d(2);
  TensorNum x = b.tensor({b.iter(2, DIDx), b.iter(5)}, mesh);
  IdNum r = b.reduction(Extent::constant(2));
  IdNum yi = b.iter(5);
  auto [yo, yin] = b.split(yi, Extent::constant(2), false, DIDx);
  TensorNum y = b.tensor({r, yi}, mesh, {r, yo, yin});
  b.expr(OpKind::Reduction, "reduction", {x}, y, {}, {{"op", "add"}});
  Fusion f = b.take();
  EdgeVerdict v = verdictOf(f, x, y);
  EXPECT_EQ(v.lowering.str(), "ReduceScatter+pad over team (0 1)");
  EXPECT_EQ(v.result, EdgeResult::Proved) << v.reason;
}

TEST(Checker, UnevenAllToAllIsPadded) {
  // x[7 split by 2 on DIDx, 5] -> y[7, 5 split by 2 on DIDx].
  FusionBuilder b;
  auto mesh = mesh1d(2);
  IdNum xi = b.iter(7), xj = b.iter(5);
  auto [xo, xin] = b.split(xi, Extent::constant(2), false, DIDx);
  TensorNum x = b.tensor({xi, xj}, mesh, {xo, xin, xj});
  IdNum yi = b.iter(7), yj = b.iter(5);
  auto [yo, yin] = b.split(yj, Extent::constant(2), false, DIDx);
  TensorNum y = b.tensor({yi, yj}, mesh, {yi, yo, yin});
  b.expr(OpKind::Set, "Set", {x}, y);
  Fusion f = b.take();
  EdgeVerdict v = verdictOf(f, x, y);
  EXPECT_EQ(v.lowering.str(), "AllToAll+pad over team (0 1)");
  EXPECT_EQ(v.result, EdgeResult::Proved) << v.reason;
}

TEST(Checker, PaddedGatherOverWrongTeamsIsRefuted) {
  // Teams (0)(1) gather nothing from the other device: refuted, with the
  // element device 0 lacks.
  TensorNum x = 0, y = 0;
  Fusion f = unevenGather(x, y);
  DiagnosticEngine diags;
  auto graph = FusionGraph::build(f, diags);
  ASSERT_TRUE(graph.has_value());
  smt::QueryCache cache;
  smt::SolverStats stats;
  smt::SolverBackend backend;
  smt::Context ctx(smt::SolverOptions{}, &cache, &stats, &backend);
  EdgeChecker ec(f, graph->edges()[0], ctx, {0, 1});
  Lowering l;
  l.kind = CommKind::Allgather;
  l.teams = {Team{{0}, std::nullopt, {}}, Team{{1}, std::nullopt, {}}};
  l = *paddedLowering(l);
  Outcome o = ec.checkLowering(l);
  ASSERT_EQ(o.kind, Outcome::Kind::Refuted);
  EXPECT_NE(o.counterexample->message.find("in its padded buffer"), std::string::npos)
      << o.counterexample->message;
  // A compiler's collective with shardcheck's own unpad copy is not one a
  // compiler runs (its padded collectives run slot for slot).
  EXPECT_EQ(ec.checkLowering(l, /*compilerLowering=*/true).kind, Outcome::Kind::Unsupported);
}

TEST(Checker, IdenticalEdgesAreDecidedOnce) {
  FusionBuilder b;
  auto mesh = mesh1d(2);
  TensorNum prev = b.tensor({b.iter(2, DIDx), b.iter(4)}, mesh);
  for (int i = 0; i < 5; ++i) {
    TensorNum g = b.tensor({b.iter(2), b.iter(4)}, mesh);
    b.expr(OpKind::Set, "Set", {prev}, g);
    TensorNum s = b.tensor({b.iter(2, DIDx), b.iter(4)}, mesh);
    b.expr(OpKind::Unary, "relu", {g}, s);
    prev = s;
  }
  Fusion f = b.take();
  DiagnosticEngine diags;
  auto graph = FusionGraph::build(f, diags);
  ASSERT_TRUE(graph);
  Checker checker(CheckOptions{});
  auto verdicts = checker.checkFusion(f, *graph);
  EXPECT_EQ(verdicts.size(), 10u);
  EXPECT_EQ(checker.stats().edgeCacheHits, 8u);
  for (const auto &v : verdicts)
    EXPECT_EQ(v.result, EdgeResult::Proved);
}

} // namespace

namespace {

TEST(Checker, EdgeCacheKeepsCommunicationTeamsApart) {
  // Two host IR Allgathers of identical tensors, one with its team reversed:
  // the second must not reuse the first's verdict.
  FusionBuilder b;
  b.fusion().kind = BlockKind::HostIr;
  auto mesh = mesh1d(2);
  std::vector<TensorNum> outs;
  for (int i = 0; i < 2; ++i) {
    TensorNum x = b.tensor({b.iter(2, DIDx), b.iter(3)}, mesh);
    TensorNum y = b.tensor({b.iter(2), b.iter(3)}, mesh);
    b.expr(OpKind::Communication, "Allgather", {x}, y);
    outs.push_back(y);
  }
  Fusion f = b.take();
  for (int i = 0; i < 2; ++i) {
    CommunicationInfo ci;
    ci.number = i;
    ci.type = CollectiveType::Allgather;
    ci.team = i == 0 ? std::vector<int64_t>{0, 1} : std::vector<int64_t>{1, 0};
    f.exprs[i].communication = ci;
  }
  DiagnosticEngine diags;
  auto graph = FusionGraph::build(f, diags);
  ASSERT_TRUE(graph);
  Checker checker(CheckOptions{});
  auto verdicts = checker.checkFusion(f, *graph);
  ASSERT_EQ(verdicts.size(), 2u);
  ASSERT_TRUE(verdicts[0].compiler && verdicts[1].compiler);
  EXPECT_EQ(verdicts[0].compiler->result, CompilerResult::Confirmed);
  EXPECT_EQ(verdicts[1].compiler->result, CompilerResult::Refuted);
}

} // namespace

// --- Chunked splits (docs/semantics.md, Chunked splits) ---------------------------

namespace {
/// [5] on a 2x2 mesh split by DIDy, its local part again by DIDx: DTensor's
/// chunking (`chunked`) or nvFuser's plain nested split.
TensorNum nestedRows(FusionBuilder &b, bool chunked) {
  IdNum r = b.iter(5);
  auto sy = b.split(r, 2, /*innerSplit=*/false, ParallelType::DIDy);
  auto sx = chunked ? b.chunkedSplit(sy.inner, 2, ParallelType::DIDx)
                    : b.split(sy.inner, 2, /*innerSplit=*/false, ParallelType::DIDx);
  return b.tensor(
      {{}, {r}, {sy.outer, sx.outer, sx.inner}, {}, DeviceMesh::create({2, 2}, {0, 1, 2, 3})});
}
} // namespace

TEST(CheckerChunked, ChunkedToChunkedNeedsNothing) {
  FusionBuilder b;
  TensorNum x = nestedRows(b, true), y = nestedRows(b, true);
  b.expr(OpKind::Set, "Set", {x}, y);
  Fusion f = b.take();
  EdgeVerdict v = verdictOf(f, x, y);
  EXPECT_EQ(v.lowering.kind, CommKind::None);
  EXPECT_EQ(v.result, EdgeResult::Proved) << v.reason;
}

TEST(CheckerChunked, ChunkedAndPlainNestingPlaceRowsApart) {
  // Rank 1 of DIDy holds rows 3, 4: chunked, DIDx 0 and 1 hold one each;
  // plain, DIDx 0 holds both (chunks of the ceiling 3 rows).
  for (bool chunkedFirst : {true, false}) {
    FusionBuilder b;
    TensorNum x = nestedRows(b, chunkedFirst), y = nestedRows(b, !chunkedFirst);
    b.expr(OpKind::Set, "Set", {x}, y);
    Fusion f = b.take();
    EdgeVerdict v = verdictOf(f, x, y);
    // A counterexample to "no communication": the two place row 4 apart.
    EXPECT_NE(v.reason.find("communication is needed"), std::string::npos) << v.reason;
    EXPECT_TRUE(v.counterexample.has_value()) << chunkedFirst;
  }
}

TEST(CheckerChunked, ReplicatedToChunkedIsALocalSlice) {
  FusionBuilder b;
  IdNum r = b.iter(5);
  TensorNum x = b.tensor({{}, {r}, {r}, {}, DeviceMesh::create({2, 2}, {0, 1, 2, 3})});
  TensorNum y = nestedRows(b, true);
  b.expr(OpKind::Set, "Set", {x}, y);
  Fusion f = b.take();
  EdgeVerdict v = verdictOf(f, x, y);
  EXPECT_EQ(v.lowering.kind, CommKind::None);
  EXPECT_EQ(v.result, EdgeResult::Proved) << v.reason;
}
