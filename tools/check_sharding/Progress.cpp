// check-sharding's progress line; see Progress.h.
#include "tools/check_sharding/Progress.h"

#include <cmath>
#include <cstdio>
#include <ostream>

namespace shardcheck::checksharding {

std::string progressText(size_t done, size_t total, double elapsedS) {
  double rate = elapsedS > 0 ? done / elapsedS : 0;
  char buf[160];
  if (rate > 0)
    std::snprintf(buf, sizeof buf, "check-sharding: %zu/%zu files, %.1f files/s, about %.0f s left",
                  done, total, rate, std::ceil((total - done) / rate));
  else
    std::snprintf(buf, sizeof buf, "check-sharding: %zu/%zu files", done, total);
  return buf;
}

ProgressLine::ProgressLine(std::ostream *err, size_t total)
    : err_(err), total_(total), start_(std::chrono::steady_clock::now()), lastDrawn_(start_) {}

void ProgressLine::fileDone() {
  if (!err_)
    return;
  std::lock_guard<std::mutex> lock(mutex_);
  ++done_;
  auto now = std::chrono::steady_clock::now();
  double elapsed = std::chrono::duration<double>(now - start_).count();
  double sinceDrawn = std::chrono::duration<double>(now - lastDrawn_).count();
  if (elapsed < kProgressAfterS || sinceDrawn < kProgressEveryS || done_ == total_)
    return;
  std::string text = progressText(done_, total_, elapsed);
  // Pad over a longer line drawn before.
  *err_ << "\r" << text << std::string(width_ > text.size() ? width_ - text.size() : 0, ' ')
        << std::flush;
  width_ = std::max(width_, text.size());
  lastDrawn_ = now;
}

void ProgressLine::finish() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (err_ && width_)
    *err_ << "\r" << std::string(width_, ' ') << "\r" << std::flush;
  width_ = 0;
}

} // namespace shardcheck::checksharding
