// The nccl backend's Device: every local plan device's buffers as arrays
// in its GPU's memory (executor/gpu/DeviceOps.h), its steps on that rank's
// stream, collectives through the NCCL world (executor/gpu/NcclTeams.h).
//
// Index arrays (gathers, segment and pair maps) and each compute step's
// local form are built on the host once per run and kept; compute, copy and
// alias steps return once queued, collectives once NCCL finished them
// (bounded by the timeout).
//
// This file does not decide anything the run loop decides
// (executor/core/Run.h); GpuCompute.cpp holds the compute steps.
#pragma once

#include "executor/LocalCompute.h"
#include "executor/core/Device.h"
#include "executor/gpu/DeviceOps.h"
#include "executor/gpu/NcclTeams.h"

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace shardcheck {

class GpuDevice : public Device {
public:
  GpuDevice(std::unique_ptr<gpu::NcclWorld> world, double timeoutSeconds)
      : world_(std::move(world)), timeoutSeconds_(timeoutSeconds) {}

  void begin(RunContext &run) override;
  void allocate(const PlanBuffer &b, int64_t device, int64_t slots) override;
  bool holds(const std::string &buffer, int64_t device) const override {
    return arrays_.count({buffer, device}) > 0;
  }
  void upload(const std::string &buffer, int64_t device,
              const std::vector<double> &values) override;
  std::vector<double> download(const std::string &buffer, int64_t device) override;
  void alias(const std::string &input, const std::string &output, int64_t device) override;
  void gather(const std::string &input, const std::string &output, int64_t device,
              const std::vector<int64_t> &slots, const std::string &key) override;
  void compute(size_t index, const PlanStep &step, int64_t device) override;
  void collective(const PlanStep &step, const std::vector<TeamCall> &calls) override;
  void synchronize() override;
  std::string failureKind() const override { return "gpu-error"; }
  /// Peers may be stuck in NCCL: no orderly finalization.
  void abandon() override { world_->abort(); }

private:
  int rankOf(int64_t device) const;
  gpu::Stream streamOf(int64_t device) const { return world_->streamOf(rankOf(device)); }
  int gpuOf(int64_t device) const { return world_->gpuOf(rankOf(device)); }
  gpu::DeviceArray *array(const std::string &buffer, int64_t device) {
    auto it = arrays_.find({buffer, device});
    return it == arrays_.end() ? nullptr : it->second.get();
  }
  /// An index array on `device`'s GPU, uploaded once per run.
  const gpu::DeviceArray *indices(const std::string &key, int64_t device,
                                  const std::vector<int64_t> &values);
  /// Every communicator the plan's collectives use, in step order (the
  /// same list on every process).
  void prepareTeams();
  gpu::NcclCall ncclCall(const TeamCall &team, ElementType type) const;
  const LocalCompute &computeOf(size_t index, const PlanStep &step, int64_t device);
  void launchCompute(const std::string &key, const LocalCompute &c, const PlanStep &step,
                     int64_t device);
  void launchEpilogue(const std::string &key, const LocalCompute &c, gpu::DeviceArray &out,
                      int64_t device);
  gpu::ElementwiseOperand operand(const std::string &key, const LocalOperand &op,
                                  const std::string &name, int64_t device);
  void addInPlace(const std::string &key, const LocalOperand &bias, gpu::DeviceArray &out,
                  int64_t device);

  std::unique_ptr<gpu::NcclWorld> world_;
  double timeoutSeconds_;
  RunContext *run_ = nullptr;
  std::map<std::pair<size_t, int64_t>, LocalCompute> computes_;
  std::map<std::pair<std::string, int64_t>, std::shared_ptr<gpu::DeviceArray>> arrays_;
  std::map<std::pair<std::string, int64_t>, std::unique_ptr<gpu::DeviceArray>> indexCache_;
};

} // namespace shardcheck
