// The check-sharding command line (DESIGN section 6): flags and usage,
// reading each file, checking it with checkDocument (checker/CheckDocument.h),
// writing the plan asked for, and the text or JSON output (Render.h) with its
// summary (Summary.h).
//
// The tool's main is one call to checkShardingMain, so tests run exactly the
// code users run. This file does not decide anything: every verdict comes
// from the checker library. Exit statuses: 0 all proved and no error diagnostics; 1
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
/// The same, with standard input (the input `-`) read from `in`; a long
/// run draws a progress line on `err` when `errIsTerminal` (Progress.h).
int runCheckSharding(const std::vector<std::string> &args, std::istream &in, std::ostream &out,
                     std::ostream &err, bool errIsTerminal = false);

/// main() of the check-sharding tool.
int checkShardingMain(int argc, char **argv);

} // namespace shardcheck
