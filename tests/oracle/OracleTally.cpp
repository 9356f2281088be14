// Counts of fusion-oracle results; see OracleTally.h.
#include "tests/oracle/OracleTally.h"

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <stdexcept>

namespace shardcheck::oracle {

namespace {

/// Keys are single words in the text form.
std::string word(std::string s) {
  std::replace_if(
      s.begin(), s.end(), [](char c) { return c == ' ' || c == '\t' || c == '\n'; }, '_');
  return s;
}

/// Lines `  key: N` for the keys with `prefix`, prefix dropped.
std::string section(const std::map<std::string, int64_t> &counts, const std::string &prefix) {
  std::ostringstream os;
  for (const auto &[key, n] : counts)
    if (key.rfind(prefix, 0) == 0)
      os << "  " << key.substr(prefix.size()) << ": " << n << "\n";
  return os.str();
}

/// Whether the chunked split `t` cuts otherwise than the plain one: a split
/// enclosing it does not divide (docs/semantics.md, "Chunked splits").
bool chunkedDiffersFromPlain(const Fusion &f, const Transform &t) {
  for (const Transform *s = f.definition(t.inputs[0]); s; s = f.definition(s->inputs[0])) {
    std::optional<int64_t> extent = f.id(s->inputs[0]).extent.asConstant();
    std::optional<int64_t> factor = s->factor.asConstant();
    if (extent && factor && *factor > 0 && *extent % *factor != 0)
      return true;
  }
  return false;
}

/// Whether tensor `n`'s loop or allocation IDs come out of a chunked split
/// that is not the plain one.
bool hasUnevenChunkedSplit(const Fusion &f, TensorNum n) {
  if (!f.hasTensor(n))
    return false;
  const TensorView &tv = f.tensor(n);
  std::vector<IdNum> ids = tv.loop;
  ids.insert(ids.end(), tv.allocation.begin(), tv.allocation.end());
  while (!ids.empty()) {
    const Transform *t = f.hasId(ids.back()) ? f.definition(ids.back()) : nullptr;
    ids.pop_back();
    if (!t)
      continue;
    if (t->chunked && chunkedDiffersFromPlain(f, *t))
      return true;
    ids.insert(ids.end(), t->inputs.begin(), t->inputs.end());
  }
  return false;
}

/// Keys `chunked-edge:...` for the edges with a chunked split that is not
/// the plain one (below a split that does not divide) at either end:
/// the verdict of each, how the plan of a fusion with it proved went, and
/// the lowerings of those in matched plans.
void countChunkedEdges(const OracleResult &r, std::map<std::string, int64_t> &counts) {
  auto chunked = [&](TensorNum p, TensorNum c) {
    return hasUnevenChunkedSplit(r.fusion, p) || hasUnevenChunkedSplit(r.fusion, c);
  };
  for (const EdgeVerdict &v : r.verdicts) {
    if (!chunked(v.producer, v.consumer))
      continue;
    ++counts[word(std::string("chunked-edge:") + edgeResultStatusName(v.result))];
    if (v.result != EdgeResult::Proved)
      continue;
    ++counts[word("chunked-edge:proved-plan-" + r.checkerOutcome)];
    if (!v.steps.empty())
      ++counts[word("chunked-edge:multi-step-proved-plan-" + r.checkerOutcome)];
  }
  for (const std::string &l : r.matchedLowerings) { // `T0 -> T2 Allreduce`
    TensorNum p = 0, c = 0;
    if (std::sscanf(l.c_str(), "T%d -> T%d", &p, &c) == 2 && chunked(p, c))
      ++counts[word("chunked-edge:matched-lowering:" + l.substr(l.rfind(' ') + 1))];
  }
}

/// Whether some key starts with `prefix`.
bool anyKey(const std::map<std::string, int64_t> &counts, const std::string &prefix) {
  return std::any_of(counts.begin(), counts.end(),
                     [&](const auto &kv) { return kv.first.rfind(prefix, 0) == 0; });
}

} // namespace

void OracleTally::add(const OracleResult &r) {
  ++counts_["fusions"];
  ++counts_[word("checker:" + r.checkerOutcome)];
  if (!r.compilerOutcome.empty())
    ++counts_[word("compiler:" + r.compilerOutcome)];
  if (!r.ringOutcome.empty())
    ++counts_[word("ring:" + r.ringOutcome)];
  if (!r.dtensorWrong.empty())
    ++counts_[word("dtensor-wrong:" + r.dtensorWrong)];
  for (const std::string &c : r.compilerChoices)
    ++counts_[word("choice:" + c)];
  for (const std::string &k : r.dtensorNested)
    ++counts_[word("dtensor-nested-uneven:" + k)];
  for (const std::string &l : r.matchedLowerings)
    ++counts_[word("lowering:" + l.substr(l.rfind(' ') + 1))];
  countChunkedEdges(r, counts_);
  for (const std::string &f : specFeatures(r.spec)) {
    ++counts_[word("feature:" + f)];
    if (r.checkerOutcome == "matched")
      ++counts_[word("matched-feature:" + f)];
  }
  for (const Violation &v : r.violations) {
    ViolationClass &c = violations_[word(v.kind)];
    if (c.count++ == 0) {
      c.firstSeed = r.spec.seed;
      c.firstDetail = v.detail;
    }
  }
}

void OracleTally::merge(const OracleTally &other) {
  for (const auto &[key, n] : other.counts_)
    counts_[key] += n;
  for (const auto &[kind, c] : other.violations_) {
    ViolationClass &mine = violations_[kind];
    if (mine.count == 0 || c.firstSeed < mine.firstSeed) {
      mine.firstSeed = c.firstSeed;
      mine.firstDetail = c.firstDetail;
    }
    mine.count += c.count;
  }
}

int64_t OracleTally::count(const std::string &key) const {
  auto it = counts_.find(key);
  return it == counts_.end() ? 0 : it->second;
}

int64_t OracleTally::violationCount() const {
  int64_t n = 0;
  for (const auto &[kind, c] : violations_)
    n += c.count;
  return n;
}

std::string OracleTally::summary() const {
  std::ostringstream os;
  os << "fusions: " << count("fusions") << " (kernel " << count("feature:kind:kernel")
     << ", host IR " << count("feature:kind:host-ir") << ")\n";
  os << "checker plans (every edge proved -> planned and run exactly):\n"
     << section(counts_, "checker:");
  os << "compiler plans (the compiler's own choices, executed as written):\n"
     << section(counts_, "compiler:");
  os << "compiler choices:\n" << section(counts_, "choice:");
  os << "lowerings of edges in matched plans:\n" << section(counts_, "lowering:");
  if (anyKey(counts_, "chunked-edge:"))
    os << "edges with a chunked split below an uneven one at either end (verdicts; proved ones "
          "by their fusion's plan; lowerings in matched plans):\n"
       << section(counts_, "chunked-edge:");
  if (anyKey(counts_, "ring:"))
    os << "CollectivePermute rings (judged by the generator's run of each):\n"
       << section(counts_, "ring:");
  if (anyKey(counts_, "dtensor-wrong:"))
    os << "DTensor's sequences made wrong (mutation:collective:verdict on it; never confirmed):\n"
       << section(counts_, "dtensor-wrong:");
  if (anyKey(counts_, "dtensor-nested-uneven:"))
    os << "DTensor's nested uneven shards (role:outcome; each group padded by its own chunk):\n"
       << section(counts_, "dtensor-nested-uneven:");
  os << "constructs generated (fusions containing each):\n" << section(counts_, "feature:");
  os << "constructs in matched plans:\n" << section(counts_, "matched-feature:");
  os << "violations: " << violationCount() << " in " << violations_.size() << " classes\n";
  for (const auto &[kind, c] : violations_)
    os << "  " << kind << ": " << c.count << " (first seed " << c.firstSeed << ": " << c.firstDetail
       << ")\n";
  return os.str();
}

std::string OracleTally::serialize() const {
  std::ostringstream os;
  for (const auto &[key, n] : counts_)
    os << "count " << key << " " << n << "\n";
  for (const auto &[kind, c] : violations_) {
    std::string detail = c.firstDetail;
    std::replace(detail.begin(), detail.end(), '\n', ' ');
    os << "violation " << kind << " " << c.count << " " << c.firstSeed << "\t" << detail << "\n";
  }
  return os.str();
}

OracleTally OracleTally::parse(const std::string &text) {
  OracleTally t;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#')
      continue;
    std::istringstream ls(line);
    std::string tag, key;
    ls >> tag >> key;
    if (tag == "count") {
      int64_t n = 0;
      if (!(ls >> n))
        throw std::runtime_error("bad tally line: " + line);
      t.counts_[key] = n;
    } else if (tag == "violation") {
      ViolationClass c;
      if (!(ls >> c.count >> c.firstSeed))
        throw std::runtime_error("bad tally line: " + line);
      size_t tab = line.find('\t');
      c.firstDetail = tab == std::string::npos ? "" : line.substr(tab + 1);
      t.violations_[key] = c;
    } else {
      throw std::runtime_error("bad tally line: " + line);
    }
  }
  return t;
}

} // namespace shardcheck::oracle
