// JUnit XML as CI systems read it (Jenkins, GitLab, GitHub test reporters),
// for every tool: a <testsuites> named after the tool, a <testsuite> per
// suite, a <testcase> per case with its <failure>s, <error>s or <skipped>,
// and the counts each level carries (tests, failures, errors, skipped; a
// case counts once as an error, else as a failure, else as skipped). Every
// text is escaped (Xml.h).
//
// This file does not decide what passes: each tool builds its suites
// (tools/check_sharding/Junit.h, tools/run_plan/Junit.h).
#pragma once

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace shardcheck {

/// A <failure> or <error>: its type, one-line message and full text.
struct JunitProblem {
  std::string type, message, text;
};

struct JunitCase {
  std::string classname, name;
  std::vector<JunitProblem> failures, errors;
  std::optional<std::string> skipped; ///< The <skipped> message.
  std::optional<double> seconds;      ///< The `time` attribute.
};

struct JunitSuite {
  std::string name;
  std::vector<JunitCase> cases;
};

/// Prints the XML document of `suites` under <testsuites name="tool">.
void printJunit(std::ostream &out, const std::string &tool, const std::vector<JunitSuite> &suites);

} // namespace shardcheck
