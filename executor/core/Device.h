// Where a plan's buffers live and how steps run on them: the interface a
// backend implements for the run loop (executor/core/Run.h).
//
// A Device is this process's share of the plan's devices (every device for
// sim and single-process nccl, one under mpirun): it holds their buffers,
// moves values between host and buffers, and runs a step's work on them.
// The run loop decides everything else the same way for every backend:
// what to refuse, bindings, slot counts, which values each buffer starts
// with, each copy's gather map, each collective's calls, counts and bytes,
// failure agreement, validation and timing.
//
// Failures: a step that cannot run as the plan says throws StepFailure
// (RunSupport.h); the machine failing (a CUDA or NCCL error) throws a
// DeviceError (DeviceError.h), reported as failureKind().
//
// This file does not decide anything about a plan and holds no buffers.
#pragma once

#include "executor/BufferMap.h"
#include "executor/LocalBox.h"
#include "executor/core/CollectiveRules.h"
#include "executor/core/DeviceError.h"
#include "executor/core/RunReport.h"
#include "ir/FusionGraph.h"

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace shardcheck {

/// Where every element of every buffer sits: the dense box of a buffer when
/// it is one (executor/LocalBox.h), else the enumerated buffer map, built on
/// first use (runs whose buffers are all dense boxes never build it unless
/// they are checked or a step needs index maps).
class Placement {
public:
  Placement(const Plan &plan, const FusionGraph &graph, const Bindings &symbols)
      : plan_(plan), graph_(graph), symbols_(symbols) {}
  const BufferMap &map();
  const std::optional<LocalBox> &boxOf(const PlanBuffer &b, int64_t device);
  /// The slot count of `b` on `device` (its box's, else the map's).
  int64_t slotCount(const PlanBuffer &b, int64_t device);
  /// The values `b` holds on `device` when its tensor's value is `whole`
  /// (padding slots 0).
  std::vector<double> slice(const PlanBuffer &b, int64_t device, const HostTensor &whole);

private:
  const Plan &plan_;
  const FusionGraph &graph_;
  const Bindings &symbols_;
  std::unique_ptr<BufferMap> map_;
  std::map<std::pair<std::string, int64_t>, std::optional<LocalBox>> boxes_;
};

/// What a device reads of the run it takes part in.
struct RunContext {
  const Plan &plan;
  const FusionGraph &graph;
  const Bindings &symbols;
  const RunOptions &options;
  Placement &placement;
  const std::set<int64_t> &local; ///< The plan devices this process holds.
};

/// One team's call of a collective step, with every participant's buffer
/// sizes (its counts checked by the rules of CollectiveRules.h).
struct TeamCall {
  CollectiveCall call;
  std::map<int64_t, int64_t> in, out;
};

/// Where a slice sits in its base's buffer: for o < outer and t < inner,
/// slice slot o * inner + t is base slot o * stride + offset + t.
struct SliceWindow {
  int64_t outer = 1, stride = 0, offset = 0, inner = 0;
};

class Device {
public:
  virtual ~Device() = default;
  /// Starts a run: called once, before anything below.
  virtual void begin(RunContext &run) = 0;
  /// Creates buffer `b` of `slots` slots (zero-filled) on local `device`.
  virtual void allocate(const PlanBuffer &b, int64_t device, int64_t slots) = 0;
  /// Whether local `device` holds `buffer`.
  virtual bool holds(const std::string &buffer, int64_t device) const = 0;
  /// Stores `values` (one per slot) into `buffer` on `device`, rounded to
  /// the buffer's type where the device stores types.
  virtual void upload(const std::string &buffer, int64_t device,
                      const std::vector<double> &values) = 0;
  /// The values of `buffer` on `device`, once every step before finished.
  virtual std::vector<double> download(const std::string &buffer, int64_t device) = 0;
  /// Makes `output` on `device` the same storage as `input` (zero copies);
  /// StepFailure count-error when their sizes differ.
  virtual void alias(const std::string &input, const std::string &output, int64_t device) = 0;
  /// output[o] = input[slots[o]] on `device` (slots[o] < 0: padding); `key`
  /// names the map (the same key, the same map: a device may keep it).
  virtual void gather(const std::string &input, const std::string &output, int64_t device,
                      const std::vector<int64_t> &slots, const std::string &key) = 0;
  /// A loop's slice (docs/plan-format.md, "Loops"): copies the window `w`
  /// of `base` into `slice` on `device`. The default goes through download
  /// and upload; a backend may do better.
  virtual void readWindow(const std::string &base, const std::string &slice, int64_t device,
                          const SliceWindow &w);
  /// Stores `slice` back into the window `w` of `base` on `device`.
  virtual void writeWindow(const std::string &slice, const std::string &base, int64_t device,
                           const SliceWindow &w);
  /// Runs compute step `index` on local `device`, which holds its output.
  virtual void compute(size_t index, const PlanStep &step, int64_t device) = 0;
  /// Runs a collective step's calls (one per team, checked) and returns once
  /// its outputs are complete (rounded to their dtype).
  virtual void collective(const PlanStep &step, const std::vector<TeamCall> &calls) = 0;
  /// Waits for every step queued on the local devices.
  virtual void synchronize() = 0;
  /// The RunFailure kind of a DeviceError during a step.
  virtual std::string failureKind() const { return "device-error"; }
  /// After a run failed with failureKind(): drop what cannot end in order
  /// (nccl: peers may be stuck in a collective).
  virtual void abandon() {}
};

/// The message of an alias whose output does not fit its input: "alias T1
/// -> T3 on device 0: T3 needs 2 element(s) but T1 holds 1".
std::string aliasCountError(const std::string &input, const std::string &output, int64_t device,
                            int64_t needed, int64_t have, const std::string &ofWhat = "");

} // namespace shardcheck
