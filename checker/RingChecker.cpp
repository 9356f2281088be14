// The claims of a CollectivePermute ring; see RingChecker.h.
#include "checker/RingChecker.h"

#include "checker/LoopChecker.h"
#include "util/Checked.h"

#include <algorithm>

namespace shardcheck {

namespace {

/// Beyond this team size, printed peers of two different devices are not
/// tried against every hypothesis (one query set per device): unsupported.
constexpr int64_t kMaxHypotheses = 64;

} // namespace

RingChecker::RingChecker(const Fusion &fusion, const RingPermute &ring, smt::Context &ctx)
    : fusion_(fusion), ring_(ring), ctx_(ctx), enc_(ctx, fusion),
      d_(static_cast<int64_t>(ring.team.size())) {}

smt::Int RingChecker::bound(const Extent &e, std::optional<IdNum> id) {
  return loopBoundTerm(enc_, e, id);
}

smt::Bool RingChecker::inLoop(const smt::Int &v) {
  return inHostLoopRange(enc_, ring_.loop, v);
}

smt::Bool RingChecker::teamIndex(const smt::Int &t) {
  return 0 <= t && t < d_;
}

smt::Int RingChecker::cmod(const smt::Int &a, int64_t m) {
  smt::Int zero = ctx_.intVal(0), mod = ctx_.intVal(m);
  return ctx_.ite(0 <= a, ctx_.mod(a, mod), zero - ctx_.mod(zero - a, mod));
}

smt::Int RingChecker::recvPeer(const smt::Int &t, const smt::Int &v, int64_t printer) {
  // The printed constant is the printer's team index; device t has its own.
  smt::Int c = t + (ring_.recv.teamIndex - printer);
  return cmod(v + c, ring_.recv.modulus);
}

smt::Int RingChecker::sendPeer(const smt::Int &t, const smt::Int &v, int64_t printer) {
  smt::Int c = t + (ring_.send.teamIndex - printer);
  return cmod(ctx_.intVal(ring_.send.addend) + (c - v), ring_.send.modulus);
}

smt::Int RingChecker::slot(const smt::Int &t, const smt::Int &v) {
  return cmod(v + t, d_);
}

smt::QueryResult RingChecker::solve(const std::string &name, std::vector<smt::Bool> assertions,
                                    std::vector<std::string> vars) {
  return solveWithSymbols(enc_, name, std::move(assertions), std::move(vars));
}

std::string RingChecker::device(int64_t teamIndex) const {
  if (teamIndex < 0 || teamIndex >= d_)
    return "team index " + std::to_string(teamIndex) + " (no device of the team " +
           devicesStr(ring_.team) + ")";
  return "device " + std::to_string(ring_.team[teamIndex]);
}

std::string RingChecker::iteration(int64_t v) const {
  return "iteration " + ring_.loop.var + " = " + std::to_string(v);
}

Counterexample RingChecker::counterexample(const smt::QueryResult &r, int64_t teamIdx,
                                           std::string message, const std::string &rule) const {
  Counterexample c = counterexampleOf(r.model, enc_, std::move(message));
  c.device = teamIdx >= 0 && teamIdx < d_ ? ring_.team[teamIdx] : -1;
  c.rule = rule;
  return c;
}

Outcome RingChecker::checkRecvPeer(int64_t printer) {
  smt::Int t = ctx_.intVar("t"), v = ctx_.intVar("it"), got = ctx_.intVar("got"),
           want = ctx_.intVar("want");
  auto r = solve(
      "ring-recv-peer",
      {teamIndex(t), inLoop(v), got == recvPeer(t, v, printer), want == slot(t, v), got != want},
      {"t", "it", "got", "want"});
  if (auto decided = provedOrUnknown(r, "ring-recv-peer"))
    return *decided;
  int64_t ti = r.model.at("t"), it = r.model.at("it"), from = r.model.at("got"),
          j = r.model.at("want");
  const std::string &p = fusion_.tensor(ring_.input).name(), &c = fusion_.tensor(ring_.base).name();
  std::string msg =
      iteration(it) + ": " + device(ti) + " receives from recv_peer " + ring_.recvText + " = " +
      std::to_string(from) + " (" + device(from) + ") into its slot " + std::to_string(j) + " of " +
      c + " (its " + fusion_.tensor(ring_.view).name() + " = ShardByStream(" + c +
      ", stream_index = " + ring_.loop.var + ") is the slot (" + ring_.loop.var + " + " +
      std::to_string(ti) + ") % " + std::to_string(d_) + "), which must hold " + p + "'s shard " +
      std::to_string(j) + ", held by " + device(j);
  return Outcome::refuted(counterexample(r, ti, msg, "ring-recv-peer"));
}

Outcome RingChecker::checkSendPeer(int64_t printer) {
  smt::Int t = ctx_.intVar("t"), v = ctx_.intVar("it"), from = ctx_.intVar("from"),
           to = ctx_.intVar("to");
  auto r = solve("ring-send-peer",
                 {teamIndex(t), inLoop(v), from == recvPeer(t, v, printer), teamIndex(from),
                  to == sendPeer(from, v, printer), to != t},
                 {"t", "it", "from", "to"});
  if (auto decided = provedOrUnknown(r, "ring-send-peer"))
    return *decided;
  int64_t ti = r.model.at("t"), it = r.model.at("it"), src = r.model.at("from"),
          dst = r.model.at("to");
  std::string msg = iteration(it) + ": " + device(ti) + " receives from " + device(src) + ", but " +
                    device(src) + " sends (send_peer " + ring_.sendText +
                    " on that device = " + std::to_string(dst) + ") to " + device(dst) +
                    ": the sends and receives of the CollectivePermute do not pair up";
  return Outcome::refuted(counterexample(r, ti, msg, "ring-send-peer"));
}

Outcome RingChecker::checkCovers() {
  smt::Int lo = bound(ring_.loop.lo, std::nullopt), hi = bound(ring_.loop.hi, ring_.loop.rangeId);
  smt::Int nlo = ctx_.intVar("lo"), nhi = ctx_.intVar("hi");
  auto r = solve("ring-covers-output", {nlo == lo, nhi == hi, !(0 <= lo && hi == lo + d_)},
                 {"lo", "hi"});
  if (auto decided = provedOrUnknown(r, "ring-covers-output"))
    return *decided;
  int64_t l = r.model.at("lo"), h = r.model.at("hi");
  const std::string &c = fusion_.tensor(ring_.base).name();
  std::string range = " (the loop `" + ring_.loop.header + "` runs " + ring_.loop.var + " from " +
                      std::to_string(l) + " to " + std::to_string(h) + "; " + c + " has " +
                      std::to_string(d_) + " slots, one per device of the team)";
  // The model's bounds may be any 64-bit values: l + d_ past them is no iteration short.
  std::optional<int64_t> full = checkedAdd(l, d_);
  bool missing = full && h < *full;
  int64_t v = missing ? std::max(h, l) : (full ? *full : h);
  int64_t s = ((v % d_) + d_) % d_;
  std::string msg = missing ? iteration(v) + " is missing: slot " + std::to_string(s) + " of " + c +
                                  " on " + device(0) + " is written by no iteration" + range
                            : iteration(v) + " writes slot " + std::to_string(s) + " of " + c +
                                  " on " + device(0) + " a second time" + range;
  if (l < 0) // ShardByStream's slot of a negative index is no slot
    msg = iteration(l) + " takes the negative stream index " + std::to_string(l) + range;
  return Outcome::refuted(counterexample(r, 0, msg, "ring-covers-output"));
}

Outcome RingChecker::checkAs(int64_t printer) {
  Outcome o = checkRecvPeer(printer);
  if (o.kind == Outcome::Kind::Proved)
    o = checkSendPeer(printer);
  if (o.kind == Outcome::Kind::Proved)
    o = checkCovers();
  return o;
}

Outcome RingChecker::check() {
  try {
    if (ring_.recv.modulus <= 0 || ring_.send.modulus <= 0)
      return Outcome::unsupported("a peer is taken modulo " +
                                  std::to_string(std::min(ring_.recv.modulus, ring_.send.modulus)));
    int64_t c = ring_.recv.teamIndex;
    if (c == ring_.send.teamIndex && 0 <= c && c < d_)
      return checkAs(c);
    // No device's lowering prints both peers: the ring is refuted only if it
    // is wrong whichever device printed it.
    if (d_ > kMaxHypotheses)
      return Outcome::unsupported("its peers name different team indices (" + std::to_string(c) +
                                  " and " + std::to_string(ring_.send.teamIndex) +
                                  ") on a team of more than " + std::to_string(kMaxHypotheses) +
                                  " devices");
    int64_t preferred =
        0 <= ring_.send.teamIndex && ring_.send.teamIndex < d_ ? ring_.send.teamIndex : 0;
    std::optional<Outcome> shown;
    for (int64_t p = 0; p < d_; ++p) {
      Outcome o = checkAs(p);
      if (o.kind != Outcome::Kind::Refuted)
        return o.kind == Outcome::Kind::Proved
                   ? Outcome::unknown("its peers name different team indices (recv " +
                                      std::to_string(c) + ", send " +
                                      std::to_string(ring_.send.teamIndex) +
                                      "), and the ring is right if " + device(p) + " printed it")
                   : o;
      if (p == preferred)
        shown = o;
    }
    shown->counterexample->message =
        "its peers name different team indices (recv_peer " + std::to_string(c) + ", send_peer " +
        std::to_string(ring_.send.teamIndex) +
        "), so no device's lowering printed both, and the ring is wrong whichever device "
        "printed it; read as " +
        device(preferred) + "'s program: " + shown->counterexample->message;
    return *shown;
  } catch (const Unsupported &u) {
    return Outcome::unsupported(u.what());
  }
}

std::vector<std::string> RingChecker::assumptions() const {
  std::vector<std::string> a(enc_.assumptions().begin(), enc_.assumptions().end());
  a.push_back("the program is the lowering for the device of team index " +
              std::to_string(ring_.recv.teamIndex) +
              " (dispatchSwizzle1D's printed constant); every device runs it with its own");
  // Not in the print: nvFuser keeps the consumer's ShardByStream local only
  // when it is swizzled like the ring, so the proof relies on that too.
  a.push_back("the consumer's ShardByStream output is swizzled like the ring (Swizzle1D on its "
              "stream axis; the print does not show it)");
  return a;
}

} // namespace shardcheck
