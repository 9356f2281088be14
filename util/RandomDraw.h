// Portable random draws for the test generators (random edges, random
// fusions): the standard distributions differ across standard libraries, so
// a seed must give the same cases everywhere.
//
// BasicDraw<Engine> wraps a std::mt19937_64 it owns (Draw) or borrows
// (DrawFrom). It does not decide what a generator draws.
#pragma once

#include <cstdint>
#include <random>
#include <utility>
#include <vector>

namespace shardcheck {

template <class Engine> class BasicDraw {
public:
  explicit BasicDraw(Engine engine) : rng_(engine) {}
  /// Uniform in [lo, hi].
  int64_t between(int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(rng_() % static_cast<uint64_t>(hi - lo + 1));
  }
  bool percent(int p) { return between(0, 99) < p; }
  template <class T> const T &pick(const std::vector<T> &v) {
    return v[static_cast<size_t>(between(0, static_cast<int64_t>(v.size()) - 1))];
  }
  template <class T> void shuffle(std::vector<T> &v) {
    for (size_t i = v.size(); i > 1; --i)
      std::swap(v[i - 1], v[static_cast<size_t>(between(0, static_cast<int64_t>(i) - 1))]);
  }

private:
  Engine rng_;
};

/// Draws from an engine of its own, seeded.
using Draw = BasicDraw<std::mt19937_64>;
/// Draws from an engine its owner keeps.
using DrawFrom = BasicDraw<std::mt19937_64 &>;

} // namespace shardcheck
