// The sim backend; see SimBackend.h.
#include "executor/sim/SimBackend.h"

#include "executor/host/HostDevice.h"
#include "executor/sim/SimCollectives.h"

namespace shardcheck {

namespace {

/// Host buffers whose collectives are the sim collectives.
class SimDevice : public HostDevice {
  void runTeam(const TeamCall &team, const std::map<int64_t, const std::vector<double> *> &in,
               const std::map<int64_t, std::vector<double> *> &out) override {
    runSimCollective(team.call, in, out);
  }
};

} // namespace

std::unique_ptr<Device> SimBackend::openDevice(const Plan &) {
  return std::make_unique<SimDevice>();
}

} // namespace shardcheck
