// check-sharding's inputs as given on the command line, expanded: a
// directory stands for every .txt, .log and .json file under it (recursively,
// in path order), `-` for standard input (read once, named <stdin>), and
// `@LIST` for the inputs named in file LIST, one a line (blank lines and
// lines starting with `#` skipped; a listed path is taken as written).
//
// This file does not read dumps: a named file that is missing stays an input
// (check-sharding reports it unreadable, located). Shell globs are the
// shell's.
#pragma once

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace shardcheck::checksharding {

struct Input {
  std::string name; ///< The path as given (or <stdin>), used in locations.
  /// Standard input's text; none: read the file `name`.
  std::optional<std::string> text;
};

/// The extensions a directory's files need to be inputs.
inline constexpr const char *kInputExtensions[] = {".txt", ".log", ".json"};

/// Expands `args` into `inputs`, reading standard input from `in`. Returns
/// what is wrong (an unreadable list, a directory without inputs, `-`
/// twice), or "" when nothing is.
std::string expandInputs(const std::vector<std::string> &args, std::istream &in,
                         std::vector<Input> &inputs);

} // namespace shardcheck::checksharding
