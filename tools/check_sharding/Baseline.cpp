// check-sharding's baselines; see Baseline.h.
#include "tools/check_sharding/Baseline.h"

#include "util/Sha256.h"

#include <fstream>
#include <iterator>
#include <ostream>

namespace shardcheck::checksharding {

namespace {

constexpr const char *kFormatKey = "check_sharding_baseline";
constexpr int kFormatVersion = 1;

/// Calls `visit(finding, fingerprint)` for every finding of `files` that
/// fails the run and has a fingerprint.
template <typename Visit> void forEachFailing(const std::vector<FileOutput> &files, Visit visit) {
  for (const auto &file : files)
    for (const auto &f : file.findings)
      if (f.status != 0)
        if (std::string fp = findingFingerprint(file, f); !fp.empty())
          visit(file, f, fp);
}

std::set<std::string> fingerprintsOf(const std::vector<BaselineEntry> &entries) {
  std::set<std::string> s;
  for (const auto &e : entries)
    s.insert(e.fingerprint);
  return s;
}

nlohmann::json findingJson(const std::string &file, const Finding &f) {
  return {{"file", file},   {"line", f.loc.line},   {"column", f.loc.column}, {"rule", f.rule},
          {"edge", f.edge}, {"message", f.message}, {"status", f.status}};
}

} // namespace

std::string findingFingerprint(const FileOutput &file, const Finding &finding) {
  // Fields are separated by a byte no printout, rule or edge holds.
  if (!finding.fusion) {
    // A finding of the whole file (a truncated paste) is known by every
    // fusion the file holds; one that read no fusion (unreadable) has none.
    if (file.fusions.empty())
      return "";
    std::string key;
    for (const auto &f : file.fusions)
      key += f.digest + '\0';
    return sha256Hex(key + '\0' + finding.rule + '\0' + finding.message);
  }
  if (*finding.fusion >= file.fusions.size())
    return "";
  std::string key = file.fusions[*finding.fusion].digest + '\0' + finding.rule + '\0' +
                    finding.edge + '\0' + (finding.edge.empty() ? finding.message : "");
  return sha256Hex(key);
}

std::vector<BaselineEntry> baselineEntries(const std::vector<FileOutput> &files) {
  std::vector<BaselineEntry> entries;
  std::set<std::string> seen;
  forEachFailing(files, [&](const FileOutput &, const Finding &f, const std::string &fp) {
    if (seen.insert(fp).second)
      entries.push_back(BaselineEntry{fp, f.rule, f.edge, f.message, f.loc.str()});
  });
  return entries;
}

std::string baselineText(const std::vector<BaselineEntry> &entries) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto &e : entries)
    list.push_back({{"fingerprint", e.fingerprint},
                    {"rule", e.rule},
                    {"edge", e.edge},
                    {"message", e.message},
                    {"seen_at", e.seenAt}});
  return nlohmann::json{{kFormatKey, kFormatVersion}, {"findings", list}}.dump(2) + "\n";
}

std::optional<std::vector<BaselineEntry>> readBaseline(const std::string &path,
                                                       std::string &error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = path + ": cannot read the baseline";
    return std::nullopt;
  }
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object() || doc.value(kFormatKey, 0) != kFormatVersion || !doc.contains("findings") ||
      !doc["findings"].is_array()) {
    error = path + ": not a check-sharding baseline (version " + std::to_string(kFormatVersion) +
            ", written by --write-baseline)";
    return std::nullopt;
  }
  std::vector<BaselineEntry> entries;
  for (const auto &e : doc["findings"]) {
    if (!e.is_object() || !e.contains("fingerprint") || !e["fingerprint"].is_string()) {
      error = path + ": a finding without a fingerprint";
      return std::nullopt;
    }
    entries.push_back(BaselineEntry{e["fingerprint"], e.value("rule", ""), e.value("edge", ""),
                                    e.value("message", ""), e.value("seen_at", "")});
  }
  return entries;
}

int BaselineComparison::status() const {
  std::vector<const Finding *> findings;
  for (const auto &[file, f] : fresh)
    findings.push_back(&f);
  return statusOfFindings(findings);
}

BaselineComparison compareWithBaseline(const std::vector<FileOutput> &files,
                                       const std::vector<BaselineEntry> &baseline,
                                       const std::string &path) {
  BaselineComparison c;
  c.path = path;
  c.recorded = fingerprintsOf(baseline);
  const std::set<std::string> &recorded = c.recorded;
  std::set<std::string> current;
  forEachFailing(files, [&](const FileOutput &file, const Finding &f, const std::string &fp) {
    current.insert(fp);
    if (recorded.count(fp))
      ++c.known;
    else
      c.fresh.emplace_back(file.file, f);
  });
  // A finding without a fingerprint (a file that read no fusion) is always new.
  for (const auto &file : files)
    for (const auto &f : file.findings)
      if (f.status != 0 && findingFingerprint(file, f).empty())
        c.fresh.emplace_back(file.file, f);
  for (const auto &e : baseline)
    if (!current.count(e.fingerprint))
      c.gone.push_back(e);
  return c;
}

bool isNewFinding(const BaselineComparison &comparison, const FileOutput &file,
                  const Finding &finding) {
  std::string fp = findingFingerprint(file, finding);
  return fp.empty() || !comparison.recorded.count(fp);
}

nlohmann::json baselineJson(const BaselineComparison &c) {
  nlohmann::json fresh = nlohmann::json::array(), gone = nlohmann::json::array();
  for (const auto &[file, f] : c.fresh)
    fresh.push_back(findingJson(file, f));
  for (const auto &e : c.gone)
    gone.push_back({{"fingerprint", e.fingerprint},
                    {"rule", e.rule},
                    {"edge", e.edge},
                    {"message", e.message},
                    {"seen_at", e.seenAt}});
  return {{"file", c.path}, {"known", c.known}, {"new", fresh}, {"gone", gone}};
}

void printBaselineText(std::ostream &out, const BaselineComparison &c) {
  out << "baseline " << c.path << ": " << c.known << " known finding(s), " << c.fresh.size()
      << " new, " << c.gone.size() << " gone\n";
  for (const auto &[file, f] : c.fresh)
    out << "  new: " << f.loc.str() << ": [" << f.rule << "] "
        << f.message.substr(0, f.message.find('\n')) << "\n";
  for (const auto &e : c.gone)
    out << "  gone: [" << e.rule << "] " << (e.edge.empty() ? e.message : e.edge) << " (was at "
        << e.seenAt << ")\n";
}

} // namespace shardcheck::checksharding
