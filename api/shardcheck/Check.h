// shardcheck's public C++ API, for a compiler's own tests: check the fusion
// a test just printed without leaving the test. checkText reads the text
// (any nvFuser print check-sharding reads, a log around it, or shardcheck
// JSON IR), checks every fusion in it with checkDocument
// (checker/CheckDocument.h) and returns the DocumentReport with what
// check-sharding would print and exit with on the same text. Installed
// with the libraries (`cmake --install`, then `find_package(shardcheck)`
// and link `shardcheck::shardcheck`; examples/consumer/ shows it).
//
// This header does not print, throw on bad input (an unreadable text is a
// report with inputError set) or depend on GoogleTest (shardcheck/GTest.h
// adds EXPECT_SHARDING_VERIFIED).
#pragma once

#include "checker/CheckDocument.h"

#include <optional>
#include <string>

namespace shardcheck {

struct TextCheckOptions {
  /// The name the text's locations use (`name:LINE:COL`).
  std::string name = "<text>";
  /// Per-query solver time limit; a query past it is unknown, never proved.
  unsigned timeoutMs = 10000;
  /// Devices 0..N-1 hold tensors that have no mesh (0: every device of
  /// every mesh of the fusion), check-sharding's --devices.
  int64_t devices = 0;
  /// Whose runtime rules compiler choices must satisfy (--nvfuser-runtime).
  NvfuserRuntime runtime = NvfuserRuntime::Dec2024;
};

/// Everything checkText found.
struct TextReport {
  /// Every fusion's lints and edge verdicts (empty when unreadable).
  DocumentReport report;
  /// Set when the text could not be read at all.
  std::optional<Diagnostic> inputError;
  /// check-sharding's exit status on this text: 0 all proved and no error
  /// diagnostics, 1 findings, 2 unreadable, 3 something unknown.
  int status = 0;
  /// check-sharding's text output for it: every verdict, counterexamples,
  /// lints, one diagnostic a line (`name:LINE:COL: error: ...`).
  std::string text;

  /// Whether check-sharding passes the text (exit status 0): every edge
  /// proved, every compiler choice confirmed, no error lint, not truncated.
  bool verified() const { return status == 0; }
};

/// Reads and checks `text` with a fresh checker.
TextReport checkText(const std::string &text, const TextCheckOptions &options = {});

} // namespace shardcheck
