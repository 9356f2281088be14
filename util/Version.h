// shardcheck's version, written into plans and printed by --version.
#pragma once

namespace shardcheck {

/// Kept equal to CMakeLists.txt's project(VERSION); a plan records the
/// version of the checker that proved it.
constexpr const char *kShardcheckVersion = "0.1.0";

} // namespace shardcheck
