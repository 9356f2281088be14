// The operand and output counts of each op kind; see ExprShape.h.
#include "ir/ExprShape.h"

#include <algorithm>

namespace shardcheck {

namespace {

/// Ops with one tensor operand: load/store spellings, the shape ops,
/// reductions and host IR communications.
bool takesOneTensor(OpKind k) {
  switch (k) {
  case OpKind::Set:
  case OpKind::Permute:
  case OpKind::SegmenterSet:
  case OpKind::LoadStore:
  case OpKind::Broadcast:
  case OpKind::Squeeze:
  case OpKind::Expand:
  case OpKind::Reduction:
  case OpKind::Reshape:
  case OpKind::Communication:
    return true;
  default:
    return false;
  }
}

/// What kind `k` takes, or nullopt when `tensors` of `operands` fit.
std::optional<std::string> operandProblem(OpKind k, size_t tensors, size_t operands) {
  switch (k) {
  case OpKind::Unary:
  case OpKind::Cast:
    return operands == 1 ? std::nullopt : std::optional<std::string>("one operand");
  case OpKind::Binary:
    return operands == 2 ? std::nullopt : std::optional<std::string>("two operands");
  case OpKind::Ternary:
  case OpKind::Where:
    return operands == 3 ? std::nullopt : std::optional<std::string>("three operands");
  case OpKind::Matmul:
    return tensors == 2 && operands == 2 ? std::nullopt
                                         : std::optional<std::string>("two tensor operands");
  case OpKind::Linear:
    return tensors == operands && tensors >= 2 && tensors <= 3
               ? std::nullopt
               : std::optional<std::string>("two or three tensor operands (input, weight[, bias])");
  case OpKind::Other:
    return std::nullopt;
  default:
    return takesOneTensor(k) && (tensors != 1 || operands != 1)
               ? std::optional<std::string>("one tensor operand")
               : std::nullopt;
  }
}

} // namespace

std::optional<std::string> exprShapeProblem(const Expr &e) {
  if (e.kind != OpKind::Other && e.outputs.size() != 1)
    return "has one output, found " + std::to_string(e.outputs.size());
  size_t operands = e.inputs.size();
  if (auto expected = operandProblem(e.kind, e.tensorInputs().size(), operands))
    return "takes " + *expected + ", found " + std::to_string(operands) + " operand(s)";
  return std::nullopt;
}

std::vector<TensorNum> uncomputedOutputs(const Fusion &f) {
  std::vector<TensorNum> r;
  for (TensorNum t : f.outputs)
    if (!f.producerExpr(t) && std::find(f.inputs.begin(), f.inputs.end(), t) == f.inputs.end())
      r.push_back(t);
  return r;
}

} // namespace shardcheck
