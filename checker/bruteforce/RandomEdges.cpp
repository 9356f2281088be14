// Seeded random one-edge fusions and candidate lowerings; see RandomEdges.h.
#include "checker/bruteforce/RandomEdges.h"

#include "util/RandomDraw.h"

#include "checker/bruteforce/ConcreteTensor.h"
#include "ir/FusionBuilder.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <optional>
#include <set>

namespace shardcheck::bruteforce {

std::vector<std::vector<int64_t>> meshLines(const DeviceMesh &mesh, int axis) {
  // Group devices by their coordinates with `axis` blanked out; within a
  // group, row-major order is the order along `axis`.
  std::map<std::vector<int64_t>, std::vector<int64_t>> lines;
  for (int64_t d : mesh.devices()) {
    auto key = mesh.coordinates(d);
    key[axis] = -1;
    lines[key].push_back(d);
  }
  std::vector<std::vector<int64_t>> result;
  for (auto &[key, line] : lines)
    result.push_back(std::move(line));
  return result;
}

namespace {

using Random = DrawFrom;

/// One axis of the full-size shape, shared by every tensor of the case.
struct Axis {
  Extent extent;
  std::string symbol; ///< Empty for constants.
};

enum class Op { Set, Unary, Binary, Reduction };

class CaseBuilder {
public:
  CaseBuilder(std::mt19937_64 &rng, const RandomEdgeOptions &options)
      : rand_(rng), options_(options) {}
  RandomEdgeCase build();

private:
  DeviceMesh randomMesh(int64_t firstDevice);
  std::optional<DeviceMesh> otherMesh(const DeviceMesh &producerMesh);
  std::vector<Axis> randomShape(int rank, const std::vector<int64_t> &meshSizes);
  TensorNum makeTensor(const std::vector<Axis> &axes, const std::vector<IterType> &types,
                       const std::optional<DeviceMesh> &mesh);
  /// Cuts the local part of an axis already outer-split by `cutBy` again by
  /// `s` on `type` (a nested sharding), or leaves it when that would be
  /// uneven and unevenness is not drawn.
  void nestSharding(const Axis &axis, IdNum &local, int64_t &cutBy, int64_t s, ParallelType type,
                    std::vector<IdNum> &loopPart, std::vector<IdNum> &deviceIds);
  Bindings bindSymbols();
  std::vector<Lowering> lowerings(const std::vector<int64_t> &pDevices,
                                  const std::vector<int64_t> &cDevices,
                                  const std::optional<DeviceMesh> &pMesh,
                                  const std::optional<DeviceMesh> &cMesh);
  std::string describe(const std::string &op, TensorNum p, TensorNum c,
                       const Bindings &bindings) const;

  Random rand_;
  RandomEdgeOptions options_;
  FusionBuilder builder_;
  std::vector<std::string> symbols_;
  std::map<std::string, int64_t> divisors_; ///< Symbol -> lcm of its device splits.
  bool uneven_ = false; ///< A constant device split that does not divide was kept.
  bool nested_ = false; ///< A tensor has a nested sharding.
};

DeviceMesh CaseBuilder::randomMesh(int64_t firstDevice) {
  const int64_t room = options_.maxDevices - firstDevice;
  std::vector<std::vector<int64_t>> shapes2d{{2, 2}, {2, 3}, {3, 2}, {2, 4}, {4, 2}};
  std::erase_if(shapes2d, [&](const auto &s) { return s[0] * s[1] > room; });
  std::vector<int64_t> shape;
  if (!shapes2d.empty() && rand_.percent(options_.mesh2dPercent)) {
    shape = rand_.pick(shapes2d);
  } else {
    std::vector<int64_t> sizes{1, 2, 2, 2, 3, 4, 4, 8};
    std::erase_if(sizes, [&](int64_t s) { return s > room; });
    shape = {sizes.empty() ? 1 : rand_.pick(sizes)};
  }
  int64_t n = std::accumulate(shape.begin(), shape.end(), int64_t{1}, std::multiplies<>());
  std::vector<int64_t> devices(n);
  std::iota(devices.begin(), devices.end(), firstDevice);
  return DeviceMesh::create(shape, devices);
}

std::optional<DeviceMesh> CaseBuilder::otherMesh(const DeviceMesh &producerMesh) {
  switch (rand_.between(0, 3)) {
  case 0: // One device, often the producer's first.
    return DeviceMesh::linear({rand_.between(0, options_.maxDevices - 1)});
  case 1: { // The producer's devices in reverse order.
    auto devices = producerMesh.devices();
    std::reverse(devices.begin(), devices.end());
    return DeviceMesh::create(producerMesh.shape(), devices);
  }
  case 2: // Any mesh, possibly overlapping or disjoint.
    return randomMesh(rand_.between(0, options_.maxDevices - 1));
  default: // The same devices (devices outside a mesh come from case 2).
    return producerMesh;
  }
}

std::vector<Axis> CaseBuilder::randomShape(int rank, const std::vector<int64_t> &meshSizes) {
  std::vector<Axis> axes;
  for (int i = 0; i < rank; ++i) {
    if (rand_.percent(options_.symbolicPercent)) {
      std::string name = "i" + std::to_string(symbols_.size());
      symbols_.push_back(name);
      axes.push_back({Extent::symbol(name), name});
    } else if (rand_.percent(35)) { // Matches a mesh axis: logical DIDs fit.
      axes.push_back({Extent::constant(rand_.pick(meshSizes)), ""});
    } else if (meshSizes.size() > 1 && rand_.percent(20)) { // Nested DIDs fit.
      axes.push_back({Extent::constant(meshSizes[0] * meshSizes[1]), ""});
    } else {
      axes.push_back({Extent::constant(rand_.between(1, options_.maxExtent)), ""});
    }
  }
  return axes;
}

TensorNum CaseBuilder::makeTensor(const std::vector<Axis> &axes, const std::vector<IterType> &types,
                                  const std::optional<DeviceMesh> &mesh) {
  const size_t rank = axes.size();
  std::vector<IdNum> logical;
  for (size_t i = 0; i < rank; ++i) {
    if (types[i] == IterType::Broadcast)
      logical.push_back(builder_.broadcast());
    else if (types[i] == IterType::Reduction)
      logical.push_back(builder_.reduction(axes[i].extent));
    else
      logical.push_back(builder_.iter(axes[i].extent));
  }
  std::vector<std::vector<IdNum>> loopParts;
  for (IdNum id : logical)
    loopParts.push_back({id});
  std::vector<IdNum> layout = logical; // Implicit layout, before allocation.
  std::vector<IdNum> deviceIds;
  std::vector<bool> sharded(rank, false);
  // Per axis cut by outer splits: their factors' product, so that a nested
  // sharding cuts the local part again (the default layout follows it down).
  std::vector<int64_t> cutBy(rank, 1);
  for (int p = 0; mesh && p < mesh->rank() && p < 3; ++p) {
    ParallelType type = deviceDimFromIndex(p);
    const int64_t s = mesh->extentOf(type);
    std::vector<size_t> candidates;
    for (size_t i = 0; i < rank; ++i)
      if (types[i] != IterType::Broadcast &&
          (!sharded[i] || (cutBy[i] > 1 && rand_.percent(options_.nestedPercent))))
        candidates.push_back(i);
    if (candidates.empty() || !rand_.percent(60))
      continue;
    const size_t i = rand_.pick(candidates);
    if (sharded[i]) {
      nestSharding(axes[i], layout[i], cutBy[i], s, type, loopParts[i], deviceIds);
      continue;
    }
    const auto constant = axes[i].extent.asConstant();
    if (types[i] == IterType::Reduction) { // Vacuous: rDID on the reduced axis.
      if (constant == s)
        builder_.parallelize(logical[i], type);
      continue;
    }
    if (constant == s && rand_.percent(60)) { // DID on the logical axis itself.
      builder_.parallelize(logical[i], type); // Already in the layout.
      sharded[i] = true;
      continue;
    }
    if (constant && *constant % s != 0 && !rand_.percent(options_.unevenPercent))
      continue;
    uneven_ = uneven_ || (constant && *constant % s != 0);
    if (!constant)
      divisors_[axes[i].symbol] =
          std::lcm(divisors_.count(axes[i].symbol) ? divisors_[axes[i].symbol] : int64_t{1}, s);
    // Mostly an outer split by s; sometimes the equivalent inner split.
    bool inner = constant && *constant % s == 0 && rand_.percent(20);
    auto ids = inner ? builder_.split(logical[i], *constant / s, true, type)
                     : builder_.split(logical[i], s, false, type);
    loopParts[i] = {ids.outer, ids.inner};
    layout[i] = ids.inner;
    sharded[i] = true;
    cutBy[i] = inner ? 1 : s;
    deviceIds.push_back(ids.outer);
  }
  for (size_t i = 0; mesh && i < rank; ++i) // DIDs on broadcasts are vacuous.
    if (types[i] == IterType::Broadcast && rand_.percent(40))
      builder_.parallelize(
          logical[i], deviceDimFromIndex(static_cast<int>(rand_.between(0, mesh->rank() - 1))));
  FusionBuilder::TensorSpec spec;
  spec.logical = logical;
  for (const auto &part : loopParts)
    spec.loop.insert(spec.loop.end(), part.begin(), part.end());
  if (rand_.percent(options_.allocationPercent)) {
    spec.allocation = layout;
    if (rand_.percent(30))
      spec.allocation.insert(spec.allocation.end(), deviceIds.begin(), deviceIds.end());
    rand_.shuffle(spec.allocation);
  }
  spec.mesh = mesh;
  return builder_.tensor(spec);
}

void CaseBuilder::nestSharding(const Axis &axis, IdNum &local, int64_t &cutBy, int64_t s,
                               ParallelType type, std::vector<IdNum> &loopPart,
                               std::vector<IdNum> &deviceIds) {
  const auto constant = axis.extent.asConstant();
  if (constant) { // The local part's extent is ceilDiv(E, cutBy).
    const int64_t localExtent = (*constant + cutBy - 1) / cutBy;
    bool even = *constant % cutBy == 0 && localExtent % s == 0;
    if (!even && !rand_.percent(options_.unevenPercent))
      return;
    uneven_ = uneven_ || !even;
  } else {
    divisors_[axis.symbol] = std::lcm(divisors_[axis.symbol], cutBy * s);
  }
  // Under an uneven outer cut, half the nestings are DTensor's torch.chunk
  // ones (docs/semantics.md, Chunked splits); elsewhere both agree.
  bool chunked = constant && *constant % cutBy != 0 && rand_.percent(50);
  auto ids = chunked ? builder_.chunkedSplit(local, s, type)
                     : builder_.split(local, s, /*innerSplit=*/false, type);
  loopPart.back() = ids.outer; // [.., DIDs outermost first, local part]
  loopPart.push_back(ids.inner);
  local = ids.inner;
  cutBy *= s;
  deviceIds.push_back(ids.outer);
  nested_ = true;
}

Bindings CaseBuilder::bindSymbols() {
  Bindings bindings;
  for (const auto &name : symbols_) {
    auto it = divisors_.find(name);
    bindings[name] = it == divisors_.end() ? rand_.between(1, options_.maxExtent)
                                           : it->second * rand_.between(1, 2);
  }
  return bindings;
}

std::vector<Lowering> CaseBuilder::lowerings(const std::vector<int64_t> &pDevices,
                                             const std::vector<int64_t> &cDevices,
                                             const std::optional<DeviceMesh> &pMesh,
                                             const std::optional<DeviceMesh> &cMesh) {
  std::vector<Lowering> result;
  auto add = [&](CommKind kind, std::vector<Team> teams, bool permute = false) {
    result.push_back(Lowering{kind, std::move(teams), permute});
  };
  auto teamsOf = [](const std::vector<std::vector<int64_t>> &lines) {
    std::vector<Team> teams;
    for (const auto &line : lines)
      teams.push_back(Team{line, std::nullopt, {}});
    return teams;
  };
  add(CommKind::None, {});
  add(CommKind::Alias, {});
  if (pDevices.empty() || cDevices.empty())
    return result;
  // Symmetric collectives: the producer's devices as one team, and the lines
  // along each axis of either mesh (distinct team sets only).
  std::set<std::vector<std::vector<int64_t>>> teamSets{{pDevices}};
  for (const auto *mesh : {&pMesh, &cMesh})
    for (int a = 0; *mesh && a < (*mesh)->rank(); ++a)
      teamSets.insert(meshLines(**mesh, a));
  for (CommKind kind :
       {CommKind::Allgather, CommKind::AllToAll, CommKind::Allreduce, CommKind::ReduceScatter})
    for (const auto &lines : teamSets) {
      auto teams = teamsOf(lines);
      add(kind, teams);
      // Uneven buffers: the padded form (docs/semantics.md, Padded
      // collectives) in place of the permute composite.
      if (uneven_)
        result.push_back(*paddedLowering(result.back()));
      if ((kind == CommKind::Allgather || kind == CommKind::AllToAll) && rand_.percent(40) &&
          !uneven_)
        add(kind, teams, true);
    }
  // Rooted collectives between the two meshes.
  auto withRoot = [](std::vector<int64_t> devices, int64_t root, bool rootJoins) {
    if (rootJoins && std::find(devices.begin(), devices.end(), root) == devices.end())
      devices.push_back(root);
    return std::vector<Team>{Team{devices, root, {}}};
  };
  add(CommKind::Gather, withRoot(pDevices, cDevices[0], true));
  add(CommKind::Gather, withRoot(pDevices, cDevices[0], true), true);
  add(CommKind::Reduce, withRoot(pDevices, cDevices[0], true));
  // A root that is not a data member only receives (the checker's own
  // Gather and Reduce into another mesh look like this).
  add(CommKind::Gather, withRoot(pDevices, cDevices[0], false));
  add(CommKind::Reduce, withRoot(pDevices, cDevices[0], false));
  add(CommKind::Scatter, withRoot(cDevices, pDevices[0], false));
  add(CommKind::Broadcast, withRoot(cDevices, pDevices[0], false));
  add(CommKind::Broadcast, withRoot(cDevices, pDevices[0], true));
  Team pairs;
  for (size_t i = 0; i < std::min(pDevices.size(), cDevices.size()); ++i)
    pairs.pairs.push_back({pDevices[i], cDevices[i]});
  add(CommKind::SendRecv, {pairs});
  if (uneven_)
    result.push_back(*paddedLowering(result.back()));
  return result;
}

std::string CaseBuilder::describe(const std::string &op, TensorNum p, TensorNum c,
                                  const Bindings &bindings) const {
  const Fusion &f = builder_.fusion();
  auto tensor = [&](TensorNum t) {
    std::string s = f.tensorStr(t);
    const auto &tv = f.tensor(t);
    if (tv.hasAllocation()) {
      s += " allocation[";
      for (size_t i = 0; i < tv.allocation.size(); ++i)
        s += (i ? ", " : "") + f.id(tv.allocation[i]).str();
      s += "]";
    }
    return s;
  };
  std::string s = op + ": " + tensor(p) + " -> " + tensor(c) + " bindings{";
  for (const auto &[name, value] : bindings)
    s += " " + name + "=" + std::to_string(value);
  return s + " }";
}

RandomEdgeCase CaseBuilder::build() {
  const Op op = static_cast<Op>(rand_.between(0, 3));
  const int rank = static_cast<int>(rand_.between(1, options_.maxRank));
  DeviceMesh pMeshValue = randomMesh(0);
  std::optional<DeviceMesh> pMesh = pMeshValue;
  std::optional<DeviceMesh> cMesh =
      rand_.percent(options_.differentMeshPercent) ? otherMesh(pMeshValue) : pMesh;
  if (rand_.percent(options_.noMeshPercent))
    (rand_.percent(50) ? pMesh : cMesh) = std::nullopt;
  std::vector<int64_t> meshSizes = pMeshValue.shape();
  if (cMesh)
    meshSizes.insert(meshSizes.end(), cMesh->shape().begin(), cMesh->shape().end());
  const std::vector<Axis> axes = randomShape(rank, meshSizes);

  std::vector<IterType> full(rank, IterType::Iteration);
  TensorNum producer = 0, consumer = 0;
  std::string opName;
  if (op == Op::Set || op == Op::Unary) {
    std::vector<IterType> types = full;
    if (rand_.percent(20)) // Broadcast axes in both, as in the seed's y.
      types[rand_.between(0, rank - 1)] = IterType::Broadcast;
    producer = makeTensor(axes, types, pMesh);
    consumer = makeTensor(axes, types, cMesh);
    opName = op == Op::Set ? "Set" : "neg";
    builder_.expr(op == Op::Set ? OpKind::Set : OpKind::Unary, opName, {producer}, consumer);
  } else if (op == Op::Binary) {
    std::vector<IterType> broadcastOperand = full;
    broadcastOperand[rand_.between(0, rank - 1)] = IterType::Broadcast;
    TensorNum a = makeTensor(axes, full, pMesh);
    TensorNum b = makeTensor(axes, broadcastOperand, pMesh);
    consumer = makeTensor(axes, full, cMesh);
    opName = "+";
    builder_.expr(OpKind::Binary, opName, {a, b}, consumer);
    producer = rand_.percent(50) ? b : a;
  } else {
    std::vector<IterType> reduced = full;
    reduced[rand_.between(0, rank - 1)] = IterType::Reduction;
    producer = makeTensor(axes, full, pMesh);
    consumer = makeTensor(axes, reduced, cMesh);
    opName = "reduction";
    builder_.expr(OpKind::Reduction, opName, {producer}, consumer);
    builder_.fusion().exprs.back().attrs.push_back({"op", "add"});
  }

  RandomEdgeCase result;
  result.bindings = bindSymbols();
  result.edge = builder_.edge(producer, consumer);
  const Fusion &f = builder_.fusion();
  auto devicesOf = [&](const std::optional<DeviceMesh> &mesh) {
    if (!mesh)
      return fusionDevices(f);
    return mesh->devices();
  };
  result.lowerings = lowerings(devicesOf(pMesh), devicesOf(cMesh), pMesh, cMesh);
  result.description = describe(opName, producer, consumer, result.bindings);
  result.nested = nested_;
  result.fusion = builder_.fusion();
  return result;
}

} // namespace

RandomEdgeCase randomEdge(std::mt19937_64 &rng, const RandomEdgeOptions &options) {
  return CaseBuilder(rng, options).build();
}

} // namespace shardcheck::bruteforce
