// run-plan's command line on bad input (issue 13): plan files that cannot be
// read (a directory, a read error), a report that cannot be written, --bind
// names that are not symbols of the plan, values that are negative or do not
// fit their type, flags the chosen backend does not read, bad report flags
// (--format, --report-html, --quiet with junit); and both tools'
// exit status when standard output cannot be written (the built binaries,
// run next to this test binary, with standard output on /dev/full). Each is
// exit status 2 with a message that says what was wrong.
//
// This file does not run plans under mpirun (tests/mpi_plans.sh does, the
// stopped-rank timeout included) or test the exit statuses of good runs
// (plan_test.cpp).
#include "tests/TestPaths.h"
#include "tests/ToolRuns.h"
#include "tools/check_sharding/CheckSharding.h"
#include "tools/run_plan/RunPlan.h"

#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace shardcheck {
namespace {

namespace fs = std::filesystem;

fs::path tempDir() {
  fs::path d = fs::temp_directory_path() / ("shardcheck_run_plan_cli_" + std::to_string(getpid()));
  fs::create_directories(d);
  return d;
}

/// The plan check-sharding emits for a corpus file.
std::string emittedPlan(const std::string &corpusFile) {
  std::string path = (tempDir() / (corpusFile + ".json")).string();
  std::ostringstream out, err;
  std::string input = std::string(SHARDCHECK_SOURCE_DIR) + "/corpus/" + corpusFile;
  int status = runCheckSharding({"--quiet", "--emit-plan", path, input}, out, err);
  EXPECT_EQ(status, 0) << err.str();
  return path;
}

/// A plan without symbols, and one whose sizes are symbols (i0, i1, ...).
const std::string kConstantPlan = "rule_allgather_1d_logical.txt";
const std::string kSymbolicPlan = "real_tutorial_allgather_gather_scatter.txt";

using Result = shardcheck::testing::ToolRun;

Result runPlan(const std::vector<std::string> &args) {
  return shardcheck::testing::runPlanTool(args);
}

void expectUsageError(const std::vector<std::string> &args, const std::string &message) {
  Result r = runPlan(args);
  std::string line;
  for (const std::string &a : args)
    line += " " + a;
  EXPECT_EQ(r.status, 2) << "run-plan" << line << "\n" << r.out << r.err;
  EXPECT_NE(r.err.find(message), std::string::npos) << "run-plan" << line << "\n" << r.err;
}

TEST(RunPlanFiles, ADirectoryOrAReadErrorIsALocatedError) {
  std::string dir = tempDir().string();
  expectUsageError({dir}, dir + ": error: cannot read the plan file: Is a directory [unreadable]");
  // Opens, then fails to read (EIO at offset 0).
  expectUsageError({"/proc/self/mem"},
                   "/proc/self/mem: error: cannot read the plan file: Input/output error");
  expectUsageError({dir + "/missing.json"}, "cannot read the plan file: No such file or directory");
}

TEST(RunPlanFiles, AReportOntoADirectoryIsExitStatusTwo) {
  std::string plan = emittedPlan(kConstantPlan), dir = tempDir().string();
  expectUsageError({"--report", dir, plan},
                   dir + ": error: cannot write the report: Is a directory");
  expectUsageError({"--report", "/dev/full", plan},
                   "/dev/full: error: cannot write the report: No space left on device");
}

TEST(RunPlanBatch, RunsEveryListedPlanAndCountsThoseThatMatch) {
  // Paths relative to the list's folder; a missing plan counts as not matched.
  std::string plan = emittedPlan(kConstantPlan);
  fs::path list = tempDir() / "batch.txt";
  std::ofstream(list) << fs::path(plan).filename().string() << "\nmissing.json\n" << plan << "\n";
  Result r = runPlan({"--quiet", "--batch", list.string()});
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("missing.json: result: unreadable"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("batch: 3 plan(s) run, 2 matched, 1 did not"), std::string::npos) << r.out;
  expectUsageError({"--batch", list.string(), plan}, "give a PLAN or --batch LIST, not both");
  expectUsageError({"--batch", list.string(), "--report", "r.json"}, "--batch prints text only");
}

TEST(RunPlanFlags, BindNamesMustBeSymbolsOfThePlan) {
  std::string symbolic = emittedPlan(kSymbolicPlan), constant = emittedPlan(kConstantPlan);
  expectUsageError({"--bind-auto", "--bind", "j7=4", symbolic},
                   "--bind j7: the plan has no symbol 'j7'; its symbols are i0, ");
  expectUsageError({"--bind", "i0=4", constant},
                   "--bind i0: the plan has no symbol 'i0'; its sizes are all constant "
                   "[unknown-symbol]");
  // A symbol of the plan still binds.
  Result ok = runPlan({"--bind-auto", "--bind", "i0=8", symbolic});
  EXPECT_EQ(ok.status, 0) << ok.out << ok.err;
}

TEST(RunPlanFlags, BindValuesAreNonNegative64BitIntegers) {
  std::string plan = emittedPlan(kSymbolicPlan);
  for (const std::string v :
       {"-4", "abc", "", "12x", " 12", "+12", "9223372036854775808", "99999999999999999999999"})
    expectUsageError({"--bind", "i0=" + v, plan},
                     "--bind i0: '" + v + "' is not an integer from 0 to 9223372036854775807");
  expectUsageError({"--bind", "=4", plan}, "--bind takes NAME=VALUE");
  expectUsageError({"--bind", "i0", plan}, "--bind takes NAME=VALUE");
}

TEST(RunPlanFlags, NumbersOutsideTheirRangeAreUsageErrors) {
  std::string plan = emittedPlan(kConstantPlan);
  expectUsageError({"--seed", "18446744073709551616", plan},
                   "--seed takes an integer from 0 to 18446744073709551615 (got "
                   "'18446744073709551616')");
  expectUsageError({"--seed", "-1", plan}, "--seed takes an integer from 0 to");
  expectUsageError({"--repeat", "0", plan}, "--repeat takes an integer from 1 to 1000000");
  expectUsageError({"--repeat", "4294967297", plan}, "--repeat takes an integer from 1 to 1000000");
  expectUsageError({"--repeat", "2", "--warmup", "-1", plan},
                   "--warmup takes an integer from 0 to 1000000");
  expectUsageError({"--backend", "nccl", "--gpus", "18446744073709551617", plan},
                   "--gpus takes an integer from 1 to 4096");
  expectUsageError({"--backend", "mpi", "--timeout-s", "0", plan},
                   "--timeout-s takes an integer from 1 to 1000000");
  expectUsageError({"--backend", "mpi", "--timeout-s", "1e9", plan},
                   "--timeout-s takes an integer from 1 to 1000000 (got '1e9')");
  expectUsageError({plan, "--seed"}, "--seed takes an integer from 0 to");
  // The largest seed is a seed.
  Result ok = runPlan({"--seed", "18446744073709551615", plan});
  EXPECT_EQ(ok.status, 0) << ok.out << ok.err;
}

TEST(RunPlanFlags, FlagsTheBackendDoesNotReadAreUsageErrors) {
  std::string plan = emittedPlan(kConstantPlan);
  expectUsageError({"--gpus", "2", plan},
                   "--gpus applies to the nccl backend only, not to --backend sim");
  expectUsageError({"--backend", "mpi", "--gpus", "2", plan},
                   "--gpus applies to the nccl backend only, not to --backend mpi");
  expectUsageError({"--timeout-s", "5", plan},
                   "--timeout-s applies to the mpi and nccl backends only, not to --backend sim");
  expectUsageError({"--backend", "nccl", "--indexed-compute", plan},
                   "--indexed-compute applies to the sim and mpi backends only, not to --backend "
                   "nccl");
}

TEST(RunPlanFlags, ReportFlagsAndFormatsAreChecked) {
  std::string plan = emittedPlan(kConstantPlan), dir = tempDir().string();
  expectUsageError({"--format", "xml", plan}, "--format takes 'text' or 'junit'");
  expectUsageError({"--format", "junit", "--quiet", plan}, "--quiet applies to --format text only");
  expectUsageError({plan, "--report-html"}, "--report-html takes a directory");
  expectUsageError({"--report-html", "", plan}, "--report-html takes a directory");
  expectUsageError({"--report", dir + "/r", "--report-html", dir + "/r", plan},
                   "--report and --report-html name the same path " + dir + "/r");
  // A report directory that cannot be created: the run's status gives way to 2.
  expectUsageError({"--report-html", plan + "/html", plan},
                   "run-plan: error: --report-html " + plan + "/html: cannot create the directory");
  Result ok = runPlan({"--format", "junit", "--report-html", dir + "/html", plan});
  EXPECT_EQ(ok.status, 0) << ok.out << ok.err;
  EXPECT_TRUE(fs::exists(dir + "/html/index.html"));
}

/// Runs `command` with the shell; its exit status.
int shellStatus(const std::string &command) {
  int raw = std::system(command.c_str());
  return WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
}

std::string fileText(const fs::path &path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

/// Runs the tool `tool` (built next to this test binary) with `args`, its
/// standard output on /dev/full; expects exit status 2 and the message.
void expectStdoutWriteError(const std::string &tool, const std::string &args) {
  fs::path bin = fs::read_symlink("/proc/self/exe").parent_path() / tool;
  ASSERT_TRUE(fs::exists(bin)) << bin << " is not built";
  fs::path err = tempDir() / (tool + ".stderr");
  int status =
      shellStatus("'" + bin.string() + "' " + args + " > /dev/full 2> '" + err.string() + "'");
  EXPECT_EQ(status, 2) << tool << " " << args << "\n" << fileText(err);
  EXPECT_NE(fileText(err).find(tool + ": error: cannot write to standard output: No space left "
                                      "on device"),
            std::string::npos)
      << fileText(err);
}

TEST(ToolStdout, AFailedWriteOfTheResultsIsExitStatusTwo) {
  std::string corpus = std::string(SHARDCHECK_SOURCE_DIR) + "/corpus/" + kConstantPlan;
  expectStdoutWriteError("check-sharding", "'" + corpus + "'");
  expectStdoutWriteError("check-sharding", "--format json '" + corpus + "'");
  expectStdoutWriteError("run-plan", "'" + emittedPlan(kConstantPlan) + "'");
}

} // namespace
} // namespace shardcheck
