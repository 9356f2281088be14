// Tests of the dump reader on prints as users paste them (issue 16): the
// July-2024 host IR layout, stream-parallel host IR, multi-output
// statements, torchrun line prefixes, a TransformPrinter section on its own,
// and truncated pastes, which read as far as they go and are marked partial
// (Document::truncated; check-sharding's `truncated-input` warning, JSON
// `"partial": true` and an exit status that is never 0).
//
// Malformed input that is not cut short stays a located error: the table in
// reader_test.cpp. Verbatim real prints are in corpus/real_*.txt.
#include "ir/FusionGraph.h"
#include "ir/HostLoops.h"
#include "ir/Json.h"
#include "ir/Printer.h"
#include "ir/reader/DumpReader.h"
#include "tests/DocumentCompare.h"
#include "tests/TestPaths.h"
#include "tests/ToolRuns.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <tuple>

namespace shardcheck {
namespace {

Document read(const std::string &text) {
  return readDocument(text, "t.txt");
}

/// The one fusion `text` holds.
Fusion readOne(const std::string &text) {
  Document d = read(text);
  EXPECT_EQ(d.fusions.size(), 1u);
  return d.fusions.at(0);
}

const std::string kSet = "T1_g_float[iS1{8}]\n   = Set( T0_g_float[iS0{8}], cache_op=Streaming )\n";

// --- Truncated pastes ---

struct CutCase {
  const char *name;
  std::string input;
  const char *message; ///< Part of the reason the reader gives.
  int line;            ///< Where the input ends early.
  size_t exprs;        ///< Complete statements read.
};

std::vector<CutCase> cutCases() {
  return {
      {"UnclosedKernelBlock", "%kernel {\n" + kSet,
       "expected '} // %kernel' to close the block opened at t.txt:1:1, found end of input", 3, 1},
      {"HostIrUnclosed", "%HostIrContainer { () -> () :\n  Wait(Communication 3)\n",
       "expected '} // %HostIrContainer' to close the block opened at t.txt:1:1", 2, 0},
      {"SegmentedUnclosed",
       "Segmented_Fusion Dump: -- fusion segments:\nSegmented_Fusion{ \ngroups: \n",
       "expected '} //Segmented_Fusion' to close the block opened at t.txt:1:1", 3, 0},
      {"MidTensor", "%kernel {\n" + kSet + "T2_g_float[iS2{8}]\n   = Set( T1_g_float[iS1{",
       "extent", 5, 1},
      {"MidCallArguments", "%kernel {\n" + kSet + "T2_g_float[iS2{8}]\n   = matmul(\n\n", "matmul",
       5, 1},
      {"MidIterDomainList", "%kernel {\n" + kSet + "T2_g[ rS12{i0}, r", "parallel type", 4, 1},
  };
}

class ReaderCut : public ::testing::TestWithParam<CutCase> {};

TEST_P(ReaderCut, ReadsTheCompleteStatementsAndSaysWhereTheInputEnds) {
  const CutCase &c = GetParam();
  Document d = read(c.input);
  ASSERT_TRUE(d.truncated.has_value());
  EXPECT_EQ(d.truncated->loc.file, "t.txt");
  EXPECT_EQ(d.truncated->loc.line, c.line);
  EXPECT_EQ(d.truncated->loc.column, 1);
  EXPECT_NE(d.truncated->message.find(c.message), std::string::npos) << d.truncated->message;
  ASSERT_EQ(d.fusions.size(), 1u);
  EXPECT_EQ(d.fusions[0].exprs.size(), c.exprs);
}

INSTANTIATE_TEST_SUITE_P(Cut, ReaderCut, ::testing::ValuesIn(cutCases()),
                         [](const auto &info) { return std::string(info.param.name); });

TEST(ReaderCut, MalformedLineBeforeTheEndStaysAnError) {
  // The failure is followed by more text: not a cut paste.
  std::string text = "%kernel {\nT1_g_float[iS1{8}]\n   = Set( T0_g_float[iS0{8}] junk\n" + kSet +
                     "} // %kernel\n";
  try {
    read(text);
    FAIL() << "no InputError";
  } catch (const InputError &e) {
    EXPECT_EQ(e.diagnostic().loc.line, 3);
  }
}

TEST(ReaderCut, WholeInputIsNotPartial) {
  EXPECT_FALSE(read("%kernel {\n" + kSet + "} // %kernel\n").truncated.has_value());
}

nlohmann::json checkJson(const std::string &name, const std::string &text, int &status) {
  std::string path = testing::tempFile("reader_wild", name, text);
  testing::ToolRun run = testing::checkShardingTool({"--format", "json", path});
  status = run.status;
  return nlohmann::json::parse(run.out);
}

TEST(ReaderCut, CheckShardingMarksThePasteAndNeverExitsZero) {
  int status = -1;
  nlohmann::json doc =
      checkJson("cut.txt", "%kernel {\n" + kSet + "T2_g_float[iS2{8}]\n   = Set(", status);
  EXPECT_EQ(status, 3); // No finding, but not whole either.
  const auto &file = doc["files"][0];
  EXPECT_EQ(file["partial"], true);
  EXPECT_EQ(file["readable"], true);
  bool warned = false;
  for (const auto &d : file["diagnostics"])
    warned |= d["code"] == "truncated-input" && d["severity"] == "warning" && d["line"] == 5;
  EXPECT_TRUE(warned) << file["diagnostics"];
  EXPECT_EQ(file["edges"].size(), 1u);
  EXPECT_EQ(doc["summary"]["partial_files"], 1);
}

TEST(ReaderCut, FindingsInAPartialPasteExitOne) {
  int status = -1;
  std::string mesh = " (DeviceMesh{0 1})";
  std::string text = "%HostIrContainer { () -> () :\n  Communication 1 (type=Broadcast, "
                     "team=(0 1), root=0, input=T0_g_float[ideviceIdx.x0{2}]" +
                     mesh + ", output=T1_g_float[iS1{2}]" + mesh + ")\n  Wait(Commun";
  nlohmann::json doc = checkJson("cut_refuted.txt", text, status);
  EXPECT_EQ(status, 1);
  EXPECT_EQ(doc["files"][0]["partial"], true);
}

TEST(ReaderCut, EmitPlanOnAPartialPasteIsRefused) {
  std::string path = testing::tempFile("reader_wild", "cut_plan.txt",
                                       "%kernel {\n" + kSet + "T2_g_float[iS2{8}]\n   = Set(");
  std::string plan = path + ".plan.json";
  std::filesystem::remove(plan);
  testing::ToolRun run = testing::checkShardingTool({"--emit-plan", plan, path});
  EXPECT_EQ(run.status, 4); // Distinct from 3: the plan asked for is not written.
  EXPECT_FALSE(std::filesystem::exists(plan));
  EXPECT_NE(run.out.find("--emit-plan refused: the input ends early"), std::string::npos)
      << run.out;
  // The same paste without --emit-plan is checked as partial (exit 3).
  EXPECT_EQ(testing::checkShardingTool({path}).status, 3);
}

TEST(ReaderCut, EveryCutOfRealPrintsReadsOrFailsLocated) {
  // A paste may be cut anywhere: what reads must be a document the other
  // readers and the printer accept, like any whole one.
  for (const char *name :
       {"real_pr2518_hostir_gather_two_stages.txt", "real_pr4387_stream_ag_matmul_hostir.txt",
        "real_pr5259_p2p_cuda_ring_hostir.txt", "style_segmented_fusion.txt",
        "op_view_split_sharded_axis.txt"}) {
    std::ifstream in(std::string(SHARDCHECK_SOURCE_DIR) + "/corpus/" + name);
    std::stringstream text;
    text << in.rdbuf();
    std::string whole = text.str();
    for (size_t cut = 1; cut < whole.size(); cut += 29) {
      SCOPED_TRACE(std::string(name) + " cut at byte " + std::to_string(cut));
      Document d;
      try {
        d = read(whole.substr(0, cut));
      } catch (const InputError &e) {
        EXPECT_EQ(e.diagnostic().loc.file, "t.txt");
        continue;
      }
      std::string why;
      EXPECT_TRUE(documentsEqual(d, documentFromJsonText(documentToJsonText(d), "t.json"), &why))
          << why;
      for (const Fusion &f : d.fusions)
        EXPECT_NO_THROW(read(printFusion(f)));
    }
  }
}

// --- Print styles found in the wild ---

TEST(ReaderWild, July2024HostIrWithHostUnitsAndEnd) {
  Document d =
      read("%HostIrContainer {\n\nHOST IRS: (T0_g[ iS0{4} ]) -> (T2_g[ iS2{4} ]) :\n"
           "  PostOnStream (HostUnit0, Inputs:{T0_g[ iS0{4} ]}, Outputs:{T2_g[ iS2{4} ]})\n"
           "\nHostUnit0: Inputs={T0_g[ iS0{4} ]} -> Outputs={T2_g[ iS2{4} ]}\n%kernel {\n"
           "T2_g[ iS2{4} ]\n   = T0_g[ iS0{4} ]\n   + T0_g[ iS0{4} ];\n}\nEND.\n");
  ASSERT_EQ(d.fusions.size(), 1u);
  EXPECT_EQ(d.fusions[0].kind, BlockKind::HostIr);
  EXPECT_EQ(d.fusions[0].inputs, std::vector<TensorNum>{0});
  EXPECT_EQ(d.fusions[0].outputs, std::vector<TensorNum>{2});
  EXPECT_EQ(d.fusions[0].exprs.size(), 1u);
}

TEST(ReaderWild, KernelMathClosedByABareBrace) {
  Document d =
      read("Segment the fusion (Original Fusion Un-modified):\nInputs:\n  T0_g[ iS0{i0} ], "
           "float\nOutputs:\n  T1_g[ iS1{i0} ], float\n\n%kernel_math {\nT1_g[ iS1{i0} ]\n"
           "   = T0_g[ iS0{i0} ];\n}\n");
  ASSERT_EQ(d.fusions.size(), 1u);
  ASSERT_EQ(d.fusions[0].exprs.size(), 1u);
  EXPECT_EQ(d.fusions[0].exprs[0].kind, OpKind::Set); // 2023: `T1 = T0;` is a copy.
}

TEST(ReaderWild, MultiOutputStatement) {
  Document d = read("%kernel {\n( T19_g___bfloat[iS5{8}], T20_g_int64_t[iS6{8}] )\n"
                    "   = topk( T0_g___bfloat[iS0{8}], i3, 0, true, true )\n} // %kernel\n");
  ASSERT_EQ(d.fusions[0].exprs.size(), 1u);
  EXPECT_EQ(d.fusions[0].exprs[0].outputs, (std::vector<TensorNum>{19, 20}));
  EXPECT_EQ(d.fusions[0].exprs[0].kind, OpKind::Other);
}

TEST(ReaderWild, TorchrunRankPrefixes) {
  Fusion f = readOne("[rank0]: Inputs:\n[rank0]:   T0_g_float[iS0{8}]\n[rank0]: Outputs:\n"
                     "[rank0]:   T1_g_float[iS1{8}]\n[rank0]: \n[rank0]: %kernel_math {\n"
                     "[rank0]: T1_g_float[iS1{8}]\n[rank0]:    = Set( T0_g_float[iS0{8}], "
                     "cache_op=Streaming )\n[rank0]: } // %kernel_math \n");
  EXPECT_EQ(f.inputs, std::vector<TensorNum>{0});
  EXPECT_EQ(f.exprs.size(), 1u);
}

TEST(ReaderWild, TransformPrinterSectionOnItsOwn) {
  Fusion f = readOne("TransformPrinter : \nT0_g_float[ideviceIdx.x1{2}, iS2{4}] (DeviceMesh{0 1})\n"
                     " logical domain : (iS0{8})\n contiguity: t\n"
                     "  Outer split: iS0{8} by factor 2 -> ideviceIdx.x1{2}, iS2{4}\n"
                     " loop domain : (ideviceIdx.x1{2}, iS2{4})\n");
  EXPECT_EQ(f.kind, BlockKind::TransformsOnly);
  EXPECT_EQ(f.transforms.size(), 1u);
}

TEST(ReaderWild, GroupDetailsPastedAlone) {
  Document d = read("group details:\ng{(pointwise)\ngroup id: 2\ninputs:\n  T0_g_float[ iS0{8} ] "
                    "float\noutputs:\n  T1_g_float[ iS1{8} ] float\n\n\nT1_g_float[ iS1{8} ]\n"
                    "   = -T0_g_float[ iS0{8} ];\n(0)\n}\n");
  ASSERT_EQ(d.fusions.size(), 1u);
  EXPECT_EQ(d.fusions[0].kind, BlockKind::SegmentedFusion);
  EXPECT_EQ(d.fusions[0].exprs.size(), 1u);
  EXPECT_FALSE(d.truncated.has_value());
}

const std::string kMesh = " (DeviceMesh{0 1})";
const std::string kT0 = "T0_g_float[ideviceIdx.x0{2}]" + kMesh;
const std::string kT1 = "T1_g_float[iS1{2}]" + kMesh;

std::string streamLoop(const std::string &body) {
  return "%HostIrContainer { (T0_g_float[iS0{2}, ideviceIdx.x1{2}]" + kMesh +
         ") -> (T1_g_float[iStreamIdx2{2}, iS3{2}]" + kMesh +
         ") :\n  GetCurrentStream into Stream 0\n  FOR StreamIdx in iStreamIdx2{2}:\n"
         "    SetCurrentStream to Stream ( StreamIdx % numberOfStreams )\n" +
         body + "  SetCurrentStream to Stream 0\n} // %HostIrContainer\n";
}

/// A loop body: T2 = T0[StreamIdx] (read view), T3 = T1[index] (write
/// view), Communication 39 from T2 into T3.
std::string loopedAllgatherBody(const std::string &outputIndex) {
  return "    T2_g_float[ideviceIdx.x4{2}]" + kMesh +
         "\n       = HirAliasSelect( T0_g_float[iS0{2}, ideviceIdx.x1{2}]" + kMesh +
         ", axis = iS0{2}, index = StreamIdx )\n    T3_g_float[iS5{2}]" + kMesh +
         "\n       = HirAliasSelect( T1_g_float[iStreamIdx2{2}, iS3{2}]" + kMesh +
         ", axis = iStreamIdx2{2}, index = " + outputIndex +
         " )\n    Communication 39 (type=Allgather, "
         "team=(0 1), input=T2_g_float[ideviceIdx.x4{2}]" +
         kMesh + ", output=T3_g_float[iS5{2}]" + kMesh +
         ", backend=NCCL)\n    Wait Communication 39\n";
}

TEST(ReaderWild, CommunicationInsideAStreamLoopCarriesItsLoopAndViews) {
  Document d = read(streamLoop(loopedAllgatherBody("StreamIdx")));
  const Fusion &f = d.fusions.at(0);
  // The HirAliasSelect naming the Communication's output is a write view:
  // no statement, but the Communication's output view.
  ASSERT_EQ(f.exprs.size(), 2u);
  EXPECT_EQ(f.exprs[0].op, "HirAliasSelect");
  EXPECT_EQ(f.exprs[1].kind, OpKind::Communication);
  EXPECT_EQ(f.exprs[1].attr(kHostLoopAttr), "FOR StreamIdx in iStreamIdx2{2}");
  EXPECT_EQ(f.exprs[1].attr(kOutputViewAttr), "T1");
  EXPECT_EQ(f.exprs[1].attr(kOutputViewAxisAttr), "iStreamIdx2{2}");
  auto model = loopedCommunication(f, f.exprs[1]);
  ASSERT_TRUE(std::holds_alternative<LoopedCommunication>(model)) << std::get<std::string>(model);
  const auto &lc = std::get<LoopedCommunication>(model);
  EXPECT_EQ(lc.loop.var, "StreamIdx");
  EXPECT_EQ(lc.loop.hi, Extent::constant(2));
  EXPECT_EQ(lc.input().base, 0);
  EXPECT_EQ(lc.output().base, 1);
  DiagnosticEngine diags;
  auto graph = FusionGraph::build(f, diags);
  ASSERT_TRUE(graph.has_value());
  for (const auto &e : graph->edges()) // The read view has no element map of its own.
    EXPECT_EQ(e.map.unsupported.has_value(), e.consumer == 2)
        << "T" << e.producer << " -> T" << e.consumer;
  // The printout writes the write view back before the Communication.
  Document again = read(printFusion(f));
  EXPECT_EQ(again.fusions.at(0).exprs.at(1).attrs, f.exprs[1].attrs);
}

TEST(ReaderWild, LoopsOutsideTheModelStayUnsupported) {
  // A write view at another index than the loop variable, and a
  // Communication in a branch of the loop body: one iteration's slice is not
  // what the model reads, so the edge is unsupported, with the reason.
  std::string branched = "    IF Manual ( StreamIdx == deviceIdx.x ):\n";
  std::istringstream lines(loopedAllgatherBody("StreamIdx"));
  for (std::string line; std::getline(lines, line);)
    branched += "  " + line + "\n";
  for (const std::string &body : {loopedAllgatherBody("0"), branched}) {
    Document d = read(streamLoop(body));
    const Fusion &f = d.fusions.at(0);
    DiagnosticEngine diags;
    auto graph = FusionGraph::build(f, diags);
    ASSERT_TRUE(graph.has_value());
    // Read back from its printout, the Communication says the same.
    Document again = read(printFusion(f));
    EXPECT_EQ(again.fusions.at(0).exprs.back().attrs, f.exprs.back().attrs) << printFusion(f);
    for (const auto &e : graph->edges()) {
      ASSERT_TRUE(e.map.unsupported.has_value()) << body;
      if (f.exprs[e.expr].kind == OpKind::Communication) {
        EXPECT_NE(e.map.unsupported->find("posted inside the host loop"), std::string::npos)
            << *e.map.unsupported;
      }
    }
  }
}

/// A host IR container from the DIDx-sharded T0 to the replicated T1 on two
/// devices, around `body`.
std::string gatherProgram(const std::string &body) {
  return "%HostIrContainer { (" + kT0 + ") -> (" + kT1 + ") :\n" + body + "} // %HostIrContainer\n";
}

/// A loop body: T5 = T0[StreamIdx] (read view, rows sharded), then T6 =
/// T1[index] (write view) written by a matmul of T5 with the replicated W.
std::string loopedMatmulBody(const std::string &outputIndex) {
  return "    T5_g_float[ideviceIdx.x4{2}]" + kMesh +
         "\n       = HirAliasSelect( T0_g_float[iS0{2}, ideviceIdx.x1{2}]" + kMesh +
         ", axis = iS0{2}, index = StreamIdx )\n    T6_g_float[iS5{2}]" + kMesh +
         "\n       = HirAliasSelect( T1_g_float[iStreamIdx2{2}, iS3{2}]" + kMesh +
         ", axis = iStreamIdx2{2}, index = " + outputIndex + " )\n    T6_g_float[iS5{2}]" + kMesh +
         "\n       = Set( T5_g_float[ideviceIdx.x4{2}]" + kMesh + ", cache_op=Streaming )\n";
}

const nlohmann::json *edgeOf(const nlohmann::json &doc, const std::string &producer,
                             const std::string &consumer) {
  for (const auto &e : doc["files"][0]["edges"])
    if (e["producer"] == producer && e["consumer"] == consumer)
      return &e;
  return nullptr;
}

TEST(ReaderWild, LoopedStatementWritingASliceIsCheckedNotLeftUncomputed) {
  // Issue 16: a looped statement other than a Communication that writes a
  // slice of the program's output. Its write view is recorded, its loop
  // claims proved, and the output is computed: no "does not compute" note.
  std::string text = streamLoop(loopedMatmulBody("StreamIdx"));
  Document d = read(text);
  const Fusion &f = d.fusions.at(0);
  const Expr &set = f.exprs.back();
  EXPECT_EQ(set.attr(kHostLoopAttr), "FOR StreamIdx in iStreamIdx2{2}");
  EXPECT_EQ(set.attr(kOutputViewAttr), "T1");
  auto model = loopedStatement(f, set);
  ASSERT_TRUE(std::holds_alternative<LoopedStatement>(model)) << std::get<std::string>(model);
  EXPECT_EQ(std::get<LoopedStatement>(model).reads.size(), 1u);
  EXPECT_EQ(std::get<LoopedStatement>(model).write->base, 1);
  // T5 is sharded on a device-parallel axis, the output slice is not: the
  // resharding Set is nvFuser's Allgather per iteration, proved with the
  // loop claims, and T1 is computed (no note saying it is not).
  int status = -1;
  nlohmann::json doc = checkJson("looped_set.txt", text, status);
  EXPECT_EQ(status, 0) << doc.dump(2);
  ASSERT_NE(edgeOf(doc, "T5", "T6"), nullptr);
  EXPECT_EQ((*edgeOf(doc, "T5", "T6"))["status"], "proved");
  EXPECT_EQ(doc.dump().find("does not compute"), std::string::npos) << doc.dump(2);
  // Read back from its printout (loop and write view printed around it).
  Document again = read(printFusion(f));
  EXPECT_EQ(again.fusions.at(0).exprs.back().attrs, set.attrs) << printFusion(f);
}

TEST(ReaderWild, LoopedStatementWithAWrongBoundIsRefutedNamingTheIteration) {
  std::string text = streamLoop(loopedMatmulBody("StreamIdx"));
  // A loop one iteration short: `FOR i18 from 0 to 1` over a stream axis of 2.
  std::string header = "FOR StreamIdx in iStreamIdx2{2}:";
  text.replace(text.find(header), header.size(), "FOR StreamIdx from 0 to 1:");
  // A replicated read view, so that the per-iteration Set is local.
  for (std::string from : {"ideviceIdx.x1{2}", "ideviceIdx.x4{2}"})
    for (size_t at; (at = text.find(from)) != std::string::npos;)
      text.replace(at, from.size(), from == "ideviceIdx.x1{2}" ? "iS1{2}" : "iS4{2}");
  int status = -1;
  nlohmann::json doc = checkJson("looped_short.txt", text, status);
  EXPECT_EQ(status, 1);
  const nlohmann::json *edge = edgeOf(doc, "T5", "T6");
  ASSERT_NE(edge, nullptr) << doc.dump(2);
  EXPECT_EQ((*edge)["status"], "refuted");
  EXPECT_NE((*edge)["counterexample"]["message"].get<std::string>().find(
                "iteration StreamIdx = 1 is missing"),
            std::string::npos)
      << (*edge)["counterexample"];
  // With the right bound the same program is proved, T1 computed.
  text.replace(text.find("FOR StreamIdx from 0 to 1:"), 26, "FOR StreamIdx from 0 to 2:");
  doc = checkJson("looped_right.txt", text, status);
  EXPECT_EQ(status, 0) << doc.dump(2);
  ASSERT_NE(edgeOf(doc, "T5", "T6"), nullptr);
  EXPECT_EQ((*edgeOf(doc, "T5", "T6"))["status"], "proved");
  EXPECT_EQ((*edgeOf(doc, "T0", "T5"))["status"], "proved"); // the read view
}

TEST(ReaderWild, LoopedStatementsOutsideTheModelAreUnsupported) {
  // Each program leaves something the loop model does not read; the edge
  // says so and the run is never exit 0.
  std::string atZero = streamLoop(loopedMatmulBody("0"));
  std::string temp =
      streamLoop("    T5_g_float[iS4{2}]" + kMesh +
                 "\n       = HirAliasSelect( T0_g_float[iS0{2}, ideviceIdx.x1{2}]" + kMesh +
                 ", axis = iS0{2}, index = StreamIdx )\n    T7_g_float[iS6{2}]" + kMesh +
                 "\n       = Set( T5_g_float[iS4{2}]" + kMesh + ", cache_op=Streaming )\n");
  temp.replace(temp.find("  SetCurrentStream to Stream 0\n"), 0,
               "  T8_g_float[iS7{2}]" + kMesh + "\n     = Set( T7_g_float[iS6{2}]" + kMesh +
                   ", cache_op=Streaming )\n");
  std::string unlooped =
      gatherProgram("  T2_g_float[iS4{2}]" + kMesh + "\n     = HirAliasSelect( " + kT1 +
                    ", axis = iS1{2}, index = 0 )\n  T2_g_float[iS4{2}]" + kMesh +
                    "\n     = Set( " + kT0 + ", cache_op=Streaming )\n");
  for (const auto &[text, consumer, why] :
       {std::tuple{atZero, "T6", "not at the loop variable"}, std::tuple{temp, "T8", ""},
        std::tuple{temp, "T7", "read outside the loop"},
        std::tuple{unlooped, "T2", "outside a host loop"}}) {
    int status = -1;
    nlohmann::json doc = checkJson("outside_model.txt", text, status);
    EXPECT_NE(status, 0) << text;
    bool found = false;
    for (const auto &e : doc["files"][0]["edges"])
      if (e["consumer"] == consumer && std::string(why) != "") {
        found = true;
        EXPECT_EQ(e["communication"], "unsupported") << e;
        EXPECT_NE(e["reason"].get<std::string>().find(why), std::string::npos) << e["reason"];
      }
    EXPECT_TRUE(found || std::string(why).empty()) << text;
  }
}

TEST(ReaderWild, TwoLoopsWithOneHeaderStayApart) {
  // A value computed in the first loop is only its last iteration's in the
  // second: the loop number keeps the two loops apart.
  std::string body1 = "    T5_g_float[iS4{2}]" + kMesh +
                      "\n       = HirAliasSelect( T0_g_float[iS0{2}, ideviceIdx.x1{2}]" + kMesh +
                      ", axis = iS0{2}, index = StreamIdx )\n    T7_g_float[iS6{2}]" + kMesh +
                      "\n       = Set( T5_g_float[iS4{2}]" + kMesh + ", cache_op=Streaming )\n";
  std::string body2 = "  FOR StreamIdx in iStreamIdx2{2}:\n    T6_g_float[iS5{2}]" + kMesh +
                      "\n       = HirAliasSelect( T1_g_float[iStreamIdx2{2}, iS3{2}]" + kMesh +
                      ", axis = iStreamIdx2{2}, index = StreamIdx )\n    T6_g_float[iS5{2}]" +
                      kMesh + "\n       = Set( T7_g_float[iS6{2}]" + kMesh +
                      ", cache_op=Streaming )\n";
  Document d = read(streamLoop(body1 + body2));
  const Fusion &f = d.fusions.at(0);
  ASSERT_EQ(f.exprs.size(), 3u);
  EXPECT_EQ(f.exprs[1].attr(kHostLoopIdAttr), "1");
  EXPECT_EQ(f.exprs[2].attr(kHostLoopIdAttr), "2");
  auto model = loopedStatement(f, f.exprs[2]);
  ASSERT_TRUE(std::holds_alternative<std::string>(model));
  EXPECT_NE(std::get<std::string>(model).find("computed in another loop"), std::string::npos)
      << std::get<std::string>(model);
  Document again = read(printFusion(f));
  EXPECT_EQ(again.fusions.at(0).exprs[2].attrs, f.exprs[2].attrs) << printFusion(f);
}

TEST(ReaderWild, CollectivePermuteWithSwizzledPeersIsUnsupported) {
  // 2026: a ring step whose peers come from Swizzle1D index arithmetic.
  std::string text = gatherProgram(
      "  FOR i5 from 0 to 2:\n    CollectivePermute 12 (team=(0 1), send_peer=( ( deviceIdx.x + "
      "1 ) % 2 ), recv_peer=( ( deviceIdx.x + 1 ) % 2 ), input=" +
      kT0 + ", output=" + kT1 + ", backend=NCCL)\n    Wait(Communication 12)\n");
  int status = -1;
  nlohmann::json doc = checkJson("permute.txt", text, status);
  EXPECT_EQ(status, 1);
  const auto &edges = doc["files"][0]["edges"];
  ASSERT_EQ(edges.size(), 1u);
  EXPECT_EQ(edges[0]["communication"], "unsupported");
  EXPECT_NE(edges[0]["reason"].get<std::string>().find("are not dispatchSwizzle1D's"),
            std::string::npos)
      << edges[0]["reason"];
}

TEST(ReaderWild, ScopesCloseByIndentation) {
  // The Communication after the loop body is not inside it.
  Document d = read(gatherProgram("  FOR i5 from 0 to 3:\n    Synchronize Stream i5\n"
                                  "  Communication 1 (type=Allgather, team=(0 1), input=" +
                                  kT0 + ", output=" + kT1 + ")\n  Wait(Communication 1)\n"));
  const Fusion &f = d.fusions.at(0);
  ASSERT_EQ(f.exprs.size(), 1u);
  EXPECT_EQ(f.exprs[0].attr(kHostLoopAttr), "");
}

TEST(ReaderWild, WrappedAllocateAndGluedWait) {
  Document d = read(gatherProgram("  " + kT1 + " = ALLOCATE(buffer=" + kT1 +
                                  ", mem_type=global, size=2, zero_init=false\n)\n"
                                  "  Communication 1 (type=Allgather, team=(0 1), Input=" +
                                  kT0 + ", Output=" + kT1 + ")    Wait Communication 1\n"));
  const Fusion &f = d.fusions.at(0);
  ASSERT_EQ(f.exprs.size(), 1u);
  EXPECT_EQ(f.exprs[0].kind, OpKind::Communication);
}

TEST(ReaderWild, EdgeOfAnOperandUsedTwiceIsReportedOnce) {
  int status = -1;
  nlohmann::json doc = checkJson("twice.txt",
                                 "%kernel {\nT1_g_float[iS1{8}]\n   = T0_g_float[iS0{8}]\n"
                                 "   + T0_g_float[iS0{8}];\n} // %kernel\n",
                                 status);
  EXPECT_EQ(status, 0);
  EXPECT_EQ(doc["files"][0]["edges"].size(), 1u);
}

} // namespace
} // namespace shardcheck
