// The boundary every JSON reader of shardcheck reads text through: JSON IR
// files and plans.
//
// parseJsonText checks the raw text before nlohmann sees it (well-formed
// UTF-8 as InputRules.h requires, nesting at most kMaxJsonDepth levels),
// parses it with every nlohmann exception turned into a located InputError
// (a number beyond a double's range, which nlohmann reports without a
// position, is found and located), records where each value is
// (JsonPositions) and refuses duplicate keys. A reader so gets a tree that
// is UTF-8, shallow and unique-keyed, or an error at FILE:LINE:COL; nothing
// it reads can abort the tool. The limits are listed in docs/json-ir.md
// (Limits), which plans share.
//
// This file knows no schema (JsonIrReader.cpp and PlanJson.cpp do) and does
// not write JSON.
#pragma once

#include "ir/json/InputRules.h"
#include "ir/json/JsonPositions.h"
#include "util/Checked.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace shardcheck::jsonir {

/// JSON nested deeper than this is refused before it is parsed. The formats
/// nest about 8 levels (each extent operator adds one); the bound keeps every
/// recursive walk of the tree and the position table small.
constexpr int kMaxJsonDepth = 200;

/// How one reader's errors read: `malformedCode` for text that is not JSON
/// within the limits (`textName` names it in messages: "JSON", "plan JSON"),
/// `duplicateKeyCode` for a key that occurs twice in an object.
struct JsonErrorStyle {
  std::string malformedCode;
  std::string duplicateKeyCode;
  std::string textName;
};

struct ParsedJson {
  nlohmann::json root;
  JsonPositions positions;
};

/// Parses `text` under the rules above; `file` names it in locations.
ParsedJson parseJsonText(std::string_view text, const std::string &file,
                         const JsonErrorStyle &style);

/// `v` when it is a JSON integer that fits in int64; nullopt for anything
/// else (2.5, 1e20, 18446744073709551615, a string).
std::optional<int64_t> jsonInt64(const nlohmann::json &v);

/// Runs `read` (a schema walk over parsed JSON); a nlohmann exception that
/// escapes it, which the readers' type checks should make impossible, becomes
/// an InputError with `code` at the start of `file` instead of an abort.
template <typename Read>
auto guardJsonExceptions(const std::string &file, const std::string &code, Read &&read) {
  try {
    return read();
  } catch (const nlohmann::json::exception &e) {
    throwInputError(code, "unreadable JSON value: " + shownToken(e.what(), 240),
                    SourceLoc{file, 1, 1});
  }
}

} // namespace shardcheck::jsonir
