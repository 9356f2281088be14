// What a CollectivePermute posted in a stream loop is: one step of nvFuser's
// ring (PR #5963, 2026), read per device.
//
// nvFuser lowers a DID -> Stream resharding whose stream axis is a Swizzle1D
// of the device axis to a CollectivePermute inside the host loop over the
// stream index (csrc/host_ir/lower_to_communication.cpp,
// lowerToCollectivePermute), writing one slot of the output per iteration:
//
//   FOR i from 0 to D:
//     W = ShardByStream(C, stream_index = i)     write view: slot (i + t) % D
//     CollectivePermute N (team=(..), send_peer=( ( D + ( c - i ) ) % D ),
//                          recv_peer=( ( i + c ) % D ), input=P, output=W, ..)
//
// On the device of team index t, ShardByStream of a Swizzle1D stream axis
// selects the slot (i + t) % D (HostIrEvaluator::handle(ShardByStream)), and
// the peers come from dispatchSwizzle1D (csrc/multidevice/utils.cpp):
// recv = (i + t) % D, send = (D + (t - i)) % D, with t a constant of the
// device the program was lowered for: the printed c. The print is one
// device's program; every other device runs the same lowering with its own
// team index in c's place. That generalisation is made only where the print
// has exactly dispatchSwizzle1D's form (the constant in its positions); any
// other peer expression stays unsupported.
//
// This file reads the print into a RingPermute (the loop, the tensors, the
// sliced axis, the printed constants), or says why it does not fit. It does
// not decide whether the ring is right (checker/RingChecker.h does), and it
// does not read a ShardByStream whose swizzle the print does not imply.
#pragma once

#include "ir/HostLoops.h"

#include <cstdint>
#include <optional>
#include <string>
#include <variant>

namespace shardcheck {

/// `( ( i + c ) % m )`: dispatchSwizzle1D's recv_peer.
struct RecvPeerForm {
  int64_t teamIndex = 0; ///< c
  int64_t modulus = 0;   ///< m
};
/// `( ( a + ( c - i ) ) % m )`: dispatchSwizzle1D's send_peer (a == m there).
struct SendPeerForm {
  int64_t addend = 0;    ///< a
  int64_t teamIndex = 0; ///< c
  int64_t modulus = 0;   ///< m
};

/// A looped CollectivePermute in dispatchSwizzle1D's form.
struct RingPermute {
  HostLoop loop;
  TensorNum input = 0;  ///< P: sharded along `position` by DIDx over the team.
  TensorNum view = 0;   ///< W: the slot of `base` the iteration writes.
  TensorNum base = 0;   ///< C: its stream axis (at `position`) is the Swizzle1D.
  size_t position = 0;  ///< Among P's and C's logical data IDs.
  IdNum streamAxis = 0; ///< C's stream-parallel logical ID.
  std::vector<int64_t> team;
  RecvPeerForm recv;
  SendPeerForm send;
  std::string recvText, sendText; ///< As printed.
};

/// The ring's peers as shifts of nvFuser's (ir/Swizzle1D.h, a plan's
/// "ring"), reading recv_peer's printed constant c_r as the printing
/// device's team index: recv shift 0, send shift (a + c_s - c_r) mod D, so
/// that a plan runs the peers as printed; nullopt when a modulus is not the
/// team size D (no constant shift says such peers).
struct RingShifts {
  int64_t recv = 0, send = 0;
};
std::optional<RingShifts> ringShifts(const RingPermute &r);

/// Whether `e` is a CollectivePermute.
bool isCollectivePermute(const Expr &e);
/// The ring model of a CollectivePermute of `f`, or why it does not fit.
std::variant<RingPermute, std::string> ringPermute(const Fusion &f, const Expr &e);

/// The base, stream axis and position of a ShardByStream write view whose
/// swizzle the print implies (the output of a modelled ring, or a statement
/// of the same iteration computed from one); used by the loop model.
struct SwizzledWrite {
  TensorNum base = 0;
  IdNum streamAxis = 0;
  size_t position = 0;
};
/// For a statement posted in a host loop that writes through a
/// ShardByStream view: the view's slice, when the statement reads a value
/// the same iteration computed from a modelled ring's slot (nvFuser posts a
/// statement locally only when its operands and output are sharded alike
/// along the stream: haveDifferentShardings compares the Swizzle1D loop
/// indices), or why it is not read.
std::variant<SwizzledWrite, std::string> swizzledWrite(const Fusion &f, const Expr &e);

/// A tensor's unique stream-parallel logical data ID and its position, or
/// nullopt.
std::optional<std::pair<IdNum, size_t>> streamAxisOf(const Fusion &f, const TensorView &tv);

} // namespace shardcheck
