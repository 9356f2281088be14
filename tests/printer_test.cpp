// Tests of the nvFuser-style printer (ir/Printer.h): exact text of small
// fusions built by hand, one test per printed shape.
//
// That the dump reader reads printouts back into equivalent fusions is tested
// in roundtrip_test.cpp (for these shapes and for the whole corpus).
#include "ir/Printer.h"

#include <gtest/gtest.h>

namespace shardcheck {
namespace {

class PrinterTest : public ::testing::Test {
protected:
  IdNum id(IdNum number, Extent extent, IterType type = IterType::Iteration,
           ParallelType parallel = ParallelType::Serial) {
    IterDomain d;
    d.number = number;
    d.iterType = type;
    d.parallel = parallel;
    d.extent = std::move(extent);
    f.addIterDomain(std::move(d));
    return number;
  }
  IdNum id(IdNum number, int64_t extent, IterType type = IterType::Iteration,
           ParallelType parallel = ParallelType::Serial) {
    return id(number, Extent::constant(extent), type, parallel);
  }
  void split(IdNum in, IdNum outer, IdNum inner, int64_t factor, bool innerSplit = true) {
    Transform t;
    t.kind = Transform::Kind::Split;
    t.inputs = {in};
    t.outputs = {outer, inner};
    t.factor = Extent::constant(factor);
    t.innerSplit = innerSplit;
    f.addTransform(std::move(t));
  }
  void merge(IdNum a, IdNum b, IdNum out) {
    Transform t;
    t.kind = Transform::Kind::Merge;
    t.inputs = {a, b};
    t.outputs = {out};
    f.addTransform(std::move(t));
  }
  /// A float global tensor whose loop domain is its logical domain.
  TensorView &tensor(TensorNum number, std::vector<IdNum> logical,
                     std::optional<DeviceMesh> mesh = std::nullopt) {
    TensorView tv;
    tv.number = number;
    tv.dtype = DataType::Float;
    tv.logical = logical;
    tv.loop = logical;
    tv.contiguity.assign(logical.size(), Contiguity::True);
    tv.mesh = std::move(mesh);
    tv.hasTransformInfo = true;
    return f.addTensor(std::move(tv));
  }
  Expr &expr(OpKind kind, std::string op, std::vector<Operand> inputs, TensorNum output) {
    Expr e;
    e.kind = kind;
    e.op = std::move(op);
    e.inputs = std::move(inputs);
    e.outputs = {output};
    return f.exprs[f.addExpr(std::move(e))];
  }
  static Operand t(TensorNum n) { return Operand::ofTensor(n); }

  /// T0[iS0{8}] and T1[iS1{8}] plus whatever the test adds.
  void twoVectors() {
    tensor(0, {id(0, 8)});
    tensor(1, {id(1, 8)});
  }

  Fusion f;
};

TEST_F(PrinterTest, ShardedSetKernel) {
  DeviceMesh mesh = DeviceMesh::linear({0, 1});
  id(0, 8);
  id(1, 2, IterType::Iteration, ParallelType::DIDx);
  id(2, 4);
  split(0, 1, 2, 2, /*innerSplit=*/false);
  tensor(0, {0}, mesh).loop = {1, 2};
  id(3, 8);
  tensor(1, {3}, mesh);
  f.inputs = {0};
  f.outputs = {1};
  expr(OpKind::Set, "Set", {t(0)}, 1).attrs = {{"cache_op", "Streaming"}};

  EXPECT_EQ(printFusion(f), R"(Inputs:
  T0_g_float[ideviceIdx.x1{2}, iS2{4}] (DeviceMesh{0 1})
Outputs:
  T1_g_float[iS3{8}] (DeviceMesh{0 1})

%kernel {
T1_g_float[iS3{8}] (DeviceMesh{0 1})
   = Set( T0_g_float[ideviceIdx.x1{2}, iS2{4}] (DeviceMesh{0 1}), cache_op=Streaming )

TransformPrinter : 
T0_g_float[ideviceIdx.x1{2}, iS2{4}] (DeviceMesh{0 1})
  logical domain: (iS0{8})
  contiguity: t
    Outer split: iS0{8} by factor 2 -> ideviceIdx.x1{2}, iS2{4}
  loop domain: (ideviceIdx.x1{2}, iS2{4})
T1_g_float[iS3{8}] (DeviceMesh{0 1})
  logical domain: (iS3{8})
  contiguity: t
  loop domain: (iS3{8})
} // %kernel
)");
}

TEST_F(PrinterTest, BinaryOpsInlineAndNamed) {
  twoVectors();
  tensor(2, {id(2, 8)});
  tensor(3, {id(3, 8)});
  expr(OpKind::Binary, "+", {t(0), t(1)}, 2);
  expr(OpKind::Binary, "max", {t(2), Operand::ofScalar("0.0")}, 3);
  EXPECT_EQ(printExpr(f, f.exprs[0]), "T2_g_float[iS2{8}]\n"
                                      "   = T0_g_float[iS0{8}]\n"
                                      "   + T1_g_float[iS1{8}];\n");
  EXPECT_EQ(printExpr(f, f.exprs[1]), "T3_g_float[iS3{8}]\n"
                                      "   = max(T2_g_float[iS2{8}]\n"
                                      "  , 0.0);\n");
}

TEST_F(PrinterTest, UnaryOpsAndCasts) {
  twoVectors();
  tensor(2, {id(2, 8)});
  tensor(3, {id(3, 8)});
  expr(OpKind::Unary, "expf", {t(0)}, 1);
  expr(OpKind::Unary, "-", {t(1)}, 2);
  expr(OpKind::Cast, "__bfloat2float", {t(2)}, 3);
  EXPECT_EQ(printExpr(f, f.exprs[0]), "T1_g_float[iS1{8}]\n   = expf(T0_g_float[iS0{8}]);\n");
  EXPECT_EQ(printExpr(f, f.exprs[1]), "T2_g_float[iS2{8}]\n   = -T1_g_float[iS1{8}];\n");
  EXPECT_EQ(printExpr(f, f.exprs[2]),
            "T3_g_float[iS3{8}]\n   = __bfloat2float(T2_g_float[iS2{8}]);\n");
}

TEST_F(PrinterTest, Where) {
  twoVectors();
  tensor(2, {id(2, 8)});
  tensor(3, {id(3, 8)});
  f.tensor(0).dtype = DataType::Bool;
  expr(OpKind::Where, "where", {t(0), t(1), t(2)}, 3);
  EXPECT_EQ(printExpr(f, f.exprs[0]), "T3_g_float[iS3{8}]\n"
                                      "   = where(T0_g_bool[iS0{8}]\n"
                                      "  , T1_g_float[iS1{8}]\n"
                                      "  , T2_g_float[iS2{8}]);\n");
}

TEST_F(PrinterTest, BroadcastSqueezeExpand) {
  tensor(0, {id(0, 8)});
  tensor(1, {id(1, 1, IterType::Broadcast), id(2, 8)});
  tensor(2, {id(3, 8)});
  IdNum expanded = id(4, 1, IterType::Broadcast);
  f.id(expanded).expandedExtent = Extent::constant(4);
  tensor(3, {expanded, id(5, 8)});
  expr(OpKind::Broadcast, "broadcast", {t(0)}, 1).flags = {true, false};
  expr(OpKind::Squeeze, "squeeze", {t(1)}, 2).flags = {true, false};
  expr(OpKind::Expand, "expand", {t(1)}, 3);
  EXPECT_EQ(printExpr(f, f.exprs[0]),
            "T1_g_float[bS1{1}, iS2{8}]\n"
            "   = broadcast( T0_g_float[iS0{8}], flags = {true, false} )\n");
  EXPECT_EQ(printExpr(f, f.exprs[1]),
            "T2_g_float[iS3{8}]\n"
            "   = squeeze( T1_g_float[bS1{1}, iS2{8}], flags = {true, false} )\n");
  EXPECT_EQ(printExpr(f, f.exprs[2]), "T3_g_float[bS4{1 ex 4}, iS5{8}]\n"
                                      "   = expand( T1_g_float[bS1{1}, iS2{8}] )\n");
}

TEST_F(PrinterTest, ReductionWithItsAttributes) {
  tensor(0, {id(0, 4), id(1, 8)}, DeviceMesh::linear({0, 1}));
  tensor(1, {id(2, 4), id(3, 8, IterType::Reduction, ParallelType::DIDx)},
         DeviceMesh::linear({0, 1}));
  expr(OpKind::Reduction, "reduction", {t(0)}, 1).attrs = {
      {"op", "add"}, {"initial value", "float(0)"}, {"allreduce", "false"}};
  EXPECT_EQ(printExpr(f, f.exprs[0]),
            "T1_g_float[iS2{4}, rdeviceIdx.x3{8}] (DeviceMesh{0 1})\n"
            "   = reduction( T0_g_float[iS0{4}, iS1{8}] (DeviceMesh{0 1}), op = add, "
            "initial value = float(0), allreduce = false )\n");
}

TEST_F(PrinterTest, ReshapeIsOneLineWithRootDomainTransforms) {
  tensor(0, {id(0, 2), id(1, 3)});
  id(2, 2);
  id(3, 3);
  id(4, 6);
  f.id(4).rfactor = true;
  merge(2, 3, 4);
  TensorView &out = tensor(1, {4});
  out.root = {2, 3};
  expr(OpKind::Reshape, "reshape", {t(0)}, 1);
  EXPECT_EQ(printExpr(f, f.exprs[0]),
            "T1_g_float[iS4{6}rf] = reshape( T0_g_float[iS0{2}, iS1{3}] )\n");
  EXPECT_EQ(printTransforms(f, f.tensor(1)), "T1_g_float[iS4{6}rf]\n"
                                             "  root domain: (iS2{2}, iS3{3})\n"
                                             "    Merge: iS2{2} and iS3{3} -> iS4{6}rf\n"
                                             "  logical domain: (iS4{6}rf)\n"
                                             "  contiguity: t\n"
                                             "  loop domain: (iS4{6}rf)\n");
}

TEST_F(PrinterTest, PermuteAndSegmenterSet) {
  tensor(0, {id(0, 2), id(1, 3)});
  TensorView &permuted = tensor(1, {id(3, 3), id(2, 2)});
  permuted.root = {2, 3};
  tensor(2, {id(4, 2), id(5, 3)});
  expr(OpKind::Permute, "Set", {t(0)}, 1);
  expr(OpKind::SegmenterSet, "SegmenterSet", {t(0)}, 2);
  EXPECT_EQ(printExpr(f, f.exprs[0]), "T1_g_float[iS3{3}, iS2{2}]\n"
                                      "   = Set.Permute( T0_g_float[iS0{2}, iS1{3}] )\n");
  EXPECT_EQ(printExpr(f, f.exprs[1]), "T2_g_float[iS4{2}, iS5{3}]\n"
                                      "   = SegmenterSet( T0_g_float[iS0{2}, iS1{3}] )\n");
}

TEST_F(PrinterTest, MatmulAndLinearKeepNvFusersStraySpaces) {
  tensor(0, {id(0, 2), id(1, 4)});
  tensor(1, {id(2, 4), id(3, 3)});
  tensor(2, {id(4, 2), id(5, 3), id(6, 4, IterType::Reduction)});
  tensor(3, {id(7, 3), id(8, 4)});
  tensor(4, {id(9, 3)});
  tensor(5, {id(10, 2), id(11, 3), id(12, 4, IterType::Reduction)});
  tensor(6, {id(13, 2), id(14, 3), id(15, 4, IterType::Reduction)});
  expr(OpKind::Matmul, "matmul", {t(0), t(1)}, 2);
  expr(OpKind::Linear, "linear", {t(0), t(3), t(4)}, 5);
  expr(OpKind::Linear, "linear", {t(0), t(3)}, 6);
  EXPECT_EQ(printExpr(f, f.exprs[0]), "T2_g_float[iS4{2}, iS5{3}, rS6{4}]\n"
                                      "   = matmul(T0_g_float[iS0{2}, iS1{4}],\n"
                                      "            T1_g_float[iS2{4}, iS3{3}])\n");
  EXPECT_EQ(printExpr(f, f.exprs[1]), "T5_g_float[iS10{2}, iS11{3}, rS12{4}]\n"
                                      "   = linear(T0_g_float[iS0{2}, iS1{4}],\n"
                                      "            T3_g_float[iS7{3}, iS8{4}]  ,\n"
                                      "          T4_g_float[iS9{3}]  )\n");
  EXPECT_EQ(printExpr(f, f.exprs[2]), "T6_g_float[iS13{2}, iS14{3}, rS15{4}]\n"
                                      "   = linear(T0_g_float[iS0{2}, iS1{4}],\n"
                                      "            T3_g_float[iS7{3}, iS8{4}]  )\n");
}

TEST_F(PrinterTest, TransformLinesAllocationAndContiguity) {
  id(0, Extent::symbol("i0"));
  id(1, Extent::ceilDiv(Extent::symbol("i0"), Extent::constant(4)));
  id(2, 4, IterType::Iteration, ParallelType::TIDx);
  split(0, 1, 2, 4);
  id(3, 1, IterType::Broadcast);
  id(4, Extent::ceilDiv(Extent::symbol("i0"), Extent::constant(4)));
  merge(1, 3, 4);
  TensorView &tv = tensor(0, {0, 3});
  tv.loop = {4, 2};
  tv.allocation = {3, 0};
  tv.contiguity = {Contiguity::None, Contiguity::False};
  tv.memory = MemoryType::Local;
  tv.caPos = 1;
  EXPECT_EQ(printTransforms(f, tv),
            "T0_l_float[iS4{( ceilDiv(i0, 4) )}, ithreadIdx.x2{4}] ca_pos( 1 )\n"
            "  logical domain: (iS0{i0}, bS3{1})\n"
            "  allocation domain: (bS3{1}, iS0{i0})\n"
            "  contiguity: n f\n"
            "    Split: iS0{i0} by factor 4 -> iS1{( ceilDiv(i0, 4) )}, ithreadIdx.x2{4}\n"
            "    Merge: iS1{( ceilDiv(i0, 4) )} and bS3{1} -> iS4{( ceilDiv(i0, 4) )}\n"
            "  loop domain: (iS4{( ceilDiv(i0, 4) )}, ithreadIdx.x2{4})\n");
}

TEST_F(PrinterTest, KernelMathBlockHasNoTransformPrinter) {
  twoVectors();
  f.tensor(0).hasTransformInfo = false;
  f.tensor(1).hasTransformInfo = false;
  f.kind = BlockKind::KernelMath;
  f.inputs = {0};
  f.outputs = {1};
  expr(OpKind::Unary, "relu", {t(0)}, 1);
  EXPECT_EQ(printFusion(f), "Inputs:\n"
                            "  T0_g_float[iS0{8}]\n"
                            "Outputs:\n"
                            "  T1_g_float[iS1{8}]\n"
                            "\n"
                            "%kernel_math {\n"
                            "T1_g_float[iS1{8}]\n"
                            "   = relu(T0_g_float[iS0{8}]);\n"
                            "} // %kernel_math \n");
}

TEST_F(PrinterTest, HostIrWithCommunications) {
  DeviceMesh mesh = DeviceMesh::linear({0, 1});
  f.kind = BlockKind::HostIr;
  tensor(0, {id(0, 2, IterType::Iteration, ParallelType::DIDx), id(1, 4)}, mesh).hasTransformInfo =
      false;
  tensor(1, {id(2, 2), id(3, 4)}, mesh).hasTransformInfo = false;
  tensor(2, {id(4, 2), id(5, 4)}, mesh).hasTransformInfo = false;
  f.inputs = {0};
  f.outputs = {2};
  Expr &ag = expr(OpKind::Communication, "Allgather", {t(0)}, 1);
  ag.communication = CommunicationInfo{0, CollectiveType::Allgather, {0, 1}, std::nullopt, "NCCL"};
  expr(OpKind::Unary, "-", {t(1)}, 2);
  Expr &bc = expr(OpKind::Communication, "Broadcast", {t(2)}, 1);
  bc.communication = CommunicationInfo{7, CollectiveType::Broadcast, {1, 0}, 0, ""};
  EXPECT_EQ(printFusion(f),
            "%HostIrContainer { (T0_g_float[ideviceIdx.x0{2}, iS1{4}] (DeviceMesh{0 1})) -> "
            "(T2_g_float[iS4{2}, iS5{4}] (DeviceMesh{0 1})) :\n"
            "  Communication 0 (type=Allgather, team=(0 1), input=T0_g_float[ideviceIdx.x0{2}, "
            "iS1{4}] (DeviceMesh{0 1}), output=T1_g_float[iS2{2}, iS3{4}] (DeviceMesh{0 1}), "
            "backend=NCCL)\n"
            "  T2_g_float[iS4{2}, iS5{4}] (DeviceMesh{0 1})\n"
            "     = -T1_g_float[iS2{2}, iS3{4}] (DeviceMesh{0 1});\n"
            "  Communication 7 (type=Broadcast, team=(1 0), root=0, input=T2_g_float[iS4{2}, "
            "iS5{4}] (DeviceMesh{0 1}), output=T1_g_float[iS2{2}, iS3{4}] (DeviceMesh{0 1}))\n"
            "} // %HostIrContainer\n");
}

TEST_F(PrinterTest, TransformsOnlyFusionPrintsEntriesOnly) {
  f.kind = BlockKind::TransformsOnly;
  tensor(0, {id(0, 4)});
  EXPECT_EQ(printFusion(f), "T0_g_float[iS0{4}]\n"
                            "  logical domain: (iS0{4})\n"
                            "  contiguity: t\n"
                            "  loop domain: (iS0{4})\n");
}

TEST_F(PrinterTest, UnexpectedOperandCountPrintsGenerically) {
  twoVectors();
  expr(OpKind::Binary, "+", {t(0)}, 1);
  expr(OpKind::Other, "pad", {t(0), Operand::ofScalar("{0, 1}")}, 1);
  EXPECT_EQ(printExpr(f, f.exprs[0]), "T1_g_float[iS1{8}]\n   = +( T0_g_float[iS0{8}] )\n");
  EXPECT_EQ(printExpr(f, f.exprs[1]),
            "T1_g_float[iS1{8}]\n   = pad( T0_g_float[iS0{8}], {0, 1} )\n");
}

} // namespace
} // namespace shardcheck
