// Host buffers for the sim and mpi backends: every buffer a vector of
// doubles (values rounded to the buffer's dtype as a device would store
// them), compute steps evaluated on the host, collectives left to the
// backend (runTeam).
//
// Compute steps run one of two ways (RunOptions::indexedCompute): by
// evaluating the op over the device's elements of global-shaped views (its
// inputs' other elements are NaN, or the reduction's identity for a
// partial), or from the index maps and dense forms over local buffers that
// the GPU kernels use (executor/LocalCompute.h). Buffers are shared pointers
// so that an alias step makes two plan buffers one storage.
//
// This file does not move data between devices (sim/ and mpi/ do) and
// decides nothing the run loop decides (executor/core/Run.h).
#pragma once

#include "executor/core/Device.h"

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace shardcheck {

class HostDevice : public Device {
public:
  void begin(RunContext &run) override { run_ = &run; }
  void allocate(const PlanBuffer &b, int64_t device, int64_t slots) override;
  bool holds(const std::string &buffer, int64_t device) const override {
    return storage_.count({buffer, device}) > 0;
  }
  void upload(const std::string &buffer, int64_t device,
              const std::vector<double> &values) override {
    *storage(buffer, device) = values;
  }
  std::vector<double> download(const std::string &buffer, int64_t device) override {
    return *storage(buffer, device);
  }
  void alias(const std::string &input, const std::string &output, int64_t device) override;
  void gather(const std::string &input, const std::string &output, int64_t device,
              const std::vector<int64_t> &slots, const std::string &key) override;
  void compute(size_t index, const PlanStep &step, int64_t device) override;
  void collective(const PlanStep &step, const std::vector<TeamCall> &calls) override;
  void synchronize() override {} // A host step is done when it returns.

protected:
  /// Runs one team's call; `in` and `out` hold this process's buffers of
  /// the call's participants only.
  virtual void runTeam(const TeamCall &team,
                       const std::map<int64_t, const std::vector<double> *> &in,
                       const std::map<int64_t, std::vector<double> *> &out) = 0;

private:
  std::vector<double> *storage(const std::string &buffer, int64_t device) {
    auto it = storage_.find({buffer, device});
    return it == storage_.end() ? nullptr : it->second.get();
  }
  /// The global value of `tensor` as `device` sees it through `bufferName`:
  /// the elements it holds there, `missing` everywhere else.
  HostTensor globalView(const std::string &bufferName, int64_t device, double missing);
  void computeOnViews(const PlanStep &step, int64_t device);
  void computeIndexed(const PlanStep &step, int64_t device);

  RunContext *run_ = nullptr;
  std::map<std::pair<std::string, int64_t>, std::shared_ptr<std::vector<double>>> storage_;
};

} // namespace shardcheck
