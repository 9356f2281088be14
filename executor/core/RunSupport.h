// The parts of the run loop (executor/core/Run.cpp) that stand alone:
// refusing, binding, checking sizes, describing steps, placing copies,
// judging results, running steps in order and timing repeated runs.
//
// This file does not hold buffers or run anything.
#pragma once

#include "executor/BufferMap.h"
#include "executor/Reference.h"
#include "executor/Validate.h"
#include "executor/core/Coordinator.h"
#include "executor/core/RunReport.h"

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace shardcheck {

/// A step failed while running; becomes RunReport::failure. `kind`:
/// count-error, plan-error or a Device's failureKind() (gpu-error).
struct StepFailure {
  std::string kind;
  std::string message;
};

/// Step `index` of `plan` as reported before it runs: its kind, description,
/// devices and verification, status `not run`.
StepReport unrunStep(const Plan &plan, size_t index);

/// One run of one step: plan step `index`; inside a loop (or for the loop
/// step itself, which starts the iteration) the loop variable's value.
struct ScheduledStep {
  size_t index = 0;
  std::optional<int64_t> iteration;
};

/// The steps in the order they run at `symbols` (bound): each step once, a
/// loop step and its body once per iteration (docs/plan-format.md, "Loops").
std::vector<ScheduledStep> stepSchedule(const Plan &plan, const Bindings &symbols);

/// Runs the scheduled steps in order, timing each (a step in a loop sums its
/// iterations): `runStep` runs one (and may throw StepFailure, whose message
/// then names the iteration). After every step the processes agree on a
/// failure through `coordinator`; from the failed step on, steps are reported
/// `not run`.
void runStepsInOrder(
    const Plan &plan, const std::vector<ScheduledStep> &schedule, Coordinator &coordinator,
    RunReport &report,
    const std::function<void(const ScheduledStep &, const PlanStep &, StepReport &)> &runStep);

/// Runs the whole plan `options.warmup + options.repeats` times pipelined,
/// then as many times with every step synchronized, and sets report.timing
/// (RunTiming says what each kind measures). `runStep(index, step,
/// synchronize)` runs one step, waiting for its devices when `synchronize`
/// (it may throw StepFailure); `synchronizeAll()` waits for every local
/// device. Every process starts each run together (the failure agreement is
/// a barrier). A step failing sets report.failure ("while timing: ...") and
/// leaves report.timing empty.
void timeRepeatedRuns(
    const Plan &plan, const std::vector<ScheduledStep> &schedule, Coordinator &coordinator,
    const RunOptions &options, RunReport &report,
    const std::function<void(const ScheduledStep &, const PlanStep &, bool)> &runStep,
    const std::function<void()> &synchronizeAll);

class ToleranceTable;

/// The producer -> consumer graph of the plan's fusion; an InputError when the
/// embedded fusion has a cycle or a use before definition.
FusionGraph planGraph(const Plan &plan);

/// Compares tensor `t`'s buffers on `localDevices` (device -> values) with
/// the reference, with `t`'s tolerance; the role says whether `t` is a fusion
/// output.
TensorCheck checkTensor(const Plan &plan, const BufferMap &map, const ReferenceResult &reference,
                        ToleranceTable &tolerances, TensorNum t,
                        const std::map<int64_t, std::vector<double>> &buffers,
                        const std::vector<int64_t> &localDevices);

/// Throws PlanRefused when a step rests on a refuted or unknown verdict and
/// `allowUnverified` is false.
void refuseUnverifiedSteps(const Plan &plan, bool allowUnverified);

/// `given` when it binds every symbol of the plan, satisfies every
/// constraint and leaves a run that fits in memory (refuseOversizedRun);
/// else an InputError (unbound-symbol, constraint-violated, size-overflow,
/// memory-limit).
Bindings checkedBindings(const Plan &plan, const Bindings &given);

/// Host memory a run of `plan` at `symbols` needs, in bytes, estimated from
/// what the executor keeps (see RunSupport.cpp); INT64_MAX when it overflows.
int64_t estimatedRunBytes(const Plan &plan, const Bindings &symbols);
/// Refuses (an InputError `memory-limit`) a run whose estimate exceeds the
/// host memory available to this process (MemAvailable and RLIMIT_AS).
void refuseOversizedRun(const Plan &plan, const Bindings &symbols);

/// The slot count of buffer `b` on `local.device` from the executor's
/// layouts, after checking that the plan's local shape gives the same
/// (packed and unpacked buffers are sized by their content). InputError on a
/// disagreement: the plan is inconsistent.
/// Throws plan-invalid unless the elements the buffer holds on the device
/// (`elements`, kNoElement for padding) number `local.held`.
void checkHeldCount(const Plan &plan, const PlanBuffer &b, const PlanLocal &local,
                    const std::vector<int64_t> &elements);
int64_t checkedSlotCount(const Plan &plan, const BufferMap &map, const PlanBuffer &b,
                         const PlanLocal &local, const Bindings &symbols);
/// The same check against a slot count found another way (a dense box).
int64_t checkedSlotCount(const Plan &plan, const PlanBuffer &b, const PlanLocal &local,
                         const Bindings &symbols, int64_t actual);

/// For a copy step on `device`: per output slot, the input slot holding the
/// element it expects (-1 for padding). Throws LocalComputeError when the
/// input does not hold an expected element (a plan error).
std::vector<int64_t> copyGather(const Plan &plan, const BufferMap &map, const PlanStep &step,
                                int64_t device);

/// `Allgather T1 -> T3 over (0 1)`, `T2 = +(T0, T3)`, `alias T1 -> T3`.
std::string describeStep(const Plan &plan, const PlanStep &step);

/// The tolerance each tensor is judged with: its dtype's, widened by the
/// reduction length along the longest chain of reductions feeding it, and
/// at least that of every computed tensor it is computed from (a float
/// tensor cast from a bfloat16 result carries bfloat16's error). With
/// `exact`, every tensor is judged with (0, 0) (RunOptions::exactComparison).
class ToleranceTable {
public:
  ToleranceTable(const Fusion &fusion, const Bindings &symbols, bool exact = false)
      : fusion_(fusion), symbols_(symbols), exact_(exact) {}
  Tolerance of(TensorNum t);

private:
  int64_t reductionLength(TensorNum t);
  const Fusion &fusion_;
  const Bindings &symbols_;
  bool exact_;
  std::map<TensorNum, int64_t> lengths_;
  std::map<TensorNum, Tolerance> tolerances_;
};

} // namespace shardcheck
