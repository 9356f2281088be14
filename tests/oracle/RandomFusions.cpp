// Seeded random fusion specs and the fusions they describe; see
// RandomFusions.h.
//
// Structure: Draw wraps the engine with portable draws. Generator draws one
// spec: a main mesh, then either a chain of expressions (each op adds its
// output tensor and any new operand it needs) or a host IR fusion around one
// Communication. SpecBuilder turns a spec into a Fusion through
// FusionBuilder. valueBound and specFeatures read a spec.
#include "tests/oracle/RandomFusions.h"

#include "util/RandomDraw.h"

#include "ir/FusionBuilder.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <numeric>
#include <random>

namespace shardcheck::oracle {

namespace {

std::vector<int> iota(size_t n) {
  std::vector<int> v(n);
  std::iota(v.begin(), v.end(), 0);
  return v;
}

ExprSpec exprOf(OpKind kind, std::string op, std::vector<int> inputs, int output,
                std::vector<bool> flags = {},
                std::vector<std::pair<std::string, std::string>> attrs = {}) {
  ExprSpec e;
  e.kind = kind;
  e.op = std::move(op);
  e.inputs = std::move(inputs);
  e.output = output;
  e.flags = std::move(flags);
  e.attrs = std::move(attrs);
  return e;
}

AxisSpec iterationAxis(int dim) {
  return AxisSpec{IterType::Iteration, dim, std::nullopt};
}
AxisSpec broadcastAxis() {
  return AxisSpec{IterType::Broadcast, -1, std::nullopt};
}

/// A sharding by `did` in `style`, not nested.
Shard shardOf(ParallelType did, ShardStyle style) {
  Shard s;
  s.did = did;
  s.style = style;
  return s;
}

const std::vector<CollectiveType> kCollectives = {
    CollectiveType::Allgather,     CollectiveType::Gather,    CollectiveType::Scatter,
    CollectiveType::Broadcast,     CollectiveType::Allreduce, CollectiveType::Reduce,
    CollectiveType::ReduceScatter, CollectiveType::SendRecv,  CollectiveType::AllToAll};

const std::vector<std::string> kUnaryOps = {"neg", "abs", "relu"};

bool isReducingType(CollectiveType t) {
  return t == CollectiveType::Allreduce || t == CollectiveType::Reduce ||
         t == CollectiveType::ReduceScatter;
}

bool hasRoot(CollectiveType t) {
  return t == CollectiveType::Gather || t == CollectiveType::Scatter ||
         t == CollectiveType::Broadcast || t == CollectiveType::Reduce ||
         t == CollectiveType::SendRecv;
}

// ---------------------------------------------------------------------------
// Generator: draws one spec.

class Generator {
public:
  Generator(uint64_t seed, const RandomFusionOptions &options)
      : draw_(std::mt19937_64(seed)), options_(options) {
    spec_.seed = seed;
  }
  FusionSpec build();

private:
  // --- Meshes. ---
  DeviceMesh randomMesh(int64_t firstDevice, int64_t maxDevices, int maxRank);
  int addMesh(DeviceMesh mesh);
  int secondMesh(int mesh);
  int singleDeviceMesh(int64_t device) { return addMesh(DeviceMesh::linear({device})); }
  std::vector<ParallelType> didsOf(int mesh) const;
  int64_t axisSize(int mesh, ParallelType did) const {
    return spec_.meshes[static_cast<size_t>(mesh)].extentOf(did);
  }
  const DeviceMesh &mesh(int m) const { return spec_.meshes[static_cast<size_t>(m)]; }

  // --- Sizes and shardings. ---
  int newDim(int mesh);
  int constantDim(int64_t extent);
  void drawNesting(int dim, int mesh);
  std::optional<Shard> shardFor(int dim, ParallelType did, int mesh, bool follow);
  void drawShards(TensorSpec &t);
  void nestShard(AxisSpec &a, const std::vector<ParallelType> &dids, std::set<ParallelType> &used,
                 int m, bool follow);
  void drawAllocation(TensorSpec &t);

  // --- Tensors. ---
  int add(TensorSpec t, bool shard = true);
  std::vector<AxisSpec> dataAxes(int tensor) const;
  int newInput(std::vector<AxisSpec> axes, int mesh);
  int meshFor(int tensor) const { return spec_.tensors[static_cast<size_t>(tensor)].mesh; }
  bool nestsChunked(int tensor) const;
  void addExpr(ExprSpec e) { spec_.exprs.push_back(std::move(e)); }

  // --- Ops: each consumes `cur` and returns the output it adds. ---
  int step(int cur);
  int opUnary(int cur);
  int opBinary(int cur);
  int opReduction(int cur);
  int opContraction(int cur);
  void forceOperandShards(int a, int b, int k, int combo);
  int opPermute(int cur);
  int opBroadcast(int cur);
  int opSqueeze(int cur);
  int opExpand(int cur);
  int opReshape(int cur);
  std::vector<int> positionsOf(const std::vector<AxisSpec> &axes, IterType type,
                               bool expandedToo = true) const;

  // --- Host IR. ---
  void hostIrFusion();
  CommunicationInfo plausibleCommunication(CollectiveType type, TensorSpec &p, TensorSpec &c);
  void mutateCommunication(CommunicationInfo &info, TensorSpec &p, TensorSpec &c);
  void forceShard(TensorSpec &t, size_t position, ParallelType did);

  Draw draw_;
  RandomFusionOptions options_;
  FusionSpec spec_;
  std::map<int, std::optional<ParallelType>> preferred_; ///< Per size: the DID most axes follow.
  /// Per size: the nesting below its preferred DID that the axes following
  /// it mostly take (no DID: none), so that nested shardings, chunked ones
  /// included, line up across producers and consumers.
  struct Nesting {
    std::optional<ParallelType> did;
    bool chunked = false;
  };
  std::map<int, Nesting> nesting_;
  /// Drawing a Set's consumer that reshards on its mesh: its axes ignore
  /// the preferred DIDs, so that several DIDs move at once (the multi-step
  /// planner's edges).
  bool reshard_ = false;
  int mainMesh_ = 0;
};

DeviceMesh Generator::randomMesh(int64_t firstDevice, int64_t maxDevices, int maxRank) {
  static const std::vector<std::vector<int64_t>> k1d = {{1}, {2}, {2}, {3}, {4}, {4}};
  static const std::vector<std::vector<int64_t>> k2d = {{2, 2}, {2, 3}, {3, 2}, {1, 2},
                                                        {2, 1}, {2, 4}, {2, 2}};
  static const std::vector<std::vector<int64_t>> k3d = {{2, 2, 2}, {1, 2, 2}, {2, 1, 2}, {2, 2, 1}};
  int64_t roll = draw_.between(0, 99);
  int rank = roll < 55 ? 1 : roll < 88 ? 2 : 3;
  rank = std::min(rank, maxRank);
  std::vector<std::vector<int64_t>> shapes = rank == 1 ? k1d : rank == 2 ? k2d : k3d;
  std::erase_if(shapes, [&](const auto &s) {
    return std::accumulate(s.begin(), s.end(), int64_t{1}, std::multiplies<>()) > maxDevices;
  });
  std::vector<int64_t> shape = shapes.empty() ? std::vector<int64_t>{1} : draw_.pick(shapes);
  int64_t n = std::accumulate(shape.begin(), shape.end(), int64_t{1}, std::multiplies<>());
  std::vector<int64_t> devices(static_cast<size_t>(n));
  std::iota(devices.begin(), devices.end(), firstDevice);
  if (draw_.percent(40)) // Permuted ids: DeviceMesh{1 0}, {{2 0}{3 1}}.
    draw_.shuffle(devices);
  return DeviceMesh::create(shape, devices);
}

int Generator::addMesh(DeviceMesh m) {
  for (size_t i = 0; i < spec_.meshes.size(); ++i)
    if (spec_.meshes[i] == m)
      return static_cast<int>(i);
  spec_.meshes.push_back(std::move(m));
  return static_cast<int>(spec_.meshes.size()) - 1;
}

/// Another mesh for a pipeline hand-off, a gather or a scatter: one device
/// (often one of `m`'s), `m`'s devices reversed, or a disjoint mesh.
int Generator::secondMesh(int m) {
  const DeviceMesh &from = mesh(m);
  switch (draw_.between(0, 2)) {
  case 0: {
    bool inside = draw_.percent(70);
    return singleDeviceMesh(inside ? draw_.pick(from.devices()) : from.size());
  }
  case 1: {
    std::vector<int64_t> devices = from.devices();
    std::reverse(devices.begin(), devices.end());
    return addMesh(DeviceMesh::create(from.shape(), devices));
  }
  default:
    if (from.size() > 4)
      return singleDeviceMesh(draw_.pick(from.devices()));
    return addMesh(randomMesh(from.size(), 8 - from.size(), 2));
  }
}

std::vector<ParallelType> Generator::didsOf(int m) const {
  std::vector<ParallelType> dids;
  for (int i = 0; i < std::min(mesh(m).rank(), 3); ++i)
    dids.push_back(deviceDimFromIndex(i));
  return dids;
}

/// A new size, usually a multiple of one of `m`'s axis sizes so that device
/// splits divide, sometimes an awkward one.
int Generator::newDim(int m) {
  std::vector<int64_t> sizes;
  for (ParallelType did : didsOf(m))
    sizes.push_back(axisSize(m, did));
  int64_t roll = draw_.between(0, 99);
  int64_t extent;
  if (roll < 55)
    extent = draw_.pick(sizes) * draw_.pick(std::vector<int64_t>{1, 1, 2, 3});
  else if (roll < 90)
    extent = draw_.between(1, 6);
  else
    extent = draw_.pick(std::vector<int64_t>{3, 5, 7});
  extent = std::clamp<int64_t>(extent, 1, 8);
  Dim d{extent, extent >= 2 && draw_.percent(options_.symbolicPercent)};
  spec_.dims.push_back(d);
  int index = static_cast<int>(spec_.dims.size()) - 1;
  preferred_[index] = draw_.percent(55) ? std::optional(draw_.pick(didsOf(m))) : std::nullopt;
  drawNesting(index, m);
  return index;
}

/// Sometimes a preferred nesting for size `dim`: a second DID of `m` below
/// its preferred one, chunked (for a constant size) or not.
void Generator::drawNesting(int dim, int m) {
  std::vector<ParallelType> others = didsOf(m);
  std::erase(others, preferred_[dim].value_or(ParallelType::Serial));
  if (!preferred_[dim] || others.empty() || !draw_.percent(50))
    return;
  Nesting &n = nesting_[dim];
  n.did = draw_.pick(others);
  n.chunked =
      !spec_.dims[static_cast<size_t>(dim)].symbolic && draw_.percent(options_.chunkedPercent);
}

int Generator::constantDim(int64_t extent) {
  spec_.dims.push_back(Dim{extent, false});
  return static_cast<int>(spec_.dims.size()) - 1;
}

/// A sharding of size `dim` by `did`, or none for a split that does not
/// divide (mostly). Axes that follow the size's DID (`follow`), or reshard,
/// keep such a split more often where the size nests chunked: a nested
/// uneven sharding there is what chunked splits are for.
std::optional<Shard> Generator::shardFor(int dim, ParallelType did, int m, bool follow) {
  const int64_t s = axisSize(m, did);
  const Dim &d = spec_.dims[static_cast<size_t>(dim)];
  if (d.extent == s && draw_.percent(50))
    return shardOf(did, ShardStyle::Logical);
  bool divides = d.extent % s == 0;
  bool keepUneven = draw_.percent(options_.unevenPercent) ||
                    ((follow || reshard_) && nesting_[dim].chunked && draw_.percent(85));
  if (!divides && !keepUneven)
    return std::nullopt;
  if (!d.symbolic && divides && draw_.percent(15))
    return shardOf(did, ShardStyle::InnerSplit);
  return shardOf(did, ShardStyle::OuterSplit);
}

/// Shards `t`'s axes on its mesh: each axis mostly follows its size's
/// preferred DID, sometimes takes another; each DID at most once on a
/// non-broadcast axis; broadcast axes sometimes get a (vacuous) DID.
void Generator::drawShards(TensorSpec &t) {
  if (t.mesh < 0)
    return;
  std::vector<ParallelType> dids = didsOf(t.mesh);
  std::set<ParallelType> used;
  std::vector<int> order = iota(t.axes.size());
  draw_.shuffle(order);
  for (int i : order) {
    AxisSpec &a = t.axes[static_cast<size_t>(i)];
    a.shard.reset();
    if (t.mergeAt >= 0 && (i == t.mergeAt || i == t.mergeAt + 1))
      continue; // Root IDs of the merge: the merged ID carries the sharding.
    if (a.type == IterType::Broadcast) {
      if (draw_.percent(25))
        a.shard = shardOf(draw_.pick(dids), ShardStyle::Logical);
      continue;
    }
    std::optional<ParallelType> did = preferred_[a.dim];
    bool follow = !reshard_ && did && !used.count(*did) &&
                  std::find(dids.begin(), dids.end(), *did) != dids.end() && draw_.percent(75);
    if (!follow) {
      did = draw_.pick(dids);
      if (used.count(*did) || !draw_.percent(reshard_ ? 70 : 12))
        continue;
    }
    a.shard = shardFor(a.dim, *did, t.mesh, follow);
    if (a.shard)
      used.insert(*did);
    if (a.shard && a.shard->style == ShardStyle::OuterSplit && a.type == IterType::Iteration)
      nestShard(a, dids, used, t.mesh, follow);
  }
  if (t.mergeAt >= 0 && draw_.percent(50)) {
    ParallelType did = draw_.pick(dids);
    if (!used.count(did))
      t.mergedShard = shardFor(t.mergedDim, did, t.mesh, false);
  }
}

/// Often cuts the local part of `a`'s outer split again with a DID `used`
/// does not hold yet: an axis that follows its size's DID (`follow`) mostly
/// takes the size's nesting, others draw one (now and then chunked, on a
/// constant size). A cut that does not divide is kept when chunked, else
/// seldom (a padded nested sharding).
void Generator::nestShard(AxisSpec &a, const std::vector<ParallelType> &dids,
                          std::set<ParallelType> &used, int m, bool follow) {
  std::vector<ParallelType> free;
  std::copy_if(dids.begin(), dids.end(), std::back_inserter(free),
               [&](ParallelType t) { return !used.count(t); });
  const Nesting &preferred = nesting_[a.dim];
  const Dim &d = spec_.dims[static_cast<size_t>(a.dim)];
  ParallelType did;
  bool chunked;
  const bool preferredFree =
      preferred.did && std::find(free.begin(), free.end(), *preferred.did) != free.end();
  if (follow && preferredFree && draw_.percent(80)) {
    did = *preferred.did;
    chunked = preferred.chunked;
  } else {
    if (free.empty() || !draw_.percent(60))
      return;
    did = draw_.pick(free);
    chunked = !d.symbolic && draw_.percent(preferred.chunked ? 80 : options_.chunkedPercent / 2);
  }
  const int64_t outer = axisSize(m, a.shard->did), local = (d.extent + outer - 1) / outer;
  bool divides = d.extent % outer == 0 && local % axisSize(m, did) == 0;
  if (!divides && !chunked && (d.symbolic || !draw_.percent(options_.unevenPercent)))
    return;
  a.shard->nested = did;
  a.shard->chunked = chunked;
  a.shard->chunkedOuter = chunked && draw_.percent(30);
  used.insert(did);
}

void Generator::drawAllocation(TensorSpec &t) {
  if (!draw_.percent(20))
    return;
  std::vector<int> keys = iota(t.axes.size() + 3);
  draw_.shuffle(keys);
  t.allocationKeys = keys;
  t.allocationWithDevices = draw_.percent(30);
}

int Generator::add(TensorSpec t, bool shard) {
  if (shard)
    drawShards(t);
  drawAllocation(t);
  spec_.tensors.push_back(std::move(t));
  return static_cast<int>(spec_.tensors.size()) - 1;
}

/// `tensor`'s data axes in logical order (reductions dropped), unsharded:
/// the axes a consumer of it lines up with.
std::vector<AxisSpec> Generator::dataAxes(int tensor) const {
  const TensorSpec &t = spec_.tensors[static_cast<size_t>(tensor)];
  std::vector<AxisSpec> logical;
  if (!t.permutation.empty()) {
    for (int k : t.permutation)
      logical.push_back(t.axes[static_cast<size_t>(k)]);
  } else if (t.mergeAt >= 0) {
    for (size_t i = 0; i < t.axes.size(); ++i) {
      if (static_cast<int>(i) == t.mergeAt)
        logical.push_back(iterationAxis(t.mergedDim));
      else if (static_cast<int>(i) != t.mergeAt + 1)
        logical.push_back(t.axes[i]);
    }
  } else {
    logical = t.axes;
  }
  std::erase_if(logical, [](const AxisSpec &a) { return a.type == IterType::Reduction; });
  for (AxisSpec &a : logical)
    a.shard.reset();
  return logical;
}

/// Whether an axis of `tensor` nests by a chunked split.
bool Generator::nestsChunked(int tensor) const {
  const std::vector<AxisSpec> &axes = spec_.tensors[static_cast<size_t>(tensor)].axes;
  return std::any_of(axes.begin(), axes.end(),
                     [](const AxisSpec &a) { return a.shard && a.shard->chunked; });
}

int Generator::newInput(std::vector<AxisSpec> axes, int m) {
  TensorSpec t;
  t.axes = std::move(axes);
  t.mesh = draw_.percent(4) ? -1 : m;
  return add(std::move(t));
}

std::vector<int> Generator::positionsOf(const std::vector<AxisSpec> &axes, IterType type,
                                        bool expandedToo) const {
  std::vector<int> r;
  for (size_t i = 0; i < axes.size(); ++i)
    if (axes[i].type == type && (expandedToo || axes[i].dim < 0))
      r.push_back(static_cast<int>(i));
  return r;
}

int Generator::opUnary(int cur) {
  TensorSpec out;
  out.axes = dataAxes(cur);
  out.mesh = meshFor(cur);
  bool isSet = draw_.percent(50);
  if (isSet && out.mesh >= 0 && draw_.percent(20)) // A hand-off to another mesh.
    out.mesh = secondMesh(out.mesh);
  // Now and then an op nothing models (a scan): never provable as pointwise.
  std::string op = isSet ? "Set" : draw_.percent(6) ? "cumsum" : draw_.pick(kUnaryOps);
  // Resharding a chunked nesting: the planner's chunked intermediates.
  reshard_ = isSet && out.mesh == meshFor(cur) && draw_.percent(nestsChunked(cur) ? 80 : 40);
  int o = add(std::move(out));
  reshard_ = false;
  addExpr(exprOf(isSet ? OpKind::Set : OpKind::Unary, op, {cur}, o));
  return o;
}

/// `cur` op other or other op `cur`, where other is a new input with the
/// same sizes as `cur` and some of its axes broadcast.
int Generator::opBinary(int cur) {
  std::vector<AxisSpec> axes = dataAxes(cur);
  std::vector<AxisSpec> otherAxes = axes;
  for (AxisSpec &a : otherAxes)
    if (draw_.percent(35))
      a = broadcastAxis();
  int m = meshFor(cur) >= 0 ? meshFor(cur) : mainMesh_;
  int other = newInput(otherAxes, m);
  TensorSpec out;
  for (size_t i = 0; i < axes.size(); ++i) {
    const AxisSpec &a = axes[i], &b = otherAxes[i];
    if (a.type == IterType::Iteration || b.type == IterType::Iteration)
      out.axes.push_back(iterationAxis(a.type == IterType::Iteration ? a.dim : b.dim));
    else
      out.axes.push_back(AxisSpec{IterType::Broadcast, std::max(a.dim, b.dim), std::nullopt});
  }
  out.mesh = m;
  int o = add(std::move(out));
  std::vector<int> ins =
      draw_.percent(50) ? std::vector<int>{cur, other} : std::vector<int>{other, cur};
  addExpr(exprOf(OpKind::Binary, draw_.percent(60) ? "+" : "*", ins, o));
  return o;
}

int Generator::opReduction(int cur) {
  std::vector<AxisSpec> axes = dataAxes(cur);
  std::vector<int> candidates = positionsOf(axes, IterType::Iteration);
  draw_.shuffle(candidates);
  size_t count = draw_.percent(65) ? 1 : static_cast<size_t>(draw_.between(1, candidates.size()));
  for (size_t i = 0; i < count && i < candidates.size(); ++i)
    axes[static_cast<size_t>(candidates[i])].type = IterType::Reduction;
  TensorSpec out;
  out.axes = axes;
  out.mesh = meshFor(cur);
  if (out.mesh >= 0 && draw_.percent(10)) // A reduction onto one device.
    out.mesh = singleDeviceMesh(draw_.pick(mesh(out.mesh).devices()));
  int o = add(std::move(out));
  int64_t roll = draw_.between(0, 99);
  std::string op = roll < 55 ? "add" : roll < 80 ? "max" : "mul";
  bool identity = draw_.percent(70);
  std::string init = op == "add"   ? (identity ? "0" : "1")
                     : op == "max" ? (identity ? "-inf" : "0")
                                   : (identity ? "1" : "2");
  addExpr(exprOf(OpKind::Reduction, "reduction", {cur}, o, {},
                 {{"op", op}, {"initial value", "double(" + init + ")"}, {"allreduce", "false"}}));
  return o;
}

/// matmul(A[.., M, K], B[.., K, N]) or linear(A[.., K], W[N, K][, bias[N]]),
/// with `cur` as one operand where its shape fits, else on new inputs.
int Generator::opContraction(int cur) {
  bool linear = draw_.percent(50);
  std::vector<AxisSpec> a = dataAxes(cur);
  int m = meshFor(cur) >= 0 ? meshFor(cur) : mainMesh_;
  // Sometimes one of the 16 operand sharding combinations, on new operands.
  const bool forced = mesh(m).rank() >= 2 && draw_.percent(35);
  bool fits = (a.size() == 2 || a.size() == 3) &&
              positionsOf(a, IterType::Iteration).size() == a.size() && draw_.percent(75) &&
              !forced;
  if (!fits) {
    a.clear();
    if (draw_.percent(20))
      a.push_back(iterationAxis(newDim(m))); // A batch axis.
    a.push_back(iterationAxis(newDim(m)));
    a.push_back(iterationAxis(newDim(m)));
    cur = newInput(a, m);
  }
  const size_t r = a.size();
  std::vector<AxisSpec> batch(a.begin(), a.end() - 2);
  TensorSpec out;
  out.mesh = m;
  std::vector<int> ins;
  if (linear) {
    const int k = a[r - 1].dim, n = newDim(m);
    int w = newInput({iterationAxis(n), iterationAxis(k)}, m);
    ins = {cur, w};
    if (draw_.percent(25))
      ins.push_back(newInput({iterationAxis(n)}, m));
    out.axes.assign(a.begin(), a.end() - 1);
    out.axes.push_back(iterationAxis(n));
    out.axes.push_back(AxisSpec{IterType::Reduction, k, std::nullopt});
  } else if (draw_.percent(70)) { // cur is A[.., M, K].
    const int mDim = a[r - 2].dim, k = a[r - 1].dim, n = newDim(m);
    std::vector<AxisSpec> b = batch;
    b.push_back(iterationAxis(k));
    b.push_back(iterationAxis(n));
    ins = {cur, newInput(b, m)};
    out.axes = batch;
    out.axes.push_back(iterationAxis(mDim));
    out.axes.push_back(iterationAxis(n));
    out.axes.push_back(AxisSpec{IterType::Reduction, k, std::nullopt});
  } else { // cur is B[.., K, N].
    const int k = a[r - 2].dim, n = a[r - 1].dim, mDim = newDim(m);
    std::vector<AxisSpec> left = batch;
    left.push_back(iterationAxis(mDim));
    left.push_back(iterationAxis(k));
    ins = {newInput(left, m), cur};
    out.axes = batch;
    out.axes.push_back(iterationAxis(mDim));
    out.axes.push_back(iterationAxis(n));
    out.axes.push_back(AxisSpec{IterType::Reduction, k, std::nullopt});
  }
  if (forced)
    forceOperandShards(ins[0], ins[1], a[r - 1].dim, static_cast<int>(draw_.between(0, 15)));
  int o = add(std::move(out));
  addExpr(exprOf(linear ? OpKind::Linear : OpKind::Matmul, linear ? "linear" : "matmul", ins, o));
  return o;
}

/// Shards the last two axes of the contraction operands `a` and `b` by the
/// bits of `combo` (A's first axis, A's second, B's first, B's second): the
/// contraction size `k` on DIDx, the others on DIDy, so that every
/// combination of sharded and replicated M, K and N occurs over seeds.
void Generator::forceOperandShards(int a, int b, int k, int combo) {
  for (int operand = 0; operand < 2; ++operand) {
    TensorSpec &t = spec_.tensors[static_cast<size_t>(operand == 0 ? a : b)];
    for (AxisSpec &axis : t.axes)
      axis.shard.reset();
    if (t.mesh < 0)
      continue;
    for (size_t j = 0; j < 2; ++j) {
      AxisSpec &axis = t.axes[t.axes.size() - 2 + j];
      if (!((combo >> (3 - 2 * operand - static_cast<int>(j))) & 1))
        continue;
      ParallelType did = axis.dim == k ? ParallelType::DIDx : ParallelType::DIDy;
      preferred_[axis.dim] = did;
      bool logical = spec_.dims[static_cast<size_t>(axis.dim)].extent == axisSize(t.mesh, did) &&
                     draw_.percent(50);
      axis.shard = shardOf(did, logical ? ShardStyle::Logical : ShardStyle::OuterSplit);
    }
  }
}

int Generator::opPermute(int cur) {
  TensorSpec out;
  out.axes = dataAxes(cur);
  out.mesh = meshFor(cur);
  out.permutation = iota(out.axes.size());
  while (out.permutation == iota(out.axes.size()))
    draw_.shuffle(out.permutation);
  int o = add(std::move(out));
  addExpr(exprOf(OpKind::Permute, "Set.Permute", {cur}, o, {}, {{"cache_op", "Streaming"}}));
  return o;
}

int Generator::opBroadcast(int cur) {
  std::vector<AxisSpec> axes = dataAxes(cur);
  std::vector<bool> isNew(axes.size(), false);
  for (int64_t n = draw_.between(1, 2); n > 0; --n) {
    auto at = draw_.between(0, static_cast<int64_t>(axes.size()));
    axes.insert(axes.begin() + at, broadcastAxis());
    isNew.insert(isNew.begin() + at, true);
  }
  TensorSpec out;
  out.axes = axes;
  out.mesh = meshFor(cur);
  int o = add(std::move(out));
  addExpr(exprOf(OpKind::Broadcast, "broadcast", {cur}, o, isNew));
  return o;
}

int Generator::opSqueeze(int cur) {
  std::vector<AxisSpec> axes = dataAxes(cur);
  int at = draw_.pick(positionsOf(axes, IterType::Broadcast, false));
  std::vector<bool> dropped(axes.size(), false);
  dropped[static_cast<size_t>(at)] = true;
  axes.erase(axes.begin() + at);
  TensorSpec out;
  out.axes = axes;
  out.mesh = meshFor(cur);
  int o = add(std::move(out));
  addExpr(exprOf(OpKind::Squeeze, "squeeze", {cur}, o, dropped));
  return o;
}

int Generator::opExpand(int cur) {
  std::vector<AxisSpec> axes = dataAxes(cur);
  int at = draw_.pick(positionsOf(axes, IterType::Broadcast, false));
  axes[static_cast<size_t>(at)].dim = constantDim(draw_.between(2, 4));
  TensorSpec out;
  out.axes = axes;
  out.mesh = meshFor(cur);
  int o = add(std::move(out));
  addExpr(exprOf(OpKind::Expand, "expand", {cur}, o));
  return o;
}

/// Positions j where axes j and j + 1 can merge: both iterations of
/// constant size.
std::vector<int> mergeablePositions(const std::vector<AxisSpec> &axes,
                                    const std::vector<Dim> &dims) {
  std::vector<int> r;
  auto ok = [&](const AxisSpec &a) {
    return a.type == IterType::Iteration && !dims[static_cast<size_t>(a.dim)].symbolic;
  };
  for (size_t j = 0; j + 1 < axes.size(); ++j)
    if (ok(axes[j]) && ok(axes[j + 1]))
      r.push_back(static_cast<int>(j));
  return r;
}

int Generator::opReshape(int cur) {
  TensorSpec out;
  out.axes = dataAxes(cur);
  out.mesh = meshFor(cur);
  out.mergeAt = draw_.pick(mergeablePositions(out.axes, spec_.dims));
  const size_t j = static_cast<size_t>(out.mergeAt);
  out.mergedDim = constantDim(spec_.dims[static_cast<size_t>(out.axes[j].dim)].extent *
                              spec_.dims[static_cast<size_t>(out.axes[j + 1].dim)].extent);
  preferred_[out.mergedDim] = std::nullopt;
  int o = add(std::move(out));
  addExpr(exprOf(OpKind::Reshape, "reshape", {cur}, o));
  return o;
}

/// One expression on `cur`, drawn among the ops its shape allows.
int Generator::step(int cur) {
  std::vector<AxisSpec> axes = dataAxes(cur);
  const bool hasIteration = !positionsOf(axes, IterType::Iteration).empty();
  const bool hasPlainBroadcast = !positionsOf(axes, IterType::Broadcast, false).empty();
  std::vector<std::pair<int, int (Generator::*)(int)>> ops = {
      {14, &Generator::opUnary}, {20, &Generator::opBinary}, {14, &Generator::opContraction}};
  if (hasIteration)
    ops.push_back({16, &Generator::opReduction});
  if (axes.size() >= 2)
    ops.push_back({10, &Generator::opPermute});
  if (axes.size() <= 3)
    ops.push_back({8, &Generator::opBroadcast});
  if (hasPlainBroadcast && axes.size() >= 2)
    ops.push_back({12, &Generator::opSqueeze});
  if (hasPlainBroadcast)
    ops.push_back({12, &Generator::opExpand});
  if (!mergeablePositions(axes, spec_.dims).empty())
    ops.push_back({8, &Generator::opReshape});
  int total = 0;
  for (const auto &[w, f] : ops)
    total += w;
  int64_t roll = draw_.between(0, total - 1);
  for (const auto &[w, f] : ops) {
    if (roll < w)
      return (this->*f)(cur);
    roll -= w;
  }
  return (this->*ops.back().second)(cur);
}

// --- Host IR. ---

/// Puts `did` on axis `position` of `t` (an outer split, or the logical ID
/// when the sizes agree).
void Generator::forceShard(TensorSpec &t, size_t position, ParallelType did) {
  AxisSpec &a = t.axes[position];
  const Dim &d = spec_.dims[static_cast<size_t>(a.dim)];
  bool logical = d.extent == axisSize(t.mesh, did) && draw_.percent(50);
  a.shard = shardOf(did, logical ? ShardStyle::Logical : ShardStyle::OuterSplit);
}

/// The Communication a compiler would write for `type`, shaping the
/// producer `p` and consumer `c` (axes drawn, no shardings yet) to fit it.
CommunicationInfo Generator::plausibleCommunication(CollectiveType type, TensorSpec &p,
                                                    TensorSpec &c) {
  CommunicationInfo info;
  info.type = type;
  info.backend = "NCCL";
  const std::vector<int64_t> &devices = mesh(mainMesh_).devices();
  info.team = devices;
  const size_t a = static_cast<size_t>(draw_.between(0, static_cast<int64_t>(p.axes.size()) - 1));
  size_t b = (a + 1) % p.axes.size();
  const int64_t root = draw_.pick(devices);
  p.mesh = c.mesh = mainMesh_;
  switch (type) {
  case CollectiveType::Allgather:
    forceShard(p, a, ParallelType::DIDx);
    break;
  case CollectiveType::AllToAll:
    forceShard(p, a, ParallelType::DIDx);
    if (b != a)
      forceShard(c, b, ParallelType::DIDx);
    break;
  case CollectiveType::Scatter:
    if (draw_.percent(70))
      p.mesh = singleDeviceMesh(root);
    forceShard(c, a, ParallelType::DIDx);
    info.root = root;
    break;
  case CollectiveType::Gather:
    forceShard(p, a, ParallelType::DIDx);
    c.mesh = singleDeviceMesh(root);
    info.root = root;
    break;
  case CollectiveType::Broadcast:
    p.mesh = singleDeviceMesh(root);
    info.root = root;
    break;
  case CollectiveType::SendRecv: {
    int64_t to =
        devices.size() > 1
            ? devices[(std::find(devices.begin(), devices.end(), root) - devices.begin() + 1) %
                      devices.size()]
            : root + 1;
    p.mesh = singleDeviceMesh(root);
    c.mesh = singleDeviceMesh(to);
    info.team = {root, to};
    info.root = root; // nvFuser's sender is the root.
    break;
  }
  case CollectiveType::Allreduce:
  case CollectiveType::Reduce:
  case CollectiveType::ReduceScatter:
    forceShard(p, a, ParallelType::DIDx);
    c.axes[a].type = IterType::Reduction;
    if (type == CollectiveType::ReduceScatter && b != a)
      forceShard(c, b, ParallelType::DIDx);
    if (type == CollectiveType::Reduce) {
      c.mesh = singleDeviceMesh(root);
      info.root = root;
    }
    break;
  default:
    break;
  }
  return info;
}

/// One deliberate mistake: the team's order, the type, the root, a missing
/// member, or the consumer's sharding.
void Generator::mutateCommunication(CommunicationInfo &info, TensorSpec &p, TensorSpec &c) {
  switch (draw_.between(0, 5)) {
  case 0:
    if (info.team.size() > 1)
      std::reverse(info.team.begin(), info.team.end());
    break;
  case 1:
    info.type = draw_.pick(kCollectives);
    if (hasRoot(info.type) && !info.root)
      info.root = draw_.pick(info.team);
    break;
  case 2:
    info.root = draw_.percent(70) ? draw_.pick(mesh(mainMesh_).devices()) : mesh(mainMesh_).size();
    break;
  case 3:
    if (info.team.size() > 1)
      info.team.erase(info.team.begin() + draw_.between(0, info.team.size() - 1));
    break;
  case 4:
    drawShards(c);
    break;
  default:
    for (AxisSpec &axis : p.axes)
      if (axis.shard && axis.shard->style == ShardStyle::OuterSplit &&
          spec_.dims[static_cast<size_t>(axis.dim)].extent == axisSize(p.mesh, axis.shard->did))
        axis.shard->style = ShardStyle::Logical;
      else
        axis.shard.reset();
    break;
  }
}

/// [op ->] P -> Communication -> C [-> op]: one collective, drawn as a
/// compiler would write it or with one mistake.
void Generator::hostIrFusion() {
  spec_.hostIr = true;
  std::vector<int64_t> devices(static_cast<size_t>(draw_.between(2, 4)));
  std::iota(devices.begin(), devices.end(), 0);
  if (draw_.percent(35))
    draw_.shuffle(devices);
  mainMesh_ = addMesh(DeviceMesh::linear(devices));
  const int64_t n = static_cast<int64_t>(devices.size());
  TensorSpec p, c;
  for (int64_t r = draw_.between(1, 3); r > 0; --r) {
    spec_.dims.push_back(Dim{n * draw_.between(1, 2), draw_.percent(options_.symbolicPercent)});
    p.axes.push_back(iterationAxis(static_cast<int>(spec_.dims.size()) - 1));
  }
  c.axes = p.axes;
  CollectiveType type = draw_.pick(kCollectives);
  CommunicationInfo info = plausibleCommunication(type, p, c);
  if (draw_.percent(45))
    mutateCommunication(info, p, c);
  info.number = static_cast<int>(draw_.between(1, 9));
  int producer = add(p, false);
  if (draw_.percent(35)) { // Computed on the devices first: T0 -> neg -> T1.
    int computed = add(p, false);
    addExpr(exprOf(OpKind::Unary, "neg", {producer}, computed));
    producer = computed;
  }
  int consumer = add(c, false);
  ExprSpec comm =
      exprOf(OpKind::Communication, collectiveTypeName(info.type), {producer}, consumer);
  comm.communication = info;
  addExpr(std::move(comm));
  if (draw_.percent(30)) { // Used locally after it.
    TensorSpec after;
    after.axes = dataAxes(consumer);
    after.mesh = c.mesh;
    const TensorSpec &from = spec_.tensors[static_cast<size_t>(consumer)];
    for (size_t i = 0, j = 0; i < from.axes.size(); ++i)
      if (from.axes[i].type != IterType::Reduction)
        after.axes[j++].shard = from.axes[i].shard;
    int o = add(after, false);
    addExpr(exprOf(OpKind::Unary, "neg", {consumer}, o));
  }
}

FusionSpec Generator::build() {
  if (draw_.percent(options_.hostIrPercent)) {
    hostIrFusion();
    return spec_;
  }
  mainMesh_ = addMesh(randomMesh(0, 8, 3));
  std::vector<AxisSpec> axes;
  for (int64_t r = draw_.between(1, 3); r > 0; --r)
    axes.push_back(iterationAxis(newDim(mainMesh_)));
  int cur = newInput(axes, mainMesh_);
  int64_t length = draw_.percent(12) ? 1 : draw_.between(2, options_.maxExprs);
  for (int64_t i = 0; i < length; ++i) {
    // Mostly a chain; sometimes a branch off an earlier computed tensor.
    if (i > 1 && draw_.percent(20))
      cur = spec_.exprs[static_cast<size_t>(draw_.between(0, i - 1))].output;
    cur = step(cur);
  }
  return spec_;
}

// ---------------------------------------------------------------------------
// SpecBuilder: a spec's fusion.

class SpecBuilder {
public:
  explicit SpecBuilder(const FusionSpec &spec) : spec_(spec) {}
  Fusion build();

private:
  Extent extentOf(int dim) const;
  IdNum axisId(const AxisSpec &a);
  void addTensor(const TensorSpec &t);
  /// Applies `shard` to logical ID `id`: appends its loop IDs, its layout ID
  /// and its DID ID (for a split) to the lists.
  void applyShard(IdNum id, const std::optional<Shard> &shard, int mesh, std::vector<IdNum> &loop,
                  std::vector<IdNum> &layout, std::vector<IdNum> &deviceIds);

  const FusionSpec &spec_;
  FusionBuilder b_;
};

Extent SpecBuilder::extentOf(int dim) const {
  const Dim &d = spec_.dims[static_cast<size_t>(dim)];
  return d.symbolic ? Extent::symbol("i" + std::to_string(dim)) : Extent::constant(d.extent);
}

IdNum SpecBuilder::axisId(const AxisSpec &a) {
  switch (a.type) {
  case IterType::Broadcast:
    return b_.broadcast(ParallelType::Serial,
                        a.dim >= 0 ? std::optional(extentOf(a.dim)) : std::nullopt);
  case IterType::Reduction:
    return b_.reduction(extentOf(a.dim));
  default:
    return b_.iter(extentOf(a.dim));
  }
}

void SpecBuilder::applyShard(IdNum id, const std::optional<Shard> &shard, int mesh,
                             std::vector<IdNum> &loop, std::vector<IdNum> &layout,
                             std::vector<IdNum> &deviceIds) {
  const IterDomain &d = b_.fusion().id(id);
  bool split = shard && mesh >= 0 && !d.isBroadcast() && shard->style != ShardStyle::Logical;
  if (shard && mesh >= 0 && !split)
    b_.parallelize(id, shard->did);
  if (!split) {
    loop.push_back(id);
    layout.push_back(id);
    return;
  }
  const int64_t s = spec_.meshes[static_cast<size_t>(mesh)].extentOf(shard->did);
  std::optional<int64_t> extent = d.extent.asConstant();
  // Chunked splits need a constant extent (a spec edited by hand may lack one).
  const bool chunked = shard->chunked && extent;
  auto outerSplit = [&](IdNum in, int64_t factor, bool chunkedSplit, ParallelType did) {
    return chunkedSplit ? b_.chunkedSplit(in, factor, did)
                        : b_.split(in, factor, /*innerSplit=*/false, did);
  };
  FusionBuilder::SplitIds ids;
  if (shard->style == ShardStyle::InnerSplit && extent && *extent % s == 0 && *extent >= s)
    ids = b_.split(id, *extent / s, /*innerSplit=*/true, shard->did);
  else
    ids = outerSplit(id, s, chunked && shard->chunkedOuter, shard->did);
  loop.push_back(ids.outer);
  deviceIds.push_back(ids.outer);
  if (shard->nested && shard->style == ShardStyle::OuterSplit) {
    const int64_t t = spec_.meshes[static_cast<size_t>(mesh)].extentOf(*shard->nested);
    auto cut = outerSplit(ids.inner, t, chunked, *shard->nested);
    loop.push_back(cut.outer);
    deviceIds.push_back(cut.outer);
    ids.inner = cut.inner;
  }
  loop.push_back(ids.inner);
  layout.push_back(ids.inner);
}

void SpecBuilder::addTensor(const TensorSpec &t) {
  std::vector<IdNum> ids;
  for (const AxisSpec &a : t.axes)
    ids.push_back(axisId(a));
  FusionBuilder::TensorSpec tv;
  tv.dtype = DataType::Double;
  std::vector<std::optional<Shard>> shards; // Per logical ID.
  if (!t.permutation.empty()) {
    tv.root = ids;
    for (int k : t.permutation) {
      tv.logical.push_back(ids[static_cast<size_t>(k)]);
      shards.push_back(t.axes[static_cast<size_t>(k)].shard);
    }
  } else if (t.mergeAt >= 0) {
    tv.root = ids;
    for (size_t i = 0; i < ids.size(); ++i) {
      if (static_cast<int>(i) == t.mergeAt) {
        tv.logical.push_back(b_.merge(ids[i], ids[i + 1]));
        shards.push_back(t.mergedShard);
      } else if (static_cast<int>(i) != t.mergeAt + 1) {
        tv.logical.push_back(ids[i]);
        shards.push_back(t.axes[i].shard);
      }
    }
  } else {
    tv.logical = ids;
    for (const AxisSpec &a : t.axes)
      shards.push_back(a.shard);
  }
  std::vector<IdNum> layout, deviceIds;
  for (size_t i = 0; i < tv.logical.size(); ++i)
    applyShard(tv.logical[i], shards[i], t.mesh, tv.loop, layout, deviceIds);
  if (!t.allocationKeys.empty()) {
    std::vector<IdNum> ids2 = layout;
    if (t.allocationWithDevices)
      ids2.insert(ids2.end(), deviceIds.begin(), deviceIds.end());
    std::vector<int> order = iota(ids2.size());
    auto key = [&](int i) {
      return static_cast<size_t>(i) < t.allocationKeys.size()
                 ? t.allocationKeys[static_cast<size_t>(i)]
                 : i;
    };
    std::stable_sort(order.begin(), order.end(), [&](int x, int y) { return key(x) < key(y); });
    for (int i : order)
      tv.allocation.push_back(ids2[static_cast<size_t>(i)]);
  }
  if (t.mesh >= 0)
    tv.mesh = spec_.meshes[static_cast<size_t>(t.mesh)];
  b_.tensor(tv);
}

Fusion SpecBuilder::build() {
  b_.fusion().kind = spec_.hostIr ? BlockKind::HostIr : BlockKind::Kernel;
  for (const TensorSpec &t : spec_.tensors)
    addTensor(t);
  for (const ExprSpec &e : spec_.exprs) {
    b_.expr(e.kind, e.op, e.inputs, e.output, e.flags, e.attrs);
    b_.fusion().exprs.back().communication = e.communication;
  }
  return b_.take();
}

// ---------------------------------------------------------------------------
// Reading specs.

constexpr double kSaturated = 4.6e18; // About 2^62.

double saturate(double v) {
  return std::min(v, kSaturated);
}

int64_t extentProduct(const FusionSpec &spec, const TensorSpec &t, IterType type) {
  int64_t p = 1;
  for (const AxisSpec &a : t.axes)
    if (a.type == type && a.dim >= 0)
      p *= spec.dims[static_cast<size_t>(a.dim)].extent;
  return p;
}

double initMagnitude(const ExprSpec &e) {
  std::string init = e.attrs.size() > 1 ? e.attrs[1].second : "";
  if (init.find("inf") != std::string::npos)
    return 0;
  size_t open = init.find('(');
  return open == std::string::npos ? 0 : std::fabs(std::atof(init.c_str() + open + 1));
}

bool isIdentityInit(const ExprSpec &e) {
  std::string op = e.attrs.empty() ? "" : e.attrs[0].second;
  std::string init = e.attrs.size() > 1 ? e.attrs[1].second : "";
  return (op == "add" && init == "double(0)") || (op == "mul" && init == "double(1)") ||
         (op == "max" && init == "double(-inf)");
}

} // namespace

FusionSpec randomFusion(uint64_t seed, const RandomFusionOptions &options) {
  // Redraw (from a derived seed) the rare fusion whose values could grow
  // past exact doubles.
  for (uint64_t attempt = 0;; ++attempt) {
    FusionSpec spec = Generator(seed + attempt * 0x9e3779b97f4a7c15ull, options).build();
    spec.seed = seed;
    if (valueBound(spec, options.integerRange) < 1e15 || attempt == 20)
      return spec;
  }
}

Fusion buildFusion(const FusionSpec &spec) {
  return SpecBuilder(spec).build();
}

std::map<std::string, int64_t> specBindings(const FusionSpec &spec) {
  std::map<std::string, int64_t> b;
  for (size_t i = 0; i < spec.dims.size(); ++i)
    if (spec.dims[i].symbolic)
      b["i" + std::to_string(i)] = spec.dims[i].extent;
  return b;
}

double valueBound(const FusionSpec &spec, int range) {
  std::vector<double> bound(spec.tensors.size(), range);
  for (const ExprSpec &e : spec.exprs) {
    const double in = bound[static_cast<size_t>(e.inputs[0])];
    const TensorSpec &producer = spec.tensors[static_cast<size_t>(e.inputs[0])];
    const TensorSpec &out = spec.tensors[static_cast<size_t>(e.output)];
    double v = in;
    switch (e.kind) {
    case OpKind::Binary: {
      const double other = bound[static_cast<size_t>(e.inputs[1])];
      v = e.op == "*" ? in * other : in + other;
      break;
    }
    case OpKind::Reduction: {
      const double k = static_cast<double>(extentProduct(spec, out, IterType::Reduction));
      const std::string op = e.attrs.empty() ? "add" : e.attrs[0].second;
      const double init = initMagnitude(e);
      v = op == "add"   ? in * k + init
          : op == "mul" ? std::pow(std::max(in, 1.0), k) * std::max(init, 1.0)
                        : std::max(in, init);
      break;
    }
    case OpKind::Matmul:
    case OpKind::Linear: {
      const double k = static_cast<double>(extentProduct(spec, out, IterType::Reduction));
      v = in * bound[static_cast<size_t>(e.inputs[1])] * k;
      if (e.inputs.size() > 2)
        v += bound[static_cast<size_t>(e.inputs[2])];
      break;
    }
    case OpKind::Communication: {
      // A reducing one sums over at most every device or the reduced axis.
      const double k = static_cast<double>(
          std::max<int64_t>(8, extentProduct(spec, producer, IterType::Iteration)));
      v = e.communication && isReducingType(e.communication->type) ? in * k : in;
      break;
    }
    default:
      break;
    }
    bound[static_cast<size_t>(e.output)] = saturate(v);
  }
  double m = 0;
  for (double v : bound)
    m = std::max(m, v);
  return m;
}

std::set<std::string> specFeatures(const FusionSpec &spec) {
  std::set<std::string> f;
  f.insert(spec.hostIr ? "kind:host-ir" : "kind:kernel");
  f.insert("chain:" + std::to_string(spec.exprs.size()));
  for (const DeviceMesh &m : spec.meshes) {
    f.insert("mesh:" + std::to_string(m.rank()) + "d");
    if (!std::is_sorted(m.devices().begin(), m.devices().end()))
      f.insert("mesh:permuted");
  }
  if (spec.meshes.size() > 1)
    f.insert("mesh:several");
  for (const Dim &d : spec.dims)
    if (d.symbolic)
      f.insert("size:symbolic");
  auto shardName = [](const AxisSpec &a) -> std::string {
    if (a.type == IterType::Broadcast)
      return "shard:broadcast";
    if (a.type == IterType::Reduction)
      return "shard:reduction";
    switch (a.shard->style) {
    case ShardStyle::Logical:
      return "shard:logical";
    case ShardStyle::InnerSplit:
      return "shard:inner-split";
    default:
      return "shard:loop-split";
    }
  };
  for (const TensorSpec &t : spec.tensors) {
    if (t.mesh < 0)
      f.insert("tensor:no-mesh");
    if (!t.allocationKeys.empty())
      f.insert(t.allocationWithDevices ? "alloc:with-devices" : "alloc:permuted");
    for (const AxisSpec &a : t.axes) {
      if (!a.shard || t.mesh < 0)
        continue;
      f.insert(shardName(a));
      const int64_t s = spec.meshes[static_cast<size_t>(t.mesh)].extentOf(a.shard->did);
      const bool uneven =
          a.type == IterType::Iteration && spec.dims[static_cast<size_t>(a.dim)].extent % s != 0;
      if (uneven)
        f.insert("size:uneven");
      if (!a.shard->nested || a.shard->style != ShardStyle::OuterSplit)
        continue;
      f.insert("shard:nested");
      if (a.shard->chunked)
        // Only below an outer split that does not divide is it not the plain nesting.
        f.insert(uneven ? "shard:chunked-uneven" : "shard:chunked-even");
      if (a.shard->chunked && a.shard->chunkedOuter)
        f.insert("shard:chunked-outer");
    }
    if (t.mergedShard)
      f.insert("shard:merged");
  }
  auto sharded = [&](int tensor, size_t axis) {
    const TensorSpec &t = spec.tensors[static_cast<size_t>(tensor)];
    return t.mesh >= 0 && t.permutation.empty() && t.mergeAt < 0 && axis < t.axes.size() &&
                   t.axes[axis].shard
               ? "s"
               : "r";
  };
  for (const ExprSpec &e : spec.exprs) {
    const TensorSpec &out = spec.tensors[static_cast<size_t>(e.output)];
    switch (e.kind) {
    case OpKind::Set:
      f.insert("op:set");
      break;
    case OpKind::Unary:
      f.insert(e.op == "cumsum" ? "op:unknown-scan" : "op:unary");
      break;
    case OpKind::Binary: {
      f.insert("op:binary" + e.op);
      for (int in : e.inputs)
        for (const AxisSpec &a : spec.tensors[static_cast<size_t>(in)].axes)
          if (a.type == IterType::Broadcast)
            f.insert("op:binary-broadcast-operand");
      break;
    }
    case OpKind::Reduction: {
      f.insert("op:reduction");
      f.insert("reduction:" + (e.attrs.empty() ? std::string("?") : e.attrs[0].second));
      f.insert(isIdentityInit(e) ? "init:identity" : "init:non-identity");
      int reduced = 0;
      for (size_t i = 0; i < out.axes.size(); ++i)
        if (out.axes[i].type == IterType::Reduction) {
          ++reduced;
          if (std::string(sharded(e.inputs[0], i)) == "s")
            f.insert("reduction:sharded-axis");
        }
      if (reduced > 1)
        f.insert("reduction:several-axes");
      break;
    }
    case OpKind::Matmul:
    case OpKind::Linear: {
      const std::string name = e.kind == OpKind::Matmul ? "matmul" : "linear";
      f.insert("op:" + name);
      if (e.inputs.size() > 2)
        f.insert("op:linear-bias");
      const TensorSpec &a = spec.tensors[static_cast<size_t>(e.inputs[0])];
      const TensorSpec &b = spec.tensors[static_cast<size_t>(e.inputs[1])];
      if (a.axes.size() == 3 && e.kind == OpKind::Matmul)
        f.insert("op:batched-matmul");
      // Which of A's and B's axes are sharded, e.g. `matmul:A=sr,B=rs`.
      std::string combo = name + ":A=";
      for (size_t i = a.axes.size() - 2; i < a.axes.size(); ++i)
        combo += sharded(e.inputs[0], i);
      combo += ",B=";
      for (size_t i = b.axes.size() - 2; i < b.axes.size(); ++i)
        combo += sharded(e.inputs[1], i);
      f.insert(combo);
      break;
    }
    case OpKind::Permute:
      f.insert("op:permute");
      break;
    case OpKind::Broadcast:
      f.insert("op:broadcast");
      break;
    case OpKind::Squeeze:
      f.insert("op:squeeze");
      break;
    case OpKind::Expand:
      f.insert("op:expand");
      break;
    case OpKind::Reshape:
      f.insert("op:reshape");
      break;
    case OpKind::Communication:
      f.insert(std::string("comm:") + collectiveTypeName(e.communication->type));
      break;
    default:
      break;
    }
  }
  return f;
}

FusionSpec compactSpec(FusionSpec spec) {
  std::set<int> used;
  for (const ExprSpec &e : spec.exprs) {
    used.insert(e.inputs.begin(), e.inputs.end());
    used.insert(e.output);
  }
  if (used.empty() && !spec.tensors.empty())
    used.insert(0);
  std::map<int, int> renumber;
  std::vector<TensorSpec> kept;
  for (int t : used) {
    renumber[t] = static_cast<int>(kept.size());
    kept.push_back(spec.tensors[static_cast<size_t>(t)]);
  }
  spec.tensors = std::move(kept);
  for (ExprSpec &e : spec.exprs) {
    for (int &in : e.inputs)
      in = renumber.at(in);
    e.output = renumber.at(e.output);
  }
  for (TensorSpec &t : spec.tensors)
    if (t.mergeAt >= 0)
      spec.dims[static_cast<size_t>(t.mergedDim)].extent =
          spec.dims[static_cast<size_t>(t.axes[static_cast<size_t>(t.mergeAt)].dim)].extent *
          spec.dims[static_cast<size_t>(t.axes[static_cast<size_t>(t.mergeAt) + 1].dim)].extent;
  return spec;
}

} // namespace shardcheck::oracle
