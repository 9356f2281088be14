// Seeded, deterministic pseudo-random inputs for the reference and the
// executors.
//
// Values come from std::mt19937_64, whose output sequence the C++ standard
// fixes, converted to doubles by our own code (not std::uniform_real_
// distribution, whose algorithm each standard library chooses), so a seed
// gives the same tensors with every compiler and library.
//
// Floating tensors get values in [-1, 1) rounded to their dtype (kept below
// 1 after rounding); integer tensors get small integers (-8..7, or 0..7 when
// unsigned) so that integer ops are not degenerate; bool tensors get 0 or 1.
// On request (`integerRange` n > 0) floating tensors get nonzero integers
// uniform in [-n, n] instead, so that sums and products of a few of them are
// exact in double and a sharded run can be compared with the reference
// exactly (the fusion oracle, tests/oracle/, does that); zero is left out so
// that a product over many elements is not zero whatever the run did.
// This file does not shard or distribute inputs.
#pragma once

#include "executor/Reference.h"
#include "executor/Tensor.h"

#include <cstdint>
#include <map>
#include <random>
#include <vector>

namespace shardcheck {

/// A uniform double in [0, 1) from the top 53 bits of one generator output.
double uniformUnit(std::mt19937_64 &rng);

/// A tensor of `shape` and `dtype` filled from `rng` in row-major order;
/// with `integerRange` n > 0, floating values are nonzero integers in [-n, n].
HostTensor randomTensor(const std::vector<int64_t> &shape, DataType dtype, std::mt19937_64 &rng,
                        int integerRange = 0);

/// Values for every tensor of referenceInputs(fusion), shaped by
/// referenceShape with `symbols`, generated in ascending tensor order from one
/// generator seeded with `seed` (`integerRange` as for randomTensor).
std::map<TensorNum, HostTensor> randomInputs(const Fusion &fusion, const Bindings &symbols,
                                             uint64_t seed, int integerRange = 0);

} // namespace shardcheck
