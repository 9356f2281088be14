// LocalBox (executor/LocalBox.h) and the dense compute forms
// (executor/LocalCompute.h buildDenseCompute).
//
// Every box is compared with TensorLayout, the enumerated layout, on small
// tensors built with FusionBuilder: a box must list exactly the layout's
// elements in slot order, and every layout a box does not describe exactly
// must give nullopt. The corpus-wide agreement (boxes vs BufferMap, dense vs
// index-map forms) runs inside tests/plan_corpus_test.cpp for every planned
// fusion. The Megatron MLP block of the GPU benchmark must be dense
// throughout: that is what lets the nccl backend run it at full size.
#include "checker/Checker.h"
#include "checker/PlanBuilder.h"
#include "executor/Layout.h"
#include "executor/LocalBox.h"
#include "executor/LocalCompute.h"
#include "ir/FusionBuilder.h"
#include "ir/reader/DumpReader.h"
#include "tests/TestPaths.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

using namespace shardcheck;

namespace {

const DeviceMesh kTwo = DeviceMesh::linear({0, 1});

/// The box of `t` on `device` must list exactly the layout's slots.
void expectBoxMatchesLayout(const FusionBuilder &b, TensorNum t, int64_t device,
                            const Bindings &symbols = {}) {
  auto box = localBoxOf(b.fusion(), t, symbols, device);
  ASSERT_TRUE(box.has_value()) << "T" << t << " on device " << device;
  TensorLayout layout = TensorLayout::build(b.fusion(), t, symbols, {0, 1});
  EXPECT_EQ(boxElements(*box), layout.slots(device)) << "T" << t << " on device " << device;
  EXPECT_EQ(box->slotCount(), layout.slotCount(device));
}

TEST(LocalBox, ReplicatedTensorIsTheWholeShapeOnEveryMeshDevice) {
  FusionBuilder b;
  TensorNum t = b.tensor({b.iter(3), b.iter(4)}, kTwo);
  for (int64_t d : {0, 1}) {
    auto box = localBoxOf(b.fusion(), t, {}, d);
    ASSERT_TRUE(box);
    EXPECT_EQ(box->offset, (std::vector<int64_t>{0, 0}));
    EXPECT_EQ(box->extent, (std::vector<int64_t>{3, 4}));
    expectBoxMatchesLayout(b, t, d);
  }
  EXPECT_FALSE(localBoxOf(b.fusion(), t, {}, 5)) << "device outside the mesh";
}

TEST(LocalBox, OuterSplitByDidGivesContiguousChunks) {
  FusionBuilder b;
  IdNum rows = b.iter(3), cols = b.iter(8);
  auto s = b.split(cols, 2, /*innerSplit=*/false, ParallelType::DIDx);
  TensorNum t = b.tensor({rows, cols}, kTwo, {rows, s.outer, s.inner});
  auto box = localBoxOf(b.fusion(), t, {}, 1);
  ASSERT_TRUE(box);
  EXPECT_EQ(box->offset, (std::vector<int64_t>{0, 4}));
  EXPECT_EQ(box->extent, (std::vector<int64_t>{3, 4}));
  expectBoxMatchesLayout(b, t, 0);
  expectBoxMatchesLayout(b, t, 1);
}

TEST(LocalBox, InnerSplitWithDidOuterAndSymbolicExtent) {
  FusionBuilder b;
  IdNum rows = b.iter("i0"), cols = b.iter(2);
  auto s = b.split(rows, 5, /*innerSplit=*/true, ParallelType::DIDx);
  TensorNum t = b.tensor({rows, cols}, kTwo, {s.outer, s.inner, cols});
  expectBoxMatchesLayout(b, t, 0, {{"i0", 10}});
  expectBoxMatchesLayout(b, t, 1, {{"i0", 10}});
  EXPECT_FALSE(localBoxOf(b.fusion(), t, {{"i0", 15}}, 0)) << "3 chunks on a mesh of 2";
  EXPECT_FALSE(localBoxOf(b.fusion(), t, {}, 0)) << "unbound symbol";
}

TEST(LocalBox, UnevenSplitIsNotABox) {
  FusionBuilder b;
  IdNum cols = b.iter(7);
  auto s = b.split(cols, 2, false, ParallelType::DIDx);
  TensorNum t = b.tensor({cols}, kTwo, {s.outer, s.inner});
  EXPECT_FALSE(localBoxOf(b.fusion(), t, {}, 0)) << "padding slots";
}

TEST(LocalBox, DidOnTheInnerPartIsNotABox) {
  FusionBuilder b;
  IdNum cols = b.iter(8);
  auto s = b.split(cols, 2, true); // inner extent 2
  b.parallelize(s.inner, ParallelType::DIDx);
  TensorNum t = b.tensor({cols}, kTwo, {s.outer, s.inner});
  EXPECT_FALSE(localBoxOf(b.fusion(), t, {}, 0)) << "strided ownership";
}

TEST(LocalBox, DidOnALogicalAxisOfMeshExtent) {
  FusionBuilder b;
  IdNum d = b.iter(2, ParallelType::DIDx), cols = b.iter(3);
  TensorNum t = b.tensor({d, cols}, kTwo);
  auto box = localBoxOf(b.fusion(), t, {}, 1);
  ASSERT_TRUE(box);
  EXPECT_EQ(box->offset, (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(box->extent, (std::vector<int64_t>{1, 3}));
  expectBoxMatchesLayout(b, t, 0);
  expectBoxMatchesLayout(b, t, 1);
}

TEST(LocalBox, AllocationThatReordersIsNotABox) {
  FusionBuilder b;
  IdNum rows = b.iter(2), cols = b.iter(4);
  TensorNum same = b.tensor({{}, {rows, cols}, {}, {rows, cols}, kTwo, DataType::Float});
  EXPECT_TRUE(localBoxOf(b.fusion(), same, {}, 0));
  FusionBuilder c;
  IdNum r = c.iter(2), k = c.iter(4);
  TensorNum swapped = c.tensor({{}, {r, k}, {}, {k, r}, kTwo, DataType::Float});
  EXPECT_FALSE(localBoxOf(c.fusion(), swapped, {}, 0));
}

TEST(LocalBox, TwoDimensionalMeshShardsTwoAxes) {
  FusionBuilder b;
  DeviceMesh mesh = DeviceMesh::create({2, 2}, {0, 1, 2, 3});
  IdNum rows = b.iter(4), cols = b.iter(6);
  auto sr = b.split(rows, 2, false, ParallelType::DIDy);
  auto sc = b.split(cols, 2, false, ParallelType::DIDx);
  TensorNum t = b.tensor({rows, cols}, mesh, {sr.outer, sr.inner, sc.outer, sc.inner});
  for (int64_t d = 0; d < 4; ++d) {
    auto box = localBoxOf(b.fusion(), t, {}, d);
    ASSERT_TRUE(box);
    TensorLayout layout = TensorLayout::build(b.fusion(), t, {}, {0, 1, 2, 3});
    EXPECT_EQ(boxElements(*box), layout.slots(d)) << "device " << d;
  }
}

TEST(LocalBox, ExtractBoxCutsTheSameElements) {
  LocalBox box{{3, 4, 5}, {1, 0, 2}, {2, 4, 3}};
  HostTensor whole({3, 4, 5}, DataType::Float);
  for (int64_t i = 0; i < whole.numel(); ++i)
    whole.data()[static_cast<size_t>(i)] = static_cast<double>(i);
  std::vector<double> cut = extractBox(whole, box);
  std::vector<int64_t> elements = boxElements(box);
  ASSERT_EQ(cut.size(), elements.size());
  for (size_t s = 0; s < cut.size(); ++s)
    EXPECT_EQ(cut[s], static_cast<double>(elements[s]));
}

/// The benchmark's MLP block: planned from the corpus dump, every compute
/// step has a dense form (two gemms and a pointwise GeLU).
TEST(DenseCompute, MegatronMlpBlockIsDenseThroughout) {
  std::string path = std::string(SHARDCHECK_SOURCE_DIR) + "/corpus/bench_megatron_mlp_block.txt";
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  Document doc = readDocumentFile(path);
  ASSERT_EQ(doc.fusions.size(), 1u);
  const Fusion &fusion = doc.fusions[0];
  DiagnosticEngine diags;
  auto graph = FusionGraph::build(fusion, diags);
  ASSERT_TRUE(graph);
  Checker checker(CheckOptions{});
  auto verdicts = checker.checkFusion(fusion, *graph);
  PlanRequest request;
  request.inputFile = path;
  request.inputText = text.str();
  Plan plan = buildPlan(fusion, *graph, verdicts, request);
  ASSERT_TRUE(plan.verified());
  Bindings symbols = {{"i0", 8}, {"i1", 6}, {"i2", 10}};
  std::vector<std::string> forms;
  for (const PlanStep &step : plan.steps) {
    if (step.kind != StepKind::Compute)
      continue;
    for (int64_t d : step.devices) {
      auto c = buildDenseCompute(plan, step, d, symbols);
      ASSERT_TRUE(c) << step.output << " on device " << d;
      if (c->form == LocalCompute::Form::Gemm) {
        forms.push_back(step.output + " gemm " + std::to_string(c->m) + "x" + std::to_string(c->n) +
                        "x" + std::to_string(c->k));
        EXPECT_TRUE(c->transposeB) << "a linear multiplies by the weight transposed";
      } else {
        ASSERT_EQ(c->form, LocalCompute::Form::Elementwise);
        for (const LocalOperand &o : c->operands)
          EXPECT_TRUE(o.gather.empty());
        forms.push_back(step.output + " elementwise " + std::to_string(c->outputSlots));
      }
    }
  }
  EXPECT_EQ(forms, (std::vector<std::string>{"T2 gemm 8x5x6", "T2 gemm 8x5x6", "T3 elementwise 40",
                                             "T3 elementwise 40", "T5.partial gemm 8x6x5",
                                             "T5.partial gemm 8x6x5"}));
}

} // namespace
