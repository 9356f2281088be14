// check-sharding's JUnit XML output; see Junit.h.
#include "tools/check_sharding/Junit.h"

#include "tools/common/Junit.h"

#include <ostream>

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

std::string firstLine(const std::string &text) {
  return text.substr(0, text.find('\n'));
}

JunitProblem problem(const Finding &f) {
  return {f.rule, f.loc.str() + ": " + firstLine(f.message), f.loc.str() + ": " + f.message};
}

JunitCase junitCase(const std::string &file, const TestCase &c) {
  JunitCase j{file, c.name, {}, {}, std::nullopt, std::nullopt};
  for (const Finding *f : c.failures)
    (c.unreadable ? j.errors : j.failures).push_back(problem(*f));
  if (c.failures.empty() && c.unreadable)
    j.errors.push_back({"", "unreadable", ""});
  if (!c.unknowns.empty())
    j.skipped =
        std::to_string(c.unknowns.size()) + " unknown: " + firstLine(c.unknowns.front()->message);
  return j;
}

} // namespace

void printJunit(std::ostream &out, const std::vector<FileOutput> &files,
                const BaselineComparison *comparison) {
  std::vector<JunitSuite> suites;
  for (const auto &file : files) {
    JunitSuite suite{file.file, {}};
    for (const auto &c : testCases(file, comparison))
      suite.cases.push_back(junitCase(file.file, c));
    suites.push_back(std::move(suite));
  }
  shardcheck::printJunit(out, "check-sharding", suites);
}

} // namespace shardcheck::checksharding
