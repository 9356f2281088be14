// The sim backend's collectives (executor/sim/SimCollectives.h).
//
// Inputs are chosen so that every value names where it came from: device d's
// input holds 100*d + t at offset t, so an expected output spells out, in
// the DESIGN table's terms, which device and offset each slot must read.
// Expectations are written out literally for small teams and computed from
// the table's formulas for larger ones; property tests relate collectives to
// each other on random sizes.
#include "executor/sim/SimCollectives.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

using namespace shardcheck;

namespace {

/// The buffers of a simulated world, by device.
struct World {
  std::map<int64_t, SimBuffer> in, out;

  std::map<int64_t, const SimBuffer *> inPtrs() const {
    std::map<int64_t, const SimBuffer *> m;
    for (const auto &[d, b] : in)
      m[d] = &b;
    return m;
  }
  std::map<int64_t, SimBuffer *> outPtrs() {
    std::map<int64_t, SimBuffer *> m;
    for (auto &[d, b] : out)
      m[d] = &b;
    return m;
  }
  void run(const CollectiveCall &call) { runSimCollective(call, inPtrs(), outPtrs()); }
  /// The error message `call` throws, or "" when it succeeds.
  std::string error(const CollectiveCall &call) {
    try {
      run(call);
    } catch (const CollectiveError &e) {
      return e.what();
    }
    return "";
  }
};

/// 100*d + t for t < k.
SimBuffer named(int64_t d, int64_t k) {
  SimBuffer b(static_cast<size_t>(k));
  for (int64_t t = 0; t < k; ++t)
    b[static_cast<size_t>(t)] = 100.0 * static_cast<double>(d) + static_cast<double>(t);
  return b;
}

/// Inputs named(d, inCount) on every member, outputs of outCount filled with
/// -1 (a value no collective here produces) on every device of `receivers`.
World world(const std::vector<int64_t> &members, int64_t inCount,
            const std::vector<int64_t> &receivers, int64_t outCount) {
  World w;
  for (int64_t d : members)
    w.in[d] = named(d, inCount);
  for (int64_t d : receivers)
    w.out[d] = SimBuffer(static_cast<size_t>(outCount), -1.0);
  return w;
}

CollectiveCall call(CollectiveType kind, std::vector<int64_t> team,
                    std::optional<int64_t> root = std::nullopt, ReduceOp op = ReduceOp::Sum) {
  CollectiveCall c;
  c.kind = kind;
  c.team = std::move(team);
  c.root = root;
  c.op = op;
  c.inputName = "T1";
  c.outputName = "T3";
  return c;
}

/// An AllToAllv of `team` with per-pair `counts`, from T1 to T3.
void runSimAllToAllv(const std::vector<int64_t> &team,
                     const std::vector<std::vector<int64_t>> &counts,
                     const std::map<int64_t, const SimBuffer *> &in,
                     const std::map<int64_t, SimBuffer *> &out, const std::string &,
                     const std::string &) {
  CollectiveCall c = call(CollectiveType::AllToAllv, team);
  c.counts = counts;
  runSimCollective(c, in, out);
}

std::vector<int64_t> iota(int64_t n, int64_t first = 0) {
  std::vector<int64_t> v;
  for (int64_t i = 0; i < n; ++i)
    v.push_back(first + i);
  return v;
}

const std::vector<int64_t> kTeamSizes = {1, 2, 3, 4, 8};

SimBuffer untouched(int64_t k) {
  return SimBuffer(static_cast<size_t>(k), -1.0);
}

} // namespace

// --- Names -------------------------------------------------------------------

TEST(SimCollectiveNames, SpellNvFuserNames) {
  EXPECT_STREQ(collectiveTypeName(CollectiveType::Allgather), "Allgather");
  EXPECT_STREQ(collectiveTypeName(CollectiveType::ReduceScatter), "ReduceScatter");
  EXPECT_STREQ(collectiveTypeName(CollectiveType::AllToAll), "AllToAll");
  EXPECT_STREQ(collectiveTypeName(CollectiveType::SendRecv), "SendRecv");
  EXPECT_STREQ(reduceOpName(ReduceOp::Sum), "sum");
  EXPECT_STREQ(reduceOpName(ReduceOp::Min), "min");
}

// --- Allgather ---------------------------------------------------------------

TEST(SimCollectiveAllgather, TwoDevicesLiteral) {
  World w = world({0, 1}, 2, {0, 1}, 4);
  w.run(call(CollectiveType::Allgather, {0, 1}));
  EXPECT_EQ(w.out[0], (SimBuffer{0, 1, 100, 101}));
  EXPECT_EQ(w.out[1], (SimBuffer{0, 1, 100, 101}));
}

TEST(SimCollectiveAllgather, TeamOrderIsRankOrder) {
  World w = world({0, 1, 2}, 1, {0, 1, 2}, 3);
  w.run(call(CollectiveType::Allgather, {2, 0, 1}));
  for (int64_t d : {0, 1, 2})
    EXPECT_EQ(w.out[d], (SimBuffer{200, 0, 100})) << "device " << d;
}

TEST(SimCollectiveAllgather, EveryTeamSize) {
  for (int64_t n : kTeamSizes) {
    const int64_t k = 3;
    auto team = iota(n);
    World w = world(team, k, team, n * k);
    w.run(call(CollectiveType::Allgather, team));
    for (int64_t d : team)
      for (int64_t i = 0; i < n; ++i)
        for (int64_t t = 0; t < k; ++t)
          EXPECT_EQ(w.out[d][i * k + t], 100.0 * team[i] + t) << "n " << n << " device " << d;
  }
}

TEST(SimCollectiveAllgather, SubTeamLeavesOthersAlone) {
  World w = world(iota(8), 1, iota(8), 4);
  w.run(call(CollectiveType::Allgather, {4, 5, 6, 7}));
  for (int64_t d = 0; d < 4; ++d)
    EXPECT_EQ(w.out[d], untouched(4)) << "device " << d;
  for (int64_t d = 4; d < 8; ++d)
    EXPECT_EQ(w.out[d], (SimBuffer{400, 500, 600, 700})) << "device " << d;
}

TEST(SimCollectiveAllgather, SeedCaseOneElementOutputThrows) {
  // The seed: Allgather of 1-element buffers into a 1-element output.
  World w = world({0, 1}, 1, {0, 1}, 1);
  std::string msg = w.error(call(CollectiveType::Allgather, {0, 1}));
  EXPECT_NE(msg.find("all buffers must have the same number of elements"), std::string::npos)
      << msg;
  EXPECT_EQ(msg, "Allgather over team (0 1): all buffers must have the same number of elements: "
                 "output T3 on device 0 has 1, the team needs 2 x 1 = 2");
  EXPECT_EQ(w.out[0], untouched(1));
  EXPECT_EQ(w.out[1], untouched(1));
}

TEST(SimCollectiveAllgather, UnequalInputsThrow) {
  World w = world({0, 1}, 2, {0, 1}, 4);
  w.in[1] = named(1, 3);
  std::string msg = w.error(call(CollectiveType::Allgather, {0, 1}));
  EXPECT_EQ(msg, "Allgather over team (0 1): all buffers must have the same number of elements: "
                 "input T1 on device 1 has 3, device 0 has 2");
}

TEST(SimCollectiveAllgather, WrongOutputOnLaterDeviceWritesNothing) {
  World w = world({0, 1, 2}, 1, {0, 1, 2}, 3);
  w.out[2] = untouched(4);
  std::string msg = w.error(call(CollectiveType::Allgather, {0, 1, 2}));
  EXPECT_NE(msg.find("output T3 on device 2 has 4, the team needs 3 x 1 = 3"), std::string::npos)
      << msg;
  EXPECT_EQ(w.out[0], untouched(3)); // Devices 0 and 1 were fine but are not written.
  EXPECT_EQ(w.out[1], untouched(3));
}

TEST(SimCollectiveAllgather, MissingBuffersThrow) {
  World w = world({0}, 1, {0, 1}, 2);
  EXPECT_EQ(w.error(call(CollectiveType::Allgather, {0, 1})),
            "Allgather over team (0 1): no input T1 on device 1");
  w = world({0, 1}, 1, {0}, 2);
  EXPECT_EQ(w.error(call(CollectiveType::Allgather, {0, 1})),
            "Allgather over team (0 1): no output T3 on device 1");
  // A null pointer counts as missing.
  w = world({0, 1}, 1, {0, 1}, 2);
  auto in = w.inPtrs();
  in[1] = nullptr;
  EXPECT_THROW(runSimCollective(call(CollectiveType::Allgather, {0, 1}), in, w.outPtrs()),
               CollectiveError);
}

// --- Team checks -------------------------------------------------------------

TEST(SimCollectiveTeam, EmptyDuplicateAndRootlessCallsThrow) {
  World w = world({0, 1}, 2, {0, 1}, 4);
  EXPECT_EQ(w.error(call(CollectiveType::Allgather, {})),
            "Allgather over team (): the team is empty");
  EXPECT_EQ(w.error(call(CollectiveType::Allgather, {0, 0})),
            "Allgather over team (0 0): device 0 appears twice in the team");
  EXPECT_EQ(w.error(call(CollectiveType::Gather, {0, 1})),
            "Gather over team (0 1): a Gather needs a root");
  EXPECT_NE(w.error(call(CollectiveType::Scatter, {0, 1})), "");
  EXPECT_NE(w.error(call(CollectiveType::Broadcast, {0, 1})), "");
  EXPECT_NE(w.error(call(CollectiveType::Reduce, {0, 1})), "");
  EXPECT_EQ(w.out[0], untouched(4));
}

// --- Gather ------------------------------------------------------------------

TEST(SimCollectiveGather, RootInsideTeamReceivesOnly) {
  World w = world({0, 1, 2}, 2, {0, 1, 2}, 6);
  w.run(call(CollectiveType::Gather, {0, 1, 2}, 1));
  EXPECT_EQ(w.out[1], (SimBuffer{0, 1, 100, 101, 200, 201}));
  EXPECT_EQ(w.out[0], untouched(6));
  EXPECT_EQ(w.out[2], untouched(6));
}

TEST(SimCollectiveGather, RootOutsideTeamContributesNothing) {
  // Device 3 has an input buffer too; it must not appear in the result.
  World w = world({0, 1, 2, 3}, 1, {3}, 3);
  w.run(call(CollectiveType::Gather, {2, 0, 1}, 3));
  EXPECT_EQ(w.out[3], (SimBuffer{200, 0, 100}));
}

TEST(SimCollectiveGather, RootOutsideTeamNeedsNoInput) {
  World w = world({4, 5, 6, 7}, 2, {0}, 8);
  w.run(call(CollectiveType::Gather, {4, 5, 6, 7}, 0));
  EXPECT_EQ(w.out[0], (SimBuffer{400, 401, 500, 501, 600, 601, 700, 701}));
}

TEST(SimCollectiveGather, CountMismatchesThrow) {
  World w = world({0, 1}, 2, {2}, 2);
  EXPECT_EQ(w.error(call(CollectiveType::Gather, {0, 1}, 2)),
            "Gather over team (0 1) to root 2: all buffers must have the same number of "
            "elements: output T3 on device 2 has 2, the team needs 2 x 2 = 4");
  w = world({0, 1}, 2, {2}, 4);
  w.in[0] = named(0, 1);
  EXPECT_NE(
      w.error(call(CollectiveType::Gather, {0, 1}, 2))
          .find("all buffers must have the same number of elements: input T1 on device 1 has 2, "
                "device 0 has 1"),
      std::string::npos);
  EXPECT_EQ(w.out[2], untouched(4));
  w = world({0, 1}, 2, {}, 0);
  EXPECT_EQ(w.error(call(CollectiveType::Gather, {0, 1}, 0)),
            "Gather over team (0 1) to root 0: no output T3 on device 0");
}

TEST(SimCollectiveGather, EveryTeamSize) {
  for (int64_t n : kTeamSizes) {
    auto team = iota(n);
    World w = world(team, 2, {n}, 2 * n); // Root n is outside the team.
    w.run(call(CollectiveType::Gather, team, n));
    for (int64_t i = 0; i < n; ++i)
      for (int64_t t = 0; t < 2; ++t)
        EXPECT_EQ(w.out[n][i * 2 + t], 100.0 * i + t) << "n " << n;
  }
}

// --- Scatter -----------------------------------------------------------------

TEST(SimCollectiveScatter, RootInsideTeam) {
  World w = world({1}, 6, {0, 1, 2}, 2);
  w.run(call(CollectiveType::Scatter, {0, 1, 2}, 1));
  EXPECT_EQ(w.out[0], (SimBuffer{100, 101}));
  EXPECT_EQ(w.out[1], (SimBuffer{102, 103}));
  EXPECT_EQ(w.out[2], (SimBuffer{104, 105}));
}

TEST(SimCollectiveScatter, RootOutsideTeamOnlySends) {
  World w = world({3}, 3, {0, 1, 2, 3}, 1);
  w.run(call(CollectiveType::Scatter, {2, 0, 1}, 3));
  EXPECT_EQ(w.out[2], (SimBuffer{300})); // Rank 0.
  EXPECT_EQ(w.out[0], (SimBuffer{301})); // Rank 1.
  EXPECT_EQ(w.out[1], (SimBuffer{302})); // Rank 2.
  EXPECT_EQ(w.out[3], untouched(1));
}

TEST(SimCollectiveScatter, EveryTeamSize) {
  for (int64_t n : kTeamSizes) {
    auto team = iota(n, 4);
    World w = world({0}, 2 * n, team, 2);
    w.run(call(CollectiveType::Scatter, team, 0));
    for (int64_t r = 0; r < n; ++r)
      EXPECT_EQ(w.out[team[r]], (SimBuffer{2.0 * r, 2.0 * r + 1})) << "n " << n;
  }
}

TEST(SimCollectiveScatter, SeedCaseOneElementRootThrows) {
  World w = world({0}, 1, {0, 1}, 1);
  std::string msg = w.error(call(CollectiveType::Scatter, {0, 1}, 0));
  EXPECT_EQ(msg, "Scatter over team (0 1) from root 0: the root's buffer must hold one equal "
                 "chunk per member: input T1 on root 0 has 1, the team needs 2 x 1 = 2");
  EXPECT_EQ(w.out[0], untouched(1));
  EXPECT_EQ(w.out[1], untouched(1));
}

TEST(SimCollectiveScatter, UnequalOutputsAndMissingRootInputThrow) {
  World w = world({0}, 4, {0, 1}, 2);
  w.out[1] = untouched(3);
  EXPECT_NE(w.error(call(CollectiveType::Scatter, {0, 1}, 0))
                .find("output T3 on device 1 has 3, device 0 has 2"),
            std::string::npos);
  w = world({}, 0, {0, 1}, 2);
  EXPECT_EQ(w.error(call(CollectiveType::Scatter, {0, 1}, 5)),
            "Scatter over team (0 1) from root 5: no input T1 on device 5");
}

// --- Broadcast ---------------------------------------------------------------

TEST(SimCollectiveBroadcast, RootInsideTeam) {
  World w = world({2}, 3, {0, 1, 2}, 3);
  w.run(call(CollectiveType::Broadcast, {0, 1, 2}, 2));
  for (int64_t d : {0, 1, 2})
    EXPECT_EQ(w.out[d], (SimBuffer{200, 201, 202})) << "device " << d;
}

TEST(SimCollectiveBroadcast, RootOutsideTeamOnlySends) {
  World w = world({0}, 2, iota(8), 2);
  w.run(call(CollectiveType::Broadcast, {4, 5, 6, 7}, 0));
  for (int64_t d = 0; d < 4; ++d)
    EXPECT_EQ(w.out[d], untouched(2)) << "device " << d;
  for (int64_t d = 4; d < 8; ++d)
    EXPECT_EQ(w.out[d], (SimBuffer{0, 1})) << "device " << d;
}

TEST(SimCollectiveBroadcast, EveryTeamSize) {
  for (int64_t n : kTeamSizes) {
    auto team = iota(n);
    World w = world({0}, 3, team, 3);
    w.run(call(CollectiveType::Broadcast, team, 0));
    for (int64_t d : team)
      EXPECT_EQ(w.out[d], (SimBuffer{0, 1, 2})) << "n " << n;
  }
}

TEST(SimCollectiveBroadcast, CountMismatchThrows) {
  World w = world({0}, 2, {0, 1}, 2);
  w.out[1] = untouched(1);
  EXPECT_EQ(w.error(call(CollectiveType::Broadcast, {0, 1}, 0)),
            "Broadcast over team (0 1) from root 0: every output must have the root's number of "
            "elements: output T3 on device 1 has 1, input T1 on root 0 has 2");
  EXPECT_EQ(w.out[0], untouched(2));
}

// --- AllToAll ----------------------------------------------------------------

TEST(SimCollectiveAllToAll, TwoDevicesLiteral) {
  World w = world({0, 1}, 4, {0, 1}, 4);
  w.run(call(CollectiveType::AllToAll, {0, 1}));
  EXPECT_EQ(w.out[0], (SimBuffer{0, 1, 100, 101}));
  EXPECT_EQ(w.out[1], (SimBuffer{2, 3, 102, 103}));
}

TEST(SimCollectiveAllToAll, TeamOrderIsRankOrder) {
  World w = world({0, 1, 2}, 3, {0, 1, 2}, 3);
  w.run(call(CollectiveType::AllToAll, {2, 0, 1}));
  // Device 2 has rank 0, device 0 rank 1, device 1 rank 2.
  EXPECT_EQ(w.out[2], (SimBuffer{200, 0, 100}));
  EXPECT_EQ(w.out[0], (SimBuffer{201, 1, 101}));
  EXPECT_EQ(w.out[1], (SimBuffer{202, 2, 102}));
}

TEST(SimCollectiveAllToAll, EveryTeamSize) {
  for (int64_t n : kTeamSizes) {
    const int64_t k = 2;
    auto team = iota(n);
    World w = world(team, n * k, team, n * k);
    w.run(call(CollectiveType::AllToAll, team));
    for (int64_t r = 0; r < n; ++r)
      for (int64_t i = 0; i < n; ++i)
        for (int64_t t = 0; t < k; ++t)
          EXPECT_EQ(w.out[r][i * k + t], 100.0 * i + r * k + t) << "n " << n;
  }
}

TEST(SimCollectiveAllToAll, CountMismatchesThrow) {
  World w = world({0, 1}, 4, {0, 1}, 2);
  EXPECT_EQ(w.error(call(CollectiveType::AllToAll, {0, 1})),
            "AllToAll over team (0 1): all buffers must have the same number of elements: "
            "output T3 on device 0 has 2, the inputs have 4");
  w = world({0, 1}, 3, {0, 1}, 3);
  EXPECT_EQ(w.error(call(CollectiveType::AllToAll, {0, 1})),
            "AllToAll over team (0 1): all buffers must have the same number of elements: the "
            "inputs have 3, which does not split into 2 equal chunks");
  w = world({0, 1}, 4, {0, 1}, 4);
  w.in[0] = named(0, 2);
  EXPECT_NE(w.error(call(CollectiveType::AllToAll, {0, 1}))
                .find("all buffers must have the same number of elements"),
            std::string::npos);
  EXPECT_EQ(w.out[0], untouched(4));
}

// --- Allreduce ---------------------------------------------------------------

TEST(SimCollectiveAllreduce, SumOnTwoDevices) {
  World w = world({0, 1}, 2, {0, 1}, 2);
  w.run(call(CollectiveType::Allreduce, {0, 1}));
  EXPECT_EQ(w.out[0], (SimBuffer{100, 102}));
  EXPECT_EQ(w.out[1], (SimBuffer{100, 102}));
}

TEST(SimCollectiveAllreduce, EveryTeamSize) {
  for (int64_t n : kTeamSizes) {
    auto team = iota(n);
    World w = world(team, 2, team, 2);
    w.run(call(CollectiveType::Allreduce, team));
    double sumD = 100.0 * n * (n - 1) / 2; // Sum of 100*d over the team.
    for (int64_t d : team)
      EXPECT_EQ(w.out[d], (SimBuffer{sumD, sumD + n})) << "n " << n;
  }
}

TEST(SimCollectiveAllreduce, ProdMaxMin) {
  World w;
  w.in = {{0, {2, -1, 5}}, {1, {3, 4, -7}}, {2, {0.5, -2, 1}}};
  w.out = {{0, untouched(3)}, {1, untouched(3)}, {2, untouched(3)}};
  w.run(call(CollectiveType::Allreduce, {0, 1, 2}, std::nullopt, ReduceOp::Prod));
  EXPECT_EQ(w.out[1], (SimBuffer{3, 8, -35}));
  w.run(call(CollectiveType::Allreduce, {0, 1, 2}, std::nullopt, ReduceOp::Max));
  EXPECT_EQ(w.out[2], (SimBuffer{3, 4, 5}));
  w.run(call(CollectiveType::Allreduce, {0, 1, 2}, std::nullopt, ReduceOp::Min));
  EXPECT_EQ(w.out[0], (SimBuffer{0.5, -2, -7}));
}

TEST(SimCollectiveAllreduce, MaxAndMinPropagateNaN) {
  double nan = std::numeric_limits<double>::quiet_NaN();
  for (ReduceOp op : {ReduceOp::Max, ReduceOp::Min}) {
    World w;
    w.in = {{0, {1, nan}}, {1, {nan, 2}}};
    w.out = {{0, untouched(2)}, {1, untouched(2)}};
    w.run(call(CollectiveType::Allreduce, {0, 1}, std::nullopt, op));
    EXPECT_TRUE(std::isnan(w.out[0][0]) && std::isnan(w.out[0][1])) << reduceOpName(op);
  }
}

TEST(SimCollectiveAllreduce, InPlace) {
  std::map<int64_t, SimBuffer> bufs = {{0, {1, 2}}, {1, {10, 20}}, {2, {100, 200}}};
  std::map<int64_t, const SimBuffer *> in;
  std::map<int64_t, SimBuffer *> out;
  for (auto &[d, b] : bufs) {
    in[d] = &b;
    out[d] = &b;
  }
  runSimCollective(call(CollectiveType::Allreduce, {0, 1, 2}), in, out);
  for (const auto &[d, b] : bufs)
    EXPECT_EQ(b, (SimBuffer{111, 222})) << "device " << d;
}

TEST(SimCollectiveAllreduce, SumsInRankOrder) {
  // (1e16 + 1) - 1e16 is 0 in double, (1e16 - 1e16) + 1 is 1: the team's
  // order decides, so the result pins it.
  World w;
  w.in = {{0, {1e16}}, {1, {1}}, {2, {-1e16}}};
  w.out = {{0, untouched(1)}, {1, untouched(1)}, {2, untouched(1)}};
  w.run(call(CollectiveType::Allreduce, {0, 1, 2}));
  EXPECT_EQ(w.out[0], (SimBuffer{0}));
  w.run(call(CollectiveType::Allreduce, {0, 2, 1}));
  EXPECT_EQ(w.out[0], (SimBuffer{1}));
}

TEST(SimCollectiveAllreduce, CountMismatchesThrow) {
  World w = world({0, 1}, 2, {0, 1}, 1);
  EXPECT_EQ(w.error(call(CollectiveType::Allreduce, {0, 1})),
            "Allreduce over team (0 1): all buffers must have the same number of elements: "
            "output T3 on device 0 has 1, the inputs have 2");
  w = world({0, 1}, 2, {0, 1}, 2);
  w.in[1] = named(1, 1);
  EXPECT_NE(
      w.error(call(CollectiveType::Allreduce, {0, 1}))
          .find("all buffers must have the same number of elements: input T1 on device 1 has 1"),
      std::string::npos);
  EXPECT_EQ(w.out[0], untouched(2));
}

// --- Reduce ------------------------------------------------------------------

TEST(SimCollectiveReduce, RootInsideTeam) {
  World w = world({0, 1, 2, 3}, 2, {0, 1, 2, 3}, 2);
  w.run(call(CollectiveType::Reduce, {0, 1, 2, 3}, 2));
  EXPECT_EQ(w.out[2], (SimBuffer{600, 604}));
  for (int64_t d : {0, 1, 3})
    EXPECT_EQ(w.out[d], untouched(2)) << "device " << d;
}

TEST(SimCollectiveReduce, RootOutsideTeamContributesNothing) {
  World w = world({0, 4, 5, 6, 7}, 1, {0}, 1); // Device 0 has an input; it is not summed.
  w.run(call(CollectiveType::Reduce, {4, 5, 6, 7}, 0, ReduceOp::Max));
  EXPECT_EQ(w.out[0], (SimBuffer{700}));
  w.run(call(CollectiveType::Reduce, {4, 5, 6, 7}, 0));
  EXPECT_EQ(w.out[0], (SimBuffer{2200}));
}

TEST(SimCollectiveReduce, CountMismatchThrows) {
  World w = world({0, 1}, 2, {2}, 3);
  EXPECT_EQ(w.error(call(CollectiveType::Reduce, {0, 1}, 2)),
            "Reduce over team (0 1) to root 2: all buffers must have the same number of "
            "elements: output T3 on device 2 has 3, the inputs have 2");
}

// --- ReduceScatter -----------------------------------------------------------

TEST(SimCollectiveReduceScatter, TwoDevicesLiteral) {
  World w = world({0, 1}, 4, {0, 1}, 2);
  w.run(call(CollectiveType::ReduceScatter, {0, 1}));
  EXPECT_EQ(w.out[0], (SimBuffer{100, 102}));
  EXPECT_EQ(w.out[1], (SimBuffer{104, 106}));
}

TEST(SimCollectiveReduceScatter, TeamOrderIsRankOrder) {
  World w = world({0, 1, 2}, 3, {0, 1, 2}, 1);
  w.run(call(CollectiveType::ReduceScatter, {2, 0, 1}));
  EXPECT_EQ(w.out[2], (SimBuffer{300})); // Rank 0: offset 0.
  EXPECT_EQ(w.out[0], (SimBuffer{303})); // Rank 1: offset 1.
  EXPECT_EQ(w.out[1], (SimBuffer{306})); // Rank 2: offset 2.
}

TEST(SimCollectiveReduceScatter, EveryTeamSizeWithMin) {
  for (int64_t n : kTeamSizes) {
    auto team = iota(n, 8 - n); // Ends at device 7: (4 5 6 7), (7), ...
    World w = world(team, 2 * n, team, 2);
    w.run(call(CollectiveType::ReduceScatter, team, std::nullopt, ReduceOp::Min));
    for (int64_t r = 0; r < n; ++r)
      EXPECT_EQ(w.out[team[r]], (SimBuffer{100.0 * team[0] + 2 * r, 100.0 * team[0] + 2 * r + 1}))
          << "n " << n;
  }
}

TEST(SimCollectiveReduceScatter, CountMismatchesThrow) {
  World w = world({0, 1}, 2, {0, 1}, 2);
  EXPECT_EQ(w.error(call(CollectiveType::ReduceScatter, {0, 1})),
            "ReduceScatter over team (0 1): all buffers must have the same number of elements: "
            "output T3 on device 0 has 2, the team needs 2 / 2 = 1");
  w = world({0, 1, 2}, 4, {0, 1, 2}, 1);
  EXPECT_EQ(w.error(call(CollectiveType::ReduceScatter, {0, 1, 2})),
            "ReduceScatter over team (0 1 2): all buffers must have the same number of elements: "
            "the inputs have 4, which does not split into 3 equal chunks");
  EXPECT_EQ(w.out[0], untouched(1));
}

// --- SendRecv ----------------------------------------------------------------

TEST(SimCollectiveSendRecv, Pairs) {
  World w = world({0, 1, 2}, 2, {1, 2, 3}, 2);
  CollectiveCall c = call(CollectiveType::SendRecv, {});
  c.pairs = {{0, 3}, {2, 1}, {1, 2}};
  w.run(c);
  EXPECT_EQ(w.out[3], (SimBuffer{0, 1}));
  EXPECT_EQ(w.out[1], (SimBuffer{200, 201}));
  EXPECT_EQ(w.out[2], (SimBuffer{100, 101})); // Read before device 2's output was written.
}

TEST(SimCollectiveSendRecv, ErrorsWriteNothing) {
  World w = world({0, 1}, 2, {2, 3}, 2);
  w.out[3] = untouched(3);
  CollectiveCall c = call(CollectiveType::SendRecv, {});
  c.pairs = {{0, 2}, {1, 3}};
  EXPECT_EQ(w.error(c), "SendRecv (0 -> 2, 1 -> 3): the receiver's buffer must have the sender's "
                        "size: output T3 on device 3 has 3, input T1 on device 1 has 2");
  EXPECT_EQ(w.out[2], untouched(2));
  c.pairs = {{0, 2}, {1, 2}};
  EXPECT_EQ(w.error(c), "SendRecv (0 -> 2, 1 -> 2): device 2 receives twice");
  c.pairs = {{5, 2}};
  EXPECT_EQ(w.error(c), "SendRecv (5 -> 2): no input T1 on device 5");
}

// --- AllToAllv ---------------------------------------------------------------

namespace {

std::string allToAllvError(World &w, const std::vector<int64_t> &team,
                           const std::vector<std::vector<int64_t>> &counts) {
  try {
    runSimAllToAllv(team, counts, w.inPtrs(), w.outPtrs(), "T1", "T3");
  } catch (const CollectiveError &e) {
    return e.what();
  }
  return "";
}

} // namespace

TEST(SimCollectiveAllToAllv, UnequalChunks) {
  // counts[s][d]: 0 sends 1 to 0 and 2 to 1; 1 sends 3 to 0 and 0 to 1.
  World w = world({0, 1}, 0, {}, 0);
  w.in[0] = named(0, 3);
  w.in[1] = named(1, 3);
  w.out[0] = untouched(4);
  w.out[1] = untouched(2);
  EXPECT_EQ(allToAllvError(w, {0, 1}, {{1, 2}, {3, 0}}), "");
  EXPECT_EQ(w.out[0], (SimBuffer{0, 100, 101, 102}));
  EXPECT_EQ(w.out[1], (SimBuffer{1, 2}));
}

TEST(SimCollectiveAllToAllv, TeamOrderIsRankOrder) {
  // Team (2 0 1): rank r sends r+1 elements to every rank.
  World w;
  w.in = {{2, named(2, 3)}, {0, named(0, 6)}, {1, named(1, 9)}};
  w.out = {{2, untouched(6)}, {0, untouched(6)}, {1, untouched(6)}};
  EXPECT_EQ(allToAllvError(w, {2, 0, 1}, {{1, 1, 1}, {2, 2, 2}, {3, 3, 3}}), "");
  EXPECT_EQ(w.out[2], (SimBuffer{200, 0, 1, 100, 101, 102}));
  EXPECT_EQ(w.out[0], (SimBuffer{201, 2, 3, 103, 104, 105}));
  EXPECT_EQ(w.out[1], (SimBuffer{202, 4, 5, 106, 107, 108}));
}

TEST(SimCollectiveAllToAllv, CountErrorsThrow) {
  World w = world({0, 1}, 3, {0, 1}, 3);
  EXPECT_EQ(allToAllvError(w, {0, 1}, {{1, 1}, {1, 1}}),
            "AllToAllv over team (0 1): each input must hold the chunks it sends: input T1 on "
            "device 0 has 3, the counts send 2");
  EXPECT_EQ(allToAllvError(w, {0, 1}, {{1, 2}, {1, 2}}),
            "AllToAllv over team (0 1): each output must hold the chunks it receives: output T3 "
            "on device 0 has 3, the counts deliver 2");
  EXPECT_NE(allToAllvError(w, {0, 1}, {{1, 2}}), "");
  EXPECT_NE(allToAllvError(w, {0, 1}, {{1, 2}, {3}}), "");
  EXPECT_NE(allToAllvError(w, {0, 1}, {{4, -1}, {1, 2}}), "");
  EXPECT_EQ(w.out[0], untouched(3));
}

// --- Properties on random sizes ----------------------------------------------

namespace {

SimBuffer randomBuffer(std::mt19937 &rng, int64_t k) {
  std::uniform_int_distribution<int> value(-1000, 1000); // Integers: sums are exact.
  SimBuffer b(static_cast<size_t>(k));
  for (double &v : b)
    v = value(rng);
  return b;
}

/// A random team of `n` distinct devices out of 0..7 in random order.
std::vector<int64_t> randomTeam(std::mt19937 &rng, int64_t n) {
  std::vector<int64_t> all = iota(8);
  std::shuffle(all.begin(), all.end(), rng);
  return std::vector<int64_t>(all.begin(), all.begin() + n);
}

SimBuffer chunk(const SimBuffer &b, int64_t r, int64_t k) {
  return SimBuffer(b.begin() + r * k, b.begin() + (r + 1) * k);
}

} // namespace

TEST(SimCollectiveProperty, AllgatherThenOwnChunkIsTheInput) {
  std::mt19937 rng(1234);
  for (int iter = 0; iter < 50; ++iter) {
    int64_t n = std::uniform_int_distribution<int64_t>(1, 8)(rng);
    int64_t k = std::uniform_int_distribution<int64_t>(0, 5)(rng);
    auto team = randomTeam(rng, n);
    World w;
    for (int64_t d : team) {
      w.in[d] = randomBuffer(rng, k);
      w.out[d] = untouched(n * k);
    }
    w.run(call(CollectiveType::Allgather, team));
    for (int64_t r = 0; r < n; ++r)
      for (int64_t d : team)
        EXPECT_EQ(chunk(w.out[d], r, k), w.in[team[r]]) << "iteration " << iter;
  }
}

TEST(SimCollectiveProperty, ReduceScatterIsAllreduceThenOwnChunk) {
  std::mt19937 rng(99);
  for (int iter = 0; iter < 50; ++iter) {
    int64_t n = std::uniform_int_distribution<int64_t>(1, 8)(rng);
    int64_t k = std::uniform_int_distribution<int64_t>(0, 5)(rng);
    auto op = static_cast<ReduceOp>(std::uniform_int_distribution<int>(0, 3)(rng));
    auto team = randomTeam(rng, n);
    World rs, ar;
    for (int64_t d : team) {
      rs.in[d] = ar.in[d] = randomBuffer(rng, n * k);
      rs.out[d] = untouched(k);
      ar.out[d] = untouched(n * k);
    }
    rs.run(call(CollectiveType::ReduceScatter, team, std::nullopt, op));
    ar.run(call(CollectiveType::Allreduce, team, std::nullopt, op));
    for (int64_t r = 0; r < n; ++r)
      EXPECT_EQ(rs.out[team[r]], chunk(ar.out[team[r]], r, k))
          << "iteration " << iter << " op " << reduceOpName(op);
  }
}

TEST(SimCollectiveProperty, AllToAllTwiceIsIdentity) {
  std::mt19937 rng(7);
  for (int iter = 0; iter < 50; ++iter) {
    int64_t n = std::uniform_int_distribution<int64_t>(1, 8)(rng);
    int64_t k = std::uniform_int_distribution<int64_t>(0, 4)(rng);
    auto team = randomTeam(rng, n);
    World once;
    for (int64_t d : team) {
      once.in[d] = randomBuffer(rng, n * k);
      once.out[d] = untouched(n * k);
    }
    once.run(call(CollectiveType::AllToAll, team));
    World twice;
    twice.in = once.out;
    twice.out = once.out;
    twice.run(call(CollectiveType::AllToAll, team));
    for (int64_t d : team)
      EXPECT_EQ(twice.out[d], once.in[d]) << "iteration " << iter;
  }
}

TEST(SimCollectiveProperty, AllToAllvWithEqualCountsIsAllToAll) {
  std::mt19937 rng(42);
  for (int iter = 0; iter < 30; ++iter) {
    int64_t n = std::uniform_int_distribution<int64_t>(1, 8)(rng);
    int64_t k = std::uniform_int_distribution<int64_t>(0, 4)(rng);
    auto team = randomTeam(rng, n);
    World a;
    for (int64_t d : team) {
      a.in[d] = randomBuffer(rng, n * k);
      a.out[d] = untouched(n * k);
    }
    World v = a;
    a.run(call(CollectiveType::AllToAll, team));
    std::vector<std::vector<int64_t>> counts(static_cast<size_t>(n),
                                             std::vector<int64_t>(static_cast<size_t>(n), k));
    runSimAllToAllv(team, counts, v.inPtrs(), v.outPtrs(), "T1", "T3");
    EXPECT_EQ(a.out, v.out) << "iteration " << iter;
  }
}

/// checkCollectiveCounts (sizes only, what multi-process backends run on every
/// process) must throw exactly when runSimCollective does, with the same
/// message, for random kinds, teams, roots and buffer sizes.
TEST(SimCollectiveProperty, CountCheckAgreesWithTheCollective) {
  std::mt19937_64 rng(7);
  const CollectiveType kinds[] = {
      CollectiveType::Allgather, CollectiveType::Gather,        CollectiveType::Scatter,
      CollectiveType::Broadcast, CollectiveType::AllToAll,      CollectiveType::Allreduce,
      CollectiveType::Reduce,    CollectiveType::ReduceScatter, CollectiveType::SendRecv};
  int agreedThrows = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    CollectiveCall call;
    call.kind = kinds[rng() % 9];
    int n = 1 + static_cast<int>(rng() % 4);
    for (int d = 0; d < n; ++d)
      call.team.push_back(d);
    std::shuffle(call.team.begin(), call.team.end(), rng);
    if (rng() % 2)
      call.root = static_cast<int64_t>(rng() % (n + 1)); // Sometimes outside the team.
    if (call.kind == CollectiveType::SendRecv)
      for (int d = 0; d < n; ++d)
        call.pairs.emplace_back(d, (d + 1 + static_cast<int>(rng() % n)) % (n + 1));
    std::map<int64_t, SimBuffer> inBuffers, outBuffers;
    std::map<int64_t, int64_t> inSizes, outSizes;
    for (int d = 0; d <= n; ++d) {
      // Sizes are mostly consistent (multiples of small chunks), sometimes off.
      int64_t k = 1 + static_cast<int64_t>(rng() % 3);
      int64_t in = rng() % 4 == 0 ? static_cast<int64_t>(rng() % 7)
                                  : k * static_cast<int64_t>(1 + rng() % 2) * n;
      int64_t out = rng() % 4 == 0 ? static_cast<int64_t>(rng() % 7) : in;
      if (rng() % 8) {
        inBuffers[d] = SimBuffer(static_cast<size_t>(in), 1.0);
        inSizes[d] = in;
      }
      if (rng() % 8) {
        outBuffers[d] = SimBuffer(static_cast<size_t>(out), 0.0);
        outSizes[d] = out;
      }
    }
    std::map<int64_t, const SimBuffer *> in;
    std::map<int64_t, SimBuffer *> out;
    for (auto &[d, b] : inBuffers)
      in[d] = &b;
    for (auto &[d, b] : outBuffers)
      out[d] = &b;
    std::string runError, checkError;
    try {
      runSimCollective(call, in, out);
    } catch (const CollectiveError &e) {
      runError = e.what();
    }
    try {
      checkCollectiveCounts(call, inSizes, outSizes);
    } catch (const CollectiveError &e) {
      checkError = e.what();
    }
    ASSERT_EQ(checkError.empty(), runError.empty())
        << "trial " << trial << ": run: '" << runError << "' check: '" << checkError << "'";
    if (!runError.empty()) {
      EXPECT_EQ(checkError, runError) << "trial " << trial;
      ++agreedThrows;
    }
  }
  EXPECT_GT(agreedThrows, 500);
}
