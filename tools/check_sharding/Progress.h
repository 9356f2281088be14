// check-sharding's progress line on standard error, shown when standard
// error is a terminal and the run is long (past kProgressAfterS seconds):
// files done of all, the rate and the time left, redrawn in place with `\r`
// at most every kProgressEveryS seconds and cleared before the results are
// printed.
//
// This file does not check, and never writes where the results go; the line
// it draws is thread-safe to update from check-sharding's workers.
#pragma once

#include <chrono>
#include <cstddef>
#include <iosfwd>
#include <mutex>
#include <string>

namespace shardcheck::checksharding {

inline constexpr double kProgressAfterS = 2.0;
inline constexpr double kProgressEveryS = 0.5;

/// The progress text after `done` of `total` files in `elapsedS` seconds,
/// e.g. `check-sharding: 40/200 files, 12.5 files/s, about 13 s left`.
std::string progressText(size_t done, size_t total, double elapsedS);

class ProgressLine {
public:
  /// `err` null: draws nothing.
  ProgressLine(std::ostream *err, size_t total);

  /// One more file done.
  void fileDone();
  /// Clears the line if one was drawn.
  void finish();

private:
  std::ostream *err_;
  size_t total_, done_ = 0, width_ = 0;
  std::chrono::steady_clock::time_point start_, lastDrawn_;
  std::mutex mutex_;
};

} // namespace shardcheck::checksharding
