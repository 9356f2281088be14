// The CUDA compute layer of the GPU ("nccl") backend: device arrays,
// streams, and the kernels a compute step needs (pointwise ops, gathers,
// segment reductions, dot products and cuBLAS matrix products).
//
// Plain C++ header: no CUDA header is included, so g++-compiled code (the
// executor, the tests) can use it; the implementation is DeviceArrays.cu,
// DevicePointwise.cu, DeviceReductions.cu and DeviceGemm.cu (by job).
//
// Semantics follow the reference evaluator: every op code means what
// executor/Pointwise.cpp's rule computes (see OpCodes.h), and storing a value
// into an element type rounds it as roundToDtype (ir/ElementTypes.h) does.
// Pointwise ops compute in float for F32/F16/BF16 outputs, in double for F64
// and integral/bool outputs, and in int64 for the integer ops (bitwise ops,
// shifts, gcd, and `/`, `%`, `ceilDiv` with integral semantics).
//
// Errors: a failing CUDA or cuBLAS call throws GpuError (file:line, the call,
// CUDA's error string); a bad argument (sizes, types, devices that do not
// fit) throws std::invalid_argument. Kernels are asynchronous on the stream
// they are given; launch errors are checked at launch.
#pragma once

#include "executor/core/DeviceError.h"
#include "ir/Collectives.h"  // ReduceOp
#include "ir/ElementTypes.h" // ElementType, roundToElementType

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace shardcheck::gpu {

/// A failing CUDA or cuBLAS call: "file:line: call: error name: error string".
class GpuError : public DeviceError {
public:
  using DeviceError::DeviceError;
};

/// The number of CUDA devices; 0 when there is none or no usable driver.
int deviceCount() noexcept;

/// A flat array of `count` elements of `type` on device `gpu`. `data` owns
/// the allocation (freed on `gpu` when the last copy goes); a view into
/// another array may be made with shared_ptr's aliasing constructor, and
/// needs only be aligned to its element size.
struct DeviceArray {
  int gpu = 0;
  ElementType type = ElementType::F32;
  int64_t count = 0;
  std::shared_ptr<void> data;
  void *ptr() const { return data.get(); }
  size_t bytes() const { return static_cast<size_t>(count) * elementSize(type); }
};

/// A CUDA stream (a cudaStream_t); nullptr is the legacy default stream.
using Stream = void *;

/// A new stream on `gpu`. It is a blocking stream: it orders with the legacy
/// default stream (and so with allocateArray's zero fill).
Stream createStream(int gpu);
/// Destroys a stream made by createStream, and the cuBLAS handle cached for it.
void destroyStream(int gpu, Stream stream);
/// Waits for everything queued on `stream`.
void synchronize(int gpu, Stream stream);

/// `count` zero-filled elements of `type` on `gpu` (the fill is complete on
/// return). `count` may be 0 (no allocation, ptr() is null).
DeviceArray allocateArray(int gpu, ElementType type, int64_t count);
/// Converts `values` on the host as roundToElementType does and copies them
/// into `array`, ordered after the work queued on `stream`; returns when the
/// copy is done. `values` must hold exactly array.count elements.
void uploadArray(const DeviceArray &array, const std::vector<double> &values,
                 Stream stream = nullptr);
/// The elements of `array` as doubles, read after the work queued on
/// `stream` has finished.
std::vector<double> downloadArray(const DeviceArray &array, Stream stream = nullptr);
/// A new I64 array on `gpu` holding `indices`.
DeviceArray uploadIndices(int gpu, const std::vector<int64_t> &indices);

/// A pointwise op: what launchElementwise computes per element.
struct ElementwiseOp {
  enum class Kind {
    Copy,    ///< operand 0, converted to out's type
    Unary,   ///< UnaryCode `code` of operand 0
    Binary,  ///< BinaryCode `code` of operands 0, 1
    Ternary, ///< TernaryCode `code` of operands 0, 1, 2
    Where,   ///< operand 0 != 0 ? operand 1 : operand 2
    Cast,    ///< operand 0, converted to out's type (same as Copy)
  };
  Kind kind = Kind::Copy;
  int code = 0;
  /// Integer semantics for `/`, `%`, `ceilDiv` (the output dtype is
  /// integral), as binaryRule's `integral`.
  bool integral = false;
};

/// One operand of a pointwise op. Its value for output element o is
/// array[gather[o]] when gather is set (an I64 array of at least out.count
/// indices; an index outside [0, array.count) gives 0), array[o] when only
/// array is set (at least out.count elements), or `scalar` when array is null.
struct ElementwiseOperand {
  const DeviceArray *array = nullptr;
  const DeviceArray *gather = nullptr;
  double scalar = 0;
};

/// out[o] = op(v_0(o), v_1(o), ...) for o in [0, out.count), stored in out's
/// type (rounded to nearest even, saturated for integers). Every array must
/// be on out.gpu. `out` may be an operand's own array read without gather
/// (in place); other overlaps are not supported. When every array has out's
/// type, F32, F16 or BF16, and none is gathered, and the op is not an int64
/// one, a vectorized kernel runs (16-byte loads and stores where the arrays
/// share their alignment; element by element otherwise).
void launchElementwise(const ElementwiseOp &op, const std::vector<ElementwiseOperand> &operands,
                       const DeviceArray &out, Stream stream);
/// Whether launchElementwise takes the vectorized path for these arguments.
bool isVectorizedElementwise(const ElementwiseOp &op,
                             const std::vector<ElementwiseOperand> &operands,
                             const DeviceArray &out);

/// out[o] = in[indices[o]] (an index outside [0, in.count) gives 0), converted
/// to out's type. `indices` is I64 with at least out.count elements.
void launchGather(const DeviceArray &in, const DeviceArray &indices, const DeviceArray &out,
                  Stream stream);

/// out[o] = init combined with in[indices[p]] for p in [offsets[o],
/// offsets[o+1]) (an empty segment gives init). offsets is I64 with
/// out.count + 1 entries, indices I64; an index outside [0, in.count) is
/// skipped. Max and Min propagate NaN. Accumulates in float when out is
/// F32/F16/BF16 and in is not F64, else in double.
void launchSegmentReduce(ReduceOp kind, double init, const DeviceArray &in,
                         const DeviceArray &offsets, const DeviceArray &indices,
                         const DeviceArray &out, Stream stream);

/// out[o] = init + sum over p in [offsets[o], offsets[o+1]) of
/// a[pairA[p]] * b[pairB[p]] (a pair with an index out of range is skipped):
/// the generic matmul/linear fallback. offsets, pairA, pairB are I64.
/// Accumulates in float when out is F32/F16/BF16 and neither a nor b is F64,
/// else in double.
void launchPairDot(const DeviceArray &a, const DeviceArray &b, const DeviceArray &offsets,
                   const DeviceArray &pairA, const DeviceArray &pairB, double init,
                   const DeviceArray &out, Stream stream);

/// C[i] = A[i] x (transposeB ? B[i]^T : B[i]) for i in [0, batch), row-major:
/// A[i] is m x k at a + i * strideA, B[i] is k x n (n x k when transposeB) at
/// b + i * strideB, C[i] is m x n at c + i * strideC (strides in elements; 0
/// broadcasts an operand). a, b, c have one type (F32, F16, BF16: fp32
/// compute; F64: fp64 compute), all on `gpu`. Uses cublasGemmStridedBatchedEx
/// with a cuBLAS handle cached per (gpu, stream).
void gemmRowMajor(int gpu, Stream stream, const DeviceArray &a, const DeviceArray &b,
                  const DeviceArray &c, int64_t batch, int64_t m, int64_t n, int64_t k,
                  bool transposeB, int64_t strideA, int64_t strideB, int64_t strideC);

/// Destroys every cached cuBLAS handle (call before the process's CUDA
/// contexts go away; later calls create new handles as needed).
void releaseGpuResources();

} // namespace shardcheck::gpu
