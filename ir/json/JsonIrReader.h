// Validating JSON IR -> Document conversion (internal to ir/json).
//
// readJsonIr checks the parsed JSON against the schema of docs/json-ir.md and
// against every invariant Fusion's add* factories assert (unique numbers,
// known IDs and tensors, one definition per IterDomain), plus the structure
// the dump reader guarantees and later passes rely on (transform arities, an
// acyclic transform graph, domains derived from the logical (root) domain,
// one contiguity entry per allocation/logical ID, segment group indices in
// range). Each failure is an InputError located at the
// offending value or its enclosing object, naming the JSON path. Only then are
// the factories called, so they never assert on user input.
//
// It does not parse text (parseJsonText in JsonText.h does) and does not lint
// the IR.
#pragma once

#include "ir/Fusion.h"
#include "ir/json/JsonPositions.h"

#include <nlohmann/json.hpp>
#include <string>

namespace shardcheck::jsonir {

/// Builds the Document a JSON IR value describes. `file` is the JSON file's
/// name: the document's file when the JSON names none, and the file of
/// locations the JSON leaves out (they point into the JSON itself).
/// `basePath` is the JSON pointer of `root` within the text `positions`
/// scanned (empty for a whole JSON IR file; `/fusion` inside a plan).
Document readJsonIr(const nlohmann::json &root, const JsonPositions &positions,
                    const std::string &file, const std::string &basePath = "");

} // namespace shardcheck::jsonir
