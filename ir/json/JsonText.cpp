// The JSON reading boundary; see JsonText.h.
//
// The scans of the raw text (nesting before parsing, the overflowing number
// after nlohmann refused one) run on any text, JSON or not, and leave every
// syntax error to nlohmann, whose messages say more.
#include "ir/json/JsonText.h"

#include "ir/json/InputRules.h"

#include <cmath>
#include <cstdlib>

namespace shardcheck::jsonir {

using nlohmann::json;

std::optional<int64_t> jsonInt64(const json &v) {
  if (v.is_number_unsigned()) {
    uint64_t u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(INT64_MAX))
      return std::nullopt;
    return static_cast<int64_t>(u);
  }
  if (v.is_number_integer())
    return v.get<int64_t>();
  return std::nullopt;
}

namespace {

bool isNumberChar(char c) {
  return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E';
}

/// nlohmann's message without its `[json.exception...] parse error at line
/// L, column C: ` prefix (we print our own location), bounded: it quotes the
/// last token read, which may be huge.
std::string parseErrorDetail(const std::string &what) {
  auto colon = what.find(": ");
  return shownToken(colon == std::string::npos ? what : what.substr(colon + 2), 240);
}

/// Calls `visit(pos)` for each byte outside JSON strings (which it skips
/// with their escapes, so brackets and digits inside them count for
/// nothing); `visit` returns where to go on. Works on any text, JSON or not.
template <typename Visit> void scanOutsideStrings(std::string_view text, Visit visit) {
  for (size_t pos = 0; pos < text.size();) {
    if (text[pos] != '"') {
      pos = visit(pos);
      continue;
    }
    for (++pos; pos < text.size() && text[pos] != '"';)
      pos += text[pos] == '\\' ? 2 : 1;
    ++pos;
  }
}

class TextReader {
public:
  TextReader(std::string_view text, const std::string &file, const JsonErrorStyle &style)
      : text_(text), file_(file), style_(style) {}

  ParsedJson parse() const {
    if (auto bad = firstInvalidUtf8(text_))
      fail(*bad, invalidUtf8Message(text_, *bad));
    checkNesting();
    json root;
    try {
      root = json::parse(text_.begin(), text_.end());
    } catch (const json::parse_error &e) {
      // e.byte counts from 1 and points at the offending byte (one past the
      // end for a truncated text).
      fail(e.byte > 0 ? e.byte - 1 : 0, parseErrorDetail(e.what()));
    } catch (const json::out_of_range &e) {
      failHugeNumber(e); // nlohmann does not say where the number is
    } catch (const json::exception &e) {
      fail(0, parseErrorDetail(e.what()));
    }
    ParsedJson parsed{std::move(root), JsonPositions(text_, file_)};
    if (const auto &dup = parsed.positions.duplicateKey())
      throwInputError(style_.duplicateKeyCode,
                      "duplicate key" + atPointer(dup->path) +
                          "; each key may occur once per object",
                      parsed.positions.locateOffset(dup->offset));
    return parsed;
  }

private:
  [[noreturn]] void fail(size_t offset, const std::string &detail) const {
    throwInputError(style_.malformedCode, "malformed " + style_.textName + ": " + detail,
                    locateOffsetIn(text_, offset, file_));
  }

  /// Refused before parsing: nlohmann would build the whole tree first.
  void checkNesting() const {
    int depth = 0;
    scanOutsideStrings(text_, [&](size_t pos) {
      char c = text_[pos];
      if ((c == '[' || c == '{') && ++depth > kMaxJsonDepth)
        fail(pos, "values nested more than " + std::to_string(kMaxJsonDepth) +
                      " levels deep (the limit of docs/json-ir.md)");
      if ((c == ']' || c == '}') && depth > 0)
        --depth;
      return pos + 1;
    });
  }

  /// nlohmann's number overflow (out_of_range.406), located at the first
  /// number beyond a double's range.
  [[noreturn]] void failHugeNumber(const json::exception &e) const {
    scanOutsideStrings(text_, [&](size_t pos) {
      char c = text_[pos];
      if ((c < '0' || c > '9') && c != '-')
        return pos + 1;
      size_t end = pos;
      while (end < text_.size() && isNumberChar(text_[end]))
        ++end;
      std::string token(text_.substr(pos, end - pos));
      if (std::isinf(std::strtod(token.c_str(), nullptr)))
        fail(pos, "number " + shownToken(token) + " is beyond the range of a double");
      return end;
    });
    fail(0, parseErrorDetail(e.what()));
  }

  std::string_view text_;
  const std::string &file_;
  const JsonErrorStyle &style_;
};

} // namespace

ParsedJson parseJsonText(std::string_view text, const std::string &file,
                         const JsonErrorStyle &style) {
  return TextReader(text, file, style).parse();
}

} // namespace shardcheck::jsonir
