// The mpi backend: one process per plan device under mpirun, host buffers
// (executor/host/HostDevice.h), collectives through MPI on team
// communicators (MpiDevice.cpp), agreement through MpiCoordinator.h.
//
// Each collective runs on a communicator of its team in team rank order
// (created once per team and cached), through the non-blocking MPI call of
// the same meaning: MPI_Iallgather, MPI_Igatherv, MPI_Iscatterv, MPI_Ibcast,
// MPI_Ialltoall(v), MPI_Iallreduce, MPI_Ireduce, MPI_Ireduce_scatter_block,
// and MPI_Isend/MPI_Irecv pairs for SendRecv. A Gather, Scatter, Broadcast
// or Reduce root outside the team joins that communicator last and only
// receives (Gather, Reduce) or only sends (Scatter, Broadcast); a Reduce
// root outside the team contributes the operator's identity.
//
// This file is compiled only when MPI is found; run-plan --backend mpi says
// so otherwise. It does not run the plan (executor/core/Run.h does).
#pragma once

#include "executor/core/Run.h"
#include "executor/mpi/MpiCoordinator.h"

namespace shardcheck {

class MpiBackend : public Backend {
public:
  /// Every wait for the other processes is bounded by `timeoutSeconds`.
  explicit MpiBackend(double timeoutSeconds) : coordinator_(timeoutSeconds) {}
  std::string name() const override { return "mpi"; }
  Coordinator &coordinator() override { return coordinator_; }
  std::unique_ptr<Device> openDevice(const Plan &plan) override;

private:
  MpiCoordinator coordinator_;
};

} // namespace shardcheck
