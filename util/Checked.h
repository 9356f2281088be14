// Overflow-checked integer arithmetic for sizes, and bounded echoes of user
// tokens in messages.
//
// Every size shardcheck computes from user input (extents, element counts,
// byte counts, offsets) goes through these helpers, so that an input whose
// sizes do not fit in int64 ends in a located `size-overflow` error (or an
// `unsupported` verdict, where a caller prefers one) instead of a wrapped
// number that a later step would trust. `shownToken` keeps an error message
// about a 50 MB name to one readable line.
//
// This file does not decide which limits apply (docs/limits.md lists them)
// and does not print anything.
#pragma once

#include "util/Diagnostics.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace shardcheck {

/// a * b, or nullopt on int64 overflow.
std::optional<int64_t> checkedMul(int64_t a, int64_t b);
/// a + b, or nullopt on int64 overflow.
std::optional<int64_t> checkedAdd(int64_t a, int64_t b);

/// a * b; on overflow throws an InputError with code `size-overflow` at `loc`
/// whose message names `what` (e.g. "the element count of T1").
int64_t mulOrThrow(int64_t a, int64_t b, const std::string &what, SourceLoc loc = {});
/// a + b, likewise.
int64_t addOrThrow(int64_t a, int64_t b, const std::string &what, SourceLoc loc = {});

/// `token` as a message may quote it: whole when at most `limit` bytes,
/// else its first `limit` bytes (fewer, to end between UTF-8 characters) and
/// "... (N bytes)".
std::string shownToken(std::string_view token, size_t limit = 80);

} // namespace shardcheck
