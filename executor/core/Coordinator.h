// The processes of a run: which plan devices this process holds, which
// process prints, and how the processes agree (DESIGN section 5). The run
// loop (executor/core/Run.h) asks it after every step and at the end; a
// backend's Device moves the data.
//
// LocalCoordinator is one process holding every device (sim, nccl driving
// every GPU); executor/mpi/ has the one process per device of mpirun.
//
// This file does not move buffers or run collectives (executor/core/Device.h).
#pragma once

#include "executor/core/RunReport.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace shardcheck {

class Coordinator {
public:
  virtual ~Coordinator() = default;
  /// The devices of `planDevices` whose buffers this process holds. Throws
  /// InputError when the plan does not fit the processes.
  virtual std::vector<int64_t> localDevices(const std::vector<int64_t> &planDevices) = 0;
  /// Whether this process prints and writes the report.
  virtual bool isLeader() const = 0;
  /// This process's rank among size() processes.
  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// Called once before a run of `plan` starts (mpi names its steps in
  /// timeout messages).
  virtual void runBegins(const Plan &plan) {}
  /// Copies the leader's `bytes` bytes at `data` into every process's `data`
  /// (how the nccl backend shares NCCL's unique id).
  virtual void broadcastBytes(void *data, size_t bytes) = 0;
  /// After each step: the failure of whichever process failed first (by
  /// rank), the same on every process; nullopt when none did. Also the
  /// barrier that starts every timed run together.
  virtual std::optional<RunFailure> agreeOnFailure(const std::optional<RunFailure> &local) = 0;
  /// After the run: every process's tensor checks, merged at the leader.
  virtual std::vector<TensorCheck> gatherChecks(const std::vector<TensorCheck> &local) = 0;
  /// The same exit status on every process: the leader's.
  virtual int agreeOnStatus(int status) = 0;
};

/// One process holding every device: nothing to agree on.
class LocalCoordinator : public Coordinator {
public:
  std::vector<int64_t> localDevices(const std::vector<int64_t> &planDevices) override {
    return planDevices;
  }
  bool isLeader() const override { return true; }
  int rank() const override { return 0; }
  int size() const override { return 1; }
  void broadcastBytes(void *, size_t) override {}
  std::optional<RunFailure> agreeOnFailure(const std::optional<RunFailure> &local) override {
    return local;
  }
  std::vector<TensorCheck> gatherChecks(const std::vector<TensorCheck> &local) override {
    return local;
  }
  int agreeOnStatus(int status) override { return status; }
};

} // namespace shardcheck
