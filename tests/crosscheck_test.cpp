// Cross-check: every SMT verdict against the independent brute-force
// evaluator (checker/bruteforce/), over random edges and over the corpus.
//
// Agreement rules (a disagreement fails the test; there must be none):
//   - SMT proved    -> brute force must not fail at any valid binding tried;
//   - SMT refuted   -> brute force must fail at the counterexample's bindings;
//   - brute fails   -> SMT must not have proved.
// Unknown / unsupported answers on either side are counted, never treated as
// agreement with a proof. The random sweep covers 10,000 edges in 20 shards
// (ctest runs them in parallel), each edge's local verdict and three of its
// candidate lowerings; SHARDCHECK_QUICK=1 (the sanitizer run) takes a tenth.
// Compiler padded Communications (checker/bruteforce/RandomPadded.h) are
// compared per edge too, right and wrong, and the corpus's DTensor documents
// with the corpus.
#include "checker/CheckDocument.h"
#include "checker/Checker.h"
#include "checker/EdgeChecker.h"
#include "checker/LoopChecker.h"
#include "checker/PlanChain.h"
#include "checker/Selection.h"
#include "checker/bruteforce/BruteForce.h"
#include "checker/bruteforce/LoopSlices.h"
#include "checker/bruteforce/RandomEdges.h"
#include "checker/bruteforce/RandomLoops.h"
#include "checker/bruteforce/RandomPadded.h"
#include "dtensor/DTensorInput.h"
#include "ir/reader/DumpReader.h"
#include "tests/TestPaths.h"

#include "ir/RingPermute.h"
#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

using namespace shardcheck;
using bruteforce::BruteOutcome;
using bruteforce::BruteResult;

namespace {

struct Tally {
  int compared = 0, inconclusive = 0, disagreements = 0;
};

std::vector<int64_t> universeOf(const Fusion &f) {
  std::set<int64_t> d;
  for (const auto &[n, tv] : f.tensors)
    if (tv.mesh)
      d.insert(tv.mesh->devices().begin(), tv.mesh->devices().end());
  if (d.empty())
    d.insert(0);
  return {d.begin(), d.end()};
}

std::string bindingsStr(const Bindings &b) {
  std::string s;
  for (const auto &[k, v] : b)
    s += k + "=" + std::to_string(v) + " ";
  return s;
}

/// Compares one SMT outcome with brute force. `brute` evaluates the same
/// claim at given bindings.
template <typename BruteFn>
void compare(const Outcome &smt, const Bindings &caseBindings, BruteFn brute,
             const std::string &what, Tally &t) {
  BruteResult atCase = brute(caseBindings);
  if (smt.kind == Outcome::Kind::Proved) {
    if (atCase.fails()) {
      ++t.disagreements;
      ADD_FAILURE() << what << ": SMT proved but brute force fails at " << bindingsStr(caseBindings)
                    << ": " << atCase.counterexample->message;
    } else if (atCase.holds()) {
      ++t.compared;
    } else {
      ++t.inconclusive;
    }
  } else if (smt.kind == Outcome::Kind::Refuted) {
    const Bindings &b = smt.counterexample->bindings;
    // The counterexample names only symbols it used; keep the case's others.
    Bindings merged = caseBindings;
    for (const auto &[k, v] : b)
      merged[k] = v;
    BruteResult atCex = brute(merged);
    if (atCex.holds()) {
      ++t.disagreements;
      ADD_FAILURE() << what << ": SMT refuted (" << smt.counterexample->message
                    << ") but brute force holds at " << bindingsStr(merged);
    } else if (atCex.fails()) {
      ++t.compared;
    } else {
      ++t.inconclusive;
    }
  } else {
    ++t.inconclusive;
  }
}

/// One solver cache and its statistics, shared by the cases of a test.
struct SmtSession {
  smt::QueryCache cache;
  smt::SolverStats stats;
  smt::SolverBackend backend;
};

/// Compares random case `c` (number `i`) with brute force: edge-local into
/// `local`, each of `lowerings` into `lowering`. Returns the lowerings'
/// SMT outcomes.
std::vector<Outcome::Kind> compareCase(const bruteforce::RandomEdgeCase &c, int i,
                                       const std::vector<Lowering> &lowerings, SmtSession &session,
                                       Tally &local, Tally &lowering) {
  smt::SolverOptions so;
  so.timeoutMs = 5000;
  smt::Context ctx(so, &session.cache, &session.stats, &session.backend);
  EdgeChecker ec(c.fusion, c.edge, ctx, universeOf(c.fusion));
  std::string what = "case " + std::to_string(i) + " (" + c.description + ")";
  compare(
      ec.checkLocal(), c.bindings,
      [&](const Bindings &b) { return bruteforce::bruteNeedsNoCommunication(c.fusion, c.edge, b); },
      what + " edge-local", local);
  std::vector<Outcome::Kind> kinds;
  for (const auto &l : lowerings) {
    Outcome o = ec.checkLowering(l);
    kinds.push_back(o.kind);
    compare(
        o, c.bindings,
        [&](const Bindings &b) { return bruteforce::bruteCheckLowering(c.fusion, c.edge, b, l); },
        what + " " + l.str(), lowering);
  }
  return kinds;
}

int edgesPerShard() {
  return std::getenv("SHARDCHECK_QUICK") ? 50 : 500;
}

class RandomCrossCheck : public ::testing::TestWithParam<int> {};

TEST_P(RandomCrossCheck, SmtAgreesWithBruteForce) {
  bruteforce::RandomEdgeGenerator gen(0x5eed0000u + static_cast<uint64_t>(GetParam()));
  SmtSession session;
  const smt::SolverStats &stats = session.stats;
  Tally local, lowering;
  int n = edgesPerShard();
  double slowestMs = 0;
  std::string slowest;
  for (int i = 0; i < n; ++i) {
    auto start = std::chrono::steady_clock::now();
    bruteforce::RandomEdgeCase c = gen.next();
    // Three lowerings per edge, rotating through the candidates, keep the
    // sweep's 10,000 edges within CI's time while every kind gets covered.
    std::vector<Lowering> sample;
    for (size_t j = 0; j < std::min<size_t>(3, c.lowerings.size()); ++j)
      sample.push_back(c.lowerings[(static_cast<size_t>(i) + j * 7) % c.lowerings.size()]);
    compareCase(c, i, sample, session, local, lowering);
    double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (ms > slowestMs) {
      slowestMs = ms;
      slowest = "case " + std::to_string(i) + " (" + c.description + ")";
    }
  }
  EXPECT_EQ(local.disagreements + lowering.disagreements, 0);
  // Refutations whose model the search found (checker/smt/ModelSearch.h)
  // were compared above like Z3's; each such model also held in the query as
  // built, before normalization (a model that did not was not used).
  EXPECT_GT(stats.satBySearch, 0u);
  EXPECT_EQ(stats.searchModelsRejected, 0u);
  // The sweep must mostly compare, not mostly shrug.
  EXPECT_GT(local.compared, n * 8 / 10) << "inconclusive: " << local.inconclusive;
  EXPECT_GT(lowering.compared, lowering.inconclusive);
  RecordProperty("edges", n);
  RecordProperty("local_compared", local.compared);
  RecordProperty("lowerings_compared", lowering.compared);
  std::cout << "edges " << n << ": edge-local " << local.compared << " compared, "
            << local.inconclusive << " inconclusive; lowerings " << lowering.compared
            << " compared, " << lowering.inconclusive << " inconclusive; smt queries "
            << stats.queries << " (" << stats.cacheHits << " cached, " << stats.unknown
            << " unknown, " << stats.satBySearch << " sat by model search); slowest " << slowest
            << ": " << slowestMs << " ms\n";
}

INSTANTIATE_TEST_SUITE_P(TenThousandEdges, RandomCrossCheck, ::testing::Range(0, 20));

// Uneven splits kept every time: every padded lowering of the generated
// edges (docs/semantics.md, Padded collectives) against the brute force.
TEST(RandomCrossCheck, PaddedLoweringsAgreeWithBruteForce) {
  bruteforce::RandomEdgeOptions options;
  options.unevenPercent = 100;
  options.symbolicPercent = 10;
  bruteforce::RandomEdgeGenerator gen(0x9add0000u, options);
  smt::QueryCache cache;
  smt::SolverStats stats;
  smt::SolverBackend backend;
  Tally padded;
  int proved = 0, refuted = 0;
  const int n = edgesPerShard();
  for (int i = 0; i < n; ++i) {
    bruteforce::RandomEdgeCase c = gen.next();
    smt::SolverOptions so;
    so.timeoutMs = 5000;
    smt::Context ctx(so, &cache, &stats, &backend);
    EdgeChecker ec(c.fusion, c.edge, ctx, universeOf(c.fusion));
    for (const auto &l : c.lowerings) {
      if (!l.padded)
        continue;
      Outcome o = ec.checkLowering(l);
      proved += o.kind == Outcome::Kind::Proved;
      refuted += o.kind == Outcome::Kind::Refuted;
      compare(
          o, c.bindings,
          [&](const Bindings &b) { return bruteforce::bruteCheckLowering(c.fusion, c.edge, b, l); },
          "case " + std::to_string(i) + " (" + c.description + ") " + l.str(), padded);
    }
  }
  EXPECT_EQ(padded.disagreements, 0);
  EXPECT_GT(proved, 0);
  EXPECT_GT(refuted, 0);
  EXPECT_GT(padded.compared, padded.inconclusive);
  std::cout << "edges " << n << ": padded lowerings " << padded.compared << " compared (" << proved
            << " proved, " << refuted << " refuted), " << padded.inconclusive << " inconclusive\n";
}

// Compiler padded Communications (a host IR Communication with
// `padded=true`: DTensor's collectives on its padded chunks), right and wrong
// (checker/bruteforce/RandomPadded.h): the SMT verdict on each as a compiler
// choice against the brute force's slot-for-slot run of it, per edge. A wrong
// one is never proved, and the brute force fails it too; a right one holds.
TEST(RandomCrossCheck, CompilerPaddedCommunicationsAgreeWithBruteForce) {
  const int n = std::getenv("SHARDCHECK_QUICK") ? 100 : 1000;
  SmtSession session;
  Tally t;
  std::map<std::string, std::array<int, 4>> byDraw; // drawn, proved, refuted, brute fails
  for (int i = 0; i < n; ++i) {
    bruteforce::RandomPaddedCase c = bruteforce::randomPaddedCommunication(0xbfad0000u + i);
    smt::SolverOptions so;
    so.timeoutMs = 5000;
    smt::Context ctx(so, &session.cache, &session.stats, &session.backend);
    EdgeChecker ec(c.fusion, c.edge, ctx, universeOf(c.fusion));
    Outcome o = ec.checkLowering(c.lowering, /*compilerLowering=*/true);
    auto brute = [&](const Bindings &b) {
      return bruteforce::bruteCheckLowering(c.fusion, c.edge, b, c.lowering,
                                            bruteforce::Issuer::Compiler);
    };
    const std::string what = "padded case " + std::to_string(i) + " (" + c.description + ")";
    compare(o, {}, brute, what, t);
    BruteResult b = brute({});
    const bool right = c.draw == bruteforce::PaddedDraw::Right;
    auto &row = byDraw[bruteforce::paddedDrawName(c.draw)];
    row[0] += 1;
    row[1] += o.kind == Outcome::Kind::Proved;
    row[2] += o.kind == Outcome::Kind::Refuted;
    row[3] += b.fails();
    if (right) {
      EXPECT_TRUE(b.holds()) << what << ": a right case, but brute force says "
                             << bruteforce::bruteOutcomeName(b.outcome) << ": "
                             << (b.counterexample ? b.counterexample->message : b.reason);
    } else if (c.draw == bruteforce::PaddedDraw::MissingPad) {
      // Unsupported by the semantics, right or wrong: never proved.
      EXPECT_NE(o.kind, Outcome::Kind::Proved) << what << ": an unpadded collective proved";
    } else {
      EXPECT_NE(o.kind, Outcome::Kind::Proved) << what << ": a wrong case proved";
      EXPECT_TRUE(b.fails()) << what << ": a wrong case, but brute force says "
                             << bruteforce::bruteOutcomeName(b.outcome) << " " << b.reason;
    }
  }
  EXPECT_EQ(t.disagreements, 0);
  EXPECT_GT(byDraw["right"][1], byDraw["right"][0] * 9 / 10) << "right cases mostly proved";
  EXPECT_GT(t.compared, t.inconclusive * 9);
  std::cout << "padded Communications " << n << ": " << t.compared << " compared, "
            << t.inconclusive << " inconclusive, " << t.disagreements << " disagreements\n";
  for (const auto &[draw, row] : byDraw)
    std::cout << "  " << draw << ": " << row[0] << " drawn, " << row[1] << " proved, " << row[2]
              << " refuted, brute force fails " << row[3] << "\n";
}

/// Every lowering of the drawn edges that `keep` selects, SMT against brute
/// force: the tally, the edges kept and the proved and refuted outcomes.
struct DrawnComparison {
  Tally tally;
  int cases = 0, proved = 0, refuted = 0;
};

template <typename Keep>
DrawnComparison compareDrawn(const bruteforce::RandomEdgeOptions &options, uint64_t seed, int n,
                             Keep keep) {
  bruteforce::RandomEdgeGenerator gen(seed, options);
  SmtSession session;
  DrawnComparison r;
  for (int i = 0; i < n; ++i) {
    bruteforce::RandomEdgeCase c = gen.next();
    if (!keep(c))
      continue;
    ++r.cases;
    for (Outcome::Kind k : compareCase(c, i, c.lowerings, session, r.tally, r.tally)) {
      r.proved += k == Outcome::Kind::Proved;
      r.refuted += k == Outcome::Kind::Refuted;
    }
  }
  EXPECT_EQ(r.tally.disagreements, 0);
  EXPECT_GT(r.proved, 0);
  EXPECT_GT(r.refuted, 0);
  return r;
}

void printDrawn(int n, const char *what, const DrawnComparison &r) {
  std::cout << "edges " << n << ", " << r.cases << " " << what << ": " << r.tally.compared
            << " compared (" << r.proved << " proved, " << r.refuted << " refuted), "
            << r.tally.inconclusive << " inconclusive\n";
}

// Nested shardings (two DIDs on one logical axis, no allocation domain)
// drawn often: the default layout of docs/semantics.md, derived recursively,
// must agree between the SMT encoding and the brute force on every lowering.
TEST(RandomCrossCheck, NestedShardingsAgreeWithBruteForce) {
  bruteforce::RandomEdgeOptions options;
  options.mesh2dPercent = 100;
  options.nestedPercent = 100;
  options.allocationPercent = 5;
  const int n = edgesPerShard();
  DrawnComparison r = compareDrawn(options, 0x4e570000u, n,
                                   [](const bruteforce::RandomEdgeCase &c) { return c.nested; });
  EXPECT_GT(r.cases, n / 20); // 69 of 500 at this seed, 5 of 50 in quick runs
  EXPECT_GT(r.tally.compared, r.tally.inconclusive);
  printDrawn(n, "nested", r);
}

// Chunked splits (docs/semantics.md, Chunked splits): nested shardings under
// an uneven outer cut, half of them chunked (RandomEdges), at constant sizes.
// The SMT encoding's case split and the brute force's valid lengths must agree
// on every lowering, padded ones included.
TEST(RandomCrossCheck, ChunkedNestingsAgreeWithBruteForce) {
  bruteforce::RandomEdgeOptions options;
  options.mesh2dPercent = 100;
  options.nestedPercent = 100;
  options.unevenPercent = 100;
  options.symbolicPercent = 0;
  options.allocationPercent = 5;
  const int n = edgesPerShard();
  DrawnComparison r =
      compareDrawn(options, 0xc4c40000u, n, [](const bruteforce::RandomEdgeCase &c) {
        return std::any_of(c.fusion.transforms.begin(), c.fusion.transforms.end(),
                           [](const Transform &t) { return t.chunked; });
      });
  EXPECT_GT(r.cases, 0);
  // Most inconclusive ones are unpadded collectives, which the SMT side
  // declines on uneven tensors (40 cases, 602 compared, 958 inconclusive at
  // this seed).
  EXPECT_GT(r.tally.compared, r.cases);
  printDrawn(n, "chunked", r);
}

// --- The corpus: every verdict the checker gives, against brute force at
// small bindings of its symbols. ---

std::vector<Bindings> smallBindings(const Fusion &f, const FusionEdge &e) {
  std::set<std::string> symbols;
  for (TensorNum t : {e.producer, e.consumer}) {
    const auto &tv = f.tensor(t);
    for (const auto *dom : {&tv.root, &tv.logical, &tv.allocation, &tv.loop})
      for (IdNum id : *dom)
        f.id(id).extent.collectSymbols(symbols);
  }
  std::vector<Bindings> out{{}};
  for (const auto &s : symbols) {
    std::vector<Bindings> next;
    for (const auto &b : out)
      for (int64_t v : {1, 2, 4, 6, 8, 16}) {
        Bindings nb = b;
        nb[s] = v;
        next.push_back(nb);
      }
    out = std::move(next);
    if (out.size() > 64)
      out.resize(64);
  }
  return out;
}

/// The corpus's dumps and JSON IR, and its DTensor documents (mapped as
/// check-sharding maps them: DTensor's padded collectives are compiler
/// choices there).
std::vector<std::filesystem::path> corpusInputs() {
  namespace fs = std::filesystem;
  std::vector<fs::path> inputs;
  for (const char *dir : {"corpus", "corpus/dtensor"})
    for (const auto &entry : fs::directory_iterator(fs::path(SHARDCHECK_SOURCE_DIR) / dir))
      if (entry.path().extension() == ".txt" || entry.path().extension() == ".json")
        inputs.push_back(entry.path());
  return inputs;
}

TEST(CorpusCrossCheck, EveryVerdictAgreesWithBruteForce) {
  Tally t;
  int verdicts = 0, paddedCompiler = 0;
  for (const auto &path : corpusInputs()) {
    Document doc;
    try {
      doc = dtensor::readInputDocumentFile(path.string()).doc;
    } catch (const InputError &) {
      continue; // A DTensor document the mapping rejects (its own tests say why).
    }
    DocumentReport report = checkDocument(doc, DocumentOptions{});
    for (const FusionReport &fr : report.fusions) {
      if (!fr.readable())
        continue;
      const Fusion &f = doc.fusions[fr.index];
      DiagnosticEngine diags;
      auto graph = FusionGraph::build(f, diags); // the edges the verdicts are of
      const auto &verdicts_ = fr.verdicts;
      for (size_t i = 0; i < verdicts_.size(); ++i) {
        const EdgeVerdict &v = verdicts_[i];
        const FusionEdge &e = graph->edges()[v.edge];
        std::string what = path.filename().string() + " T" + std::to_string(v.producer) + " -> T" +
                           std::to_string(v.consumer);
        if (isCollectivePermute(f.exprs[e.expr])) {
          ++t.inconclusive; // A ring: RandomRingCrossCheck (ring_test.cpp) simulates those.
          continue;
        }
        auto check = [&](const Lowering &l, Status s, const std::optional<Counterexample> &cex,
                         const std::string &label, bruteforce::Issuer issuer) {
          ++verdicts;
          Outcome o = s == Status::Proved    ? Outcome::proved()
                      : s == Status::Refuted ? Outcome::refuted(*cex)
                                             : Outcome::unknown("");
          if (s == Status::Refuted && !cex) {
            ++t.inconclusive;
            return;
          }
          for (const auto &b : smallBindings(f, e)) {
            compare(
                o, b,
                [&](const Bindings &bb) {
                  return l.kind == CommKind::None
                             ? bruteforce::bruteNeedsNoCommunication(f, e, bb)
                             : bruteforce::bruteCheckLowering(f, e, bb, l, issuer);
                },
                what + " " + label + " " + l.str(), t);
            if (s != Status::Proved)
              break; // A refutation is checked at its own bindings once.
          }
        };
        if (hasProvedPlan(v)) {
          // A multi-step plan: every step, in the chain the plan runs, on its own.
          Fusion chain = f;
          auto steps = appendChain(chain, e, intermediateStates(v.steps));
          for (size_t k = 0; k < steps.size(); ++k) {
            const Lowering &l = v.steps[k].lowering;
            for (const auto &b : smallBindings(chain, steps[k]))
              compare(
                  Outcome::proved(), b,
                  [&](const Bindings &bb) {
                    return l.kind == CommKind::None
                               ? bruteforce::bruteNeedsNoCommunication(chain, steps[k], bb)
                               : bruteforce::bruteCheckLowering(chain, steps[k], bb, l);
                  },
                  what + " step " + std::to_string(k) + " " + l.str(), t);
            ++verdicts;
          }
        } else if (v.result == EdgeResult::Proved) {
          check(v.lowering, Status::Proved, std::nullopt, "verdict",
                bruteforce::Issuer::Shardcheck);
        }
        if (!v.compiler || v.compiler->result == CompilerResult::Unknown)
          continue;
        // Refutations by nvFuser's printed-form rules (a root outside its
        // team, a reduction whose initial value its Communication drops) are
        // not claims about where elements land: they must be refutations.
        const Expr &expr = f.exprs[e.expr];
        bool brokenRule = (expr.communication && communicationRuleViolation(expr)) ||
                          (v.compiler->lowering && isReductionComm(v.compiler->lowering->kind) &&
                           initialValueIsIdentity(expr) == std::optional<bool>(false));
        if (brokenRule) {
          ++verdicts;
          EXPECT_EQ(v.compiler->result, CompilerResult::Refuted)
              << what << ": a broken runtime rule";
          continue;
        }
        if (v.compiler->counterexample && v.compiler->counterexample->rule == "host-loop") {
          ++t.inconclusive; // A loop claim: LoopClaimsAgreeWithBruteForce compares those.
          continue;
        }
        if (v.compiler->counterexample && v.compiler->counterexample->rule == "runtime-shapes") {
          ++t.inconclusive; // A runtime shape rule: brute force models flat buffers only.
          continue;
        }
        // Decided, with no broken rule: the choice is a lowering the checker models.
        EXPECT_TRUE(v.compiler->lowering) << what;
        paddedCompiler += v.compiler->lowering && v.compiler->lowering->padded;
        if (v.compiler->lowering)
          check(*v.compiler->lowering,
                v.compiler->result == CompilerResult::Refuted ? Status::Refuted : Status::Proved,
                v.compiler->counterexample, "compiler", bruteforce::Issuer::Compiler);
      }
    }
  }
  EXPECT_EQ(t.disagreements, 0);
  EXPECT_GT(t.compared, 0);
  EXPECT_GT(paddedCompiler, 0) << "DTensor's padded collectives are compared per edge";
  std::cout << "corpus: " << verdicts << " verdicts (" << paddedCompiler
            << " padded compiler Communications), " << t.compared << " comparisons, "
            << t.inconclusive << " inconclusive\n";
}

/// Every symbol of the fusion's tensors, bound to small values.
std::vector<Bindings> smallFusionBindings(const Fusion &f) {
  std::set<std::string> symbols;
  for (const auto &[n, id] : f.ids)
    id.extent.collectSymbols(symbols);
  std::vector<Bindings> out{{}};
  for (const auto &s : symbols) {
    std::vector<Bindings> next;
    for (const auto &b : out)
      for (int64_t v : {1, 2, 3, 4, 6})
        next.push_back(b), next.back()[s] = v;
    out = std::move(next);
    if (out.size() > 64)
      out.resize(64);
  }
  return out;
}

/// The loop claims of every modelled looped statement (LoopChecker)
/// against the brute force's run of the iterations (LoopSlices).
void crossCheckLoops(const Fusion &f, const std::string &what, Tally &t) {
  std::vector<int64_t> universe = universeOf(f);
  for (const Expr &e : f.exprs) {
    auto model =
        e.kind == OpKind::Communication ? loopedCommunication(f, e) : loopedStatement(f, e);
    const auto *lc = std::get_if<LoopedCommunication>(&model);
    if (!lc)
      continue;
    smt::SolverOptions so;
    smt::Context ctx(so, nullptr, nullptr);
    LoopChecker checker(f, *lc, ctx, universe);
    Outcome smt = checker.check();
    for (const auto &b : smallFusionBindings(f)) {
      compare(
          smt, b, [&](const Bindings &bb) { return bruteforce::bruteLoopedStatement(f, *lc, bb); },
          what + " loop `" + lc->loop.header + "`", t);
      if (smt.kind != Outcome::Kind::Proved)
        break; // A refutation is checked at its own bindings once.
    }
  }
}

TEST(RandomLoopCrossCheck, LoopClaimsAgreeWithBruteForce) {
  int n = std::getenv("SHARDCHECK_QUICK") ? 80 : 600;
  Tally t;
  int refuted = 0, sets = 0;
  for (int i = 0; i < n; ++i) {
    bruteforce::RandomLoopCase c = bruteforce::randomLoop(0x100b0000u + static_cast<uint64_t>(i));
    Document doc = readDocument(c.text, "random_loop.txt");
    ASSERT_EQ(doc.fusions.size(), 1u) << c.text;
    const Fusion &f = doc.fusions[0];
    const Expr &writer = f.exprs.back();
    sets += writer.kind != OpKind::Communication;
    auto model = writer.kind == OpKind::Communication ? loopedCommunication(f, writer)
                                                      : loopedStatement(f, writer);
    ASSERT_TRUE(std::holds_alternative<LoopedStatement>(model))
        << std::get<std::string>(model) << "\n"
        << c.text;
    const auto &lc = std::get<LoopedCommunication>(model);
    smt::SolverOptions so;
    smt::Context ctx(so, nullptr, nullptr);
    Outcome smt = LoopChecker(f, lc, ctx, universeOf(f)).check();
    refuted += smt.kind == Outcome::Kind::Refuted;
    compare(
        smt, c.bindings,
        [&](const Bindings &b) { return bruteforce::bruteLoopedStatement(f, lc, b); },
        c.description, t);
  }
  EXPECT_EQ(t.disagreements, 0);
  EXPECT_GT(t.compared, n * 6 / 10) << "inconclusive: " << t.inconclusive;
  EXPECT_GT(refuted, n / 10) << "the generator must draw wrong loops too";
  EXPECT_GT(sets, n / 10) << "the generator must draw looped statements other than Communications";
  std::cout << "random loops " << n << " (" << sets << " Sets): " << t.compared << " compared ("
            << refuted << " refuted), " << t.inconclusive << " inconclusive\n";
}

TEST(CorpusCrossCheck, LoopClaimsAgreeWithBruteForce) {
  namespace fs = std::filesystem;
  Tally t;
  for (const auto &entry : fs::directory_iterator(fs::path(SHARDCHECK_SOURCE_DIR) / "corpus")) {
    if (entry.path().extension() != ".txt")
      continue;
    Document doc = readDocumentFile(entry.path().string());
    for (const Fusion &f : doc.fusions)
      crossCheckLoops(f, entry.path().filename().string(), t);
  }
  EXPECT_EQ(t.disagreements, 0);
  EXPECT_GE(t.compared, 3) << "the corpus has proved and refuted looped Communications";
  std::cout << "corpus loops: " << t.compared << " comparisons, " << t.inconclusive
            << " inconclusive\n";
}

} // namespace
