// Structural comparison of two Documents, for the round-trip tests and the
// fuzz harnesses (not part of the product: it lives with the tests).
//
// Does not: read or write documents (ir/Json.h).
#pragma once

#include "ir/Fusion.h"

#include <string>

namespace shardcheck {

/// Structural equality of two documents (every field, locations included),
/// used by the round-trip tests. On inequality, `why` says where.
bool documentsEqual(const Document &a, const Document &b, std::string *why = nullptr);

/// What a relaxed comparison may ignore.
struct DocumentCompareOptions {
  /// Skip every SourceLoc (node locations, tensor domain locations, fusion
  /// locations). Document::file is still compared.
  bool ignoreLocations = false;
  /// Compare Fusion::transforms as a set (matched by their output IDs) and an
  /// IterDomain's definition by the transform's content rather than its index:
  /// a printed and re-read fusion lists transforms tensor by tensor, which
  /// need not be the order the original was read in.
  bool ignoreTransformOrder = false;
};

/// documentsEqual with some differences ignored (see DocumentCompareOptions).
bool documentsEqual(const Document &a, const Document &b, const DocumentCompareOptions &options,
                    std::string *why = nullptr);

} // namespace shardcheck
