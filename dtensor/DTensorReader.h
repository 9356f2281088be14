// Reads a DTensor document (docs/dtensor.md) into a DTensorCase.
//
// Detection is by content: a JSON object whose "format" is
// "shardcheck-dtensor/1" (isDTensorText). The reader validates the schema
// the document states (unknown fields, wrong types, a mesh whose shape does
// not match its devices, a placement it cannot spell, a step naming a
// collective that is not listed, a recorded rank that is no mesh device), each error an InputError
// located at FILE:LINE:COL of the JSON with its JSON pointer. Codes: `dtensor-format` (not this
// format or another version), `dtensor-schema` (the rules above), and the JSON text errors of
// ir/json/JsonText.h (`json-malformed`).
//
// It does not decide whether a placement has a faithful IR mapping
// (DTensorToIr.h rejects those) and does not check anything.
#pragma once

#include "dtensor/DTensorCase.h"

#include <string>
#include <string_view>

namespace shardcheck::dtensor {

/// The one version this reader reads.
inline constexpr const char *kDTensorFormat = "shardcheck-dtensor/1";

/// Whether `text` is a JSON object naming a shardcheck-dtensor format (any
/// version: a wrong version is then reported by readDTensorCase).
bool isDTensorText(std::string_view text);

/// Parses and validates a DTensor document.
DTensorCase readDTensorCase(std::string_view text, const std::string &file);

/// Parses one placement spelling (`Shard(0)`, `S(0)`, `Replicate()`, `R`,
/// `Partial(sum)`, `P`, `_StridedShard(0, split_factor=2)`); nullopt when it
/// is none of them.
std::optional<Placement> parsePlacement(std::string_view spelling);

} // namespace shardcheck::dtensor
