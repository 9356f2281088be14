// The backends a run-plan build has, by name.
//
// `sim` always; `mpi` when the build found MPI (one process per device under
// mpirun). This file only chooses; the backends are in Executor.h and
// executor/mpi/.
#pragma once

#include "executor/Executor.h"

#include <memory>
#include <string>
#include <vector>

namespace shardcheck {

/// The names of the backends this build has, in the order `--help` lists.
std::vector<std::string> availableBackends();

/// A backend by name, or null with `why` set ("the mpi backend is not built
/// into this run-plan: MPI was not found when it was built").
std::unique_ptr<Backend> createBackend(const std::string &name, std::string &why);

/// Makes every process of a multi-process backend return the leader's exit
/// status (identity for single-process backends).
int agreeOnExitStatus(Backend &backend, int status);

} // namespace shardcheck
