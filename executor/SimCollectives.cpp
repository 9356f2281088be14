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
  std::string s = collectiveTypeName(call.kind);
  if (call.kind == CollectiveType::SendRecv) {
    std::string pairs;
    for (const auto &[src, dst] : call.pairs)
      pairs += (pairs.empty() ? "" : ", ") + std::to_string(src) + " -> " + std::to_string(dst);
    return s + " (" + pairs + ")";
  }
  s += " over team " + teamStr(call.team);
  if (call.root) {
    bool sends = collectiveInfo(call.kind).root == RootRole::Sends;
    s += (sends ? " from root " : " to root ") + std::to_string(*call.root);
  }
  return s;
}

/// The team must be non-empty and duplicate-free, and rooted kinds need a
/// root; errors start with `what`.
void checkTeam(const SimCollectiveCall &call, const std::string &what) {
  auto fail = [&](const std::string &message) { throw CollectiveError(what + ": " + message); };
  if (call.team.empty())
    fail("the team is empty");
  std::set<int64_t> seen;
  for (int64_t d : call.team)
    if (!seen.insert(d).second)
      fail("device " + std::to_string(d) + " appears twice in the team");
  if (isRootedCollective(call.kind) && !call.root)
    fail("a " + std::string(collectiveTypeName(call.kind)) + " needs a root");
}

/// The count rules of a collective on buffer sizes alone: the one check
/// runSimCollective and every backend's count check run.
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
    return "output " + call_.outputName + " on device " + std::to_string(d) + " has " + str(out(d));
  }
  /// Requires device `d`'s output to hold `want` elements; `why` says where
  /// `want` comes from ("the team needs 2 x 1 = 2").
  void requireOutput(int64_t d, size_t want, const std::string &rule,
                     const std::string &why) const {
    if (out(d) != want)
      fail(rule + ": " + outputHas(d) + ", " + why);
  }
  /// Requires every member's input to have the same count, and returns it.
  size_t equalInputs() const {
    size_t k = in(call_.team[0]);
    for (int64_t d : call_.team)
      if (in(d) != k)
        fail(std::string(kSameCount) + ": " + inputHas(d) + ", device " +
             std::to_string(call_.team[0]) + " has " + str(k));
    return k;
  }
  /// Requires every member's output to have the same count, and returns it.
  size_t equalOutputs(const std::string &rule) const {
    size_t k = out(call_.team[0]);
    for (int64_t d : call_.team)
      if (out(d) != k)
        fail(rule + ": " + outputHas(d) + ", device " + std::to_string(call_.team[0]) + " has " +
             str(k));
    return k;
  }
  /// The members receive (Allgather, Allreduce, ...) or the root alone
  /// (Gather, Reduce: the table's "same, on the root only").
  std::vector<int64_t> receivers() const {
    return isRootedCollective(call_.kind) ? std::vector<int64_t>{*call_.root} : call_.team;
  }
  void sendRecv() const;
  void scatter() const;
  void broadcast() const;
  /// Requires the equal inputs to split into one equal chunk per member.
  size_t splitInputs() const;

  const SimCollectiveCall &call_;
  const std::map<int64_t, int64_t> &in_, &out_;
  std::string what_;
};

void CountCheck::sendRecv() const {
  std::set<int64_t> receivers;
  for (const auto &[src, dst] : call_.pairs) {
    if (!receivers.insert(dst).second)
      fail("device " + std::to_string(dst) + " receives twice");
    requireOutput(dst, in(src), "the receiver's buffer must have the sender's size", inputHas(src));
  }
}

void CountCheck::scatter() const {
  const std::string rule = "the root's buffer must hold one equal chunk per member";
  size_t n = call_.team.size(), k = equalOutputs(rule);
  if (in(*call_.root) != n * k)
    fail(rule + ": input " + call_.inputName + " on root " + std::to_string(*call_.root) + " has " +
         str(in(*call_.root)) + ", " + teamNeeds(n, k));
}

void CountCheck::broadcast() const {
  for (int64_t d : call_.team)
    requireOutput(d, in(*call_.root), "every output must have the root's number of elements",
                  "input " + call_.inputName + " on root " + std::to_string(*call_.root) + " has " +
                      str(in(*call_.root)));
}

size_t CountCheck::splitInputs() const {
  size_t total = equalInputs(), n = call_.team.size();
  if (total % n != 0)
    fail(std::string(kSameCount) + ": the inputs have " + str(total) +
         ", which does not split into " + str(n) + " equal chunks");
  return total;
}

void CountCheck::run() const {
  if (call_.kind == CollectiveType::SendRecv)
    return sendRecv();
  checkTeam(call_, what_);
  size_t n = call_.team.size();
  switch (call_.kind) {
  case CollectiveType::Allgather:
  case CollectiveType::Gather: {
    size_t k = equalInputs();
    for (int64_t d : receivers())
      requireOutput(d, n * k, kSameCount, teamNeeds(n, k));
    return;
  }
  case CollectiveType::Scatter:
    return scatter();
  case CollectiveType::Broadcast:
    return broadcast();
  case CollectiveType::AllToAll: {
    size_t total = equalInputs();
    for (int64_t d : call_.team)
      requireOutput(d, total, kSameCount, "the inputs have " + str(total));
    splitInputs();
    return;
  }
  case CollectiveType::Allreduce:
  case CollectiveType::Reduce: {
    size_t k = equalInputs();
    for (int64_t d : receivers())
      requireOutput(d, k, kSameCount, "the inputs have " + str(k));
    return;
  }
  case CollectiveType::ReduceScatter: {
    size_t total = splitInputs();
    for (int64_t d : call_.team)
      requireOutput(d, total / n, kSameCount,
                    "the team needs " + str(total) + " / " + str(n) + " = " + str(total / n));
    return;
  }
  default:
    fail("not a collective of DESIGN section 3's table");
  }
}

/// One call whose counts were checked: its buffers, by device.
struct Call {
  const SimCollectiveCall &call;
  const std::map<int64_t, const SimBuffer *> &in;
  std::string what;

  const std::vector<int64_t> &team() const { return call.team; }
  size_t n() const { return call.team.size(); }
  int64_t root() const { return *call.root; }
  const SimBuffer &input(int64_t d) const { return *in.at(d); }
};

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
  SimBuffer all;
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
  const SimBuffer &src = c.input(c.root());
  size_t k = src.size() / c.n();
  Results r;
  for (size_t rank = 0; rank < c.n(); ++rank)
    r[c.team()[rank]] = SimBuffer(src.begin() + rank * k, src.begin() + (rank + 1) * k);
  return r;
}

/// out_d[t] = in_root[t] for every member d.
Results broadcast(const Call &c) {
  Results r;
  for (int64_t d : c.team())
    r[d] = c.input(c.root());
  return r;
}

/// out_d[i*k + t] = in_team[i][r(d)*k + t].
Results allToAll(const Call &c) {
  size_t total = c.input(c.team()[0]).size(), k = total / c.n();
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
  SimBuffer reduced = reduceMembers(c, 0, c.input(c.team()[0]).size());
  Results r;
  for (int64_t d : receivers)
    r[d] = reduced;
  return r;
}

/// out_d[t] = op over i of in_team[i][r(d)*k + t].
Results reduceScatter(const Call &c) {
  size_t k = c.input(c.team()[0]).size() / c.n();
  Results r;
  for (size_t rank = 0; rank < c.n(); ++rank)
    r[c.team()[rank]] = reduceMembers(c, rank * k, k);
  return r;
}

/// out_dst[t] = in_src[t] for each pair.
Results sendRecv(const Call &c) {
  Results r;
  for (const auto &[src, dst] : c.call.pairs)
    r[dst] = c.input(src);
  return r;
}

Results compute(const Call &c) {
  switch (c.call.kind) {
  case CollectiveType::Allgather:
    return gatherTo(c, c.team());
  case CollectiveType::Gather:
    return gatherTo(c, {c.root()});
  case CollectiveType::Scatter:
    return scatter(c);
  case CollectiveType::Broadcast:
    return broadcast(c);
  case CollectiveType::AllToAll:
    return allToAll(c);
  case CollectiveType::Allreduce:
    return reduceTo(c, c.team());
  case CollectiveType::Reduce:
    return reduceTo(c, {c.root()});
  case CollectiveType::ReduceScatter:
    return reduceScatter(c);
  case CollectiveType::SendRecv:
    return sendRecv(c);
  default:
    return {};
  }
}

/// The second phase: every check passed and every result is computed. Sizes
/// were checked equal, so assignment keeps each buffer's size.
void writeResults(Results &results, const std::map<int64_t, SimBuffer *> &out) {
  for (auto &[d, values] : results)
    *out.at(d) = std::move(values);
}

/// Device -> element count of the buffers present (a null entry is none).
template <class Buffer> std::map<int64_t, int64_t> sizesOf(const std::map<int64_t, Buffer *> &m) {
  std::map<int64_t, int64_t> sizes;
  for (const auto &[d, buffer] : m)
    if (buffer)
      sizes[d] = static_cast<int64_t>(buffer->size());
  return sizes;
}

} // namespace

void checkCollectiveCounts(const SimCollectiveCall &call, const std::map<int64_t, int64_t> &in,
                           const std::map<int64_t, int64_t> &out) {
  CountCheck(call, in, out).run();
}

int64_t perRankChunk(const SimCollectiveCall &call, const std::map<int64_t, int64_t> &in) {
  if (call.kind == CollectiveType::SendRecv || call.team.empty())
    return 0;
  bool rootSends = collectiveInfo(call.kind).root == RootRole::Sends;
  int64_t sender = rootSends ? *call.root : call.team[0];
  int64_t n = static_cast<int64_t>(call.team.size());
  return shardcheck::perRankChunk(call.kind, in.at(sender), n).value_or(0);
}

void runSimCollective(const SimCollectiveCall &call, const std::map<int64_t, const SimBuffer *> &in,
                      const std::map<int64_t, SimBuffer *> &out) {
  checkCollectiveCounts(call, sizesOf(in), sizesOf(out));
  Results results = compute(Call{call, in, describe(call)});
  writeResults(results, out);
}

namespace {

/// AllToAllv's count rules: an n x n matrix of non-negative counts whose
/// rows the inputs hold and whose columns the outputs receive. Returns
/// offsets[s][d], where s's chunk for d starts in in_s.
std::vector<std::vector<size_t>> allToAllvOffsets(const SimCollectiveCall &call,
                                                  const std::vector<std::vector<int64_t>> &counts,
                                                  const std::map<int64_t, int64_t> &in,
                                                  const std::map<int64_t, int64_t> &out) {
  const std::string what = describe(call);
  auto fail = [&](const std::string &message) { throw CollectiveError(what + ": " + message); };
  checkTeam(call, what);
  const std::vector<int64_t> &team = call.team;
  size_t n = team.size();
  if (counts.size() != n)
    fail("the counts must be " + str(n) + " x " + str(n) + ", they have " + str(counts.size()) +
         " rows");
  for (size_t s = 0; s < n; ++s) {
    if (counts[s].size() != n)
      fail("the counts must be " + str(n) + " x " + str(n) + ", row " + str(s) + " has " +
           str(counts[s].size()) + " entries");
    for (int64_t v : counts[s])
      if (v < 0)
        fail("the counts must not be negative, row " + str(s) + " has " + std::to_string(v));
  }
  auto sizeOf = [&](const std::map<int64_t, int64_t> &m, int64_t d, const std::string &kind,
                    const std::string &name) {
    auto it = m.find(d);
    if (it == m.end())
      fail("no " + kind + " " + name + " on device " + std::to_string(d));
    return static_cast<size_t>(it->second);
  };
  std::vector<std::vector<size_t>> offsets(n, std::vector<size_t>(n + 1, 0));
  for (size_t s = 0; s < n; ++s) {
    for (size_t d = 0; d < n; ++d)
      offsets[s][d + 1] = offsets[s][d] + static_cast<size_t>(counts[s][d]);
    size_t has = sizeOf(in, team[s], "input", call.inputName);
    if (has != offsets[s][n])
      fail("each input must hold the chunks it sends: input " + call.inputName + " on device " +
           std::to_string(team[s]) + " has " + str(has) + ", the counts send " +
           str(offsets[s][n]));
  }
  for (size_t d = 0; d < n; ++d) {
    size_t want = 0;
    for (size_t s = 0; s < n; ++s)
      want += static_cast<size_t>(counts[s][d]);
    size_t has = sizeOf(out, team[d], "output", call.outputName);
    if (has != want)
      fail("each output must hold the chunks it receives: output " + call.outputName +
           " on device " + std::to_string(team[d]) + " has " + str(has) + ", the counts deliver " +
           str(want));
  }
  return offsets;
}

} // namespace

void runSimAllToAllv(const std::vector<int64_t> &team,
                     const std::vector<std::vector<int64_t>> &counts,
                     const std::map<int64_t, const SimBuffer *> &in,
                     const std::map<int64_t, SimBuffer *> &out, const std::string &inputName,
                     const std::string &outputName) {
  SimCollectiveCall call;
  call.kind = CollectiveType::AllToAllv;
  call.team = team;
  call.inputName = inputName;
  call.outputName = outputName;
  std::vector<std::vector<size_t>> offsets =
      allToAllvOffsets(call, counts, sizesOf(in), sizesOf(out));
  Results results;
  for (size_t d = 0; d < team.size(); ++d) {
    SimBuffer &o = results[team[d]];
    for (size_t s = 0; s < team.size(); ++s) {
      const SimBuffer &from = *in.at(team[s]);
      o.insert(o.end(), from.begin() + offsets[s][d], from.begin() + offsets[s][d + 1]);
    }
  }
  writeResults(results, out);
}

} // namespace shardcheck
