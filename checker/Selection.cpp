// nvFuser's selection rules, in two readings; see Selection.h.
#include "checker/Selection.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

namespace shardcheck {

namespace {

/// Where a DID sits: its loop ID and the base axis (logical for producers,
/// root for consumers) it derives from, when unambiguous.
struct Placement {
  IdNum loopId = 0;
  std::optional<IdNum> baseAxis;
};

using Placements = std::map<ParallelType, Placement>;

std::optional<IdNum> baseAncestor(const Fusion &f, IdNum id, const std::vector<IdNum> &base) {
  for (int guard = 0; guard < 64; ++guard) {
    if (std::count(base.begin(), base.end(), id))
      return id;
    const Transform *t = f.definition(id);
    if (!t || t->inputs.size() != 1)
      return std::nullopt; // Not derived, or from a merge: no single axis.
    id = t->inputs[0];
  }
  return std::nullopt;
}

Placements placementsOf(const Fusion &f, const TensorView &tv, const std::vector<IdNum> &base,
                        SelectionReading reading) {
  Placements r;
  for (IdNum id : tv.loop) {
    const IterDomain &d = f.id(id);
    if (!d.isDeviceParallel() || d.isReduction())
      continue;
    if (d.isBroadcast() && reading == SelectionReading::Semantic)
      continue;
    r.emplace(d.parallel, Placement{id, baseAncestor(f, id, base)});
  }
  return r;
}

/// The consumer root ID a producer axis maps to.
std::optional<IdNum> mapped(const FusionEdge &edge, const std::optional<IdNum> &producerAxis) {
  if (!producerAxis)
    return std::nullopt;
  return edge.map.consumerOf(*producerAxis);
}

bool sameMesh(const TensorView &a, const TensorView &b) {
  if (!a.mesh || !b.mesh)
    return !a.mesh && !b.mesh;
  return *a.mesh == *b.mesh;
}

Team wholeMesh(const DeviceMesh &m, std::optional<int64_t> root = std::nullopt) {
  return Team{m.devices(), root, {}};
}

Lowering lowering(CommKind k, std::vector<Team> teams, bool permute = false) {
  return Lowering{k, std::move(teams), permute};
}

Selection unsupported(std::string reason, std::vector<Lowering> steps = {}) {
  return Selection{std::nullopt, std::move(reason), std::move(steps)};
}

struct EdgeView {
  const Fusion &f;
  const FusionEdge &edge;
  const TensorView &p;
  const TensorView &c;
  Placements ps, cs;
};

Selection selectSameMesh(const EdgeView &v, SelectionReading reading) {
  const DeviceMesh *mesh = v.p.mesh ? &*v.p.mesh : nullptr;
  // Reductions over a sharded axis come first: they need partial sums.
  for (const auto &[type, pl] : v.ps) {
    auto c = mapped(v.edge, pl.baseAxis);
    if (!c || !v.f.id(*c).isReduction() || !mesh)
      continue;
    if (v.c.mesh && v.c.mesh->size() == 1)
      return Selection{
          lowering(CommKind::Reduce, {wholeMesh(*mesh, v.c.mesh->devices()[0])}), {}, {}};
    auto teams = teamsAlong(*mesh, type);
    if (v.cs.count(type))
      return Selection{lowering(CommKind::ReduceScatter, teams), {}, {}};
    return Selection{lowering(CommKind::Allreduce, teams), {}, {}};
  }
  std::vector<ParallelType> changed;
  for (int i = 0; i < 3; ++i) {
    ParallelType t = deviceDimFromIndex(i);
    bool inP = v.ps.count(t), inC = v.cs.count(t);
    if (inP != inC || (inP && mapped(v.edge, v.ps.at(t).baseAxis) != v.cs.at(t).baseAxis))
      changed.push_back(t);
  }
  if (changed.empty() || !mesh)
    return Selection{lowering(CommKind::None, {}), {}, {}};
  if (changed.size() > 1) {
    std::vector<Lowering> steps;
    for (ParallelType t : changed)
      steps.push_back(
          lowering(v.ps.count(t) && !v.cs.count(t) ? CommKind::Allgather : CommKind::AllToAll,
                   teamsAlong(*mesh, t)));
    return unsupported("the edge changes " + std::to_string(changed.size()) +
                           " DID types at once; no single collective does that",
                       steps);
  }
  ParallelType t = changed[0];
  bool inP = v.ps.count(t), inC = v.cs.count(t);
  if (inP && !inC)
    return Selection{lowering(CommKind::Allgather, teamsAlong(*mesh, t)), {}, {}};
  if (!inP && inC) {
    if (reading == SelectionReading::Semantic)
      return Selection{lowering(CommKind::None, {}), {}, {}};
    // nvFuser scatters from the mesh's first device.
    return Selection{lowering(CommKind::Scatter, {wholeMesh(*mesh, mesh->devices()[0])}), {}, {}};
  }
  return Selection{lowering(CommKind::AllToAll, teamsAlong(*mesh, t)), {}, {}};
}

/// The team of a Gather or Reduce into `root`: with one sharded DID, the row
/// of the mesh along it that contains the root (else the first row), since
/// the other rows hold copies; otherwise the whole mesh.
Team rootedTeam(const DeviceMesh &m, const Placements &ps, int64_t root) {
  if (ps.size() != 1)
    return wholeMesh(m, root);
  auto teams = teamsAlong(m, ps.begin()->first);
  for (auto &t : teams)
    if (std::count(t.devices.begin(), t.devices.end(), root)) {
      t.root = root;
      return t;
    }
  teams[0].root = root;
  return teams[0];
}

Selection selectAcrossMeshes(const EdgeView &v) {
  if (!v.p.mesh || !v.c.mesh)
    return unsupported("one side has a mesh and the other has none");
  const DeviceMesh &pm = *v.p.mesh, &cm = *v.c.mesh;
  bool reduces = false;
  for (const auto &[type, pl] : v.ps) {
    auto c = mapped(v.edge, pl.baseAxis);
    reduces = reduces || (c && v.f.id(*c).isReduction());
  }
  if (reduces) {
    if (cm.size() == 1)
      return Selection{lowering(CommKind::Reduce, {rootedTeam(pm, v.ps, cm.devices()[0])}), {}, {}};
    return unsupported("a reduction into a different mesh of several devices");
  }
  if (!v.ps.empty() && v.cs.empty()) {
    if (cm.size() == 1)
      return Selection{lowering(CommKind::Gather, {rootedTeam(pm, v.ps, cm.devices()[0])}), {}, {}};
    return unsupported("gathering into a different mesh of several devices");
  }
  if (v.ps.empty() && !v.cs.empty())
    return Selection{lowering(CommKind::Scatter, {wholeMesh(cm, pm.devices()[0])}), {}, {}};
  if (v.ps.empty() && v.cs.empty())
    return Selection{lowering(CommKind::Broadcast, {wholeMesh(cm, pm.devices()[0])}), {}, {}};
  // Both sharded: point to point when the shardings agree, else all-to-all.
  bool agree = v.ps.size() == v.cs.size() && pm.shape() == cm.shape();
  for (const auto &[type, pl] : v.ps)
    agree = agree && v.cs.count(type) && mapped(v.edge, pl.baseAxis) == v.cs.at(type).baseAxis;
  if (agree) {
    Team pairs;
    for (int64_t i = 0; i < pm.size(); ++i)
      pairs.pairs.emplace_back(pm.devices()[i], cm.devices()[i]);
    return Selection{lowering(CommKind::SendRecv, {pairs}), {}, {}};
  }
  return unsupported("resharding across different meshes on different axes");
}

EdgeView viewOf(const Fusion &f, const FusionEdge &edge, SelectionReading reading) {
  const TensorView &p = f.tensor(edge.producer), &c = f.tensor(edge.consumer);
  return EdgeView{f,
                  edge,
                  p,
                  c,
                  placementsOf(f, p, p.logical, reading),
                  placementsOf(f, c, c.rootOrLogical(), reading)};
}

} // namespace

std::vector<Team> teamsAlong(const DeviceMesh &mesh, ParallelType didType) {
  auto axis = mesh.axisOf(didType);
  if (!axis)
    return {wholeMesh(mesh)};
  std::map<std::vector<int64_t>, Team> groups;
  for (int64_t d : mesh.devices()) {
    auto coords = mesh.coordinates(d);
    coords[*axis] = 0;
    groups[coords].devices.push_back(d);
  }
  std::vector<Team> teams;
  for (auto &[key, team] : groups) {
    // Order each team by the coordinate along the axis.
    std::sort(team.devices.begin(), team.devices.end(), [&](int64_t a, int64_t b) {
      return mesh.coordinates(a)[*axis] < mesh.coordinates(b)[*axis];
    });
    teams.push_back(team);
  }
  return teams;
}

Selection selectLowering(const Fusion &fusion, const FusionEdge &edge, SelectionReading reading) {
  if (edge.map.unsupported)
    return unsupported(*edge.map.unsupported);
  EdgeView v = viewOf(fusion, edge, reading);
  if (sameMesh(v.p, v.c))
    return selectSameMesh(v, reading);
  return selectAcrossMeshes(v);
}

namespace {

bool placementsDiffer(const EdgeView &v) {
  for (int i = 0; i < 3; ++i) {
    ParallelType t = deviceDimFromIndex(i);
    bool inP = v.ps.count(t), inC = v.cs.count(t);
    if (inP != inC)
      return true;
    if (inP && mapped(v.edge, v.ps.at(t).baseAxis) != v.cs.at(t).baseAxis)
      return true;
  }
  return false;
}

} // namespace

bool isSyntacticallyResharding(const Fusion &fusion, const FusionEdge &edge) {
  EdgeView v = viewOf(fusion, edge, SelectionReading::NvFuser);
  return !sameMesh(v.p, v.c) || placementsDiffer(v);
}

bool differsOnlyInSpelling(const Fusion &fusion, const FusionEdge &edge) {
  EdgeView syntactic = viewOf(fusion, edge, SelectionReading::NvFuser);
  EdgeView semantic = viewOf(fusion, edge, SelectionReading::Semantic);
  return sameMesh(syntactic.p, syntactic.c) && placementsDiffer(syntactic) &&
         !placementsDiffer(semantic);
}

namespace {

/// DTensor's reduce op `op` (sum, avg, max, min) of n partials, 2 on the
/// first member and 1 on every other, as text: a witness on which any two
/// of the four differ for n >= 2 (sum n + 1, avg (n + 1) / n, max 2, min 1).
std::string witnessValue(const std::string &op, int64_t n) {
  if (op == "sum")
    return std::to_string(n + 1);
  if (op == "avg")
    return std::to_string(n + 1) + "/" + std::to_string(n);
  return op == "max" ? "2" : "1";
}

/// Why a reducing Communication issued with another reduce op than its
/// input's partials stand for (kPartialOpAttr, kIssuedOpAttr) computes a
/// wrong value, with a witness; nullopt where they agree, are not stated,
/// or the team has one device (every op then keeps its value).
std::optional<std::string> reduceOpViolation(const Expr &expr, const std::string &name) {
  const CommunicationInfo &ci = *expr.communication;
  std::string partial = expr.attr(kPartialOpAttr), issued = expr.attr(kIssuedOpAttr);
  int64_t n = static_cast<int64_t>(ci.team.size());
  if (partial.empty() || issued.empty() || partial == issued || n < 2)
    return std::nullopt;
  std::string others = ci.team.size() == 2 ? "device " : "devices ";
  for (size_t i = 1; i < ci.team.size(); ++i)
    others += (i > 1 ? ", " : "") + std::to_string(ci.team[i]);
  return name + " is issued with reduce op " + issued + ", but its input's partials stand for " +
         partial + " (Partial(" + partial + ")): an element whose partials are 2 on device " +
         std::to_string(ci.team[0]) + " and 1 on " + others + " becomes " +
         witnessValue(issued, n) + ", where its value is " + witnessValue(partial, n);
}

} // namespace

std::optional<std::string> communicationRuleViolation(const Expr &expr) {
  SC_ASSERT(expr.communication, "not a communication");
  const CommunicationInfo &ci = *expr.communication;
  std::string name = "Communication " + std::to_string(ci.number);
  std::set<int64_t> distinct(ci.team.begin(), ci.team.end());
  if (distinct.size() != ci.team.size())
    return name + " lists a device twice in its team";
  if (ci.root && !distinct.count(*ci.root))
    return name + "'s root " + std::to_string(*ci.root) +
           " is not in its team; nvFuser's runtime requires the root in the team";
  if (ci.type == CollectiveType::SendRecv && (ci.team.empty() || ci.team.size() > 2))
    return name + " is a SendRecv over " + std::to_string(ci.team.size()) +
           " devices; nvFuser's SendRecv takes a team of 1 or 2";
  return reduceOpViolation(expr, name);
}

std::optional<Lowering> loweringOfCommunication(const Fusion &fusion, const Expr &expr) {
  SC_ASSERT(expr.communication, "not a communication");
  const CommunicationInfo &ci = *expr.communication;
  auto kind = commKindFromCollective(ci.type);
  // A CollectivePermute's peers are per device and per iteration: only the
  // ring checker (checker/RingChecker.h) lowers it.
  if (!kind || *kind == CommKind::CollectivePermute)
    return std::nullopt;
  Lowering l;
  l.kind = *kind;
  l.padded = isPaddedCommunication(expr);
  if (l.kind == CommKind::SendRecv) {
    // nvFuser's sender is the root; the receiver is the other member (the
    // root itself in a team of one: a local copy). Without a printed root,
    // the team reads (sender receiver).
    Team t;
    if (ci.root && !ci.team.empty() && ci.team.size() <= 2) {
      int64_t other = ci.team[0] == *ci.root ? ci.team.back() : ci.team[0];
      t.pairs.emplace_back(*ci.root, other);
    } else if (!ci.root && ci.team.size() == 2) {
      t.pairs.emplace_back(ci.team[0], ci.team[1]);
    }
    l.teams.push_back(t);
    return l;
  }
  Team printed{ci.team, ci.root, {}};
  // nvFuser lists a root outside the data members in the team too; the
  // semantics counts data members only (docs/semantics.md, Lowerings).
  if (ci.root) {
    const auto inputs = expr.tensorInputs();
    const TensorView *side = nullptr;
    RootRole root = commRootRole(l.kind);
    if (root == RootRole::Sends && !expr.outputs.empty())
      side = &fusion.tensor(expr.outputs[0]);
    if (root == RootRole::Receives && !inputs.empty())
      side = &fusion.tensor(inputs[0]);
    if (side && side->mesh && !side->mesh->contains(*ci.root))
      printed.devices.erase(std::remove(printed.devices.begin(), printed.devices.end(), *ci.root),
                            printed.devices.end());
  }
  // Host IR is printed for one rank: a team that is one row of a mesh stands
  // for every parallel row.
  const TensorView *meshOwner = nullptr;
  for (TensorNum t : expr.tensorInputs())
    meshOwner = &fusion.tensor(t);
  if (meshOwner && meshOwner->mesh && !ci.root && meshOwner->mesh->rank() > 1) {
    for (int i = 0; i < meshOwner->mesh->rank(); ++i) {
      auto teams = teamsAlong(*meshOwner->mesh, deviceDimFromIndex(i));
      for (const auto &team : teams)
        if (team.devices == ci.team) {
          l.teams = teams;
          return l;
        }
    }
  }
  l.teams.push_back(printed);
  return l;
}

} // namespace shardcheck
