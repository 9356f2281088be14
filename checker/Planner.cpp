// The multi-step planner; see Planner.h.
#include "checker/Planner.h"

#include "checker/CostModel.h"
#include "checker/PlanChain.h"
#include "ir/HostLoops.h"

#include <algorithm>
#include <map>
#include <queue>
#include <set>
#include <tuple>

namespace shardcheck {

std::vector<Team> teamsOver(const DeviceMesh &mesh, const std::vector<ParallelType> &dids) {
  std::map<std::vector<int64_t>, std::vector<std::pair<int64_t, int64_t>>> byRest;
  for (int64_t d : mesh.devices()) {
    std::vector<int64_t> rest = mesh.coordinates(d);
    int64_t rank = 0;
    for (ParallelType t : dids) {
      rank = rank * mesh.extentOf(t) + mesh.coordinate(d, t);
      rest[*mesh.axisOf(t)] = 0;
    }
    byRest[rest].emplace_back(rank, d);
  }
  std::vector<Team> teams;
  for (auto &[rest, members] : byRest) {
    std::sort(members.begin(), members.end());
    Team t;
    for (const auto &[rank, d] : members)
      t.devices.push_back(d);
    teams.push_back(std::move(t));
  }
  return teams;
}

double planBytesPerDevice(const std::vector<PlannedStep> &steps) {
  double b = 0;
  for (const auto &s : steps)
    b += s.networkBytes;
  return b;
}

bool reducesMidChain(const std::vector<PlannedStep> &steps) {
  return std::any_of(steps.begin(), steps.end(), [&](const PlannedStep &s) {
    return &s != &steps.back() && s.state.afterReduction();
  });
}

size_t reductionSteps(const std::vector<PlannedStep> &steps) {
  size_t n = 0, reduced = 0;
  for (const PlannedStep &s : steps) {
    size_t now =
        static_cast<size_t>(std::count(s.state.reduced.begin(), s.state.reduced.end(), true));
    n += now > reduced;
    reduced = now;
  }
  return n;
}

std::optional<double> loweringBytesPerDevice(const Fusion &fusion, const FusionEdge &edge,
                                             const Lowering &lowering) {
  const TensorView &c = fusion.tensor(edge.consumer);
  if (!c.mesh || lowering.teams.empty())
    return lowering.kind == CommKind::None || lowering.kind == CommKind::Alias
               ? std::optional<double>(0)
               : std::nullopt;
  auto state = readShardState(fusion, c, *c.mesh);
  if (!state)
    return std::nullopt;
  Sizes sizes = sizesOf(fusion, c);
  double out =
      localElements(sizes, *state, *c.mesh, true) * static_cast<double>(sizes.elementBytes);
  const Team &t = lowering.teams.front();
  int64_t n = t.pairs.empty() ? static_cast<int64_t>(t.devices.size()) : 2;
  // A ReduceScatter's buffer is its input: n outputs.
  double buffer = lowering.kind == CommKind::ReduceScatter ? out * static_cast<double>(n) : out;
  return busFactor(lowering.kind, n) * buffer;
}

namespace {

/// The edge as the search sees it.
struct Problem {
  const Fusion &fusion;
  const FusionEdge &edge;
  DeviceMesh mesh;
  Sizes sizes;
  ShardState source, target;
  std::vector<ParallelType> dids; ///< The mesh's DID types, DIDz first.
  bool reduces = false;
  /// Whether the reduction may be split into steps that each reduce some of
  /// its axes: its operator is associative and commutative (all of
  /// ReduceOp's are) and its initial value the identity, which a split
  /// would otherwise apply once per step.
  bool splittable = false;

  /// Bytes each device holds in `s` (a state after the reduction holds no
  /// reduced axis).
  double bytes(const ShardState &s) const {
    return localElements(sizes, s, mesh, s.afterReduction()) *
           static_cast<double>(sizes.elementBytes);
  }
  int64_t teamSize(const std::vector<ParallelType> &ts) const {
    int64_t n = 1;
    for (ParallelType t : ts)
      n *= mesh.extentOf(t);
    return n;
  }
};

struct Move {
  ShardState to;
  Lowering lowering;
  StepCost cost;
};

Lowering lowered(CommKind k, std::vector<Team> teams) {
  Lowering l;
  l.kind = k;
  l.teams = std::move(teams);
  return l;
}

void addSlices(const Problem &pb, const ShardState &s, std::vector<Move> &out) {
  for (ParallelType t : pb.dids) {
    if (s.axisOf(t))
      continue;
    for (size_t i = 0; i < s.axes.size(); ++i) {
      if (pb.sizes.extents[i] <= 1)
        continue;
      ShardState to = s;
      to.axes[i].push_back(t);
      out.push_back({to, lowered(CommKind::None, {}), localCost(pb.bytes(to))});
    }
  }
}

/// An Allgather's buffer is its output: n members' buffers of `s`, padded
/// ones where `s` is uneven (the padding is sent too; docs/semantics.md,
/// Padded collectives), which is `to`'s size when they divide.
void addAllgathers(const Problem &pb, const ShardState &s, std::vector<Move> &out) {
  for (size_t i = 0; i < s.axes.size(); ++i)
    for (size_t k = 1; k <= s.axes[i].size(); ++k) {
      ShardState to = s;
      std::vector<ParallelType> team(to.axes[i].end() - static_cast<long>(k), to.axes[i].end());
      to.axes[i].resize(to.axes[i].size() - k);
      int64_t n = pb.teamSize(team);
      double gathered = static_cast<double>(n) * pb.bytes(s);
      out.push_back({to, lowered(CommKind::Allgather, teamsOver(pb.mesh, team)),
                     collectiveCost(CommKind::Allgather, n, gathered)});
    }
}

void addAllToAlls(const Problem &pb, const ShardState &s, std::vector<Move> &out) {
  for (size_t i = 0; i < s.axes.size(); ++i) {
    if (s.axes[i].empty())
      continue;
    ParallelType t = s.axes[i].back();
    for (size_t j = 0; j < s.axes.size(); ++j) {
      if (j == i || pb.sizes.extents[j] <= 1)
        continue;
      ShardState to = s;
      to.axes[i].pop_back();
      to.axes[j].push_back(t);
      // Uneven, a device may receive more than it sends: the larger buffer.
      double buffer = std::max(pb.bytes(s), pb.bytes(to));
      out.push_back({to, lowered(CommKind::AllToAll, teamsOver(pb.mesh, {t})),
                     collectiveCost(CommKind::AllToAll, pb.mesh.extentOf(t), buffer)});
    }
  }
}

/// Which block of each axis `device` holds in `s` (mixed radix over the DIDs).
std::vector<int64_t> blockOf(const Problem &pb, const ShardState &s, int64_t device) {
  std::vector<int64_t> b;
  for (const auto &chain : s.axes) {
    int64_t idx = 0;
    for (ParallelType t : chain)
      idx = idx * pb.mesh.extentOf(t) + pb.mesh.coordinate(device, t);
    b.push_back(idx);
  }
  return b;
}

/// SendRecv pairs (holder in `from`, needer in `to`) of a device permutation,
/// or empty when `to` is not one. A device keeps its coordinates along the
/// mesh axes no DID of `from` uses.
std::vector<std::pair<int64_t, int64_t>> permutationPairs(const Problem &pb, const ShardState &from,
                                                          const ShardState &to) {
  std::vector<ParallelType> unused;
  for (ParallelType t : pb.dids)
    if (!from.axisOf(t))
      unused.push_back(t);
  auto keyOf = [&](const ShardState &s, int64_t d) {
    std::vector<int64_t> k = blockOf(pb, s, d);
    for (ParallelType t : unused)
      k.push_back(pb.mesh.coordinate(d, t));
    return k;
  };
  std::map<std::vector<int64_t>, int64_t> holder;
  for (int64_t h : pb.mesh.devices())
    holder.emplace(keyOf(from, h), h);
  std::vector<std::pair<int64_t, int64_t>> pairs;
  for (int64_t d : pb.mesh.devices()) {
    auto it = holder.find(keyOf(to, d));
    if (it == holder.end())
      return {};
    pairs.emplace_back(it->second, d);
  }
  return pairs;
}

void addPermutation(const Problem &pb, const ShardState &s, ShardState to, std::vector<Move> &out) {
  auto pairs = permutationPairs(pb, s, to);
  if (pairs.empty())
    return;
  Team t;
  t.pairs = std::move(pairs);
  out.push_back({std::move(to), lowered(CommKind::SendRecv, {t}),
                 collectiveCost(CommKind::SendRecv, 2, pb.bytes(s))});
}

void addPermutations(const Problem &pb, const ShardState &s, std::vector<Move> &out) {
  for (size_t i = 0; i < s.axes.size(); ++i) {
    std::vector<ParallelType> order = s.axes[i];
    std::sort(order.begin(), order.end());
    do {
      if (order != s.axes[i]) {
        ShardState to = s;
        to.axes[i] = order;
        addPermutation(pb, s, to, out);
      }
    } while (std::next_permutation(order.begin(), order.end()));
  }
  // A DID traded for an unused one of equal size: a device takes the block
  // of the one whose coordinate along the old DID is its own along the new
  // (one SendRecv, where an Allgather and a slice would send n-1 blocks).
  for (size_t i = 0; i < s.axes.size(); ++i)
    for (size_t a = 0; a < s.axes[i].size(); ++a)
      for (ParallelType u : pb.dids)
        if (!s.axisOf(u) && pb.mesh.extentOf(u) == pb.mesh.extentOf(s.axes[i][a])) {
          ShardState to = s;
          to.axes[i][a] = u;
          addPermutation(pb, s, to, out);
        }
  for (size_t i = 0; i < s.axes.size(); ++i)
    for (size_t j = i + 1; j < s.axes.size(); ++j)
      for (size_t a = 0; a < s.axes[i].size(); ++a)
        for (size_t b = 0; b < s.axes[j].size(); ++b) {
          if (pb.mesh.extentOf(s.axes[i][a]) != pb.mesh.extentOf(s.axes[j][b]))
            continue;
          ShardState to = s;
          std::swap(to.axes[i][a], to.axes[j][b]);
          addPermutation(pb, s, to, out);
        }
}

/// The consumer's reduced axes not reduced in `s`.
std::vector<size_t> axesLeft(const Problem &pb, const ShardState &s) {
  std::vector<size_t> left;
  for (size_t i = 0; i < s.axes.size(); ++i)
    if (pb.target.reduced[i] && !s.reduced[i])
      left.push_back(i);
  return left;
}

/// The parts of `left` one reduction step may reduce: `left` whole, and,
/// when the reduction may be split, with the axes of `left` that carry DIDs
/// in `s` (at most one per DID type, so at most 3), each nonempty subset of
/// those together with all that carry none (a local reduction is best done
/// early, while the buffer is large): at most 7 parts.
std::vector<std::vector<size_t>> reducibleParts(const Problem &pb, const ShardState &s,
                                                const std::vector<size_t> &left) {
  std::vector<size_t> sharded, local;
  for (size_t i : left)
    (s.axes[i].empty() ? local : sharded).push_back(i);
  if (!pb.splittable || sharded.size() < 2)
    return {left};
  std::vector<std::vector<size_t>> parts;
  for (uint32_t mask = 1; mask < (1u << sharded.size()); ++mask) {
    std::vector<size_t> part = local;
    for (size_t k = 0; k < sharded.size(); ++k)
      if (mask >> k & 1)
        part.push_back(sharded[k]);
    std::sort(part.begin(), part.end());
    parts.push_back(std::move(part));
  }
  return parts;
}

/// The reduction of `axes` (some of the consumer's reduced axes) from `s`:
/// local when they carry no DID, else an Allreduce over their DIDs (one
/// flattened team), or a ReduceScatter of those DIDs onto any axis the
/// consumer keeps, appended innermost in any order. The state after it has
/// no DID on those axes; the other reduced axes stay partial.
void addReduction(const Problem &pb, const ShardState &s, const std::vector<size_t> &axes,
                  std::vector<Move> &out) {
  ShardState after = s, reducing = s;
  std::fill(reducing.reduced.begin(), reducing.reduced.end(), false);
  for (size_t i : axes) {
    after.reduced[i] = reducing.reduced[i] = true;
    after.axes[i].clear();
  }
  std::vector<ParallelType> r = reducing.reducedDids();
  if (r.empty()) {
    out.push_back({after, lowered(CommKind::None, {}), localCost(pb.bytes(s))});
    return;
  }
  // The Allreduce's buffer is the reduced (unscattered) local tensor.
  double buffer = pb.bytes(after);
  int64_t n = pb.teamSize(r);
  out.push_back({after, lowered(CommKind::Allreduce, teamsOver(pb.mesh, r)),
                 collectiveCost(CommKind::Allreduce, n, buffer)});
  std::vector<ParallelType> added = r;
  std::sort(added.begin(), added.end());
  do {
    for (size_t j = 0; j < after.axes.size(); ++j) {
      if (pb.target.reduced[j] || pb.sizes.extents[j] <= 1)
        continue;
      ShardState to = after;
      to.axes[j].insert(to.axes[j].end(), added.begin(), added.end());
      // Its buffer is the partial input: n chunks of the output's (padded) buffer.
      double partials = static_cast<double>(n) * pb.bytes(to);
      out.push_back({to, lowered(CommKind::ReduceScatter, teamsOver(pb.mesh, added)),
                     collectiveCost(CommKind::ReduceScatter, n, partials)});
    }
  } while (std::next_permutation(added.begin(), added.end()));
}

/// The reductions from `s`, anywhere in the chain: of the consumer's
/// reduced axes left, all at once or, when the reduction may be split,
/// any nonempty part of them (the rest reduced by later steps).
void addReductions(const Problem &pb, const ShardState &s, std::vector<Move> &out) {
  std::vector<size_t> left = axesLeft(pb, s);
  if (left.empty())
    return;
  for (const auto &part : reducibleParts(pb, s, left))
    addReduction(pb, s, part, out);
}

/// Whether `s` puts a DID on an axis the reduction has removed.
bool shardsReducedAxis(const ShardState &s) {
  for (size_t i = 0; i < s.axes.size(); ++i)
    if (s.reduced[i] && !s.axes[i].empty())
      return true;
  return false;
}

std::vector<Move> movesFrom(const Problem &pb, const ShardState &s) {
  std::vector<Move> out;
  addSlices(pb, s, out);
  addAllgathers(pb, s, out);
  addAllToAlls(pb, s, out);
  addPermutations(pb, s, out);
  // After the reduction the copy moves stay off the reduced axes (gone).
  out.erase(
      std::remove_if(out.begin(), out.end(), [](const Move &m) { return shardsReducedAxis(m.to); }),
      out.end());
  if (pb.reduces)
    addReductions(pb, s, out);
  return out;
}

std::string moveKey(const ShardState &from, const Move &m) {
  return from.key() + " -> " + m.to.key() + " " + m.lowering.str();
}

/// The cheapest path from the source to the consumer avoiding `banned`, or
/// empty.
std::vector<Move> cheapestPath(const Problem &pb, const std::set<std::string> &banned) {
  struct Node {
    ShardState state;
    StepCost cost;
    size_t depth = 0;
    std::string parent;
    Move via;
  };
  struct Entry {
    StepCost cost;
    size_t depth = 0;
    std::string key;
  };
  // The queue's top is the cheapest entry; equal costs by depth, then key,
  // so that the search is deterministic.
  auto later = [](const Entry &a, const Entry &b) {
    if (a.cost < b.cost || b.cost < a.cost)
      return b.cost < a.cost;
    return std::tie(a.depth, a.key) > std::tie(b.depth, b.key);
  };
  const std::string goal = pb.target.key();
  std::map<std::string, Node> best;
  std::priority_queue<Entry, std::vector<Entry>, decltype(later)> queue(later);
  best[pb.source.key()] = Node{pb.source, {}, 0, "", {}};
  queue.push({{}, 0, pb.source.key()});
  while (!queue.empty()) {
    Entry top = queue.top();
    queue.pop();
    const std::string &key = top.key;
    const Node node = best.at(key);
    // Stale: the state was reached more cheaply since (its node changed).
    if (top.cost.networkBytes != node.cost.networkBytes || top.cost.local != node.cost.local ||
        top.depth != node.depth)
      continue;
    if (key == goal) {
      std::vector<Move> path;
      for (std::string k = key; !best.at(k).parent.empty(); k = best.at(k).parent)
        path.insert(path.begin(), best.at(k).via);
      return path;
    }
    if (node.depth == kMaxSteps)
      continue;
    for (Move &m : movesFrom(pb, node.state)) {
      std::string next = m.to.key();
      if (banned.count(moveKey(node.state, m)))
        continue;
      StepCost c = node.cost;
      c += m.cost;
      auto it = best.find(next);
      if (it != best.end() && !(c < it->second.cost))
        continue;
      best[next] = Node{m.to, c, node.depth + 1, key, m};
      queue.push({c, node.depth + 1, next});
    }
  }
  return {};
}

/// Proves the path's steps in a copy of the fusion; the index of the first
/// that is not proved, or nullopt when all are (then `steps` holds them).
std::optional<size_t> provePath(const Problem &pb, const std::vector<Move> &path,
                                const StepProver &prove, std::vector<PlannedStep> &steps) {
  Fusion f = pb.fusion;
  std::vector<ShardState> intermediates;
  for (size_t i = 0; i + 1 < path.size(); ++i)
    intermediates.push_back(path[i].to);
  std::vector<FusionEdge> edges = appendChain(f, pb.edge, intermediates);
  steps.clear();
  for (size_t i = 0; i < edges.size(); ++i) {
    const FusionEdge &e = edges[i];
    if (e.map.unsupported)
      return i;
    StepProof proof = prove(f, e, path[i].lowering);
    if (proof.kind != Outcome::Kind::Proved)
      return i;
    PlannedStep step;
    step.lowering = proof.lowering;
    step.status = Status::Proved;
    step.state = path[i].to;
    step.intermediate = f.tensor(e.consumer).name() + " " + path[i].to.key();
    step.networkBytes = path[i].cost.networkBytes;
    step.assumptions = proof.assumptions;
    steps.push_back(std::move(step));
  }
  return std::nullopt;
}

/// The search problem of `edge`, or nullopt when it is not of the
/// planner's shape (see Planner.h).
std::optional<Problem> problemOf(const Fusion &fusion, const FusionEdge &edge) {
  const TensorView &p = fusion.tensor(edge.producer), &c = fusion.tensor(edge.consumer);
  const Expr &e = fusion.exprs[edge.expr];
  bool copy = e.kind == OpKind::Set || e.kind == OpKind::LoadStore;
  bool reduction = e.kind == OpKind::Reduction && !reductionOperatorOf(e).empty();
  if (!p.mesh || !c.mesh || *p.mesh != *c.mesh || edge.map.unsupported || (!copy && !reduction) ||
      e.tensorInputs().size() != 1 || isInHostLoop(e) || c.rootOrLogical() != c.logical ||
      edge.map.producerIds.size() != p.logical.size())
    return std::nullopt;
  for (size_t i = 0; i < p.logical.size(); ++i)
    if (edge.map.producerIds[i] != p.logical[i])
      return std::nullopt;
  auto source = readShardState(fusion, p, *p.mesh);
  auto target = readShardState(fusion, c, *c.mesh);
  if (!source || !target || source->axes.size() != target->axes.size())
    return std::nullopt;
  // One nesting rule for the whole search: chunked where either end is.
  source->chunked = target->chunked = source->chunked || target->chunked;
  bool reduces = std::count(target->reduced.begin(), target->reduced.end(), true) > 0;
  if (std::count(source->reduced.begin(), source->reduced.end(), true) || reduces != reduction)
    return std::nullopt;
  Problem pb{fusion,
             edge,
             *p.mesh,
             sizesOf(fusion, p),
             *source,
             *target,
             {},
             reduces,
             reduces && initialValueIsIdentity(e).value_or(false)};
  for (int i = 2; i >= 0; --i)
    if (p.mesh->axisOf(deviceDimFromIndex(i)))
      pb.dids.push_back(deviceDimFromIndex(i));
  return pb;
}

} // namespace

std::vector<PlannedStep> planEdge(const Fusion &fusion, const FusionEdge &edge,
                                  const StepProver &prove) {
  auto pb = problemOf(fusion, edge);
  if (!pb)
    return {};
  std::set<std::string> banned;
  for (int round = 0; round < kMaxRounds; ++round) {
    std::vector<Move> path = cheapestPath(*pb, banned);
    if (path.empty())
      return {};
    std::vector<PlannedStep> steps;
    auto failed = provePath(*pb, path, prove, steps);
    if (!failed)
      return steps;
    const ShardState &from = *failed == 0 ? pb->source : path[*failed - 1].to;
    banned.insert(moveKey(from, path[*failed]));
  }
  return {};
}

} // namespace shardcheck
