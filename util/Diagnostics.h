// Located diagnostics, the user-error exception and internal assertions.
//
// Every message shardcheck shows a user goes through here, so that all of them
// share the compiler-style shape `FILE:LINE:COL: error: message` with optional
// notes. User errors (bad input, bad flags) are kept apart from internal errors
// (a broken invariant of shardcheck itself): the former are `InputError`s that
// tools turn into exit status 2, the latter abort through SC_ASSERT.
//
// This file does not decide exit statuses and does not format JSON; tools do.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <stdexcept>
#include <string>
#include <vector>

namespace shardcheck {

/// A position in an input file. Lines and columns count from 1; 0 means
/// "unknown" (e.g. for IR built programmatically).
struct SourceLoc {
  std::string file;
  int line = 0;
  int column = 0;

  bool known() const { return line > 0; }
  /// `FILE:LINE:COL`, or just `FILE` when the position is unknown.
  std::string str() const;
};

enum class Severity { Error, Warning, Note };

const char *severityName(Severity s);

/// One finding. `code` is a stable machine-readable identifier (e.g.
/// `duplicate-did`), used by `--format json` and by tests.
struct Diagnostic {
  Severity severity = Severity::Error;
  std::string code;
  std::string message;
  SourceLoc loc;
  std::vector<Diagnostic> notes;

  Diagnostic &addNote(std::string message, SourceLoc loc = {});
};

/// Collects diagnostics in order; nothing is printed until asked.
class DiagnosticEngine {
public:
  Diagnostic &error(std::string code, std::string message, SourceLoc loc);
  Diagnostic &warning(std::string code, std::string message, SourceLoc loc);
  void add(Diagnostic d) { diags_.push_back(std::move(d)); }

  const std::vector<Diagnostic> &diagnostics() const { return diags_; }
  bool hasErrors() const;
  size_t count(Severity s) const;

  /// Prints every diagnostic (and its notes) compiler-style.
  void print(std::ostream &os) const;

private:
  std::vector<Diagnostic> diags_;
};

/// Prints one diagnostic with its notes, `FILE:LINE:COL: severity: message`.
void printDiagnostic(std::ostream &os, const Diagnostic &d);

/// A user error: malformed input, an inconsistent plan, a bad flag. Tools
/// report it and exit with status 2. Never used for shardcheck's own bugs.
class InputError : public std::runtime_error {
public:
  explicit InputError(Diagnostic d);
  const Diagnostic &diagnostic() const { return diag_; }

private:
  Diagnostic diag_;
};

/// Throws an InputError with code `code` at `loc`.
[[noreturn]] void throwInputError(std::string code, std::string message, SourceLoc loc = {});

/// Reports a broken internal invariant and aborts (exit status 70, EX_SOFTWARE).
[[noreturn]] void internalError(const char *file, int line, const std::string &message);

} // namespace shardcheck

/// Asserts an internal invariant. Not for user input: use InputError there.
#define SC_ASSERT(cond, msg)                                                                       \
  do {                                                                                             \
    if (!(cond))                                                                                   \
      ::shardcheck::internalError(__FILE__, __LINE__,                                              \
                                  std::string("assertion `" #cond "` failed: ") + (msg));          \
  } while (0)
