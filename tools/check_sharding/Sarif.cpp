// check-sharding's SARIF output; see Sarif.h.
#include "tools/check_sharding/Sarif.h"

#include <cctype>
#include <cstdio>
#include <map>

namespace shardcheck::checksharding {

namespace {

/// Descriptions of the rules that are not lint codes.
const std::map<std::string, std::string> &knownRules() {
  static const std::map<std::string, std::string> rules = {
      {kRuleRefuted, "The lowering of a producer -> consumer edge is refuted"},
      {kRuleUnknown, "An edge was not decided (solver unknown or time limit); never proved"},
      {kRuleUnsupported, "Communication is needed and no single lowering is proved"},
      {kRuleUnmodelled, "The edge is outside what the checker models"},
      {"compiler-refuted", "The compiler's own communication for an edge is refuted"},
      {"compiler-unknown", "The compiler's own communication for an edge was not decided"},
      {"unnecessary-communication", "The compiler communicates where the edge needs none"},
  };
  return rules;
}

nlohmann::json ruleJson(const std::string &id) {
  auto it = knownRules().find(id);
  std::string text = it != knownRules().end() ? it->second : "check-sharding diagnostic " + id;
  return {{"id", id}, {"shortDescription", {{"text", text}}}};
}

nlohmann::json locationJson(const std::string &file, size_t artifact, const SourceLoc &loc) {
  nlohmann::json physical = {{"artifactLocation", {{"uri", pathToUri(file)}, {"index", artifact}}}};
  if (loc.known()) {
    physical["region"] = {{"startLine", loc.line}};
    if (loc.column > 0)
      physical["region"]["startColumn"] = loc.column;
  }
  return {{"physicalLocation", physical}};
}

nlohmann::json resultJson(const FileOutput &file, size_t artifact, const Finding &f,
                          size_t ruleIndex, const BaselineComparison *comparison) {
  nlohmann::json r = {{"ruleId", f.rule},
                      {"ruleIndex", ruleIndex},
                      {"level", findingLevel(f)},
                      {"message", {{"text", f.message}}},
                      {"locations", {locationJson(file.file, artifact, f.loc)}}};
  if (std::string fp = findingFingerprint(file, f); !fp.empty())
    r["partialFingerprints"] = {{"shardcheckFinding/v1", fp}};
  if (comparison)
    r["baselineState"] = isNewFinding(*comparison, file, f) ? "new" : "unchanged";
  return r;
}

} // namespace

std::string pathToUri(const std::string &path) {
  std::string uri;
  for (unsigned char c : path) {
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~' || c == '/') {
      uri += static_cast<char>(c);
    } else {
      char buf[4];
      std::snprintf(buf, sizeof buf, "%%%02X", c);
      uri += buf;
    }
  }
  return uri;
}

nlohmann::json sarifLog(const std::vector<FileOutput> &files, const std::string &version,
                        int exitStatus, const BaselineComparison *comparison) {
  std::map<std::string, size_t> ruleIndex; // every rule used, in id order
  for (const auto &file : files)
    for (const auto &f : file.findings)
      ruleIndex.emplace(f.rule, 0);
  nlohmann::json rules = nlohmann::json::array();
  for (auto &[id, index] : ruleIndex) {
    index = rules.size();
    rules.push_back(ruleJson(id));
  }
  nlohmann::json artifacts = nlohmann::json::array(), results = nlohmann::json::array();
  for (size_t i = 0; i < files.size(); ++i) {
    artifacts.push_back({{"location", {{"uri", pathToUri(files[i].file)}}}});
    for (const auto &f : files[i].findings)
      results.push_back(resultJson(files[i], i, f, ruleIndex.at(f.rule), comparison));
  }
  nlohmann::json driver = {{"name", "check-sharding"}, {"version", version}, {"rules", rules}};
  nlohmann::json run = {
      {"tool", {{"driver", driver}}},
      {"artifacts", artifacts},
      {"results", results},
      {"invocations", {{{"executionSuccessful", exitStatus != 2}, {"exitCode", exitStatus}}}}};
  return {{"$schema", "https://json.schemastore.org/sarif-2.1.0.json"},
          {"version", "2.1.0"},
          {"runs", {run}}};
}

} // namespace shardcheck::checksharding
