// The fuzz findings of issue 13 (fuzz/found/, minimized), each replayed
// through check-sharding and run-plan, and the classes behind them:
// - what the JSON IR reader accepts prints as a dump that reads back (a
//   domain listing an IterDomain twice, a free-form op spelling; the reader
//   checks the printout with the dump grammar itself);
// - an expression of the wrong shape for its kind is a read error in both
//   readers (a host IR Communication without `input=`);
// - an output no expression computes is never checked vacuously (unknown in
//   a kernel, a note in a per-device host IR program; never planned as
//   computed), and a plan step resting on no verdict is not verified;
// - a scalar shardcheck cannot read makes its expression unsupported;
// - an extent the dump reader keeps as an opaque call reads back from JSON.
//
// This file does not run the fuzzers (scripts/dev.sh fuzz-ci does).
#include "ir/Json.h"
#include "ir/reader/DumpReader.h"
#include "plan/Plan.h"
#include "tests/DocumentCompare.h"
#include "tests/TestPaths.h"
#include "tests/ToolRuns.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

using namespace shardcheck;
using shardcheck::testing::ToolRun;

namespace {

std::string found(const std::string &name) {
  return std::string(SHARDCHECK_SOURCE_DIR) + "/fuzz/found/" + name;
}

std::string textOf(const std::string &path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

ToolRun check(const std::string &file, const std::string &plan = "") {
  std::vector<std::string> args{"--quiet", file};
  if (!plan.empty())
    args = {"--emit-plan", plan, file};
  return shardcheck::testing::checkShardingTool(args);
}

void expectRejected(const std::string &file, int status, const std::string &message) {
  ToolRun r = check(found(file));
  EXPECT_EQ(r.status, status) << file << "\n" << r.out << r.err;
  EXPECT_NE((r.out + r.err).find(message), std::string::npos) << file << "\n" << r.out << r.err;
}

TEST(FuzzFindings, JsonIrThatDoesNotPrintBackIsRefused) {
  expectRejected("json-ir-duplicate-id-in-domain.json", 2,
                 "IterDomain 0 appears twice in tensor field \"logical\"");
  expectRejected("json-ir-free-op-spelling.json", 2,
                 "this fusion prints as a dump shardcheck cannot read back");
  expectRejected("json-ir-free-op-spelling.json", 2, "(at /fusions/0/exprs/0) [json-inconsistent]");
}

TEST(FuzzFindings, AWriteViewWithoutItsAxisIsAReadError) {
  // Where a looped statement writes is part of its meaning (ir/HostLoops.h):
  // a slice view without `axis =` is refused where it stands, not recorded
  // empty and printed back as `axis = ,`.
  expectRejected("dump-reader-write-view-without-axis.txt", 2,
                 "select names the slice T4 a later statement writes, but has no `axis =` [parse]");
}

TEST(FuzzFindings, ACommunicationWithoutInputIsAReadError) {
  expectRejected("pipeline-communication-without-input.txt", 2,
                 "Communication 7 has no 'input=' field [parse]");
  // The JSON IR reader applies the same shape rule (ir/ExprShape.h).
  Document doc = readDocumentFile(found("pipeline-output-never-computed.txt"));
  Fusion &f = doc.fusions.at(0);
  Expr comm;
  comm.kind = OpKind::Communication;
  comm.op = "Allgather";
  comm.communication = CommunicationInfo{};
  comm.communication->team = {0, 1};
  comm.outputs = {1};
  f.addExpr(comm);
  try {
    documentFromJsonText(documentToJsonText(doc), "x.json");
    ADD_FAILURE() << "a Communication without input was read";
  } catch (const InputError &e) {
    EXPECT_NE(std::string(e.what()).find("takes one tensor operand, found 0 operand(s)"),
              std::string::npos)
        << e.what();
  }
}

TEST(FuzzFindings, AnOutputNothingComputesIsNeverProvedOrRunVacuously) {
  // Host IR printed per device leaves outputs to other programs: a note,
  // and the plan takes the output as an input (nothing to compare).
  std::string plan = shardcheck::testing::tempPath("fuzz_findings_test", "never.json");
  ToolRun host = check(found("pipeline-output-never-computed.txt"), plan);
  EXPECT_EQ(host.status, 0) << host.out << host.err;
  EXPECT_NE(host.out.find("T1 is a fusion output this host IR program does not compute"),
            std::string::npos)
      << host.out;
  Plan loaded = planFromJsonText(textOf(plan), plan);
  EXPECT_TRUE(loaded.steps.empty());
  for (const PlanTensor &t : loaded.tensors)
    EXPECT_EQ(t.role, "input") << "T" << t.tensor;

  // In a kernel every output is computed by its expressions: unknown, and
  // no plan.
  std::string kernel = shardcheck::testing::tempFile("fuzz_findings_test", "kernel.txt", R"(Inputs:
  T0_g_float[iS0{4}] (DeviceMesh{0 1})
Outputs:
  T2_g_float[iS2{4}] (DeviceMesh{0 1})

%kernel {
T1_g_float[iS1{4}] (DeviceMesh{0 1})
   = Set( T0_g_float[iS0{4}] (DeviceMesh{0 1}), cache_op=Streaming )
} // %kernel
)");
  ToolRun k = check(kernel, plan);
  EXPECT_EQ(k.status, 1) << k.out << k.err; // the refused plan is an error
  EXPECT_NE(k.out.find("T2 is a fusion output, but no expression shardcheck read defines it"),
            std::string::npos)
      << k.out;
  EXPECT_NE(k.out.find("T2 is an output that no expression read defines"), std::string::npos)
      << k.out;
  EXPECT_EQ(check(kernel).status, 3) << "unknown without a plan";
}

TEST(FuzzFindings, AStepRestingOnNoVerdictIsNotVerified) {
  // From the long run (pipeline, slice 2): a garbled operand read as a
  // scalar leaves `expf` without a tensor operand, so no edge into T2.
  std::string dump = shardcheck::testing::tempFile("fuzz_findings_test", "no-tensor.txt", R"(Inputs:
  T0_g_float[iS0{4}] (DeviceMesh{0})
Outputs:
  T2_g_float[iS4{4}] (DeviceMesh{0})

%kernel_math {
T2_g_float[iS4{4}] (DeviceMesh{0})
   = expf(Z1_g_float[iS2{4}] (DeviceMesh{0}));
} // %kernel_math
)");
  std::string plan = shardcheck::testing::tempPath("fuzz_findings_test", "no-tensor.json");
  ToolRun r = check(dump, plan);
  EXPECT_EQ(r.status, 3) << r.out << r.err;
  EXPECT_NE(r.out.find("T2 is defined by `expf` from no tensor operand"), std::string::npos)
      << r.out;
  ToolRun run = shardcheck::testing::runPlanTool({plan});
  EXPECT_EQ(run.status, 3) << run.out << run.err;
  EXPECT_NE(run.err.find("step 0 rests on no verdict"), std::string::npos) << run.err;

  PlanStep step;
  EXPECT_FALSE(step.verified());
  step.restsOn.push_back(PlanVerdict{});
  step.restsOn.back().status = PlanStatus::Proved;
  EXPECT_TRUE(step.verified());
}

TEST(FuzzFindings, AnUnreadableScalarMakesItsExpressionUnsupported) {
  expectRejected("pipeline-reduction-bad-initial-value.txt", 1,
                 "unsupported: shardcheck cannot read the initial value `float()0`");
  std::string dump = shardcheck::testing::tempFile("fuzz_findings_test", "scalar.txt", R"(%kernel {
T1_g_float[iS1{4}] (DeviceMesh{0 1})
   = T0_g_float[iS0{4}] (DeviceMesh{0 1})
   + double(x y);
} // %kernel
)");
  ToolRun r = check(dump);
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_NE((r.out + r.err).find("cannot read the scalar operand `double(x y)`"), std::string::npos)
      << r.out << r.err;
}

TEST(FuzzFindings, AScalarSymbolIsAPlanSymbolARunBinds) {
  // A proved `T1 * Z1` planned a run no --bind could make: the plan listed
  // only its size symbols.
  std::string dump = shardcheck::testing::tempFile("fuzz_findings_test", "symbol.txt", R"(Inputs:
  T1_g_float[iS3{16}] (DeviceMesh{0 1})
Outputs:
  T2_g_float[iS4{16}] (DeviceMesh{0 1})

%kernel {
T2_g_float[iS4{16}] (DeviceMesh{0 1})
   = T1_g_float[iS3{16}] (DeviceMesh{0 1})
   * (double)(Z1);
} // %kernel
)");
  std::string plan = shardcheck::testing::tempPath("fuzz_findings_test", "symbol.json");
  ASSERT_EQ(check(dump, plan).status, 0);
  EXPECT_EQ(planSymbols(planFromJsonText(textOf(plan), plan)), std::vector<std::string>{"Z1"});
  ToolRun unbound = shardcheck::testing::runPlanTool({plan});
  EXPECT_EQ(unbound.status, 2);
  EXPECT_NE(unbound.err.find("bind Z1"), std::string::npos) << unbound.err;
  ToolRun bound = shardcheck::testing::runPlanTool({"--bind", "Z1=3", plan});
  EXPECT_EQ(bound.status, 0) << bound.out << bound.err;
}

TEST(FuzzFindings, AnOpaqueExtentCallReadsBackFromJson) {
  Document doc = readDocumentFile(found("dump-reader-call-extent-as-symbol.txt"));
  Document again = documentFromJsonText(documentToJsonText(doc), "x.json");
  std::string why;
  EXPECT_TRUE(documentsEqual(doc, again, &why)) << why;
  // A symbol with blanks outside a call still cannot print back.
  std::string json = documentToJsonText(doc);
  size_t at = json.find("foo(i0, 3)");
  ASSERT_NE(at, std::string::npos) << json;
  json.replace(at, 10, "foo i0 3  ");
  EXPECT_THROW(documentFromJsonText(json, "x.json"), InputError);
}

} // namespace
