// The mpi backend: one process per plan device under mpirun, host buffers,
// collectives through MPI.
//
// Process r (MPI_COMM_WORLD rank) holds plan device devices[r]; the plan must
// have exactly as many devices as there are processes. Each collective runs
// on a communicator of its team in team rank order (created once per team
// and cached), through the MPI call of the same meaning: MPI_Allgather,
// MPI_Gatherv, MPI_Scatterv, MPI_Bcast, MPI_Alltoall(v), MPI_Allreduce,
// MPI_Reduce, MPI_Reduce_scatter_block, and MPI_Isend/MPI_Irecv pairs for
// SendRecv. A Gather, Scatter, Broadcast or Reduce root outside the team
// joins that communicator last and only receives (Gather, Reduce) or only
// sends (Scatter, Broadcast); a Reduce root outside the team contributes the
// operator's identity.
//
// Counts are checked by the executor on every process before any call
// (checkCollectiveCounts), and a failure on one process is agreed on by all
// after every step, so a bad plan stops every process at the same step
// instead of hanging one of them in MPI.
//
// This file is compiled only when MPI is found; run-plan --backend mpi says
// so otherwise.
#pragma once

#include "executor/Executor.h"

#include <map>
#include <memory>
#include <vector>

namespace shardcheck {

class MpiBackend : public Backend {
public:
  /// Initializes MPI if nobody has (and then finalizes it on destruction).
  MpiBackend();
  ~MpiBackend() override;
  MpiBackend(const MpiBackend &) = delete;
  MpiBackend &operator=(const MpiBackend &) = delete;

  std::string name() const override { return "mpi"; }
  std::vector<int64_t> localDevices(const std::vector<int64_t> &planDevices) override;
  bool isLeader() const override { return rank_ == 0; }
  int rank() const { return rank_; }
  int size() const { return size_; }

  void collective(const SimCollectiveCall &call, const std::map<int64_t, int64_t> &inSizes,
                  const std::map<int64_t, int64_t> &outSizes,
                  const std::map<int64_t, const SimBuffer *> &in,
                  const std::map<int64_t, SimBuffer *> &out) override;
  void allToAllv(const std::vector<int64_t> &team, const std::vector<std::vector<int64_t>> &counts,
                 const std::map<int64_t, const SimBuffer *> &in,
                 const std::map<int64_t, SimBuffer *> &out, const std::string &inputName,
                 const std::string &outputName) override;
  std::optional<RunFailure> agreeOnFailure(const std::optional<RunFailure> &local) override;
  std::vector<TensorCheck> gatherChecks(const std::vector<TensorCheck> &local) override;

  /// The same exit status on every process: the leader's.
  int agreeOnStatus(int status);
  /// Copies the leader's `bytes` bytes at `data` into every process's `data`
  /// (how the nccl backend shares NCCL's unique id).
  void broadcastBytes(void *data, size_t bytes);

private:
  struct Comms;
  int rankOf(int64_t device) const;
  /// The communicator of `members` (plan devices, in rank order), or null
  /// when this process is not one of them.
  void *commOf(const std::vector<int64_t> &members);

  bool ownsMpi_ = false;
  int rank_ = 0, size_ = 1;
  std::map<int64_t, int> rankOfDevice_;
  std::unique_ptr<Comms> comms_;
  int tag_ = 0;
};

} // namespace shardcheck
