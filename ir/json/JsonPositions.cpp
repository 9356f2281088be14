// The position pre-scan of the JSON IR reader; see JsonPositions.h.
//
// The scan is iterative (an explicit stack of open containers) so that a
// deeply nested document cannot overflow the call stack, and it is linear in
// the text. It trusts the text to be valid JSON: nlohmann parsed it first.
#include "ir/json/JsonPositions.h"

#include <algorithm>
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
  return SourceLoc{file, static_cast<int>(line), static_cast<int>(column)};
}

/// An open object or array during the scan.
struct OpenContainer {
  bool isObject = false;
  std::string path;
  size_t index = 0;                     ///< Arrays: the current element.
  std::unordered_set<std::string> keys; ///< Objects: keys seen so far.
};

/// What the scanner expects after skipping whitespace.
enum class Expect { Value, Key, AfterValue };

} // namespace

SourceLoc locateOffsetIn(std::string_view text, size_t offset, const std::string &file) {
  return locateWith(lineStartsOf(text), text.size(), offset, file);
}

JsonPositions::JsonPositions(std::string_view text, std::string file)
    : file_(std::move(file)), lineStarts_(lineStartsOf(text)) {
  textSize_ = text.size();
  scan(text);
}

void JsonPositions::scan(std::string_view text) {
  size_t pos = text.substr(0, 3) == "\xEF\xBB\xBF" ? 3 : 0; // nlohmann skips a BOM too
  std::vector<OpenContainer> open;
  std::string valuePath; // the pointer of the value read next ("" = root)
  Expect expect = Expect::Value;

  auto skipSpace = [&] {
    while (pos < text.size() && isJsonSpace(text[pos]))
      ++pos;
  };
  // pos is at an opening quote; returns the raw content and steps past it.
  auto readString = [&] {
    size_t start = ++pos;
    while (pos < text.size() && text[pos] != '"')
      pos += text[pos] == '\\' ? 2 : 1;
    std::string raw(text.substr(start, std::min(pos, text.size()) - start));
    ++pos;
    return raw;
  };

  while (true) {
    skipSpace();
    if (pos >= text.size())
      return;
    if (expect == Expect::Value) {
      offsets_.emplace(valuePath, pos);
      char c = text[pos];
      if (c == '{' || c == '[') {
        ++pos;
        skipSpace();
        if (pos < text.size() && text[pos] == (c == '{' ? '}' : ']')) {
          ++pos; // empty container
          expect = Expect::AfterValue;
          continue;
        }
        open.push_back(OpenContainer{c == '{', valuePath, 0, {}});
        if (c == '{') {
          expect = Expect::Key;
        } else {
          valuePath = appendPointer(open.back().path, size_t{0});
        }
        continue;
      }
      if (c == '"')
        readString();
      else
        while (pos < text.size() && !isJsonSpace(text[pos]) && text[pos] != ',' &&
               text[pos] != ']' && text[pos] != '}')
          ++pos;
      expect = Expect::AfterValue;
    } else if (expect == Expect::Key) {
      size_t keyOffset = pos;
      std::string key = readString();
      skipSpace();
      ++pos; // the ':'
      OpenContainer &object = open.back();
      valuePath = appendPointer(object.path, key);
      if (!object.keys.insert(key).second && !duplicate_)
        duplicate_ = DuplicateKey{valuePath, keyOffset};
      expect = Expect::Value;
    } else {
      if (open.empty())
        return;
      char c = text[pos++];
      OpenContainer &container = open.back();
      if (c != ',') {
        open.pop_back(); // '}' or ']': the container itself is a finished value
        continue;
      }
      if (container.isObject) {
        expect = Expect::Key;
      } else {
        valuePath = appendPointer(container.path, ++container.index);
        expect = Expect::Value;
      }
    }
  }
}

SourceLoc JsonPositions::locate(const std::string &path) const {
  std::string p = path;
  while (true) {
    auto it = offsets_.find(p);
    if (it != offsets_.end())
      return locateOffset(it->second);
    if (p.empty())
      return locateOffset(0);
    p.erase(p.rfind('/'));
  }
}

SourceLoc JsonPositions::locateOffset(size_t offset) const {
  return locateWith(lineStarts_, textSize_, offset, file_);
}

} // namespace shardcheck::jsonir
