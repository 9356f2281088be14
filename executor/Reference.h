// The unsharded reference evaluation of a fusion, in double precision.
//
// evaluateReference runs every expression of a fusion on whole (global)
// tensors, ignoring meshes and device parallelization, so that a sharded run
// can be checked element by element against it. A tensor's shape is its
// logical data extents: reduction IDs are left out, a broadcast ID has extent
// 1 and an expanded broadcast its expanded extent (the tensor is
// materialized, as PyTorch sees it). Symbolic extents are evaluated with the
// caller's symbol values.
//
// Values stay doubles: floating-point results are not rounded to their
// tensor's dtype except by casts, whose purpose is that rounding; results of
// integer and bool dtypes are always stored as their dtype (integer division,
// comparisons, ...). Per-dtype tolerances absorb the difference to a device
// computing in lower precision.
//
// Every problem with the fusion or the inputs (a missing or misshapen input,
// an op or dtype without a rule, an unbound symbol) is an InputError with a
// location; SC_ASSERT is kept for shardcheck's own invariants. This file does
// not shard, communicate, compare or generate inputs (executor/Random.h does).
#pragma once

#include "executor/Tensor.h"
#include "ir/Fusion.h"

#include <map>
#include <string>
#include <vector>

namespace shardcheck {

/// Symbol values for symbolic extents and named scalars (`i0` -> 128). The
/// same type as the checker's Bindings.
using Bindings = std::map<std::string, int64_t>;

/// The value of every tensor of a fusion, inputs included.
struct ReferenceResult {
  std::map<TensorNum, HostTensor> values;
  /// The fusion's outputs, in Fusion::outputs order.
  std::vector<TensorNum> outputs;

  /// The value of tensor `t`; asserts it was evaluated.
  const HostTensor &value(TensorNum t) const;
};

/// The tensors whose values must be given: every tensor no expression
/// defines and no host loop writes slice by slice, in ascending number order. (A tensor listed
/// among Fusion::inputs that an expression defines, as host IR lists preallocated outputs, is
/// computed.)
std::vector<TensorNum> referenceInputs(const Fusion &fusion);

/// The global data shape of tensor `t` (see the banner). An unbound symbol or
/// a negative extent is an InputError located at the tensor.
std::vector<int64_t> referenceShape(const Fusion &fusion, TensorNum t, const Bindings &symbols);

/// Evaluates the whole fusion unsharded in topological order (a host program
/// with loops: in program order, each loop once per iteration, read and
/// write views as slices of their bases, docs/semantics.md). `inputs` must
/// hold exactly the tensors of referenceInputs with their shapes and dtypes.
/// Throws InputError for anything it cannot evaluate faithfully.
ReferenceResult evaluateReference(const Fusion &fusion,
                                  const std::map<TensorNum, HostTensor> &inputs,
                                  const Bindings &symbolValues);

/// Which part of an expression to evaluate. A sharded reduction (reduction,
/// matmul or linear over an axis the devices split) is run as a Partial on
/// each device, a reduction collective, then an Epilogue.
enum class ExprPart {
  Whole,    ///< The expression as written.
  Partial,  ///< The reduction from its operator's identity, without the
            ///< initial value or a linear's bias.
  Epilogue, ///< The initial value or bias applied to a combined reduction.
};

class FusionGraph;

/// Evaluates expression `exprIndex` (single output) on `operands`, one value
/// per operand in order (scalar operands are read from their spelling; their
/// entries are ignored). Epilogue takes the combined reduction in `reduced`
/// and uses only the bias operand. Throws InputError as evaluateReference.
HostTensor evaluateExpression(const Fusion &fusion, const FusionGraph &graph, size_t exprIndex,
                              const std::vector<HostTensor> &operands, const Bindings &symbols,
                              ExprPart part = ExprPart::Whole, const HostTensor *reduced = nullptr);

/// The value a partial gives an element the device does not hold: the
/// identity of reductionOperatorOf (ir/Fusion.h).
double partialIdentity(const Expr &expr);
/// Whether a sharded `expr` needs an Epilogue after its reduction
/// collective: a linear with bias, or a reduction whose initial value is not
/// its operator's identity.
bool needsEpilogue(const Expr &expr, const Bindings &symbols);

} // namespace shardcheck
