// Random DTensor redistributes for the oracle; see RandomDTensor.h.
//
// Draws with std::mt19937_64 and `%` (not the standard distributions, whose
// output differs across standard libraries), so a seed names one document.
// It does not check anything.
#include "tests/oracle/RandomDTensor.h"

#include "dtensor/DTensorPlan.h"
#include "dtensor/DTensorReader.h"
#include "dtensor/DTensorToIr.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <optional>
#include <random>

namespace shardcheck::oracle {

namespace {

class Draw {
public:
  explicit Draw(uint64_t seed) : rng_(seed) {}
  int64_t below(int64_t n) { return static_cast<int64_t>(rng_() % static_cast<uint64_t>(n)); }
  bool percent(int p) { return below(100) < p; }
  std::mt19937_64 &rng() { return rng_; }

private:
  std::mt19937_64 rng_;
};

/// A mesh shape of 1 to 3 dims, sizes 1 to 4, at most 8 devices.
std::vector<int64_t> drawMesh(Draw &d) {
  std::vector<int64_t> mesh;
  int64_t devices = 1, dims = 1 + d.below(3);
  for (int64_t k = 0; k < dims; ++k) {
    int64_t s = 1 + d.below(std::min<int64_t>(4, 8 / devices));
    mesh.push_back(s);
    devices *= s;
  }
  return mesh;
}

const char *const kPartials[] = {"Partial(sum)", "Partial(max)", "Partial(min)", "Partial(avg)"};
constexpr int64_t kPartialCount = sizeof kPartials / sizeof kPartials[0];

std::string drawPlacement(Draw &d, int64_t tensorDims) {
  switch (d.below(3)) {
  case 0:
    return "Replicate()";
  case 1:
    return "Shard(" + std::to_string(d.below(tensorDims)) + ")";
  default:
    return kPartials[d.below(kPartialCount)];
  }
}

std::string drawDocument(uint64_t seed) {
  Draw d(seed);
  std::vector<int64_t> mesh = drawMesh(d), devices;
  int64_t n = 1;
  for (int64_t s : mesh)
    n *= s;
  for (int64_t i = 0; i < n; ++i)
    devices.push_back(i);
  if (d.percent(30))
    std::shuffle(devices.begin(), devices.end(), d.rng());
  std::vector<int64_t> shape;
  for (int64_t i = 0, dims = 1 + d.below(3); i < dims; ++i)
    shape.push_back(1 + d.below(9));
  std::vector<std::string> src, dst;
  for (size_t k = 0; k < mesh.size(); ++k) {
    src.push_back(drawPlacement(d, static_cast<int64_t>(shape.size())));
    // A new target partial is mapped from Replicate (DTensor's local
    // partition) and rejected from a Shard or another reduce op (DTensor
    // refuses both); keep most targets mappable.
    std::string t = drawPlacement(d, static_cast<int64_t>(shape.size()));
    bool refused = t.rfind("Partial", 0) == 0 && t != src.back() && src.back() != "Replicate()";
    dst.push_back(refused && d.percent(80) ? "Replicate()" : t);
  }
  // Partials of one op on every mesh dim, reduced at once or in parts (a
  // split reduction, checker/Planner.h): drawn last, so that the documents
  // of the other seeds stay as they were.
  if (mesh.size() > 1 && d.percent(20)) {
    std::string op = kPartials[d.below(kPartialCount)];
    for (size_t k = 0; k < mesh.size(); ++k) {
      src[k] = op;
      if (dst[k].rfind("Partial", 0) == 0 && dst[k] != op)
        dst[k] = "Replicate()";
    }
  }
  nlohmann::json doc = {{"format", dtensor::kDTensorFormat},
                        {"name", "oracle-dtensor-" + std::to_string(seed)},
                        {"mesh", {{"shape", mesh}, {"devices", devices}}},
                        {"tensor", {{"shape", shape}, {"dtype", "float64"}}},
                        {"source", {{"placements", src}}},
                        {"target", {{"placements", dst}}}};
  return doc.dump();
}

/// The row along mesh dim `k` through `device`, in mesh order.
std::vector<int64_t> rowAlong(const DeviceMesh &mesh, int64_t k, int64_t device) {
  std::vector<int64_t> coords = mesh.coordinates(device), row;
  for (int64_t i = 0; i < mesh.shape()[k]; ++i) {
    coords[k] = i;
    row.push_back(mesh.deviceAt(coords));
  }
  return row;
}

/// The index of step `step`'s Communication in a mapped sequence (the
/// mapping numbers each by its step), or nullopt where the step is no
/// collective there.
std::optional<size_t> stepCommunication(const Fusion &f, int step) {
  for (size_t i = 0; i < f.exprs.size(); ++i)
    if (f.exprs[i].kind == OpKind::Communication && f.exprs[i].communication &&
        f.exprs[i].communication->number == step)
      return i;
  return std::nullopt;
}

/// Every rank's group: its row along another mesh dim of two or more
/// devices (the collective then runs over the wrong teams), else its own row
/// rotated by one (out of rank order). False where neither changes it.
bool wrongGroups(const DeviceMesh &mesh, const dtensor::IssuedStep &step,
                 dtensor::IssuedCollective &coll) {
  for (int64_t j = 0; j < mesh.rank(); ++j)
    if (j != step.meshDim && mesh.shape()[j] >= 2) {
      for (dtensor::RankCall &call : coll.ranks)
        call.group = rowAlong(mesh, j, call.rank);
      return true;
    }
  bool changed = false;
  for (dtensor::RankCall &call : coll.ranks)
    if (call.group.size() >= 2) {
      std::rotate(call.group.begin(), call.group.begin() + 1, call.group.end());
      changed = true;
    }
  return changed;
}

/// One rank's output: one more index along its dim 0.
bool wrongCounts(dtensor::IssuedCollective &coll) {
  if (coll.ranks.empty())
    return false;
  std::vector<int64_t> &shape = coll.ranks[0].outputShape;
  if (shape.empty())
    shape.push_back(2);
  else
    ++shape[0];
  return true;
}

/// A reduction's op replaced by another.
bool wrongOp(dtensor::IssuedCollective &coll) {
  if (coll.reduceOp.empty())
    return false;
  coll.reduceOp = coll.reduceOp == "sum" ? "max" : coll.reduceOp == "max" ? "min" : "sum";
  return true;
}

constexpr const char *kWrongMutations[] = {"wrong-groups", "wrong-counts", "wrong-op",
                                           "missing-pad"};

/// Fusion 2: DTensor's sequence `c.issued` (mapped to `mapped`) made wrong
/// at one step: one of its padded collectives where it has one. The
/// mutations are tried from a drawn one on until one applies; the first
/// three change the recording and map it anew (the mapping may reject it),
/// `missing-pad` drops `padded=true` from the mapped Communication (its
/// collective then moves unpadded equal chunks of uneven buffers).
void addWrongSequence(const dtensor::DTensorCase &c, const Fusion &mapped, DTensorDraw &r) {
  Draw d(r.seed ^ 0x3a09bad5eedULL); // Its own stream: the documents stay as drawn.
  const auto &steps = c.issued->steps;
  std::vector<int> collective, padded;
  for (size_t s = 0; s < steps.size(); ++s)
    if (auto e = stepCommunication(mapped, static_cast<int>(s))) {
      collective.push_back(static_cast<int>(s));
      if (isPaddedCommunication(mapped.exprs[*e]))
        padded.push_back(static_cast<int>(s));
    }
  if (collective.empty())
    return;
  const std::vector<int> &pool = padded.empty() ? collective : padded;
  const int s = pool[d.below(static_cast<int64_t>(pool.size()))];
  r.wrongStep = s;
  r.wrongPadded = !padded.empty();
  dtensor::DTensorCase wrong = c;
  dtensor::IssuedCollective &coll = wrong.issued->collectives[steps[s].collectives.at(0)];
  const int64_t first = d.below(4);
  for (int64_t i = 0; i < 4; ++i) {
    const int64_t m = (first + i) % 4;
    if (m == 3 && r.wrongPadded) {
      Fusion f = mapped;
      std::erase_if(f.exprs[*stepCommunication(f, s)].attrs,
                    [](const auto &attr) { return attr.first == kPaddedAttr; });
      r.wrongMutation = kWrongMutations[m];
      r.wrongFusion = static_cast<int>(r.fusions.size());
      r.fusions.push_back(std::move(f));
      return;
    }
    bool applied = m == 0   ? wrongGroups(c.mesh, steps[s], coll)
                   : m == 1 ? wrongCounts(coll)
                   : m == 2 ? wrongOp(coll)
                            : false;
    if (!applied)
      continue;
    r.wrongMutation = kWrongMutations[m];
    try {
      Document doc = dtensor::dtensorToDocument(wrong);
      r.wrongFusion = static_cast<int>(r.fusions.size());
      r.fusions.push_back(std::move(doc.fusions.at(1)));
    } catch (const InputError &e) {
      r.wrongRejected = e.diagnostic().message;
    }
    return;
  }
}

/// The step of `c.issued` that issued collective `i`.
int stepOfCollective(const dtensor::DTensorCase &c, size_t i) {
  for (size_t s = 0; s < c.issued->steps.size(); ++s)
    for (size_t k : c.issued->steps[s].collectives)
      if (k == i)
        return static_cast<int>(s);
  return -1;
}

/// DTensor's sequence `c.issued` with every rank of its first collective
/// whose ranks pass different sizes given the largest rank's shapes, mapped
/// anew: `rejected` (as it must be where the collective is mapped: DTensor
/// pads each group by its own chunk), `plain-edge` (the mapping makes its
/// step a plain edge, no verdict on the collective, so its counts are not
/// read) or `mapped`; empty where every collective has one size.
std::string uniformCountsVerdict(dtensor::DTensorCase c) {
  for (size_t i = 0; i < c.issued->collectives.size(); ++i) {
    dtensor::IssuedCollective &coll = c.issued->collectives[i];
    auto size = [](const dtensor::RankCall &r) {
      int64_t n = 1;
      for (int64_t s : r.inputShape)
        n *= s;
      return n;
    };
    auto largest = std::max_element(
        coll.ranks.begin(), coll.ranks.end(),
        [&](const dtensor::RankCall &a, const dtensor::RankCall &b) { return size(a) < size(b); });
    if (largest == coll.ranks.end() ||
        std::all_of(coll.ranks.begin(), coll.ranks.end(),
                    [&](const dtensor::RankCall &r) { return size(r) == size(*largest); }))
      continue;
    const dtensor::RankCall shapes = *largest;
    for (dtensor::RankCall &r : coll.ranks) {
      r.inputShape = shapes.inputShape;
      r.outputShape = shapes.outputShape;
    }
    try {
      Document doc = dtensor::dtensorToDocument(c);
      return stepCommunication(doc.fusions.at(1), stepOfCollective(c, i)) ? "mapped" : "plain-edge";
    } catch (const InputError &) {
      return "rejected";
    }
  }
  return "";
}

/// Fusion 1: the model's sequence mapped as if recorded, or why not.
void addModelledSequence(dtensor::DTensorCase c, dtensor::DTensorBackend backend, DTensorDraw &r) {
  dtensor::ModelledPlan model = dtensor::modelDTensorPlan(c, backend);
  std::string where = backend == dtensor::DTensorBackend::Cpu ? "CPU" : "CUDA";
  if (!model.plan) {
    r.sequence = "DTensor's plan unknown: " + model.unknownWhy;
    return;
  }
  if (model.plan->steps.empty()) {
    r.sequence = kNoRedistribute;
    return;
  }
  c.issued = *model.plan;
  try {
    Document doc = dtensor::dtensorToDocument(c);
    r.fusions.push_back(std::move(doc.fusions.at(1)));
    r.sequence = "DTensor's modelled sequence (" + where + ")";
    addWrongSequence(c, r.fusions.back(), r);
    if (r.nestedUneven)
      r.uniformCounts = uniformCountsVerdict(c);
  } catch (const InputError &e) {
    r.sequence =
        "DTensor's modelled sequence (" + where + ") not mapped: " + e.diagnostic().message;
  }
}

/// Whether `ps` nests a shard inside a level that does not divide (7 rows
/// on [Shard(0), Shard(0)] of 2x2: 4, 3, then 2, 2 | 2, 1).
bool nestsUnevenly(const dtensor::DTensorCase &c, const dtensor::Placements &ps) {
  for (const auto &[d, dims] : dtensor::shardOrder(c, ps)) {
    int64_t extent = c.shape[d];
    for (size_t j = 0; j + 1 < dims.size(); ++j) {
      int64_t n = c.mesh.shape()[dims[j]];
      if (extent % n != 0)
        return true;
      extent /= n;
    }
  }
  return false;
}

} // namespace

DTensorDraw randomDTensor(uint64_t seed) {
  DTensorDraw r;
  r.seed = seed;
  r.document = drawDocument(seed);
  dtensor::DTensorCase c = dtensor::readDTensorCase(r.document, "oracle-dtensor.json");
  try {
    r.fusions.push_back(std::move(dtensor::dtensorToDocument(c).fusions.at(0)));
    r.nestedUneven = nestsUnevenly(c, c.source) || nestsUnevenly(c, c.target);
  } catch (const InputError &e) {
    r.rejected = e.diagnostic().message;
    return r;
  }
  addModelledSequence(c, seed % 2 ? dtensor::DTensorBackend::Cuda : dtensor::DTensorBackend::Cpu,
                      r);
  return r;
}

} // namespace shardcheck::oracle
