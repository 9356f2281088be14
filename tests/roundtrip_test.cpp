// Round trips between the three forms of a fusion: nvFuser dump text, the IR
// and the JSON IR.
//
// Over every corpus file (SHARDCHECK_SOURCE_DIR/corpus, `*.txt` and `*.json`):
//   (a) dump -> IR -> JSON -> IR gives exactly the first IR (documentsEqual,
//       locations included);
//   (b) dump -> IR -> printFusion -> read gives an equivalent IR, fusion by
//       fusion (locations and transform order aside, plus the documented
//       differences of printing: see expectedAfterPrinting).
// The same print -> read check also runs on fusions built by hand, so every
// printed shape is covered even before the corpus has an example of it.
//
// Corpus files the reader rejects (negative examples) are skipped here; their
// diagnostics are the golden tests' business.
#include "ir/Json.h"
#include "ir/Printer.h"
#include "ir/reader/DumpReader.h"
#include "tests/DocumentCompare.h"
#include "tests/TestPaths.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

namespace shardcheck {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> corpusFiles() {
  std::vector<std::string> files;
  fs::path dir = fs::path(SHARDCHECK_SOURCE_DIR) / "corpus";
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    return files;
  for (const auto &entry : fs::recursive_directory_iterator(dir, ec)) {
    std::string ext = entry.path().extension().string();
    if (entry.is_regular_file() && (ext == ".txt" || ext == ".json"))
      files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

/// The corpus documents the reader accepts, with their paths.
std::vector<Document> readableCorpus(size_t *fileCount = nullptr) {
  std::vector<std::string> files = corpusFiles();
  if (fileCount)
    *fileCount = files.size();
  std::vector<Document> docs;
  for (const auto &file : files) {
    try {
      docs.push_back(readDocumentFile(file));
    } catch (const InputError &) {
      // A negative example: its error is tested by the golden tests.
    }
  }
  return docs;
}

/// What reading printFusion(f) back is expected to give, locations and
/// transform order aside. Printing is lossy only where nvFuser's current
/// format has no place for a fact:
///  - segmented and JSON fusions print as `%kernel` (kind Kernel), without
///    segment groups;
///  - `view( IN )` prints as today's `reshape( IN )`.
Fusion expectedAfterPrinting(const Fusion &original) {
  Fusion f = original;
  if (f.kind == BlockKind::SegmentedFusion || f.kind == BlockKind::Json)
    f.kind = BlockKind::Kernel;
  f.groups.clear();
  for (Expr &e : f.exprs)
    if (e.kind == OpKind::Reshape)
      e.op = "reshape";
  return f;
}

/// Prints one fusion, reads the text back and compares it with what the
/// printer promises. Returns a failure message, or empty on success.
std::string printReadBack(const Fusion &f, const std::string &file) {
  std::string text = printFusion(f);
  Document reread;
  try {
    reread = readDocument(text, file);
  } catch (const InputError &e) {
    return std::string("the printout does not read back: ") + e.what() + "\n--- printout:\n" + text;
  }
  Document expected;
  expected.file = file;
  expected.fusions = {expectedAfterPrinting(f)};
  std::string why;
  DocumentCompareOptions relaxed{/*ignoreLocations=*/true, /*ignoreTransformOrder=*/true};
  if (!documentsEqual(expected, reread, relaxed, &why))
    return "not equivalent after printing: " + why + "\n--- printout:\n" + text;
  return {};
}

// --- The corpus. ---

TEST(RoundTrip, CorpusIsReadable) {
  size_t files = 0;
  std::vector<Document> docs = readableCorpus(&files);
  // An empty corpus is fine (it is being written); once it has files, at
  // least one must read, or the round trips below would test nothing.
  if (files > 0) {
    EXPECT_GE(docs.size(), 1u) << files << " corpus files, none readable";
  }
}

TEST(RoundTrip, CorpusThroughJsonIsIdentical) {
  for (const Document &doc : readableCorpus()) {
    SCOPED_TRACE(doc.file);
    std::string json = documentToJsonText(doc);
    Document back;
    try {
      back = documentFromJsonText(json, doc.file + ".json");
    } catch (const InputError &e) {
      ADD_FAILURE() << "JSON of " << doc.file << " does not read back: " << e.what();
      continue;
    }
    std::string why;
    EXPECT_TRUE(documentsEqual(doc, back, &why)) << why;
    // readDocument recognizes JSON IR by its leading '{'.
    EXPECT_TRUE(documentsEqual(doc, readDocument(json, doc.file + ".json"), &why)) << why;
  }
}

TEST(RoundTrip, CorpusThroughPrinterIsEquivalent) {
  for (const Document &doc : readableCorpus()) {
    for (size_t i = 0; i < doc.fusions.size(); ++i) {
      SCOPED_TRACE(doc.file + ", fusion " + std::to_string(i));
      std::string failure = printReadBack(doc.fusions[i], doc.file);
      EXPECT_TRUE(failure.empty()) << failure;
    }
  }
}

// --- Fusions built by hand, one per printed shape. ---

class PrintReadBack : public ::testing::Test {
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
  void transform(Transform::Kind kind, std::vector<IdNum> in, std::vector<IdNum> out,
                 Extent factor = Extent(), bool innerSplit = true) {
    Transform t;
    t.kind = kind;
    t.inputs = std::move(in);
    t.outputs = std::move(out);
    t.factor = std::move(factor);
    t.innerSplit = innerSplit;
    f.addTransform(std::move(t));
  }
  TensorView &tensor(TensorNum number, std::vector<IdNum> logical) {
    TensorView tv;
    tv.number = number;
    tv.dtype = DataType::Float;
    tv.logical = logical;
    tv.loop = logical;
    for (IdNum n : logical)
      tv.contiguity.push_back(f.id(n).isBroadcast() ? Contiguity::None : Contiguity::True);
    tv.mesh = DeviceMesh::linear({0, 1});
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
  void expectReadsBack() {
    std::string failure = printReadBack(f, "built.txt");
    EXPECT_TRUE(failure.empty()) << failure;
  }

  Fusion f;
};

TEST_F(PrintReadBack, ShardedPointwiseKernel) {
  Extent i0 = Extent::symbol("i0");
  id(0, i0);
  id(1, 2, IterType::Iteration, ParallelType::DIDx);
  id(2, Extent::ceilDiv(i0, Extent::constant(2)));
  transform(Transform::Kind::Split, {0}, {1, 2}, Extent::constant(2), /*innerSplit=*/false);
  tensor(0, {0}).loop = {1, 2};
  id(3, 1, IterType::Broadcast, ParallelType::DIDx);
  tensor(1, {3});
  id(4, i0);
  id(5, 2, IterType::Iteration, ParallelType::DIDx);
  id(6, Extent::ceilDiv(i0, Extent::constant(2)));
  transform(Transform::Kind::Split, {4}, {5, 6}, Extent::constant(2), false);
  tensor(2, {4}).loop = {5, 6};
  id(7, i0);
  TensorView &out = tensor(3, {7});
  out.memory = MemoryType::Local;
  out.caPos = 1;
  out.producePos = 1;
  id(8, i0);
  tensor(4, {8});
  f.inputs = {0, 1};
  f.outputs = {4};
  expr(OpKind::Set, "Set", {t(1)}, 2).attrs = {{"cache_op", "AllLevels"}};
  expr(OpKind::Binary, "+", {t(0), t(2)}, 3);
  expr(OpKind::Binary, "max", {t(3), Operand::ofScalar("0.0")}, 4);
  f.tensor(4).contiguity = {Contiguity::False};
  expectReadsBack();
}

TEST_F(PrintReadBack, EveryTensorOpShape) {
  tensor(0, {id(0, 4), id(1, 8)});
  tensor(1, {id(2, 4), id(3, 8)});
  tensor(2, {id(4, 4), id(5, 8)});
  tensor(3, {id(6, 4), id(7, 8)});
  f.tensor(3).dtype = DataType::Bool;
  tensor(4, {id(8, 4), id(9, 8)});
  f.tensor(4).dtype = DataType::BFloat16;
  tensor(5, {id(10, 4), id(11, 8)});
  tensor(6, {id(12, 4), id(13, 8)});
  tensor(7, {id(14, 1, IterType::Broadcast), id(15, 4), id(16, 8)});
  tensor(8, {id(17, 4), id(18, 8)});
  tensor(9, {id(19, 4), id(20, 8, IterType::Reduction)});
  IdNum expanded = id(21, 1, IterType::Broadcast);
  f.id(expanded).expandedExtent = Extent::constant(3);
  tensor(10, {expanded, id(22, 4), id(23, 8)});
  f.inputs = {0, 1};
  f.outputs = {9, 10};
  expr(OpKind::Unary, "expf", {t(0)}, 2);
  expr(OpKind::Binary, "<", {t(2), t(1)}, 3);
  expr(OpKind::Cast, "__float2bfloat", {t(2)}, 4);
  expr(OpKind::Cast, "(float)", {t(4)}, 5);
  expr(OpKind::Where, "where", {t(3), t(5), Operand::ofScalar("float(0)")}, 6);
  expr(OpKind::Broadcast, "broadcast", {t(6)}, 7).flags = {true, false, false};
  expr(OpKind::Squeeze, "squeeze", {t(7)}, 8).flags = {true, false, false};
  expr(OpKind::Reduction, "reduction", {t(8)}, 9).attrs = {
      {"op", "add"}, {"initial value", "float(0)"}, {"allreduce", "false"}};
  expr(OpKind::Expand, "expand", {t(7)}, 10);
  expectReadsBack();
}

TEST_F(PrintReadBack, ReshapePermuteMatmulLinear) {
  tensor(0, {id(0, 2), id(1, 3)});
  id(2, 2);
  id(3, 3);
  id(4, 6);
  f.id(4).rfactor = true;
  transform(Transform::Kind::Merge, {2, 3}, {4});
  tensor(1, {4}).root = {2, 3};
  id(5, 2);
  id(6, 3);
  tensor(2, {6, 5}).root = {5, 6};
  tensor(3, {id(7, 3), id(8, 4)});
  tensor(4, {id(9, 2), id(10, 4), id(11, 3, IterType::Reduction)});
  tensor(5, {id(12, 4), id(13, 3)});
  tensor(6, {id(14, 4)});
  tensor(7, {id(15, 2), id(16, 4), id(17, 3, IterType::Reduction)});
  tensor(8, {id(18, 2), id(19, 4), id(20, 3, IterType::Reduction)});
  f.inputs = {0, 3, 5, 6};
  f.outputs = {1, 4, 7, 8};
  expr(OpKind::Reshape, "reshape", {t(0)}, 1);
  expr(OpKind::Permute, "Set.Permute", {t(0)}, 2).attrs = {{"cache_op", "Streaming"}};
  expr(OpKind::Matmul, "matmul", {t(0), t(3)}, 4);
  expr(OpKind::Linear, "linear", {t(0), t(5), t(6)}, 7);
  expr(OpKind::Linear, "linear", {t(0), t(5)}, 8);
  expectReadsBack();
}

TEST_F(PrintReadBack, AllocationDomainAndLoopTransforms) {
  id(0, Extent::symbol("i0"));
  id(1, Extent::symbol("i1"));
  id(2, Extent::mul(Extent::symbol("i0"), Extent::symbol("i1")));
  transform(Transform::Kind::Merge, {0, 1}, {2});
  id(3, Extent::ceilDiv(Extent::mul(Extent::symbol("i0"), Extent::symbol("i1")),
                        Extent::constant(128)));
  id(4, 128, IterType::Iteration, ParallelType::TIDx);
  transform(Transform::Kind::Split, {2}, {3, 4}, Extent::constant(128));
  TensorView &tv = tensor(0, {0, 1});
  tv.allocation = {1, 0};
  tv.contiguity = {Contiguity::False, Contiguity::True};
  tv.loop = {3, 4};
  id(5, Extent::symbol("i0"));
  id(6, Extent::symbol("i1"));
  tensor(1, {5, 6});
  f.inputs = {0};
  f.outputs = {1};
  expr(OpKind::Set, "Set", {t(0)}, 1);
  expectReadsBack();
}

TEST_F(PrintReadBack, KernelMathWithoutDomains) {
  f.kind = BlockKind::KernelMath;
  tensor(0, {id(0, 8)});
  tensor(1, {id(1, 8)});
  for (auto &[n, tv] : f.tensors) {
    tv.hasTransformInfo = false;
    tv.contiguity.clear();
  }
  f.inputs = {0};
  f.outputs = {1};
  expr(OpKind::Unary, "-", {t(0)}, 1);
  expectReadsBack();
}

TEST_F(PrintReadBack, HostIrWithCommunications) {
  f.kind = BlockKind::HostIr;
  tensor(0, {id(0, 2, IterType::Iteration, ParallelType::DIDx), id(1, 4)});
  tensor(1, {id(2, 2), id(3, 4)});
  tensor(2, {id(4, 2), id(5, 4)});
  tensor(3, {id(6, 2, IterType::Iteration, ParallelType::DIDx), id(7, 4)});
  for (auto &[n, tv] : f.tensors) {
    tv.hasTransformInfo = false;
    tv.contiguity.clear();
  }
  f.inputs = {0};
  f.outputs = {2, 3};
  Expr &ag = expr(OpKind::Communication, "Allgather", {t(0)}, 1);
  ag.communication = CommunicationInfo{0, CollectiveType::Allgather, {0, 1}, std::nullopt, "NCCL"};
  expr(OpKind::Unary, "relu", {t(1)}, 2);
  Expr &sc = expr(OpKind::Communication, "Scatter", {t(2)}, 3);
  sc.communication = CommunicationInfo{5, CollectiveType::Scatter, {0, 1}, 0, "NCCL"};
  expectReadsBack();
}

TEST_F(PrintReadBack, TransformsOnly) {
  f.kind = BlockKind::TransformsOnly;
  id(0, 8);
  id(1, 2, IterType::Iteration, ParallelType::DIDx);
  id(2, 4);
  transform(Transform::Kind::Split, {0}, {1, 2}, Extent::constant(2), false);
  tensor(0, {0}).loop = {1, 2};
  expectReadsBack();
}

TEST_F(PrintReadBack, JsonThroughReadDocument) {
  tensor(0, {id(0, 8)});
  Document doc;
  doc.file = "built.txt";
  doc.fusions = {f};
  std::string why;
  EXPECT_TRUE(documentsEqual(doc, readDocument(documentToJsonText(doc), "built.json"), &why))
      << why;
}

} // namespace
} // namespace shardcheck
