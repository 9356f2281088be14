// LocalCompute: a compute step on one device as index maps over its local
// buffers, the form a GPU kernel runs.
//
// The sim backend evaluates a compute step over a device's elements through
// the reference's op functions on global-shaped views (Executor.cpp). A GPU
// cannot: it runs kernels on the local buffers. buildLocalCompute turns one
// compute step on one device into one of three forms, computed once on the
// host from the executor's layouts (BufferMap):
// - Elementwise: out[o] = op(v_0(o), v_1(o), ...), v_i(o) = in_i[gather_i[o]]
//   (no gather: in_i[o]; a scalar operand: its value). Every non-reducing op
//   (set, permute, casts, unary/binary/ternary ops, where, broadcast,
//   squeeze, expand, reshape, host IR copies) is of this form.
// - SegmentReduce: out[o] = init combined with in[s] for every input slot s
//   in o's segment (a reduction, or a reducing host IR communication).
// - PairDot: out[o] = sum over (a, b) pairs of o of A[a] * B[b] (matmul,
//   linear; a linear's bias is then added elementwise through `bias`).
// plus the Epilogue of a sharded reduction: out[o] = combine(init, out[o])
// (+ bias[gather[o]] for a linear).
//
// When every buffer of the step is a dense box (executor/LocalBox.h),
// buildDenseCompute finds the same computation without enumerating elements:
// an Elementwise form without gathers when all boxes are equal, or a Gemm
// (out = A x B or A x B^T on row-major local matrices, what cuBLAS runs)
// for a matmul or linear whose operand boxes line up. It sums exactly the
// products the PairDot form would (those whose operands the device holds),
// so both forms give the same values; tests/local_compute_test.cpp and the
// corpus sweep run both.
//
// A slot whose element the device does not hold where the step needs it is a
// plan error (LocalComputeError), found here rather than as a wrong value.
// runLocalComputeOnHost interprets the form on host buffers with the
// reference's element rules, so the maps are tested on the CPU against the
// global-view evaluation (tests/local_compute_test.cpp).
#pragma once

#include "executor/BufferMap.h"
#include "executor/Pointwise.h"

#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace shardcheck {

/// A step needs an element its device does not hold.
class LocalComputeError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

struct LocalOperand {
  std::string buffer;          ///< Empty for a scalar.
  double scalar = 0;           ///< The scalar's value.
  std::vector<int64_t> gather; ///< Per output slot; empty: identity; -1: none.
};

struct LocalCompute {
  enum class Form { Elementwise, SegmentReduce, PairDot, Epilogue, Gemm };
  Form form = Form::Elementwise;
  size_t expr = 0;
  std::string output;
  int64_t outputSlots = 0;
  /// Elementwise: one per expression operand. SegmentReduce: the input.
  /// PairDot: A then B. Epilogue: the bias (linear) or none.
  std::vector<LocalOperand> operands;
  /// SegmentReduce, PairDot: offsets (outputSlots + 1) and indices (pairs:
  /// `indices` into A and `indicesB` into B).
  std::vector<int64_t> offsets, indices, indicesB;
  ReduceOp op = ReduceOp::Sum;
  double init = 0;
  /// PairDot of a linear with bias (Whole mode): the bias, added after.
  std::optional<LocalOperand> bias;
  /// Gemm: out (m x n) = A (m x k) x B (k x n, or n x k when transposeB),
  /// all row-major over the local buffers.
  int64_t m = 0, n = 0, k = 0;
  bool transposeB = false;
};

/// The local form of compute step `step` on `device` (the dense form when
/// buildDenseCompute finds one, else index maps from `map`). Throws
/// LocalComputeError (plan error) or InputError (an op without a rule).
LocalCompute buildLocalCompute(const Plan &plan, const FusionGraph &graph, const BufferMap &map,
                               const PlanStep &step, int64_t device, const Bindings &symbols);

/// The index-map form only (never the dense one): what buildLocalCompute
/// falls back to, exposed so tests can compare the two.
LocalCompute buildIndexedCompute(const Plan &plan, const FusionGraph &graph, const BufferMap &map,
                                 const PlanStep &step, int64_t device, const Bindings &symbols);

/// The local form of compute step `step` on `device` found from dense boxes
/// alone (see the banner), or nullopt when a buffer is not a box or the
/// boxes do not line up (then use buildLocalCompute). Never builds layouts.
std::optional<LocalCompute> buildDenseCompute(const Plan &plan, const PlanStep &step,
                                              int64_t device, const Bindings &symbols);

/// Runs `compute` on host buffers (name -> values of this device), writing
/// the output buffer; results are rounded to `outputType` as a device would
/// store them.
void runLocalComputeOnHost(const LocalCompute &compute, const Fusion &fusion,
                           std::map<std::string, std::vector<double> *> &buffers,
                           DataType outputType, const Bindings &symbols);

} // namespace shardcheck
