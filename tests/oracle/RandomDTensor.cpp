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

/// Fusion 1: the model's sequence mapped as if recorded, or why not.
void addModelledSequence(dtensor::DTensorCase c, dtensor::DTensorBackend backend, DTensorDraw &r) {
  dtensor::ModelledPlan model = dtensor::modelDTensorPlan(c, backend);
  std::string where = backend == dtensor::DTensorBackend::Cpu ? "CPU" : "CUDA";
  if (!model.plan) {
    r.sequence = "DTensor's plan unknown: " + model.unknownWhy;
    return;
  }
  if (model.plan->steps.empty()) {
    r.sequence = "DTensor does not redistribute";
    return;
  }
  c.issued = *model.plan;
  try {
    Document doc = dtensor::dtensorToDocument(c);
    r.fusions.push_back(std::move(doc.fusions.at(1)));
    r.sequence = "DTensor's modelled sequence (" + where + ")";
  } catch (const InputError &e) {
    r.sequence =
        "DTensor's modelled sequence (" + where + ") not mapped: " + e.diagnostic().message;
  }
}

} // namespace

DTensorDraw randomDTensor(uint64_t seed) {
  DTensorDraw r;
  r.seed = seed;
  r.document = drawDocument(seed);
  dtensor::DTensorCase c = dtensor::readDTensorCase(r.document, "oracle-dtensor.json");
  try {
    r.fusions.push_back(std::move(dtensor::dtensorToDocument(c).fusions.at(0)));
  } catch (const InputError &e) {
    r.rejected = e.diagnostic().message;
    return r;
  }
  addModelledSequence(c, seed % 2 ? dtensor::DTensorBackend::Cuda : dtensor::DTensorBackend::Cpu,
                      r);
  return r;
}

} // namespace shardcheck::oracle
