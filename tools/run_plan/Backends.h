// The backends a run-plan build has, by name: the composition root that
// puts a backend together from its Device and Coordinator.
//
// `sim` always; `mpi` when the build found MPI (one process per device under
// mpirun); `nccl` when it found CUDA and NCCL (GPUs, one process or one per
// GPU under mpirun). This file only chooses; the backends are in
// executor/sim/, executor/mpi/ and executor/gpu/, which never include each
// other: the nccl backend under mpirun gets its MpiCoordinator from here.
#pragma once

#include "executor/core/Run.h"

#include <memory>
#include <string>
#include <vector>

namespace shardcheck {

/// The names of the backends this build has, in the order `--help` lists.
std::vector<std::string> availableBackends();

/// What a backend is created with (the nccl backend's options).
struct BackendOptions {
  int gpus = 0; ///< nccl, one process: GPUs to drive (0: one per device).
  /// mpi and nccl: a wait for the other processes or GPUs that takes longer
  /// ends the run.
  double timeoutSeconds = 60;
};

/// A backend by name, or null with `why` set ("the mpi backend is not built
/// into this run-plan: MPI was not found when it was built"). The nccl
/// backend runs one process per GPU when started by a launcher with several
/// processes (mpirun, srun, torchrun), else one process driving every GPU.
std::unique_ptr<Backend> createBackend(const std::string &name, const BackendOptions &options,
                                       std::string &why);

/// Before each plan of a batch, on every process: whether this process runs
/// the next plan of `processes` devices. Under MPI the first `processes`
/// run it and the others sit it out (MpiCoordinator::joinJob); one process
/// holding every device runs them all.
bool joinJob(Backend &backend, int processes);

} // namespace shardcheck
