// The sim backend: every plan device in this process, host buffers, the
// collectives of executor/sim/SimCollectives.h. Needs nothing.
//
// This file does not run the plan (executor/core/Run.h does, over this
// backend's device and coordinator).
#pragma once

#include "executor/core/Run.h"

namespace shardcheck {

class SimBackend : public Backend {
public:
  std::string name() const override { return "sim"; }
  Coordinator &coordinator() override { return coordinator_; }
  std::unique_ptr<Device> openDevice(const Plan &plan) override;

private:
  LocalCoordinator coordinator_;
};

} // namespace shardcheck
