// nvFuser's Swizzle1D ring, evaluated: the one spelling of its formulas for
// code that computes with numbers (the plan builder, the plan loader and the
// executor's run loop).
//
// On the device of team index t (its position in the team, 0..D-1), in
// iteration s of the host loop over the stream index:
//   - ShardByStream of a Swizzle1D stream axis selects the slot (s + t) % D
//     (HostIrEvaluator::handle(ShardByStream));
//   - dispatchSwizzle1D's CollectivePermute receives from the member
//     (s + t) % D and sends to the member (D + t - s) % D
//     (csrc/multidevice/utils.cpp).
// A plan may shift either peer by a constant (docs/plan-format.md, "Rings"):
// nvFuser's ring is the shifts 0, and a hand-edited plan may name others.
//
// What it does not do: read a print (ir/RingPermute.h), prove a ring
// (checker/RingChecker.h states the same formulas as Z3 terms) or run one.
#pragma once

#include <cstdint>

namespace shardcheck {

/// `a mod m` in [0, m), for m > 0 (C++'s % keeps a's sign).
constexpr int64_t floorMod(int64_t a, int64_t m) {
  int64_t r = a % m;
  return r < 0 ? r + m : r;
}

/// The slot the device of team index `t` takes in iteration `s` of a
/// ring over `d` devices.
constexpr int64_t swizzledSlot(int64_t s, int64_t t, int64_t d) {
  return floorMod(s + t, d);
}

/// The team index the device of team index `t` receives from in iteration
/// `s`: nvFuser's (s + t) % d, shifted by `shift`.
constexpr int64_t ringRecvPeer(int64_t s, int64_t t, int64_t d, int64_t shift) {
  return floorMod(swizzledSlot(s, t, d) + shift, d);
}

/// The team index the device of team index `t` sends to in iteration `s`:
/// nvFuser's (d + t - s) % d, shifted by `shift`.
constexpr int64_t ringSendPeer(int64_t s, int64_t t, int64_t d, int64_t shift) {
  return floorMod(t - s + shift, d);
}

/// Whether every send meets the matching receive in every iteration: the
/// member t sends to u = t - s + sendShift, which receives from
/// u + s + recvShift = t + recvShift + sendShift; so exactly when the
/// shifts add up to a multiple of d.
constexpr bool ringPeersPairUp(int64_t d, int64_t recvShift, int64_t sendShift) {
  return floorMod(recvShift + sendShift, d) == 0;
}

} // namespace shardcheck
