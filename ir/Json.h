// shardcheck's JSON IR: a documented, versioned, lossless form of a Document.
//
// The format is specified in docs/json-ir.md (format "shardcheck-ir", version
// 1). Reading JSON produces exactly the Document the nvFuser reader produced
// before it was written (dump -> JSON -> IR is identical to dump -> IR),
// locations included. Malformed JSON, a wrong version or an inconsistent IR
// (unknown IDs, duplicate numbers) is an InputError with a location.
#pragma once

#include "ir/Fusion.h"

#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace shardcheck {

/// The format version written into and required from every JSON IR file.
constexpr int kJsonIrVersion = 1;

nlohmann::json documentToJson(const Document &doc);
std::string documentToJsonText(const Document &doc);

/// An extent as JSON IR writes it: an integer, a symbol's name, or
/// {"op", "lhs", "rhs"} (docs/json-ir.md).
nlohmann::json extentToJson(const Extent &e);
/// The extent a JSON value spells, or nullopt when it spells none or one no
/// reader accepts (ir/json/InputRules.h): a constant outside 0..INT64_MAX, a
/// division by the constant 0, constants folding to a negative number, or
/// nesting past the JSON readers' depth limit.
std::optional<Extent> extentFromJson(const nlohmann::json &v, int depth = 0);

/// JSON text as shardcheck writes it: known keys in a fixed order, values
/// that fit on a line kept on one line, a final newline.
std::string jsonToText(const nlohmann::json &value);

/// Reads JSON IR text (docs/json-ir.md, its limits included); a document
/// without a fusion is refused (`no-fusion`) as an empty dump is. `file` is
/// used in locations.
Document documentFromJsonText(std::string_view text, const std::string &file);

} // namespace shardcheck
