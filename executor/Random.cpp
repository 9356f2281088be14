// Seeded deterministic input generation; see Random.h.
#include "executor/Random.h"

#include <cmath>

namespace shardcheck {

double uniformUnit(std::mt19937_64 &rng) {
  // 53 bits fill a double's significand exactly: every value is k * 2^-53.
  return static_cast<double>(rng() >> 11) * std::ldexp(1.0, -53);
}

namespace {

bool isUnsigned(DataType d) {
  return d == DataType::UInt8 || d == DataType::UInt16 || d == DataType::UInt32 ||
         d == DataType::UInt64;
}

double randomValue(DataType dtype, std::mt19937_64 &rng, int integerRange) {
  double u = uniformUnit(rng);
  if (dtype == DataType::Bool)
    return u < 0.5 ? 0.0 : 1.0;
  if (isIntegralDtype(dtype))
    return isUnsigned(dtype) ? std::floor(u * 8.0) : std::floor(u * 16.0) - 8.0;
  if (integerRange > 0) { // Small nonzero integers: exact in every floating dtype.
    double k = std::floor(u * (2 * integerRange)); // 0 .. 2n-1
    return k < integerRange ? k - integerRange : k - integerRange + 1;
  }
  // Rounding may carry values just below 1 up to 1; keep them in [-1, 1).
  double v = roundToDtype(2.0 * u - 1.0, dtype);
  return v >= 1.0 ? largestBelowOne(dtype) : v;
}

} // namespace

HostTensor randomTensor(const std::vector<int64_t> &shape, DataType dtype, std::mt19937_64 &rng,
                        int integerRange) {
  HostTensor t(shape, dtype);
  for (double &v : t.data())
    v = randomValue(dtype, rng, integerRange);
  return t;
}

std::map<TensorNum, HostTensor> randomInputs(const Fusion &fusion, const Bindings &symbols,
                                             uint64_t seed, int integerRange) {
  std::mt19937_64 rng(seed);
  std::map<TensorNum, HostTensor> inputs;
  for (TensorNum t : referenceInputs(fusion))
    inputs.emplace(t, randomTensor(referenceShape(fusion, t, symbols), fusion.tensor(t).dtype, rng,
                                   integerRange));
  return inputs;
}

} // namespace shardcheck
