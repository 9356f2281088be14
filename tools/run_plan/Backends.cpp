// The backends a run-plan build has; see Backends.h.
#include "tools/run_plan/Backends.h"

#include "executor/sim/SimBackend.h"
#ifdef SHARDCHECK_HAVE_MPI
#include "executor/mpi/MpiBackend.h"
#endif
#ifdef SHARDCHECK_HAVE_GPU
#include "executor/gpu/GpuBackend.h"
#endif

namespace shardcheck {

std::vector<std::string> availableBackends() {
  std::vector<std::string> names{"sim"};
#ifdef SHARDCHECK_HAVE_MPI
  names.push_back("mpi");
#endif
#ifdef SHARDCHECK_HAVE_GPU
  names.push_back("nccl");
#endif
  return names;
}

std::unique_ptr<Backend> createBackend(const std::string &name, const BackendOptions &options,
                                       std::string &why) {
  if (name == "sim")
    return std::make_unique<SimBackend>();
#ifdef SHARDCHECK_HAVE_GPU
  if (name == "nccl") {
    std::unique_ptr<Coordinator> coordinator = std::make_unique<LocalCoordinator>();
    bool processPerGpu = launchedAsSeveralProcesses();
    if (processPerGpu) {
#ifdef SHARDCHECK_HAVE_MPI
      coordinator = std::make_unique<MpiCoordinator>(options.timeoutSeconds);
#else
      why = "one process per GPU needs MPI, which this run-plan was built without";
      return nullptr;
#endif
    }
    return std::make_unique<GpuBackend>(
        GpuConfig{options.gpus, options.timeoutSeconds, processPerGpu}, std::move(coordinator));
  }
#endif
#ifdef SHARDCHECK_HAVE_MPI
  if (name == "mpi")
    return std::make_unique<MpiBackend>(options.timeoutSeconds);
#endif
  if (name == "mpi" || name == "nccl")
    why = "the " + name + " backend is not built into this run-plan (" +
          (name == "mpi" ? "MPI was not found" : "CUDA and NCCL were not found") +
          " when it was built)";
  else
    why = "unknown backend '" + name + "'";
  return nullptr;
}

bool joinJob(Backend &backend, int processes) {
#ifdef SHARDCHECK_HAVE_MPI
  if (auto *mpi = dynamic_cast<MpiCoordinator *>(&backend.coordinator()))
    return mpi->joinJob(processes);
#endif
  return true;
}

} // namespace shardcheck
