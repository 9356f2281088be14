// Tests of the CollectivePermute ring model (ir/RingPermute.h) and its
// checker (checker/RingChecker.h).
//
// RandomRingCrossCheck draws rings with right and wrong peers, moduli and
// loop bounds, prints them in nvFuser's format, checks them, and compares
// every verdict with an independent simulation: each device of the team
// runs the printed lowering with its own team index, the sends and
// receives are paired iteration by iteration, and every slot of every
// device must end up holding the shard of its index exactly once.
//
// It does not run rings on a backend: tests/ring_plan_test.cpp plans and
// runs them, and the loop oracle (fusion_oracle_test.cpp) random ones.
#include "checker/Checker.h"
#include "checker/bruteforce/LoopSlices.h"
#include "checker/bruteforce/RandomLoops.h"
#include "ir/FusionGraph.h"
#include "ir/RingPermute.h"
#include "ir/reader/DumpReader.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>

namespace shardcheck {
namespace {

using bruteforce::RingCase;
using bruteforce::ringProgram;
using bruteforce::ringRuns;

/// What the simulation says the checker must answer: Proved, Refuted, or
/// Unknown (peers of two devices, right if one of them printed it).
EdgeResult expectedResult(const RingCase &c) {
  if (c.recvIndex == c.sendIndex && 0 <= c.recvIndex && c.recvIndex < c.devices)
    return ringRuns(c, c.recvIndex) ? EdgeResult::Proved : EdgeResult::Refuted;
  for (int64_t p = 0; p < c.devices; ++p)
    if (ringRuns(c, p))
      return EdgeResult::Unknown;
  return EdgeResult::Refuted;
}

/// The verdicts of the ring's edge and of the Set reading its slot.
struct RingVerdicts {
  EdgeVerdict ring, slotReader;
  /// The brute force's run of the Set's loop claims (LoopSlices).
  std::optional<bruteforce::BruteOutcome> bruteSlotReader;
};

RingVerdicts ringVerdicts(const std::string &text) {
  Document doc = readDocument(text, "ring.txt");
  const Fusion &f = doc.fusions.at(0);
  DiagnosticEngine diags;
  auto graph = FusionGraph::build(f, diags);
  EXPECT_TRUE(graph.has_value());
  Checker checker(CheckOptions{});
  RingVerdicts r;
  for (const EdgeVerdict &v : checker.checkFusion(f, *graph))
    (isCollectivePermute(f.exprs[v.expr]) ? r.ring : r.slotReader) = v;
  for (const Expr &e : f.exprs)
    if (e.kind == OpKind::Set) {
      auto model = loopedStatement(f, e);
      if (auto *ls = std::get_if<LoopedStatement>(&model))
        r.bruteSlotReader = bruteforce::bruteLoopedStatement(f, *ls, {}).outcome;
    }
  return r;
}

EdgeVerdict ringVerdict(const std::string &text) {
  return ringVerdicts(text).ring;
}

TEST(Ring, RightRingIsConfirmed) {
  EdgeVerdict v = ringVerdict(ringProgram(RingCase{}));
  EXPECT_EQ(v.result, EdgeResult::Proved) << v.reason;
  EXPECT_STREQ(v.communicationName(), "CollectivePermute");
  ASSERT_TRUE(v.compiler);
  EXPECT_EQ(v.compiler->result, CompilerResult::Confirmed);
}

TEST(Ring, WrongRecvPeerIsRefutedNamingIterationAndDevice) {
  RingCase c;
  c.recvIndex = 1; // send_peer's team index is 0
  EdgeVerdict v = ringVerdict(ringProgram(c));
  ASSERT_EQ(v.result, EdgeResult::Refuted);
  ASSERT_TRUE(v.counterexample);
  EXPECT_EQ(v.counterexample->rule, "ring-recv-peer");
  EXPECT_NE(v.counterexample->message.find("iteration i100 = "), std::string::npos);
  EXPECT_NE(v.counterexample->message.find("device "), std::string::npos);
  EXPECT_GE(v.counterexample->device, 0);
}

TEST(Ring, ShortLoopIsRefutedNamingTheMissingIteration) {
  RingCase c;
  c.hi = 1;
  EdgeVerdict v = ringVerdict(ringProgram(c));
  ASSERT_EQ(v.result, EdgeResult::Refuted);
  EXPECT_EQ(v.counterexample->rule, "ring-covers-output");
  EXPECT_NE(v.counterexample->message.find("iteration i100 = 1 is missing"), std::string::npos)
      << v.counterexample->message;
}

TEST(Ring, PeersOutsideTheFormAreUnsupported) {
  std::string text = ringProgram(RingCase{});
  std::string from = "( ( i100 + 0 ) % 2 )";
  text.replace(text.find(from), from.size(), "( ( deviceIdx.x + i100 ) % 2 )");
  EdgeVerdict v = ringVerdict(text);
  EXPECT_EQ(v.result, EdgeResult::Unmodelled);
  EXPECT_NE(v.reason.find("dispatchSwizzle1D"), std::string::npos) << v.reason;
}

TEST(Ring, RandomRingCrossCheck) {
  std::mt19937_64 rng(16);
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  std::map<EdgeResult, int> seen;
  std::map<LoopClaims::Status, int> slotClaims;
  for (int i = 0; i < 300; ++i) {
    RingCase c;
    c.devices = pick(1, 4);
    int64_t n = c.devices;
    // Mostly dispatchSwizzle1D's own peers, with one thing changed.
    c.recvIndex = c.sendIndex = pick(0, n - 1);
    c.recvModulus = c.sendModulus = c.sendAddend = n;
    c.lo = 0;
    c.hi = n;
    switch (pick(0, 6)) {
    case 0:
      c.recvIndex = pick(0, n);
      break;
    case 1:
      c.sendIndex = pick(0, n);
      break;
    case 2:
      c.recvModulus = pick(1, n + 1);
      break;
    case 3:
      c.sendModulus = pick(1, n + 1);
      c.sendAddend = pick(n, n + 1);
      break;
    case 4:
      c.hi = pick(n - 1, n + 1);
      c.lo = pick(0, 1);
      break;
    default:
      break; // right
    }
    EdgeResult want = expectedResult(c);
    std::string text = ringProgram(c);
    RingVerdicts rv = ringVerdicts(text);
    const EdgeVerdict &v = rv.ring;
    // The Set writing T2's swizzled slot: its loop claims against the
    // brute force's per-device run of the slots.
    ASSERT_TRUE(rv.slotReader.loopClaims) << text;
    ASSERT_TRUE(rv.bruteSlotReader) << text;
    EXPECT_EQ(rv.slotReader.loopClaims->status == LoopClaims::Status::Proved,
              *rv.bruteSlotReader == bruteforce::BruteOutcome::Holds)
        << "case " << i << ": " << text;
    ++slotClaims[rv.slotReader.loopClaims->status];
    ++seen[v.result];
    EXPECT_EQ(v.result, want) << "case " << i << ": " << text << "\n"
                              << (v.counterexample ? v.counterexample->message : v.reason);
    if (v.result == EdgeResult::Proved) {
      EXPECT_EQ(v.compiler->result, CompilerResult::Confirmed);
    }
  }
  EXPECT_GT(seen[EdgeResult::Proved], 50);
  EXPECT_GT(seen[EdgeResult::Refuted], 50);
  EXPECT_GT(slotClaims[LoopClaims::Status::Proved], 50);
  EXPECT_GT(slotClaims[LoopClaims::Status::Refuted], 10);
}

} // namespace
} // namespace shardcheck
