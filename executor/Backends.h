// The backends a run-plan build has, by name.
//
// `sim` always; `mpi` when the build found MPI (one process per device under
// mpirun); `nccl` when it found CUDA and NCCL (GPUs, one process or one per
// GPU under mpirun). This file only chooses; the backends are in Executor.h and
// executor/mpi/.
#pragma once

#include "executor/Executor.h"

#include <memory>
#include <string>
#include <vector>

namespace shardcheck {

/// The names of the backends this build has, in the order `--help` lists.
std::vector<std::string> availableBackends();

/// What a backend is created with (the nccl backend's options).
struct BackendOptions {
  int gpus = 0;               ///< nccl, one process: GPUs to drive (0: one per device).
  double timeoutSeconds = 60; ///< nccl: a collective that takes longer aborts the run.
};

/// A backend by name, or null with `why` set ("the mpi backend is not built
/// into this run-plan: MPI was not found when it was built"). The nccl
/// backend runs one process per GPU when started by a launcher with several
/// processes (mpirun, srun, torchrun), else one process driving every GPU.
std::unique_ptr<Backend> createBackend(const std::string &name, const BackendOptions &options,
                                       std::string &why);

/// Makes every process of a multi-process backend return the leader's exit
/// status (identity for single-process backends).
int agreeOnExitStatus(Backend &backend, int status);

} // namespace shardcheck
