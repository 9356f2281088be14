// check-sharding's JUnit XML output; see Junit.h.
#include "tools/check_sharding/Junit.h"

#include <ostream>
#include <sstream>

namespace shardcheck::checksharding {

namespace {

/// One testcase: its name and the findings it shows.
struct TestCase {
  std::string name;
  std::vector<const Finding *> failures, unknowns;
  bool unreadable = false;
};

std::vector<TestCase> testCases(const FileOutput &file, const BaselineComparison *comparison) {
  std::vector<TestCase> cases;
  for (const auto &fusion : file.fusions)
    cases.push_back(TestCase{"fusion " + std::to_string(fusion.index) + " (line " +
                                 std::to_string(fusion.loc.line) + ")",
                             {},
                             {},
                             !fusion.readable});
  if (cases.empty())
    cases.push_back(TestCase{"read", {}, {}, true});
  for (const auto &f : file.findings) {
    if (comparison && !isNewFinding(*comparison, file, f))
      continue;
    TestCase &c = cases[f.fusion && *f.fusion < cases.size() ? *f.fusion : 0];
    if (f.status == 1)
      c.failures.push_back(&f);
    else if (f.status == 3)
      c.unknowns.push_back(&f);
  }
  return cases;
}

void printFinding(std::ostream &out, const char *element, const Finding &f) {
  out << "      <" << element << " type=\"" << xmlEscape(f.rule) << "\" message=\""
      << xmlEscape(f.loc.str() + ": " + f.message.substr(0, f.message.find('\n'))) << "\">"
      << xmlEscape(f.loc.str() + ": " + f.message) << "</" << element << ">\n";
}

void printCase(std::ostream &out, const std::string &file, const TestCase &c) {
  out << "    <testcase classname=\"" << xmlEscape(file) << "\" name=\"" << xmlEscape(c.name)
      << "\">\n";
  for (const Finding *f : c.failures)
    printFinding(out, c.unreadable ? "error" : "failure", *f);
  if (c.failures.empty() && c.unreadable)
    out << "      <error message=\"unreadable\"/>\n";
  if (c.failures.empty() && !c.unreadable && !c.unknowns.empty())
    out << "      <skipped message=\""
        << xmlEscape(std::to_string(c.unknowns.size()) + " unknown: " +
                     c.unknowns.front()->message.substr(0, c.unknowns.front()->message.find('\n')))
        << "\"/>\n";
  out << "    </testcase>\n";
}

/// Counts of a suite or of the whole run.
struct Counts {
  size_t tests = 0, failures = 0, errors = 0, skipped = 0;

  void add(const TestCase &c) {
    ++tests;
    errors += c.unreadable;
    failures += !c.unreadable && !c.failures.empty();
    skipped += !c.unreadable && c.failures.empty() && !c.unknowns.empty();
  }
  std::string attributes() const {
    return "tests=\"" + std::to_string(tests) + "\" failures=\"" + std::to_string(failures) +
           "\" errors=\"" + std::to_string(errors) + "\" skipped=\"" + std::to_string(skipped) +
           "\"";
  }
};

/// Appends the UTF-8 sequence at text[i] (advancing i past it) when it is
/// a character XML 1.0 allows, else U+FFFD.
void appendCharacter(const std::string &text, size_t &i, std::string &out) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(text[i + k]); };
  unsigned char c = byte(0);
  size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
  bool wellFormed = len > 0 && i + len <= text.size();
  for (size_t k = 1; wellFormed && k < len; ++k)
    wellFormed = (byte(k) >> 6) == 2;
  if (!wellFormed) {
    out += "\xEF\xBF\xBD";
    ++i;
    return;
  }
  bool allowed = len > 1 || c >= 0x20 || c == '\t' || c == '\n' || c == '\r';
  if (len == 3 && c == 0xEF && byte(1) == 0xBF && byte(2) >= 0xBE)
    allowed = false; // U+FFFE, U+FFFF
  out += allowed ? text.substr(i, len) : "\xEF\xBF\xBD";
  i += len;
}

} // namespace

std::string xmlEscape(const std::string &text) {
  std::string out;
  for (size_t i = 0; i < text.size();) {
    switch (text[i]) {
    case '&':
      out += "&amp;";
      ++i;
      break;
    case '<':
      out += "&lt;";
      ++i;
      break;
    case '>':
      out += "&gt;";
      ++i;
      break;
    case '"':
      out += "&quot;";
      ++i;
      break;
    case '\'':
      out += "&apos;";
      ++i;
      break;
    case '\n':
      out += "&#10;";
      ++i;
      break;
    default:
      appendCharacter(text, i, out);
    }
  }
  return out;
}

void printJunit(std::ostream &out, const std::vector<FileOutput> &files,
                const BaselineComparison *comparison) {
  Counts total;
  std::ostringstream suites;
  for (const auto &file : files) {
    Counts counts;
    std::ostringstream body;
    for (const auto &c : testCases(file, comparison)) {
      counts.add(c);
      total.add(c);
      printCase(body, file.file, c);
    }
    suites << "  <testsuite name=\"" << xmlEscape(file.file) << "\" " << counts.attributes()
           << ">\n"
           << body.str() << "  </testsuite>\n";
  }
  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"check-sharding\" "
      << total.attributes() << ">\n"
      << suites.str() << "</testsuites>\n";
}

} // namespace shardcheck::checksharding
