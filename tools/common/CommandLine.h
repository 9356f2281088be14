// The argument loop every tool's command line runs: --help and --version,
// options with or without a value, operands, and the usage error that ends
// a run with exit status 2 (DESIGN section 6).
//
// A tool says what each option means (a callback that reads its value and
// answers what is wrong with it); this file walks the arguments, prints the
// usage, the version and the errors in one style:
//   TOOL: error: MESSAGE
//   (run TOOL --help for usage)
//
// This file does not know any tool's options.
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace shardcheck {

/// A tool's name, usage text and version.
struct ToolInfo {
  const char *name;
  const char *usage;
  const char *version;
};

/// The next argument, as an option's value; nullopt when there is none.
using NextValue = std::function<std::optional<std::string>()>;

/// Walks `args`. `--help` (or `-h`) prints the usage and `--version` the
/// version (exit status 0); another argument that starts with `-` (and is
/// not `-` alone) goes to `option(flag, value)`, any other to
/// `operand(argument)`; each returns what is wrong ("" when nothing is),
/// which ends the walk as a usage error. Returns an exit status when the
/// walk ends the run, else nullopt.
std::optional<int>
walkArguments(const ToolInfo &tool, const std::vector<std::string> &args, std::ostream &out,
              std::ostream &err,
              const std::function<std::string(const std::string &, const NextValue &)> &option,
              const std::function<std::string(const std::string &)> &operand);

/// Prints the usage error `message` (see the banner); returns 2.
int usageError(const ToolInfo &tool, std::ostream &err, const std::string &message);

/// `s` as a decimal integer in [min, max] (digits only: no sign, no
/// spaces), or nullopt.
std::optional<uint64_t> parseDecimal(const std::string &s, uint64_t min, uint64_t max);

} // namespace shardcheck
