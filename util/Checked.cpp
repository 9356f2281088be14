// Implementation of util/Checked.h.
#include "util/Checked.h"

namespace shardcheck {

std::optional<int64_t> checkedMul(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r))
    return std::nullopt;
  return r;
}

std::optional<int64_t> checkedAdd(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r))
    return std::nullopt;
  return r;
}

namespace {
[[noreturn]] void throwOverflow(const char *op, int64_t a, int64_t b, const std::string &what,
                                SourceLoc loc) {
  throwInputError("size-overflow",
                  what + " overflows a signed 64-bit integer (" + std::to_string(a) + op +
                      std::to_string(b) + "); see docs/limits.md",
                  std::move(loc));
}
} // namespace

int64_t mulOrThrow(int64_t a, int64_t b, const std::string &what, SourceLoc loc) {
  if (auto r = checkedMul(a, b))
    return *r;
  throwOverflow(" * ", a, b, what, std::move(loc));
}

int64_t addOrThrow(int64_t a, int64_t b, const std::string &what, SourceLoc loc) {
  if (auto r = checkedAdd(a, b))
    return *r;
  throwOverflow(" + ", a, b, what, std::move(loc));
}

std::string shownToken(std::string_view token, size_t limit) {
  if (token.size() <= limit)
    return std::string(token);
  // Cut between UTF-8 characters, so that the message stays valid UTF-8
  // (JSON output refuses anything else).
  while (limit > 0 && (static_cast<unsigned char>(token[limit]) & 0xC0) == 0x80)
    --limit;
  return std::string(token.substr(0, limit)) + "... (" + std::to_string(token.size()) + " bytes)";
}

} // namespace shardcheck
