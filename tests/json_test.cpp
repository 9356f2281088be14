// Tests of the JSON IR (ir/Json.h): lossless round trips of programmatically
// built documents, defaults and locations of hand-written JSON, located
// errors for malformed or inconsistent JSON, and the input limits (nesting,
// number range, UTF-8, bounded messages) with the time and memory a
// pathological input may take.
//
// The corpus round trip (dump -> IR -> JSON -> IR) is in roundtrip_test.cpp.
#include "ir/FusionBuilder.h"
#include "ir/Json.h"
#include "ir/Printer.h"
#include "ir/json/InputRules.h"
#include "ir/reader/DumpReader.h"
#include "tests/DocumentCompare.h"
#include "tests/TestPaths.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

namespace shardcheck {
namespace {

// --- Building fusions by hand. ---

IdNum addId(Fusion &f, IdNum number, Extent extent, IterType type = IterType::Iteration,
            ParallelType parallel = ParallelType::Serial) {
  IterDomain id;
  id.number = number;
  id.iterType = type;
  id.parallel = parallel;
  id.extent = std::move(extent);
  id.loc = SourceLoc{"dump.txt", static_cast<int>(number) + 10, 7};
  f.addIterDomain(std::move(id));
  return number;
}

void addSplit(Fusion &f, IdNum in, IdNum outer, IdNum inner, Extent factor, bool innerSplit) {
  Transform t;
  t.kind = Transform::Kind::Split;
  t.inputs = {in};
  t.outputs = {outer, inner};
  t.factor = std::move(factor);
  t.innerSplit = innerSplit;
  t.loc = SourceLoc{"dump.txt", 40, 5};
  f.addTransform(std::move(t));
}

TensorView &addTensor(Fusion &f, TensorNum number, std::vector<IdNum> logical,
                      std::vector<IdNum> loop) {
  TensorView tv;
  tv.number = number;
  tv.dtype = DataType::Float;
  tv.logical = std::move(logical);
  tv.loop = std::move(loop);
  tv.contiguity.assign(tv.logical.size(), Contiguity::True);
  tv.hasTransformInfo = true;
  tv.loc = SourceLoc{"dump.txt", number + 2, 1};
  tv.domainsLoc = SourceLoc{"dump.txt", number + 30, 1};
  return f.addTensor(std::move(tv));
}

Expr makeExpr(OpKind kind, std::string op, std::vector<Operand> inputs,
              std::vector<TensorNum> outputs) {
  Expr e;
  e.kind = kind;
  e.op = std::move(op);
  e.inputs = std::move(inputs);
  e.outputs = std::move(outputs);
  e.loc = SourceLoc{"dump.txt", 20, 1};
  return e;
}

/// A kernel that exercises every field of every IR struct at least once.
Fusion richKernel() {
  Fusion f;
  f.kind = BlockKind::Kernel;
  f.loc = SourceLoc{"dump.txt", 1, 1};
  Extent i0 = Extent::symbol("i0");
  addId(f, 0, Extent::mul(i0, Extent::constant(4)));
  addId(f, 1, Extent::constant(2), IterType::Iteration, ParallelType::DIDx);
  addId(f, 2, Extent::ceilDiv(Extent::mul(i0, Extent::constant(4)), Extent::constant(2)));
  addSplit(f, 0, 1, 2, Extent::constant(2), /*innerSplit=*/false);
  addId(f, 3, Extent::constant(1), IterType::Broadcast, ParallelType::DIDx);
  IterDomain expanded;
  expanded.number = 4;
  expanded.iterType = IterType::Broadcast;
  expanded.expandedExtent = Extent::constant(32);
  expanded.start = Extent::constant(0);
  expanded.stop = Extent::sub(i0, Extent::constant(1));
  expanded.rfactor = true;
  expanded.extraSuffix = "_p";
  expanded.loc = SourceLoc{"other.txt", 3, 9}; // a location in another file
  f.addIterDomain(expanded);
  addId(f, 5, Extent::symbol("i2"));
  addId(f, 6, Extent::symbol("i3"));
  addId(f, 7, Extent::mul(Extent::symbol("i2"), Extent::symbol("i3")));
  Transform merge;
  merge.kind = Transform::Kind::Merge;
  merge.inputs = {5, 6};
  merge.outputs = {7};
  f.addTransform(merge); // unknown location
  addId(f, 8, Extent::add(Extent::symbol("i2"), Extent::constant(2)));
  Transform resize;
  resize.kind = Transform::Kind::Resize;
  resize.inputs = {5};
  resize.outputs = {8};
  resize.left = Extent::constant(1);
  resize.right = Extent::constant(1);
  f.addTransform(resize);
  addId(f, 9, Extent::constant(4));
  addId(f, 10, Extent::constant(4));
  addId(f, 11, Extent::constant(4));
  addId(f, 12, Extent::constant(4));
  Transform swizzle;
  swizzle.kind = Transform::Kind::Swizzle2D;
  swizzle.inputs = {9, 10};
  swizzle.outputs = {11, 12};
  swizzle.detail = "Xor";
  f.addTransform(swizzle);
  addId(f, 13, Extent::constant(8), IterType::Reduction, ParallelType::TIDx);
  addId(f, 14, Extent::div(Extent::symbol("i0"), Extent::constant(3)));
  addId(f, 15, Extent::mod(Extent::symbol("i0"), Extent::constant(3)), IterType::Iteration,
        ParallelType::Stream);

  TensorView &t0 = addTensor(f, 0, {0}, {1, 2});
  t0.mesh = DeviceMesh::create({2}, {0, 1});
  t0.allocation = {1, 2};
  t0.contiguity = {Contiguity::True, Contiguity::False};
  TensorView &t1 = addTensor(f, 1, {3, 4}, {3, 4});
  t1.mesh = DeviceMesh::create({2, 2}, {0, 1, 2, 3});
  t1.contiguity = {Contiguity::None, Contiguity::None};
  t1.memory = MemoryType::Local;
  t1.caPos = 1;
  t1.producePos = 2;
  TensorView &t2 = addTensor(f, 2, {7}, {7});
  t2.root = {5, 6};
  t2.dtype = DataType::BFloat16;
  TensorView &t3 = addTensor(f, 3, {8, 11, 12}, {8, 11, 12});
  t3.dtype = DataType::Unknown;
  t3.hasTransformInfo = false; // as read from a tensor line alone
  t3.contiguity.clear();
  t3.memory = MemoryType::Symmetric;
  t3.domainsLoc = SourceLoc{};
  addTensor(f, 4, {13, 14, 15}, {13, 14, 15}).mesh = DeviceMesh();

  f.inputs = {0, 1};
  f.outputs = {2, 4};

  Expr set = makeExpr(OpKind::Set, "Set", {Operand::ofTensor(0)}, {1});
  set.attrs = {{"cache_op", "Streaming"}};
  f.addExpr(set);
  f.addExpr(makeExpr(OpKind::Binary, "+", {Operand::ofTensor(1), Operand::ofScalar("2.0")}, {2}));
  Expr bcast = makeExpr(OpKind::Broadcast, "broadcast", {Operand::ofTensor(2)}, {3});
  bcast.flags = {false, true, true};
  f.addExpr(bcast);
  Expr odd = makeExpr(OpKind::Other, "pad", {Operand{3, "also"}, Operand::ofScalar("0")}, {4});
  odd.loc = SourceLoc{};
  f.addExpr(odd);
  f.groups = {SegmentGroup{"g{0}", "pointwise", {0, 1}}, SegmentGroup{"g{1}", "", {}}};
  return f;
}

Fusion hostIrFusion() {
  Fusion f;
  f.kind = BlockKind::HostIr;
  f.loc = SourceLoc{"dump.txt", 50, 1};
  addId(f, 0, Extent::constant(2), IterType::Iteration, ParallelType::DIDx);
  addId(f, 1, Extent::constant(4));
  addId(f, 2, Extent::constant(2));
  addId(f, 3, Extent::constant(4));
  addTensor(f, 0, {0, 1}, {0, 1}).mesh = DeviceMesh::linear({0, 1});
  addTensor(f, 1, {2, 3}, {2, 3}).mesh = DeviceMesh::linear({0, 1});
  Expr comm = makeExpr(OpKind::Communication, "Allgather", {Operand::ofTensor(0)}, {1});
  comm.communication =
      CommunicationInfo{3, CollectiveType::Allgather, {0, 1}, std::nullopt, "NCCL"};
  f.addExpr(comm);
  Expr reduce = makeExpr(OpKind::Communication, "Reduce", {Operand::ofTensor(1)}, {0});
  reduce.communication = CommunicationInfo{4, CollectiveType::Reduce, {1, 0}, 1, ""};
  f.addExpr(reduce);
  f.inputs = {0};
  f.outputs = {1};
  return f;
}

Document richDocument() {
  Document doc;
  doc.file = "dump.txt";
  doc.fusions = {richKernel(), hostIrFusion(), Fusion{}};
  doc.fusions.back().kind = BlockKind::TransformsOnly;
  return doc;
}

Document roundTrip(const Document &doc) {
  return documentFromJsonText(documentToJsonText(doc), "roundtrip.json");
}

// --- Round trips. ---

TEST(JsonIr, RichDocumentRoundTripsExactly) {
  Document doc = richDocument();
  std::string why;
  EXPECT_TRUE(documentsEqual(doc, roundTrip(doc), &why)) << why;
}

TEST(JsonIr, DocumentWithoutFileOrLocationsRoundTrips) {
  Document doc = richDocument();
  doc.file.clear();
  for (auto &f : doc.fusions) {
    f.loc = {};
    for (auto &[n, id] : f.ids)
      id.loc = {};
    for (auto &[n, tv] : f.tensors)
      tv.loc = tv.domainsLoc = {};
  }
  std::string why;
  EXPECT_TRUE(documentsEqual(doc, roundTrip(doc), &why)) << why;
}

TEST(JsonIr, DocumentWithoutFusionsIsRefusedAsAnEmptyDumpIs) {
  Document doc;
  doc.file = "empty.txt";
  std::string text = documentToJsonText(doc);
  for (const std::string &input : {text, std::string("\n")}) {
    try {
      readDocument(input, "empty.json");
      ADD_FAILURE() << "no error for: " << input;
    } catch (const InputError &e) {
      EXPECT_EQ(e.diagnostic().code, "no-fusion") << e.what();
      EXPECT_EQ(e.diagnostic().loc.file, "empty.json");
      EXPECT_TRUE(e.diagnostic().loc.known());
    }
  }
  try {
    documentFromJsonText(text, "empty.json");
    FAIL() << "no error";
  } catch (const InputError &e) {
    // At the empty list itself.
    size_t at = text.find("[]");
    EXPECT_EQ(e.diagnostic().loc.line,
              1 + static_cast<int>(std::count(text.begin(), text.begin() + at, '\n')));
    EXPECT_EQ(e.diagnostic().loc.column, static_cast<int>(at - text.rfind('\n', at)));
  }
}

TEST(JsonIr, TextIsVersionedAndReadable) {
  std::string text = documentToJsonText(richDocument());
  EXPECT_EQ(text.rfind("{\n  \"format\": \"shardcheck-ir\",\n  \"version\": 1,\n  \"file\": ", 0),
            0u)
      << text.substr(0, 200);
  // Extents are expression trees, not strings.
  EXPECT_NE(text.find(R"("extent": {"op": "ceilDiv", "lhs": {"op": "mul", "lhs": "i0", "rhs": 4})"),
            std::string::npos);
  // Locations in the document's file omit the file; others keep it.
  EXPECT_NE(text.find(R"("loc": {"line": 1, "column": 1})"), std::string::npos);
  EXPECT_NE(text.find(R"("loc": {"file": "other.txt", "line": 3, "column": 9})"),
            std::string::npos);
  EXPECT_NE(text.find(R"("contiguity": [null, null])"), std::string::npos);
}

TEST(JsonIr, ToJsonMatchesText) {
  Document doc = richDocument();
  EXPECT_EQ(documentToJson(doc), nlohmann::json::parse(documentToJsonText(doc)));
}

TEST(JsonIr, DocumentsEqualExplainsTheFirstDifference) {
  Document a = richDocument(), b = richDocument();
  b.fusions[0].tensors.at(2).logical = {5};
  std::string why;
  EXPECT_FALSE(documentsEqual(a, b, &why));
  EXPECT_EQ(why, "fusion 0: T2: logical domain differs: [7] vs [5]");

  b = richDocument();
  b.fusions[0].ids.at(4).loc.column = 10;
  EXPECT_FALSE(documentsEqual(a, b, &why));
  EXPECT_EQ(why, "fusion 0: IterDomain 4: location differs: 9 vs 10");
  EXPECT_TRUE(documentsEqual(a, b, DocumentCompareOptions{true, false}, &why)) << why;

  b = richDocument();
  b.fusions[1].exprs[1].communication->root = 0;
  EXPECT_FALSE(documentsEqual(a, b, &why));
  EXPECT_EQ(why, "fusion 1: expr 1: communication root differs: 1 vs 0");
}

TEST(JsonIr, TransformOrderCanBeIgnored) {
  Document a = richDocument(), b = richDocument();
  Fusion &f = b.fusions[0];
  std::swap(f.transforms[0], f.transforms[2]);
  for (auto &[n, id] : f.ids)
    if (id.definition == 0u || id.definition == 2u)
      id.definition = 2 - *id.definition;
  std::string why;
  EXPECT_FALSE(documentsEqual(a, b, &why));
  EXPECT_TRUE(documentsEqual(a, b, DocumentCompareOptions{false, true}, &why)) << why;
}

// --- Hand-written JSON: defaults and locations. ---

const char *kBase = R"({
  "format": "shardcheck-ir",
  "version": 1,
  "file": "base.txt",
  "fusions": [
    {
      "kind": "Kernel",
      "inputs": [0],
      "outputs": [1],
      "iterDomains": [
        {"number": 0, "iterType": "Iteration", "parallel": "DIDx", "extent": 2},
        {"number": 1, "iterType": "Iteration", "extent": "i0"},
        {"number": 2, "iterType": "Iteration", "extent": {"op": "mul", "lhs": 2, "rhs": "i0"}},
        {"number": 3, "iterType": "Iteration", "parallel": "DIDx", "extent": 2},
        {"number": 4, "iterType": "Iteration", "extent": "i0"}
      ],
      "transforms": [
        {"kind": "Split", "inputs": [2], "outputs": [3, 4], "factor": 2, "innerSplit": false}
      ],
      "tensors": [
        {"number": 0, "memory": "Global", "dtype": "float", "logical": [0, 1],
         "mesh": {"shape": [2], "devices": [0, 1]}},
        {"number": 1, "memory": "Global", "dtype": "float", "logical": [2], "loop": [3, 4],
         "contiguity": [true]}
      ],
      "exprs": [
        {"kind": "Set", "op": "Set", "inputs": [{"tensor": 0}], "outputs": [1],
         "attrs": [["cache_op", "Streaming"]]}
      ],
      "groups": [{"name": "g0", "scheduler": "pointwise", "exprs": [0]}]
    }
  ]
}
)";

/// The 1-based line of the first occurrence of `needle`.
int lineOf(const std::string &text, const std::string &needle) {
  size_t at = text.find(needle);
  EXPECT_NE(at, std::string::npos) << needle;
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + at, '\n'));
}

std::string replaced(std::string text, const std::string &from, const std::string &to) {
  size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  EXPECT_EQ(text.find(from, at + 1), std::string::npos) << "not unique: " << from;
  return text.replace(at, from.size(), to);
}

TEST(JsonIr, HandWrittenJsonGetsDefaultsAndJsonLocations) {
  std::string text = kBase;
  Document doc = documentFromJsonText(text, "base.json");
  EXPECT_EQ(doc.file, "base.txt");
  ASSERT_EQ(doc.fusions.size(), 1u);
  const Fusion &f = doc.fusions[0];
  EXPECT_EQ(f.kind, BlockKind::Kernel);
  EXPECT_EQ(f.id(1).parallel, ParallelType::Serial);
  EXPECT_EQ(f.id(2).extent, Extent::mul(Extent::constant(2), Extent::symbol("i0")));
  EXPECT_EQ(f.id(3).definition, std::optional<size_t>(0));
  EXPECT_FALSE(f.transforms[0].innerSplit);
  EXPECT_EQ(f.tensor(0).loop, f.tensor(0).logical); // loop defaults to logical
  EXPECT_TRUE(f.tensor(0).hasTransformInfo);
  EXPECT_EQ(f.tensor(0).mesh->str(), "DeviceMesh{0 1}");
  EXPECT_EQ(f.exprs[0].attr("cache_op"), "Streaming");
  // Without "loc", nodes are located at their place in the JSON text.
  EXPECT_EQ(f.tensor(1).loc.file, "base.json");
  EXPECT_EQ(f.tensor(1).loc.line, lineOf(text, R"({"number": 1, "memory")"));
  EXPECT_EQ(f.tensor(1).loc.column, 9);
  EXPECT_EQ(f.id(4).loc.line, lineOf(text, R"({"number": 4,)"));
  EXPECT_EQ(f.exprs[0].loc.line, lineOf(text, R"({"kind": "Set")"));
}

TEST(JsonIr, NullLocationMeansUnknown) {
  std::string text = replaced(kBase, R"("kind": "Kernel",)", R"("kind": "Kernel", "loc": null,)");
  Document doc = documentFromJsonText(text, "base.json");
  EXPECT_FALSE(doc.fusions[0].loc.known());
  EXPECT_TRUE(doc.fusions[0].loc.file.empty());
}

// --- Malformed and inconsistent JSON. ---

struct BadCase {
  const char *name;
  std::string text;
  const char *code;
  std::string message; ///< A substring of the expected message.
  int line;
};

std::vector<BadCase> badCases() {
  const std::string base = kBase;
  auto edit = [&](const std::string &from, const std::string &to) {
    return replaced(base, from, to);
  };
  auto at = [](const std::string &text, const std::string &needle) { return lineOf(text, needle); };
  std::vector<BadCase> cases;
  auto add = [&](const char *name, std::string text, const char *code, std::string message,
                 const std::string &anchor) {
    int line = at(text, anchor);
    cases.push_back(BadCase{name, std::move(text), code, std::move(message), line});
  };

  add("syntax error", edit(R"("version": 1,)", R"("version": 1,,)"), "json-malformed",
      "malformed JSON: syntax error while parsing object key", R"("version": 1,,)");
  std::string truncated = base.substr(0, base.find(R"("groups")"));
  cases.push_back(
      BadCase{"truncated", truncated, "json-malformed", "unexpected end of input",
              static_cast<int>(std::count(truncated.begin(), truncated.end(), '\n')) + 1});
  add("not an object", "[1, 2]", "json-schema", "JSON IR document must be an object", "[1");
  add("wrong format", edit(R"("format": "shardcheck-ir")", R"("format": "nvfuser")"), "json-format",
      "not a shardcheck JSON IR document", R"("format")");
  add("missing format", edit(R"("format": "shardcheck-ir",)", ""), "json-format",
      "expected \"format\": \"shardcheck-ir\"", "{");
  add("newer version", edit(R"("version": 1,)", R"("version": 2,)"), "json-version",
      "unsupported JSON IR version 2; this shardcheck reads version 1", R"("version")");
  add("version as string", edit(R"("version": 1,)", R"("version": "1",)"), "json-version",
      "\"version\" must be an integer", R"("version")");
  add("unknown document field", edit(R"("file": "base.txt",)", R"("file": "base.txt", "x": 1,)"),
      "json-schema", "JSON IR document has unknown field \"x\"", R"("x": 1)");
  add("unknown tensor field", edit(R"("logical": [2])", R"("logcal": [2])"), "json-schema",
      "tensor has unknown field \"logcal\"; expected one of \"number\"", R"("logcal")");
  add("missing extent",
      edit(R"({"number": 4, "iterType": "Iteration", "extent": "i0"})",
           R"({"number": 4, "iterType": "Iteration"})"),
      "json-schema", "iterDomain is missing required field \"extent\"", R"({"number": 4,)");
  add("mistyped extent",
      edit(R"({"number": 0, "iterType": "Iteration", "parallel": "DIDx", "extent": 2})",
           R"({"number": 0, "iterType": "Iteration", "parallel": "DIDx", "extent": true})"),
      "json-schema",
      "iterDomain field \"extent\" must be an integer, a symbol name or an {\"op\", \"lhs\", "
      "\"rhs\"} object, got a boolean",
      R"("extent": true)");
  add("bad enum",
      edit(R"("memory": "Global", "dtype": "float", "logical": [2])",
           R"("memory": "Gobal", "dtype": "float", "logical": [2])"),
      "json-schema", "tensor field \"memory\" must be one of \"Global\"", R"("Gobal")");
  add("bad extent op", edit(R"({"op": "mul",)", R"({"op": "times",)"), "json-schema",
      "field \"op\" must be one of \"add\"", R"("times")");
  add("empty symbol",
      edit(R"({"number": 4, "iterType": "Iteration", "extent": "i0"})",
           R"({"number": 4, "iterType": "Iteration", "extent": ""})"),
      "json-schema", "is not a valid symbol name", R"("extent": "")");
  add("negative id", edit(R"({"number": 0, "iterType")", R"({"number": -1, "iterType")"),
      "json-schema", "iterDomain field \"number\" must be an integer between 0 and",
      R"("number": -1)");
  add("bad contiguity", edit(R"("contiguity": [true])", R"("contiguity": ["t"])"), "json-schema",
      "element 0 must be true, false or null, got a string", R"("contiguity")");
  add("attr not a pair", edit(R"([["cache_op", "Streaming"]])", R"([["cache_op"]])"), "json-schema",
      "must be a [key, value] pair of strings", R"([["cache_op"]])");
  add("location line mistyped",
      edit(R"("kind": "Kernel",)", R"("kind": "Kernel", "loc": {"line": "3", "column": 1},)"),
      "json-schema", "fusion field \"loc\" field \"line\" must be an integer", R"("loc")");
  add("duplicate key", edit(R"("version": 1,)", R"("version": 1, "version": 1,)"), "json-schema",
      "duplicate key (at /version)", R"("version")");
  add("unknown id in domain", edit(R"("loop": [3, 4])", R"("loop": [3, 9])"), "json-inconsistent",
      "tensor field \"loop\" refers to IterDomain 9, which is not listed in iterDomains",
      R"("loop": [3, 9])");
  add("duplicate id",
      edit(R"({"number": 4, "iterType": "Iteration", "extent": "i0"})",
           R"({"number": 1, "iterType": "Broadcast", "extent": 1})"),
      "json-inconsistent",
      "IterDomain 1 is listed twice (first at line " +
          std::to_string(lineOf(base, R"({"number": 1,)")) + ")",
      R"("iterType": "Broadcast")");
  add("duplicate tensor", edit(R"({"number": 1, "memory")", R"({"number": 0, "memory")"),
      "json-inconsistent", "tensor T0 is listed twice", R"("logical": [2])");
  add("two definitions",
      edit(R"("innerSplit": false})",
           R"("innerSplit": false},
        {"kind": "Merge", "inputs": [0, 1], "outputs": [4]})"),
      "json-inconsistent",
      "IterDomain 4 is already defined by transform 0 (line 18); an IterDomain has at most one "
      "definition",
      R"("kind": "Merge")");
  add("unknown transform input",
      edit(R"("inputs": [2], "outputs": [3, 4])", R"("inputs": [12], "outputs": [3, 4])"),
      "json-inconsistent", "transform input IterDomain 12 is not listed in iterDomains",
      R"("inputs": [12])");
  add("split arity", edit(R"("outputs": [3, 4], "factor")", R"("outputs": [3], "factor")"),
      "json-inconsistent", "a Split transform has 1 input(s) and 2 output(s), this one has 1 and 1",
      R"("kind": "Split")");
  add("transform cycle",
      edit(R"("innerSplit": false})",
           R"("innerSplit": false},
        {"kind": "Merge", "inputs": [3, 4], "outputs": [2]})"),
      "json-inconsistent", "transforms form a cycle", R"("kind": "Merge")");
  add("unknown operand", edit(R"({"tensor": 0})", R"({"tensor": 5})"), "json-inconsistent",
      "operand field \"tensor\" refers to tensor T5, which is not listed in tensors",
      R"({"tensor": 5})");
  add("unknown fusion input", edit(R"("inputs": [0],)", R"("inputs": [7],)"), "json-inconsistent",
      "refers to tensor T7", R"("inputs": [7],)");
  add("mesh size", edit(R"("devices": [0, 1])", R"("devices": [0, 1, 2])"), "json-inconsistent",
      "mesh of shape [2] lists 3 devices", R"("mesh")");
  add("group out of range", edit(R"("exprs": [0]})", R"("exprs": [3]})"), "json-inconsistent",
      "segment group refers to expr 3, but the fusion has 1 exprs", R"("groups")");
  add("communication without info",
      edit(R"({"kind": "Set", "op": "Set")", R"({"kind": "Communication", "op": "Set")"),
      "json-inconsistent", "a Communication expr needs a \"communication\" object",
      R"({"kind": "Communication")");
  // Pointwise kinds only for ops of ir/PointwiseOps.h, with their arity.
  add("unlisted pointwise op",
      edit(R"({"kind": "Set", "op": "Set")", R"({"kind": "Unary", "op": "cumsum")"),
      "json-inconsistent",
      "\"cumsum\" is not a Unary op shardcheck knows (ir/PointwiseOps.h lists them); an op "
      "without an element rule has kind \"Other\"",
      R"("op": "cumsum")");
  add("pointwise op of another arity",
      edit(R"({"kind": "Set", "op": "Set")", R"({"kind": "Unary", "op": "maxf")"),
      "json-inconsistent", "\"maxf\" is not a Unary op", R"("op": "maxf")");
  add("contiguity length", edit(R"("contiguity": [true])", R"("contiguity": [true, false])"),
      "json-inconsistent",
      "the contiguity of T1 has 2 entries, expected 1 (one per logical IterDomain)",
      R"("contiguity")");
  add("loop not derived", edit(R"("loop": [3, 4])", R"("loop": [3, 1])"), "json-inconsistent",
      "the loop domain of T1 contains IterDomain 1, which is not derived from its logical domain",
      R"("loop": [3, 1])");
  add("no transform info but domains",
      edit(R"("contiguity": [true]})", R"("contiguity": [true], "hasTransformInfo": false})"),
      "json-inconsistent", "T1 has \"hasTransformInfo\": false", R"({"number": 1, "memory")");
  return cases;
}

TEST(JsonIr, MalformedAndInconsistentInputsAreLocatedErrors) {
  std::vector<BadCase> cases = badCases();
  EXPECT_GE(cases.size(), 15u);
  for (const BadCase &c : cases) {
    SCOPED_TRACE(c.name);
    try {
      documentFromJsonText(c.text, "case.json");
      ADD_FAILURE() << "no error for: " << c.name;
    } catch (const InputError &e) {
      const Diagnostic &d = e.diagnostic();
      EXPECT_EQ(d.code, c.code);
      EXPECT_NE(d.message.find(c.message), std::string::npos)
          << "message: " << d.message << "\nexpected: " << c.message;
      EXPECT_EQ(d.loc.file, "case.json");
      EXPECT_EQ(d.loc.line, c.line) << d.message;
      EXPECT_GT(d.loc.column, 0);
    }
  }
}

TEST(JsonIr, ErrorColumnsPointAtTheValue) {
  std::string text = replaced(kBase, R"("loop": [3, 4])", R"("loop": [3, 9])");
  try {
    documentFromJsonText(text, "case.json");
    FAIL() << "no error";
  } catch (const InputError &e) {
    // The 9 itself: path /fusions/0/tensors/1/loop/1.
    size_t lineStart = text.rfind('\n', text.find("[3, 9]")) + 1;
    int column = static_cast<int>(text.find("9]", text.find("[3, 9]")) - lineStart) + 1;
    EXPECT_EQ(e.diagnostic().loc.column, column);
    EXPECT_NE(e.diagnostic().message.find("(at /fusions/0/tensors/1/loop/1)"), std::string::npos)
        << e.diagnostic().message;
  }
}

TEST(JsonIr, SyntaxErrorColumnIsTheOffendingByte) {
  try {
    documentFromJsonText("{\n  \"format\": \"shardcheck-ir\",\n  }", "x.json");
    FAIL() << "no error";
  } catch (const InputError &e) {
    EXPECT_EQ(e.diagnostic().loc.str(), "x.json:3:3");
  }
}

TEST(JsonIr, DeepExtentIsRejectedNotRecursedForever) {
  std::string deep = "1";
  for (int i = 0; i < 300; ++i)
    deep = R"({"op": "add", "lhs": )" + deep + R"(, "rhs": 1})";
  std::string text = replaced(kBase, R"({"number": 4, "iterType": "Iteration", "extent": "i0"})",
                              R"({"number": 4, "iterType": "Iteration", "extent": )" + deep + "}");
  try {
    documentFromJsonText(text, "deep.json");
    FAIL() << "no error";
  } catch (const InputError &e) {
    EXPECT_EQ(e.diagnostic().code, "json-malformed");
    EXPECT_NE(e.diagnostic().message.find("nested more than 200 levels"), std::string::npos)
        << e.what();
    // At the brace that opens level 201.
    size_t at = text.find(R"("extent": )" + std::string(R"({"op": "add", "lhs": )"));
    size_t open = at + 10;
    for (int level = 6; level < 201; ++level)
      open = text.find('{', open + 1);
    EXPECT_EQ(e.diagnostic().loc.line, lineOf(text, R"({"number": 4,)"));
    EXPECT_EQ(e.diagnostic().loc.column, static_cast<int>(open - text.rfind('\n', open)));
  }
}

// --- Input limits: every pathological input is a located error, quickly. ---

/// The code and location of the error reading `text` as JSON IR ("" if none).
struct ReadError {
  std::string code, message;
  int line = 0, column = 0;
};
ReadError readError(const std::string &text) {
  try {
    documentFromJsonText(text, "case.json");
  } catch (const InputError &e) {
    const Diagnostic &d = e.diagnostic();
    EXPECT_EQ(d.loc.file, "case.json");
    return ReadError{d.code, d.message, d.loc.line, d.loc.column};
  }
  return {};
}

/// kBase with IterDomain 4's extent replaced by `extent` (JSON text).
std::string withExtent4(const std::string &extent) {
  return replaced(kBase, R"({"number": 4, "iterType": "Iteration", "extent": "i0"})",
                  R"({"number": 4, "iterType": "Iteration", "extent": )" + extent + "}");
}

/// The 1-based column of the first `needle` in its line.
int columnOf(const std::string &text, const std::string &needle) {
  size_t at = text.find(needle);
  EXPECT_NE(at, std::string::npos) << needle;
  size_t lineStart = text.rfind('\n', at);
  return static_cast<int>(at - (lineStart == std::string::npos ? 0 : lineStart + 1)) + 1;
}

/// Runs `f` in a child process; returns its peak resident memory in MiB
/// (-1 if it did not exit normally).
long childPeakMiB(const std::function<void()> &f) {
  pid_t pid = fork();
  if (pid == 0) {
    f();
    _exit(0);
  }
  int status = 0;
  rusage usage{};
  if (wait4(pid, &status, 0, &usage) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return -1;
  return usage.ru_maxrss / 1024;
}

/// The memory `f` costs beyond what the test binary already holds (a child
/// starts with its parent's resident pages), in MiB.
long extraMiB(const std::function<void()> &f) {
  long peak = childPeakMiB(f);
  EXPECT_GE(peak, 0) << "the child did not exit normally";
  return peak - childPeakMiB([] {});
}

double secondsOf(const std::function<void()> &f) {
  auto begin = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
}

TEST(JsonIr, NumbersBeyondDoubleRangeAreLocatedNotAborts) {
  for (const char *number : {"1e999", "-1e999", "4e313"}) {
    SCOPED_TRACE(number);
    std::string text = withExtent4(number);
    ReadError e = readError(text);
    EXPECT_EQ(e.code, "json-malformed");
    EXPECT_NE(e.message.find(std::string("number ") + number + " is beyond the range of a double"),
              std::string::npos)
        << e.message;
    EXPECT_EQ(e.line, lineOf(text, number));
    EXPECT_EQ(e.column, columnOf(text, number));
  }
}

TEST(JsonIr, IntegersOutsideInt64AreLocatedSchemaErrors) {
  for (const char *number : {"1e20", "18446744073709551616", "18446744073709551615",
                             "9223372036854775808", "2.5", "-9223372036854775809"}) {
    SCOPED_TRACE(number);
    std::string text = withExtent4(number);
    ReadError e = readError(text);
    EXPECT_EQ(e.code, "json-schema");
    EXPECT_NE(e.message.find("must be an integer between 0 and 9223372036854775807"),
              std::string::npos)
        << e.message;
    EXPECT_EQ(e.line, lineOf(text, number));
    EXPECT_EQ(e.column, columnOf(text, number));
  }
}

TEST(JsonIr, ExtentsAreSizes) {
  struct Case {
    std::string extent, message;
  };
  for (const Case &c : std::vector<Case>{
           {"-2", "must be an integer between 0 and"},
           {R"({"op": "sub", "lhs": 3, "rhs": 5})", "extent arithmetic gives -2"},
           {R"({"op": "ceilDiv", "lhs": "i0", "rhs": 0})", "division by zero"},
           {R"({"op": "mul", "lhs": "i0", "rhs": -1})", "must be an integer between 0 and"}}) {
    SCOPED_TRACE(c.extent);
    std::string text = withExtent4(c.extent);
    ReadError e = readError(text);
    EXPECT_EQ(e.code, "json-schema");
    EXPECT_NE(e.message.find(c.message), std::string::npos) << e.message;
    EXPECT_EQ(e.line, lineOf(text, c.extent));
  }
  ReadError zeroFactor = readError(replaced(kBase, R"("factor": 2)", R"("factor": 0)"));
  EXPECT_EQ(zeroFactor.code, "json-schema");
  EXPECT_NE(zeroFactor.message.find("a split factor must be positive"), std::string::npos);
  // A resize amount may be a negative literal, as `Resize: ... by -1` reads.
  std::string resize =
      replaced(replaced(kBase, R"({"number": 4, "iterType": "Iteration", "extent": "i0"})",
                        R"({"number": 4, "iterType": "Iteration", "extent": "i0"},
        {"number": 5, "iterType": "Iteration", "extent": {"op": "add", "lhs": "i0", "rhs": 1}})"),
               R"("innerSplit": false})", R"("innerSplit": false},
        {"kind": "Resize", "inputs": [4], "outputs": [5], "left": -1, "right": 2})");
  Document doc = documentFromJsonText(resize, "resize.json");
  EXPECT_EQ(doc.fusions[0].transforms[1].left, Extent::constant(-1));
}

TEST(JsonIr, DuplicateKeysAreLocatedEvenWhenSpelledWithEscapes) {
  std::string nested = replaced(kBase, R"("kind": "Set", "op": "Set")",
                                R"("kind": "Set", "op": "Set", "\u006fp": "Set")");
  ReadError e = readError(nested);
  EXPECT_EQ(e.code, "json-schema");
  EXPECT_NE(e.message.find("duplicate key (at /fusions/0/exprs/0/op)"), std::string::npos)
      << e.message;
  EXPECT_EQ(e.line, lineOf(nested, R"("\u006fp")"));
  EXPECT_EQ(e.column, columnOf(nested, R"("\u006fp")"));
}

TEST(JsonIr, DeepNestingEndsQuicklyWithBoundedMemory) {
  // 2 MB of nested arrays: refused at the bracket opening level 201.
  std::string deep = std::string(1 << 20, '[') + std::string(1 << 20, ']');
  ReadError e;
  EXPECT_LT(secondsOf([&] { e = readError(deep); }), 2.0);
  EXPECT_EQ(e.code, "json-malformed");
  EXPECT_EQ(e.line, 1);
  EXPECT_EQ(e.column, 201);
  EXPECT_LT(extraMiB([&] { readError(deep); }), 50);
  // Just within the limit and wide: the position table stays linear (a
  // table keyed by whole paths needed gigabytes for this).
  std::string wide = R"({"format": "shardcheck-ir", "version": 1, "x": )" + std::string(190, '[');
  for (int i = 0; i < 400000; ++i)
    wide += "[], ";
  wide += "0" + std::string(190, ']') + ", \"fusions\": []}";
  EXPECT_LT(secondsOf([&] { e = readError(wide); }), 5.0);
  EXPECT_EQ(e.code, "json-schema");
  EXPECT_NE(e.message.find("unknown field \"x\""), std::string::npos) << e.message;
  EXPECT_EQ(e.column, columnOf(wide, "["));
  EXPECT_LT(extraMiB([&] { readError(wide); }), 200);
}

TEST(JsonIr, Utf8RoundTripsEqualAndInvalidBytesAreLocated) {
  // Non-ASCII UTF-8 in kept strings (the file name, an attribute) reads back equal.
  std::string text = replaced(replaced(kBase, R"("file": "base.txt")", R"("file": "базa-é.txt")"),
                              R"(["cache_op", "Streaming"])", R"(["cache_op", "Strömung 流"])");
  Document doc = documentFromJsonText(text, "utf8.json");
  EXPECT_EQ(doc.fusions[0].exprs[0].attr("cache_op"), "Strömung 流");
  std::string why;
  EXPECT_TRUE(documentsEqual(doc, roundTrip(doc), &why)) << why;
  // A dump with non-ASCII UTF-8 in a kept string: dump -> IR -> JSON -> IR.
  std::string dump = "%kernel {\nT1_g_float[iS1{8}]\n   = Set( T0_g_float[iS0{8}], "
                     "cache_op=Strömung )\n} // %kernel\n";
  Document fromDump = readDocument(dump, "utf8.txt");
  EXPECT_EQ(fromDump.fusions[0].exprs[0].attr("cache_op"), "Strömung");
  EXPECT_TRUE(documentsEqual(fromDump, roundTrip(fromDump), &why)) << why;
  // An invalid byte (a lone continuation, an overlong form, a surrogate, a
  // truncated sequence) is an error at that byte, in JSON and in dumps.
  for (const std::string &bad : {std::string("\x80"), std::string("\xC0\xAF"),
                                 std::string("\xED\xA0\x80"), std::string("\xE6\x97")}) {
    std::string badJson = replaced(kBase, R"(["cache_op", "Streaming"])",
                                   R"(["cache_op", "Str)" + bad + R"(eaming"])");
    ReadError e = readError(badJson);
    EXPECT_EQ(e.code, "json-malformed");
    EXPECT_NE(e.message.find("is not valid UTF-8"), std::string::npos) << e.message;
    EXPECT_EQ(e.line, lineOf(badJson, bad));
    EXPECT_EQ(e.column, columnOf(badJson, bad));
    std::string badDump = dump;
    badDump.replace(badDump.find("ö"), 2, bad);
    try {
      readDocument(badDump, "bad.txt");
      ADD_FAILURE() << "no error";
    } catch (const InputError &err) {
      EXPECT_EQ(err.diagnostic().code, "parse");
      EXPECT_EQ(err.diagnostic().loc.line, 3);
      EXPECT_EQ(err.diagnostic().loc.column, columnOf(badDump, bad));
    }
  }
}

TEST(JsonIr, MessagesQuoteBoundedTokensAndStayUtf8) {
  std::string huge(1 << 20, 'k');
  // A cut inside a two-byte character would make the message invalid UTF-8,
  // which check-sharding's JSON output cannot print.
  std::string accents = "a";
  for (int i = 0; i < 100; ++i)
    accents += "é";
  std::string unknownField = R"("file": "base.txt",)";
  for (const std::string &text :
       {replaced(kBase, unknownField, R"("file": "base.txt", ")" + huge + R"(": 1,)"),
        replaced(kBase, unknownField, R"("file": "base.txt", ")" + accents + R"(": 1,)"),
        replaced(kBase, R"("memory": "Global", "dtype": "float", "logical": [2])",
                 R"("memory": ")" + huge + R"(", "dtype": "float", "logical": [2])"),
        withExtent4("\" " + huge + "\""), "{\"format\": \"" + accents + accents + accents}) {
    ReadError e = readError(text);
    EXPECT_LT(e.message.size(), 1200u) << e.message.substr(0, 300);
    EXPECT_NE(e.message.find(" bytes)"), std::string::npos) << e.message.substr(0, 300);
    EXPECT_EQ(firstInvalidUtf8(e.message), std::nullopt) << e.message;
    EXPECT_NO_THROW((void)nlohmann::json(e.message).dump());
  }
}

// --- docs/json-ir.md tells the truth. ---

/// The body of the first ``` fence (with the given info string) after `marker`.
std::string fenceAfter(const std::string &doc, const std::string &marker, const std::string &info) {
  size_t at = doc.find(marker);
  EXPECT_NE(at, std::string::npos) << marker;
  std::string open = "```" + info + "\n";
  size_t start = doc.find(open, at) + open.size();
  return doc.substr(start, doc.find("```", start) - start);
}

TEST(JsonIr, DocumentationExamplesAreTrue) {
  std::ifstream in(std::string(SHARDCHECK_SOURCE_DIR) + "/docs/json-ir.md");
  ASSERT_TRUE(in) << "docs/json-ir.md not found";
  std::stringstream buffer;
  buffer << in.rdbuf();
  std::string doc = buffer.str();

  Document full =
      documentFromJsonText(fenceAfter(doc, "## A complete example", "json"), "full.json");
  Document hand =
      documentFromJsonText(fenceAfter(doc, "Hand-written, the same fusion", "json"), "repro.txt");
  ASSERT_EQ(hand.fusions.size(), 1u);
  // The two examples describe the same fusion; only locations differ.
  std::string why;
  EXPECT_TRUE(documentsEqual(full, hand, DocumentCompareOptions{true, false}, &why)) << why;
  EXPECT_EQ(printFusion(hand.fusions[0]), fenceAfter(doc, "Printed back in nvFuser's style", ""));
}

// --- Chunked splits (shardcheck's own; docs/json-ir.md) ---

namespace {
Fusion chunkedFusion() {
  FusionBuilder b;
  IdNum r = b.iter(5);
  auto sy = b.split(r, 2, /*innerSplit=*/false, ParallelType::DIDy);
  auto sx = b.chunkedSplit(sy.inner, 2, ParallelType::DIDx);
  TensorNum x = b.tensor(
      {{}, {r}, {sy.outer, sx.outer, sx.inner}, {}, DeviceMesh::create({2, 2}, {0, 1, 2, 3})});
  TensorNum y = b.tensor({b.iter(5)}, DeviceMesh::create({2, 2}, {0, 1, 2, 3}));
  b.expr(OpKind::Set, "Set", {x}, y);
  b.fusion().inputs = {x};
  b.fusion().outputs = {y};
  return b.take();
}
} // namespace

TEST(JsonIr, ChunkedSplitRoundTripsThroughJsonAndText) {
  Document doc;
  doc.file = "chunked.json";
  doc.fusions = {chunkedFusion()};
  std::string json = documentToJsonText(doc);
  EXPECT_NE(json.find("\"chunked\": true"), std::string::npos);
  Document back = roundTrip(doc);
  ASSERT_EQ(back.fusions.size(), 1u);
  int chunked = 0;
  for (const Transform &t : back.fusions[0].transforms)
    chunked += t.chunked;
  EXPECT_EQ(chunked, 1);
  std::string text = printFusion(doc.fusions[0]);
  EXPECT_NE(text.find("Chunked outer split: "), std::string::npos) << text;
  Document read = readDocument(text, "chunked.txt");
  chunked = 0;
  for (const Transform &t : read.fusions.at(0).transforms)
    chunked += t.chunked;
  EXPECT_EQ(chunked, 1) << text;
}

TEST(JsonIr, ChunkedInnerSplitIsRefused) {
  Document doc;
  doc.fusions = {chunkedFusion()};
  std::string json = documentToJsonText(doc);
  size_t at = json.find("\"chunked\": true");
  ASSERT_NE(at, std::string::npos);
  json.replace(json.rfind("\"innerSplit\": false", at), 19, "\"innerSplit\": true ");
  try {
    documentFromJsonText(json, "bad.json");
    FAIL() << "no error";
  } catch (const InputError &e) {
    EXPECT_NE(std::string(e.what()).find("only an outer split"), std::string::npos) << e.what();
  }
}

} // namespace
} // namespace shardcheck
