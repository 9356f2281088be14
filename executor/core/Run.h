// The one run loop: runs a plan's steps on a backend's devices and validates
// the result against the unsharded reference (DESIGN section 5), the same
// for every backend.
//
// A run, in order:
// 1. refuses a plan with a step resting on a refuted or unknown verdict,
//    unless allowUnverified (that is how a refuted compiler lowering is
//    reproduced);
// 2. binds every symbol and checks the plan's constraints (the proofs cover
//    only sizes that satisfy them);
// 3. allocates every buffer on every device this process holds, checking
//    the plan's local shapes against the executor's own layouts;
// 4. generates seeded inputs unsharded, evaluates the fusion unsharded in
//    double precision (executor/Reference.h), and gives every device the
//    slice of each input it holds (executor/Layout.h, LocalBox.h);
// 5. runs the steps in order (a loop step's body once per iteration, each
//    slice buffer taking its base's window as the iteration begins and
//    stored back when a step writes it), each only on its devices: compute steps on
//    the Device; copy steps as a gather the loop derives; alias steps as the
//    same storage (zero copies); collectives as one checked call per team
//    (executor/core/CollectiveRules.h). After every step the processes
//    agree on a failure (executor/core/Coordinator.h);
// 6. compares every tensor a step wrote, on every device, with its slice of
//    the reference (executor/Validate.h), merged at the leader;
// 7. with repeats, times the plan again (RunTiming).
// A collective whose buffer counts do not fit (the seed's Allgather of
// 1-element buffers into a 1-element output) stops the run at that step: it
// is a failure, as it was at run time in nvFuser.
//
// Problems with the plan or the bindings are InputErrors (exit status 2 in
// run-plan); a failure while running is part of the RunReport.
//
// This file does not know where buffers live (executor/core/Device.h) or
// how processes talk (Coordinator.h); backends are in sim/, mpi/, gpu/.
#pragma once

#include "executor/core/Coordinator.h"
#include "executor/core/Device.h"
#include "executor/core/RunReport.h"

#include <memory>
#include <optional>
#include <string>

namespace shardcheck {

/// A backend: its name, its processes and its devices.
class Backend {
public:
  virtual ~Backend() = default;
  /// `sim`, `mpi`, `nccl`.
  virtual std::string name() const = 0;
  virtual Coordinator &coordinator() = 0;
  /// The device of one run of `plan`. Throws InputError when the plan does
  /// not fit the machine (nccl: the processes or GPUs), DeviceError when
  /// the machine fails.
  virtual std::unique_ptr<Device> openDevice(const Plan &plan) = 0;
  bool isLeader() { return coordinator().isLeader(); }
};

/// Values for the plan's unbound symbols that satisfy its constraints, chosen
/// from small sizes (16 first, then 8, 32, 12, 24, 4, 6, 2, 3, 1, 64), with
/// the bindings in `given` kept; nullopt when none of those work.
std::optional<Bindings> satisfyingBindings(const Plan &plan, const Bindings &given);

/// Runs `plan` on `backend`: this process runs the steps of its local
/// devices. Throws PlanRefused (unverified steps), InputError (bad plan, bad
/// bindings, an op the reference cannot run) or BackendError (the machine
/// failed outside a step). The report's tensor checks are complete at the
/// leader.
RunReport runPlan(const Plan &plan, const RunOptions &options, Backend &backend);

/// The plan's steps as a run reports them before running any (status `not
/// run`): what a report shows of a plan that was refused.
std::vector<StepReport> unrunSteps(const Plan &plan);

/// `i0=4 i1=2`, or `(none)`.
std::string bindingsText(const Bindings &b);
/// A run in one line: its outcome, seed and sizes, the step that failed,
/// and the first mismatching tensor and slot.
std::string describeRun(const RunReport &r);

} // namespace shardcheck
