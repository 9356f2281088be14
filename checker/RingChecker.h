// Proofs about nvFuser's CollectivePermute ring (ir/RingPermute.h).
//
// In iteration v of `FOR v from lo to hi`, the device of team index t
// writes the slot (v + t) % D of C (its ShardByStream of a Swizzle1D stream
// axis), which must hold P's shard (v + t) % D, held only by the device of
// that team index. Every device runs the printed lowering with its own team
// index in place of the printed one (the hypothesis that the print is the
// program of the device of team index p; normally p is the printed c). The
// claims, each proved for every device and every iteration with Z3
// (docs/semantics.md, "CollectivePermute rings"):
//   - `ring-recv-peer`: recv_t(v) == (v + t) % D: each device receives, into
//     its slot, the shard that slot holds;
//   - `ring-send-peer`: the device it receives from sends to it:
//     send_{recv_t(v)}(v) == t (else the exchange does not pair up);
//   - `ring-covers-output`: the iterations write every slot of C on every
//     device once: hi - lo == D.
// A printed pair of peers whose team indices differ (no device's lowering
// prints both) is refuted only when it is wrong under every hypothesis p.
// A counterexample names the iteration and the device.
//
// It does not check the statements that read the slots (the loop model
// does, ir/HostLoops.h), and it does not plan or run the ring.
#pragma once

#include "checker/EdgeChecker.h"
#include "ir/RingPermute.h"

namespace shardcheck {

class RingChecker {
public:
  RingChecker(const Fusion &fusion, const RingPermute &ring, smt::Context &ctx);

  /// Proved when every claim holds for the printing device's hypothesis;
  /// refuted with the counterexample of the first claim that fails (under
  /// every hypothesis where the print's team indices disagree).
  Outcome check();
  /// Sizes for which the claims were proved, in user terms.
  std::vector<std::string> assumptions() const;

private:
  /// The claims under the hypothesis that the device of team index
  /// `printer` printed the program.
  Outcome checkAs(int64_t printer);
  Outcome checkRecvPeer(int64_t printer);
  Outcome checkSendPeer(int64_t printer);
  Outcome checkCovers();
  /// The loop's bound terms and `lo <= v < hi`.
  smt::Int bound(const Extent &e, std::optional<IdNum> id);
  smt::Bool inLoop(const smt::Int &v);
  smt::Bool teamIndex(const smt::Int &t);
  /// C++'s `a % m` (truncated, as nvFuser's evaluator computes it).
  smt::Int cmod(const smt::Int &a, int64_t m);
  smt::Int recvPeer(const smt::Int &t, const smt::Int &v, int64_t printer);
  smt::Int sendPeer(const smt::Int &t, const smt::Int &v, int64_t printer);
  smt::Int slot(const smt::Int &t, const smt::Int &v);
  smt::QueryResult solve(const std::string &name, std::vector<smt::Bool> assertions,
                         std::vector<std::string> vars);
  Counterexample counterexample(const smt::QueryResult &r, int64_t device, std::string message,
                                const std::string &rule) const;
  std::string device(int64_t teamIndex) const;
  std::string iteration(int64_t v) const;

  const Fusion &fusion_;
  const RingPermute &ring_;
  smt::Context &ctx_;
  Encoder enc_;
  int64_t d_;
};

} // namespace shardcheck
