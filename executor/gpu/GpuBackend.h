// The nccl backend: a plan's buffers in GPU memory, compute steps as CUDA
// kernels, collectives through NCCL.
//
// Two launch modes, the same code:
// - one process driving every plan device, one GPU each
//   (`run-plan --backend nccl [--gpus N] PLAN`, communicators from one
//   process, a LocalCoordinator);
// - one process per GPU under mpirun (`mpirun -np N run-plan --backend nccl
//   PLAN`): the coordinator (the mpi backend's, given by the composition
//   root) broadcasts rank 0's NCCL unique id; the local GPU comes from
//   OpenMPI's, Slurm's or torchrun's local rank. The same command spans
//   nodes.
// Plan device i (in the plan's device order) is NCCL world rank i. Every team
// of the plan gets its communicator up front (ncclCommSplit of the world).
//
// Each step runs on the local ranks' streams (GpuDevice.h): compute steps as
// the index-map kernels of executor/LocalCompute.h or the dense forms of
// executor/LocalBox.h, copies as gathers, aliases as the same device
// allocation (zero bytes), collectives as the NCCL call of the same meaning
// after every process checked every device's counts. A CUDA or NCCL error,
// an asynchronous NCCL error or a collective that does not finish within the
// timeout aborts the communicators and ends the run with a `gpu-error`
// failure on every process; device memory is freed on every path.
//
// Validation is the run loop's: buffers are downloaded and compared with the
// double-precision reference. This file does not run steps (GpuDevice.h)
// or decide what a run does (executor/core/Run.h).
#pragma once

#include "executor/core/Run.h"

#include <memory>

namespace shardcheck {

struct GpuConfig {
  /// Single-process mode: the number of GPUs to drive (0: one per plan
  /// device). A plan needs one GPU per device.
  int gpus = 0;
  /// A collective that does not finish within this many seconds aborts the
  /// run.
  double timeoutSeconds = 60;
  /// One process per GPU (under a launcher; the coordinator then spans the
  /// processes), else one process driving every GPU.
  bool processPerGpu = false;
};

/// The nccl backend over `coordinator`: a LocalCoordinator when this
/// process drives every GPU, the processes' one (mpi) with processPerGpu.
class GpuBackend : public Backend {
public:
  GpuBackend(GpuConfig config, std::unique_ptr<Coordinator> coordinator);
  ~GpuBackend() override;

  std::string name() const override { return "nccl"; }
  Coordinator &coordinator() override { return *coordinator_; }
  /// Checks that the plan fits the processes and GPUs and opens the NCCL
  /// world.
  std::unique_ptr<Device> openDevice(const Plan &plan) override;

private:
  GpuConfig config_;
  std::unique_ptr<Coordinator> coordinator_;
};

/// Whether this process was started by a launcher with more than one process
/// (OpenMPI, Slurm or torchrun variables).
bool launchedAsSeveralProcesses();

} // namespace shardcheck
