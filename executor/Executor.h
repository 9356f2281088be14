// The executor core: runs a plan's steps on devices and validates the result
// against the unsharded reference (DESIGN section 5).
//
// A run, in order:
// 1. refuses a plan with a step resting on a refuted or unknown verdict,
//    unless allowUnverified (that is how a refuted compiler lowering is
//    reproduced);
// 2. binds every symbol and checks the plan's constraints (the proofs cover
//    only sizes that satisfy them);
// 3. generates seeded inputs unsharded, evaluates the fusion unsharded in
//    double precision (executor/Reference.h), and gives every device the
//    slice of each input it holds (executor/Layout.h);
// 4. allocates every buffer on every device the plan lists, checking the
//    plan's local shapes against the executor's own layouts;
// 5. runs the steps in order, each only on its devices: compute steps
//    evaluate the op over the elements a device holds (its inputs' other
//    elements are NaN, or the reduction's identity for a partial) and store
//    the result rounded to the buffer's dtype, as a device would; copy steps
//    place elements by identity; alias steps make the output the same
//    storage as the input (zero copies); collectives go to the Backend;
// 6. compares every tensor a step wrote, on every device, with its slice of
//    the reference (executor/Validate.h).
// A collective whose buffer counts do not fit (the seed's Allgather of
// 1-element buffers into a 1-element output) stops the run at that step: it
// is a failure, as it was at run time in nvFuser.
//
// Problems with the plan or the bindings are InputErrors (exit status 2 in
// run-plan); a failure while running is part of the RunReport.
#pragma once

#include "executor/Reference.h"
#include "executor/SimCollectives.h"
#include "executor/Validate.h"
#include "plan/Plan.h"

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace shardcheck {

struct StepReport {
  size_t index = 0;
  std::string kind;        ///< `compute`, `collective`, `alias`, `copy`.
  std::string description; ///< `Allgather T1 -> T3 over team (0 1)`.
  std::vector<int64_t> devices;
  /// Values devices received from other devices, times the dtype size (a
  /// logical count, independent of any algorithm); 0 for local steps.
  int64_t bytesMoved = 0;
  double seconds = 0;
  bool verified = true;
  /// `ok`, `failed`, or `not run` (after a failure).
  std::string status = "not run";
};

/// Why a run did not produce results to compare.
struct RunFailure {
  size_t step = 0;
  /// `count-error` (a collective's buffers do not have the counts it
  /// requires: a crash in a real run) or `plan-error` (a step reads an
  /// element its device does not have).
  std::string kind;
  std::string message;
};

struct TensorCheck {
  OutputComparison comparison;
  std::string role; ///< `output` or `intermediate`.
};

/// Times of repeated runs of the whole plan (run-plan --repeat, nccl
/// backend): what a benchmark compares.
/// - Pipelined runs: compute steps are enqueued on each GPU's stream without
///   waiting (stream order keeps them in order); collectives still wait,
///   bounded, and each run ends with every GPU synchronized. This is how a
///   framework runs a model, and what medianSeconds and minSeconds time.
/// - Synchronized runs: every step ends with its GPUs synchronized, as in the
///   checked run, so that each step's time is its own (stepMedianSeconds,
///   and syncedMedianSeconds for the whole run).
struct RunTiming {
  int warmup = 0;  ///< Runs of each kind before the timed ones (not counted).
  int repeats = 0; ///< Timed runs of each kind.
  double medianSeconds = 0, minSeconds = 0; ///< Pipelined, whole plan per run.
  double syncedMedianSeconds = 0;           ///< Synchronized, whole plan per run.
  std::vector<double> stepMedianSeconds;    ///< Synchronized, per step.
};

struct RunReport {
  std::string backend;
  uint64_t seed = 0;
  Bindings symbols;
  bool verified = true; ///< Every step rests on proved verdicts.
  std::vector<StepReport> steps;
  std::optional<RunFailure> failure;
  std::vector<TensorCheck> tensors; ///< Every tensor a step wrote.
  /// False when the run skipped the reference (RunOptions::check): nothing
  /// was compared, and `tensors` is empty.
  bool checked = true;
  std::optional<RunTiming> timing;

  /// No failure and, for a checked run of at least one step, at least one
  /// slot compared and every compared tensor matching: a run that ran steps
  /// but compared nothing never matches.
  bool matches() const;
  /// `match`, `wrong-values`, `nothing-compared` (steps ran, but no slot held
  /// a value to compare), `no-steps` (the plan has none), `unchecked` (ran
  /// without a reference) or the failure's kind.
  std::string outcome() const;
  /// Slots compared over every tensor.
  int64_t comparedSlots() const;
};

/// Where a plan runs: which devices this process holds and how collectives
/// move data between devices. The sim backend holds every device in this
/// process; the mpi backend one device per process, moving data through MPI.
/// Buffers are host buffers of doubles in both.
struct RunOptions;

class Backend {
public:
  virtual ~Backend() = default;
  /// `sim`, `mpi`, `nccl`.
  virtual std::string name() const = 0;
  /// The devices of `planDevices` whose buffers this process holds. Throws
  /// InputError when the plan does not fit the processes (mpi: one process
  /// per plan device).
  virtual std::vector<int64_t> localDevices(const std::vector<int64_t> &planDevices) = 0;
  /// Whether this process prints and writes the report.
  virtual bool isLeader() const { return true; }
  /// Runs one team's collective. `inSizes` and `outSizes` give every
  /// participating device's buffer sizes (so every process can check counts
  /// alike, see checkCollectiveCounts); `in` and `out` hold this process's
  /// buffers only.
  virtual void collective(const SimCollectiveCall &call, const std::map<int64_t, int64_t> &inSizes,
                          const std::map<int64_t, int64_t> &outSizes,
                          const std::map<int64_t, const SimBuffer *> &in,
                          const std::map<int64_t, SimBuffer *> &out) = 0;
  /// Runs one team's all-to-all with per-pair chunk sizes (counts[s][d]).
  virtual void allToAllv(const std::vector<int64_t> &team,
                         const std::vector<std::vector<int64_t>> &counts,
                         const std::map<int64_t, const SimBuffer *> &in,
                         const std::map<int64_t, SimBuffer *> &out, const std::string &inputName,
                         const std::string &outputName) = 0;
  /// After each step: the failure of whichever process failed first (by
  /// rank), the same on every process; nullopt when none did.
  virtual std::optional<RunFailure> agreeOnFailure(const std::optional<RunFailure> &local);
  /// After the run: every process's tensor checks, merged at the leader.
  virtual std::vector<TensorCheck> gatherChecks(const std::vector<TensorCheck> &local);
  /// Runs a whole plan. The default is runPlan over this backend's host
  /// buffers; a backend with its own buffers (nccl: GPU memory) overrides it.
  virtual RunReport run(const Plan &plan, const RunOptions &options);
};

/// The sim backend: every device in this process, the collectives of
/// executor/SimCollectives.h.
class SimBackend : public Backend {
public:
  std::string name() const override { return "sim"; }
  std::vector<int64_t> localDevices(const std::vector<int64_t> &planDevices) override {
    return planDevices;
  }
  void collective(const SimCollectiveCall &call, const std::map<int64_t, int64_t> &inSizes,
                  const std::map<int64_t, int64_t> &outSizes,
                  const std::map<int64_t, const SimBuffer *> &in,
                  const std::map<int64_t, SimBuffer *> &out) override;
  void allToAllv(const std::vector<int64_t> &team, const std::vector<std::vector<int64_t>> &counts,
                 const std::map<int64_t, const SimBuffer *> &in,
                 const std::map<int64_t, SimBuffer *> &out, const std::string &inputName,
                 const std::string &outputName) override;
};

struct RunOptions {
  Bindings symbols;
  uint64_t seed = 1;
  bool allowUnverified = false;
  /// Run compute steps from index maps over local buffers
  /// (executor/LocalCompute.h), the form GPU kernels run, instead of
  /// evaluating the op over the device's elements of global-shaped views.
  bool indexedCompute = false;
  /// Compute the unsharded reference and compare every written tensor with
  /// it. False only for benchmarks at sizes the host reference cannot reach;
  /// the same plan is then checked at smaller bindings.
  bool check = true;
  /// Exact runs (the fusion oracle, tests/oracle/): floating inputs are
  /// nonzero integers uniform in [-integerInputs, integerInputs] when it is
  /// > 0, and with exactComparison every tensor must equal the reference
  /// exactly (tolerance 0), so that one missing or doubled term of a sum
  /// shows. The host backends (sim, mpi) honour both; the nccl backend
  /// ignores them.
  int integerInputs = 0;
  bool exactComparison = false;
  /// After the first run (and its check), run the whole plan again, timed
  /// (RunReport::timing): `warmup` untimed and `repeats` timed runs of each
  /// kind. On the host backends a step is done when it returns, so both
  /// kinds time the same thing there.
  int warmup = 0, repeats = 0;
};

/// The machine failed the run outside any step (a CUDA or NCCL error while
/// setting up or tearing down): not the plan's fault, but no result either.
class BackendError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// The plan has steps resting on refuted or unknown verdicts and the run was
/// not told to run them anyway.
class PlanRefused : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// Values for the plan's unbound symbols that satisfy its constraints, chosen
/// from small sizes (16 first, then 8, 32, 12, 24, 4, 6, 2, 3, 1, 64), with
/// the bindings in `given` kept; nullopt when none of those work.
std::optional<Bindings> satisfyingBindings(const Plan &plan, const Bindings &given);

/// Runs `plan` on `backend`: this process runs the steps of its local
/// devices. Throws PlanRefused (unverified steps) or InputError (bad plan,
/// bad bindings, an op the reference cannot run). The report's tensor checks
/// are complete at the leader.
RunReport runPlan(const Plan &plan, const RunOptions &options, Backend &backend);

/// `i0=4 i1=2`, or `(none)`.
std::string bindingsText(const Bindings &b);
/// A run in one line: its outcome, seed and sizes, the step that failed,
/// and the first mismatching tensor and slot.
std::string describeRun(const RunReport &r);

} // namespace shardcheck
