// Brute-force evaluation of a statement posted in a host loop.
//
// The independent reference for checker/LoopChecker.h: at concrete
// bindings it runs the loop's iterations one by one and decides, by
// enumerating devices and elements, the same claims (docs/semantics.md,
// "Communications in host loops"):
//   - each slice (every read view and the write view) is exactly its base's
//     part at the iteration's index, on every device;
//   - every iteration reads an index of each read view's base axis;
//   - the iterations write every index of the write view's base axis,
//     once, and nothing past it.
// A failure comes with a counterexample naming the iteration.
//
// It does not check the per-iteration operation (bruteCheckLowering does,
// on the slice tensors) and shares no code with the SMT encoding.
#pragma once

#include "checker/bruteforce/Outcome.h"
#include "ir/HostLoops.h"

namespace shardcheck::bruteforce {

/// Holds when every loop claim holds at `bindings`; InvalidBindings when
/// they violate the fusion's implied constraints (slice and base extents
/// agree axis by axis among them); Unsupported when too large.
BruteResult bruteLoopedStatement(const Fusion &fusion, const LoopedStatement &loop,
                                 const Bindings &bindings);

} // namespace shardcheck::bruteforce
