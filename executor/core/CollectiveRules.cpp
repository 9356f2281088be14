// The collective rules; see CollectiveRules.h.
//
// Structure: CountCheck holds one call's count rules, one method per row of
// the table that needs more than a line; AllToAllv's per-pair rules are
// allToAllvOffsets. Error messages start with describeCollective(call).
#include "executor/core/CollectiveRules.h"

#include <algorithm>
#include <set>

namespace shardcheck {

CollectiveRole collectiveRole(CollectiveType kind, bool member, bool root) {
  switch (collectiveInfo(kind).root) {
  case RootRole::Sends:
    return {root, member};
  case RootRole::Receives:
    return {member, root};
  case RootRole::None:
    break;
  }
  return {member, member};
}

std::vector<int64_t> teamParticipants(const PlanTeam &team) {
  std::set<int64_t> devices(team.devices.begin(), team.devices.end());
  if (team.root)
    devices.insert(*team.root);
  for (const auto &[src, dst] : team.pairs)
    devices.insert({src, dst});
  return {devices.begin(), devices.end()};
}

std::vector<int64_t> communicatorOrder(const CollectiveCall &call) {
  std::vector<int64_t> members = call.team;
  if (call.root && std::find(members.begin(), members.end(), *call.root) == members.end())
    members.push_back(*call.root);
  return members;
}

std::string teamText(const std::vector<int64_t> &team) {
  std::string s = "(";
  for (size_t i = 0; i < team.size(); ++i)
    s += (i ? " " : "") + std::to_string(team[i]);
  return s + ")";
}

namespace {

/// nvFuser's words for a count mismatch of the equal-size collectives, kept
/// so that a user who saw nvFuser fail recognizes the same failure here.
constexpr const char *kSameCount = "all buffers must have the same number of elements";

std::string str(size_t n) {
  return std::to_string(n);
}

/// "the team needs 2 x 3 = 6".
std::string teamNeeds(size_t n, size_t k) {
  return "the team needs " + str(n) + " x " + str(k) + " = " + str(n * k);
}

} // namespace

std::string describeCollective(const CollectiveCall &call) {
  std::string s = collectiveTypeName(call.kind);
  if (movesByPairs(call.kind)) { // A ring names its team, then this iteration's pairs.
    std::string pairs;
    for (const auto &[src, dst] : call.pairs)
      pairs += (pairs.empty() ? "" : ", ") + std::to_string(src) + " -> " + std::to_string(dst);
    return s + (call.team.empty() ? "" : " over team " + teamText(call.team)) + " (" + pairs + ")";
  }
  s += " over team " + teamText(call.team);
  if (call.root) {
    bool sends = collectiveInfo(call.kind).root == RootRole::Sends;
    s += (sends ? " from root " : " to root ") + std::to_string(*call.root);
  }
  return s;
}

namespace {

/// The team must be non-empty and duplicate-free, and rooted kinds need a
/// root; errors start with `what`.
void checkTeam(const CollectiveCall &call, const std::string &what) {
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
/// every backend runs.
class CountCheck {
public:
  CountCheck(const CollectiveCall &call, const std::map<int64_t, int64_t> &in,
             const std::map<int64_t, int64_t> &out)
      : call_(call), in_(in), out_(out), what_(describeCollective(call)) {}

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

  const CollectiveCall &call_;
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
  if (movesByPairs(call_.kind))
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

} // namespace

void checkCollectiveCounts(const CollectiveCall &call, const std::map<int64_t, int64_t> &in,
                           const std::map<int64_t, int64_t> &out) {
  if (call.kind == CollectiveType::AllToAllv)
    allToAllvOffsets(call, in, out);
  else
    CountCheck(call, in, out).run();
}

int64_t perRankChunk(const CollectiveCall &call, const std::map<int64_t, int64_t> &in) {
  if (movesByPairs(call.kind) || collectiveInfo(call.kind).in == ChunkMultiple::Varies ||
      call.team.empty())
    return 0;
  bool rootSends = collectiveInfo(call.kind).root == RootRole::Sends;
  int64_t sender = rootSends ? *call.root : call.team[0];
  int64_t n = static_cast<int64_t>(call.team.size());
  return shardcheck::perRankChunk(call.kind, in.at(sender), n).value_or(0);
}

std::vector<std::vector<size_t>> allToAllvOffsets(const CollectiveCall &call,
                                                  const std::map<int64_t, int64_t> &in,
                                                  const std::map<int64_t, int64_t> &out) {
  const std::vector<std::vector<int64_t>> &counts = call.counts;
  const std::string what = describeCollective(call);
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

std::map<int64_t, int64_t> collectiveBytesReceived(const CollectiveCall &call,
                                                   const std::map<int64_t, int64_t> &in,
                                                   const std::map<int64_t, int64_t> &out,
                                                   int elementSize) {
  auto size = [](const std::map<int64_t, int64_t> &m, int64_t d) -> int64_t {
    auto it = m.find(d);
    return it == m.end() ? 0 : it->second;
  };
  int64_t n = static_cast<int64_t>(call.team.size());
  auto isMember = [&](int64_t d) { return std::count(call.team.begin(), call.team.end(), d) > 0; };
  std::map<int64_t, int64_t> values; // Per receiving device.
  auto receives = [&](int64_t device, int64_t count) {
    if (count > 0)
      values[device] += count;
  };
  switch (call.kind) {
  case CollectiveType::Allgather: // Every member receives the others' chunks.
    for (int64_t d : call.team)
      receives(d, size(out, d) - size(in, d));
    break;
  case CollectiveType::AllToAll: // Every member keeps its own chunk.
    for (int64_t d : call.team)
      receives(d, n > 0 ? size(out, d) * (n - 1) / n : 0);
    break;
  case CollectiveType::Allreduce:     // Every member receives n-1 partials ...
  case CollectiveType::ReduceScatter: // ... of its own output chunk.
    for (int64_t d : call.team)
      receives(d, size(out, d) * (n - 1));
    break;
  case CollectiveType::Gather:
  case CollectiveType::Reduce: {
    int64_t root = call.root.value_or(-1);
    int64_t others = n - (isMember(root) ? 1 : 0);
    // The root's output: n chunks (Gather) or one (Reduce).
    bool teamChunks = collectiveInfo(call.kind).out == ChunkMultiple::Team;
    int64_t chunk = teamChunks ? size(out, root) / std::max<int64_t>(n, 1) : size(out, root);
    receives(root, chunk * others);
    break;
  }
  case CollectiveType::Scatter:
  case CollectiveType::Broadcast:
    for (int64_t d : call.team)
      if (!call.root || d != *call.root)
        receives(d, size(out, d));
    break;
  case CollectiveType::SendRecv:
  case CollectiveType::CollectivePermute: // This iteration's pairs.
    for (const auto &[src, dst] : call.pairs)
      if (src != dst)
        receives(dst, size(in, src));
    break;
  case CollectiveType::AllToAllv: // Every member keeps its own chunk.
    for (size_t s = 0; s < call.counts.size(); ++s)
      for (size_t j = 0; j < call.counts[s].size() && j < call.team.size(); ++j)
        receives(call.team[j], s == j ? 0 : call.counts[s][j]);
    break;
  }
  for (auto &[device, count] : values)
    count *= elementSize;
  return values;
}

} // namespace shardcheck
