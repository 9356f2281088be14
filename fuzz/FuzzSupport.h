// What the libFuzzer harnesses of fuzz/ share: the exception policy, the
// properties more than one harness checks, the limits that keep one input
// short, and the tools' drivers run in-process on scratch files.
//
// A harness aborts (violated()) when a property fails, so that libFuzzer
// records the input as a crash with the property's name on stderr:
// - only InputError (util/Diagnostics.h) may escape the code under test; any
//   other exception is a bug (acceptsInput);
// - a document written as JSON IR reads back equal, locations included, and
//   writes the same text again (checkJsonRoundTrip);
// - a plan written back loads, and writes the same text again
//   (checkPlanRoundTrip);
// - check-sharding's exit status follows from its summary as the README says,
//   and run-plan's from its report (checkCheckExit, runPlanFile); a run
//   whose outcome is `match` compared at least one slot.
//
// Limits (kLimits): the checker runs with a short per-query timeout (and so
// Z3's smallest rlimit, checker/smt/Z3Solve.cpp), on documents of a few
// small fusions; a plan runs only when its tensors and buffers are small.
// Inputs over a limit are skipped, not reported.
//
// This file does not decide what a harness feeds or which properties it
// checks; it does not fix, excuse or catch bugs of the code under test.
#pragma once

#include "executor/Reference.h"
#include "ir/Fusion.h"
#include "plan/Plan.h"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace shardcheck::fuzz {

/// Bounds on what one input may make the harnesses do.
struct Limits {
  unsigned solverTimeoutMs = 200; ///< check-sharding --timeout-ms.
  size_t fusions = 4;             ///< Fusions of a checked document.
  size_t exprs = 16;              ///< Expressions of a checked fusion.
  size_t tensors = 32;            ///< Tensors of a checked or run fusion.
  size_t meshDevices = 16;        ///< Devices of any mesh, and of a run plan.
  int64_t deviceId = 1023;        ///< Largest |device id| a run may name.
  int64_t elements = 4096;        ///< Any IterDomain, or any domain's product, in a run.
  int64_t slots = 1 << 16;        ///< Slots of every buffer on every device, together.
  size_t steps = 64;              ///< Steps of a run plan.
};
inline constexpr Limits kLimits{};

/// libFuzzer's bytes as text.
std::string_view textOf(const uint8_t *data, size_t size);

/// Reports a failed property (and the input's role in it) and aborts.
[[noreturn]] void violated(const std::string &property, const std::string &detail);

/// Runs `body`. Returns false when it threw an InputError (the input was
/// rejected, as it may be), true when it returned; any other exception
/// violates "only InputError escapes" under the name `what`.
bool acceptsInput(const char *what, const std::function<void()> &body);

/// Runs `body`, which must not throw at all (not even an InputError): what
/// the tools call outside any try, or code given its own valid output.
void mustSucceed(const std::string &what, const std::function<void()> &body);

/// Writes `doc` as JSON IR, reads it back and compares (documentsEqual,
/// locations included); the text written again must be the same.
void checkJsonRoundTrip(const Document &doc);

/// Writes `plan`, loads the text back (which must succeed) and writes it
/// again: the two texts must be equal. Returns the loaded plan.
Plan checkPlanRoundTrip(const Plan &plan);

/// What check-sharding does with a read document besides checking it: lints,
/// the producer -> consumer graph, and printing; none may throw, and a
/// printed fusion must read back as an nvFuser dump (ir/Printer.h promises an
/// equivalent fusion).
void checkDocumentUsers(const Document &doc);

/// Whether check-sharding may spend its time on `doc` (kLimits).
bool withinCheckLimits(const Document &doc);

/// Bindings for every symbol of `plan` (as run-plan --bind-auto chooses
/// them) when the plan is small enough to run under them (kLimits); nullopt
/// otherwise, or when no small sizes satisfy its constraints.
std::optional<Bindings> runnableBindings(const Plan &plan);

/// This process's scratch directory (removed at exit), and a file in it.
std::filesystem::path scratchFile(const std::string &name);
void writeFile(const std::filesystem::path &path, std::string_view text);
/// The file's text, or nullopt when it does not exist.
std::optional<std::string> readFile(const std::filesystem::path &path);

/// One run of a tool's driver in-process (runCheckSharding, runRunPlan):
/// its exit status and what it printed.
struct ToolRun {
  int status = 0;
  std::string out, err;
};
ToolRun runCheckShardingTool(const std::vector<std::string> &args);
ToolRun runRunPlanTool(const std::vector<std::string> &args);

/// check-sharding --format json --timeout-ms T --emit-plan PLAN [--plan-lowerings
/// L] [--fusion K] INPUT, with `plan` removed first.
ToolRun emitPlan(const std::filesystem::path &input, const std::filesystem::path &plan,
                 const std::string &lowerings, size_t fusion, unsigned timeoutMs);

/// check-sharding's exit status against its --format json output of a run
/// with --emit-plan (emitPlan): the document parses, names the same status,
/// and that status is the one its summary implies (README, "Exit status";
/// 4 where the input is truncated). Returns the document.
nlohmann::json checkCheckExit(const ToolRun &run);

/// run-plan --quiet --bind-auto --report R `flags` PLAN on the sim backend,
/// checked against its report: statuses 0 and 1 (and only they) write a
/// report naming the same status; 0 is outcome `match` (or `no-steps`, or
/// `unchecked`), and a match compared at least one slot. `report` is null
/// when there is none.
struct PlanRun {
  ToolRun tool;
  nlohmann::json report;
};
PlanRun runPlanFile(const std::filesystem::path &plan, const std::vector<std::string> &flags);

} // namespace shardcheck::fuzz
