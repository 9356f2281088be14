// The backends a run-plan build has; see Backends.h.
#include "executor/Backends.h"

#ifdef SHARDCHECK_HAVE_MPI
#include "executor/mpi/MpiBackend.h"
#endif

namespace shardcheck {

std::vector<std::string> availableBackends() {
  std::vector<std::string> names{"sim"};
#ifdef SHARDCHECK_HAVE_MPI
  names.push_back("mpi");
#endif
  return names;
}

std::unique_ptr<Backend> createBackend(const std::string &name, std::string &why) {
  if (name == "sim")
    return std::make_unique<SimBackend>();
#ifdef SHARDCHECK_HAVE_MPI
  if (name == "mpi")
    return std::make_unique<MpiBackend>();
#endif
  if (name == "mpi" || name == "nccl")
    why = "the " + name + " backend is not built into this run-plan (" +
          (name == "mpi" ? "MPI was not found" : "CUDA and NCCL were not found") +
          " when it was built)";
  else
    why = "unknown backend '" + name + "'";
  return nullptr;
}

int agreeOnExitStatus(Backend &backend, int status) {
#ifdef SHARDCHECK_HAVE_MPI
  if (auto *mpi = dynamic_cast<MpiBackend *>(&backend))
    return mpi->agreeOnStatus(status);
#endif
  (void)backend;
  return status;
}

} // namespace shardcheck
