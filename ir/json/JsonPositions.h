// Where each value of a JSON text starts, by JSON pointer path.
//
// nlohmann::json keeps no source positions, yet every JSON IR error must name
// FILE:LINE:COL. JsonPositions is a light second pass over text that nlohmann
// already accepted: it records the byte offset at which every value starts,
// keyed by its JSON pointer (`/fusions/0/tensors/3/logical`), and notes the
// first duplicated object key (nlohmann silently keeps the last one).
//
// Keys are recorded as written between the quotes (escape sequences are not
// decoded), which is exact for every key the JSON IR defines. This class does
// not validate JSON; it assumes the text parses.
#pragma once

#include "util/Diagnostics.h"

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace shardcheck::jsonir {

/// Appends one JSON pointer reference token (escaping `~` and `/`).
std::string appendPointer(const std::string &path, std::string_view token);
std::string appendPointer(const std::string &path, size_t index);

class JsonPositions {
public:
  /// Scans `text`, which must be valid JSON.
  JsonPositions(std::string_view text, std::string file);

  /// The location of the value at `path`, or of its nearest recorded
  /// ancestor (the whole document at worst).
  SourceLoc locate(const std::string &path) const;
  /// The location of a byte offset (clamped to the text).
  SourceLoc locateOffset(size_t offset) const;

  struct DuplicateKey {
    std::string path; ///< Pointer of the second occurrence's value.
    size_t offset = 0;
  };
  /// The first key that occurs twice in one object, if any.
  const std::optional<DuplicateKey> &duplicateKey() const { return duplicate_; }

private:
  void scan(std::string_view text);
  std::string file_;
  size_t textSize_ = 0;
  std::vector<size_t> lineStarts_;
  std::unordered_map<std::string, size_t> offsets_;
  std::optional<DuplicateKey> duplicate_;
};

/// The FILE:LINE:COL of a byte offset in any text (used for nlohmann's parse
/// errors, where no JsonPositions can be built). Columns count bytes from 1.
SourceLoc locateOffsetIn(std::string_view text, size_t offset, const std::string &file);

} // namespace shardcheck::jsonir
