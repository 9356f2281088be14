// Where each value of a JSON text starts, by JSON pointer path.
//
// nlohmann::json keeps no source positions, yet every JSON IR and plan error
// must name FILE:LINE:COL. JsonPositions is a light second pass over text that
// nlohmann already accepted: it records the byte offset at which every value
// starts as a tree (each container lists its members), so that a JSON pointer
// (`/fusions/0/tensors/3/logical`) is located by walking it from the root, and
// notes the first duplicated object key (nlohmann silently keeps one of them).
//
// The table is linear in the text: a value costs one entry whatever its depth
// (a table keyed by full paths would cost the sum of all path lengths, which
// is quadratic in the nesting depth). Keys are decoded (escape sequences
// included) before they are compared, as nlohmann compares them.
//
// This class does not validate JSON, bound its depth or parse numbers; it
// assumes the text parses (parseJsonText in JsonText.h runs it only then).
#pragma once

#include "util/Diagnostics.h"

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace shardcheck::jsonir {

/// Appends one JSON pointer reference token (escaping `~` and `/`).
std::string appendPointer(const std::string &path, std::string_view token);
std::string appendPointer(const std::string &path, size_t index);

/// ` (at PATH)` for a message, the path bounded (a key may be huge).
std::string atPointer(const std::string &path);
/// `"token"` for a message, bounded (shownToken): input names may be huge.
std::string quotedToken(std::string_view token);

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
    std::string path;  ///< Pointer of the second occurrence's value.
    size_t offset = 0; ///< Where its key starts.
  };
  /// The first key that occurs twice in one object, if any.
  const std::optional<DuplicateKey> &duplicateKey() const { return duplicate_; }

private:
  static constexpr size_t kNone = static_cast<size_t>(-1);
  struct Value {
    size_t offset = 0;
    size_t container = kNone; ///< Index into members_ for arrays and objects.
    bool isObject = false;
  };
  struct Member {
    std::string key; ///< Decoded; empty for array elements.
    size_t value = 0;
  };

  void scan(std::string_view text);
  std::optional<size_t> child(size_t value, const std::string &token) const;

  std::string file_;
  size_t textSize_ = 0;
  std::vector<size_t> lineStarts_;
  std::vector<Value> values_; ///< In document order; values_[0] is the root.
  std::vector<std::vector<Member>> members_;
  std::optional<DuplicateKey> duplicate_;
};

/// The FILE:LINE:COL of a byte offset in any text (used for errors found
/// before a JsonPositions can be built). Columns count bytes from 1.
SourceLoc locateOffsetIn(std::string_view text, size_t offset, const std::string &file);

} // namespace shardcheck::jsonir
