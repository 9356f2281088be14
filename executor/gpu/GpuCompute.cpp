// The nccl backend's compute steps: each step's local form (dense when
// every buffer is a box, else index maps; executor/LocalCompute.h) launched
// as the kernels of executor/gpu/DeviceOps.h; see GpuDevice.h.
#include "executor/gpu/GpuDevice.h"

#include "executor/core/RunSupport.h"
#include "executor/gpu/OpCodes.h"

namespace shardcheck {

using gpu::DeviceArray;

namespace {

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

/// The binary kernel op combining two values as `op` does.
gpu::ElementwiseOp combineOp(ReduceOp op) {
  const char *spelling = op == ReduceOp::Sum    ? "+"
                         : op == ReduceOp::Prod ? "*"
                         : op == ReduceOp::Max  ? "max"
                                                : "min";
  return {gpu::ElementwiseOp::Kind::Binary, *gpu::binaryCode(spelling), false};
}

} // namespace

gpu::ElementwiseOperand GpuDevice::operand(const std::string &key, const LocalOperand &op,
                                           const std::string &name, int64_t device) {
  gpu::ElementwiseOperand o;
  if (op.buffer.empty()) {
    o.scalar = op.scalar;
    return o;
  }
  o.array = array(op.buffer, device);
  if (!op.gather.empty())
    o.gather = indices(key + name, device, op.gather);
  return o;
}

void GpuDevice::addInPlace(const std::string &key, const LocalOperand &bias, DeviceArray &out,
                           int64_t device) {
  gpu::launchElementwise(
      combineOp(ReduceOp::Sum),
      {gpu::ElementwiseOperand{&out, nullptr, 0}, operand(key, bias, "bias", device)}, out,
      streamOf(device));
}

/// A partial's epilogue: the initial value combined in (unless it is the
/// operator's identity), then the bias added.
void GpuDevice::launchEpilogue(const std::string &key, const LocalCompute &c, DeviceArray &out,
                               int64_t device) {
  bool identity =
      (c.op == ReduceOp::Sum && c.init == 0.0) || (c.op == ReduceOp::Prod && c.init == 1.0);
  if (!identity)
    gpu::launchElementwise(combineOp(c.op),
                           {gpu::ElementwiseOperand{nullptr, nullptr, c.init}, {&out, nullptr, 0}},
                           out, streamOf(device));
  if (c.bias)
    addInPlace(key, *c.bias, out, device);
}

void GpuDevice::launchCompute(const std::string &key, const LocalCompute &c, const PlanStep &step,
                              int64_t d) {
  DeviceArray &out = *array(step.output, d);
  gpu::Stream stream = streamOf(d);
  const Fusion &fusion = run_->plan.fusion;
  const Expr &e = fusion.exprs[c.expr];
  auto input = [&](size_t i) -> DeviceArray & { return *array(c.operands[i].buffer, d); };
  switch (c.form) {
  case LocalCompute::Form::Elementwise: {
    std::vector<gpu::ElementwiseOperand> ops;
    for (size_t i = 0; i < c.operands.size(); ++i)
      ops.push_back(operand(key, c.operands[i], "op" + std::to_string(i), d));
    gpu::launchElementwise(elementwiseOpOf(e, fusion.tensor(e.outputs[0]).dtype), ops, out, stream);
    return;
  }
  case LocalCompute::Form::SegmentReduce:
    gpu::launchSegmentReduce(c.op, c.init, input(0), *indices(key + "offsets", d, c.offsets),
                             *indices(key + "indices", d, c.indices), out, stream);
    return;
  case LocalCompute::Form::Gemm:
    gpu::gemmRowMajor(gpuOf(d), stream, input(0), input(1), out, 1, c.m, c.n, c.k, c.transposeB, 0,
                      0, 0);
    return;
  case LocalCompute::Form::PairDot:
    gpu::launchPairDot(input(0), input(1), *indices(key + "offsets", d, c.offsets),
                       *indices(key + "pairA", d, c.indices),
                       *indices(key + "pairB", d, c.indicesB), 0.0, out, stream);
    if (c.bias)
      addInPlace(key, *c.bias, out, d);
    return;
  case LocalCompute::Form::Epilogue:
    return launchEpilogue(key, c, out, d);
  }
}

/// The step's local form on `device`, built once per run: the dense form
/// when every buffer is a box (no layouts enumerated), else index maps.
const LocalCompute &GpuDevice::computeOf(size_t index, const PlanStep &step, int64_t device) {
  auto key = std::make_pair(index, device);
  auto it = computes_.find(key);
  if (it != computes_.end())
    return it->second;
  std::optional<LocalCompute> c = buildDenseCompute(run_->plan, step, device, run_->symbols);
  if (!c) {
    try {
      c = buildLocalCompute(run_->plan, run_->graph, run_->placement.map(), step, device,
                            run_->symbols);
    } catch (const LocalComputeError &e) {
      throw StepFailure{"plan-error", e.what()};
    }
  }
  return computes_.emplace(key, std::move(*c)).first->second;
}

void GpuDevice::compute(size_t index, const PlanStep &step, int64_t device) {
  launchCompute("step" + std::to_string(index) + ".", computeOf(index, step, device), step, device);
}

} // namespace shardcheck
