// The check-sharding driver: command-line parsing, reading, linting,
// checking every edge, and text/JSON output (DESIGN section 6).
//
// The tool's main is one call to checkShardingMain, so tests run exactly the
// code users run. Exit statuses: 0 all proved and no error diagnostics; 1
// findings (refuted compiler choices, error lints, unsupported reshardings);
// 2 unreadable input or bad usage; 3 something unknown and nothing refuted.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace shardcheck {

/// Runs check-sharding with `args` (without the program name), writing to
/// `out` and `err`. Returns the exit status.
int runCheckSharding(const std::vector<std::string> &args, std::ostream &out, std::ostream &err);

/// main() of the check-sharding tool.
int checkShardingMain(int argc, char **argv);

} // namespace shardcheck
