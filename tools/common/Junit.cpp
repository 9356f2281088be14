// The JUnit XML writer; see Junit.h.
#include "tools/common/Junit.h"

#include "tools/common/Xml.h"

#include <ostream>
#include <sstream>

namespace shardcheck {

namespace {

/// Counts of a suite or of the whole document.
struct Counts {
  size_t tests = 0, failures = 0, errors = 0, skipped = 0;

  void add(const JunitCase &c) {
    ++tests;
    bool errored = !c.errors.empty();
    errors += errored;
    failures += !errored && !c.failures.empty();
    skipped += !errored && c.failures.empty() && c.skipped.has_value();
  }
  std::string attributes() const {
    return "tests=\"" + std::to_string(tests) + "\" failures=\"" + std::to_string(failures) +
           "\" errors=\"" + std::to_string(errors) + "\" skipped=\"" + std::to_string(skipped) +
           "\"";
  }
};

void printProblem(std::ostream &out, const char *element, const JunitProblem &p) {
  out << "      <" << element;
  if (!p.type.empty())
    out << " type=\"" << xmlEscape(p.type) << "\"";
  out << " message=\"" << xmlEscape(p.message) << "\"";
  if (p.text.empty())
    out << "/>\n";
  else
    out << ">" << xmlEscape(p.text) << "</" << element << ">\n";
}

void printCase(std::ostream &out, const JunitCase &c) {
  out << "    <testcase classname=\"" << xmlEscape(c.classname) << "\" name=\"" << xmlEscape(c.name)
      << "\"";
  if (c.seconds)
    out << " time=\"" << *c.seconds << "\"";
  out << ">\n";
  for (const JunitProblem &p : c.errors)
    printProblem(out, "error", p);
  for (const JunitProblem &p : c.failures)
    printProblem(out, "failure", p);
  if (c.errors.empty() && c.failures.empty() && c.skipped)
    out << "      <skipped message=\"" << xmlEscape(*c.skipped) << "\"/>\n";
  out << "    </testcase>\n";
}

} // namespace

void printJunit(std::ostream &out, const std::string &tool, const std::vector<JunitSuite> &suites) {
  Counts total;
  std::ostringstream body;
  for (const JunitSuite &suite : suites) {
    Counts counts;
    std::ostringstream cases;
    for (const JunitCase &c : suite.cases) {
      counts.add(c);
      total.add(c);
      printCase(cases, c);
    }
    body << "  <testsuite name=\"" << xmlEscape(suite.name) << "\" " << counts.attributes() << ">\n"
         << cases.str() << "  </testsuite>\n";
  }
  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"" << xmlEscape(tool)
      << "\" " << total.attributes() << ">\n"
      << body.str() << "</testsuites>\n";
}

} // namespace shardcheck
