// DTensor's greedy redistribute plan, modelled; see DTensorPlan.h.
//
// Two parts: the transform list (which mesh dim goes from what to what, in
// DTensor's order; the same on every rank) and its execution on every
// rank's local shape (which collective, which group, which padded buffer
// shapes). Internal impossibilities are thrown as Unknown and become the
// plan's unknownWhy. It does not check anything.
#include "dtensor/DTensorPlan.h"

#include "checker/CostModel.h"
#include "dtensor/DTensorToIr.h"
#include "ir/Types.h"

#include <algorithm>
#include <functional>
#include <sstream>

namespace shardcheck::dtensor {

namespace {

using Shape = std::vector<int64_t>;

/// Why the model does not know DTensor's plan (caught by modelDTensorPlan).
struct Unknown {
  std::string why;
};

struct Transform {
  int64_t meshDim = 0;
  Placement from, to;
};

bool samePlacement(const Placement &a, const Placement &b) {
  return a.kind == b.kind && (!a.isShard() || a.dim == b.dim) &&
         (!a.isPartial() || a.reduceOp == b.reduceOp);
}

bool samePlacements(const std::vector<Placement> &a, const std::vector<Placement> &b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), samePlacement);
}

Placement replicate() {
  Placement p;
  p.spelling = "Replicate()";
  return p;
}

Placement shardOf(int64_t dim) {
  Placement p;
  p.kind = Placement::Kind::Shard;
  p.dim = dim;
  p.spelling = "Shard(" + std::to_string(dim) + ")";
  return p;
}

/// torch.chunk's size of chunk `index` of `size` in `n`
/// (Shard.local_shard_size_and_offset).
int64_t chunkSize(int64_t size, int64_t n, int64_t index) {
  int64_t full = size / n + (size % n != 0);
  return index >= n ? 0 : std::clamp<int64_t>(size - full * index, 0, full);
}

int64_t ceilDiv(int64_t a, int64_t b) {
  return a / b + (a % b != 0);
}

/// a * b, or Unknown where a padded or gathered size leaves 64 bits.
int64_t times(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r))
    throw Unknown{"a padded or gathered buffer's size overflows 64 bits"};
  return r;
}

std::string shapeText(const Shape &s) {
  std::string t = "[";
  for (size_t i = 0; i < s.size(); ++i)
    t += (i ? ", " : "") + std::to_string(s[i]);
  return t + "]";
}

/// generate_greedy_transform_infos: inner-to-outer mesh dims first (a
/// target Shard whose tensor dim is sharded differently on the mesh dims
/// before it is replicated first), then outer-to-inner for what remains.
std::vector<Transform> greedyTransforms(const DTensorCase &c) {
  std::vector<Placement> cur = c.source.perMeshDim;
  const std::vector<Placement> &dst = c.target.perMeshDim;
  int64_t rank = c.mesh.rank();
  if (rank == 1)
    return {{0, cur[0], dst[0]}};
  std::vector<Transform> out;
  int64_t numShards = 1;
  for (int64_t k = 0; k < rank; ++k)
    numShards *= cur[k].isShard() ? c.mesh.shape()[k] : 1;
  if (numShards > 1)
    for (int64_t k = rank - 1; k >= 0; --k) {
      Placement target = dst[k];
      if (target.isShard()) {
        bool aligned = true;
        for (int64_t i = 0; i < k; ++i)
          aligned &= (cur[i].isShard() && cur[i].dim == target.dim) ==
                     (dst[i].isShard() && dst[i].dim == target.dim);
        if (!aligned)
          target = replicate();
      }
      if (!samePlacement(cur[k], target)) {
        out.push_back({k, cur[k], target});
        cur[k] = target;
      }
    }
  for (int64_t k = 0; k < rank; ++k)
    if (!samePlacement(cur[k], dst[k])) {
      out.push_back({k, cur[k], dst[k]});
      cur[k] = dst[k];
    }
  return out;
}

bool isDefaultOrder(const std::map<int64_t, std::vector<int64_t>> &order) {
  return std::all_of(order.begin(), order.end(), [](const auto &e) {
    return std::is_sorted(e.second.begin(), e.second.end());
  });
}

/// Executes transforms on every rank's local shape, recording what DTensor
/// issues.
class Executor {
public:
  Executor(const DTensorCase &c, DTensorBackend backend) : c_(c), backend_(backend) {
    for (size_t r = 0; r < c.mesh.devices().size(); ++r)
      coords_.push_back(c.mesh.coordinates(c.mesh.devices()[r]));
  }

  /// Local shapes from the source placements in `order`.
  void start(const std::map<int64_t, std::vector<int64_t>> &order) {
    for (const auto &coord : coords_) {
      Shape s = c_.shape;
      for (const auto &[d, dims] : order)
        for (int64_t k : dims)
          s[d] = chunkSize(s[d], c_.mesh.shape()[k], coord[k]);
      local_.push_back(s);
    }
  }

  /// DTensor's logical shape per mesh dim, per rank (greedy: from the
  /// source, each Shard before the last mesh dim chunking it once).
  void greedyLogicalShapes() {
    for (const auto &coord : coords_) {
      std::vector<Shape> perDim = {c_.shape};
      for (int64_t k = 0; k + 1 < c_.mesh.rank(); ++k) {
        Shape next = perDim.back();
        const Placement &p = c_.source.perMeshDim[k];
        if (p.isShard())
          next[p.dim] = chunkSize(next[p.dim], c_.mesh.shape()[k], coord[k]);
        perDim.push_back(next);
      }
      logical_.push_back(perDim);
    }
  }

  /// One logical shape for every mesh dim, per rank (the forced plan of a
  /// non-default order sets the gathered dims' entries itself).
  void setLogical(int64_t meshDim, int64_t dim, const std::vector<int64_t> &sizePerRank) {
    if (logical_.empty())
      logical_.assign(coords_.size(), std::vector<Shape>(c_.mesh.rank(), c_.shape));
    for (size_t r = 0; r < coords_.size(); ++r)
      logical_[r][meshDim][dim] = sizePerRank[r];
  }

  int64_t localSize(size_t r, int64_t dim) const { return local_[r][dim]; }
  const std::vector<int64_t> &coord(size_t r) const { return coords_[r]; }
  size_t ranks() const { return coords_.size(); }

  void apply(const Transform &t);
  Issued take() { return std::move(issued_); }

private:
  struct Call {
    Shape in, out, after;
  };
  void collective(const Transform &t, const std::string &kind, const std::string &reduceOp,
                  const std::function<Call(size_t)> &perRank);
  Call allGather(const Transform &t, size_t r) const;
  Call reduceScatter(const Transform &t, size_t r) const;
  Call shardToShard(const Transform &t, size_t r) const;

  const DTensorCase &c_;
  DTensorBackend backend_;
  std::vector<std::vector<int64_t>> coords_;
  std::vector<Shape> local_;
  std::vector<std::vector<Shape>> logical_;
  Issued issued_;
};

/// Shard._to_replicate_tensor: pad to the logical chunk when uneven,
/// all_gather (recorded as gathered along dim 0), unpad.
Executor::Call Executor::allGather(const Transform &t, size_t r) const {
  int64_t n = c_.mesh.shape()[t.meshDim], d = t.from.dim;
  int64_t logical = logical_[r][t.meshDim][d];
  Call call{local_[r], {}, local_[r]};
  if (logical % n != 0) {
    int64_t full = ceilDiv(logical, n);
    if (full < call.in[d])
      throw Unknown{"rank " + std::to_string(c_.mesh.devices()[r]) + " holds " +
                    std::to_string(call.in[d]) + " of dim " + std::to_string(d) +
                    ", more than DTensor's padded chunk " + std::to_string(full)};
    call.in[d] = full;
    call.after[d] = logical;
  } else {
    call.after[d] = times(n, call.in[d]);
  }
  call.out = call.in;
  call.out[0] = times(call.out[0], n);
  return call;
}

/// Shard._reduce_shard_tensor: pad the local dim to a multiple of n when
/// uneven, reduce_scatter (a dim other than 0 is chunked and stacked along
/// dim 0 first), unpad to the rank's chunk.
Executor::Call Executor::reduceScatter(const Transform &t, size_t r) const {
  int64_t n = c_.mesh.shape()[t.meshDim], d = t.to.dim;
  Call call{local_[r], local_[r], local_[r]};
  int64_t size = local_[r][d], full = ceilDiv(size, n);
  call.out[d] = full;
  if (d == 0) {
    call.in[0] = times(full, n);
  } else {
    call.in[d] = full;
    call.in[0] = times(call.in[0], n);
  }
  call.after[d] = size % n != 0 ? chunkSize(size, n, coord(r)[t.meshDim]) : full;
  return call;
}

/// Shard._to_new_shard_dim: pad the old dim to its logical chunk and the
/// new dim to n of its logical chunks (each when uneven), all_to_all (on a
/// CPU mesh: all_gather along the old dim and a chunk of the new), unpad.
Executor::Call Executor::shardToShard(const Transform &t, size_t r) const {
  int64_t n = c_.mesh.shape()[t.meshDim], a = t.from.dim, b = t.to.dim;
  const Shape &logical = logical_[r][t.meshDim];
  Call call{local_[r], {}, {}};
  std::string rankName = "rank " + std::to_string(c_.mesh.devices()[r]);
  if (logical[a] % n != 0) {
    if (ceilDiv(logical[a], n) < call.in[a])
      throw Unknown{rankName + " holds more of dim " + std::to_string(a) +
                    " than DTensor's padded chunk"};
    call.in[a] = ceilDiv(logical[a], n);
  }
  if (logical[b] % n != 0) {
    int64_t padded = times(ceilDiv(logical[b], n), n);
    if (padded < call.in[b])
      throw Unknown{rankName + " holds more of dim " + std::to_string(b) +
                    " than DTensor pads it to"};
    call.in[b] = padded;
  } else if (call.in[b] % n != 0) {
    throw Unknown{rankName + "'s dim " + std::to_string(b) + " (" + std::to_string(call.in[b]) +
                  ") does not split in " + std::to_string(n) + " and DTensor does not pad it"};
  }
  call.after = call.in;
  call.after[a] = logical[a] % n != 0 ? logical[a] : times(n, call.in[a]);
  call.after[b] =
      logical[b] % n != 0 ? chunkSize(logical[b], n, coord(r)[t.meshDim]) : call.in[b] / n;
  call.out = call.in;
  if (backend_ == DTensorBackend::Cpu) {
    call.out[0] = times(call.out[0], n);
  } else {
    call.out[a] = times(call.out[a], n);
    call.out[b] /= n;
  }
  return call;
}

void Executor::collective(const Transform &t, const std::string &kind, const std::string &reduceOp,
                          const std::function<Call(size_t)> &perRank) {
  IssuedCollective coll;
  coll.kind = kind;
  coll.op = "modelled";
  coll.reduceOp = reduceOp;
  std::map<std::vector<int64_t>, int64_t> countOfGroup;
  std::vector<Shape> after;
  for (size_t r = 0; r < ranks(); ++r) {
    Call call = perRank(r);
    int64_t device = c_.mesh.devices()[r];
    RankCall rc{device, groupAlong(c_.mesh, t.meshDim, device), call.in, call.out};
    int64_t count = 1;
    for (int64_t s : call.in)
      count = times(count, s);
    auto [it, fresh] = countOfGroup.emplace(rc.group, count);
    if (!fresh && it->second != count)
      throw Unknown{"the ranks of group " + shapeText(rc.group) + " would pass " +
                    std::to_string(it->second) + " and " + std::to_string(count) +
                    " elements to one " + kind};
    coll.ranks.push_back(std::move(rc));
    after.push_back(call.after);
  }
  local_ = after;
  issued_.steps.back().collectives.push_back(issued_.collectives.size());
  issued_.collectives.push_back(std::move(coll));
}

void Executor::apply(const Transform &t) {
  issued_.steps.push_back(IssuedStep{t.meshDim, t.from, t.to, {}, {}});
  int64_t n = c_.mesh.shape()[t.meshDim];
  if (samePlacement(t.from, t.to) || n == 1)
    return;
  if (t.from.isPartial() && t.to.kind == Placement::Kind::Replicate)
    return collective(t, "all_reduce", t.from.reduceOp, [&](size_t r) {
      return Call{local_[r], local_[r], local_[r]};
    });
  if (t.from.isShard() && t.to.kind == Placement::Kind::Replicate)
    return collective(t, "all_gather", "", [&](size_t r) { return allGather(t, r); });
  if (t.from.isPartial() && t.to.isShard())
    return collective(t, "reduce_scatter", t.from.reduceOp,
                      [&](size_t r) { return reduceScatter(t, r); });
  if (t.from.isShard() && t.to.isShard())
    return collective(t, backend_ == DTensorBackend::Cpu ? "all_gather" : "all_to_all", "",
                      [&](size_t r) { return shardToShard(t, r); });
  if (t.from.kind == Placement::Kind::Replicate && t.to.isShard()) {
    for (size_t r = 0; r < ranks(); ++r)
      local_[r][t.to.dim] = chunkSize(local_[r][t.to.dim], n, coord(r)[t.meshDim]);
    return;
  }
  if (t.from.isShard() && t.to.isPartial())
    throw Unknown{"DTensor raises on " + t.from.spelling + " -> " + t.to.spelling +
                  " (\"not supported yet\")"};
  // Replicate -> Partial rewrites values locally; Partial -> Partial is a no-op.
}

/// A non-default shard order: DTensor's graph-based planner. Its plan is
/// forced only when one tensor dim is sharded, nothing is partial and the
/// target replicates everything: each mesh dim gathered, innermost first.
Issued forcedGraphPlan(const DTensorCase &c, const std::map<int64_t, std::vector<int64_t>> &order,
                       DTensorBackend backend) {
  bool allReplicate =
      std::all_of(c.target.perMeshDim.begin(), c.target.perMeshDim.end(),
                  [](const Placement &p) { return p.kind == Placement::Kind::Replicate; });
  bool anyPartial = std::any_of(c.source.perMeshDim.begin(), c.source.perMeshDim.end(),
                                [](const Placement &p) { return p.isPartial(); });
  if (order.size() != 1 || !allReplicate || anyPartial)
    throw Unknown{"a non-default shard order: DTensor plans it with its graph-based search "
                  "(Dijkstra over its own cost model), which this model reproduces only for "
                  "one sharded tensor dim gathered to all-Replicate"};
  const auto &[d, dims] = *order.begin();
  Executor ex(c, backend);
  ex.start(order);
  for (size_t j = dims.size(); j-- > 0;) {
    // The logical size of d at level j: chunked by the mesh dims before it.
    std::vector<int64_t> sizes;
    for (size_t r = 0; r < ex.ranks(); ++r) {
      int64_t s = c.shape[d];
      for (size_t i = 0; i < j; ++i)
        s = chunkSize(s, c.mesh.shape()[dims[i]], ex.coord(r)[dims[i]]);
      sizes.push_back(s);
    }
    ex.setLogical(dims[j], d, sizes);
    ex.apply({dims[j], shardOf(d), replicate()});
  }
  return ex.take();
}

void requireModelledShape(const DTensorCase &c) {
  int64_t rank = c.mesh.rank();
  for (const Placements *ps : {&c.source, &c.target}) {
    if (static_cast<int64_t>(ps->perMeshDim.size()) != rank)
      throw Unknown{"not one placement per mesh dim"};
    for (const Placement &p : ps->perMeshDim)
      if (p.isShard() && (p.dim < 0 || p.dim >= static_cast<int64_t>(c.shape.size())))
        throw Unknown{p.spelling + " names no dim of the tensor"};
  }
}

Issued modelOrThrow(const DTensorCase &c, DTensorBackend backend) {
  requireModelledShape(c);
  std::map<int64_t, std::vector<int64_t>> srcOrder, dstOrder;
  try {
    srcOrder = shardOrder(c, c.source);
    dstOrder = shardOrder(c, c.target);
  } catch (const InputError &e) {
    throw Unknown{e.diagnostic().message};
  }
  bool sameOrders = srcOrder == dstOrder;
  if (samePlacements(c.source.perMeshDim, c.target.perMeshDim) && sameOrders)
    return Issued{}; // DTensor does not redistribute.
  if (!isDefaultOrder(srcOrder) || !isDefaultOrder(dstOrder))
    return forcedGraphPlan(c, srcOrder, backend);
  Executor ex(c, backend);
  ex.start(srcOrder);
  ex.greedyLogicalShapes();
  for (const Transform &t : greedyTransforms(c))
    ex.apply(t);
  return ex.take();
}

std::string placementText(const Placement &p) {
  if (p.isShard())
    return "Shard(" + std::to_string(p.dim) + ")";
  return p.isPartial() ? "Partial(" + p.reduceOp + ")" : "Replicate()";
}

std::string stepDifference(size_t i, const IssuedStep &a, const IssuedStep &b) {
  if (a.meshDim != b.meshDim || !samePlacement(a.from, b.from) || !samePlacement(a.to, b.to))
    return "step " + std::to_string(i) + ": recorded mesh dim " + std::to_string(a.meshDim) + " " +
           placementText(a.from) + " -> " + placementText(a.to) + ", modelled mesh dim " +
           std::to_string(b.meshDim) + " " + placementText(b.from) + " -> " + placementText(b.to);
  if (a.collectives != b.collectives)
    return "step " + std::to_string(i) + ": recorded " + std::to_string(a.collectives.size()) +
           " collectives, modelled " + std::to_string(b.collectives.size());
  return "";
}

std::string collectiveDifference(size_t i, const IssuedCollective &a, const IssuedCollective &b) {
  std::string at = "collective " + std::to_string(i) + ": ";
  if (a.kind != b.kind || a.reduceOp != b.reduceOp)
    return at + "recorded " + a.kind + " " + a.reduceOp + ", modelled " + b.kind + " " + b.reduceOp;
  auto byRank = [](const IssuedCollective &c) {
    std::map<int64_t, const RankCall *> m;
    for (const RankCall &r : c.ranks)
      m[r.rank] = &r;
    return m;
  };
  auto ra = byRank(a), rb = byRank(b);
  if (ra.size() != rb.size())
    return at + "recorded " + std::to_string(ra.size()) + " ranks, modelled " +
           std::to_string(rb.size());
  for (const auto &[rank, x] : ra) {
    auto it = rb.find(rank);
    if (it == rb.end())
      return at + "rank " + std::to_string(rank) + " is not modelled";
    const RankCall &y = *it->second;
    if (x->group != y.group || x->inputShape != y.inputShape || x->outputShape != y.outputShape)
      return at + "rank " + std::to_string(rank) + " recorded group " + shapeText(x->group) + " " +
             shapeText(x->inputShape) + " -> " + shapeText(x->outputShape) + ", modelled group " +
             shapeText(y.group) + " " + shapeText(y.inputShape) + " -> " + shapeText(y.outputShape);
  }
  return "";
}

} // namespace

ModelledPlan modelDTensorPlan(const DTensorCase &c, DTensorBackend backend) {
  try {
    return {modelOrThrow(c, backend), ""};
  } catch (const Unknown &u) {
    return {std::nullopt, u.why};
  }
}

std::string firstDifference(const Issued &recorded, const Issued &modelled) {
  if (recorded.steps.size() != modelled.steps.size())
    return "recorded " + std::to_string(recorded.steps.size()) + " steps, modelled " +
           std::to_string(modelled.steps.size());
  for (size_t i = 0; i < recorded.steps.size(); ++i)
    if (std::string why = stepDifference(i, recorded.steps[i], modelled.steps[i]); !why.empty())
      return why;
  if (recorded.collectives.size() != modelled.collectives.size())
    return "recorded " + std::to_string(recorded.collectives.size()) + " collectives, modelled " +
           std::to_string(modelled.collectives.size());
  for (size_t i = 0; i < recorded.collectives.size(); ++i)
    if (std::string why = collectiveDifference(i, recorded.collectives[i], modelled.collectives[i]);
        !why.empty())
      return why;
  return "";
}

std::map<int64_t, double> bytesPerRank(const Issued &seq, int elementSize) {
  std::map<int64_t, double> total;
  auto count = [](const Shape &s) { // Recorded shapes: any size, so no int64 product.
    double n = 1;
    for (int64_t x : s)
      n *= static_cast<double>(x);
    return n;
  };
  for (const IssuedCollective &coll : seq.collectives) {
    auto type = coll.kind == "broadcast" ? std::optional(CollectiveType::Broadcast)
                                         : collectiveOf(coll.kind);
    for (const RankCall &r : coll.ranks)
      total[r.rank] += type ? collectiveBytes(*type, static_cast<int64_t>(r.group.size()),
                                              count(r.inputShape) * elementSize,
                                              count(r.outputShape) * elementSize)
                            : 0;
  }
  return total;
}

double mostBytesPerRank(const Issued &seq, int elementSize) {
  double most = 0;
  for (const auto &[_, b] : bytesPerRank(seq, elementSize))
    most = std::max(most, b);
  return most;
}

namespace {

/// One line per collective of `seq` and its total, `source` saying where
/// the sequence comes from.
void describeSequence(std::ostream &os, const Issued &seq, int elementSize,
                      const std::string &source) {
  for (size_t i = 0; i < seq.collectives.size(); ++i) {
    const IssuedCollective &coll = seq.collectives[i];
    Issued one;
    one.collectives = {coll};
    os << "DTensor collective " << i << ": " << coll.kind << " over "
       << (coll.ranks.empty() ? 0 : coll.ranks.front().group.size()) << " ranks, "
       << static_cast<int64_t>(mostBytesPerRank(one, elementSize)) << " bytes per rank (most)\n";
  }
  os << "DTensor's sequence: " << seq.collectives.size()
     << (seq.collectives.size() == 1 ? " collective, " : " collectives, ")
     << static_cast<int64_t>(mostBytesPerRank(seq, elementSize)) << " bytes per rank (most), "
     << source << "\n";
}

} // namespace

DTensorBackend recordedBackend(const Issued &recorded) {
  bool allToAll = std::any_of(recorded.collectives.begin(), recorded.collectives.end(),
                              [](const IssuedCollective &c) { return c.kind == "all_to_all"; });
  return allToAll ? DTensorBackend::Cuda : DTensorBackend::Cpu;
}

ModelledPlan reportedSequence(const DTensorCase &c, std::string &source) {
  if (c.issued && !c.issued->steps.empty()) {
    source = "from the recording";
    return {c.issued, ""};
  }
  ModelledPlan model = modelDTensorPlan(c, DTensorBackend::Cuda);
  source = model.plan ? "from the model of DTensor's greedy plan (PyTorch 2.11, CUDA: all_to_all)"
                      : "not recorded; the model of its plan does not know it";
  return model;
}

std::string dtensorBytesReport(const DTensorCase &c) {
  int elementSize = dataTypeSize(dataTypeOf(c.dtype));
  std::ostringstream os;
  std::string source;
  ModelledPlan reported = reportedSequence(c, source);
  if (!reported.plan) {
    os << "DTensor's sequence: unknown (" << source << ": " << reported.unknownWhy << ")\n";
    return os.str();
  }
  describeSequence(os, *reported.plan, elementSize, source);
  if (c.issued && !c.issued->steps.empty()) {
    DTensorBackend backend = recordedBackend(*c.issued);
    ModelledPlan model = modelDTensorPlan(c, backend);
    std::string diff = model.plan ? firstDifference(*c.issued, *model.plan) : "";
    os << "model of DTensor's greedy plan (" << (backend == DTensorBackend::Cpu ? "CPU" : "CUDA")
       << " process group): "
       << (!model.plan    ? "unknown: " + model.unknownWhy
           : diff.empty() ? std::string("agrees with the recording")
                          : "differs from the recording: " + diff)
       << "\n";
  }
  return os.str();
}

} // namespace shardcheck::dtensor
