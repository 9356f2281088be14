// remeshFusion: moves a fusion from the 1-D mesh {0 .. D-1} to {0 .. n-1}.
//
// Design (a test utility for the device-count sweep in plan_corpus_test.cpp):
//
// Applicability. Every mesh of the fusion is either the one 1-D mesh
// {0 1 .. D-1} with D >= 2, or a single device {k} with k < n (tensors
// without a mesh are fine). At least one tensor lives on the D-device mesh.
// No tensor has a root domain that differs from its logical domain as a set
// of IDs (a reshape/view or rfactor derives logical from root through
// splits/merges; a permute only reorders the same IDs and is fine). Host IR
// Communication teams must be exactly (0 .. D-1), and become (0 .. n-1);
// roots must be < n and stay. Every DID ID (not on a broadcast) is DIDx,
// sits on a root/logical ID or on the outer output of a split of one, and
// has extent D where its extent is a constant. Every edge's domain map is
// supported. Anything else: nullopt with the reason.
//
// Axis classes. A union-find over IterDomains joins, for every producer ->
// consumer edge of the FusionGraph, each consumer root (or logical) ID with
// the producer logical ID its domain map gives, except where either side is a
// plain broadcast (extent 1, not expanded): a broadcast meets real axes of any
// extent. Expanded broadcasts (`b{1 ex 32}`) are joined by their expanded
// extent. Permutes need no extra rule: a permute's root and logical domains
// hold the same IDs.
//
// Sharded classes. A class is sharded when one of its IDs carries the DID
// itself (the logical axis is the device axis) or is the input of a device
// split (a split whose outer output carries the DID). For a sharded class
// whose members all have one constant extent E (E divisible by D), every
// member gets extent E / D * n (expanded broadcasts: their expanded extent),
// so each device keeps the same local extent. A sharded class of symbolic
// extent keeps its extents: its constraints (`i0 % n == 0`, `i0 == n`) move
// with the mesh. Members with different extents are not applicable.
//
// Derived IDs (outputs of splits and merges) are recomputed from their inputs
// only when an input or the factor changed, so every unchanged ID keeps its
// printed extent: an outer device split by D becomes a split by n (outputs n
// and ceilDiv(E', n) = E / D), and so does any other outer split by D of a
// sharded axis (an allocation domain laying the axis out per device, as an
// AllToAll's producer does); an inner device split keeps its factor F (its
// outer DID output becomes ceilDiv(E', F) = n); other splits keep their
// factors; a merge's extent is the product. A resize or swizzle of a rescaled
// ID is not applicable. Finally every constant DID ID must have come out as
// n, else the rewrite does not apply.
//
// The result is a copy of the fusion with the same tensor, ID and expression
// numbers, source locations and everything else; only extents, split factors,
// meshes and communication teams change.
#include "tests/Remesh.h"

#include "ir/FusionGraph.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <set>
#include <sstream>

namespace shardcheck::testutil {
namespace {

bool isLinearMesh(const DeviceMesh &m) {
  if (m.rank() != 1)
    return false;
  for (int64_t i = 0; i < m.size(); ++i)
    if (m.devices()[static_cast<size_t>(i)] != i)
      return false;
  return true;
}

std::vector<int64_t> iota(int64_t n) {
  std::vector<int64_t> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), int64_t{0});
  return v;
}

/// A broadcast that is not expanded: extent 1, meets axes of any extent.
bool plainBroadcast(const IterDomain &id) {
  return id.isBroadcast() && !id.expandedExtent;
}

/// The extent an ID has as a data axis: its expanded extent for an expanded
/// broadcast.
const Extent &dataExtent(const IterDomain &id) {
  return id.isBroadcast() && id.expandedExtent ? *id.expandedExtent : id.extent;
}

std::string idName(const Fusion &f, IdNum n) {
  return f.hasId(n) ? f.id(n).str() : "ID " + std::to_string(n);
}

class UnionFind {
public:
  IdNum find(IdNum x) {
    auto it = parent_.find(x);
    if (it == parent_.end() || it->second == x)
      return x;
    IdNum root = find(it->second);
    parent_[x] = root;
    return root;
  }
  void join(IdNum a, IdNum b) {
    a = find(a);
    b = find(b);
    if (a != b)
      parent_[std::max(a, b)] = std::min(a, b);
  }

private:
  std::map<IdNum, IdNum> parent_;
};

class Remesher {
public:
  Remesher(const Fusion &f, int64_t n) : f_(f), n_(n) {}

  std::optional<Fusion> run() {
    if (n_ < 1)
      return fail("device count " + std::to_string(n_) + " is not positive");
    if (!checkMeshes() || !checkRoots() || !checkCommunications() || !buildClasses() ||
        !findShardedClasses() || !scaleClasses() || !computeExtents() || !checkDids())
      return std::nullopt;
    return rewrite();
  }

  const std::string &why() const { return why_; }

private:
  std::nullopt_t fail(std::string reason) {
    why_ = std::move(reason);
    return std::nullopt;
  }
  bool failed(std::string reason) {
    why_ = std::move(reason);
    return false;
  }

  bool checkMeshes() {
    for (const auto &[num, tv] : f_.tensors) {
      if (!tv.mesh)
        continue;
      const DeviceMesh &m = *tv.mesh;
      if (m.rank() != 1)
        return failed(tv.name() + " lives on the " + std::to_string(m.rank()) + "-D mesh " +
                      m.str());
      if (m.size() == 1)
        continue;
      if (!isLinearMesh(m))
        return failed(tv.name() + "'s mesh " + m.str() + " is not {0 .. D-1}");
      if (D_ && *D_ != m.size())
        return failed("two multi-device meshes of sizes " + std::to_string(*D_) + " and " +
                      std::to_string(m.size()));
      D_ = m.size();
    }
    if (!D_)
      return failed("no tensor lives on a multi-device mesh");
    for (const auto &[num, tv] : f_.tensors)
      if (tv.mesh && tv.mesh->size() == 1 && tv.mesh->devices()[0] >= n_)
        return failed(tv.name() + " lives on device " + std::to_string(tv.mesh->devices()[0]) +
                      ", outside " + std::to_string(n_) + " devices");
    return true;
  }

  bool checkRoots() {
    for (const auto &[num, tv] : f_.tensors) {
      if (!tv.hasRoot())
        continue;
      std::vector<IdNum> root = tv.root, logical = tv.logical;
      std::sort(root.begin(), root.end());
      std::sort(logical.begin(), logical.end());
      if (root != logical)
        return failed(tv.name() +
                      "'s logical domain is derived from its root domain (reshape, view or "
                      "rfactor)");
    }
    return true;
  }

  bool checkCommunications() {
    std::vector<int64_t> all = iota(*D_);
    for (const Expr &e : f_.exprs) {
      if (!e.communication)
        continue;
      const CommunicationInfo &c = *e.communication;
      if (c.team != all) {
        std::ostringstream os;
        os << "Communication " << c.number << "'s team (";
        for (size_t i = 0; i < c.team.size(); ++i)
          os << (i ? " " : "") << c.team[i];
        os << ") is not (0 .. " << *D_ - 1 << ")";
        return failed(os.str());
      }
      if (c.root && *c.root >= n_)
        return failed("Communication " + std::to_string(c.number) + "'s root " +
                      std::to_string(*c.root) + " is outside " + std::to_string(n_) + " devices");
    }
    return true;
  }

  bool buildClasses() {
    DiagnosticEngine diags;
    auto graph = FusionGraph::build(f_, diags);
    if (!graph)
      return failed("the fusion's graph cannot be built");
    for (const FusionEdge &edge : graph->edges()) {
      if (edge.map.unsupported)
        return failed("T" + std::to_string(edge.producer) + " -> T" +
                      std::to_string(edge.consumer) + ": " + *edge.map.unsupported);
      for (size_t i = 0; i < edge.map.consumerIds.size(); ++i) {
        if (!edge.map.producerIds[i])
          continue;
        IdNum c = edge.map.consumerIds[i], p = *edge.map.producerIds[i];
        if (!f_.hasId(c) || !f_.hasId(p))
          continue;
        if (plainBroadcast(f_.id(c)) || plainBroadcast(f_.id(p)))
          continue;
        uf_.join(c, p);
      }
    }
    return true;
  }

  bool findShardedClasses() {
    for (const auto &[num, id] : f_.ids) {
      if (!id.isDeviceParallel() || id.isBroadcast())
        continue;
      if (id.parallel != ParallelType::DIDx)
        return failed(id.str() + " uses a DID type other than DIDx on a 1-D mesh");
      if (auto c = id.extent.asConstant(); c && *c != *D_)
        return failed(id.str() + " has extent " + std::to_string(*c) + " on a " +
                      std::to_string(*D_) + "-device mesh");
      if (!id.definition) {
        sharded_.insert(uf_.find(num));
        continue;
      }
      const Transform &t = f_.transforms[*id.definition];
      if (t.kind != Transform::Kind::Split)
        return failed(id.str() + " is the output of a " + transformKindName(t.kind));
      if (t.outputs.empty() || t.outputs[0] != num)
        return failed(id.str() + " is the inner output of a split");
      if (f_.id(t.inputs[0]).definition)
        return failed(id.str() + " comes from a split of the derived ID " +
                      idName(f_, t.inputs[0]));
      if (!t.innerSplit && t.factor.asConstant() != std::optional<int64_t>(*D_))
        return failed("outer split of " + idName(f_, t.inputs[0]) + " by " + t.factor.str() +
                      " carries a DID on a " + std::to_string(*D_) + "-device mesh");
      deviceSplits_.insert(*id.definition);
      sharded_.insert(uf_.find(t.inputs[0]));
    }
    return true;
  }

  bool scaleClasses() {
    std::map<IdNum, std::vector<IdNum>> members;
    for (const auto &[num, id] : f_.ids)
      if (!id.definition && !plainBroadcast(id))
        members[uf_.find(num)].push_back(num);
    for (IdNum rep : sharded_) {
      std::optional<int64_t> E;
      bool symbolic = false;
      IdNum first = 0;
      for (IdNum m : members[rep]) {
        auto c = dataExtent(f_.id(m)).asConstant();
        if (!c) {
          symbolic = true;
          continue;
        }
        if (E && *E != *c)
          return failed("the sharded axis of " + idName(f_, first) + " and " + idName(f_, m) +
                        " has two extents");
        if (!E)
          first = m;
        E = c;
      }
      if (symbolic && E)
        return failed("the sharded axis of " + idName(f_, first) +
                      " mixes constant and symbolic extents");
      if (!E)
        continue; // symbolic: extents stay, constraints follow the mesh
      if (*E % *D_ != 0)
        return failed("the sharded axis of " + idName(f_, first) + " has extent " +
                      std::to_string(*E) + ", not divisible by " + std::to_string(*D_));
      scale_[rep] = *E / *D_ * n_;
    }
    return true;
  }

  bool computeExtents() {
    for (const auto &[num, id] : f_.ids)
      if (!computeId(num))
        return false;
    return true;
  }

  bool computeId(IdNum num) {
    if (extent_.count(num))
      return true;
    const IterDomain &id = f_.id(num);
    if (id.definition)
      return computeTransform(*id.definition);
    extent_[num] = id.extent;
    expanded_[num] = id.expandedExtent;
    if (plainBroadcast(id))
      return true;
    auto it = scale_.find(uf_.find(num));
    if (it == scale_.end())
      return true;
    if (id.isBroadcast())
      expanded_[num] = Extent::constant(it->second);
    else
      extent_[num] = Extent::constant(it->second);
    return true;
  }

  bool computeTransform(size_t index) {
    const Transform &t = f_.transforms[index];
    if (doneTransforms_.count(index))
      return true;
    doneTransforms_.insert(index);
    bool changed = false;
    for (IdNum in : t.inputs) {
      if (!computeId(in))
        return false;
      changed = changed || extent_.at(in) != f_.id(in).extent ||
                expanded_.at(in) != f_.id(in).expandedExtent;
    }
    Extent factor = t.factor;
    if (t.kind == Transform::Kind::Split && !t.innerSplit &&
        (deviceSplits_.count(index) || isLayoutSplitByD(t)))
      factor = Extent::constant(n_);
    factor_[index] = factor;
    changed = changed || factor != t.factor;
    for (IdNum out : t.outputs) {
      extent_[out] = f_.id(out).extent;
      expanded_[out] = f_.id(out).expandedExtent;
    }
    if (!changed)
      return true;
    switch (t.kind) {
    case Transform::Kind::Split: {
      if (t.inputs.size() != 1 || t.outputs.size() != 2)
        return failed("a split without one input and two outputs");
      const Extent &in = extent_.at(t.inputs[0]);
      Extent rest = Extent::ceilDiv(in, factor);
      extent_[t.outputs[0]] = t.innerSplit ? rest : factor;
      extent_[t.outputs[1]] = t.innerSplit ? factor : rest;
      return true;
    }
    case Transform::Kind::Merge: {
      if (t.inputs.size() != 2 || t.outputs.size() != 1)
        return failed("a merge without two inputs and one output");
      extent_[t.outputs[0]] = Extent::mul(extent_.at(t.inputs[0]), extent_.at(t.inputs[1]));
      return true;
    }
    default:
      return failed(std::string("a ") + transformKindName(t.kind) + " of the rescaled ID " +
                    idName(f_, t.inputs.empty() ? 0 : t.inputs[0]));
    }
  }

  /// An outer split by D of a sharded axis that carries no DID (an
  /// allocation domain laying the axis out by device, as for an AllToAll).
  bool isLayoutSplitByD(const Transform &t) {
    return t.inputs.size() == 1 && t.factor.asConstant() == D_ && !f_.id(t.inputs[0]).definition &&
           sharded_.count(uf_.find(t.inputs[0]));
  }

  bool checkDids() {
    for (const auto &[num, id] : f_.ids) {
      if (!id.isDeviceParallel() || id.isBroadcast() || !id.extent.isConstant())
        continue;
      if (extent_.at(num).asConstant() != std::optional<int64_t>(n_))
        return failed(id.str() + " would get extent " + extent_.at(num).str() + ", not " +
                      std::to_string(n_));
    }
    return true;
  }

  Fusion rewrite() const {
    Fusion g = f_;
    for (auto &[num, id] : g.ids) {
      id.extent = extent_.at(num);
      id.expandedExtent = expanded_.at(num);
    }
    for (const auto &[index, factor] : factor_)
      g.transforms[index].factor = factor;
    DeviceMesh mesh = DeviceMesh::linear(iota(n_));
    for (auto &[num, tv] : g.tensors)
      if (tv.mesh && tv.mesh->size() > 1)
        tv.mesh = mesh;
    for (Expr &e : g.exprs)
      if (e.communication)
        e.communication->team = iota(n_);
    return g;
  }

  const Fusion &f_;
  int64_t n_;
  std::optional<int64_t> D_;
  std::string why_;
  UnionFind uf_;
  std::set<IdNum> sharded_; ///< Class representatives.
  std::set<size_t> deviceSplits_;
  std::map<IdNum, int64_t> scale_; ///< Class representative -> new extent.
  std::map<IdNum, Extent> extent_;
  std::map<IdNum, std::optional<Extent>> expanded_;
  std::map<size_t, Extent> factor_;
  std::set<size_t> doneTransforms_;
};

} // namespace

std::optional<int64_t> linearMeshSize(const Fusion &f) {
  std::optional<int64_t> D;
  for (const auto &[num, tv] : f.tensors) {
    if (!tv.mesh || tv.mesh->size() == 1)
      continue;
    if (!isLinearMesh(*tv.mesh) || (D && *D != tv.mesh->size()))
      return std::nullopt;
    D = tv.mesh->size();
  }
  return D;
}

std::optional<Fusion> remeshFusion(const Fusion &f, int64_t n, std::string *whyNot) {
  Remesher r(f, n);
  auto result = r.run();
  if (!result && whyNot)
    *whyNot = r.why();
  return result;
}

} // namespace shardcheck::testutil
