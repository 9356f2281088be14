// Compute steps as index maps over local buffers; see LocalCompute.h.
#include "executor/LocalCompute.h"

#include "executor/LocalBox.h"
#include "executor/Pointwise.h"
#include "executor/Reference.h"
#include "executor/Tensor.h"
#include "ir/Scalars.h"
#include "util/Checked.h"

#include <cmath>
#include <limits>
#include <unordered_map>

namespace shardcheck {

namespace {

std::string tensorName(TensorNum t) {
  return "T" + std::to_string(t);
}

/// Where each element sits in a buffer on one device.
std::unordered_map<int64_t, int64_t> slotsByElement(const std::vector<int64_t> &elements) {
  std::unordered_map<int64_t, int64_t> slots;
  for (size_t s = elements.size(); s-- > 0;)
    if (elements[s] != kNoElement)
      slots[elements[s]] = static_cast<int64_t>(s);
  return slots;
}

/// A reduction's starting value: its printed initial value, else identity.
double initialValue(const Expr &e, ReduceOp op, const Bindings &symbols) {
  std::string text = e.attr("initial value");
  if (text.empty())
    return reduceIdentity(op);
  auto v = scalarValue(text, symbols);
  if (!v)
    throwInputError("bad-scalar", "cannot read the initial value `" + text + "`", e.loc);
  return *v;
}

/// A scalar operand's value (an InputError when it has none).
double scalarOperandValue(const Expr &e, const Operand &operand, const Bindings &symbols) {
  auto v = scalarValue(operand.scalar, symbols);
  if (!v)
    throwInputError("bad-scalar", "no value for the scalar operand `" + operand.scalar + "`",
                    e.loc);
  return *v;
}

/// The ops whose element o reads element o of every operand when shapes
/// are equal: the pointwise kinds but expand (shapes differ) and host IR
/// communications (their buffers are the collective's).
bool isPositionalOp(OpKind k) {
  return isPointwiseKind(k) && k != OpKind::Expand && k != OpKind::Communication;
}

bool isGemmDtype(DataType d) {
  return d == DataType::Float || d == DataType::Double || d == DataType::Half ||
         d == DataType::BFloat16;
}

/// Dense forms from boxes (buildDenseCompute); each method answers nullopt
/// when the step is not of its shape.
class DenseBuilder {
public:
  DenseBuilder(const Plan &plan, const PlanStep &step, int64_t device, const Bindings &symbols)
      : plan_(plan), step_(step), device_(device), symbols_(symbols),
        expr_(plan.fusion.exprs[*step.expr]) {}

  std::optional<LocalCompute> build() {
    auto out = boxOf(step_.output);
    if (!out || out->slotCount() == 0)
      return std::nullopt;
    std::optional<LocalCompute> c;
    if (step_.mode == ComputeMode::Whole && isPositionalOp(expr_.kind))
      c = elementwise(*out);
    else if (step_.mode != ComputeMode::Epilogue &&
             (expr_.kind == OpKind::Linear || expr_.kind == OpKind::Matmul))
      c = gemm(*out);
    if (!c)
      return std::nullopt;
    c->expr = *step_.expr;
    c->output = step_.output;
    c->outputSlots = out->slotCount();
    return c;
  }

private:
  std::optional<LocalBox> boxOf(const std::string &name) const {
    const PlanBuffer *b = plan_.buffer(name);
    return b ? bufferBoxOf(plan_, *b, symbols_, device_) : std::nullopt;
  }

  std::optional<LocalCompute> elementwise(const LocalBox &out) const {
    if (plan_.fusion.tensor(expr_.outputs[0]).hasRoot())
      return std::nullopt; // Root -> logical transforms move elements.
    LocalCompute c;
    c.form = LocalCompute::Form::Elementwise;
    for (size_t i = 0; i < expr_.inputs.size(); ++i) {
      LocalOperand op;
      if (!expr_.inputs[i].tensor) {
        op.scalar = scalarOperandValue(expr_, expr_.inputs[i], symbols_);
      } else {
        op.buffer = step_.inputs[i];
        auto box = boxOf(op.buffer);
        if (!box || *box != out)
          return std::nullopt;
      }
      c.operands.push_back(op);
    }
    return c;
  }

  /// Linear: A [..., K] x B [N, K]^T -> [..., N]; matmul: A [M, K] x
  /// B [K, N] -> [M, N]. The output's kept axes must be exactly the
  /// operands' rows, and A and B must hold the same K range (the whole of K
  /// when the step computes the op whole).
  std::optional<LocalCompute> gemm(const LocalBox &out) const {
    if (expr_.inputs.size() != 2 || !expr_.inputs[0].tensor || !expr_.inputs[1].tensor)
      return std::nullopt;
    DataType dtype = plan_.fusion.tensor(expr_.outputs[0]).dtype;
    for (const Operand &o : expr_.inputs)
      if (plan_.fusion.tensor(*o.tensor).dtype != dtype)
        return std::nullopt;
    auto a = boxOf(step_.inputs[0]), b = boxOf(step_.inputs[1]);
    if (!isGemmDtype(dtype) || !a || !b || b->shape.size() != 2 || a->shape.empty())
      return std::nullopt;
    bool linear = expr_.kind == OpKind::Linear;
    size_t rows = a->shape.size() - 1; // A's axes before K.
    if (out.shape.size() != rows + 1 || (!linear && rows != 1))
      return std::nullopt;
    auto same = [](const LocalBox &x, size_t i, const LocalBox &y, size_t j) {
      return x.shape[i] == y.shape[j] && x.offset[i] == y.offset[j] && x.extent[i] == y.extent[j];
    };
    size_t bK = linear ? 1 : 0, bN = linear ? 0 : 1;
    for (size_t i = 0; i < rows; ++i)
      if (!same(out, i, *a, i))
        return std::nullopt;
    if (!same(out, rows, *b, bN) || !same(*a, rows, *b, bK))
      return std::nullopt;
    bool wholeK = a->offset[rows] == 0 && a->extent[rows] == a->shape[rows];
    if (step_.mode == ComputeMode::Whole && !wholeK)
      return std::nullopt; // The index form reports what is missing.
    LocalCompute c;
    c.form = LocalCompute::Form::Gemm;
    c.m = 1;
    for (size_t i = 0; i < rows; ++i)
      c.m = mulOrThrow(c.m, out.extent[i], "a matmul's row count");
    c.n = out.extent[rows];
    c.k = a->extent[rows];
    c.transposeB = linear;
    if (c.k == 0)
      return std::nullopt;
    c.operands.resize(2);
    c.operands[0].buffer = step_.inputs[0];
    c.operands[1].buffer = step_.inputs[1];
    return c;
  }

  const Plan &plan_;
  const PlanStep &step_;
  int64_t device_;
  const Bindings &symbols_;
  const Expr &expr_;
};

class Builder {
public:
  Builder(const Plan &plan, const FusionGraph &graph, const BufferMap &map, const PlanStep &step,
          int64_t device, const Bindings &symbols)
      : plan_(plan), graph_(graph), map_(map), step_(step), device_(device), symbols_(symbols),
        expr_(plan.fusion.exprs[*step.expr]) {}

  LocalCompute build();

private:
  [[noreturn]] void lacks(const std::string &what) const {
    throw LocalComputeError("device " + std::to_string(device_) + " computes " + step_.output +
                            " but lacks " + what);
  }
  const std::vector<int64_t> &outElements() const {
    return map_.elements(*plan_.buffer(step_.output), device_);
  }
  /// The gather of operand `i`: for each output slot, the slot of the
  /// producer element it needs in the operand's buffer.
  LocalOperand elementwiseOperand(size_t i) const;
  LocalCompute elementwise();
  LocalCompute segmentReduce();
  LocalCompute pairDot();
  LocalCompute epilogue();
  bool partial() const { return step_.mode == ComputeMode::Partial; }

  const Plan &plan_;
  const FusionGraph &graph_;
  const BufferMap &map_;
  const PlanStep &step_;
  int64_t device_;
  const Bindings &symbols_;
  const Expr &expr_;
};

LocalOperand Builder::elementwiseOperand(size_t i) const {
  LocalOperand op;
  if (!expr_.inputs[i].tensor) {
    op.scalar = scalarOperandValue(expr_, expr_.inputs[i], symbols_);
    return op;
  }
  op.buffer = step_.inputs[i];
  const auto &have = map_.elements(*plan_.buffer(op.buffer), device_);
  auto slotOf = slotsByElement(have);
  const auto &out = outElements();
  bool identity = have.size() == out.size();
  op.gather.assign(out.size(), -1);
  for (size_t o = 0; o < out.size(); ++o) {
    if (out[o] == kNoElement)
      continue;
    int64_t x = map_.neededElement(*step_.expr, i, out[o]);
    auto it = slotOf.find(x);
    if (it == slotOf.end())
      lacks(tensorName(*expr_.inputs[i].tensor) + " element " + std::to_string(x) + " in \"" +
            op.buffer + "\"");
    op.gather[o] = it->second;
    identity = identity && it->second == static_cast<int64_t>(o);
  }
  if (identity)
    op.gather.clear();
  return op;
}

LocalCompute Builder::elementwise() {
  LocalCompute c;
  c.form = LocalCompute::Form::Elementwise;
  for (size_t i = 0; i < expr_.inputs.size(); ++i)
    c.operands.push_back(elementwiseOperand(i));
  return c;
}

LocalCompute Builder::segmentReduce() {
  LocalCompute c;
  c.form = LocalCompute::Form::SegmentReduce;
  c.op = reduceOpOf(expr_).value_or(ReduceOp::Sum);
  c.init = partial() ? reduceIdentity(c.op) : initialValue(expr_, c.op, symbols_);
  LocalOperand in;
  in.buffer = step_.inputs.at(0);
  const auto &have = map_.elements(*plan_.buffer(in.buffer), device_);
  // An output element can sit in several slots (a ReduceScatter partial of
  // a consumer every member holds): each slot reduces all of its inputs.
  std::unordered_map<int64_t, std::vector<int64_t>> outSlots;
  for (size_t o = 0; o < outElements().size(); ++o)
    if (outElements()[o] != kNoElement)
      outSlots[outElements()[o]].push_back(static_cast<int64_t>(o));
  std::vector<std::vector<int64_t>> segments(outElements().size());
  for (size_t s = 0; s < have.size(); ++s) {
    if (have[s] == kNoElement)
      continue;
    auto it = outSlots.find(map_.reducedElement(*step_.expr, 0, have[s]));
    if (it != outSlots.end())
      for (int64_t o : it->second)
        segments[o].push_back(static_cast<int64_t>(s));
  }
  if (!partial()) {
    // Computed whole, every element of the reduction must be here.
    const TensorLayout &pl = map_.layout(*expr_.inputs[0].tensor);
    const TensorLayout &cl = map_.layout(expr_.outputs[0]);
    int64_t length = pl.elementCount() / std::max<int64_t>(1, cl.elementCount());
    for (size_t o = 0; o < segments.size(); ++o)
      if (outElements()[o] != kNoElement && static_cast<int64_t>(segments[o].size()) < length)
        lacks("part of the reduction into " + step_.output + " slot " + std::to_string(o));
  }
  c.operands.push_back(in);
  c.offsets.push_back(0);
  for (const auto &seg : segments) {
    c.indices.insert(c.indices.end(), seg.begin(), seg.end());
    c.offsets.push_back(static_cast<int64_t>(c.indices.size()));
  }
  return c;
}

LocalCompute Builder::pairDot() {
  LocalCompute c;
  c.form = LocalCompute::Form::PairDot;
  TensorNum a = *expr_.inputs[0].tensor, b = *expr_.inputs[1].tensor, out = expr_.outputs[0];
  const TensorLayout &la = map_.layout(a), &lb = map_.layout(b), &lc = map_.layout(out);
  LocalOperand oa, ob;
  oa.buffer = step_.inputs[0];
  ob.buffer = step_.inputs[1];
  auto slotA = slotsByElement(map_.elements(*plan_.buffer(oa.buffer), device_));
  auto slotB = slotsByElement(map_.elements(*plan_.buffer(ob.buffer), device_));
  bool linear = expr_.kind == OpKind::Linear;
  size_t r = lc.shape().size();
  int64_t k = la.shape().empty() ? 1 : la.shape().back();
  c.offsets.push_back(0);
  for (int64_t y : outElements()) {
    if (y != kNoElement) {
      std::vector<int64_t> yi = lc.indexOf(y), ai, bi;
      for (int64_t x = 0; x < k; ++x) {
        if (linear) {
          bool matrixW = lb.shape().size() == 2;
          ai.assign(yi.begin(), yi.end() - (matrixW ? 1 : 0));
          ai.push_back(x);
          bi = matrixW ? std::vector<int64_t>{yi.back(), x} : std::vector<int64_t>{x};
        } else {
          ai = yi, bi = yi;
          for (size_t i = 0; i + 2 < r; ++i) {
            ai[i] = la.shape()[i] == 1 ? 0 : yi[i];
            bi[i] = lb.shape()[i] == 1 ? 0 : yi[i];
          }
          ai[r - 1] = x;
          bi[r - 2] = x;
        }
        auto ia = slotA.find(la.elementAt(ai)), ib = slotB.find(lb.elementAt(bi));
        if (ia == slotA.end() || ib == slotB.end()) {
          if (partial())
            continue; // Another device contributes this product.
          lacks("operands of the product for " + step_.output + " element " + std::to_string(y));
        }
        c.indices.push_back(ia->second);
        c.indicesB.push_back(ib->second);
      }
    }
    c.offsets.push_back(static_cast<int64_t>(c.indices.size()));
  }
  c.operands = {oa, ob};
  if (linear && expr_.inputs.size() == 3 && !partial())
    c.bias = elementwiseOperand(2);
  return c;
}

LocalCompute Builder::epilogue() {
  LocalCompute c;
  c.form = LocalCompute::Form::Epilogue;
  c.op = reduceOpOf(expr_).value_or(ReduceOp::Sum);
  c.init =
      expr_.kind == OpKind::Reduction ? initialValue(expr_, c.op, symbols_) : reduceIdentity(c.op);
  if (expr_.kind == OpKind::Linear && expr_.inputs.size() == 3)
    c.bias = elementwiseOperand(2);
  return c;
}

LocalCompute Builder::build() {
  LocalCompute c;
  bool reduces = isReductionOp(expr_);
  if (step_.mode == ComputeMode::Epilogue)
    c = epilogue();
  else if (reduces && (expr_.kind == OpKind::Matmul || expr_.kind == OpKind::Linear))
    c = pairDot();
  else if (reduces)
    c = segmentReduce();
  else
    c = elementwise();
  c.expr = *step_.expr;
  c.output = step_.output;
  c.outputSlots = static_cast<int64_t>(outElements().size());
  return c;
}

/// The element rule of a non-reducing expression on operand values.
std::function<double(const std::vector<double> &)> elementRule(const Expr &e, DataType out) {
  using Values = const std::vector<double> &;
  switch (e.kind) {
  case OpKind::Unary:
    if (auto r = unaryRule(e.op))
      return [r = *r](Values v) { return r(v[0]); };
    break;
  case OpKind::Binary:
    if (auto r = binaryRule(e.op, isIntegralDtype(out) && out != DataType::Bool))
      return [r = *r](Values v) { return r(v[0], v[1]); };
    break;
  case OpKind::Ternary:
    if (auto r = ternaryRule(e.op))
      return [r = *r](Values v) { return r(v[0], v[1], v[2]); };
    break;
  case OpKind::Where:
    return [](Values v) { return v[0] != 0.0 ? v[1] : v[2]; };
  case OpKind::Cast: {
    DataType target = out != DataType::Unknown ? out : castTarget(e.op).value_or(DataType::Double);
    return [target](Values v) { return roundToDtype(v[0], target); };
  }
  case OpKind::Other:
  case OpKind::Reduction:
  case OpKind::Matmul:
  case OpKind::Linear:
    break;
  default:
    return [](Values v) { return v[0]; }; // Copies: set, permute, broadcast, ...
  }
  throwInputError("unsupported-op", "no element rule for `" + e.op + "`", e.loc);
}

double operandValue(const LocalOperand &op, int64_t o,
                    std::map<std::string, std::vector<double> *> &buffers) {
  if (op.buffer.empty())
    return op.scalar;
  int64_t slot = op.gather.empty() ? o : op.gather[static_cast<size_t>(o)];
  return slot < 0 ? 0.0 : (*buffers.at(op.buffer))[static_cast<size_t>(slot)];
}

} // namespace

std::optional<LocalCompute> buildDenseCompute(const Plan &plan, const PlanStep &step,
                                              int64_t device, const Bindings &symbols) {
  SC_ASSERT(step.kind == StepKind::Compute && step.expr, "a compute step");
  return DenseBuilder(plan, step, device, symbols).build();
}

LocalCompute buildLocalCompute(const Plan &plan, const FusionGraph &graph, const BufferMap &map,
                               const PlanStep &step, int64_t device, const Bindings &symbols) {
  if (auto dense = buildDenseCompute(plan, step, device, symbols))
    return *dense;
  return buildIndexedCompute(plan, graph, map, step, device, symbols);
}

LocalCompute buildIndexedCompute(const Plan &plan, const FusionGraph &graph, const BufferMap &map,
                                 const PlanStep &step, int64_t device, const Bindings &symbols) {
  SC_ASSERT(step.kind == StepKind::Compute && step.expr, "a compute step");
  return Builder(plan, graph, map, step, device, symbols).build();
}

void runLocalComputeOnHost(const LocalCompute &c, const Fusion &fusion,
                           std::map<std::string, std::vector<double> *> &buffers,
                           DataType outputType, const Bindings &symbols) {
  std::vector<double> &out = *buffers.at(c.output);
  std::vector<double> result(static_cast<size_t>(c.outputSlots), 0.0);
  const Expr &e = fusion.exprs[c.expr];
  switch (c.form) {
  case LocalCompute::Form::Elementwise: {
    auto rule = elementRule(e, fusion.tensor(e.outputs[0]).dtype);
    std::vector<double> values(c.operands.size());
    for (int64_t o = 0; o < c.outputSlots; ++o) {
      for (size_t i = 0; i < c.operands.size(); ++i)
        values[i] = operandValue(c.operands[i], o, buffers);
      result[static_cast<size_t>(o)] = rule(values);
    }
    break;
  }
  case LocalCompute::Form::SegmentReduce: {
    const std::vector<double> &in = *buffers.at(c.operands[0].buffer);
    for (int64_t o = 0; o < c.outputSlots; ++o) {
      double acc = c.init;
      for (int64_t p = c.offsets[o]; p < c.offsets[o + 1]; ++p)
        acc = reduceCombine(c.op, acc, in[static_cast<size_t>(c.indices[p])]);
      result[static_cast<size_t>(o)] = acc;
    }
    break;
  }
  case LocalCompute::Form::PairDot: {
    const std::vector<double> &a = *buffers.at(c.operands[0].buffer);
    const std::vector<double> &b = *buffers.at(c.operands[1].buffer);
    for (int64_t o = 0; o < c.outputSlots; ++o) {
      double acc = 0;
      for (int64_t p = c.offsets[o]; p < c.offsets[o + 1]; ++p)
        acc += a[static_cast<size_t>(c.indices[p])] * b[static_cast<size_t>(c.indicesB[p])];
      if (c.bias)
        acc += operandValue(*c.bias, o, buffers);
      result[static_cast<size_t>(o)] = acc;
    }
    break;
  }
  case LocalCompute::Form::Gemm: {
    const std::vector<double> &a = *buffers.at(c.operands[0].buffer);
    const std::vector<double> &b = *buffers.at(c.operands[1].buffer);
    for (int64_t i = 0; i < c.m; ++i)
      for (int64_t j = 0; j < c.n; ++j) {
        double acc = 0;
        for (int64_t x = 0; x < c.k; ++x)
          acc += a[static_cast<size_t>(i * c.k + x)] *
                 b[static_cast<size_t>(c.transposeB ? j * c.k + x : x * c.n + j)];
        result[static_cast<size_t>(i * c.n + j)] = acc;
      }
    break;
  }
  case LocalCompute::Form::Epilogue:
    for (int64_t o = 0; o < c.outputSlots; ++o) {
      double v = reduceCombine(c.op, c.init, out[static_cast<size_t>(o)]);
      if (c.bias)
        v += operandValue(*c.bias, o, buffers);
      result[static_cast<size_t>(o)] = v;
    }
    break;
  }
  (void)symbols;
  for (size_t o = 0; o < result.size(); ++o)
    out[o] = roundToDtype(result[o], outputType);
}

} // namespace shardcheck
