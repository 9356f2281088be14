// run-plan's JUnit XML; see Junit.h.
#include "tools/run_plan/Junit.h"

#include "tools/run_plan/Render.h"

namespace shardcheck::runplan {

namespace {

std::string firstLine(const std::string &text) {
  return text.substr(0, text.find('\n'));
}

/// What failed the run itself, or nullopt when every step ran and
/// something was compared (or nothing was asked to be).
std::optional<JunitProblem> runProblem(const PlanRunResult &run) {
  if (!run.errorKind.empty())
    return JunitProblem{run.errorKind, firstLine(run.errorMessage), run.errorMessage};
  const RunReport &r = *run.report;
  if (r.failure) {
    std::string step = "step " + std::to_string(r.failure->step);
    if (r.failure->step < r.steps.size()) {
      const StepReport &s = r.steps[r.failure->step];
      step += " (" + s.description + ") on devices " + devicesText(s.devices);
    }
    std::string message = step + " failed: " + r.failure->message;
    return JunitProblem{r.failure->kind, firstLine(message), message + "\n" + outcomeLine(r)};
  }
  if (r.outcome() == "nothing-compared")
    return JunitProblem{"nothing-compared", outcomeLine(r), outcomeLine(r)};
  return std::nullopt;
}

JunitCase runCase(const PlanRunResult &run) {
  JunitCase c{run.plan, "run", {}, {}, std::nullopt, std::nullopt};
  if (auto problem = runProblem(run))
    (run.errorKind == "unreadable" || run.errorKind == "backend" ? c.errors : c.failures)
        .push_back(*problem);
  if (run.report && run.errorKind.empty()) {
    double seconds = 0;
    for (const StepReport &s : run.report->steps)
      seconds += s.seconds;
    c.seconds = seconds;
  }
  return c;
}

JunitCase tensorCase(const std::string &plan, const TensorCheck &t) {
  const OutputComparison &c = t.comparison;
  JunitCase j{plan, "tensor " + c.name + " (" + t.role + ")", {}, {}, std::nullopt, std::nullopt};
  if (c.matches())
    return j;
  std::string message = c.name + ": " + std::to_string(c.mismatched) + " of " +
                        std::to_string(c.compared) + " slot(s) differ from the reference";
  if (c.firstMismatch)
    message += "; first mismatch: " + mismatchText(*c.firstMismatch, c.name);
  j.failures.push_back({"mismatch", message, tensorLine(t) + "\n" + message});
  return j;
}

} // namespace

JunitSuite junitSuite(const PlanRunResult &run) {
  JunitSuite suite{run.plan, {runCase(run)}};
  if (run.report && run.errorKind.empty())
    for (const TensorCheck &t : run.report->tensors)
      suite.cases.push_back(tensorCase(run.plan, t));
  return suite;
}

void printJunit(std::ostream &out, const std::vector<PlanRunResult> &runs) {
  std::vector<JunitSuite> suites;
  for (const PlanRunResult &run : runs)
    suites.push_back(junitSuite(run));
  shardcheck::printJunit(out, "run-plan", suites);
}

} // namespace shardcheck::runplan
