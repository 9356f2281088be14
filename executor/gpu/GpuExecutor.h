// The nccl backend: a plan's buffers in GPU memory, compute steps as CUDA
// kernels, collectives through NCCL.
//
// Two launch modes, the same code:
// - one process driving every plan device, one GPU each
//   (`run-plan --backend nccl [--gpus N] PLAN`, communicators from one
//   process);
// - one process per GPU under mpirun (`mpirun -np N run-plan --backend nccl
//   PLAN`): rank 0 creates the NCCL unique id and MPI broadcasts it; the
//   local GPU comes from OpenMPI's, Slurm's or torchrun's local rank. The
//   same command spans nodes.
// Plan device i (in the plan's device order) is NCCL world rank i. Every team
// of the plan gets its communicator up front (ncclCommSplit of the world).
//
// Each step runs on the local ranks' streams: compute steps as the index-map
// kernels of executor/LocalCompute.h (elementwise, segment reduction, pair
// dot; the maps are built on the host once and uploaded), copies as gathers,
// aliases as the same device allocation (zero bytes), collectives as the NCCL
// call of the same meaning after every process checked every device's counts.
// A CUDA or NCCL error, an asynchronous NCCL error or a collective that does
// not finish within the timeout aborts the communicators and ends the run
// with a `gpu-error` failure on every process; device memory is freed on
// every path.
//
// Validation is the host executor's: buffers are downloaded and compared with
// the double-precision reference.
#pragma once

#include "executor/Executor.h"

#include <memory>

namespace shardcheck {

struct GpuConfig {
  /// Single-process mode: the number of GPUs to drive (0: one per plan
  /// device). A plan needs one GPU per device.
  int gpus = 0;
  /// A collective that does not finish within this many seconds aborts the
  /// run.
  double timeoutSeconds = 60;
};

/// The nccl backend. `coordinator` (optional) is the mpi backend when run as
/// one process per GPU; it decides the local device and agrees on failures.
class GpuBackend : public Backend {
public:
  GpuBackend(GpuConfig config, std::unique_ptr<Backend> coordinator);
  ~GpuBackend() override;

  std::string name() const override { return "nccl"; }
  std::vector<int64_t> localDevices(const std::vector<int64_t> &planDevices) override;
  bool isLeader() const override;
  void collective(const SimCollectiveCall &, const std::map<int64_t, int64_t> &,
                  const std::map<int64_t, int64_t> &, const std::map<int64_t, const SimBuffer *> &,
                  const std::map<int64_t, SimBuffer *> &) override;
  void allToAllv(const std::vector<int64_t> &, const std::vector<std::vector<int64_t>> &,
                 const std::map<int64_t, const SimBuffer *> &,
                 const std::map<int64_t, SimBuffer *> &, const std::string &,
                 const std::string &) override;
  std::optional<RunFailure> agreeOnFailure(const std::optional<RunFailure> &local) override;
  std::vector<TensorCheck> gatherChecks(const std::vector<TensorCheck> &local) override;
  RunReport run(const Plan &plan, const RunOptions &options) override;

  /// The coordinator (mpi) when there is one, else null.
  Backend *coordinator() { return coordinator_.get(); }
  const GpuConfig &config() const { return config_; }

private:
  RunReport runOnGpus(const Plan &plan, const RunOptions &options);
  GpuConfig config_;
  std::unique_ptr<Backend> coordinator_;
};

/// Whether this process was started by a launcher with more than one process
/// (OpenMPI, Slurm or torchrun variables).
bool launchedAsSeveralProcesses();

} // namespace shardcheck
