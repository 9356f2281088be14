// Entry points of the nvFuser dump reader; see DumpReader.h. The parsing
// itself lives in Parser.h and its Parse*.cpp files; JSON IR is read by
// ir/json (documentFromJsonText).
#include "ir/reader/DumpReader.h"

#include "ir/Json.h"
#include "ir/Limits.h"
#include "ir/json/InputRules.h"
#include "ir/reader/Parser.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace shardcheck {

Document readNvFuserDump(std::string_view text, const std::string &file) {
  reader::Source source(text, file);
  // The whole text, log lines included: a dump is UTF-8 (nvFuser prints
  // ASCII), and a rule about the kept names only would make every parser
  // responsible for it.
  if (auto bad = firstInvalidUtf8(text))
    throwInputError(reader::kParseError, invalidUtf8Message(text, *bad), source.loc(*bad));
  reader::Parser parser(source);
  return parser.run();
}

namespace {
Document readAnyFormat(std::string_view text, const std::string &file) {
  std::string_view rest = text;
  if (rest.substr(0, 3) == "\xEF\xBB\xBF")
    rest.remove_prefix(3); // A UTF-8 byte-order mark.
  for (char c : rest) {
    if (reader::isInlineSpace(c) || c == '\n')
      continue;
    if (c == '{')
      return documentFromJsonText(text, file);
    break;
  }
  return readNvFuserDump(text, file);
}
} // namespace

Document readDocument(std::string_view text, const std::string &file) {
  Document doc = readAnyFormat(text, file);
  for (const Fusion &f : doc.fusions)
    checkFusionLimits(f);
  return doc;
}

std::string readInputFile(const std::string &path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throwInputError("io", "cannot read '" + path + "': it is a directory", SourceLoc{path, 0, 0});
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throwInputError("io", "cannot read '" + path + "': " + std::strerror(errno),
                    SourceLoc{path, 0, 0});
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad())
    throwInputError("io", "error while reading '" + path + "'", SourceLoc{path, 0, 0});
  return text.str();
}

Document readDocumentFile(const std::string &path) {
  return readDocument(readInputFile(path), path);
}

} // namespace shardcheck
