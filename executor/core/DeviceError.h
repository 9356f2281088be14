// The machine failed (a CUDA, cuBLAS or NCCL error, a deadline): not the
// plan's fault. The run loop (executor/core/Run.h) fails the step during
// which it is thrown as the Device's failureKind(), and ends a run that
// throws it elsewhere with a BackendError.
//
// A header of its own, with nothing else, so that the GPU layers (compiled
// by nvcc too) can derive their errors from it. This file does not say what
// a failure means for the run (executor/core/Run.h does).
#pragma once

#include <stdexcept>

namespace shardcheck {

class DeviceError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

} // namespace shardcheck
