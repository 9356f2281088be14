// Tests of dtensor/: reading DTensor documents (docs/dtensor.md), their
// detection beside dumps and JSON IR, the mapping of placements to the IR,
// and the located rejection of placements with no faithful mapping. The
// verdicts on DTensor documents are golden tests (corpus/dtensor/, run by
// golden_test.cpp).
//
// DTensor's own sequences of corpus/dtensor are also executed: planned with
// DTensor's collectives (compiler lowerings) and run on the sim backend,
// every confirmed sequence matches the unsharded reference and a refuted
// one, run anyway, does not. check-sharding sets both plans' bytes per rank
// side by side (text and JSON).
//
// This file does not run the recorder (tests/dtensor_record_test.py does,
// where PyTorch is installed).
#include "checker/CheckDocument.h"
#include "dtensor/DTensorInput.h"
#include "dtensor/DTensorReader.h"
#include "dtensor/DTensorToIr.h"
#include "dtensor/PlanBytes.h"
#include "executor/sim/SimBackend.h"
#include "ir/reader/DumpReader.h"
#include "tests/TestPaths.h"
#include "tests/ToolRuns.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <functional>
#include <string>

using namespace shardcheck;
using namespace shardcheck::dtensor;

namespace {

/// A document on `mesh` (JSON shape) and `devices` with `shape`, from `src`
/// to `dst` (JSON arrays of placement strings), plus `extra` fields.
std::string document(const std::string &mesh, const std::string &devices, const std::string &shape,
                     const std::string &src, const std::string &dst,
                     const std::string &extra = "") {
  return "{\"format\": \"shardcheck-dtensor/1\",\n \"mesh\": {\"shape\": " + mesh +
         ", \"devices\": " + devices + "},\n \"tensor\": {\"shape\": " + shape +
         "},\n \"source\": {\"placements\": " + src + "},\n \"target\": {\"placements\": " + dst +
         "}" + extra + "}\n";
}

/// The InputError that reading `text` throws: its code and line.
std::pair<std::string, int> errorOf(const std::string &text) {
  try {
    readInputDocument(text, "case.json");
  } catch (const InputError &e) {
    return {e.diagnostic().code, e.diagnostic().loc.line};
  }
  return {"", 0};
}

/// Expects `map` to throw a `dtensor-unmapped` InputError whose message
/// contains `part`.
void expectUnmapped(const std::function<void()> &map, const std::string &part) {
  try {
    map();
    ADD_FAILURE() << "not rejected";
  } catch (const InputError &e) {
    EXPECT_EQ(e.diagnostic().code, "dtensor-unmapped");
    EXPECT_NE(e.diagnostic().message.find(part), std::string::npos) << e.diagnostic().message;
  }
}

} // namespace

TEST(DTensorReader, DetectsItsFormatByContent) {
  EXPECT_TRUE(isDTensorText(document("[2]", "[0, 1]", "[4]", "[\"Shard(0)\"]", "[\"R\"]")));
  EXPECT_TRUE(isDTensorText("  {\"format\" : \"shardcheck-dtensor/2\"}"));
  EXPECT_FALSE(isDTensorText("{\"format\": \"shardcheck-ir\", \"version\": 1}"));
  EXPECT_FALSE(isDTensorText("%kernel {\n} // %kernel\n"));
}

TEST(DTensorReader, ReadsEveryPlacementSpelling) {
  EXPECT_EQ(parsePlacement("Shard(1)")->dim, 1);
  EXPECT_EQ(parsePlacement("S(0)")->kind, dtensor::Placement::Kind::Shard);
  EXPECT_EQ(parsePlacement("Shard(dim=2)")->dim, 2);
  EXPECT_EQ(parsePlacement("Replicate()")->kind, dtensor::Placement::Kind::Replicate);
  EXPECT_EQ(parsePlacement("R")->kind, dtensor::Placement::Kind::Replicate);
  EXPECT_EQ(parsePlacement("Partial(max)")->reduceOp, "max");
  EXPECT_EQ(parsePlacement("P")->reduceOp, "sum");
  auto strided = parsePlacement("_StridedShard(0, split_factor=2)");
  ASSERT_TRUE(strided);
  EXPECT_EQ(strided->splitFactor, 2);
  EXPECT_EQ(parsePlacement("_StridedShard(dim=0, sf=4)")->splitFactor, 4);
  EXPECT_FALSE(parsePlacement("Shard"));
  EXPECT_FALSE(parsePlacement("Sharded(0)"));
}

TEST(DTensorReader, RejectsOtherVersionsUnknownFieldsAndBadMeshes) {
  EXPECT_EQ(errorOf("{\"format\": \"shardcheck-dtensor/2\"}").first, "dtensor-format");
  std::string ok = document("[2]", "[0, 1]", "[4]", "[\"Shard(0)\"]", "[\"R\"]");
  EXPECT_EQ(
      errorOf(document("[2]", "[0, 1]", "[4]", "[\"Shard(0)\"]", "[\"R\"]", ",\n \"colour\": 1")),
      (std::pair<std::string, int>{"dtensor-schema", 6}));
  EXPECT_EQ(errorOf(document("[2, 2]", "[0, 1, 2]", "[4]", "[\"R\", \"R\"]", "[\"R\", \"R\"]")),
            (std::pair<std::string, int>{"dtensor-schema", 2}));
  EXPECT_EQ(errorOf(document("[2]", "[0, 1]", "[4]", "[\"Shard(0)\"]", "[\"Stripe(0)\"]")),
            (std::pair<std::string, int>{"dtensor-schema", 5}));
  EXPECT_EQ(errorOf(document("[2]", "[0, 1]", "[4]", "[\"R\", \"R\"]", "[\"R\"]")).first,
            "dtensor-schema");
  EXPECT_EQ(errorOf(ok).first, "");
}

TEST(DTensorReader, RejectsARecordedRankOutsideTheMesh) {
  // Found by fuzz-dtensor-reader: a rank (or group member) that is no device
  // of the mesh reached the mapping, which asked the mesh for its
  // coordinates (an internal error); it is a located schema error.
  auto withRank = [](const std::string &rank, const std::string &group) {
    return ",\n \"dtensor\": {\"steps\": [{\"mesh_dim\": 0, \"from\": \"Shard(0)\", \"to\": "
           "\"Replicate()\", \"collectives\": [0]}], \"collectives\": [{\"kind\": \"all_gather\", "
           "\"ranks\": [\n{\"rank\": " +
           rank + ", \"group\": " + group + ", \"input_shape\": [2], \"output_shape\": [4]}]}]}";
  };
  auto doc = [&](const std::string &rank, const std::string &group) {
    return document("[2]", "[0, 1]", "[4]", "[\"Shard(0)\"]", "[\"R\"]", withRank(rank, group));
  };
  EXPECT_EQ(errorOf(doc("7", "[0, 1]")), (std::pair<std::string, int>{"dtensor-schema", 7}));
  EXPECT_EQ(errorOf(doc("0", "[0, 9]")), (std::pair<std::string, int>{"dtensor-schema", 7}));
}

TEST(DTensorToIr, RejectsPlacementsWithoutFaithfulMapping) {
  using Error = std::pair<std::string, int>;
  // A reduce op the mapping does not cover (product), and a change of
  // reduce op (DTensor keeps the local values: the tensor's value changes).
  EXPECT_EQ(errorOf(document("[2]", "[0, 1]", "[4]", "[\"Partial(product)\"]", "[\"R\"]")),
            (Error{"dtensor-unmapped", 4}));
  EXPECT_EQ(errorOf(document("[2]", "[0, 1]", "[4]", "[\"Partial(avg)\"]", "[\"Partial(sum)\"]")),
            (Error{"dtensor-unmapped", 5}));
  // Shard -> Partial: DTensor refuses it too (its greedy planner).
  EXPECT_EQ(errorOf(document("[2]", "[0, 1]", "[4]", "[\"Shard(0)\"]", "[\"Partial(sum)\"]")),
            (Error{"dtensor-unmapped", 5}));
  // A strided shard whose split factor is not the later mesh dims' product.
  EXPECT_EQ(
      errorOf(document("[2, 2]", "[0, 1, 2, 3]", "[8]",
                       "[\"_StridedShard(0, split_factor=4)\", \"Shard(0)\"]", "[\"R\", \"R\"]")),
      (Error{"dtensor-unmapped", 4}));
  // A shard of a dim the tensor does not have; a mesh of four dims.
  EXPECT_EQ(errorOf(document("[2]", "[0, 1]", "[4]", "[\"Shard(1)\"]", "[\"R\"]")).first,
            "dtensor-unmapped");
  EXPECT_EQ(errorOf(document("[1, 1, 1, 2]", "[0, 1]", "[4]", "[\"R\", \"R\", \"R\", \"R\"]",
                             "[\"R\", \"R\", \"R\", \"R\"]"))
                .first,
            "dtensor-unmapped");
}

TEST(DTensorToIr, MapsNestedShardsInShardOrderWithTheirBuffer) {
  // [Shard(0), Shard(0)] on 2x2: mesh dim 0 (DIDy) outer, mesh dim 1 (DIDx)
  // inner; the buffer is the innermost quarter, the default layout
  // (docs/semantics.md, Local buffer layout), so no allocation is given.
  Document doc = readInputDocument(document("[2, 2]", "[0, 1, 2, 3]", "[8, 3]",
                                            "[\"Shard(0)\", \"Shard(0)\"]", "[\"R\", \"R\"]"),
                                   "case.json")
                     .doc;
  ASSERT_EQ(doc.fusions.size(), 1u);
  const Fusion &f = doc.fusions[0];
  const TensorView &t0 = f.tensor(0);
  ASSERT_EQ(t0.loop.size(), 4u);
  EXPECT_EQ(f.id(t0.loop[0]).parallel, ParallelType::DIDy);
  EXPECT_EQ(f.id(t0.loop[1]).parallel, ParallelType::DIDx);
  EXPECT_TRUE(t0.allocation.empty());
  // The shard order reversed: mesh dim 1 outer.
  std::string order = document("[2, 2]", "[0, 1, 2, 3]", "[8, 3]", "[\"Shard(0)\", \"Shard(0)\"]",
                               "[\"R\", \"R\"]");
  order.replace(order.find("]},\n \"target\""), 2,
                "], \"shard_order\": [{\"tensor_dim\": 0, \"mesh_dims\": [1, 0]}]}");
  Document reversed = readInputDocument(order, "case.json").doc;
  const Fusion &g = reversed.fusions[0];
  EXPECT_EQ(g.id(g.tensor(0).loop[0]).parallel, ParallelType::DIDx);
  EXPECT_EQ(g.id(g.tensor(0).loop[1]).parallel, ParallelType::DIDy);
}

TEST(DTensorToIr, PartialIsAnUnreducedAxisThatTheTargetReduces) {
  Document doc = readInputDocument(
                     document("[4]", "[0, 1, 2, 3]", "[8]", "[\"Partial(max)\"]", "[\"Shard(0)\"]"),
                     "case.json")
                     .doc;
  const Fusion &f = doc.fusions[0];
  ASSERT_EQ(f.exprs.size(), 1u);
  EXPECT_EQ(f.exprs[0].kind, OpKind::Reduction);
  EXPECT_EQ(f.exprs[0].attr("op"), "max");
  const TensorView &t0 = f.tensor(0), &t1 = f.tensor(1);
  ASSERT_EQ(t0.logical.size(), 2u);
  EXPECT_EQ(f.id(t0.logical[0]).parallel, ParallelType::DIDx);
  EXPECT_TRUE(f.id(t1.logical[0]).isReduction());
}

/// Fusion 0 (the transition) of the document `text`.
Fusion transitionOf(const std::string &text) {
  return readInputDocument(text, "case.json").doc.fusions.at(0);
}

TEST(DTensorToIr, ReplicateToPartialIsDTensorsLocalPartition) {
  // Partial._partition_value: a sum divides by the mesh dim's size, max
  // keeps the value; a broadcast into the new unreduced axis, then `/`.
  Fusion f = transitionOf(document("[4]", "[0, 1, 2, 3]", "[8]", "[\"R\"]", "[\"Partial(sum)\"]"));
  ASSERT_EQ(f.exprs.size(), 2u);
  EXPECT_EQ(f.exprs[0].kind, OpKind::Broadcast);
  EXPECT_EQ(f.exprs[0].flags, (std::vector<bool>{true, false}));
  EXPECT_EQ(f.id(f.tensor(1).logical[0]).parallel, ParallelType::DIDx);
  EXPECT_EQ(f.exprs[1].op, "/");
  ASSERT_EQ(f.exprs[1].inputs.size(), 2u);
  EXPECT_EQ(f.exprs[1].inputs[1].scalar, "double(4)");
  Fusion max =
      transitionOf(document("[4]", "[0, 1, 2, 3]", "[8]", "[\"R\"]", "[\"Partial(max)\"]"));
  ASSERT_EQ(max.exprs.size(), 1u);
  EXPECT_EQ(max.exprs[0].kind, OpKind::Broadcast);
  // DTensor's graph-based planner (a _StridedShard) reaches a Partial from a
  // Shard through Replicate: mapped as the gather, then the partition.
  Fusion strided = transitionOf(document("[2, 2]", "[0, 1, 2, 3]", "[8]",
                                         "[\"_StridedShard(0, split_factor=2)\", \"Shard(0)\"]",
                                         "[\"Partial(sum)\", \"R\"]"));
  EXPECT_EQ(strided.exprs.back().op, "/");
}

TEST(DTensorToIr, AnAverageIsASumDividedAfterItsReduction) {
  // Partial(avg)'s value is the mean of the ranks' values: the reduction
  // sums, then `/` by the mesh dim's size; Replicate -> Partial(avg) keeps
  // the value (Partial._partition_value), a broadcast only.
  Fusion toR =
      transitionOf(document("[4]", "[0, 1, 2, 3]", "[8]", "[\"Partial(avg)\"]", "[\"R\"]"));
  ASSERT_EQ(toR.exprs.size(), 2u);
  EXPECT_EQ(toR.exprs[0].attr("op"), "add");
  EXPECT_EQ(toR.exprs[1].op, "/");
  EXPECT_EQ(toR.exprs[1].inputs.at(1).scalar, "double(4)");
  Fusion fromR =
      transitionOf(document("[4]", "[0, 1, 2, 3]", "[8]", "[\"R\"]", "[\"Partial(avg)\"]"));
  ASSERT_EQ(fromR.exprs.size(), 1u);
  EXPECT_EQ(fromR.exprs[0].kind, OpKind::Broadcast);
  // A sum and an average reduced at once: one sum, divided by the avg
  // mesh dim's size (mesh dim 1, of 4) only.
  Fusion mixed = transitionOf(document("[2, 4]", "[0, 1, 2, 3, 4, 5, 6, 7]", "[8]",
                                       "[\"Partial(sum)\", \"Partial(avg)\"]", "[\"R\", \"R\"]"));
  ASSERT_EQ(mixed.exprs.size(), 2u);
  EXPECT_EQ(mixed.exprs[1].inputs.at(1).scalar, "double(4)");
  // Not on integers: NCCL truncates each average, so the order matters.
  EXPECT_EQ(errorOf(document("[2, 4]", "[0, 1, 2, 3, 4, 5, 6, 7]", "[8], \"dtype\": \"int64\"",
                             "[\"Partial(sum)\", \"Partial(avg)\"]", "[\"R\", \"R\"]")),
            (std::pair<std::string, int>{"dtensor-unmapped", 5}));
  // Each is checked, planned and run on sim to a match.
  for (const char *dst : {"[\"R\"]", "[\"Shard(0)\"]"}) {
    SCOPED_TRACE(dst);
    Document doc =
        readInputDocument(document("[4]", "[0, 1, 2, 3]", "[6]", "[\"Partial(avg)\"]", dst),
                          "case.json")
            .doc;
    DocumentOptions options;
    options.plan = PlanOptions{0, PlanRequest::Lowerings::Checker, ""};
    FusionReport r = checkDocument(doc, options).fusions.at(0);
    ASSERT_TRUE(r.plan);
    auto bindings = satisfyingBindings(*r.plan, {});
    ASSERT_TRUE(bindings);
    SimBackend sim;
    RunOptions run;
    run.symbols = *bindings;
    EXPECT_TRUE(runPlan(*r.plan, run, sim).matches());
  }
}

TEST(DTensorToIr, NestedUnevenShardsMapToChunkedSplits) {
  // 5 rows on [Shard(0), Shard(0)] of 2x2: the second half holds 2 of 3
  // rows, which DTensor chunks as 1, 1: the inner level is a chunked split
  // (docs/semantics.md, Chunked splits); the target has none.
  Fusion f = transitionOf(
      document("[2, 2]", "[0, 1, 2, 3]", "[5]", "[\"Shard(0)\", \"Shard(0)\"]", "[\"R\", \"R\"]"));
  ASSERT_EQ(f.transforms.size(), 2u);
  EXPECT_FALSE(f.transforms[0].chunked);
  EXPECT_TRUE(f.transforms[1].chunked);
  // A dividing outer level keeps nvFuser's plain split.
  Fusion even = transitionOf(
      document("[2, 2]", "[0, 1, 2, 3]", "[6]", "[\"Shard(0)\", \"Shard(0)\"]", "[\"R\", \"R\"]"));
  for (const Transform &t : even.transforms)
    EXPECT_FALSE(t.chunked);
}

TEST(DTensorInput, NestedUnevenRecordedStepsAreJudgedOnTheirGroupsPadding) {
  // 5 columns nested on 2x2 (3, 2; then 2, 1 | 1, 1): DTensor pads each
  // group of mesh dim 1 by its own chunk ([9, 2] and [9, 1]), the mapped
  // buffers are the chunked layout's uniform ones; the all_gather is
  // mapped padded, its gathered temporary a chunked rank-major split, and
  // confirmed, as is the fallback's gather of step 1.
  std::string file =
      std::string(SHARDCHECK_SOURCE_DIR) + "/corpus/dtensor/rec_2d_s1s1_to_s0s0_uneven.json";
  InputDocument in = readInputDocument(readInputFile(file), file);
  ASSERT_EQ(in.doc.fusions.size(), 2u);
  const Fusion &steps = in.doc.fusions[1];
  int chunkedPacks = 0;
  for (const Transform &t : steps.transforms)
    chunkedPacks += t.chunked && steps.id(t.outputs[0]).parallel == ParallelType::Serial;
  EXPECT_GE(chunkedPacks, 1);
  auto run = shardcheck::testing::checkShardingTool({file});
  EXPECT_EQ(run.status, 0) << run.out;
  for (const char *line :
       {"host IR Communication 0, Allgather+pad over teams (0 1)(2 3), is confirmed",
        "host IR Communication 1, Allgather+pad over teams (0 2)(1 3), is confirmed",
        "rank 2: DTensor 156, shardcheck 126"})
    EXPECT_NE(run.out.find(line), std::string::npos) << line << "\n" << run.out;
}

TEST(DTensorToIr, RefusesNestedUnevenCountsThatAreNotTheGroupsPadding) {
  // The uniform buffers ([9, 2]) recorded for the group that DTensor pads to
  // 1 column: rejected at the collective, naming the rank and both counts.
  std::string file = std::string(SHARDCHECK_SOURCE_DIR) +
                     "/corpus/dtensor/hw_2d_s1s1_uneven_nested_wrong_count.json";
  expectUnmapped([&] { readInputDocument(readInputFile(file), file); },
                 "the all_gather of rank 2 moved 18 elements in and 36 out, but the mapped "
                 "buffers hold 9 and 18");
}

TEST(DTensorToIr, RefusesAGroupWhoseMembersPassDifferentSizes) {
  // The nested uneven all_gather of rec_2d_s1s1_to_s0s0_uneven over the
  // groups of mesh dim 0: each rank's count is its own padded chunk, but
  // ranks 0 and 2 share a group with 18 and 9 elements: no one collective.
  std::string file =
      std::string(SHARDCHECK_SOURCE_DIR) + "/corpus/dtensor/rec_2d_s1s1_to_s0s0_uneven.json";
  DTensorCase c = readDTensorCase(readInputFile(file), file);
  for (RankCall &r : c.issued->collectives[0].ranks)
    r.group = groupAlong(c.mesh, 0, r.rank);
  expectUnmapped([&] { dtensorToDocument(c); },
                 "of ranks 0 and 2, one group, passes buffers of different sizes (18 and 9 "
                 "elements in");
}

TEST(DTensorInput, NotesDTensorsBytesPerRank) {
  std::string steps =
      ",\n \"dtensor\": {\"steps\": [{\"mesh_dim\": 0, \"from\": \"Shard(0)\", \"to\": "
      "\"Replicate()\", \"collectives\": [0]}], \"collectives\": [{\"kind\": \"all_gather\", "
      "\"ranks\": [{\"rank\": 0, \"group\": [0, 1], \"input_shape\": [2], \"output_shape\": [4]}, "
      "{\"rank\": 1, \"group\": [0, 1], \"input_shape\": [2], \"output_shape\": [4]}]}]}";
  InputDocument in = readInputDocument(
      document("[2]", "[0, 1]", "[4]", "[\"Shard(0)\"]", "[\"R\"]", steps), "case.json");
  ASSERT_EQ(in.doc.fusions.size(), 2u);
  ASSERT_EQ(in.notes.size(), 3u);
  // Allgather of 2 floats over 2 ranks: each rank sends its 8 bytes once.
  EXPECT_NE(in.notes[1].message.find("8 bytes per rank"), std::string::npos) << in.notes[1].message;
  // The model of DTensor's plan (dtensor/DTensorPlan.h) issues the same.
  EXPECT_NE(in.notes[2].message.find("agrees with the recording"), std::string::npos)
      << in.notes[2].message;
  const Expr &comm = in.doc.fusions[1].exprs[0];
  ASSERT_TRUE(comm.communication);
  EXPECT_EQ(comm.communication->team, (std::vector<int64_t>{0, 1}));
}

TEST(DTensorToIr, RefusesRecordedBuffersThatAreNotTheMappings) {
  // An all_gather that moved 3 elements per rank where the mapped buffer
  // holds 2: a verdict would be about buffers DTensor did not use.
  std::string steps =
      ",\n \"dtensor\": {\"steps\": [{\"mesh_dim\": 0, \"from\": \"Shard(0)\", \"to\": "
      "\"Replicate()\", \"collectives\": [0]}], \"collectives\": [{\"kind\": \"all_gather\", "
      "\"ranks\": [{\"rank\": 0, \"group\": [0, 1], \"input_shape\": [3], \"output_shape\": [6]}, "
      "{\"rank\": 1, \"group\": [0, 1], \"input_shape\": [3], \"output_shape\": [6]}]}]}";
  EXPECT_EQ(errorOf(document("[2]", "[0, 1]", "[4]", "[\"Shard(0)\"]", "[\"R\"]", steps)),
            (std::pair<std::string, int>{"dtensor-unmapped", 6}));
}

namespace {

enum class Judged { Confirmed, Refuted, Neither };

/// Plans fusion 1 (DTensor's steps) of `path` with DTensor's own collectives
/// and runs it on sim; nullopt when no plan is built. `judged`: every
/// collective of DTensor confirmed, one refuted, or neither (a step not
/// modelled as DTensor's collective, an unknown, or a refutation by a rule
/// of the Communication's form: a reduce op other than its partials', which
/// the fusion's own reference computes as issued too, so the run matches it;
/// `byRule` counts those).
std::optional<RunReport> runDTensorsSequence(const std::string &path, Judged &judged, int &byRule) {
  std::string text = readInputFile(path);
  InputDocument in;
  try {
    in = readInputDocument(text, path);
  } catch (const InputError &) {
    return std::nullopt; // a rejected recording: the golden test pins its error
  }
  if (in.doc.fusions.size() < 2)
    return std::nullopt;
  DocumentOptions options;
  options.plan = PlanOptions{1, PlanRequest::Lowerings::Compiler, text};
  DocumentReport report = checkDocument(in.doc, options);
  const FusionReport &f = report.fusions.at(1);
  judged = Judged::Confirmed;
  for (const EdgeVerdict &v : f.verdicts) {
    if (v.result != EdgeResult::Proved && judged == Judged::Confirmed)
      judged = Judged::Neither;
    if (!v.compiler)
      continue;
    CompilerResult r = v.compiler->result;
    const auto &cex = v.compiler->counterexample;
    if (r == CompilerResult::Refuted && cex && cex->rule == "communication-form") {
      ++byRule;
      judged = Judged::Neither;
      break;
    }
    if (r == CompilerResult::Refuted)
      judged = Judged::Refuted;
    else if (r != CompilerResult::Confirmed && judged == Judged::Confirmed)
      judged = Judged::Neither;
  }
  if (!f.plan)
    return std::nullopt;
  auto bindings = satisfyingBindings(*f.plan, {});
  if (!bindings)
    return std::nullopt;
  SimBackend sim;
  RunOptions run;
  run.symbols = *bindings;
  run.allowUnverified = true;
  return runPlan(*f.plan, run, sim);
}

} // namespace

TEST(DTensorSequences, ConfirmedOnesRunToAMatchAndRefutedOnesDoNot) {
  namespace fs = std::filesystem;
  int confirmedRuns = 0, refutedRuns = 0, byRule = 0;
  for (const auto &e :
       fs::directory_iterator(fs::path(SHARDCHECK_SOURCE_DIR) / "corpus" / "dtensor")) {
    SCOPED_TRACE(e.path().string());
    Judged judged = Judged::Neither;
    auto run = runDTensorsSequence(e.path().string(), judged, byRule);
    if (!run || judged == Judged::Neither)
      continue;
    if (judged == Judged::Confirmed) {
      EXPECT_TRUE(run->matches()) << describeRun(*run);
      ++confirmedRuns;
    } else {
      EXPECT_FALSE(run->matches()) << describeRun(*run);
      ++refutedRuns;
    }
  }
  EXPECT_GE(confirmedRuns, 10);
  EXPECT_GE(refutedRuns, 1);
  EXPECT_GE(byRule, 3); // corpus/dtensor/hw_1d_*_reduced_with_*.json
}

TEST(DTensorToIr, RefusesAStepThatDoesNotStartWhereTheStepsBeforeLeft) {
  // Mesh dim 0 holds Shard(0); a step that says it starts from Shard(1).
  std::string steps =
      ",\n \"dtensor\": {\"steps\": [{\"mesh_dim\": 0, \"from\": \"Shard(1)\", \"to\": "
      "\"Replicate()\"}]}";
  EXPECT_EQ(errorOf(document("[2]", "[0, 1]", "[4, 4]", "[\"Shard(0)\"]", "[\"R\"]", steps)),
            (std::pair<std::string, int>{"dtensor-unmapped", 6}));
}

TEST(DTensorInput, CheckShardingReadsADTensorDocumentAndNamesTheStep) {
  // The command line on the refuted recording: the located verdict of step
  // 0, its counterexample (rank and global index), and DTensor's bytes.
  std::string file = std::string(SHARDCHECK_SOURCE_DIR) + "/corpus/dtensor/hw_2d_wrong_groups.json";
  auto run = shardcheck::testing::checkShardingTool({file});
  EXPECT_EQ(run.status, 1);
  EXPECT_NE(run.out.find("host IR Communication 0, Allgather over teams (0 2)(1 3), is refuted"),
            std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("counterexample: device 0 expects T0[0, 3] at offset 6 of its T1 buffer"),
            std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("DTensor's sequence: 2 collectives, 72 bytes per rank"), std::string::npos)
      << run.out;
}

TEST(DTensorInput, APaddedCollectiveOverTheWrongGroupsIsRefutedAtItsStep) {
  // DTensor's padded all_gather of uneven rows (hand-edited: over the other
  // mesh dim's groups): refuted as DTensor's own collective, at step 0, with
  // the device, the global index and the slot; a padded gather over the
  // right groups (the next step) confirmed. The same on a nested uneven
  // shard (7 rows on 2x2, every group padded to 2 rows).
  for (const auto &[name, counterexample] :
       {std::pair{"hw_2d_s0s0_uneven_wrong_groups.json", "counterexample: device "},
        std::pair{"hw_2d_s0s0_uneven_nested_wrong_groups.json",
                  "counterexample: device 0 needs T0[2, 0] for T1[2, 0]"}}) {
    std::string file = std::string(SHARDCHECK_SOURCE_DIR) + "/corpus/dtensor/" + name;
    auto run = shardcheck::testing::checkShardingTool({file});
    EXPECT_EQ(run.status, 1);
    EXPECT_NE(
        run.out.find("host IR Communication 0, Allgather+pad over teams (0 2)(1 3), is refuted"),
        std::string::npos)
        << run.out;
    EXPECT_NE(run.out.find(counterexample), std::string::npos) << run.out;
    EXPECT_NE(run.out.find("'s padded buffer, which does not hold it there"), std::string::npos)
        << run.out;
  }
}

TEST(DTensorInput, CheckShardingSetsBothPlansBytesPerRankSideBySide) {
  // [Shard(0), Shard(0)] -> [Replicate(), Shard(0)] of [8, 4] on 2x2:
  // DTensor all-gathers on both mesh dims (96 bytes per rank); shardcheck's
  // plan swaps devices 1 and 2 (a SendRecv of 32 bytes that 0 and 3 sit out)
  // then all-gathers over mesh dim 0 (32 bytes each).
  std::string file = std::string(SHARDCHECK_SOURCE_DIR) + "/corpus/dtensor/rec_2d_s0s0_to_rs0.json";
  auto text = shardcheck::testing::checkShardingTool({file});
  EXPECT_EQ(text.status, 0);
  for (const char *line :
       {"note: bytes per rank: DTensor's sequence (from the recording) beside shardcheck's plan "
        "(multi-step plan of 2 steps, proved)",
        "note: rank 0: DTensor 96, shardcheck 32", "note: rank 1: DTensor 96, shardcheck 64",
        "note: all ranks: DTensor 384, shardcheck 192; the most one rank moves: DTensor 96, "
        "shardcheck 64"})
    EXPECT_NE(text.out.find(line), std::string::npos) << line << "\n" << text.out;
  auto json = shardcheck::testing::checkShardingTool({"--format", "json", file});
  auto bytes = nlohmann::json::parse(json.out)["files"][0]["dtensor_bytes"];
  EXPECT_EQ(bytes["dtensor"]["total"], 384.0);
  EXPECT_EQ(bytes["shardcheck"]["most"], 64.0);
  EXPECT_TRUE(bytes["shardcheck"]["unknown"].is_null());
  ASSERT_EQ(bytes["ranks"].size(), 4u);
  EXPECT_EQ(bytes["ranks"][2],
            (nlohmann::json{{"rank", 2}, {"dtensor", 96.0}, {"shardcheck", 64.0}}));
}

TEST(DTensorInput, APlanWithoutFiguresSaysWhy) {
  // A transition that is not proved has no plan to price: no figures, and
  // the reason instead (every DTensor transition of the corpus is planned
  // now, so the verdict is made here).
  EdgeVerdict v;
  v.producer = 0;
  v.consumer = 1;
  v.result = EdgeResult::Unsupported;
  v.reason = "the reason the checker gave";
  PlanBytes b = shardcheckPlanBytes(Fusion{}, v, {0, 1, 2, 3});
  EXPECT_FALSE(b.known());
  EXPECT_EQ(b.source, "no plan");
  EXPECT_TRUE(b.perRank.empty());
  EXPECT_NE(b.unknownWhy.find("T0 -> T1 is unsupported: the reason the checker gave"),
            std::string::npos)
      << b.unknownWhy;
}
