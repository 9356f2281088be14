// The input entry point that reads a DTensor document (docs/dtensor.md)
// beside nvFuser dumps and JSON IR: what check-sharding calls for each file.
//
// A text whose JSON "format" names shardcheck-dtensor is read and mapped to
// the IR here (DTensorReader.h, DTensorToIr.h); any other text goes to
// ir/reader's readDocument unchanged. The notes returned with the Document
// (DTensor's plan's collectives and bytes per rank, from the recording or
// from the model of its plan, DTensorPlan.h; a recorder error) are
// for the report, and the DTensor case itself, so that once the document is
// checked both plans' bytes per rank can be set side by side (PlanBytes.h).
//
// This file does not check anything and changes nothing for dumps and JSON
// IR.
#pragma once

#include "dtensor/DTensorCase.h"
#include "ir/Fusion.h"
#include "util/Diagnostics.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace shardcheck::dtensor {

struct InputDocument {
  Document doc;
  /// Notes about a DTensor document (severity Note); empty for other inputs.
  std::vector<Diagnostic> notes;
  std::optional<DTensorCase> dtensor; ///< The DTensor document read; none for other inputs.
};

/// Reads text in any format check-sharding takes; `file` names it.
InputDocument readInputDocument(std::string_view text, const std::string &file);
/// Reads a file from disk; an unreadable file is an InputError (`io`).
InputDocument readInputDocumentFile(const std::string &path);

} // namespace shardcheck::dtensor
