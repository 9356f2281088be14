// The position pre-scan of the JSON readers; see JsonPositions.h.
//
// The scan is iterative (an explicit stack of open containers) so that a
// deeply nested document cannot overflow the call stack, and it is linear in
// the text: every value adds one entry, every key is decoded once. It trusts
// the text to be valid JSON: nlohmann parsed it first.
#include "ir/json/JsonPositions.h"

#include "ir/json/InputRules.h"

#include <algorithm>
#include <cstdint>
#include <unordered_set>

namespace shardcheck::jsonir {

std::string appendPointer(const std::string &path, std::string_view token) {
  std::string out = path + "/";
  for (char c : token) {
    if (c == '~')
      out += "~0";
    else if (c == '/')
      out += "~1";
    else
      out += c;
  }
  return out;
}

std::string appendPointer(const std::string &path, size_t index) {
  return path + "/" + std::to_string(index);
}

std::string atPointer(const std::string &path) {
  // Pointers of real documents are short; an extent tree's may reach a few
  // hundred bytes, which is still worth showing whole.
  return " (at " + shownToken(path.empty() ? "/" : path, 400) + ")";
}

std::string quotedToken(std::string_view token) {
  return "\"" + shownToken(token) + "\"";
}

namespace {

bool isJsonSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

std::vector<size_t> lineStartsOf(std::string_view text) {
  std::vector<size_t> starts{0};
  for (size_t i = 0; i < text.size(); ++i)
    if (text[i] == '\n')
      starts.push_back(i + 1);
  return starts;
}

SourceLoc locateWith(const std::vector<size_t> &lineStarts, size_t textSize, size_t offset,
                     const std::string &file) {
  offset = std::min(offset, textSize);
  auto it = std::upper_bound(lineStarts.begin(), lineStarts.end(), offset);
  size_t line = static_cast<size_t>(it - lineStarts.begin()); // 1-based
  size_t column = offset - lineStarts[line - 1] + 1;
  return SourceLoc{file, static_cast<int>(std::min<size_t>(line, INT32_MAX)),
                   static_cast<int>(std::min<size_t>(column, INT32_MAX))};
}

void appendUtf8(std::string &out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

/// The four hex digits at `pos` (valid JSON has them).
uint32_t hex4(std::string_view text, size_t pos) {
  uint32_t v = 0;
  for (size_t i = pos; i < pos + 4 && i < text.size(); ++i) {
    char c = text[i];
    v = v * 16 + static_cast<uint32_t>(c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
  }
  return v;
}

/// Decodes the string whose opening quote is at `pos`, as nlohmann does, and
/// moves `pos` past its closing quote.
std::string decodeString(std::string_view text, size_t &pos) {
  std::string out;
  ++pos;
  while (pos < text.size() && text[pos] != '"') {
    if (text[pos] != '\\') {
      out += text[pos++];
      continue;
    }
    char e = pos + 1 < text.size() ? text[pos + 1] : '\\';
    pos += 2;
    if (e != 'u') {
      const char *from = "bfnrt", *to = "\b\f\n\r\t";
      const char *at = std::char_traits<char>::find(from, 5, e);
      out += at ? to[at - from] : e; // `\"`, `\\`, `\/` stand for themselves
      continue;
    }
    uint32_t cp = hex4(text, pos);
    pos += 4;
    if (cp >= 0xD800 && cp < 0xDC00 && pos + 6 <= text.size() && text[pos] == '\\') {
      cp = 0x10000 + ((cp - 0xD800) << 10) + (hex4(text, pos + 2) - 0xDC00);
      pos += 6;
    }
    appendUtf8(out, cp);
  }
  ++pos;
  return out;
}

/// Moves `pos` from a string's opening quote past its closing quote.
void skipString(std::string_view text, size_t &pos) {
  ++pos;
  while (pos < text.size() && text[pos] != '"')
    pos += text[pos] == '\\' ? 2 : 1;
  ++pos;
}

/// A JSON pointer reference token with `~1` and `~0` undone.
std::string unescapePointerToken(std::string_view token) {
  std::string out;
  for (size_t i = 0; i < token.size(); ++i) {
    if (token[i] == '~' && i + 1 < token.size() && (token[i + 1] == '0' || token[i + 1] == '1')) {
      out += token[++i] == '0' ? '~' : '/';
      continue;
    }
    out += token[i];
  }
  return out;
}

/// An open object or array during the scan.
struct OpenContainer {
  size_t members = 0; ///< Its index in members_.
  bool isObject = false;
  std::unordered_set<std::string> keys; ///< Objects: keys seen so far.
};

/// What the scanner expects after skipping whitespace.
enum class Expect { Value, Key, AfterValue };

} // namespace

SourceLoc locateOffsetIn(std::string_view text, size_t offset, const std::string &file) {
  return locateWith(lineStartsOf(text), text.size(), offset, file);
}

JsonPositions::JsonPositions(std::string_view text, std::string file)
    : file_(std::move(file)), textSize_(text.size()), lineStarts_(lineStartsOf(text)) {
  scan(text);
}

void JsonPositions::scan(std::string_view text) {
  size_t pos = text.substr(0, 3) == "\xEF\xBB\xBF" ? 3 : 0; // nlohmann skips a BOM too
  std::vector<OpenContainer> open;
  std::string key; // the key of the member read next (objects)
  Expect expect = Expect::Value;

  auto skipSpace = [&] {
    while (pos < text.size() && isJsonSpace(text[pos]))
      ++pos;
  };
  // The pointer of the member being read: each open container is the value
  // of its parent's last member.
  auto currentPath = [&] {
    std::string path;
    for (size_t level = 0; level + 1 < open.size(); ++level) {
      const std::vector<Member> &members = members_[open[level].members];
      path = open[level].isObject ? appendPointer(path, members.back().key)
                                  : appendPointer(path, members.size() - 1);
    }
    return path;
  };

  while (true) {
    skipSpace();
    if (pos >= text.size())
      return;
    if (expect == Expect::Value) {
      size_t value = values_.size();
      values_.push_back(Value{pos, kNone, false});
      if (!open.empty())
        members_[open.back().members].push_back(Member{std::move(key), value});
      key.clear();
      char c = text[pos];
      if (c == '{' || c == '[') {
        values_[value].container = members_.size();
        values_[value].isObject = c == '{';
        members_.emplace_back();
        open.push_back(OpenContainer{values_[value].container, c == '{', {}});
        ++pos;
        skipSpace();
        if (pos < text.size() && text[pos] == (c == '{' ? '}' : ']')) {
          ++pos; // empty container
          open.pop_back();
          expect = Expect::AfterValue;
        } else {
          expect = c == '{' ? Expect::Key : Expect::Value;
        }
        continue;
      }
      if (c == '"')
        skipString(text, pos);
      else
        while (pos < text.size() && !isJsonSpace(text[pos]) && text[pos] != ',' &&
               text[pos] != ']' && text[pos] != '}')
          ++pos;
      expect = Expect::AfterValue;
    } else if (expect == Expect::Key) {
      size_t keyOffset = pos;
      key = decodeString(text, pos);
      skipSpace();
      ++pos; // the ':'
      if (!open.back().keys.insert(key).second && !duplicate_)
        duplicate_ = DuplicateKey{appendPointer(currentPath(), key), keyOffset};
      expect = Expect::Value;
    } else {
      if (open.empty())
        return;
      char c = text[pos++];
      if (c == ',')
        expect = open.back().isObject ? Expect::Key : Expect::Value;
      else
        open.pop_back(); // '}' or ']': the container itself is a finished value
    }
  }
}

std::optional<size_t> JsonPositions::child(size_t value, const std::string &token) const {
  const Value &v = values_[value];
  if (v.container == kNone)
    return std::nullopt;
  const std::vector<Member> &members = members_[v.container];
  if (!v.isObject) {
    if (token.empty() || token.size() > 18 ||
        token.find_first_not_of("0123456789") != std::string::npos)
      return std::nullopt;
    size_t index = std::stoull(token);
    return index < members.size() ? std::optional<size_t>(members[index].value) : std::nullopt;
  }
  // A linear search: the readers descend only into objects whose keys they
  // checked against a schema, which have a handful of members.
  for (const Member &m : members)
    if (m.key == token)
      return m.value;
  return std::nullopt;
}

SourceLoc JsonPositions::locate(const std::string &path) const {
  if (values_.empty())
    return locateOffset(0);
  size_t value = 0;
  for (size_t start = 0; start < path.size();) {
    size_t end = std::min(path.find('/', start + 1), path.size());
    auto next = child(value, unescapePointerToken(path.substr(start + 1, end - start - 1)));
    if (!next)
      break; // the nearest recorded ancestor
    value = *next;
    start = end;
  }
  return locateOffset(values_[value].offset);
}

SourceLoc JsonPositions::locateOffset(size_t offset) const {
  return locateWith(lineStarts_, textSize_, offset, file_);
}

} // namespace shardcheck::jsonir
