// The unsharded reference evaluation; see Reference.h.
//
// Structure: the driver (evaluateReference) checks the inputs, builds the
// graph and walks tensors in topological order; each op kind has one
// function from its operand values to the consumer's value. Axis alignment of
// pointwise, broadcast, squeeze, expand and reduction ops comes from the
// graph's domain maps, so the reference aligns axes exactly as the checker
// does; permute, reshape, matmul and linear align them by their own rules.
#include "executor/Reference.h"

#include "ir/HostLoops.h"
#include "ir/RingPermute.h"
#include "ir/Swizzle1D.h"

#include "executor/Pointwise.h"
#include "ir/FusionGraph.h"
#include "ir/Scalars.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <limits>
#include <set>

namespace shardcheck {

const HostTensor &ReferenceResult::value(TensorNum t) const {
  auto it = values.find(t);
  SC_ASSERT(it != values.end(), "T" + std::to_string(t) + " has no reference value");
  return it->second;
}

namespace {

std::string shapeStr(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

std::string dtypeStr(DataType d) {
  return d == DataType::Unknown ? std::string("unknown") : dataTypeName(d);
}

int64_t evaluateExtent(const Extent &extent, const Bindings &symbols, const TensorView &tv) {
  auto value = extent.evaluate(symbols);
  if (!value) {
    std::string unbound;
    for (const auto &s : extent.symbols())
      if (!symbols.count(s))
        unbound += (unbound.empty() ? "`" : ", `") + s + "`";
    if (unbound.empty()) // Every symbol is bound: a division by zero.
      throwInputError("invalid-extent",
                      "extent `" + extent.str() + "` of " + tv.name() + " divides by zero", tv.loc);
    throwInputError("unbound-symbol",
                    "extent `" + extent.str() + "` of " + tv.name() + " needs a value for " +
                        unbound + " (bind it, e.g. --bind " + *extent.symbols().begin() + "=8)",
                    tv.loc);
  }
  if (*value < 0)
    throwInputError("invalid-extent",
                    "extent `" + extent.str() + "` of " + tv.name() + " evaluates to " +
                        std::to_string(*value),
                    tv.loc);
  return *value;
}

} // namespace

std::vector<int64_t> referenceShape(const Fusion &fusion, TensorNum t, const Bindings &symbols) {
  const TensorView &tv = fusion.tensor(t);
  std::vector<int64_t> shape;
  for (IdNum n : dataLogicalIds(fusion, tv)) {
    const IterDomain &id = fusion.id(n);
    if (id.expandedExtent)
      shape.push_back(evaluateExtent(*id.expandedExtent, symbols, tv));
    else if (id.isBroadcast())
      shape.push_back(1);
    else
      shape.push_back(evaluateExtent(id.extent, symbols, tv));
  }
  return shape;
}

std::vector<TensorNum> referenceInputs(const Fusion &fusion) {
  // A listed input that an expression defines is an output buffer passed in
  // (host IR lists preallocated outputs among its inputs): it is computed.
  // So is a base that host loops write slice by slice.
  std::vector<TensorNum> loopWritten = loopWrittenBases(fusion);
  std::vector<TensorNum> inputs;
  for (const auto &[n, tv] : fusion.tensors)
    if (!fusion.producerExpr(n) &&
        std::find(loopWritten.begin(), loopWritten.end(), n) == loopWritten.end())
      inputs.push_back(n);
  return inputs;
}

namespace {

/// One expression being evaluated for one output: its operands' values and
/// the consumer's shape and dtype.
struct OpCall {
  const Fusion &fusion;
  const Expr &expr;
  TensorNum out;
  std::vector<int64_t> outShape;
  DataType outDtype;
  std::vector<HostTensor> args;        ///< Operands in order; scalars zero-dim.
  std::vector<const DomainMap *> maps; ///< Per operand; null for scalars.
  ExprPart part = ExprPart::Whole;

  const TensorView &consumer() const { return fusion.tensor(out); }

  /// Throws an InputError located at the expression, naming op and output.
  [[noreturn]] void fail(const std::string &code, const std::string &message) const {
    throwInputError(code, "`" + expr.op + "` defining " + consumer().name() + ": " + message,
                    expr.loc);
  }
  void expectOperands(size_t n) const {
    if (args.size() != n)
      fail("unsupported-op",
           "expected " + std::to_string(n) + " operand(s), found " + std::to_string(args.size()));
  }
  /// The domain map of tensor operand `i`, which must fit the op.
  const DomainMap &mapOf(size_t i) const {
    if (!maps[i])
      fail("unsupported-op", "operand " + std::to_string(i) + " must be a tensor");
    if (maps[i]->unsupported)
      fail("unsupported-op", *maps[i]->unsupported);
    return *maps[i];
  }
};

/// Stores an op result as the consumer's dtype: integer and bool results
/// take their dtype's values, floating ones stay in double (see Reference.h).
HostTensor storeAs(HostTensor t, DataType d) {
  if (isIntegralDtype(d))
    return roundedTo(t, d);
  return HostTensor(t.shape(), d, std::move(t.data()));
}

/// Where operand `i`'s element for each consumer element comes from: for
/// every producer data axis, the consumer data axis it follows, or nullopt
/// (a squeezed broadcast or a size-1 axis: index 0).
std::vector<std::optional<size_t>> alignAxes(const OpCall &call, size_t i) {
  const HostTensor &in = call.args[i];
  if (!call.maps[i]) // A scalar: zero-dim, nothing to align.
    return {};
  const DomainMap &map = call.mapOf(i);
  const Fusion &f = call.fusion;
  TensorNum producer = *call.expr.inputs[i].tensor;
  std::vector<IdNum> producerIds = dataLogicalIds(f, f.tensor(producer));
  std::vector<IdNum> consumerIds = dataLogicalIds(f, call.consumer());
  SC_ASSERT(producerIds.size() == in.rank(), "operand value rank differs from its data IDs");
  std::vector<std::optional<size_t>> from(in.rank());
  for (size_t c = 0; c < consumerIds.size(); ++c) {
    auto p = map.producerOf(consumerIds[c]);
    if (!p)
      continue;
    size_t j = std::find(producerIds.begin(), producerIds.end(), *p) - producerIds.begin();
    if (in.shape()[j] == call.outShape[c])
      from[j] = c;
    else if (in.shape()[j] != 1)
      call.fail("shape-mismatch", "axis " + std::to_string(j) + " of " + f.tensor(producer).name() +
                                      " " + shapeStr(in.shape()) + " does not fit axis " +
                                      std::to_string(c) + " of " + shapeStr(call.outShape));
  }
  for (size_t j = 0; j < from.size(); ++j)
    if (!from[j] && in.shape()[j] != 1 && !f.id(producerIds[j]).isBroadcast())
      call.fail("shape-mismatch", "axis " + std::to_string(j) + " of " + f.tensor(producer).name() +
                                      " (extent " + std::to_string(in.shape()[j]) +
                                      ") maps to no axis of the output");
  return from;
}

/// Operand `i` laid out in the consumer's shape (broadcasting size-1 axes).
HostTensor alignedOperand(const OpCall &call, size_t i) {
  const HostTensor &in = call.args[i];
  std::vector<std::optional<size_t>> from = alignAxes(call, i);
  HostTensor out(call.outShape, in.dtype());
  std::vector<int64_t> index(call.outShape.size(), 0), inIndex(in.rank(), 0);
  for (int64_t k = 0; k < out.numel(); ++k, nextIndex(index, call.outShape)) {
    for (size_t j = 0; j < inIndex.size(); ++j)
      inIndex[j] = from[j] ? index[*from[j]] : 0;
    out.data()[k] = in.at(inIndex);
  }
  return out;
}

/// The consumer's value: `combine` applied to the aligned operands element by
/// element, stored as the consumer's dtype.
template <class Combine> HostTensor elementwise(const OpCall &call, Combine combine) {
  std::vector<HostTensor> aligned;
  for (size_t i = 0; i < call.args.size(); ++i)
    aligned.push_back(alignedOperand(call, i));
  HostTensor out(call.outShape, call.outDtype);
  std::vector<double> element(aligned.size());
  try {
    for (int64_t k = 0; k < out.numel(); ++k) {
      for (size_t i = 0; i < aligned.size(); ++i)
        element[i] = aligned[i].data()[k];
      out.data()[k] = combine(element);
    }
  } catch (const IntegerDivisionByZero &) {
    call.fail("division-by-zero", "integer division by zero");
  }
  return storeAs(std::move(out), call.outDtype);
}

HostTensor evalCopy(const OpCall &call) {
  call.expectOperands(1);
  return elementwise(call, [](const std::vector<double> &x) { return x[0]; });
}

HostTensor evalUnary(const OpCall &call) {
  call.expectOperands(1);
  auto rule = unaryRule(call.expr.op);
  if (!rule)
    call.fail("unsupported-op",
              "the reference has no rule for the unary op `" + call.expr.op + "`");
  return elementwise(call, [&](const std::vector<double> &x) { return (*rule)(x[0]); });
}

HostTensor evalBinary(const OpCall &call) {
  call.expectOperands(2);
  bool integral = isIntegralDtype(call.outDtype) && call.outDtype != DataType::Bool;
  auto rule = binaryRule(call.expr.op, integral);
  if (!rule)
    call.fail("unsupported-op",
              "the reference has no rule for the binary op `" + call.expr.op + "`");
  return elementwise(call, [&](const std::vector<double> &x) { return (*rule)(x[0], x[1]); });
}

HostTensor evalTernary(const OpCall &call) {
  call.expectOperands(3);
  auto rule = ternaryRule(call.expr.op);
  if (!rule)
    call.fail("unsupported-op", "the reference has no rule for the op `" + call.expr.op + "`");
  return elementwise(call, [&](const std::vector<double> &x) { return (*rule)(x[0], x[1], x[2]); });
}

HostTensor evalWhere(const OpCall &call) {
  call.expectOperands(3);
  return elementwise(call, [](const std::vector<double> &x) { return x[0] != 0.0 ? x[1] : x[2]; });
}

/// A cast rounds to its target dtype: the consumer's, or the spelling's when
/// the dump prints no dtypes.
HostTensor evalCast(const OpCall &call) {
  call.expectOperands(1);
  DataType target = call.outDtype;
  if (target == DataType::Unknown) {
    auto spelled = castTarget(call.expr.op);
    if (!spelled)
      call.fail("unsupported-op", "cannot tell the target dtype of this cast");
    target = *spelled;
  }
  HostTensor copied = elementwise(call, [](const std::vector<double> &x) { return x[0]; });
  return roundedTo(copied, target);
}

/// Consumer logical position k holds root ID logical[k]; the root lists the
/// producer's logical axes in order, so the output at index idx reads the
/// input at the index with idx[k] at root position perm[k].
HostTensor evalPermute(const OpCall &call) {
  call.expectOperands(1);
  const Fusion &f = call.fusion;
  const TensorView &tv = call.consumer();
  if (!tv.hasRoot())
    call.fail("unsupported-op", "the permutation is unknown: " + tv.name() +
                                    " has no root domain (dump the TransformPrinter section)");
  std::vector<IdNum> root, logical = dataLogicalIds(f, tv);
  for (IdNum n : tv.root)
    if (!f.id(n).isReduction())
      root.push_back(n);
  std::vector<size_t> perm;
  for (IdNum n : logical) {
    auto it = std::find(root.begin(), root.end(), n);
    if (it == root.end() || root.size() != logical.size())
      call.fail("unsupported-op",
                "the logical domain of " + tv.name() + " is not a permutation of its root domain");
    perm.push_back(static_cast<size_t>(it - root.begin()));
  }
  const HostTensor &in = call.args[0];
  if (in.rank() != perm.size())
    call.fail("shape-mismatch", "input rank " + std::to_string(in.rank()) +
                                    " differs from the root domain's " +
                                    std::to_string(perm.size()));
  for (size_t k = 0; k < perm.size(); ++k)
    if (in.shape()[perm[k]] != call.outShape[k])
      call.fail("shape-mismatch", "input " + shapeStr(in.shape()) + " permuted does not give " +
                                      shapeStr(call.outShape));
  HostTensor out(call.outShape, call.outDtype);
  std::vector<int64_t> index(perm.size(), 0), inIndex(perm.size(), 0);
  for (int64_t k = 0; k < out.numel(); ++k, nextIndex(index, call.outShape)) {
    for (size_t a = 0; a < perm.size(); ++a)
      inIndex[perm[a]] = index[a];
    out.data()[k] = in.at(inIndex);
  }
  return storeAs(std::move(out), call.outDtype);
}

/// reshape/view: the same elements in row-major order, in the consumer's
/// logical shape (its root -> logical transforms only say how).
HostTensor evalReshape(const OpCall &call) {
  call.expectOperands(1);
  const HostTensor &in = call.args[0];
  if (in.numel() != elementCount(call.outShape))
    call.fail("shape-mismatch", "cannot reshape " + shapeStr(in.shape()) + " (" +
                                    std::to_string(in.numel()) + " elements) to " +
                                    shapeStr(call.outShape));
  return storeAs(HostTensor(call.outShape, call.outDtype, in.data()), call.outDtype);
}

struct ReductionOp {
  double identity;
  double (*combine)(double, double);
};

ReductionOp reductionOp(const OpCall &call) {
  // A reducing host IR communication sums, nvFuser's default, unless it
  // names its operator (kCommunicationOpAttr, ir/Fusion.h).
  std::string op = call.expr.attr("op");
  if (isReducingCommunication(call.expr) && op.empty())
    op = "add";
  if (op == "add")
    return {0.0, [](double a, double b) { return a + b; }};
  if (op == "mul")
    return {1.0, [](double a, double b) { return a * b; }};
  // max/min reductions propagate NaN, as torch.amax does.
  if (op == "max")
    return {-std::numeric_limits<double>::infinity(), [](double a, double b) {
              return std::isnan(a) || std::isnan(b) ? a + b : std::max(a, b);
            }};
  if (op == "min")
    return {std::numeric_limits<double>::infinity(), [](double a, double b) {
              return std::isnan(a) || std::isnan(b) ? a + b : std::min(a, b);
            }};
  call.fail("unsupported-op", op.empty()
                                  ? std::string("the reduction prints no `op`")
                                  : "the reference has no rule for reduction op `" + op + "`");
}

/// The reduction's starting value: its printed `initial value`, else the
/// operator's identity.
double reductionInit(const OpCall &call, const ReductionOp &op, const Bindings &symbols) {
  std::string text = call.expr.attr("initial value");
  if (text.empty())
    return op.identity;
  auto v = scalarValue(text, symbols);
  if (!v)
    call.fail("bad-scalar", "cannot read the initial value `" + text + "`");
  return *v;
}

/// For a reduction: every producer data axis is either reduced (a consumer
/// reduction ID maps to it) or kept (its consumer data position).
struct ReductionAxes {
  std::vector<std::optional<size_t>> keptAs; ///< Per producer axis.
  std::vector<size_t> reduced;               ///< Producer axes reduced over.
};

ReductionAxes reductionAxes(const OpCall &call) {
  const Fusion &f = call.fusion;
  const DomainMap &map = call.mapOf(0);
  std::vector<IdNum> producerIds = dataLogicalIds(f, f.tensor(*call.expr.inputs[0].tensor));
  std::vector<IdNum> consumerIds = dataLogicalIds(f, call.consumer());
  ReductionAxes axes;
  axes.keptAs.assign(producerIds.size(), std::nullopt);
  for (size_t j = 0; j < producerIds.size(); ++j) {
    auto c = map.consumerOf(producerIds[j]);
    if (c && f.id(*c).isReduction()) {
      axes.reduced.push_back(j);
      continue;
    }
    auto pos = c ? std::find(consumerIds.begin(), consumerIds.end(), *c) : consumerIds.end();
    if (pos == consumerIds.end())
      call.fail("unsupported-op", "producer axis " + std::to_string(j) + " maps to no output axis");
    axes.keptAs[j] = static_cast<size_t>(pos - consumerIds.begin());
  }
  return axes;
}

HostTensor evalReduction(const OpCall &call, const Bindings &symbols) {
  call.expectOperands(1);
  ReductionOp op = reductionOp(call);
  // A partial starts from the identity: the initial value is applied once,
  // by the epilogue, after the partials are combined.
  double init = call.part == ExprPart::Partial ? op.identity : reductionInit(call, op, symbols);
  ReductionAxes axes = reductionAxes(call);
  const HostTensor &in = call.args[0];
  for (size_t j = 0; j < in.rank(); ++j)
    if (axes.keptAs[j] && in.shape()[j] != call.outShape[*axes.keptAs[j]])
      call.fail("shape-mismatch",
                "input " + shapeStr(in.shape()) + " does not reduce to " + shapeStr(call.outShape));
  HostTensor out(call.outShape, call.outDtype);
  std::fill(out.data().begin(), out.data().end(), init);
  std::vector<int64_t> inIndex(in.rank(), 0), outIndex(call.outShape.size(), 0);
  for (int64_t k = 0; k < in.numel(); ++k, nextIndex(inIndex, in.shape())) {
    for (size_t j = 0; j < in.rank(); ++j)
      if (axes.keptAs[j])
        outIndex[*axes.keptAs[j]] = inIndex[j];
    double &acc = out.at(outIndex);
    acc = op.combine(acc, in.data()[k]);
  }
  return storeAs(std::move(out), call.outDtype);
}

/// linear(A[.., K], W[N, K] or W[K], bias[N]?) = A x W^T + bias.
HostTensor evalLinear(const OpCall &call) {
  if (call.args.size() != 2 && call.args.size() != 3)
    call.expectOperands(2);
  const HostTensor &a = call.args[0], &w = call.args[1];
  if (a.rank() < 1 || w.rank() < 1 || w.rank() > 2)
    call.fail("shape-mismatch", "linear takes A[.., K] and W[N, K] or W[K], found " +
                                    shapeStr(a.shape()) + " and " + shapeStr(w.shape()));
  int64_t k = a.shape().back();
  int64_t n = w.rank() == 2 ? w.shape()[0] : 1;
  std::vector<int64_t> expected(a.shape().begin(), a.shape().end() - 1);
  if (w.rank() == 2)
    expected.push_back(n);
  if (w.shape().back() != k || expected != call.outShape)
    call.fail("shape-mismatch", "linear of " + shapeStr(a.shape()) + " and " + shapeStr(w.shape()) +
                                    " does not give " + shapeStr(call.outShape));
  const HostTensor *bias = call.args.size() == 3 ? &call.args[2] : nullptr;
  if (bias && !(bias->rank() == 0 ||
                (bias->rank() == 1 && (bias->shape()[0] == n || bias->shape()[0] == 1))))
    call.fail("shape-mismatch",
              "bias " + shapeStr(bias->shape()) + " does not fit N = " + std::to_string(n));
  HostTensor out(call.outShape, call.outDtype);
  int64_t rows = elementCount(expected) / std::max<int64_t>(n, 1);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < n; ++c) {
      double sum = 0.0;
      for (int64_t x = 0; x < k; ++x)
        sum += a.data()[r * k + x] * w.data()[c * k + x];
      if (bias && call.part != ExprPart::Partial) // The epilogue adds it once.
        sum += bias->data()[bias->numel() == 1 ? 0 : c];
      out.data()[r * n + c] = sum;
    }
  return storeAs(std::move(out), call.outDtype);
}

/// The index of batch axis `i` in an operand whose batch extent may be 1.
int64_t batchIndex(const HostTensor &t, size_t axis, int64_t i) {
  return t.shape()[axis] == 1 ? 0 : i;
}

/// matmul(A[.., M, K], B[.., K, N]) with size-1 batch axes broadcast.
HostTensor evalMatmul(const OpCall &call) {
  call.expectOperands(2);
  const HostTensor &a = call.args[0], &b = call.args[1];
  size_t r = call.outShape.size();
  bool ranksOk = r >= 2 && a.rank() == r && b.rank() == r;
  if (!ranksOk || a.shape()[r - 1] != b.shape()[r - 2] ||
      a.shape()[r - 2] != call.outShape[r - 2] || b.shape()[r - 1] != call.outShape[r - 1])
    call.fail("shape-mismatch", "matmul of " + shapeStr(a.shape()) + " and " + shapeStr(b.shape()) +
                                    " does not give " + shapeStr(call.outShape));
  for (size_t i = 0; i + 2 < r; ++i)
    for (const HostTensor *t : {&a, &b})
      if (t->shape()[i] != call.outShape[i] && t->shape()[i] != 1)
        call.fail("shape-mismatch", "batch axis " + std::to_string(i) + " of " +
                                        shapeStr(t->shape()) + " does not fit " +
                                        shapeStr(call.outShape));
  int64_t k = a.shape()[r - 1];
  HostTensor out(call.outShape, call.outDtype);
  std::vector<int64_t> index(r, 0), ai(r, 0), bi(r, 0);
  for (int64_t e = 0; e < out.numel(); ++e, nextIndex(index, call.outShape)) {
    for (size_t i = 0; i + 2 < r; ++i) {
      ai[i] = batchIndex(a, i, index[i]);
      bi[i] = batchIndex(b, i, index[i]);
    }
    ai[r - 2] = index[r - 2];
    bi[r - 1] = index[r - 1];
    double sum = 0.0;
    for (int64_t x = 0; x < k; ++x) {
      ai[r - 1] = x;
      bi[r - 2] = x;
      sum += a.at(ai) * b.at(bi);
    }
    out.data()[e] = sum;
  }
  return storeAs(std::move(out), call.outDtype);
}

/// Whether a consumer's root domain, if it has one, differs from its
/// logical one (an rfactor or reshape): only permute and reshape handle that.
bool rootDiffersFromLogical(const TensorView &tv) {
  return tv.hasRoot() && tv.root != tv.logical;
}

HostTensor evalOp(const OpCall &call, const Bindings &symbols) {
  OpKind kind = call.expr.kind;
  if (kind != OpKind::Permute && kind != OpKind::Reshape && rootDiffersFromLogical(call.consumer()))
    call.fail("unsupported-op",
              call.consumer().name() + " has a root domain different from its logical domain");
  switch (kind) {
  case OpKind::Communication: // Moves data: a copy, or a sum for reducing ones.
    if (isReducingCommunication(call.expr))
      return evalReduction(call, symbols);
    return evalCopy(call);
  case OpKind::Set:
  case OpKind::SegmenterSet:
  case OpKind::LoadStore:
  case OpKind::Broadcast:
  case OpKind::Squeeze:
  case OpKind::Expand:
    return evalCopy(call);
  case OpKind::Permute:
    return evalPermute(call);
  case OpKind::Unary:
    return evalUnary(call);
  case OpKind::Cast:
    return evalCast(call);
  case OpKind::Binary:
    return evalBinary(call);
  case OpKind::Ternary:
    return evalTernary(call);
  case OpKind::Where:
    return evalWhere(call);
  case OpKind::Reduction:
    return evalReduction(call, symbols);
  case OpKind::Reshape:
    return evalReshape(call);
  case OpKind::Linear:
    return evalLinear(call);
  case OpKind::Matmul:
    return evalMatmul(call);
  case OpKind::Other:
    break;
  }
  call.fail("unsupported-op", "the reference has no rule for this op");
}

/// What follows a reduction whose partials were combined: `reduced` holds
/// the combined value; the initial value (reductions) or the bias (linear)
/// is applied once.
HostTensor evalEpilogue(const OpCall &call, const HostTensor &reduced, const Bindings &symbols) {
  if (reduced.shape() != call.outShape)
    call.fail("shape-mismatch", "the reduced value " + shapeStr(reduced.shape()) +
                                    " does not have the output's shape " + shapeStr(call.outShape));
  HostTensor out(call.outShape, call.outDtype, reduced.data());
  if (call.expr.kind == OpKind::Reduction) {
    ReductionOp op = reductionOp(call);
    double init = reductionInit(call, op, symbols);
    for (double &v : out.data())
      v = op.combine(init, v);
  } else if (call.expr.kind == OpKind::Linear && call.args.size() == 3) {
    const HostTensor &bias = call.args[2];
    int64_t n = call.outShape.empty() ? 1 : call.outShape.back();
    if (!(bias.numel() == 1 || bias.numel() == n))
      call.fail("shape-mismatch",
                "bias " + shapeStr(bias.shape()) + " does not fit N = " + std::to_string(n));
    for (int64_t e = 0; e < out.numel(); ++e)
      out.data()[e] += bias.data()[bias.numel() == 1 ? 0 : e % n];
  }
  return storeAs(std::move(out), call.outDtype);
}

/// Walks a fusion in topological order, keeping every tensor's value.
class ReferenceEvaluator {
public:
  ReferenceEvaluator(const Fusion &fusion, const Bindings &symbols)
      : fusion_(fusion), symbols_(symbols) {}

  ReferenceResult run(const std::map<TensorNum, HostTensor> &inputs) {
    FusionGraph graph = buildGraph();
    takeInputs(inputs);
    bool looped = std::any_of(fusion_.exprs.begin(), fusion_.exprs.end(), isInHostLoop);
    if (looped) {
      runProgram(graph);
    } else {
      for (TensorNum t : graph.topologicalOrder())
        if (!result_.values.count(t))
          result_.values.emplace(t, evaluateTensor(t, graph));
    }
    result_.outputs = fusion_.outputs;
    return std::move(result_);
  }

private:
  /// A host program with loops (docs/semantics.md, "Communications in host
  /// loops"), statement by statement in program order: a loop's statements
  /// once per iteration, a read view as its base's slice at the iteration,
  /// a write view storing the statement's result into its base's slice. A
  /// base starts undefined (NaN): a slice no iteration writes stays so.
  void runProgram(const FusionGraph &graph) {
    for (TensorNum base : loopWrittenBases(fusion_)) {
      HostTensor undefined(referenceShape(fusion_, base, symbols_), fusion_.tensor(base).dtype);
      std::fill(undefined.data().begin(), undefined.data().end(),
                std::numeric_limits<double>::quiet_NaN());
      result_.values.insert_or_assign(base, std::move(undefined));
    }
    for (size_t i = 0; i < fusion_.exprs.size();) {
      const Expr &e = fusion_.exprs[i];
      size_t end = i + 1;
      while (isInHostLoop(e) && end < fusion_.exprs.size() && sameHostLoop(fusion_.exprs[end], e))
        ++end;
      if (isInHostLoop(e))
        runLoop(graph, i, end);
      else if (!isSliceView(e)) // A read view is taken in its loop.
        for (TensorNum t : e.outputs)
          result_.values.insert_or_assign(t, evaluateTensor(t, graph));
      i = end;
    }
  }

  /// The statements [begin, end) of one loop, once per iteration, each
  /// after its read views take the iteration's slices.
  void runLoop(const FusionGraph &graph, size_t begin, size_t end) {
    std::map<size_t, LoopedStatement> models;
    for (size_t i = begin; i < end; ++i) {
      const Expr &e = fusion_.exprs[i];
      auto model = loopedStatement(fusion_, e);
      if (auto *why = std::get_if<std::string>(&model))
        throwInputError("unsupported-op", "the reference cannot run this looped statement: " + *why,
                        e.loc);
      models.emplace(i, std::get<LoopedStatement>(model));
    }
    const HostLoop &loop = models.at(begin).loop;
    const TensorView &anchor = fusion_.tensor(fusion_.exprs[begin].outputs.at(0));
    int64_t lo = evaluateExtent(loop.lo, symbols_, anchor);
    int64_t hi = evaluateExtent(loop.hi, symbols_, anchor);
    for (int64_t s = lo; s < hi; ++s)
      for (auto &[i, model] : models) {
        for (const SliceView &read : model.reads)
          result_.values.insert_or_assign(read.view, sliceAt(read, s, fusion_.exprs[i]));
        TensorNum out = fusion_.exprs[i].outputs.at(0);
        HostTensor value = isCollectivePermute(fusion_.exprs[i])
                               ? ringShard(model, s, fusion_.exprs[i])
                               : evaluateTensor(out, graph);
        if (const auto &w = model.write)
          storeSlice(*w, slotOf(*w, s), value, fusion_.exprs[i]);
        result_.values.insert_or_assign(out, std::move(value));
      }
  }

  /// What a ring step (ir/RingPermute.h) delivers, read globally: its slot
  /// s of the base holds the input's shard s (on device t, iteration
  /// (s - t) mod D writes it there: the iterations of every device together
  /// fill every slot, which is what the ring checker proves). The reference
  /// runs the slots in index order, each statement of the iteration on the
  /// same slot as the ring's.
  HostTensor ringShard(const LoopedStatement &ring, int64_t s, const Expr &e) const {
    SliceView shard = *ring.write;
    shard.base = *e.inputs.at(0).tensor;
    return sliceAt(shard, slotOf(*ring.write, s), e);
  }

  /// The index iteration `s` writes through `view`: s, or for a swizzled
  /// view the slot of team index 0 (ir/Swizzle1D.h), (s mod D); the other
  /// devices write that slot in other iterations of the same loop.
  int64_t slotOf(const SliceView &view, int64_t s) const {
    const auto &mesh = fusion_.tensor(view.base).mesh;
    return view.swizzled && mesh ? swizzledSlot(s, 0, mesh->size()) : s;
  }

  /// Outer count, axis extent and inner count of `view`'s base around its
  /// sliced axis; `s` must index the axis and the slice hold `count` values.
  std::array<int64_t, 3> sliceGeometry(const SliceView &view, int64_t s, int64_t count,
                                       const Expr &at) const {
    const std::vector<int64_t> &shape = result_.values.at(view.base).shape();
    int64_t outer = 1, inner = 1;
    for (size_t k = 0; k < shape.size(); ++k)
      (k < view.position ? outer : inner) *= k == view.position ? 1 : shape[k];
    int64_t extent = view.position < shape.size() ? shape[view.position] : 0;
    if (s < 0 || s >= extent)
      throwInputError("loop-out-of-range",
                      "iteration " + std::to_string(s) + " indexes " +
                          fusion_.tensor(view.base).name() + " outside its axis of extent " +
                          std::to_string(extent),
                      at.loc);
    if (count != outer * inner)
      throwInputError("shape-mismatch",
                      fusion_.tensor(view.view).name() + " is not a slice of " +
                          fusion_.tensor(view.base).name() + " at these sizes",
                      at.loc);
    return {outer, extent, inner};
  }

  HostTensor sliceAt(const SliceView &view, int64_t s, const Expr &at) const {
    HostTensor out(referenceShape(fusion_, view.view, symbols_), fusion_.tensor(view.view).dtype);
    auto [outer, extent, inner] = sliceGeometry(view, s, out.numel(), at);
    const HostTensor &base = result_.values.at(view.base);
    for (int64_t o = 0; o < outer; ++o)
      std::copy_n(base.data().begin() + (o * extent + s) * inner, inner,
                  out.data().begin() + o * inner);
    return out;
  }

  void storeSlice(const SliceView &view, int64_t s, const HostTensor &value, const Expr &at) {
    auto [outer, extent, inner] = sliceGeometry(view, s, value.numel(), at);
    HostTensor &base = result_.values.at(view.base);
    for (int64_t o = 0; o < outer; ++o)
      std::copy_n(value.data().begin() + o * inner, inner,
                  base.data().begin() + (o * extent + s) * inner);
  }

  FusionGraph buildGraph() const {
    DiagnosticEngine diags;
    auto graph = FusionGraph::build(fusion_, diags);
    if (!graph)
      throw InputError(diags.diagnostics().front());
    return std::move(*graph);
  }

  void takeInputs(const std::map<TensorNum, HostTensor> &inputs) {
    std::vector<TensorNum> required = referenceInputs(fusion_);
    for (const auto &[t, value] : inputs)
      if (std::find(required.begin(), required.end(), t) == required.end())
        throwInputError("unexpected-input",
                        "T" + std::to_string(t) + " is given a value but is not a fusion input",
                        fusion_.hasTensor(t) ? fusion_.tensor(t).loc : fusion_.loc);
    for (TensorNum t : required)
      result_.values.emplace(t, checkedInput(t, inputs));
  }

  HostTensor checkedInput(TensorNum t, const std::map<TensorNum, HostTensor> &inputs) const {
    const TensorView &tv = fusion_.tensor(t);
    auto it = inputs.find(t);
    std::vector<int64_t> shape = referenceShape(fusion_, t, symbols_);
    if (it == inputs.end())
      throwInputError("missing-input",
                      "input " + tv.name() + " " + shapeStr(shape) + " has no value", tv.loc);
    if (it->second.shape() != shape)
      throwInputError("input-shape",
                      "input " + tv.name() + " must have shape " + shapeStr(shape) + ", got " +
                          shapeStr(it->second.shape()),
                      tv.loc);
    if (tv.dtype != DataType::Unknown && it->second.dtype() != tv.dtype)
      throwInputError("input-dtype",
                      "input " + tv.name() + " is " + dtypeStr(tv.dtype) + ", got a " +
                          dtypeStr(it->second.dtype()) + " value",
                      tv.loc);
    return it->second;
  }

  HostTensor evaluateTensor(TensorNum t, const FusionGraph &graph) const {
    const Expr *expr = fusion_.producerExpr(t);
    SC_ASSERT(expr, "a tensor without definition was not taken as an input");
    OpCall call{fusion_, *expr, t, referenceShape(fusion_, t, symbols_), fusion_.tensor(t).dtype,
                {},      {}};
    for (size_t i = 0; i < expr->inputs.size(); ++i) {
      call.args.push_back(operandValue(call, i));
      call.maps.push_back(edgeMap(graph, *expr, i, t));
    }
    return evalOp(call, symbols_);
  }

  HostTensor operandValue(const OpCall &call, size_t i) const {
    const Operand &operand = call.expr.inputs[i];
    if (operand.tensor)
      return result_.values.at(*operand.tensor);
    auto v = scalarValue(operand.scalar, symbols_);
    if (!v)
      call.fail(isScalarSymbol(operand.scalar) ? "unbound-symbol" : "bad-scalar",
                "no value for the scalar operand `" + operand.scalar + "`");
    return HostTensor({}, DataType::Double, {*v});
  }

  const DomainMap *edgeMap(const FusionGraph &graph, const Expr &expr, size_t operand,
                           TensorNum out) const {
    for (const FusionEdge *e : graph.edgesInto(out))
      if (&fusion_.exprs[e->expr] == &expr && e->operandIndex == operand)
        return &e->map;
    return nullptr;
  }

  const Fusion &fusion_;
  const Bindings &symbols_;
  ReferenceResult result_;
};

} // namespace

HostTensor evaluateExpression(const Fusion &fusion, const FusionGraph &graph, size_t exprIndex,
                              const std::vector<HostTensor> &operands, const Bindings &symbols,
                              ExprPart part, const HostTensor *reduced) {
  SC_ASSERT(exprIndex < fusion.exprs.size(), "expression index out of range");
  const Expr &expr = fusion.exprs[exprIndex];
  SC_ASSERT(expr.outputs.size() == 1, "evaluateExpression takes a single-output expression");
  SC_ASSERT(operands.size() == expr.inputs.size(), "one value per operand");
  TensorNum out = expr.outputs[0];
  OpCall call{fusion, expr, out, referenceShape(fusion, out, symbols), fusion.tensor(out).dtype,
              {},     {},   part};
  for (size_t i = 0; i < expr.inputs.size(); ++i) {
    const Operand &operand = expr.inputs[i];
    if (operand.tensor) {
      call.args.push_back(operands[i]);
    } else {
      auto v = scalarValue(operand.scalar, symbols);
      if (!v)
        call.fail("bad-scalar", "no value for the scalar operand `" + operand.scalar + "`");
      call.args.push_back(HostTensor({}, DataType::Double, {*v}));
    }
    const DomainMap *map = nullptr;
    for (const FusionEdge *e : graph.edgesInto(out))
      if (e->expr == exprIndex && e->operandIndex == i)
        map = &e->map;
    call.maps.push_back(map);
  }
  if (part == ExprPart::Epilogue) {
    SC_ASSERT(reduced, "an epilogue needs the reduced value");
    return evalEpilogue(call, *reduced, symbols);
  }
  return evalOp(call, symbols);
}

double partialIdentity(const Expr &expr) {
  return reduceIdentity(reduceOpOf(expr).value_or(ReduceOp::Sum));
}

bool needsEpilogue(const Expr &expr, const Bindings &symbols) {
  if (expr.kind == OpKind::Linear)
    return expr.inputs.size() == 3;
  if (expr.kind != OpKind::Reduction)
    return false;
  std::string text = expr.attr("initial value");
  if (text.empty())
    return false;
  auto v = scalarValue(text, symbols);
  return !v || *v != partialIdentity(expr);
}

ReferenceResult evaluateReference(const Fusion &fusion,
                                  const std::map<TensorNum, HostTensor> &inputs,
                                  const Bindings &symbolValues) {
  return ReferenceEvaluator(fusion, symbolValues).run(inputs);
}

} // namespace shardcheck
