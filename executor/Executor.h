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
//    storage as the input (zero copies); collectives go to a Collectives
//    backend;
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
#include "ir/plan/Plan.h"

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace shardcheck {

/// Where collectives run. The sim backend runs each one in this process over
/// every device's buffers.
class Collectives {
public:
  virtual ~Collectives() = default;
  /// `sim`, `mpi`, `nccl`.
  virtual std::string name() const = 0;
  /// Runs one team's collective (see runSimCollective for the semantics and
  /// the count errors).
  virtual void run(const SimCollectiveCall &call, const std::map<int64_t, const SimBuffer *> &in,
                   const std::map<int64_t, SimBuffer *> &out) = 0;
  /// Runs one team's all-to-all with per-pair chunk sizes.
  virtual void runAllToAllv(const std::vector<int64_t> &team,
                            const std::vector<std::vector<int64_t>> &counts,
                            const std::map<int64_t, const SimBuffer *> &in,
                            const std::map<int64_t, SimBuffer *> &out,
                            const std::string &inputName, const std::string &outputName) = 0;
};

/// The sim backend's collectives (executor/SimCollectives.h).
class SimCollectives : public Collectives {
public:
  std::string name() const override { return "sim"; }
  void run(const SimCollectiveCall &call, const std::map<int64_t, const SimBuffer *> &in,
           const std::map<int64_t, SimBuffer *> &out) override;
  void runAllToAllv(const std::vector<int64_t> &team,
                    const std::vector<std::vector<int64_t>> &counts,
                    const std::map<int64_t, const SimBuffer *> &in,
                    const std::map<int64_t, SimBuffer *> &out, const std::string &inputName,
                    const std::string &outputName) override;
};

struct RunOptions {
  Bindings symbols;
  uint64_t seed = 1;
  bool allowUnverified = false;
};

/// The plan has steps resting on refuted or unknown verdicts and the run was
/// not told to run them anyway.
class PlanRefused : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

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

struct RunReport {
  std::string backend;
  uint64_t seed = 0;
  Bindings symbols;
  bool verified = true; ///< Every step rests on proved verdicts.
  std::vector<StepReport> steps;
  std::optional<RunFailure> failure;
  std::vector<TensorCheck> tensors; ///< Every tensor a step wrote.

  /// No failure, and every compared tensor matches.
  bool matches() const;
  /// `match`, `wrong-values` or the failure's kind.
  std::string outcome() const;
};

/// Values for the plan's unbound symbols that satisfy its constraints, chosen
/// from small sizes (16 first, then 8, 32, 12, 24, 4, 6, 2, 3, 1, 64), with
/// the bindings in `given` kept; nullopt when none of those work.
std::optional<Bindings> satisfyingBindings(const Plan &plan, const Bindings &given);

/// Runs `plan` with collectives from `collectives` over every device of the
/// plan in this process. Throws PlanRefused (unverified steps) or
/// InputError (bad plan, bad bindings, an op the reference cannot run).
RunReport runPlan(const Plan &plan, const RunOptions &options, Collectives &collectives);

} // namespace shardcheck
