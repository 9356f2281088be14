// Seeded random host IR programs with one statement posted in a stream
// loop, for the SMT-vs-brute-force cross-check of the loop claims
// (checker/LoopChecker.h against checker/bruteforce/LoopSlices.h).
//
// Each case is dump text as nvFuser prints it (so the dump reader and
// ir/HostLoops.h are exercised too): a base P [.., stream, ..] and its read
// view R, a base C and its write view W, both at the loop variable, and an
// Allgather (or, a third of the time, a Set: any statement writing a slice
// has the same loop claims) from R to W inside `FOR StreamIdx in ID{..}:` or
// `FOR i18 from 0 to K:`. Drawn: 1..4 devices, 1..2 slice axes of constant or symbolic
// extent, the stream axis anywhere in each base, shardings on a slice axis
// or none; and, now and then, something wrong: a slice sharded unlike its
// base, a base on another mesh, a loop bound off by one (or constant where
// the stream axis is symbolic), a loop over the input's stream axis whose
// extent differs from the output's.
//
// A quarter of the seeds draw nvFuser's CollectivePermute ring instead
// (ir/RingPermute.h): 1..4 devices, random slot sizes, a Set writing the
// slot of a second swizzled base, and mostly dispatchSwizzle1D's own peers
// with, now and then, one thing wrong (a team index, a modulus, an addend,
// a loop bound). For those alone the case says whether the ring is right,
// by running it per device (ringRuns), independently of the checker.
//
// The same seed gives the same sequence (util/RandomDraw.h). It does not
// check anything, and knows which cases are right only for rings.
#pragma once

#include "checker/Lowering.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace shardcheck::bruteforce {

struct RandomLoopCase {
  std::string text;  ///< The host IR program.
  Bindings bindings; ///< Values for its symbols (may violate constraints).
  std::string description;
  /// A ring: whether it runs right as printed (by ringRuns, when recv_peer's
  /// and send_peer's team indices agree); nullopt for other programs.
  std::optional<bool> ringRight;
};

RandomLoopCase randomLoop(uint64_t seed);

/// A CollectivePermute ring as printed: `send_peer=( ( sendAddend + (
/// sendIndex - i100 ) ) % sendModulus )`, `recv_peer=( ( i100 + recvIndex )
/// % recvModulus )`, in `FOR i100 from lo to hi`, with slots of `slot`'s
/// extents. The defaults are dispatchSwizzle1D's ring on 2 devices.
struct RingCase {
  int64_t devices = 2;
  int64_t recvIndex = 0, recvModulus = 2;
  int64_t sendAddend = 2, sendIndex = 0, sendModulus = 2;
  int64_t lo = 0, hi = 2;
  std::vector<int64_t> slot{3};
};

/// The ring pipeline of corpus/adversarial_ring_collective_permute_hostir.txt
/// (T0 sharded -> ring into T3's slots -> a Set into T2's slots) for `c`.
std::string ringProgram(const RingCase &c);
/// Whether the ring delivers every shard to its slot on every device, each
/// once, when the device of team index `printer` printed it: every device
/// runs the printed peers with its own team index, sends and receives are
/// paired iteration by iteration (C++'s truncated %, as nvFuser evaluates).
bool ringRuns(const RingCase &c, int64_t printer);

} // namespace shardcheck::bruteforce
