// Implementation of the reader's source text and cursor; see Cursor.h.
#include "ir/reader/Cursor.h"

#include "util/Checked.h"

#include <algorithm>
#include <cstdio>
#include <limits>

namespace shardcheck::reader {

namespace {
/// Whether a line is a golden-test expectation, skipped everywhere.
bool isExpectLine(std::string_view line) {
  return trim(line).substr(0, 9) == "// EXPECT";
}

/// The length of a torchrun line prefix `[rank0]:` (0 if none).
size_t rankPrefixLength(std::string_view line) {
  if (line.substr(0, 5) != "[rank")
    return 0;
  size_t i = 5;
  while (i < line.size() && isDigit(line[i]))
    ++i;
  return i > 5 && line.substr(i, 2) == "]:" ? i + 2 : 0;
}
} // namespace

bool isInlineSpace(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}
bool isDigit(char c) {
  return c >= '0' && c <= '9';
}
bool isIdentStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool isIdentChar(char c) {
  return isIdentStart(c) || isDigit(c);
}

std::string_view trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && (isInlineSpace(s[b]) || s[b] == '\n'))
    ++b;
  while (e > b && (isInlineSpace(s[e - 1]) || s[e - 1] == '\n'))
    --e;
  return s.substr(b, e - b);
}

std::string excerpt(std::string_view s, size_t max) {
  // Bounded as every quoted token is (shownToken), then escaped: a cut may
  // split a UTF-8 character, and the message must stay one printable line.
  std::string out;
  for (char byte : shownToken(s, max)) {
    unsigned char c = static_cast<unsigned char>(byte);
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    }
  }
  return out;
}

Source::Source(std::string_view text, std::string file) : text_(text), file_(std::move(file)) {
  lineStarts_.push_back(0);
  for (size_t i = 0; i < text_.size(); ++i)
    if (text_[i] == '\n' && i + 1 < text_.size())
      lineStarts_.push_back(i + 1);
  // A UTF-8 byte-order mark (editors on Windows add one) is blank space.
  if (text_.compare(0, 3, "\xEF\xBB\xBF") == 0)
    text_.replace(0, 3, "   ");
  // Blank the expectation lines and torchrun's `[rankN]:` line prefixes in
  // place: offsets and columns stay valid.
  for (size_t line = 0; line < lineCount(); ++line) {
    if (isExpectLine(lineText(line)))
      std::fill(text_.begin() + lineStart(line), text_.begin() + lineEnd(line), ' ');
    size_t prefix = rankPrefixLength(lineText(line));
    std::fill(text_.begin() + lineStart(line), text_.begin() + lineStart(line) + prefix, ' ');
  }
}

size_t Source::lineEnd(size_t line) const {
  if (line + 1 < lineStarts_.size())
    return lineStarts_[line + 1] - 1;
  // The last line: a final newline is not part of it.
  if (!text_.empty() && text_.back() == '\n')
    return text_.size() - 1;
  return text_.size();
}

std::string_view Source::lineText(size_t line) const {
  std::string_view s =
      std::string_view(text_).substr(lineStart(line), lineEnd(line) - lineStart(line));
  if (!s.empty() && s.back() == '\r')
    s.remove_suffix(1);
  return s;
}

std::string_view Source::trimmedLine(size_t line) const {
  return trim(lineText(line));
}

size_t Source::lineOf(size_t offset) const {
  auto it = std::upper_bound(lineStarts_.begin(), lineStarts_.end(), offset);
  return static_cast<size_t>(it - lineStarts_.begin()) - 1;
}

SourceLoc Source::loc(size_t offset) const {
  offset = std::min(offset, text_.size());
  SourceLoc l;
  l.file = file_;
  if (offset == text_.size() && !text_.empty() && text_.back() == '\n') {
    // The end of a text that ends with a newline is the start of the line
    // after it, as editors show it.
    l.line = static_cast<int>(std::min<size_t>(lineCount() + 1, std::numeric_limits<int>::max()));
    l.column = 1;
    return l;
  }
  size_t line = lineOf(offset);
  l.line = static_cast<int>(std::min<size_t>(line + 1, std::numeric_limits<int>::max()));
  l.column = static_cast<int>(
      std::min<size_t>(offset - lineStart(line) + 1, std::numeric_limits<int>::max()));
  return l;
}

char Cursor::peek(size_t ahead) const {
  size_t p = pos_ + ahead;
  return p < src_->size() ? src_->text()[p] : '\0';
}

void Cursor::advance(size_t n) {
  pos_ = std::min(pos_ + n, src_->size());
}

bool Cursor::startsWith(std::string_view s) const {
  return src_->text().substr(std::min(pos_, src_->size()), s.size()) == s;
}

bool Cursor::accept(std::string_view s) {
  if (!startsWith(s))
    return false;
  advance(s.size());
  return true;
}

void Cursor::expect(std::string_view s, const std::string &context) {
  if (!accept(s))
    failExpected("'" + std::string(s) + "' " + context);
}

void Cursor::skipSpaces() {
  while (!atEnd() && isInlineSpace(peek()))
    ++pos_;
}

bool Cursor::skipBlank() {
  bool crossed = false;
  while (!atEnd() && (isInlineSpace(peek()) || peek() == '\n')) {
    crossed |= peek() == '\n';
    ++pos_;
  }
  return crossed;
}

void Cursor::skipToLineEnd() {
  while (!atLineEnd())
    ++pos_;
}

void Cursor::nextLine() {
  skipToLineEnd();
  advance();
}

bool Cursor::restOfLineBlank() const {
  return trim(restOfLine()).empty();
}

std::string_view Cursor::restOfLine() const {
  size_t end = pos_;
  while (end < src_->size() && src_->text()[end] != '\n')
    ++end;
  return src_->text().substr(std::min(pos_, end), end - std::min(pos_, end));
}

int64_t Cursor::parseInt(const std::string &what) {
  if (!isDigit(peek()))
    failExpected(what);
  size_t start = pos_;
  int64_t value = 0;
  while (isDigit(peek())) {
    int digit = peek() - '0';
    // Checked before multiplying: overflow must be an error, never UB.
    if (value > (std::numeric_limits<int64_t>::max() - digit) / 10)
      failAt(start, what + " '" + excerpt(restOfLine(), 40) + "' is too large");
    value = value * 10 + digit;
    ++pos_;
  }
  return value;
}

std::string_view Cursor::parseIdentifier() {
  size_t start = pos_;
  if (!isIdentStart(peek()))
    return {};
  while (isIdentChar(peek()))
    ++pos_;
  return src_->text().substr(start, pos_ - start);
}

std::string Cursor::found() const {
  if (atEnd())
    return "end of input";
  if (peek() == '\n' || (peek() == '\r' && peek(1) == '\n'))
    return "end of line";
  size_t n = 0;
  while (isIdentChar(peek(n)) || (n > 0 && peek(n) == '.'))
    ++n;
  if (n == 0)
    n = 1;
  return "'" + excerpt(src_->text().substr(pos_, n), 20) + "'";
}

void Cursor::fail(const std::string &message) const {
  failAt(pos_, message);
}

void Cursor::failAt(size_t offset, const std::string &message) const {
  throwInputError(kParseError, message, src_->loc(offset));
}

void Cursor::failExpected(const std::string &what) const {
  fail("expected " + what + ", found " + found());
}

} // namespace shardcheck::reader
