// The processes of the mpi backend (and of the nccl backend under mpirun):
// one process per plan device under mpirun, agreeing through MPI; and the
// MPI plumbing the mpi backend's collectives (MpiDevice.cpp) run on.
//
// Process r (MPI_COMM_WORLD rank) holds plan device devices[r]; the plan must
// have exactly as many devices as there are processes, or, in a batch of
// plans (run-plan --batch), at most as many: joinJob makes the first ones the
// job that runs the next plan and agrees on it, and the others sit it out. Each collective runs
// on a communicator of its team in team rank order (created once per team
// and cached), through the non-blocking MPI call of the same meaning:
// MPI_Iallgather, MPI_Igatherv, MPI_Iscatterv, MPI_Ibcast, MPI_Ialltoall(v),
// MPI_Iallreduce, MPI_Ireduce, MPI_Ireduce_scatter_block, and
// MPI_Isend/MPI_Irecv pairs for SendRecv. A Gather, Scatter, Broadcast or
// Reduce root outside the team joins that communicator last and only
// receives (Gather, Reduce) or only sends (Scatter, Broadcast); a Reduce root
// outside the team contributes the operator's identity.
//
// Counts are checked by the run loop on every process before any call
// (executor/core/CollectiveRules.h), and a failure on one process is agreed on by all
// after every step, so a bad plan stops every process at the same step
// instead of hanging one of them in MPI.
//
// No wait is unbounded: every MPI operation (the agreements too) is started
// non-blocking and polled with MPI_Testall against a deadline (run-plan
// --timeout-s, default 60 s). A process whose wait
// expires prints its rank, the plan step and the operation it waited for,
// and ends the whole job with MPI_Abort(kTimeoutExitStatus): a stopped, hung
// or dead peer cannot leave the others spinning. MPI_Comm_create_group has no
// non-blocking form, so the members of a team first meet in a bounded
// exchange of empty messages.
//
// Test hook (tests/mpi_plans.sh only): SHARDCHECK_TEST_MPI_STOP=RANK:STEP
// makes the process of that rank print its pid on stderr and stop itself
// (SIGSTOP) as step STEP of the checked run begins: before the run for 0,
// else once every rank agreed on step STEP-1's outcome.
//
// This file does not recover from a timeout (the job ends), does not bound
// MPI_Init or joinJob's MPI_Comm_split, and does not catch a peer stopped between a team's meeting
// and its MPI_Comm_create_group. It is compiled only when MPI is found; run-plan
// --backend mpi says so otherwise.
#pragma once

#include "executor/core/CollectiveRules.h"
#include "executor/core/Coordinator.h"

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace shardcheck {

class MpiCoordinator : public Coordinator {
public:
  /// The exit status of a job ended because a wait expired (MPI_Abort's
  /// error code; mpirun exits with it).
  static constexpr int kTimeoutExitStatus = 4;

  /// Initializes MPI if nobody has (and then finalizes it on destruction,
  /// after a bounded barrier); every wait is bounded by `timeoutSeconds`.
  explicit MpiCoordinator(double timeoutSeconds);
  ~MpiCoordinator() override;
  MpiCoordinator(const MpiCoordinator &) = delete;
  MpiCoordinator &operator=(const MpiCoordinator &) = delete;

  std::vector<int64_t> localDevices(const std::vector<int64_t> &planDevices) override;
  bool isLeader() const override { return rank_ == 0; }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  /// Notes the steps so that a timeout can name them.
  void runBegins(const Plan &plan) override;
  void broadcastBytes(void *data, size_t bytes) override;
  std::optional<RunFailure> agreeOnFailure(const std::optional<RunFailure> &local) override;
  std::vector<TensorCheck> gatherChecks(const std::vector<TensorCheck> &local) override;
  int agreeOnStatus(int status) override;
  /// Before each plan of a batch (run-plan --batch), on every process:
  /// splits the world, ranks below `processes` form the job the agreements
  /// run on (the world again when all do) and return true, the others sit
  /// the plan out.
  /// MPI_Comm_split has no non-blocking form: this wait is not bounded.
  bool joinJob(int processes);

  // For the mpi backend's collectives (MpiDevice.cpp).
  /// The world rank holding plan device `device`.
  int rankOf(int64_t device) const;
  /// The plan device this process holds.
  int64_t localDevice() const;
  /// The communicator of `members` (plan devices, in rank order), or null
  /// when this process is not one of them; for the collective step from
  /// buffer `input` to `output` (named should the members not all come).
  void *commOf(const std::vector<int64_t> &members, const std::string &input,
               const std::string &output);
  /// Completes the `n` requests at `requests` (MPI_Request *; void * keeps
  /// mpi.h out of this header, as in commOf), or ends the job when they take
  /// longer than the deadline; `what` names the wait for that message.
  void complete(void *requests, int n, const std::function<std::string()> &what);
  /// A fresh tag for a SendRecv's messages (below the meeting tag).
  int nextTag();
  /// `step 3 (Allgather T1 -> T3 over (0 1))` for the collective step from
  /// buffer `input` to `output`.
  std::string collectiveStep(const std::string &input, const std::string &output) const;
  /// `the Allgather over ranks (0 1) of step 3 (...)`: what a process waits
  /// for in the collective `call` among plan devices `devices`.
  std::string collectiveWait(const CollectiveCall &call, const std::vector<int64_t> &devices) const;

private:
  struct Comms;
  /// Returns once every process of `ranks` has called it (a bounded wait).
  void meet(const std::vector<int> &ranks, const std::string &input, const std::string &output);
  /// Prints this process's rank and `what` it waited for, then MPI_Abort.
  [[noreturn]] void abortWaiting(const std::string &what) const;
  /// World rank `root`'s `s`, on every process.
  std::string broadcastString(const std::string &s, int root);
  /// `the outcome of step 3 (...)` for the agreement under way.
  std::string agreementStep() const;
  /// The test hook (see the file comment).
  void stepBegins(size_t step);

  bool ownsMpi_ = false;
  double timeoutSeconds_;
  int rank_ = 0, size_ = 1; ///< In the world; size_ is the job's (joinJob).
  int worldSize_ = 1;
  std::map<int64_t, int> rankOfDevice_;
  std::unique_ptr<Comms> comms_;
  int tag_ = 0;
  /// The plan being run: each step's description, the collective steps by (input, output) buffer,
  /// and the agreements so far (agreement k follows step k).
  std::vector<std::string> steps_;
  std::map<std::pair<std::string, std::string>, size_t> collectiveSteps_;
  size_t agreements_ = 0;
  std::optional<std::pair<int, size_t>> stopBefore_; ///< The test hook's rank and step.
};

} // namespace shardcheck
