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
// The same seed gives the same sequence (util/RandomDraw.h). It does not
// check anything and does not know which cases are right.
#pragma once

#include "checker/Lowering.h"

#include <cstdint>
#include <string>

namespace shardcheck::bruteforce {

struct RandomLoopCase {
  std::string text;  ///< The host IR program.
  Bindings bindings; ///< Values for its symbols (may violate constraints).
  std::string description;
};

RandomLoopCase randomLoop(uint64_t seed);

} // namespace shardcheck::bruteforce
