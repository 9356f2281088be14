// The nccl backend and its device's buffers and collectives; see
// GpuBackend.h and GpuDevice.h (compute steps: GpuCompute.cpp).
#include "executor/gpu/GpuDevice.h"
#include "executor/gpu/GpuBackend.h"

#include "executor/core/RunSupport.h"

#include <algorithm>
#include <cstdlib>

namespace shardcheck {

using gpu::DeviceArray;

bool launchedAsSeveralProcesses() {
  for (const char *var : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS", "WORLD_SIZE"})
    if (const char *v = std::getenv(var); v && std::atoi(v) > 1)
      return true;
  return false;
}

namespace {

ElementType elementTypeFor(const PlanBuffer &b) {
  auto t = elementTypeOf(b.dtype);
  if (!t)
    throwInputError("unsupported-dtype",
                    "buffer \"" + b.name + "\" has dtype " + dataTypeName(b.dtype) +
                        ", which the nccl backend does not hold",
                    SourceLoc{});
  return *t;
}

/// The world of one process per GPU: rank and size from the coordinator,
/// the local GPU from the launcher's environment.
std::unique_ptr<gpu::NcclWorld> multiProcessWorld(Coordinator &coordinator, int visible) {
  if (visible < 1)
    throwInputError("no-gpu", "the nccl backend needs a CUDA device; none is visible", SourceLoc{});
  int gpu = gpu::NcclWorld::localGpuFromEnvironment() % visible;
  return gpu::NcclWorld::multiProcess(
      coordinator.rank(), coordinator.size(), gpu,
      [&coordinator](void *data, size_t bytes) { coordinator.broadcastBytes(data, bytes); });
}

/// The world of one process driving `gpus` GPUs (0: one per plan device).
std::unique_ptr<gpu::NcclWorld> singleProcessWorld(int gpus, int needed, int visible) {
  gpus = gpus > 0 ? gpus : needed;
  if (gpus != needed)
    throwInputError("gpus",
                    "the plan has " + std::to_string(needed) +
                        " device(s) and runs one per GPU; --gpus " + std::to_string(gpus) +
                        " does not fit it",
                    SourceLoc{});
  if (visible < gpus)
    throwInputError("no-gpu",
                    "the plan needs " + std::to_string(gpus) + " GPU(s); " +
                        std::to_string(visible) + " visible",
                    SourceLoc{});
  std::vector<int> ids;
  for (int g = 0; g < gpus; ++g)
    ids.push_back(g);
  return gpu::NcclWorld::singleProcess(ids);
}

} // namespace

GpuBackend::GpuBackend(GpuConfig config, std::unique_ptr<Coordinator> coordinator)
    : config_(config), coordinator_(std::move(coordinator)) {}

GpuBackend::~GpuBackend() {
  gpu::releaseGpuResources();
}

std::unique_ptr<Device> GpuBackend::openDevice(const Plan &plan) {
  int visible = gpu::deviceCount();
  std::unique_ptr<gpu::NcclWorld> world;
  if (config_.processPerGpu) {
    coordinator_->localDevices(plan.devices); // Checks the process count.
    world = multiProcessWorld(*coordinator_, visible);
  } else {
    world = singleProcessWorld(config_.gpus, static_cast<int>(plan.devices.size()), visible);
  }
  return std::make_unique<GpuDevice>(std::move(world), config_.timeoutSeconds);
}

int GpuDevice::rankOf(int64_t device) const {
  const std::vector<int64_t> &devices = run_->plan.devices;
  return static_cast<int>(std::find(devices.begin(), devices.end(), device) - devices.begin());
}

const DeviceArray *GpuDevice::indices(const std::string &key, int64_t device,
                                      const std::vector<int64_t> &values) {
  auto &slot = indexCache_[{key, device}];
  if (!slot)
    slot = std::make_unique<DeviceArray>(gpu::uploadIndices(gpuOf(device), values));
  return slot.get();
}

void GpuDevice::prepareTeams() {
  std::vector<std::vector<int>> teams;
  for (const PlanStep &s : run_->plan.steps) {
    if (s.kind != StepKind::Collective || movesByPairs(*s.collective))
      continue;
    for (const PlanTeam &t : s.teams) {
      CollectiveCall call;
      call.team = t.devices;
      call.root = t.root;
      std::vector<int> members;
      for (int64_t d : communicatorOrder(call))
        members.push_back(rankOf(d));
      teams.push_back(members);
    }
  }
  world_->prepareTeams(teams);
}

void GpuDevice::begin(RunContext &run) {
  run_ = &run;
  // Every process refuses alike, whichever buffers it holds.
  for (const PlanBuffer &b : run.plan.buffers)
    elementTypeFor(b);
  prepareTeams();
}

void GpuDevice::allocate(const PlanBuffer &b, int64_t device, int64_t slots) {
  arrays_[{b.name, device}] =
      std::make_shared<DeviceArray>(gpu::allocateArray(gpuOf(device), elementTypeFor(b), slots));
}

void GpuDevice::upload(const std::string &buffer, int64_t device,
                       const std::vector<double> &values) {
  gpu::uploadArray(*array(buffer, device), values, streamOf(device));
}

std::vector<double> GpuDevice::download(const std::string &buffer, int64_t device) {
  return gpu::downloadArray(*array(buffer, device), streamOf(device));
}

void GpuDevice::synchronize() {
  for (int64_t d : run_->local)
    gpu::synchronize(gpuOf(d), streamOf(d));
}

void GpuDevice::gather(const std::string &input, const std::string &output, int64_t device,
                       const std::vector<int64_t> &slots, const std::string &key) {
  gpu::launchGather(*array(input, device), *indices(key, device, slots), *array(output, device),
                    streamOf(device));
}

void GpuDevice::alias(const std::string &input, const std::string &output, int64_t device) {
  auto target = arrays_.find({output, device});
  auto in = arrays_.find({input, device});
  int64_t have = in == arrays_.end() ? 0 : in->second->count;
  if (have != target->second->count || in->second->type != target->second->type)
    throw StepFailure{"count-error", aliasCountError(input, output, device, target->second->count,
                                                     have, " of its type")};
  target->second = in->second; // The same device allocation: zero copies.
}

gpu::NcclCall GpuDevice::ncclCall(const TeamCall &t, ElementType type) const {
  gpu::NcclCall call;
  call.kind = t.call.kind;
  call.dataType = type;
  call.reduceOp = t.call.op;
  for (int64_t d : t.call.team)
    call.team.push_back(rankOf(d));
  if (t.call.root)
    call.root = rankOf(*t.call.root);
  for (const auto &[src, dst] : t.call.pairs) {
    call.pairs.emplace_back(rankOf(src), rankOf(dst));
    call.pairCounts.push_back(t.in.at(src));
  }
  call.counts = t.call.counts;
  call.count = perRankChunk(t.call, t.in);
  return call;
}

void GpuDevice::collective(const PlanStep &step, const std::vector<TeamCall> &calls) {
  const PlanBuffer &in = *run_->plan.buffer(step.inputs[0]);
  const PlanBuffer &out = *run_->plan.buffer(step.output);
  ElementType type = elementTypeFor(out);
  if (elementTypeFor(in) != type)
    throw StepFailure{"plan-error", "a collective from \"" + in.name + "\" to \"" + out.name +
                                        "\" changes the dtype"};
  for (size_t i = 0; i < calls.size(); ++i) {
    std::map<int, const void *> send;
    std::map<int, void *> recv;
    for (int64_t d : teamParticipants(step.teams[i])) {
      if (DeviceArray *a = array(in.name, d))
        send[rankOf(d)] = a->ptr();
      if (DeviceArray *a = array(out.name, d))
        recv[rankOf(d)] = a->ptr();
    }
    gpu::runCollective(*world_, ncclCall(calls[i], type), send, recv);
  }
  gpu::waitAll(*world_, timeoutSeconds_);
}

} // namespace shardcheck
