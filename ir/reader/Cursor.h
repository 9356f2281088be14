// Text handling for the nvFuser dump reader: the source with its line table,
// and a cursor that scans it byte by byte and throws located InputErrors.
//
// Source owns a copy of the input in which every `// EXPECT` line (golden-test
// expectations) and every torchrun line prefix (`[rank0]:`) is blanked out
// with spaces, so no parser ever sees one while offsets, lines and columns
// stay those of the original text. Columns count
// bytes from 1.
//
// This file knows nothing about nvFuser's syntax; see Parser.h for that.
#pragma once

#include "util/Diagnostics.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace shardcheck::reader {

/// Error codes of the reader's InputErrors.
inline constexpr const char *kParseError = "parse";
inline constexpr const char *kConflictError = "inconsistent";

/// The text of one input file, with `// EXPECT` lines blanked, and its lines.
class Source {
public:
  Source(std::string_view text, std::string file);

  std::string_view text() const { return text_; }
  const std::string &file() const { return file_; }
  size_t size() const { return text_.size(); }

  /// Number of lines (a trailing newline does not start an extra line).
  size_t lineCount() const { return lineStarts_.size(); }
  /// Offset of the first byte of 0-based line `line`.
  size_t lineStart(size_t line) const { return lineStarts_[line]; }
  /// Offset of the `\n` ending line `line`, or the end of the text.
  size_t lineEnd(size_t line) const;
  /// The line without its newline and without a trailing `\r`.
  std::string_view lineText(size_t line) const;
  /// The line without leading and trailing blanks.
  std::string_view trimmedLine(size_t line) const;
  /// 0-based line containing `offset`.
  size_t lineOf(size_t offset) const;
  /// FILE:LINE:COL of an offset (1-based line and byte column).
  SourceLoc loc(size_t offset) const;

private:
  std::string text_;
  std::string file_;
  std::vector<size_t> lineStarts_;
};

/// Whether `c` is a blank inside a line (space, tab, CR, FF, VT).
bool isInlineSpace(char c);
bool isDigit(char c);
bool isIdentStart(char c);
bool isIdentChar(char c);
/// `s` without leading and trailing blanks.
std::string_view trim(std::string_view s);
/// A short printable excerpt of `s` for messages: shownToken(s, max) with
/// bytes outside printable ASCII escaped (`\xff`).
std::string excerpt(std::string_view s, size_t max = 24);

/// A position in a Source with scanning helpers. Cheap to copy, which is how
/// parsers look ahead.
class Cursor {
public:
  Cursor(const Source &src, size_t pos = 0) : src_(&src), pos_(pos) {}

  size_t pos() const { return pos_; }
  void setPos(size_t pos) { pos_ = pos; }
  const Source &source() const { return *src_; }

  bool atEnd() const { return pos_ >= src_->size(); }
  /// At a newline or the end of the text (blanks are not skipped).
  bool atLineEnd() const { return atEnd() || peek() == '\n'; }
  /// The byte `ahead` positions on, or '\0' past the end.
  char peek(size_t ahead = 0) const;
  void advance(size_t n = 1);
  bool startsWith(std::string_view s) const;
  /// Consumes `s` if the text continues with it.
  bool accept(std::string_view s);
  /// Consumes `s` or throws "expected 's' <context>, found ...".
  void expect(std::string_view s, const std::string &context);

  /// Skips blanks within the line.
  void skipSpaces();
  /// Skips blanks and newlines; returns whether a newline was crossed.
  bool skipBlank();
  /// Moves to the newline ending the current line (or the end).
  void skipToLineEnd();
  /// Moves past the newline ending the current line.
  void nextLine();
  /// Whether only blanks remain on the line.
  bool restOfLineBlank() const;
  /// The rest of the current line (without its newline).
  std::string_view restOfLine() const;

  /// A non-negative decimal integer; overflow is an error naming `what`.
  int64_t parseInt(const std::string &what);
  /// `[A-Za-z_][A-Za-z0-9_]*`; empty if none.
  std::string_view parseIdentifier();

  SourceLoc loc() const { return src_->loc(pos_); }
  SourceLoc locAt(size_t offset) const { return src_->loc(offset); }
  /// Describes what is at the cursor for messages: `'xyz'`, `end of line`.
  std::string found() const;

  [[noreturn]] void fail(const std::string &message) const;
  [[noreturn]] void failAt(size_t offset, const std::string &message) const;
  /// Fails with "expected <what>, found <token>" at the cursor.
  [[noreturn]] void failExpected(const std::string &what) const;

private:
  const Source *src_;
  size_t pos_;
};

} // namespace shardcheck::reader
