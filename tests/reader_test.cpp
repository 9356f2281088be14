// Tests of the nvFuser dump reader (ir/reader/DumpReader.h).
//
// Two tables: well-formed dumps in every block kind and print style of
// 2023-2026 (each with a check of concrete parsed facts), and malformed dumps
// (each with the expected message substring and its exact LINE:COL). The seed
// dump is read from corpus/seed_kernel_dump.txt and, so that its facts are
// checked even without the corpus, from a verbatim copy of its %kernel block.
//
// Mutation robustness is in reader_robustness_test.cpp; golden verdicts over
// the corpus in golden_test.cpp.
#include "ir/Json.h"
#include "ir/reader/DumpReader.h"
#include "tests/TestPaths.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace shardcheck {
namespace {

Document read(const std::string &text) {
  return readDocument(text, "t.txt");
}

// --- Helpers for checks. ---

const Fusion &only(const Document &d) {
  EXPECT_EQ(d.fusions.size(), 1u);
  return d.fusions.at(0);
}

std::vector<std::string> loopStrs(const Fusion &f, TensorNum t) {
  std::vector<std::string> r;
  for (IdNum id : f.tensor(t).loop)
    r.push_back(f.id(id).str());
  return r;
}

std::vector<std::string> idStrs(const Fusion &f, const std::vector<IdNum> &ids) {
  std::vector<std::string> r;
  for (IdNum id : ids)
    r.push_back(f.id(id).str());
  return r;
}

std::vector<OpKind> opKinds(const Fusion &f) {
  std::vector<OpKind> r;
  for (const Expr &e : f.exprs)
    r.push_back(e.kind);
  return r;
}

std::vector<std::string> ops(const Fusion &f) {
  std::vector<std::string> r;
  for (const Expr &e : f.exprs)
    r.push_back(e.op);
  return r;
}

/// The seed's %kernel block (shared/seed/000_4260116b4c1ace58.txt), verbatim.
const char *kSeedKernel = R"DUMP(%kernel {
T3_l_float[ iblockIdx.x26{1}, iUS27{1}, ithreadIdx.x25{128} ] ca_pos( 2 ) (DeviceMesh{0 1})
   = Set( T0_g_float[ iS30{1}, iS31{1}, iS29{128} ] (DeviceMesh{0 1}), cache_op=Streaming )
T4_l_float[ bblockIdx.x18{1}, bUS19{1}, bthreadIdx.x17{128} ] (DeviceMesh{0 1})
   = Set( T1_g_float[ bdeviceIdx.x22{1}, bdeviceIdx.x23{1}, bdeviceIdx.x21{128} ] (DeviceMesh{0 1}), cache_op=AllLevels )
T5_l_float[ iblockIdx.x14{1}, iUS15{1}, ithreadIdx.x13{128} ] ca_pos( 3 ) produce_pos( 2 ) (DeviceMesh{0 1})
   = T3_l_float[ iblockIdx.x26{1}, iUS27{1}, ithreadIdx.x25{128} ] ca_pos( 2 ) (DeviceMesh{0 1})
   + T4_l_float[ bblockIdx.x18{1}, bUS19{1}, bthreadIdx.x17{128} ] (DeviceMesh{0 1});
T2_g_float[ iblockIdx.x10{1}, iUS11{1}, ithreadIdx.x9{128} ] ca_pos( 2 ) produce_pos( 3 ) (DeviceMesh{0 1})
   = Set( T5_l_float[ iblockIdx.x14{1}, iUS15{1}, ithreadIdx.x13{128} ] ca_pos( 3 ) produce_pos( 2 ) (DeviceMesh{0 1}), cache_op=Streaming )

TransformPrinter :
T0_g_float[ iS30{1}, iS31{1}, iS29{128} ] (DeviceMesh{0 1})
 logical domain : (iS0{2})
 contiguity: t
  Split: iS0{2} by factor 128 -> iS28{1}, iS29{128}
  Split: iS28{1} by factor 1 -> iS30{1}, iS31{1}
 loop domain : (iS30{1}, iS31{1}, iS29{128})
T3_l_float[ iblockIdx.x26{1}, iUS27{1}, ithreadIdx.x25{128} ] ca_pos( 2 ) (DeviceMesh{0 1})
 logical domain : (iS5{2})
 contiguity: t
  Split: iS5{2} by factor 128 -> iS24{1}, ithreadIdx.x25{128}
  Split: iS24{1} by factor 1 -> iblockIdx.x26{1}, iUS27{1}
 loop domain : (iblockIdx.x26{1}, iUS27{1}, ithreadIdx.x25{128})
T1_g_float[ bdeviceIdx.x22{1}, bdeviceIdx.x23{1}, bdeviceIdx.x21{128} ] (DeviceMesh{0 1})
 logical domain : (bdeviceIdx.x1{1})
 contiguity: n
  Split: bdeviceIdx.x1{1} by factor 128 -> bdeviceIdx.x20{1}, bdeviceIdx.x21{128}
  Split: bdeviceIdx.x20{1} by factor 1 -> bdeviceIdx.x22{1}, bdeviceIdx.x23{1}
 loop domain : (bdeviceIdx.x22{1}, bdeviceIdx.x23{1}, bdeviceIdx.x21{128})
T4_l_float[ bblockIdx.x18{1}, bUS19{1}, bthreadIdx.x17{128} ] (DeviceMesh{0 1})
 logical domain : (bdeviceIdx.x6{1})
 contiguity: n
  Split: bdeviceIdx.x6{1} by factor 128 -> bdeviceIdx.x16{1}, bthreadIdx.x17{128}
  Split: bdeviceIdx.x16{1} by factor 1 -> bblockIdx.x18{1}, bUS19{1}
 loop domain : (bblockIdx.x18{1}, bUS19{1}, bthreadIdx.x17{128})
T5_l_float[ iblockIdx.x14{1}, iUS15{1}, ithreadIdx.x13{128} ] ca_pos( 3 ) produce_pos( 2 ) (DeviceMesh{0 1})
 logical domain : (iS2{2})
 contiguity: t
  Split: iS2{2} by factor 128 -> iS12{1}, ithreadIdx.x13{128}
  Split: iS12{1} by factor 1 -> iblockIdx.x14{1}, iUS15{1}
 loop domain : (iblockIdx.x14{1}, iUS15{1}, ithreadIdx.x13{128})
T2_g_float[ iblockIdx.x10{1}, iUS11{1}, ithreadIdx.x9{128} ] ca_pos( 2 ) produce_pos( 3 ) (DeviceMesh{0 1})
 logical domain : (iS7{2})
 contiguity: t
  Split: iS7{2} by factor 128 -> iS8{1}, ithreadIdx.x9{128}
  Split: iS8{1} by factor 1 -> iblockIdx.x10{1}, iUS11{1}
 loop domain : (iblockIdx.x10{1}, iUS11{1}, ithreadIdx.x9{128})
} // %kernel
)DUMP";

/// Facts the seed must yield (DESIGN/NVFUSER_DUMPS: T1 has three DIDx loop
/// IDs, all broadcast).
void checkSeed(const Document &d) {
  const Fusion &f = only(d);
  EXPECT_EQ(f.kind, BlockKind::Kernel);
  EXPECT_EQ(f.tensors.size(), 6u);
  EXPECT_EQ(f.exprs.size(), 4u);
  EXPECT_EQ(f.transforms.size(), 12u);
  EXPECT_EQ(f.inputs, (std::vector<TensorNum>{0, 1}));
  EXPECT_EQ(f.outputs, (std::vector<TensorNum>{2}));
  const TensorView &t1 = f.tensor(1);
  EXPECT_TRUE(t1.hasTransformInfo);
  ASSERT_EQ(t1.loop.size(), 3u);
  for (IdNum id : t1.loop) {
    EXPECT_EQ(f.id(id).parallel, ParallelType::DIDx);
    EXPECT_TRUE(f.id(id).isBroadcast());
  }
  EXPECT_EQ(loopStrs(f, 1), (std::vector<std::string>{"bdeviceIdx.x22{1}", "bdeviceIdx.x23{1}",
                                                      "bdeviceIdx.x21{128}"}));
  EXPECT_EQ(idStrs(f, t1.logical), (std::vector<std::string>{"bdeviceIdx.x1{1}"}));
  EXPECT_EQ(t1.contiguity, (std::vector<Contiguity>{Contiguity::None}));
  ASSERT_TRUE(t1.mesh);
  EXPECT_EQ(t1.mesh->shape(), (std::vector<int64_t>{2}));
  const Transform *split = f.definition(21);
  ASSERT_NE(split, nullptr);
  EXPECT_EQ(split->kind, Transform::Kind::Split);
  EXPECT_TRUE(split->innerSplit);
  EXPECT_EQ(split->factor, Extent::constant(128));
  EXPECT_EQ(split->inputs, (std::vector<IdNum>{1}));
  EXPECT_EQ(f.tensor(3).caPos, 2);
  EXPECT_EQ(f.tensor(5).producePos, 2);
  EXPECT_EQ(opKinds(f),
            (std::vector<OpKind>{OpKind::Set, OpKind::Set, OpKind::Binary, OpKind::Set}));
  EXPECT_EQ(f.exprs[1].attr("cache_op"), "AllLevels");
  EXPECT_EQ(f.exprs[2].op, "+");
  EXPECT_EQ(f.exprs[2].tensorInputs(), (std::vector<TensorNum>{3, 4}));
  EXPECT_EQ(f.exprs[2].loc.line, 6);
  EXPECT_EQ(f.tensor(1).loc.line, 5);
  EXPECT_EQ(f.tensor(1).loc.column, 11);
}

// --- Well-formed dumps. ---

struct GoodCase {
  const char *name;
  std::string input;
  std::function<void(const Document &)> check;
};

std::vector<GoodCase> goodCases() {
  std::vector<GoodCase> cases;

  cases.push_back({"SeedKernelVerbatim", kSeedKernel, checkSeed});

  cases.push_back({"KernelMath2026", R"(Inputs:
  T0_g_float[iS0{2}, iS1{4}, iS2{8}]
  T1_g_float[iS3{2}, iS4{4}, iS5{8}]
Outputs:
  T2_g_float[iS6{2}, iS7{4}, iS8{8}]

%kernel_math {
T2_g_float[iS6{2}, iS7{4}, iS8{8}]
   = T0_g_float[iS0{2}, iS1{4}, iS2{8}]
   + T1_g_float[iS3{2}, iS4{4}, iS5{8}];
} // %kernel_math 
)",
                   [](const Document &d) {
                     const Fusion &f = only(d);
                     EXPECT_EQ(f.kind, BlockKind::KernelMath);
                     EXPECT_EQ(f.loc.line, 1);
                     EXPECT_EQ(f.inputs, (std::vector<TensorNum>{0, 1}));
                     EXPECT_EQ(f.outputs, (std::vector<TensorNum>{2}));
                     EXPECT_EQ(f.tensors.size(), 3u);
                     EXPECT_EQ(f.ids.size(), 9u);
                     const TensorView &t2 = f.tensor(2);
                     EXPECT_FALSE(t2.hasTransformInfo);
                     EXPECT_EQ(t2.logical, t2.loop);
                     EXPECT_EQ(t2.dtype, DataType::Float);
                     EXPECT_EQ(t2.memory, MemoryType::Global);
                     EXPECT_EQ(f.id(8).extent, Extent::constant(8));
                     EXPECT_EQ(opKinds(f), (std::vector<OpKind>{OpKind::Binary}));
                   }});

  cases.push_back({"MathPreSep2024NoDtypeWithDoubleInputs", R"(Inputs:
  T0_g[ iS0{i0}, iS1{i2} ], float
  d2, double
Outputs:
  T2_g[ iS4{i0}, iS5{i2} ], float

%kernel_math {
T1_l[ iS2{i0}, iS3{i2} ]
   = T0_g[ iS0{i0}, iS1{i2} ]
   * d2;
T2_g[ iS4{i0}, iS5{i2} ]
   = (float)(T1_l[ iS2{i0}, iS3{i2} ]);
} // %kernel_math 
)",
                   [](const Document &d) {
                     const Fusion &f = only(d);
                     EXPECT_EQ(f.inputs, (std::vector<TensorNum>{0}));
                     EXPECT_EQ(f.tensor(0).dtype, DataType::Unknown);
                     EXPECT_EQ(f.id(0).extent, Extent::symbol("i0"));
                     ASSERT_EQ(f.exprs.size(), 2u);
                     EXPECT_EQ(f.exprs[0].op, "*");
                     ASSERT_EQ(f.exprs[0].inputs.size(), 2u);
                     EXPECT_EQ(f.exprs[0].inputs[1].scalar, "d2");
                     EXPECT_EQ(f.exprs[1].kind, OpKind::Cast);
                     EXPECT_EQ(f.exprs[1].op, "(float)");
                   }});

  cases.push_back({"SpacedBracketsSep2024AndZeroDim", R"(%kernel_math {
T3_g_float[ iS4{16}, iS5{128} ]
   = T0_g_float[ iS0{16}, iS1{128} ]
   + T1_g_float[ 0 ];
T4_g_float[ ]
   = Set( T2_g_double[], cache_op=Streaming )
} // %kernel_math
)",
                   [](const Document &d) {
                     const Fusion &f = only(d);
                     EXPECT_EQ(loopStrs(f, 3), (std::vector<std::string>{"iS4{16}", "iS5{128}"}));
                     EXPECT_TRUE(f.tensor(1).loop.empty());
                     EXPECT_TRUE(f.tensor(2).loop.empty());
                     EXPECT_TRUE(f.tensor(4).logical.empty());
                     EXPECT_EQ(f.tensor(2).dtype, DataType::Double);
                     // No Inputs:/Outputs: header: inferred from the exprs.
                     EXPECT_EQ(f.inputs, (std::vector<TensorNum>{0, 1, 2}));
                     EXPECT_EQ(f.outputs, (std::vector<TensorNum>{3, 4}));
                   }});

  cases.push_back({"TensorSuffixesAndDtypes", R"(%kernel {
T3_l___bfloat[iS6{8}] ca_pos( 1 ) compute_with( T5, 1 ) produce_pos( 1 ) maybe_produce_pos( 2 ) (DeviceMesh{0 1})
   = Set( T0_g___bfloat[iS0{8}] (DeviceMesh{0 1}), cache_op=Streaming )
T4_s_std::complex<float>[iS7{8}]
   = Set( T1_sym_int64_t[iS1{8}] )
T5_t_nvfuser_index_t[iS8{8}]
   = Set( T2_l___e4m3[iS2{8}] )
} // %kernel
)",
                   [](const Document &d) {
                     const Fusion &f = only(d);
                     const TensorView &t3 = f.tensor(3);
                     EXPECT_EQ(t3.caPos, 1);
                     EXPECT_EQ(t3.producePos, 1);
                     EXPECT_EQ(t3.dtype, DataType::BFloat16);
                     EXPECT_EQ(t3.memory, MemoryType::Local);
                     ASSERT_TRUE(t3.mesh);
                     EXPECT_EQ(t3.mesh->devices(), (std::vector<int64_t>{0, 1}));
                     EXPECT_EQ(f.tensor(4).dtype, DataType::ComplexFloat);
                     EXPECT_EQ(f.tensor(4).memory, MemoryType::Shared);
                     EXPECT_EQ(f.tensor(1).memory, MemoryType::Symmetric);
                     EXPECT_EQ(f.tensor(1).dtype, DataType::Int64);
                     EXPECT_EQ(f.tensor(5).memory, MemoryType::Tensor);
                     EXPECT_EQ(f.tensor(5).dtype, DataType::Index);
                     EXPECT_EQ(f.tensor(2).dtype, DataType::Float8_e4m3);
                   }});

  cases.push_back({"DeviceMeshes1D2D3DAndOldCommas", R"(%kernel_math {
T1_g_float[ideviceIdx.x1{4}] (DeviceMesh{{0 1}{2 3}})
   = Set( T0_g_float[ideviceIdx.x0{4}] (DeviceMesh{0, 1, 2, 3, }), cache_op=Streaming )
T3_g_float[ideviceIdx.z3{2}] (DeviceMesh{{{0 1}{2 3}}{{4 5}{6 7}}})
   = Set( T2_g_float[iS2{2}] (DeviceMesh{5}), cache_op=Streaming )
} // %kernel_math
)",
                   [](const Document &d) {
                     const Fusion &f = only(d);
                     EXPECT_EQ(f.tensor(0).mesh->shape(), (std::vector<int64_t>{4}));
                     EXPECT_EQ(f.tensor(1).mesh->shape(), (std::vector<int64_t>{2, 2}));
                     EXPECT_EQ(f.tensor(1).mesh->devices(), (std::vector<int64_t>{0, 1, 2, 3}));
                     EXPECT_EQ(f.tensor(3).mesh->shape(), (std::vector<int64_t>{2, 2, 2}));
                     EXPECT_EQ(f.tensor(3).mesh->devices().back(), 7);
                     EXPECT_EQ(f.tensor(2).mesh->size(), 1);
                     EXPECT_EQ(f.id(3).parallel, ParallelType::DIDz);
                   }});

  cases.push_back(
      {"IterDomainSpellings", R"(%kernel {
T1_g_float[iS10{8}]
   = Set( T0_g_float[iS0{8}, rS1{i1}, bS2{1}, sS3{4}, nS4{4}, vS5{2}, ?S6{i2}, ideviceIdx.x7{2}, ideviceIdx.y8{2}, ideviceIdx.z9{2}, iblockIdx.x11{i3}, iblockIdx.y12{4}, iblockIdx.z13{4}, ithreadIdx.x14{blockDim.x}, ithreadIdx.y15{4}, ithreadIdx.z16{4}, istreamIdx17{3}, iStreamIdx18{3}, iStream19{3}, iV20{4}, iUR21{2}, iUS22{1}, iMMA23{16}, iG24{2}, iB25{2}, iMV26{4}, iS27{2 : 10 : 8}, iS28{1 : 8}, bS29{1 ex 32}, iS30{( i0 * i1 )}rf, iS31{( ceilDiv(i3, 2) )}_p, iS32{( ( i0 * i1 ) + ( ceilDiv(i2, 4) / 2 ) )}rf_c, iS33{( max(i0, 1) )}], cache_op=Streaming )
} // %kernel
)",
       [](const Document &d) {
         const Fusion &f = only(d);
         EXPECT_EQ(f.id(1).iterType, IterType::Reduction);
         EXPECT_EQ(f.id(2).iterType, IterType::Broadcast);
         EXPECT_EQ(f.id(3).iterType, IterType::Stride);
         EXPECT_EQ(f.id(4).iterType, IterType::GatherScatter);
         EXPECT_EQ(f.id(5).iterType, IterType::VectorComponent);
         EXPECT_EQ(f.id(6).iterType, IterType::Symbolic);
         std::vector<std::pair<IdNum, ParallelType>> ptypes{{7, ParallelType::DIDx},
                                                            {8, ParallelType::DIDy},
                                                            {9, ParallelType::DIDz},
                                                            {11, ParallelType::BIDx},
                                                            {12, ParallelType::BIDy},
                                                            {13, ParallelType::BIDz},
                                                            {14, ParallelType::TIDx},
                                                            {15, ParallelType::TIDy},
                                                            {16, ParallelType::TIDz},
                                                            {17, ParallelType::Stream},
                                                            {18, ParallelType::Stream},
                                                            {19, ParallelType::Stream},
                                                            {20, ParallelType::Vectorize},
                                                            {21, ParallelType::Unroll},
                                                            {22, ParallelType::Unswitch},
                                                            {23, ParallelType::Mma},
                                                            {24, ParallelType::Group},
                                                            {25, ParallelType::Bulk},
                                                            {26, ParallelType::MisalignedVectorize},
                                                            {0, ParallelType::Serial}};
         for (auto [id, p] : ptypes)
           EXPECT_EQ(f.id(id).parallel, p) << "IterDomain " << id;
         EXPECT_EQ(f.id(14).extent, Extent::symbol("blockDim.x"));
         EXPECT_EQ(f.id(27).start, Extent::constant(2));
         EXPECT_EQ(f.id(27).stop, Extent::constant(10));
         EXPECT_EQ(f.id(27).extent, Extent::constant(8));
         EXPECT_EQ(f.id(28).start, Extent::constant(1));
         EXPECT_FALSE(f.id(28).stop);
         EXPECT_EQ(f.id(29).extent, Extent::constant(1));
         EXPECT_EQ(f.id(29).expandedExtent, Extent::constant(32));
         EXPECT_TRUE(f.id(30).rfactor);
         EXPECT_EQ(f.id(30).extent, Extent::mul(Extent::symbol("i0"), Extent::symbol("i1")));
         EXPECT_EQ(f.id(31).extent, Extent::ceilDiv(Extent::symbol("i3"), Extent::constant(2)));
         EXPECT_EQ(f.id(31).extraSuffix, "_p");
         EXPECT_EQ(f.id(32).str(), "iS32{( ( i0 * i1 ) + ( ( ceilDiv(i2, 4) ) / 2 ) )}rf_c");
         EXPECT_EQ(f.id(33).extent, Extent::symbol("max(i0, 1)"));
       }});

  cases.push_back(
      {"TransformPrinter2026TwoSpaceLabels", R"(Inputs:
  T0_g_float[ideviceIdx.x5{2}, iS6{4}, iS1{3}] (DeviceMesh{0 1})
Outputs:
  T1_g_float[iS4{24}rf] (DeviceMesh{0 1})

%kernel {
T1_g_float[iS4{24}rf] (DeviceMesh{0 1})
   = reshape( T0_g_float[ideviceIdx.x5{2}, iS6{4}, iS1{3}] (DeviceMesh{0 1}) )

TransformPrinter : 
T0_g_float[ideviceIdx.x5{2}, iS6{4}, iS1{3}] (DeviceMesh{0 1})
  logical domain: (iS0{8}, iS1{3})
  allocation domain: (iS1{3}, iS0{8})
  contiguity: t f
    Outer split: iS0{8} by factor 2 -> ideviceIdx.x5{2}, iS6{4}
  loop domain: (ideviceIdx.x5{2}, iS6{4}, iS1{3})
T1_g_float[iS4{24}rf] (DeviceMesh{0 1})
  root domain: (iS2{8}, iS3{3})
    Merge: iS2{8} and iS3{3} -> iS4{24}rf
  logical domain: (iS4{24}rf)
  contiguity: t
  loop domain: (iS4{24}rf)
} // %kernel
)",
       [](const Document &d) {
         const Fusion &f = only(d);
         const TensorView &t0 = f.tensor(0);
         EXPECT_TRUE(t0.hasTransformInfo);
         EXPECT_EQ(idStrs(f, t0.logical), (std::vector<std::string>{"iS0{8}", "iS1{3}"}));
         EXPECT_EQ(idStrs(f, t0.allocation), (std::vector<std::string>{"iS1{3}", "iS0{8}"}));
         EXPECT_FALSE(t0.hasRoot());
         EXPECT_EQ(t0.contiguity, (std::vector<Contiguity>{Contiguity::True, Contiguity::False}));
         const Transform *outer = f.definition(5);
         ASSERT_NE(outer, nullptr);
         EXPECT_FALSE(outer->innerSplit);
         EXPECT_EQ(outer->outputs, (std::vector<IdNum>{5, 6}));
         EXPECT_EQ(outer->loc.line, 15);
         EXPECT_EQ(outer->loc.column, 5);
         const TensorView &t1 = f.tensor(1);
         EXPECT_EQ(idStrs(f, t1.root), (std::vector<std::string>{"iS2{8}", "iS3{3}"}));
         EXPECT_EQ(f.definition(4)->kind, Transform::Kind::Merge);
         EXPECT_EQ(f.exprs[0].kind, OpKind::Reshape);
         EXPECT_EQ(f.exprs[0].op, "reshape");
         EXPECT_EQ(t1.domainsLoc.line, 17);
       }});

  cases.push_back({"TransformPrinterJun2024OneSpaceLabels", R"(%kernel {
T1_g_float[iS2{4}, iS3{8}]
   = Set.Permute( T0_g_float[iS0{8}, iS1{4}], cache_op=Streaming )

TransformPrinter : 
T0_g_float[iS0{8}, iS1{4}]
 logical domain : (iS0{8}, iS1{4})
 contiguity: t t
 loop domain : (iS0{8}, iS1{4})
T1_g_float[iS2{4}, iS3{8}]
 root domain : (iS3{8}, iS2{4})
 logical domain : (iS2{4}, iS3{8})
 contiguity: t t
 loop domain : (iS2{4}, iS3{8})
} // %kernel
)",
                   [](const Document &d) {
                     const Fusion &f = only(d);
                     EXPECT_EQ(f.exprs[0].kind, OpKind::Permute);
                     EXPECT_EQ(f.exprs[0].op, "Set.Permute");
                     EXPECT_EQ(f.tensor(1).root, (std::vector<IdNum>{3, 2}));
                     EXPECT_EQ(f.tensor(1).logical, (std::vector<IdNum>{2, 3}));
                     EXPECT_FALSE(f.tensor(0).hasRoot());
                   }});

  cases.push_back({"TransformPrinterPreJun2024RfactorLeaf", R"(%kernel {
T1_g[ iS4{( ceilDiv(( i0 * i1 ), 4) )}rf, iS5{4}rf ] (DeviceMesh{0, 1, })
   = view( T0_g[ iS0{i0}, iS1{i1} ] (DeviceMesh{0, 1, }) )

TransformPrinter : 
T0_g[ iS0{i0}, iS1{i1} ] (DeviceMesh{0, 1, })
 root domain : (iS0{i0}, iS1{i1})
 contiguity: 1 1
 leaf domain : (iS0{i0}, iS1{i1})
T1_g[ iS4{( ceilDiv(( i0 * i1 ), 4) )}rf, iS5{4}rf ] (DeviceMesh{0, 1, })
 root domain : (iS2{i0}, iS3{i1})
  Merge: iS2{i0} and iS3{i1} -> iS6{( i0 * i1 )}rf
  Split: iS6{( i0 * i1 )}rf by factor 4 -> iS4{( ceilDiv(( i0 * i1 ), 4) )}rf, iS5{4}rf
 rfactor domain : (iS4{( ceilDiv(( i0 * i1 ), 4) )}rf, iS5{4}rf)
 contiguity: 1 1
 leaf domain : (iS4{( ceilDiv(( i0 * i1 ), 4) )}rf, iS5{4}rf)
} // %kernel
)",
                   [](const Document &d) {
                     const Fusion &f = only(d);
                     EXPECT_EQ(f.exprs[0].kind, OpKind::Reshape);
                     EXPECT_EQ(f.exprs[0].op, "view");
                     // Old dumps print a root domain for every tensor: T0's is
                     // its logical domain.
                     EXPECT_FALSE(f.tensor(0).hasRoot());
                     EXPECT_EQ(f.tensor(0).logical, (std::vector<IdNum>{0, 1}));
                     EXPECT_EQ(f.tensor(1).root, (std::vector<IdNum>{2, 3}));
                     EXPECT_EQ(f.tensor(1).logical, (std::vector<IdNum>{4, 5}));
                     EXPECT_EQ(f.tensor(1).mesh->shape(), (std::vector<int64_t>{2}));
                     EXPECT_EQ(f.transforms.size(), 2u);
                     EXPECT_EQ(f.id(4).extent, Extent::ceilDiv(Extent::mul(Extent::symbol("i0"),
                                                                           Extent::symbol("i1")),
                                                               Extent::constant(4)));
                   }});

  cases.push_back({"TransformPrinter2023CompactNoLoopLine", R"(%kernel {
T1_g[ iS3{( ceilDiv(i0, 4) )}, iS4{4} ]
   = relu(T0_g[ iS0{i0} ]);

TransformPrinter : 
T0_g[ iS0{i0} ]
 root domain : (iS0{i0})
 contiguity: 1
T1_g[ iS3{( ceilDiv(i0, 4) )}, iS4{4} ]
 root domain : (iS2{i0})
 contiguity: 1
    Split: iS2{i0} by factor 4 -> iS3{( ceilDiv(i0, 4) )}, iS4{4}, start offset: 0, stop offset: 0
}
)",
                   [](const Document &d) {
                     const Fusion &f = only(d);
                     EXPECT_EQ(f.tensor(1).logical, (std::vector<IdNum>{2}));
                     EXPECT_EQ(f.tensor(1).loop, (std::vector<IdNum>{3, 4}));
                     EXPECT_EQ(f.definition(3)->factor, Extent::constant(4));
                     EXPECT_EQ(f.exprs[0].kind, OpKind::Unary);
                     EXPECT_EQ(f.exprs[0].op, "relu");
                   }});

  cases.push_back({"TransformPrinter2023TightParens", R"(%kernel {
T1_g[ iS2{i0}, iS3{i1} ]
   = T0_g[ iS0{i0}, iS1{i1} ]
   - T0_g[ iS0{i0}, iS1{i1} ];

TransformPrinter : 
T1_g[ iS2{i0}, iS3{i1} ]
 root domain : (iS2{i0},iS3{i1})
 contiguity: 1 1
}
)",
                   [](const Document &d) {
                     const Fusion &f = only(d);
                     EXPECT_EQ(f.tensor(1).logical, (std::vector<IdNum>{2, 3}));
                     EXPECT_TRUE(f.tensor(1).hasTransformInfo);
                     EXPECT_FALSE(f.tensor(0).hasTransformInfo);
                     EXPECT_EQ(f.exprs[0].tensorInputs(), (std::vector<TensorNum>{0, 0}));
                   }});

  cases.push_back({"ResizeSwizzlesAlternateLoop", R"(T0_g_float[iS3{6}, iS5{4}, iS6{4}, iS8{16}]
 logical domain : (iS0{8}, iS1{4}, iS2{4}, iS7{16})
 contiguity: t t t t
  Resize: iS0{8} by -1 and -1 -> iS3{6}
  Xor(2D): iS1{4} , iS2{4} -> iS5{4} , iS6{4}
  iS8{16} = Swizzle1D(iS7{16}, parallelType=TIDx)
 loop domain : (iS3{6}, iS5{4}, iS6{4}, iS8{16})
 alternate loop domain : (iS3{6}, iS5{4}, iS6{4}, iS8{16})
)",
                   [](const Document &d) {
                     const Fusion &f = only(d);
                     EXPECT_EQ(f.kind, BlockKind::TransformsOnly);
                     EXPECT_TRUE(f.exprs.empty());
                     const Transform *resize = f.definition(3);
                     EXPECT_EQ(resize->kind, Transform::Kind::Resize);
                     EXPECT_EQ(resize->left, Extent::constant(-1));
                     const Transform *xorSwizzle = f.definition(6);
                     EXPECT_EQ(xorSwizzle->kind, Transform::Kind::Swizzle2D);
                     EXPECT_EQ(xorSwizzle->detail, "Xor");
                     EXPECT_EQ(xorSwizzle->inputs, (std::vector<IdNum>{1, 2}));
                     const Transform *s1 = f.definition(8);
                     EXPECT_EQ(s1->kind, Transform::Kind::Swizzle1D);
                     EXPECT_EQ(s1->detail, "TIDx");
                     EXPECT_EQ(s1->inputs, (std::vector<IdNum>{7}));
                   }});

  cases.push_back({"LoadStoreSpellings", R"(%kernel {
T1_l_float[iS1{8}]
   = SegmenterSet( T0_g_float[iS0{8}] )
T2_s_float[iS2{8}]
   = CpAsync( T1_l_float[iS1{8}], cache_op=Global )
T3_l_float[iS3{8}]
   = LdMatrix( T2_s_float[iS2{8}] )
T4_g_float[iS4{8}] = Set( T3_l_float[iS3{8}] )
} // %kernel
)",
                   [](const Document &d) {
                     const Fusion &f = only(d);
                     EXPECT_EQ(opKinds(f),
                               (std::vector<OpKind>{OpKind::SegmenterSet, OpKind::LoadStore,
                                                    OpKind::LoadStore, OpKind::Set}));
                     EXPECT_EQ(f.exprs[1].attr("cache_op"), "Global");
                     EXPECT_EQ(f.exprs[3].loc.line, 8);
                   }});

  {
    // Every inline binary operator.
    std::string body;
    const char *operators[] = {"+", "-",  "*", "/",  "%",  "<<", ">>", "==", ">=",
                               ">", "<=", "<", "!=", "&&", "||", "&",  "|",  "^"};
    int n = 2;
    for (const char *op : operators) {
      body += "T" + std::to_string(n) + "_l_float[iS" + std::to_string(n + 10) + "{8}]\n" +
              "   = T0_g_float[iS10{8}]\n   " + op + " T1_g_float[iS11{8}];\n";
      ++n;
    }
    cases.push_back({"InlineBinaryOperators", "%kernel_math {\n" + body + "} // %kernel_math \n",
                     [ops = std::vector<std::string>(std::begin(operators), std::end(operators))](
                         const Document &d) {
                       const Fusion &f = only(d);
                       EXPECT_EQ(shardcheck::ops(f), ops);
                       for (const Expr &e : f.exprs)
                         EXPECT_EQ(e.kind, OpKind::Binary);
                     }});
  }

  cases.push_back(
      {"NamedBinaryUnaryCasts", R"(%kernel_math {
T2_l_float[iS2{8}]
   = max(T0_g_float[iS0{8}]
  , T1_g_float[iS1{8}]);
T3_l_float[iS3{8}]
   = fmaxf(T0_g_float[iS0{8}]
  , double(0));
T4_l_float[iS4{8}]
   = atan2f(T2_l_float[iS2{8}]
  , T3_l_float[iS3{8}]);
T5_l_float[iS5{8}]
   = expf(T4_l_float[iS4{8}]);
T6_l_float[iS6{8}]
   = -T5_l_float[iS5{8}];
T7_l_float[iS7{8}]
   = rsqrtf(T6_l_float[iS6{8}]);
T8_l_float[iS8{8}]
   = __to_float(T9_g___bfloat[iS9{8}]);
T10_l_float[iS10{8}]
   = __bfloat2float(T9_g___bfloat[iS9{8}]);
T11_l_float[iS11{8}]
   = pow(T10_l_float[iS10{8}]
  , 2.00000000000000000e+00);
T12_l_float[iS12{8}]
   = double(2)
   * T11_l_float[iS11{8}];
} // %kernel_math 
)",
       [](const Document &d) {
         const Fusion &f = only(d);
         EXPECT_EQ(ops(f),
                   (std::vector<std::string>{"max", "fmaxf", "atan2f", "expf", "-", "rsqrtf",
                                             "__to_float", "__bfloat2float", "pow", "*"}));
         EXPECT_EQ(opKinds(f),
                   (std::vector<OpKind>{OpKind::Binary, OpKind::Binary, OpKind::Binary,
                                        OpKind::Unary, OpKind::Unary, OpKind::Unary, OpKind::Cast,
                                        OpKind::Cast, OpKind::Binary, OpKind::Binary}));
         EXPECT_EQ(f.exprs[1].inputs[1].scalar, "double(0)");
         EXPECT_EQ(f.exprs[8].inputs[1].scalar, "2.00000000000000000e+00");
         EXPECT_EQ(f.exprs[9].inputs[0].scalar, "double(2)");
         EXPECT_EQ(f.exprs[9].tensorInputs(), (std::vector<TensorNum>{11}));
       }});

  cases.push_back({"WhereClampAndScalarStatements", R"(%kernel_math {
i23 = 0 + 768;
b5 = i3 == 1;
T3_l_float[iS3{8}]
   = where(T0_g_bool[iS0{8}]
  , T1_g_float[iS1{8}]
  , float(0));
T4_l_float[iS4{8}]
   = clamp(T3_l_float[iS3{8}]
  , double(-1)
  , double(1));
} // %kernel_math 
)",
                   [](const Document &d) {
                     const Fusion &f = only(d);
                     ASSERT_EQ(f.exprs.size(), 2u);
                     EXPECT_EQ(f.exprs[0].kind, OpKind::Where);
                     EXPECT_EQ(f.exprs[0].tensorInputs(), (std::vector<TensorNum>{0, 1}));
                     EXPECT_EQ(f.exprs[0].inputs.size(), 3u);
                     EXPECT_EQ(f.exprs[1].kind, OpKind::Ternary);
                     EXPECT_EQ(f.tensor(0).dtype, DataType::Bool);
                   }});

  cases.push_back({"BroadcastSqueezeExpandReduction", R"(%kernel_math {
T1_l_float[bS2{1}, iS3{8}]
   = broadcast( T0_g_float[iS1{8}], flags = {true, false} )
T2_l_float[bS4{1}, iS5{8}]
   = broadcast( T0_g_float[iS1{8}] )
T3_l_float[iS6{8}]
   = squeeze( T1_l_float[bS2{1}, iS3{8}], flags = {true, false} )
T4_l_float[bS7{1 ex 4}, iS8{8}]
   = expand( T1_l_float[bS2{1}, iS3{8}] )
T5_l_float[bS9{1 ex 5}, iS10{8}]
   = expand( T1_l_float[bS2{1}, iS3{8}], {5, 8} )
T6_l_float[rS11{8}]
   = reduction( T0_g_float[iS1{8}], op = add, initial value = float(0), allreduce = false )
} // %kernel_math 
)",
                   [](const Document &d) {
                     const Fusion &f = only(d);
                     EXPECT_EQ(
                         opKinds(f),
                         (std::vector<OpKind>{OpKind::Broadcast, OpKind::Broadcast, OpKind::Squeeze,
                                              OpKind::Expand, OpKind::Expand, OpKind::Reduction}));
                     EXPECT_EQ(f.exprs[0].flags, (std::vector<bool>{true, false}));
                     EXPECT_TRUE(f.exprs[1].flags.empty());
                     EXPECT_EQ(f.exprs[2].flags, (std::vector<bool>{true, false}));
                     EXPECT_EQ(f.exprs[4].attr("arg1"), "{5, 8}");
                     const Expr &r = f.exprs[5];
                     EXPECT_EQ(r.attr("op"), "add");
                     EXPECT_EQ(r.attr("initial value"), "float(0)");
                     EXPECT_EQ(r.attr("allreduce"), "false");
                     EXPECT_TRUE(f.id(11).isReduction());
                     EXPECT_EQ(f.id(7).expandedExtent, Extent::constant(4));
                   }});

  cases.push_back({"MatmulLinearWithStraySpaces", R"(%kernel {
T2_g_float[iS4{4}, iS5{8}, rS6{16}]
   = matmul(T0_g_float[iS0{4}, iS1{16}],
            T1_g_float[iS2{16}, iS3{8}])
T5_g_float[iS11{4}, iS12{6}, rS13{16}]
   = linear(T0_g_float[iS0{4}, iS1{16}],
            T3_g_float[iS7{6}, iS8{16}]  ,
          T4_g_float[iS9{6}]  )
T6_g_float[iS14{4}, iS15{6}, rS16{16}]
   = linear(T0_g_float[iS0{4}, iS1{16}],
            T3_g_float[iS7{6}, iS8{16}]  )
} // %kernel
)",
                   [](const Document &d) {
                     const Fusion &f = only(d);
                     EXPECT_EQ(opKinds(f), (std::vector<OpKind>{OpKind::Matmul, OpKind::Linear,
                                                                OpKind::Linear}));
                     EXPECT_EQ(f.exprs[1].tensorInputs(), (std::vector<TensorNum>{0, 3, 4}));
                     EXPECT_EQ(f.exprs[2].tensorInputs(), (std::vector<TensorNum>{0, 3}));
                   }});

  cases.push_back({"OtherOpsPadCatSliceSelectFullIotaSdpa", R"(%kernel_math {
T1_l_float[iS2{10}]
   = pad( T0_g_float[iS0{8}], {1, 1} )
T2_l_float[iS3{18}]
   = cat( T1_l_float[iS2{10}], T0_g_float[iS0{8}], 0 )
T3_l_float[iS4{4}]
   = slice( T0_g_float[iS0{8}], { {0, 4, 1} } )
T4_l_float[]
   = select( T0_g_float[iS0{8}], axis = iS0{8}, index = i5 )
T5_l_float[iS5{8}]
    = full({8}, float(0));
T6_l_int64_t[iS6{8}]
    = iota(8, 0, 1, int64_t);
T10_g_float[iS10{2}, iS11{4}],
T11_g_float[iS12{2}, iS13{4}],
T12_g_int64_t[],
T13_g_int64_t[]
   = sdpa(T7_g_float[iS7{2}, iS14{4}],
          T8_g_float[iS8{2}, iS15{4}],
          T9_g_float[iS9{2}, iS16{4}],
          dropout_p = double(0),
          is_causal = false   )
} // %kernel_math 
)",
                   [](const Document &d) {
                     const Fusion &f = only(d);
                     EXPECT_EQ(ops(f), (std::vector<std::string>{"pad", "cat", "slice", "select",
                                                                 "full", "iota", "sdpa"}));
                     for (const Expr &e : f.exprs)
                       EXPECT_EQ(e.kind, OpKind::Other) << e.op;
                     EXPECT_EQ(f.exprs[1].tensorInputs(), (std::vector<TensorNum>{1, 0}));
                     EXPECT_EQ(f.exprs[3].attr("axis"), "iS0{8}");
                     EXPECT_TRUE(f.exprs[4].tensorInputs().empty());
                     EXPECT_EQ(f.exprs[6].outputs, (std::vector<TensorNum>{10, 11, 12, 13}));
                     EXPECT_EQ(f.exprs[6].tensorInputs(), (std::vector<TensorNum>{7, 8, 9}));
                     EXPECT_EQ(f.exprs[6].attr("is_causal"), "false");
                   }});

  // Pointwise only by name (ir/PointwiseOps.h), never by operand count: an
  // unlisted op such as cumsum reads as Other, which the checker reports as
  // unsupported instead of mapping it positionally (issue 12, finding 8).
  cases.push_back(
      {"PointwiseKindsOnlyForListedNames", R"(%kernel_math {
T1_l_float[iS1{8}]
   = cumsum(T0_g_float[iS0{8}]);
T2_l_float[iS2{8}]
   = relu(T0_g_float[iS0{8}]);
T3_l_float[iS3{8}]
   = expf(T2_l_float[iS2{8}]);
T4_l_float[iS4{8}]
   = T2_l_float[iS2{8}]
   + T3_l_float[iS3{8}];
T5_l_float[iS5{8}]
   = clamp(T4_l_float[iS4{8}]
  , double(-1)
  , double(1));
T6_l_float[iS6{8}]
   = frobnicate(T4_l_float[iS4{8}], T5_l_float[iS5{8}]);
T7_l_float[iS7{8}]
   = complex(T4_l_float[iS4{8}], T5_l_float[iS5{8}]);
T8_l_float[iS8{8}]
   = cumsumf(T0_g_float[iS0{8}]);
T9_l_float[iS9{8}]
   = gelu(T0_g_float[iS0{8}], approximate = tanh);
T10_l_float[iS10{8}]
   = add(T0_g_float[iS0{8}], T2_l_float[iS2{8}]);
T11_l_float[iS11{8}]
   = -T0_g_float[iS0{8}];
} // %kernel_math 
)",
       [](const Document &d) {
         const Fusion &f = only(d);
         EXPECT_EQ(ops(f),
                   (std::vector<std::string>{"cumsum", "relu", "expf", "+", "clamp", "frobnicate",
                                             "complex", "cumsumf", "gelu", "add", "-"}));
         EXPECT_EQ(opKinds(f), (std::vector<OpKind>{OpKind::Other, OpKind::Unary, OpKind::Unary,
                                                    OpKind::Binary, OpKind::Ternary, OpKind::Other,
                                                    OpKind::Other, OpKind::Other, OpKind::Other,
                                                    OpKind::Binary, OpKind::Unary}));
         EXPECT_EQ(f.exprs[0].tensorInputs(), (std::vector<TensorNum>{0}));
         EXPECT_EQ(f.exprs[4].inputs.size(), 3u);
         EXPECT_EQ(f.exprs[8].attr("approximate"), "tanh");
       }});

  cases.push_back(
      {"HostIrCommunicationsAndSkippedStatements",
       R"(%HostIrContainer { (T0_g_float[ideviceIdx.x0{2}, iS1{8}] (DeviceMesh{0 1})) -> (T1_g_float[iS2{2}, iS3{8}] (DeviceMesh{0 1})) :
  T1_g_float[iS2{2}, iS3{8}] (DeviceMesh{0 1}) = ALLOCATE(buffer=T1_g_float[iS2{2}, iS3{8}] (DeviceMesh{0 1}), mem_type=global, size=16, zero_init=false, resets_to_zero=false)
  Stream 0x174e5c80 = GetCurrentStream()
  FOR i535 from 0 to 3:
    SetCurrentStream(Stream i535)
    Communication 7 (type=Allgather, team=(0 1), input=T0_g_float[ideviceIdx.x0{2}, iS1{8}] (DeviceMesh{0 1}), output=T1_g_float[iS2{2}, iS3{8}] (DeviceMesh{0 1}), backend=NCCL)
    Wait(Communication 7)
    Synchronize(Stream 0x174e5c80)
  Communication 9 (type=Gather, team=(1 0), root=1, input=T0_g_float[ideviceIdx.x0{2}, iS1{8}] (DeviceMesh{0 1}), output=T4_g_float[iS4{2}, iS5{8}] (DeviceMesh{1}), backend=UCC)
  P2PCommunication 11 (type=send, buffer=T0_g_float[ideviceIdx.x0{2}, iS1{8}] (DeviceMesh{0 1}), peer=1, backend=NCCL)
  PostOnStream (HostUnit0, Inputs:{T0_g_float[ideviceIdx.x0{2}, iS1{8}] (DeviceMesh{0 1}), }, Outputs:{T5_g_float[iS6{2}, iS7{8}] (DeviceMesh{0 1}), })

HostUnit0: Inputs={T0_g_float[ideviceIdx.x0{2}, iS1{8}] (DeviceMesh{0 1}), } -> Outputs={T5_g_float[iS6{2}, iS7{8}] (DeviceMesh{0 1}), }
%kernel {
T5_g_float[iS6{2}, iS7{8}] (DeviceMesh{0 1})
   = relu(T0_g_float[ideviceIdx.x0{2}, iS1{8}] (DeviceMesh{0 1}));
} // %kernel

} // %HostIrContainer
)",
       [](const Document &d) {
         const Fusion &f = only(d);
         EXPECT_EQ(f.kind, BlockKind::HostIr);
         EXPECT_EQ(f.inputs, (std::vector<TensorNum>{0}));
         EXPECT_EQ(f.outputs, (std::vector<TensorNum>{1}));
         ASSERT_EQ(f.exprs.size(), 3u);
         const Expr &ag = f.exprs[0];
         EXPECT_EQ(ag.kind, OpKind::Communication);
         EXPECT_EQ(ag.op, "Allgather");
         EXPECT_EQ(ag.tensorInputs(), (std::vector<TensorNum>{0}));
         EXPECT_EQ(ag.outputs, (std::vector<TensorNum>{1}));
         ASSERT_TRUE(ag.communication);
         EXPECT_EQ(ag.communication->number, 7);
         EXPECT_EQ(ag.communication->type, CollectiveType::Allgather);
         EXPECT_EQ(ag.communication->team, (std::vector<int64_t>{0, 1}));
         EXPECT_FALSE(ag.communication->root);
         EXPECT_EQ(ag.communication->backend, "NCCL");
         EXPECT_EQ(ag.loc.line, 6);
         EXPECT_EQ(ag.loc.column, 5);
         const Expr &g = f.exprs[1];
         EXPECT_EQ(g.communication->type, CollectiveType::Gather);
         EXPECT_EQ(g.communication->team, (std::vector<int64_t>{1, 0}));
         EXPECT_EQ(g.communication->root, 1);
         EXPECT_EQ(g.communication->backend, "UCC");
         EXPECT_EQ(f.tensor(4).mesh->devices(), (std::vector<int64_t>{1}));
         EXPECT_EQ(f.exprs[2].op, "relu");
       }});

  cases.push_back(
      {"HostIrJul2024OldFieldNames",
       R"(%HostIrContainer { (T0_g[ iS0{128} ] (DeviceMesh{0})) -> (T3_g[ iS3{128} ] (DeviceMesh{1})) :
  PostOnStream (HostUnit0, Inputs:{T0_g[ iS0{128} ] (DeviceMesh{0}), }, Outputs:{T1_l[ iS1{128} ] (DeviceMesh{0}), })
  Communication 3 (type=Broadcast, team=(1 0), root=0, Input=T1_l[ iS1{128} ] (DeviceMesh{0}), Output=T2_l[ iS2{128} ] (DeviceMesh{1}))
  Wait Communication 3

HostUnit0: Inputs={T0_g[ iS0{128} ] (DeviceMesh{0}), } -> Outputs={T1_g[ iS1{128} ] (DeviceMesh{0}), }
%kernel {
T1_g[ iS1{128} ] (DeviceMesh{0})
  = T0_g[ iS0{128} ] (DeviceMesh{0})
  + T0_g[ iS0{128} ] (DeviceMesh{0});
} // %kernel

} // %HostIrContainer
)",
       [](const Document &d) {
         const Fusion &f = only(d);
         ASSERT_EQ(f.exprs.size(), 2u);
         const Expr &b = f.exprs[0];
         EXPECT_EQ(b.op, "Broadcast");
         EXPECT_EQ(b.communication->root, 0);
         EXPECT_EQ(b.communication->team, (std::vector<int64_t>{1, 0}));
         EXPECT_EQ(b.communication->backend, "");
         EXPECT_EQ(b.tensorInputs(), (std::vector<TensorNum>{1}));
         EXPECT_EQ(b.outputs, (std::vector<TensorNum>{2}));
         // T1 printed as T1_l and T1_g (host unit boundary): one tensor.
         EXPECT_EQ(f.tensor(1).memory, MemoryType::Local);
         EXPECT_EQ(f.exprs[1].op, "+");
       }});

  cases.push_back({"SegmentedFusionDedupAndGroups",
                   R"(Segmented_Fusion Dump: -- Re-written complete fusion:{
Inputs:
  T0_g_float[iS0{8}]
Outputs:
  T2_g_float[iS2{8}]

%kernel_math {
T1_g_float[iS1{8}]
   = relu(T0_g_float[iS0{8}]);
T2_g_float[iS2{8}]
   = Set( T1_g_float[iS1{8}], cache_op=Streaming )
} // %kernel_math 

} // {Re-written complete fusion}
Segmented_Fusion Dump: -- fusion segments:
Segmented_Fusion{ 
groups: 
g{0}

g{1}

edges: 
e{ g{0}
 -> g{1}
(T1_g_float[iS1{8}]) }


group details:
g{(pointwise)
inputs: 
T0_g_float[iS0{8}] float
outputs: 
T1_g_float[iS1{8}] float


T1_g_float[iS1{8}]
   = relu(T0_g_float[iS0{8}]);
(0)
}

g{(expr_eval)
inputs: 
T1_g_float[iS1{8}] float
outputs: 
T2_g_float[iS2{8}] float


T2_g_float[iS2{8}]
   = Set( T1_g_float[iS1{8}], cache_op=Streaming )
(1)
}

} //Segmented_Fusion
)",
                   [](const Document &d) {
                     const Fusion &f = only(d);
                     EXPECT_EQ(f.kind, BlockKind::SegmentedFusion);
                     EXPECT_EQ(f.exprs.size(), 2u); // printed twice, kept once
                     EXPECT_EQ(f.inputs, (std::vector<TensorNum>{0}));
                     EXPECT_EQ(f.outputs, (std::vector<TensorNum>{2}));
                     ASSERT_EQ(f.groups.size(), 2u);
                     EXPECT_EQ(f.groups[0].scheduler, "pointwise");
                     EXPECT_EQ(f.groups[0].exprs, (std::vector<size_t>{0}));
                     EXPECT_EQ(f.groups[1].scheduler, "expr_eval");
                     EXPECT_EQ(f.groups[1].exprs, (std::vector<size_t>{1}));
                   }});

  cases.push_back({"SeveralBlocksLogLinesAndExpectLines",
                   R"(Fusion IR after pre-segmenter optimization passes:
// EXPECT: T0 -> T1 none proved
[ RUN      ] MultiDeviceTest.Something
Inputs:
  T0_g_float[iS0{8}]
Outputs:
  T1_g_float[iS1{8}]

%kernel_math {
  // EXPECT: this line is skipped even inside a block
T1_g_float[iS1{8}]
   = Set( T0_g_float[iS0{8}], cache_op=Streaming )
} // %kernel_math 

some unrelated output: Inputs: 3
%kernel {
T1_g_float[iS1{8}]
   = Set( T0_g_float[iS0{8}], cache_op=Streaming )
} // %kernel
[       OK ] MultiDeviceTest.Something (12 ms)
)",
                   [](const Document &d) {
                     ASSERT_EQ(d.fusions.size(), 2u);
                     EXPECT_EQ(d.fusions[0].kind, BlockKind::KernelMath);
                     EXPECT_EQ(d.fusions[1].kind, BlockKind::Kernel);
                     EXPECT_EQ(d.fusions[0].loc.line, 4);
                     EXPECT_EQ(d.fusions[1].loc.line, 16);
                     EXPECT_EQ(d.fusions[0].exprs.at(0).loc.line, 11);
                     EXPECT_EQ(d.file, "t.txt");
                   }});

  cases.push_back({"TransformsOnlyFollowingBlockAttaches", R"(%kernel_math {
T1_g_float[ideviceIdx.x2{2}, iS3{4}] (DeviceMesh{0 1})
   = Set( T0_g_float[iS0{8}] (DeviceMesh{0 1}), cache_op=Streaming )
} // %kernel_math 

T1_g_float[ideviceIdx.x2{2}, iS3{4}] (DeviceMesh{0 1})
 logical domain : (iS1{8})
 contiguity: t
  Outer split: iS1{8} by factor 2 -> ideviceIdx.x2{2}, iS3{4}
 loop domain : (ideviceIdx.x2{2}, iS3{4})
)",
                   [](const Document &d) {
                     const Fusion &f = only(d);
                     EXPECT_EQ(f.kind, BlockKind::KernelMath);
                     EXPECT_TRUE(f.tensor(1).hasTransformInfo);
                     EXPECT_FALSE(f.tensor(0).hasTransformInfo);
                     EXPECT_EQ(f.tensor(1).logical, (std::vector<IdNum>{1}));
                     EXPECT_EQ(f.definition(2)->innerSplit, false);
                     EXPECT_EQ(f.tensor(1).domainsLoc.line, 6);
                   }});

  cases.push_back({"TransformsOnlyStandaloneAfterUnrelatedBlock", R"(%kernel_math {
T1_g_float[iS1{8}]
   = Set( T0_g_float[iS0{8}], cache_op=Streaming )
} // %kernel_math 
T7_g_float[iS9{8}]
 logical domain : (iS9{8})
 contiguity: t
 loop domain : (iS9{8})
)",
                   [](const Document &d) {
                     ASSERT_EQ(d.fusions.size(), 2u);
                     const Fusion &t = d.fusions[1];
                     EXPECT_EQ(t.kind, BlockKind::TransformsOnly);
                     EXPECT_TRUE(t.exprs.empty());
                     EXPECT_TRUE(t.inputs.empty());
                     EXPECT_EQ(t.tensors.size(), 1u);
                     EXPECT_EQ(t.loc.line, 5);
                   }});

  cases.push_back({"CrlfLineEndingsAndBareKernelClose",
                   "%kernel {\r\nT1_g_float[iS1{8}]\r\n"
                   "   = Set( T0_g_float[iS0{8}] )\r\n}\r\n",
                   [](const Document &d) {
                     const Fusion &f = only(d);
                     EXPECT_EQ(f.exprs.size(), 1u);
                     EXPECT_EQ(f.inputs, (std::vector<TensorNum>{0}));
                     EXPECT_EQ(f.outputs, (std::vector<TensorNum>{1}));
                   }});

  cases.push_back(
      {"ByteOrderMarkAndTabs",
       "\xEF\xBB\xBF%kernel {\nT1_g_float[iS1{8}]\n\t= Set(\tT0_g_float[iS0{8}] )\n} // %kernel\n",
       [](const Document &d) {
         const Fusion &f = only(d);
         EXPECT_EQ(f.exprs.size(), 1u);
         EXPECT_EQ(f.loc.column, 4);
       }});

  cases.push_back({"SymbolicMergeAndBroadcastLoopIds", R"(%kernel {
T1_g_float[ideviceIdx.x4{2}, iS5{( ceilDiv(( i0 * i1 ), 2) )}, bS6{1}]
   = Set( T0_g_float[iS0{i0}, iS1{i1}], cache_op=Streaming )

TransformPrinter :
T1_g_float[ideviceIdx.x4{2}, iS5{( ceilDiv(( i0 * i1 ), 2) )}, bS6{1}]
 logical domain : (iS2{i0}, iS3{i1})
 contiguity: t t
  Merge: iS2{i0} and iS3{i1} -> iS7{( i0 * i1 )}
  Outer split: iS7{( i0 * i1 )} by factor 2 -> ideviceIdx.x4{2}, iS5{( ceilDiv(( i0 * i1 ), 2) )}
 loop domain : (ideviceIdx.x4{2}, iS5{( ceilDiv(( i0 * i1 ), 2) )}, bS6{1})
} // %kernel
)",
                   [](const Document &d) {
                     const Fusion &f = only(d);
                     EXPECT_EQ(f.definition(7)->kind, Transform::Kind::Merge);
                     EXPECT_EQ(f.definition(7)->inputs, (std::vector<IdNum>{2, 3}));
                     // bS6 is a loop-only broadcast (TensorDomain::broadcast).
                     EXPECT_EQ(f.definition(6), nullptr);
                     EXPECT_EQ(f.tensor(1).loop.size(), 3u);
                   }});

  return cases;
}

class ReaderGood : public ::testing::TestWithParam<GoodCase> {};

TEST_P(ReaderGood, ReadsAndYieldsFacts) {
  const GoodCase &c = GetParam();
  Document d;
  try {
    d = read(c.input);
  } catch (const InputError &e) {
    FAIL() << "unexpected InputError: " << e.what();
  }
  c.check(d);
}

INSTANTIATE_TEST_SUITE_P(Styles, ReaderGood, ::testing::ValuesIn(goodCases()),
                         [](const auto &info) { return std::string(info.param.name); });

TEST(Reader, HasAtLeastTwentyFiveWellFormedCases) {
  EXPECT_GE(goodCases().size(), 25u);
}

// --- Malformed dumps. ---

struct BadCase {
  const char *name;
  std::string input;
  const char *message; ///< A substring of the InputError's message.
  int line, column;
};

/// Wraps expression lines in a `%kernel {` block (line 1 is the header).
std::string kernel(const std::string &body) {
  return "%kernel {\n" + body + "} // %kernel\n";
}

const std::string kSet = "T1_g_float[iS1{8}]\n   = Set( T0_g_float[iS0{8}], cache_op=Streaming )\n";

std::vector<BadCase> badCases() {
  return {
      {"NoBlockAtAll", "just a log line\nanother one\n", "no nvFuser block found", 1, 1},
      {"EmptyInput", "", "no nvFuser block found", 1, 1},
      {"UnclosedLoopDomain", kernel("T1_g_float[iS1{8}\n   = Set( T0_g_float[iS0{8}] )\n"),
       "expected ']' to close the loop domain of T1", 2, 18},
      {"BadIterDomainLetter", kernel("T1_g_float[xS1{8}]\n   = Set( T0_g_float[iS0{8}] )\n"),
       "expected an IterDomain like 'iS0{8}' in the loop domain of T1", 2, 12},
      {"UnknownParallelType", kernel("T1_g_float[iQ1{8}]\n   = Set( T0_g_float[iS0{8}] )\n"),
       "expected a parallel type", 2, 13},
      {"MissingIterDomainNumber", kernel("T1_g_float[iS{8}]\n   = Set( T0_g_float[iS0{8}] )\n"),
       "expected the IterDomain's number", 2, 14},
      {"UnknownDtype", kernel("T1_g_flaot[iS1{8}]\n   = Set( T0_g_float[iS0{8}] )\n"),
       "unknown data type 'flaot' in the name of T1", 2, 6},
      {"BadMemoryType", kernel("T1_q_float[iS1{8}]\n   = Set( T0_g_float[iS0{8}] )\n"),
       "expected a memory type (g, l, s, t or sym) after 'T1_'", 2, 4},
      {"UnclosedExtent", kernel("T1_g_float[iS1{8]\n   = Set( T0_g_float[iS0{8}] )\n"),
       "expected '}' to close the extent of IterDomain 1", 2, 17},
      {"HugeIdNumber",
       kernel("T1_g_float[iS99999999999999999999{8}]\n   = Set( T0_g_float[iS0{8}] )\n"),
       "is too large", 2, 14},
      {"HugeTensorNumber", kernel("T99999999999_g_float[iS1{8}]\n   = Set( T0_g_float[iS0{8}] )\n"),
       "tensor number 99999999999 is too large", 2, 2},
      {"ExtentOverflow",
       kernel("T1_g_float[iS1{( 9223372036854775807 * 2 )}]\n   = Set( T0_g_float[iS0{8}] )\n"),
       "overflows 64-bit integers", 2, 38},
      {"ExtentDivisionByZero",
       kernel("T1_g_float[iS1{( i0 / 0 )}]\n   = Set( T0_g_float[iS0{8}] )\n"),
       "division by zero in an extent", 2, 21},
      {"ExtentNestedTooDeeply",
       kernel("T1_g_float[iS1{" + std::string(40, '(') + "i0" + std::string(40, ')') +
              "}]\n   = Set( T0_g_float[iS0{8}] )\n"),
       "nested more than 32 levels deep", 2, 49},
      {"WrongCloser", "%kernel_math {\n" + kSet + "} // %kernel\n",
       "expected '} // %kernel_math' to close the block opened at t.txt:1:1", 4, 1},
      {"StrayCloser", "log\n  } // %kernel\n", "'} // %kernel' without a block it closes", 2, 3},
      {"MissingEquals", kernel("T1_g_float[iS1{8}]\nT2_g_float[iS2{8}]\n"),
       "expected '=' after the output T1, found end of line", 2, 19},
      {"BadRightHandSide", kernel("T1_g_float[iS1{8}]\n   = @foo\n"),
       "expected an expression defining T1", 3, 6},
      {"MissingSemicolon",
       kernel("T2_g_float[iS2{8}]\n   = T0_g_float[iS0{8}]\n   + T1_g_float[iS1{8}]\n"),
       "expected ';' to end the binary expression", 4, 24},
      {"MissingCloseParen",
       kernel("T1_g_float[iS1{8}]\n   = Set( T0_g_float[iS0{8}], cache_op=Streaming\n"),
       "expected ',' or ')' in the arguments of Set, found end of line", 3, 49},
      {"SetWithTwoTensors",
       kernel("T2_g_float[iS2{8}]\n   = Set( T0_g_float[iS0{8}], T1_g_float[iS1{8}] )\n"),
       "'Set' takes one tensor operand, found 2 operand(s)", 3, 6},
      {"TrailingGarbage", kernel("T1_g_float[iS1{8}]\n   = Set( T0_g_float[iS0{8}] ) extra\n"),
       "expected end of line after the statement defining T1, found 'extra'", 3, 32},
      {"UnexpectedLineInKernel", kernel("what is this\n"),
       "expected an expression, 'TransformPrinter :' or '} // %kernel'", 2, 1},
      {"ConflictingIterDomain",
       kernel(kSet + "T2_g_float[iS2{8}]\n   = Set( T0_g_float[iS0{16}] )\n"),
       "IterDomain 0 is printed as 'iS0{16}' here but as 'iS0{8}' at t.txt:3:22", 5, 22},
      {"ConflictingMesh",
       kernel("T1_g_float[iS1{8}] (DeviceMesh{0 1})\n   = Set( T0_g_float[iS0{8}] (DeviceMesh{0 "
              "1}) )\n"
              "T2_g_float[iS2{8}]\n   = Set( T0_g_float[iS0{8}] (DeviceMesh{0}) )\n"),
       "T0 is printed with DeviceMesh{0} here but DeviceMesh{0 1} at t.txt:3:11", 5, 11},
      {"ConflictingDtype", kernel(kSet + "T2_g_float[iS2{8}]\n   = Set( T0_g_double[iS0{8}] )\n"),
       "T0 is printed with data type double here but float at t.txt:3:11", 5, 11},
      {"ConflictingLoopDomain",
       kernel(kSet + "T2_g_float[iS2{8}]\n   = Set( T0_g_float[iS0{8}, iS3{2}] )\n"),
       "T0 is printed with loop domain (iS0{8}, iS3{2}) here but (iS0{8}) at t.txt:3:11", 5, 11},
      {"RaggedMesh",
       kernel("T1_g_float[iS1{8}] (DeviceMesh{{0 1}{2}})\n   = Set( T0_g_float[iS0{8}] )\n"),
       "the rows of a device mesh must all have the same shape", 2, 37},
      {"EmptyMesh", kernel("T1_g_float[iS1{8}] (DeviceMesh{})\n   = Set( T0_g_float[iS0{8}] )\n"),
       "a device mesh needs at least one device", 2, 31},
      {"NegativeDeviceId",
       kernel("T1_g_float[iS1{8}] (DeviceMesh{0 -1})\n   = Set( T0_g_float[iS0{8}] )\n"),
       "expected a device id or '}' in the device mesh, found '-'", 2, 34},
      {"TransformRedefinesOutput", R"(T0_g_float[iS2{4}, iS3{2}]
 logical domain : (iS1{8})
 contiguity: t
  Split: iS1{8} by factor 2 -> iS2{4}, iS3{2}
  Outer split: iS1{8} by factor 2 -> iS2{4}, iS4{4}
 loop domain : (iS2{4}, iS3{2})
)",
       "IterDomain iS2{4} is defined by 'Split: iS1{8} -> iS2{4}, iS4{4}' here but by 'Split: "
       "iS1{8} -> iS2{4}, iS3{2}' at t.txt:4:3",
       5, 3},
      {"LoopNotDerivedFromLogical", R"(T0_g_float[iS5{4}]
 logical domain : (iS0{8})
 contiguity: t
 loop domain : (iS5{4})
)",
       "the loop domain of T0 contains iS5{4}, which is not derived from its logical domain", 4, 2},
      {"ContiguityLengthMismatch", R"(T0_g_float[iS0{8}, iS1{4}]
 logical domain : (iS0{8}, iS1{4})
 contiguity: t
)",
       "the contiguity of T0 has 1 entries, expected 2", 3, 2},
      {"BadContiguityToken", R"(T0_g_float[iS0{8}]
 logical domain : (iS0{8})
 contiguity: x
)",
       "expected 't', 'f' or 'n' in the contiguity of T0, found 'x'", 3, 14},
      {"TransformCycle", R"(T0_g_float[iS1{4}]
 logical domain : (iS0{8})
  Split: iS1{4} by factor 2 -> iS2{2}, iS3{2}
  Merge: iS2{2} and iS3{2} -> iS1{4}
 loop domain : (iS1{4})
)",
       "transforms form a cycle through IterDomain", 3, 3},
      {"SplitFactorZero", R"(T0_g_float[iS1{4}, iS2{2}]
 logical domain : (iS0{8})
  Split: iS0{8} by factor 0 -> iS1{4}, iS2{2}
)",
       "a split factor must be positive, found 0", 3, 27},
      {"MergeSameIdTwice", R"(T0_g_float[iS1{64}]
 logical domain : (iS0{8})
  Merge: iS0{8} and iS0{8} -> iS1{64}
)",
       "IterDomain 0 appears twice in 'Merge: iS0{8}, iS0{8} -> iS1{64}'", 3, 3},
      {"MissingLogicalLabel",
       kernel(kSet + "\nTransformPrinter :\nT1_g_float[iS1{8}]\n contiguity: t\n"),
       "expected 'logical domain : (...)' (or 'root domain') after the TransformPrinter header of "
       "T1",
       6, 1},
      {"DuplicateLabel", R"(T0_g_float[iS0{8}]
 logical domain : (iS0{8})
 logical domain : (iS0{8})
)",
       "a second 'logical domain' line for T0", 3, 2},
      {"DuplicateIdInDomain",
       kernel("T1_g_float[iS1{8}, iS1{8}]\n   = Set( T0_g_float[iS0{8}] )\n"),
       "IterDomain iS1{8} appears twice in the loop domain of T1", 2, 20},
      {"LoopLabelDiffersFromHeader", R"(T0_g_float[iS0{8}, iS1{4}]
 logical domain : (iS0{8}, iS1{4})
 loop domain : (iS1{4}, iS0{8})
)",
       "the loop domain of T0 is (iS1{4}, iS0{8}) but its header prints (iS0{8}, iS1{4}) at "
       "t.txt:1:1",
       3, 2},
      {"BadBroadcastFlags",
       kernel(
           "T1_g_float[bS2{1}, iS1{8}]\n   = broadcast( T0_g_float[iS0{8}], flags = {yes, no} )\n"),
       "expected 'true' or 'false' in the flags, found 'yes'", 3, 46},
      {"UnknownCollective",
       "%HostIrContainer { () -> () :\n  Communication 3 (type=Allgathr, team=(0 1))\n} // "
       "%HostIrContainer\n",
       "unknown collective type 'Allgathr'", 2, 25},
      {"CommunicationWithoutTeam",
       "%HostIrContainer { () -> () :\n  Communication 3 (type=Allgather, "
       "input=T0_g_float[iS0{8}], "
       "output=T1_g_float[iS1{8}])\n} // %HostIrContainer\n",
       "Communication 3 has no 'team=' field", 2, 3},
      {"UnknownHostStatement",
       "%HostIrContainer { () -> () :\n  Frobnicate(T0)\n} // %HostIrContainer\n",
       "expected a host IR statement", 2, 3},
      {"SegmentedExprNumberFirst",
       "Segmented_Fusion{ \ngroup details:\ng{(pointwise)\n(0)\n}\n} //Segmented_Fusion\n",
       "expected an expression before its number '(0)'", 4, 1},
      {"ErrorLineCountsExpectLines",
       "// EXPECT: T0 -> T1 none proved\n" +
           kernel("T1_g_float[iS1{8}]\n   = Set( T0_g_float[iS0{8)] )\n"),
       "expected '}' to close the extent of IterDomain 0", 4, 27},
      {"InputsListWithGarbage",
       "Inputs:\n  T0_g_float[iS0{8}] junk junk\nOutputs:\n  T1_g_float[iS1{8}]\n\n" + kernel(kSet),
       "expected end of line after a list entry, found 'junk'", 2, 27},
  };
}

class ReaderBad : public ::testing::TestWithParam<BadCase> {};

TEST_P(ReaderBad, ThrowsLocatedInputError) {
  const BadCase &c = GetParam();
  try {
    read(c.input);
    FAIL() << "no InputError for: " << c.input;
  } catch (const InputError &e) {
    const Diagnostic &d = e.diagnostic();
    EXPECT_NE(d.message.find(c.message), std::string::npos)
        << "message: " << d.message << "\nexpected to contain: " << c.message;
    EXPECT_EQ(d.loc.file, "t.txt");
    EXPECT_EQ(d.loc.line, c.line) << d.message;
    EXPECT_EQ(d.loc.column, c.column) << d.message;
  }
}

INSTANTIATE_TEST_SUITE_P(Errors, ReaderBad, ::testing::ValuesIn(badCases()),
                         [](const auto &info) { return std::string(info.param.name); });

TEST(Reader, HasAtLeastThirtyMalformedCases) {
  EXPECT_GE(badCases().size(), 30u);
}

// --- Files, JSON detection and the corpus seed. ---

TEST(Reader, SeedFromCorpus) {
  std::filesystem::path path =
      std::filesystem::path(SHARDCHECK_SOURCE_DIR) / "corpus" / "seed_kernel_dump.txt";
  if (!std::filesystem::exists(path))
    GTEST_SKIP() << path << " is not there yet";
  Document d = readDocumentFile(path.string());
  // The corpus file adds comment lines before the block: the facts are the
  // seed's, the locations shift.
  ASSERT_EQ(d.fusions.size(), 1u);
  const Fusion &f = d.fusions[0];
  EXPECT_EQ(f.tensors.size(), 6u);
  EXPECT_EQ(f.exprs.size(), 4u);
  EXPECT_EQ(loopStrs(f, 1), (std::vector<std::string>{"bdeviceIdx.x22{1}", "bdeviceIdx.x23{1}",
                                                      "bdeviceIdx.x21{128}"}));
  EXPECT_EQ(d.file, path.string());
}

TEST(Reader, UnreadableFileIsIoError) {
  try {
    readDocumentFile("/nonexistent/dir/dump.txt");
    FAIL() << "no error";
  } catch (const InputError &e) {
    EXPECT_EQ(e.diagnostic().code, "io");
    EXPECT_NE(e.diagnostic().message.find("/nonexistent/dir/dump.txt"), std::string::npos);
  }
  try {
    readDocumentFile(SHARDCHECK_SOURCE_DIR);
    FAIL() << "no error for a directory";
  } catch (const InputError &e) {
    EXPECT_EQ(e.diagnostic().code, "io");
  }
}

TEST(Reader, SyntaxAndConflictErrorCodes) {
  try {
    read(kernel("T1_g_float[iS1{8}\n"));
    FAIL();
  } catch (const InputError &e) {
    EXPECT_EQ(e.diagnostic().code, "parse");
  }
  try {
    read(kernel(kSet + "T2_g_float[iS2{8}]\n   = Set( T0_g_double[iS0{8}] )\n"));
    FAIL();
  } catch (const InputError &e) {
    EXPECT_EQ(e.diagnostic().code, "inconsistent");
  }
}

TEST(Reader, JsonTextGoesToTheJsonReader) {
  Document fromDump = read(kSeedKernel);
  std::string json = documentToJsonText(fromDump);
  Document fromJson = readDocument("\n  " + json, "t.txt");
  ASSERT_EQ(fromJson.fusions.size(), 1u);
  EXPECT_EQ(fromJson.fusions[0].tensors.size(), 6u);
  // readNvFuserDump never takes the JSON path.
  EXPECT_THROW(readNvFuserDump(json, "t.txt"), InputError);
}

} // namespace
} // namespace shardcheck
