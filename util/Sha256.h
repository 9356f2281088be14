// SHA-256 of a byte string (FIPS 180-4), for the input hash a plan records.
//
// A plain implementation so that shardcheck needs no crypto library; it is
// used to identify inputs, not to protect anything.
#pragma once

#include <string>
#include <string_view>

namespace shardcheck {

/// The SHA-256 digest of `data` as 64 lowercase hex digits.
std::string sha256Hex(std::string_view data);

} // namespace shardcheck
