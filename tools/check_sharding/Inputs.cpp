// check-sharding's input expansion; see Inputs.h.
#include "tools/check_sharding/Inputs.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <istream>
#include <iterator>

namespace shardcheck::checksharding {

namespace {

namespace fs = std::filesystem;

bool isInputFile(const fs::directory_entry &entry) {
  std::error_code ec;
  if (!entry.is_regular_file(ec))
    return false;
  std::string ext = entry.path().extension().string();
  return std::any_of(std::begin(kInputExtensions), std::end(kInputExtensions),
                     [&](const char *e) { return ext == e; });
}

/// The input files under `dir`, sorted so that the output order does not
/// depend on the file system's.
std::string addDirectory(const std::string &dir, std::vector<Input> &inputs) {
  std::vector<std::string> found;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec),
       end;
       !ec && it != end; it.increment(ec))
    if (isInputFile(*it))
      found.push_back(it->path().string());
  if (ec)
    return dir + ": cannot read the directory (" + ec.message() + ")";
  if (found.empty())
    return dir + ": no .txt, .log or .json file under the directory";
  std::sort(found.begin(), found.end());
  for (auto &f : found)
    inputs.push_back(Input{std::move(f), std::nullopt});
  return "";
}

std::string addPath(const std::string &path, std::vector<Input> &inputs) {
  std::error_code ec;
  if (fs::is_directory(path, ec))
    return addDirectory(path, inputs);
  inputs.push_back(Input{path, std::nullopt});
  return "";
}

std::string addList(const std::string &list, std::vector<Input> &inputs) {
  std::ifstream in(list);
  if (!in)
    return "@" + list + ": cannot read the list of inputs";
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r')
      line.pop_back();
    if (line.empty() || line[0] == '#')
      continue;
    if (std::string error = addPath(line, inputs); !error.empty())
      return error;
  }
  return "";
}

} // namespace

std::string expandInputs(const std::vector<std::string> &args, std::istream &in,
                         std::vector<Input> &inputs) {
  bool stdinRead = false;
  for (const auto &a : args) {
    std::string error;
    if (a == "-") {
      if (stdinRead)
        return "'-' (standard input) given twice";
      stdinRead = true;
      inputs.push_back(Input{"<stdin>", std::string(std::istreambuf_iterator<char>(in),
                                                    std::istreambuf_iterator<char>())});
    } else if (a.size() > 1 && a[0] == '@') {
      error = addList(a.substr(1), inputs);
    } else {
      error = addPath(a, inputs);
    }
    if (!error.empty())
      return error;
  }
  return "";
}

} // namespace shardcheck::checksharding
