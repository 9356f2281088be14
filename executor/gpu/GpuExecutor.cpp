// The nccl backend; see GpuExecutor.h.
//
// Structure: GpuBackend picks the launch mode and builds the NCCL world;
// GpuRun holds one run's device arrays and has one method per step kind,
// mirroring the host executor (Executor.cpp) with which it shares
// RunSupport.h and LocalCompute.h.
#include "executor/gpu/GpuExecutor.h"

#include "executor/BufferMap.h"
#include "executor/LocalBox.h"
#include "executor/LocalCompute.h"
#include "executor/Random.h"
#include "executor/RunSupport.h"
#include "executor/gpu/DeviceOps.h"
#include "executor/gpu/NcclTeams.h"
#include "executor/gpu/OpCodes.h"
#include "ir/FusionGraph.h"

#ifdef SHARDCHECK_HAVE_MPI
#include "executor/mpi/MpiBackend.h"
#endif

#include <algorithm>
#include <cstdlib>
#include <set>

namespace shardcheck {

using gpu::DeviceArray;

bool launchedAsSeveralProcesses() {
  for (const char *var : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS", "WORLD_SIZE"})
    if (const char *v = std::getenv(var); v && std::atoi(v) > 1)
      return true;
  return false;
}

GpuBackend::GpuBackend(GpuConfig config, std::unique_ptr<Backend> coordinator)
    : config_(config), coordinator_(std::move(coordinator)) {}

GpuBackend::~GpuBackend() {
  gpu::releaseGpuResources();
}

std::vector<int64_t> GpuBackend::localDevices(const std::vector<int64_t> &planDevices) {
  return coordinator_ ? coordinator_->localDevices(planDevices) : planDevices;
}

bool GpuBackend::isLeader() const {
  return !coordinator_ || coordinator_->isLeader();
}

void GpuBackend::collective(const SimCollectiveCall &, const std::map<int64_t, int64_t> &,
                            const std::map<int64_t, int64_t> &,
                            const std::map<int64_t, const SimBuffer *> &,
                            const std::map<int64_t, SimBuffer *> &) {
  SC_ASSERT(false, "the nccl backend runs collectives on device buffers (GpuRun)");
}

void GpuBackend::allToAllv(const std::vector<int64_t> &, const std::vector<std::vector<int64_t>> &,
                           const std::map<int64_t, const SimBuffer *> &,
                           const std::map<int64_t, SimBuffer *> &, const std::string &,
                           const std::string &) {
  SC_ASSERT(false, "the nccl backend runs collectives on device buffers (GpuRun)");
}

std::optional<RunFailure> GpuBackend::agreeOnFailure(const std::optional<RunFailure> &local) {
  return coordinator_ ? coordinator_->agreeOnFailure(local) : local;
}

std::vector<TensorCheck> GpuBackend::gatherChecks(const std::vector<TensorCheck> &local) {
  return coordinator_ ? coordinator_->gatherChecks(local) : local;
}

namespace {

std::string tensorName(TensorNum t) {
  return "T" + std::to_string(t);
}

ElementType elementTypeFor(const PlanBuffer &b) {
  auto t = elementTypeOf(b.dtype);
  if (!t)
    throwInputError("unsupported-dtype",
                    "buffer \"" + b.name + "\" has dtype " + dataTypeName(b.dtype) +
                        ", which the nccl backend does not hold",
                    SourceLoc{});
  return *t;
}

/// The kernel op of a non-reducing expression.
gpu::ElementwiseOp elementwiseOpOf(const Expr &e, DataType out) {
  using Kind = gpu::ElementwiseOp::Kind;
  auto need = [&](std::optional<int> code) {
    if (!code)
      throwInputError("unsupported-op", "the nccl backend has no kernel for `" + e.op + "`", e.loc);
    return *code;
  };
  switch (e.kind) {
  case OpKind::Unary:
    return {Kind::Unary, need(gpu::unaryCode(e.op)), false};
  case OpKind::Binary:
    return {Kind::Binary, need(gpu::binaryCode(e.op)),
            isIntegralDtype(out) && out != DataType::Bool};
  case OpKind::Ternary:
    return {Kind::Ternary, need(gpu::ternaryCode(e.op)), false};
  case OpKind::Where:
    return {Kind::Where, 0, false};
  case OpKind::Cast:
    return {Kind::Cast, 0, false};
  default:
    return {Kind::Copy, 0, false};
  }
}

/// One run of a plan on GPUs.
class GpuRun {
public:
  GpuRun(const Plan &plan, const RunOptions &options, GpuBackend &backend, gpu::NcclWorld &world)
      : plan_(plan), options_(options), backend_(backend), world_(world), graph_(planGraph(plan)) {}

  RunReport run();

private:
  int rankOf(int64_t device) const {
    auto it = std::find(plan_.devices.begin(), plan_.devices.end(), device);
    return static_cast<int>(it - plan_.devices.begin());
  }
  gpu::Stream streamOf(int64_t device) const { return world_.streamOf(rankOf(device)); }
  int gpuOf(int64_t device) const { return world_.gpuOf(rankOf(device)); }
  DeviceArray *array(const std::string &buffer, int64_t device) {
    auto it = arrays_.find({buffer, device});
    return it == arrays_.end() ? nullptr : it->second.get();
  }
  const PlanBuffer &buffer(const std::string &name) const { return *plan_.buffer(name); }
  /// An index array on `device`'s GPU, uploaded once per run.
  const DeviceArray *indices(const std::string &key, int64_t device,
                             const std::vector<int64_t> &values) {
    auto &slot = indexCache_[{key, device}];
    if (!slot)
      slot = std::make_unique<DeviceArray>(gpu::uploadIndices(gpuOf(device), values));
    return slot.get();
  }
  void synchronizeLocal() {
    for (int64_t d : local_)
      gpu::synchronize(gpuOf(d), streamOf(d));
  }
  /// The enumerated buffer map, built on first use: runs whose buffers are
  /// all dense boxes never build it unless they are checked.
  const BufferMap &map() {
    if (!map_)
      map_ = std::make_unique<BufferMap>(plan_, graph_, symbols_);
    return *map_;
  }
  const std::optional<LocalBox> &boxOf(const PlanBuffer &b, int64_t device) {
    auto key = std::make_pair(b.name, device);
    auto it = boxes_.find(key);
    if (it == boxes_.end())
      it = boxes_.emplace(key, bufferBoxOf(plan_, b, symbols_, device)).first;
    return it->second;
  }
  int64_t slotCountOf(const PlanBuffer &b, int64_t device) {
    if (const auto &box = boxOf(b, device))
      return box->slotCount();
    return static_cast<int64_t>(map().elements(b, device).size());
  }
  const LocalCompute &computeOf(size_t index, const PlanStep &step, int64_t device);

  void prepareTeams();
  void allocate();
  void distributeInputs(const std::map<TensorNum, HostTensor> &inputs);
  void runStep(size_t index, const PlanStep &step, StepReport &report, bool synchronize = true);
  void runCompute(size_t index, const PlanStep &step);
  void launchCompute(const std::string &key, const LocalCompute &c, const PlanStep &step,
                     int64_t device);
  void runCopy(size_t index, const PlanStep &step);
  void runAlias(const PlanStep &step);
  int64_t runCollective(const PlanStep &step);
  void validate();
  void timeRepeats();

  const Plan &plan_;
  const RunOptions &options_;
  GpuBackend &backend_;
  gpu::NcclWorld &world_;
  FusionGraph graph_;
  Bindings symbols_;
  std::unique_ptr<BufferMap> map_;
  std::map<std::pair<std::string, int64_t>, std::optional<LocalBox>> boxes_;
  std::map<std::pair<size_t, int64_t>, LocalCompute> computes_;
  ReferenceResult reference_;
  std::set<int64_t> local_;
  std::map<std::pair<std::string, int64_t>, std::shared_ptr<DeviceArray>> arrays_;
  std::map<std::pair<std::string, int64_t>, std::unique_ptr<DeviceArray>> indexCache_;
  std::set<TensorNum> written_;
  RunReport report_;
};

/// Every communicator the plan's collectives use, in step order (the same
/// list on every process).
void GpuRun::prepareTeams() {
  std::vector<std::vector<int>> teams;
  for (const PlanStep &s : plan_.steps) {
    if (s.kind != StepKind::Collective || s.collective == CollectiveType::SendRecv)
      continue;
    for (const PlanTeam &t : s.teams) {
      std::vector<int> members;
      for (int64_t d : t.devices)
        members.push_back(rankOf(d));
      if (t.root && std::find(t.devices.begin(), t.devices.end(), *t.root) == t.devices.end())
        members.push_back(rankOf(*t.root));
      teams.push_back(members);
    }
  }
  world_.prepareTeams(teams);
}

void GpuRun::allocate() {
  for (const PlanBuffer &b : plan_.buffers) {
    ElementType type = elementTypeFor(b);
    for (const PlanLocal &l : b.local) {
      int64_t slots = checkedSlotCount(plan_, b, l, symbols_, slotCountOf(b, l.device));
      if (local_.count(l.device))
        arrays_[{b.name, l.device}] =
            std::make_shared<DeviceArray>(gpu::allocateArray(gpuOf(l.device), type, slots));
    }
  }
}

void GpuRun::distributeInputs(const std::map<TensorNum, HostTensor> &inputs) {
  for (const auto &[t, value] : inputs) {
    const PlanBuffer *b = plan_.buffer(tensorName(t));
    if (!b)
      continue;
    for (const PlanLocal &l : b->local) {
      DeviceArray *a = array(b->name, l.device);
      if (!a)
        continue;
      std::vector<double> host;
      if (const auto &box = boxOf(*b, l.device)) {
        host = extractBox(value, *box);
      } else {
        const auto &elements = map().elements(*b, l.device);
        host.assign(elements.size(), 0.0);
        for (size_t o = 0; o < elements.size(); ++o)
          if (elements[o] != kNoElement)
            host[o] = value.data()[elements[o]];
      }
      gpu::uploadArray(*a, host, streamOf(l.device));
    }
  }
  synchronizeLocal();
}

void GpuRun::launchCompute(const std::string &key, const LocalCompute &c, const PlanStep &step,
                           int64_t d) {
  DeviceArray &out = *array(step.output, d);
  gpu::Stream stream = streamOf(d);
  const Expr &e = plan_.fusion.exprs[c.expr];
  auto operand = [&](const LocalOperand &op, const std::string &name) {
    gpu::ElementwiseOperand o;
    if (op.buffer.empty()) {
      o.scalar = op.scalar;
      return o;
    }
    o.array = array(op.buffer, d);
    if (!op.gather.empty())
      o.gather = indices(key + name, d, op.gather);
    return o;
  };
  auto addInPlace = [&](const LocalOperand &bias) {
    gpu::ElementwiseOp add{gpu::ElementwiseOp::Kind::Binary, *gpu::binaryCode("+"), false};
    gpu::launchElementwise(add, {gpu::ElementwiseOperand{&out, nullptr, 0}, operand(bias, "bias")},
                           out, stream);
  };
  switch (c.form) {
  case LocalCompute::Form::Elementwise: {
    std::vector<gpu::ElementwiseOperand> ops;
    for (size_t i = 0; i < c.operands.size(); ++i)
      ops.push_back(operand(c.operands[i], "op" + std::to_string(i)));
    gpu::launchElementwise(elementwiseOpOf(e, plan_.fusion.tensor(e.outputs[0]).dtype), ops, out,
                           stream);
    return;
  }
  case LocalCompute::Form::SegmentReduce:
    gpu::launchSegmentReduce(c.op, c.init, *array(c.operands[0].buffer, d),
                             *indices(key + "offsets", d, c.offsets),
                             *indices(key + "indices", d, c.indices), out, stream);
    return;
  case LocalCompute::Form::Gemm:
    gpu::gemmRowMajor(gpuOf(d), stream, *array(c.operands[0].buffer, d),
                      *array(c.operands[1].buffer, d), out, 1, c.m, c.n, c.k, c.transposeB, 0, 0,
                      0);
    return;
  case LocalCompute::Form::PairDot:
    gpu::launchPairDot(*array(c.operands[0].buffer, d), *array(c.operands[1].buffer, d),
                       *indices(key + "offsets", d, c.offsets),
                       *indices(key + "pairA", d, c.indices),
                       *indices(key + "pairB", d, c.indicesB), 0.0, out, stream);
    if (c.bias)
      addInPlace(*c.bias);
    return;
  case LocalCompute::Form::Epilogue: {
    bool identity =
        (c.op == ReduceOp::Sum && c.init == 0.0) || (c.op == ReduceOp::Prod && c.init == 1.0);
    if (!identity) {
      const char *spelling = c.op == ReduceOp::Sum    ? "+"
                             : c.op == ReduceOp::Prod ? "*"
                             : c.op == ReduceOp::Max  ? "max"
                                                      : "min";
      gpu::ElementwiseOp combine{gpu::ElementwiseOp::Kind::Binary, *gpu::binaryCode(spelling),
                                 false};
      gpu::launchElementwise(
          combine, {gpu::ElementwiseOperand{nullptr, nullptr, c.init}, {&out, nullptr, 0}}, out,
          stream);
    }
    if (c.bias)
      addInPlace(*c.bias);
    return;
  }
  }
}

/// The step's local form on `device`, built once per run: the dense form
/// when every buffer is a box (no layouts enumerated), else index maps.
const LocalCompute &GpuRun::computeOf(size_t index, const PlanStep &step, int64_t device) {
  auto key = std::make_pair(index, device);
  auto it = computes_.find(key);
  if (it != computes_.end())
    return it->second;
  std::optional<LocalCompute> c = buildDenseCompute(plan_, step, device, symbols_);
  if (!c) {
    try {
      c = buildLocalCompute(plan_, graph_, map(), step, device, symbols_);
    } catch (const LocalComputeError &e) {
      throw StepFailure{"plan-error", e.what()};
    }
  }
  return computes_.emplace(key, std::move(*c)).first->second;
}

void GpuRun::runCompute(size_t index, const PlanStep &step) {
  for (int64_t d : step.devices)
    if (array(step.output, d))
      launchCompute("step" + std::to_string(index) + ".", computeOf(index, step, d), step, d);
  const PlanBuffer &out = buffer(step.output);
  if (out.kind == BufferKind::Tensor)
    written_.insert(out.tensor);
}

void GpuRun::runCopy(size_t index, const PlanStep &step) {
  for (int64_t d : step.devices) {
    DeviceArray *out = array(step.output, d);
    if (!out)
      continue;
    std::vector<int64_t> gather;
    try {
      gather = copyGather(plan_, map(), step, d);
    } catch (const LocalComputeError &e) {
      throw StepFailure{"plan-error", e.what()};
    }
    gpu::launchGather(*array(step.inputs[0], d),
                      *indices("copy" + std::to_string(index), d, gather), *out, streamOf(d));
  }
  const PlanBuffer &out = buffer(step.output);
  if (out.kind == BufferKind::Tensor)
    written_.insert(out.tensor);
}

void GpuRun::runAlias(const PlanStep &step) {
  for (int64_t d : step.devices) {
    auto target = arrays_.find({step.output, d});
    if (target == arrays_.end())
      continue;
    auto in = arrays_.find({step.inputs[0], d});
    int64_t have = in == arrays_.end() ? 0 : in->second->count;
    if (have != target->second->count || in->second->type != target->second->type)
      throw StepFailure{"count-error", "alias " + step.inputs[0] + " -> " + step.output +
                                           " on device " + std::to_string(d) + ": " + step.output +
                                           " needs " + std::to_string(target->second->count) +
                                           " element(s) of its type but " + step.inputs[0] +
                                           " holds " + std::to_string(have)};
    target->second = in->second; // The same device allocation: zero copies.
  }
  const PlanBuffer &out = buffer(step.output);
  if (out.kind == BufferKind::Tensor)
    written_.insert(out.tensor);
}

int64_t GpuRun::runCollective(const PlanStep &step) {
  const PlanBuffer &inBuffer = buffer(step.inputs[0]);
  const PlanBuffer &outBuffer = buffer(step.output);
  ElementType type = elementTypeFor(outBuffer);
  if (elementTypeFor(inBuffer) != type)
    throw StepFailure{"plan-error", "a collective from \"" + inBuffer.name + "\" to \"" +
                                        outBuffer.name + "\" changes the dtype"};
  int bytes = static_cast<int>(elementSize(type));
  std::map<int64_t, int64_t> inSizes, outSizes;
  for (const PlanLocal &l : inBuffer.local)
    inSizes[l.device] = slotCountOf(inBuffer, l.device);
  for (const PlanLocal &l : outBuffer.local)
    outSizes[l.device] = slotCountOf(outBuffer, l.device);
  int64_t moved = 0;
  for (const PlanTeam &team : step.teams) {
    gpu::NcclCall call;
    call.dataType = type;
    call.reduceOp = step.reduceOp.value_or(ReduceOp::Sum);
    for (int64_t d : team.devices)
      call.team.push_back(rankOf(d));
    if (team.root)
      call.root = rankOf(*team.root);
    std::map<int64_t, int64_t> teamIn, teamOut;
    std::set<int64_t> devices(team.devices.begin(), team.devices.end());
    if (team.root)
      devices.insert(*team.root);
    for (const auto &[src, dst] : team.pairs) {
      devices.insert({src, dst});
      call.pairs.emplace_back(rankOf(src), rankOf(dst));
    }
    for (int64_t d : devices) {
      if (inSizes.count(d))
        teamIn[d] = inSizes[d];
      if (outSizes.count(d))
        teamOut[d] = outSizes[d];
    }
    call.kind = *step.collective;
    if (call.kind == CollectiveType::AllToAllv) {
      call.counts = map().packCounts(inBuffer, team);
      for (size_t s = 0; s < call.counts.size(); ++s)
        for (size_t j = 0; j < call.counts.size(); ++j)
          moved += s == j ? 0 : call.counts[s][j] * bytes;
    } else {
      SimCollectiveCall check;
      check.kind = call.kind;
      check.team = team.devices;
      check.root = team.root;
      check.pairs = team.pairs;
      check.inputName = inBuffer.name;
      check.outputName = outBuffer.name;
      try {
        checkCollectiveCounts(check, teamIn, teamOut);
      } catch (const CollectiveError &e) {
        throw StepFailure{"count-error", e.what()};
      }
      moved += collectiveBytesMoved(check, teamIn, teamOut, bytes);
      call.count = perRankChunk(check, teamIn);
      if (call.kind == CollectiveType::SendRecv)
        for (const auto &[src, dst] : team.pairs)
          call.pairCounts.push_back(teamIn.at(src));
    }
    std::map<int, const void *> send;
    std::map<int, void *> recv;
    for (int64_t d : devices) {
      if (DeviceArray *a = array(inBuffer.name, d))
        send[rankOf(d)] = a->ptr();
      if (DeviceArray *a = array(outBuffer.name, d))
        recv[rankOf(d)] = a->ptr();
    }
    gpu::runCollective(world_, call, send, recv);
  }
  gpu::waitAll(world_, backend_.config().timeoutSeconds);
  if (outBuffer.kind == BufferKind::Tensor)
    written_.insert(outBuffer.tensor);
  return moved;
}

/// Runs one step. Without `synchronize`, a compute, copy or alias step
/// returns once its kernels are enqueued (collectives always wait).
void GpuRun::runStep(size_t index, const PlanStep &step, StepReport &report, bool synchronize) {
  switch (step.kind) {
  case StepKind::Compute:
    runCompute(index, step);
    break;
  case StepKind::Copy:
    runCopy(index, step);
    break;
  case StepKind::Alias:
    runAlias(step);
    break;
  case StepKind::Collective:
    report.bytesMoved = runCollective(step);
    break;
  }
  if (synchronize)
    synchronizeLocal();
}

void GpuRun::validate() {
  if (!options_.check)
    return;
  ToleranceTable tolerances(plan_.fusion, symbols_);
  std::vector<int64_t> local(local_.begin(), local_.end());
  for (TensorNum t : written_) {
    const PlanBuffer *b = plan_.buffer(tensorName(t));
    std::map<int64_t, std::vector<double>> buffers;
    for (const PlanLocal &l : b->local)
      if (DeviceArray *a = array(b->name, l.device))
        buffers[l.device] = gpu::downloadArray(*a, streamOf(l.device));
    report_.tensors.push_back(checkTensor(plan_, map(), reference_, tolerances, t, buffers, local));
  }
}

/// The timed repeats (RunSupport.h timeRepeatedRuns) on the GPUs.
void GpuRun::timeRepeats() {
  timeRepeatedRuns(
      plan_, backend_, options_, report_,
      [this](size_t i, const PlanStep &step, bool synchronize) {
        StepReport unused;
        runStep(i, step, unused, synchronize);
      },
      [this] { synchronizeLocal(); });
}

RunReport GpuRun::run() {
  report_.backend = "nccl";
  report_.seed = options_.seed;
  report_.verified = plan_.verified();
  refuseUnverifiedSteps(plan_, options_.allowUnverified);
  symbols_ = checkedBindings(plan_, options_.symbols);
  report_.symbols = symbols_;
  report_.checked = options_.check;
  for (int64_t d : backend_.localDevices(plan_.devices))
    local_.insert(d);
  std::map<TensorNum, HostTensor> inputs = randomInputs(plan_.fusion, symbols_, options_.seed);
  if (options_.check)
    reference_ = evaluateReference(plan_.fusion, inputs, symbols_);
  prepareTeams();
  allocate();
  distributeInputs(inputs);
  runStepsInOrder(plan_, backend_, report_, [this](size_t i, const PlanStep &step, StepReport &r) {
    try {
      runStep(i, step, r);
    } catch (const gpu::GpuError &e) {
      throw StepFailure{"gpu-error", e.what()};
    } catch (const gpu::NcclError &e) {
      throw StepFailure{"gpu-error", e.what()};
    }
  });
  if (!report_.failure) {
    validate();
    report_.tensors = backend_.gatherChecks(report_.tensors);
  }
  if (!report_.failure && options_.repeats > 0) {
    try {
      timeRepeats();
    } catch (const gpu::GpuError &e) {
      report_.failure = RunFailure{0, "gpu-error", std::string("while timing: ") + e.what()};
    } catch (const gpu::NcclError &e) {
      report_.failure = RunFailure{0, "gpu-error", std::string("while timing: ") + e.what()};
    }
  }
  if (report_.failure && report_.failure->kind == "gpu-error")
    world_.abort(); // Peers may be stuck in NCCL: no orderly finalization.
  return std::move(report_);
}

} // namespace

RunReport GpuBackend::run(const Plan &plan, const RunOptions &options) {
  try {
    return runOnGpus(plan, options);
  } catch (const gpu::GpuError &e) {
    throw BackendError(e.what());
  } catch (const gpu::NcclError &e) {
    throw BackendError(e.what());
  }
}

RunReport GpuBackend::runOnGpus(const Plan &plan, const RunOptions &options) {
  int visible = gpu::deviceCount();
  int needed = static_cast<int>(plan.devices.size());
  std::unique_ptr<gpu::NcclWorld> world;
  if (coordinator_) {
#ifdef SHARDCHECK_HAVE_MPI
    auto *mpi = dynamic_cast<MpiBackend *>(coordinator_.get());
    SC_ASSERT(mpi, "the nccl backend's coordinator is the mpi backend");
    coordinator_->localDevices(plan.devices); // Checks the process count.
    if (visible < 1)
      throwInputError("no-gpu", "the nccl backend needs a CUDA device; none is visible",
                      SourceLoc{});
    int gpu = gpu::NcclWorld::localGpuFromEnvironment() % visible;
    world = gpu::NcclWorld::multiProcess(
        mpi->rank(), mpi->size(), gpu,
        [mpi](void *data, size_t bytes) { mpi->broadcastBytes(data, bytes); });
#endif
  } else {
    int gpus = config_.gpus > 0 ? config_.gpus : needed;
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
    world = gpu::NcclWorld::singleProcess(ids);
  }
  return GpuRun(plan, options, *this, *world).run();
}

} // namespace shardcheck
