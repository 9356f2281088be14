// What a run of a plan is asked (RunOptions) and what it reports
// (RunReport: per step, per tensor, the failure, the timing), the same for
// every backend (DESIGN section 5); executor/core/Run.h runs it.
//
// This file does not run anything.
#pragma once

#include "executor/Reference.h"
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
  /// Per device: bytes it received from other devices (collectives; they
  /// add up to bytesMoved).
  std::map<int64_t, int64_t> bytesReceived;
  /// Per device: the slots of the step's input buffer (collectives, copies,
  /// aliases) and of its output buffer, as the run sized them (recorded
  /// before the step runs, so a collective that fails shows the counts that
  /// did not fit).
  std::map<int64_t, int64_t> inputElements, outputElements;
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
  /// shows. Every backend honours both.
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

} // namespace shardcheck
