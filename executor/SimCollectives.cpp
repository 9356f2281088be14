// The sim backend's collectives; see SimCollectives.h.
//
// Structure: every call goes through two phases. The first checks the team,
// the buffers' presence and their counts and computes every receiver's result
// into a temporary; the second writes the temporaries into the output
// buffers. So a failed check writes nothing, and a call whose input and
// output are the same vector (in-place Allreduce) reads every input before
// any output changes. Each row of the DESIGN table is one function that
// reads it literally; Gather and Reduce share theirs with Allgather and
// Allreduce, the table's "same, on the root only", with the root as the only
// receiver. No collective is composed from others (ReduceScatter is not
// Allreduce plus a slice), so the property tests relating them are real checks.
#include "executor/SimCollectives.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

namespace shardcheck {

const char *reduceOpName(ReduceOp op) {
  switch (op) {
  case ReduceOp::Sum:
    return "sum";
  case ReduceOp::Prod:
    return "prod";
  case ReduceOp::Max:
    return "max";
  case ReduceOp::Min:
    return "min";
  }
  return "?";
}

double reduceCombine(ReduceOp op, double a, double b) {
  switch (op) {
  case ReduceOp::Sum:
    return a + b;
  case ReduceOp::Prod:
    return a * b;
  case ReduceOp::Max:
  case ReduceOp::Min:
    if (std::isnan(a) || std::isnan(b))
      return std::numeric_limits<double>::quiet_NaN();
    return op == ReduceOp::Max ? std::max(a, b) : std::min(a, b);
  }
  return a;
}

double reduceIdentity(ReduceOp op) {
  switch (op) {
  case ReduceOp::Sum:
    return 0.0;
  case ReduceOp::Prod:
    return 1.0;
  case ReduceOp::Max:
    return -std::numeric_limits<double>::infinity();
  case ReduceOp::Min:
    return std::numeric_limits<double>::infinity();
  }
  return 0.0;
}

const char *simCollectiveName(SimCollective c) {
  switch (c) {
  case SimCollective::Allgather:
    return "Allgather";
  case SimCollective::Gather:
    return "Gather";
  case SimCollective::Scatter:
    return "Scatter";
  case SimCollective::Broadcast:
    return "Broadcast";
  case SimCollective::AllToAll:
    return "AllToAll";
  case SimCollective::Allreduce:
    return "Allreduce";
  case SimCollective::Reduce:
    return "Reduce";
  case SimCollective::ReduceScatter:
    return "ReduceScatter";
  case SimCollective::SendRecv:
    return "SendRecv";
  }
  return "?";
}

namespace {

/// nvFuser's words for a count mismatch of the equal-size collectives, kept
/// so that a user who saw nvFuser fail recognizes the same failure here.
constexpr const char *kSameCount = "all buffers must have the same number of elements";

/// The results to write, receiver -> values (see the banner's two phases).
using Results = std::map<int64_t, SimBuffer>;

std::string teamStr(const std::vector<int64_t> &team) {
  std::string s = "(";
  for (size_t i = 0; i < team.size(); ++i)
    s += (i ? " " : "") + std::to_string(team[i]);
  return s + ")";
}

std::string str(size_t n) {
  return std::to_string(n);
}

/// "the team needs 2 x 3 = 6".
std::string teamNeeds(size_t n, size_t k) {
  return "the team needs " + str(n) + " x " + str(k) + " = " + str(n * k);
}

/// The prefix of every error of `call`: "Gather over team (0 1) to root 2".
std::string describe(const SimCollectiveCall &call) {
  std::string s = simCollectiveName(call.kind);
  if (call.kind == SimCollective::SendRecv) {
    std::string pairs;
    for (const auto &[src, dst] : call.pairs)
      pairs += (pairs.empty() ? "" : ", ") + std::to_string(src) + " -> " + std::to_string(dst);
    return s + " (" + pairs + ")";
  }
  s += " over team " + teamStr(call.team);
  if (call.root) {
    bool sends = call.kind == SimCollective::Scatter || call.kind == SimCollective::Broadcast;
    s += (sends ? " from root " : " to root ") + std::to_string(*call.root);
  }
  return s;
}

/// One call being checked: its buffers and the prefix of its errors.
struct Call {
  const SimCollectiveCall &call;
  const std::map<int64_t, const SimBuffer *> &in;
  const std::map<int64_t, SimBuffer *> &out;
  std::string what;

  [[noreturn]] void fail(const std::string &message) const {
    throw CollectiveError(what + ": " + message);
  }
  const std::vector<int64_t> &team() const { return call.team; }
  size_t n() const { return call.team.size(); }
  int64_t root() const { return *call.root; }

  /// Device `d`'s input; a missing one is an error.
  const SimBuffer &input(int64_t d) const {
    auto it = in.find(d);
    if (it == in.end() || !it->second)
      fail("no input " + call.inputName + " on device " + std::to_string(d));
    return *it->second;
  }
  /// The size of device `d`'s output; a missing one is an error.
  size_t outputSize(int64_t d) const {
    auto it = out.find(d);
    if (it == out.end() || !it->second)
      fail("no output " + call.outputName + " on device " + std::to_string(d));
    return it->second->size();
  }
  /// "input T1 on device 0 has 3".
  std::string inputHas(int64_t d) const {
    return "input " + call.inputName + " on device " + std::to_string(d) + " has " +
           str(input(d).size());
  }
  std::string outputHas(int64_t d) const {
    return "output " + call.outputName + " on device " + std::to_string(d) + " has " +
           str(outputSize(d));
  }

  /// Requires device `d`'s output to hold `want` elements; `why` says where
  /// `want` comes from ("the team needs 2 x 1 = 2").
  void requireOutput(int64_t d, size_t want, const std::string &rule,
                     const std::string &why) const {
    if (outputSize(d) != want)
      fail(rule + ": " + outputHas(d) + ", " + why);
  }

  /// Requires every member's input to have the same count, and returns it.
  size_t equalInputs() const {
    size_t k = input(team()[0]).size();
    for (int64_t d : team())
      if (input(d).size() != k)
        fail(std::string(kSameCount) + ": " + inputHas(d) + ", device " +
             std::to_string(team()[0]) + " has " + str(k));
    return k;
  }
  /// Requires every member's output to have the same count, and returns it.
  size_t equalOutputs(const std::string &rule) const {
    size_t k = outputSize(team()[0]);
    for (int64_t d : team())
      if (outputSize(d) != k)
        fail(rule + ": " + outputHas(d) + ", device " + std::to_string(team()[0]) + " has " +
             str(k));
    return k;
  }
};

/// The team must be non-empty and duplicate-free, and rooted kinds need a root.
void checkTeam(const Call &c) {
  if (c.team().empty())
    c.fail("the team is empty");
  std::set<int64_t> seen;
  for (int64_t d : c.team())
    if (!seen.insert(d).second)
      c.fail("device " + std::to_string(d) + " appears twice in the team");
  SimCollective k = c.call.kind;
  bool rooted = k == SimCollective::Gather || k == SimCollective::Scatter ||
                k == SimCollective::Broadcast || k == SimCollective::Reduce;
  if (rooted && !c.call.root)
    c.fail("a " + std::string(simCollectiveName(k)) + " needs a root");
}

/// op over members i, in rank order, of in_team[i][offset + t], t < k. The
/// fixed order makes results deterministic and independent of the map's.
SimBuffer reduceMembers(const Call &c, size_t offset, size_t k) {
  SimBuffer acc(c.input(c.team()[0]).begin() + offset, c.input(c.team()[0]).begin() + offset + k);
  for (size_t i = 1; i < c.n(); ++i) {
    const SimBuffer &src = c.input(c.team()[i]);
    for (size_t t = 0; t < k; ++t)
      acc[t] = reduceCombine(c.call.op, acc[t], src[offset + t]);
  }
  return acc;
}

/// out[i*k + t] = in_team[i][t] for each receiver (Allgather: members;
/// Gather: the root, who contributes only when a member).
Results gatherTo(const Call &c, const std::vector<int64_t> &receivers) {
  size_t k = c.equalInputs();
  for (int64_t d : receivers)
    c.requireOutput(d, c.n() * k, kSameCount, teamNeeds(c.n(), k));
  SimBuffer all;
  all.reserve(c.n() * k);
  for (int64_t member : c.team())
    all.insert(all.end(), c.input(member).begin(), c.input(member).end());
  Results r;
  for (int64_t d : receivers)
    r[d] = all;
  return r;
}

/// out_d[t] = in_root[r(d)*k + t]; the root sends whether or not it is a
/// member.
Results scatter(const Call &c) {
  const std::string rule = "the root's buffer must hold one equal chunk per member";
  size_t k = c.equalOutputs(rule);
  const SimBuffer &src = c.input(c.root());
  if (src.size() != c.n() * k)
    c.fail(rule + ": input " + c.call.inputName + " on root " + std::to_string(c.root()) + " has " +
           str(src.size()) + ", " + teamNeeds(c.n(), k));
  Results r;
  for (size_t rank = 0; rank < c.n(); ++rank)
    r[c.team()[rank]] = SimBuffer(src.begin() + rank * k, src.begin() + (rank + 1) * k);
  return r;
}

/// out_d[t] = in_root[t] for every member d.
Results broadcast(const Call &c) {
  const SimBuffer &src = c.input(c.root());
  for (int64_t d : c.team())
    c.requireOutput(d, src.size(), "every output must have the root's number of elements",
                    "input " + c.call.inputName + " on root " + std::to_string(c.root()) + " has " +
                        str(src.size()));
  Results r;
  for (int64_t d : c.team())
    r[d] = src;
  return r;
}

/// out_d[i*k + t] = in_team[i][r(d)*k + t].
Results allToAll(const Call &c) {
  size_t total = c.equalInputs();
  for (int64_t d : c.team())
    c.requireOutput(d, total, kSameCount, "the inputs have " + str(total));
  if (total % c.n() != 0)
    c.fail(std::string(kSameCount) + ": the inputs have " + str(total) +
           ", which does not split into " + str(c.n()) + " equal chunks");
  size_t k = total / c.n();
  Results r;
  for (size_t dr = 0; dr < c.n(); ++dr) {
    SimBuffer &o = r[c.team()[dr]];
    o.reserve(total);
    for (int64_t src : c.team()) {
      const SimBuffer &from = c.input(src);
      o.insert(o.end(), from.begin() + dr * k, from.begin() + (dr + 1) * k);
    }
  }
  return r;
}

/// out_d[t] = op over i of in_team[i][t] for each receiver (Allreduce:
/// members; Reduce: the root, who contributes only when a member).
Results reduceTo(const Call &c, const std::vector<int64_t> &receivers) {
  size_t k = c.equalInputs();
  for (int64_t d : receivers)
    c.requireOutput(d, k, kSameCount, "the inputs have " + str(k));
  SimBuffer reduced = reduceMembers(c, 0, k);
  Results r;
  for (int64_t d : receivers)
    r[d] = reduced;
  return r;
}

/// out_d[t] = op over i of in_team[i][r(d)*k + t].
Results reduceScatter(const Call &c) {
  size_t total = c.equalInputs();
  if (total % c.n() != 0)
    c.fail(std::string(kSameCount) + ": the inputs have " + str(total) +
           ", which does not split into " + str(c.n()) + " equal chunks");
  size_t k = total / c.n();
  for (int64_t d : c.team())
    c.requireOutput(d, k, kSameCount,
                    "the team needs " + str(total) + " / " + str(c.n()) + " = " + str(k));
  Results r;
  for (size_t rank = 0; rank < c.n(); ++rank)
    r[c.team()[rank]] = reduceMembers(c, rank * k, k);
  return r;
}

/// out_dst[t] = in_src[t] for each pair; a destination receives once.
Results sendRecv(const Call &c) {
  Results r;
  for (const auto &[src, dst] : c.call.pairs) {
    if (r.count(dst))
      c.fail("device " + std::to_string(dst) + " receives twice");
    const SimBuffer &from = c.input(src);
    c.requireOutput(dst, from.size(), "the receiver's buffer must have the sender's size",
                    c.inputHas(src));
    r[dst] = from;
  }
  return r;
}

Results compute(const Call &c) {
  if (c.call.kind == SimCollective::SendRecv)
    return sendRecv(c);
  checkTeam(c);
  switch (c.call.kind) {
  case SimCollective::Allgather:
    return gatherTo(c, c.team());
  case SimCollective::Gather:
    return gatherTo(c, {c.root()});
  case SimCollective::Scatter:
    return scatter(c);
  case SimCollective::Broadcast:
    return broadcast(c);
  case SimCollective::AllToAll:
    return allToAll(c);
  case SimCollective::Allreduce:
    return reduceTo(c, c.team());
  case SimCollective::Reduce:
    return reduceTo(c, {c.root()});
  case SimCollective::ReduceScatter:
    return reduceScatter(c);
  case SimCollective::SendRecv:
    break;
  }
  return {};
}

/// The second phase: every check passed and every result is computed. Sizes
/// were checked equal, so assignment keeps each buffer's size.
void writeResults(Results &results, const std::map<int64_t, SimBuffer *> &out) {
  for (auto &[d, values] : results)
    *out.at(d) = std::move(values);
}

} // namespace

namespace {

/// The count rules of runSimCollective on sizes alone (the same messages).
class CountCheck {
public:
  CountCheck(const SimCollectiveCall &call, const std::map<int64_t, int64_t> &in,
             const std::map<int64_t, int64_t> &out)
      : call_(call), in_(in), out_(out), what_(describe(call)) {}

  void run() const;

private:
  [[noreturn]] void fail(const std::string &message) const {
    throw CollectiveError(what_ + ": " + message);
  }
  size_t in(int64_t d) const {
    auto it = in_.find(d);
    if (it == in_.end())
      fail("no input " + call_.inputName + " on device " + std::to_string(d));
    return static_cast<size_t>(it->second);
  }
  size_t out(int64_t d) const {
    auto it = out_.find(d);
    if (it == out_.end())
      fail("no output " + call_.outputName + " on device " + std::to_string(d));
    return static_cast<size_t>(it->second);
  }
  std::string inputHas(int64_t d) const {
    return "input " + call_.inputName + " on device " + std::to_string(d) + " has " + str(in(d));
  }
  std::string outputHas(int64_t d) const {
    return "output " + call_.outputName + " on device " + std::to_string(d) + " has " +
           str(out(d));
  }
  void requireOutput(int64_t d, size_t want, const std::string &rule,
                     const std::string &why) const {
    if (out(d) != want)
      fail(rule + ": " + outputHas(d) + ", " + why);
  }
  size_t equalInputs() const {
    size_t k = in(call_.team[0]);
    for (int64_t d : call_.team)
      if (in(d) != k)
        fail(std::string(kSameCount) + ": " + inputHas(d) + ", device " +
             std::to_string(call_.team[0]) + " has " + str(k));
    return k;
  }
  size_t equalOutputs(const std::string &rule) const {
    size_t k = out(call_.team[0]);
    for (int64_t d : call_.team)
      if (out(d) != k)
        fail(rule + ": " + outputHas(d) + ", device " + std::to_string(call_.team[0]) + " has " +
             str(k));
    return k;
  }
  void checkTeamShape() const {
    if (call_.team.empty())
      fail("the team is empty");
    std::set<int64_t> seen;
    for (int64_t d : call_.team)
      if (!seen.insert(d).second)
        fail("device " + std::to_string(d) + " appears twice in the team");
    SimCollective k = call_.kind;
    bool rooted = k == SimCollective::Gather || k == SimCollective::Scatter ||
                  k == SimCollective::Broadcast || k == SimCollective::Reduce;
    if (rooted && !call_.root)
      fail("a " + std::string(simCollectiveName(k)) + " needs a root");
  }

  const SimCollectiveCall &call_;
  const std::map<int64_t, int64_t> &in_, &out_;
  std::string what_;
};

void CountCheck::run() const {
  size_t n = call_.team.size();
  if (call_.kind == SimCollective::SendRecv) {
    std::set<int64_t> receivers;
    for (const auto &[src, dst] : call_.pairs) {
      if (!receivers.insert(dst).second)
        fail("device " + std::to_string(dst) + " receives twice");
      requireOutput(dst, in(src), "the receiver's buffer must have the sender's size",
                    inputHas(src));
    }
    return;
  }
  checkTeamShape();
  switch (call_.kind) {
  case SimCollective::Allgather:
  case SimCollective::Gather: {
    size_t k = equalInputs();
    if (call_.kind == SimCollective::Allgather)
      for (int64_t d : call_.team)
        requireOutput(d, n * k, kSameCount, teamNeeds(n, k));
    else
      requireOutput(*call_.root, n * k, kSameCount, teamNeeds(n, k));
    return;
  }
  case SimCollective::Scatter: {
    const std::string rule = "the root's buffer must hold one equal chunk per member";
    size_t k = equalOutputs(rule);
    if (in(*call_.root) != n * k)
      fail(rule + ": input " + call_.inputName + " on root " + std::to_string(*call_.root) +
           " has " + str(in(*call_.root)) + ", " + teamNeeds(n, k));
    return;
  }
  case SimCollective::Broadcast:
    for (int64_t d : call_.team)
      requireOutput(d, in(*call_.root), "every output must have the root's number of elements",
                    "input " + call_.inputName + " on root " + std::to_string(*call_.root) +
                        " has " + str(in(*call_.root)));
    return;
  case SimCollective::AllToAll: {
    size_t total = equalInputs();
    for (int64_t d : call_.team)
      requireOutput(d, total, kSameCount, "the inputs have " + str(total));
    if (total % n != 0)
      fail(std::string(kSameCount) + ": the inputs have " + str(total) +
           ", which does not split into " + str(n) + " equal chunks");
    return;
  }
  case SimCollective::Allreduce:
  case SimCollective::Reduce: {
    size_t k = equalInputs();
    if (call_.kind == SimCollective::Allreduce)
      for (int64_t d : call_.team)
        requireOutput(d, k, kSameCount, "the inputs have " + str(k));
    else
      requireOutput(*call_.root, k, kSameCount, "the inputs have " + str(k));
    return;
  }
  case SimCollective::ReduceScatter: {
    size_t total = equalInputs();
    if (total % n != 0)
      fail(std::string(kSameCount) + ": the inputs have " + str(total) +
           ", which does not split into " + str(n) + " equal chunks");
    for (int64_t d : call_.team)
      requireOutput(d, total / n, kSameCount,
                    "the team needs " + str(total) + " / " + str(n) + " = " + str(total / n));
    return;
  }
  case SimCollective::SendRecv:
    return;
  }
}

} // namespace

void checkCollectiveCounts(const SimCollectiveCall &call, const std::map<int64_t, int64_t> &in,
                           const std::map<int64_t, int64_t> &out) {
  CountCheck(call, in, out).run();
}

void runSimCollective(const SimCollectiveCall &call, const std::map<int64_t, const SimBuffer *> &in,
                      const std::map<int64_t, SimBuffer *> &out) {
  Call c{call, in, out, describe(call)};
  Results results = compute(c);
  writeResults(results, out);
}

void runSimAllToAllv(const std::vector<int64_t> &team,
                     const std::vector<std::vector<int64_t>> &counts,
                     const std::map<int64_t, const SimBuffer *> &in,
                     const std::map<int64_t, SimBuffer *> &out, const std::string &inputName,
                     const std::string &outputName) {
  SimCollectiveCall call;
  call.kind = SimCollective::AllToAll;
  call.team = team;
  call.inputName = inputName;
  call.outputName = outputName;
  Call c{call, in, out, "AllToAllv over team " + teamStr(team)};
  checkTeam(c);
  size_t n = team.size();
  if (counts.size() != n)
    c.fail("the counts must be " + str(n) + " x " + str(n) + ", they have " + str(counts.size()) +
           " rows");
  for (size_t s = 0; s < n; ++s) {
    if (counts[s].size() != n)
      c.fail("the counts must be " + str(n) + " x " + str(n) + ", row " + str(s) + " has " +
             str(counts[s].size()) + " entries");
    for (int64_t v : counts[s])
      if (v < 0)
        c.fail("the counts must not be negative, row " + str(s) + " has " + std::to_string(v));
  }
  // offsets[s][d]: where s's chunk for d starts in in_s.
  std::vector<std::vector<size_t>> offsets(n, std::vector<size_t>(n + 1, 0));
  for (size_t s = 0; s < n; ++s) {
    for (size_t d = 0; d < n; ++d)
      offsets[s][d + 1] = offsets[s][d] + static_cast<size_t>(counts[s][d]);
    if (c.input(team[s]).size() != offsets[s][n])
      c.fail("each input must hold the chunks it sends: " + c.inputHas(team[s]) +
             ", the counts send " + str(offsets[s][n]));
  }
  for (size_t d = 0; d < n; ++d) {
    size_t want = 0;
    for (size_t s = 0; s < n; ++s)
      want += static_cast<size_t>(counts[s][d]);
    c.requireOutput(team[d], want, "each output must hold the chunks it receives",
                    "the counts deliver " + str(want));
  }
  Results results;
  for (size_t d = 0; d < n; ++d) {
    SimBuffer &o = results[team[d]];
    for (size_t s = 0; s < n; ++s) {
      const SimBuffer &from = c.input(team[s]);
      o.insert(o.end(), from.begin() + offsets[s][d], from.begin() + offsets[s][d + 1]);
    }
  }
  writeResults(results, out);
}

} // namespace shardcheck
