// Pointwise kernels of the CUDA compute layer: a generic one (any types,
// gathers, scalars) and a vectorized fast one (same-type float arrays,
// 16-byte accesses); see DeviceOps.h.
//
// This file does not reduce (DeviceReductions.cu).
#include "executor/gpu/DeviceSupport.cuh"

namespace shardcheck::gpu {

// ---------------------------------------------------------------------------
// 4. Pointwise kernels
// ---------------------------------------------------------------------------

namespace {

/// One operand as the generic kernel reads it.
struct OperandDesc {
  const void *data = nullptr; ///< null: the scalar
  const int64_t *gather = nullptr;
  int64_t count = 0;
  ElementType type = ElementType::F32;
  double scalar = 0;
};

struct GenericArgs {
  OperandDesc in[3];
  void *out = nullptr;
  ElementType outType = ElementType::F32;
  int64_t n = 0;
  ElementwiseOp::Kind kind = ElementwiseOp::Kind::Copy;
  int code = 0;
};

template <class D> __device__ __forceinline__ D operandValue(const OperandDesc &d, int64_t o) {
  if (!d.data)
    return convertTo<D>(d.scalar);
  int64_t i = o;
  if (d.gather) {
    i = d.gather[o];
    if (i < 0 || i >= d.count)
      return D(0);
  }
  return loadElement<D>(d.data, d.type, i);
}

/// The op on element o, computed in D (float, double or int64_t).
template <class D> __device__ __forceinline__ D evaluate(const GenericArgs &a, int64_t o) {
  using K = ElementwiseOp::Kind;
  switch (a.kind) {
  case K::Unary:
    if constexpr (std::is_same_v<D, int64_t>)
      return ~operandValue<D>(a.in[0], o); // the only int64 unary op
    else
      return unaryMath<D>(a.code, operandValue<D>(a.in[0], o));
  case K::Binary:
    if constexpr (std::is_same_v<D, int64_t>)
      return intBinary(a.code, operandValue<D>(a.in[0], o), operandValue<D>(a.in[1], o));
    else
      return binaryMath<D>(a.code, operandValue<D>(a.in[0], o), operandValue<D>(a.in[1], o));
  case K::Ternary:
    if constexpr (std::is_same_v<D, int64_t>)
      return D(0); // never dispatched: ternary ops compute in floating point
    else
      return ternaryMath<D>(a.code, operandValue<D>(a.in[0], o), operandValue<D>(a.in[1], o),
                            operandValue<D>(a.in[2], o));
  case K::Where:
    return operandValue<double>(a.in[0], o) != 0.0 ? operandValue<D>(a.in[1], o)
                                                   : operandValue<D>(a.in[2], o);
  default: // Copy, Cast
    return operandValue<D>(a.in[0], o);
  }
}

template <class D> __global__ void genericKernel(GenericArgs a) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t o = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; o < a.n;
       o += stride)
    storeElement<D>(a.out, a.outType, o, evaluate<D>(a, o));
}

// The fast path: same-type F32/F16/BF16 arrays (or scalars), 16-byte
// accesses, float math, the op a compile-time constant.

// toFloat and fromFloat (DeviceSupport.cuh) convert one element.

/// Element k (0 or 1 for 16-bit types, 0 for float) of a 32-bit word.
template <class S, int K> __device__ __forceinline__ float wordElement(uint32_t w) {
  if constexpr (std::is_same_v<S, float>)
    return __uint_as_float(w);
  else if constexpr (std::is_same_v<S, __half>)
    return __half2float(__ushort_as_half(static_cast<unsigned short>(K ? w >> 16 : w & 0xFFFF)));
  else
    return __uint_as_float(K ? (w & 0xFFFF0000u) : (w << 16));
}

template <class S> __device__ __forceinline__ uint32_t bitsOf(float x) {
  if constexpr (std::is_same_v<S, float>)
    return __float_as_uint(x);
  else if constexpr (std::is_same_v<S, __half>)
    return __half_as_ushort(fromFloat<__half>(x));
  else
    return __bfloat16_as_ushort(fromFloat<__nv_bfloat16>(x));
}

/// A 16-byte vector of S as floats, and back.
template <class S> struct Vec {
  static constexpr int kWidth = 16 / sizeof(S);
  float v[kWidth];

  __device__ __forceinline__ void unpack(uint4 raw) {
    const uint32_t words[4] = {raw.x, raw.y, raw.z, raw.w};
#pragma unroll
    for (int w = 0; w < 4; ++w) {
      if constexpr (kWidth == 4) {
        v[w] = wordElement<S, 0>(words[w]);
      } else {
        v[2 * w] = wordElement<S, 0>(words[w]);
        v[2 * w + 1] = wordElement<S, 1>(words[w]);
      }
    }
  }

  __device__ __forceinline__ uint4 pack() const {
    uint32_t words[4];
#pragma unroll
    for (int w = 0; w < 4; ++w) {
      if constexpr (kWidth == 4)
        words[w] = bitsOf<S>(v[w]);
      else
        words[w] = bitsOf<S>(v[2 * w]) | (bitsOf<S>(v[2 * w + 1]) << 16);
    }
    return make_uint4(words[0], words[1], words[2], words[3]);
  }

  __device__ __forceinline__ void fill(float x) {
#pragma unroll
    for (int k = 0; k < kWidth; ++k)
      v[k] = x;
  }
};

template <int C> struct UnaryFn {
  static constexpr int kArity = 1;
  __device__ __forceinline__ float operator()(float x, float, float) const {
    return unaryMath<float>(C, x);
  }
};
template <int C> struct BinaryFn {
  static constexpr int kArity = 2;
  __device__ __forceinline__ float operator()(float x, float y, float) const {
    return binaryMath<float>(C, x, y);
  }
};
template <int C> struct TernaryFn {
  static constexpr int kArity = 3;
  __device__ __forceinline__ float operator()(float x, float y, float z) const {
    return ternaryMath<float>(C, x, y, z);
  }
};
struct WhereFn {
  static constexpr int kArity = 3;
  __device__ __forceinline__ float operator()(float c, float y, float z) const {
    return c != 0.0f ? y : z;
  }
};
struct CopyFn {
  static constexpr int kArity = 1;
  __device__ __forceinline__ float operator()(float x, float, float) const { return x; }
};

template <class S> struct FastArgs {
  const S *in[3] = {nullptr, nullptr, nullptr}; ///< null: the scalar
  float scalar[3] = {0, 0, 0};
  S *out = nullptr;
  int64_t head = 0; ///< elements before the first 16-byte boundary
  int64_t vectors = 0;
  int64_t tail = 0; ///< elements after the last whole vector
};

/// 16-byte vectors per operand each thread loads before computing. On an
/// H200, 2, 4 and 8 all reach about 92% of a device-to-device copy on 1 GiB;
/// 2 also matches the copy on L2-resident sizes (16 MiB).
constexpr int kUnroll = 2;

template <class S, class Fn>
__device__ __forceinline__ void fastElement(const FastArgs<S> &a, int64_t i) {
  float x[3];
#pragma unroll
  for (int j = 0; j < 3; ++j)
    x[j] = j < Fn::kArity && a.in[j] ? toFloat(a.in[j][i]) : a.scalar[j];
  a.out[i] = fromFloat<S>(Fn()(x[0], x[1], x[2]));
}

/// Vectorized grid-stride loop: each thread keeps kUnroll 16-byte vectors
/// per operand in flight; the head and tail go element by element.
template <class S, class Fn> __global__ void __launch_bounds__(kThreads) fastKernel(FastArgs<S> a) {
  constexpr int W = Vec<S>::kWidth;
  const int64_t tid = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = tid; i < a.head; i += stride)
    fastElement<S, Fn>(a, i);
  const int64_t tailStart = a.head + a.vectors * W;
  for (int64_t i = tid; i < a.tail; i += stride)
    fastElement<S, Fn>(a, tailStart + i);

  const uint4 *in[3];
  for (int j = 0; j < 3; ++j)
    in[j] = reinterpret_cast<const uint4 *>(a.in[j] ? a.in[j] + a.head : nullptr);
  uint4 *out = reinterpret_cast<uint4 *>(a.out + a.head);
  for (int64_t base = tid; base < a.vectors; base += kUnroll * stride) {
    // All loads first (kUnroll x arity 16-byte loads in flight), then
    // unpack, compute and store one vector at a time.
    uint4 raw[kUnroll][Fn::kArity];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u)
#pragma unroll
      for (int j = 0; j < Fn::kArity; ++j)
        if (in[j] && base + u * stride < a.vectors)
          raw[u][j] = __ldcs(in[j] + base + u * stride);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      int64_t idx = base + u * stride;
      if (idx >= a.vectors)
        break;
      Vec<S> v[3];
#pragma unroll
      for (int j = 0; j < 3; ++j) {
        if (j < Fn::kArity && in[j])
          v[j].unpack(raw[u][j]);
        else
          v[j].fill(a.scalar[j]);
      }
      Vec<S> r;
#pragma unroll
      for (int k = 0; k < W; ++k)
        r.v[k] = Fn()(v[0].v[k], v[1].v[k], v[2].v[k]);
      __stcs(out + idx, r.pack());
    }
  }
}

/// Launches the fast kernel over `work` thread-items with at most as many
/// blocks as fit on the device at once: every block stays resident and loops,
/// so no partial last wave of blocks idles the machine.
template <class S, class Fn>
void launchFastKernel(const FastArgs<S> &a, int gpu, int64_t work, cudaStream_t stream) {
  static const int perSm = [] {
    int blocks = 0;
    SC_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, fastKernel<S, Fn>, kThreads, 0));
    return std::max(blocks, 1);
  }();
  int64_t needed = (work + kThreads - 1) / kThreads;
  int64_t resident = static_cast<int64_t>(perSm) * multiprocessors(gpu);
  auto blocks = static_cast<unsigned>(std::clamp<int64_t>(needed, 1, resident));
  fastKernel<S, Fn><<<blocks, kThreads, 0, stream>>>(a);
  SC_LAUNCHED("fastKernel");
}

template <class S> using FastLauncher = void (*)(const FastArgs<S> &, int, int64_t, cudaStream_t);

/// The fast kernel of op code `code`: one instantiation per code.
template <class S, template <int> class Fn, int... Codes>
FastLauncher<S> fastLauncherFor(int code, std::integer_sequence<int, Codes...>) {
  static constexpr FastLauncher<S> table[] = {&launchFastKernel<S, Fn<Codes>>...};
  return table[code];
}

template <class S> FastLauncher<S> fastLauncher(const ElementwiseOp &op) {
  using K = ElementwiseOp::Kind;
  switch (op.kind) {
  case K::Unary:
    return fastLauncherFor<S, UnaryFn>(op.code, std::make_integer_sequence<int, kUnaryCount>());
  case K::Binary:
    return fastLauncherFor<S, BinaryFn>(op.code, std::make_integer_sequence<int, kBinaryCount>());
  case K::Ternary:
    return fastLauncherFor<S, TernaryFn>(op.code, std::make_integer_sequence<int, kTernaryCount>());
  case K::Where:
    return &launchFastKernel<S, WhereFn>;
  default:
    return &launchFastKernel<S, CopyFn>;
  }
}

template <class S>
void runFast(const ElementwiseOp &op, const std::vector<ElementwiseOperand> &operands,
             const DeviceArray &out, cudaStream_t stream) {
  FastArgs<S> a;
  a.out = static_cast<S *>(out.ptr());
  auto misalignment = [](const void *p) { return reinterpret_cast<uintptr_t>(p) % 16; };
  bool sameAlignment = true;
  for (size_t j = 0; j < operands.size(); ++j) {
    if (operands[j].array) {
      a.in[j] = static_cast<const S *>(operands[j].array->ptr());
      sameAlignment = sameAlignment && misalignment(a.in[j]) == misalignment(a.out);
    } else {
      // Rounded on the host first: a double -> float cast that overflows is UB.
      a.scalar[j] = static_cast<float>(roundToElementType(operands[j].scalar, ElementType::F32));
    }
  }
  constexpr int64_t W = Vec<S>::kWidth;
  if (sameAlignment && misalignment(a.out) % sizeof(S) == 0) {
    int64_t toBoundary = static_cast<int64_t>((16 - misalignment(a.out)) % 16 / sizeof(S));
    a.head = std::min(out.count, toBoundary);
    a.vectors = (out.count - a.head) / W;
  }
  a.tail = out.count - a.head - a.vectors * W;
  int64_t work = std::max({(a.vectors + kUnroll - 1) / kUnroll, a.head, a.tail});
  fastLauncher<S>(op)(a, out.gpu, work, stream);
}

/// The compute type of the generic kernel.
enum class Domain { Float, Double, Int64 };

int arityOf(ElementwiseOp::Kind kind) {
  using K = ElementwiseOp::Kind;
  switch (kind) {
  case K::Binary:
    return 2;
  case K::Ternary:
  case K::Where:
    return 3;
  default:
    return 1;
  }
}

Domain domainOf(const ElementwiseOp &op, const std::vector<ElementwiseOperand> &operands,
                const DeviceArray &out) {
  using K = ElementwiseOp::Kind;
  if ((op.kind == K::Unary && isIntegerUnary(op.code)) ||
      (op.kind == K::Binary && isIntegerBinary(op.code, op.integral)))
    return Domain::Int64;
  if (op.kind == K::Copy || op.kind == K::Cast || op.kind == K::Where)
    return isIntType(out.type) ? Domain::Int64 : Domain::Double;
  if (!isFloatType(out.type))
    return Domain::Double;
  for (const ElementwiseOperand &operand : operands)
    if (operand.array && operand.array->type == ElementType::F64)
      return Domain::Double;
  return Domain::Float;
}

void checkElementwise(const ElementwiseOp &op, const std::vector<ElementwiseOperand> &operands,
                      const DeviceArray &out) {
  using K = ElementwiseOp::Kind;
  if (static_cast<int>(operands.size()) != arityOf(op.kind))
    badArgument("launchElementwise: " + std::to_string(operands.size()) +
                " operands for an op of arity " + std::to_string(arityOf(op.kind)));
  int limit = op.kind == K::Unary     ? kUnaryCount
              : op.kind == K::Binary  ? kBinaryCount
              : op.kind == K::Ternary ? kTernaryCount
                                      : 1;
  if (op.kind != K::Copy && op.kind != K::Cast && op.kind != K::Where &&
      (op.code < 0 || op.code >= limit))
    badArgument("launchElementwise: op code " + std::to_string(op.code) + " out of range");
  if (out.count > 0 && !out.ptr())
    badArgument("launchElementwise: output has no storage");
  for (const ElementwiseOperand &operand : operands) {
    if (!operand.array)
      continue;
    if (operand.array->gpu != out.gpu)
      badArgument("launchElementwise: operand on GPU " + std::to_string(operand.array->gpu) +
                  ", output on GPU " + std::to_string(out.gpu));
    if (operand.gather)
      requireIndices(*operand.gather, out.gpu, out.count, "a gather operand's index array");
    else if (operand.array->count < out.count)
      badArgument("launchElementwise: operand of " + std::to_string(operand.array->count) +
                  " elements for an output of " + std::to_string(out.count));
  }
}

OperandDesc describe(const ElementwiseOperand &operand) {
  OperandDesc d;
  d.scalar = operand.scalar;
  if (operand.array && operand.array->count > 0) {
    d.data = operand.array->ptr();
    d.count = operand.array->count;
    d.type = operand.array->type;
    d.gather = operand.gather ? static_cast<const int64_t *>(operand.gather->ptr()) : nullptr;
  } else if (operand.array) { // an empty array: every gathered value is 0
    d.scalar = 0;
  }
  return d;
}

void runGeneric(const ElementwiseOp &op, const std::vector<ElementwiseOperand> &operands,
                const DeviceArray &out, cudaStream_t stream) {
  GenericArgs a;
  for (size_t j = 0; j < operands.size(); ++j)
    a.in[j] = describe(operands[j]);
  a.out = out.ptr();
  a.outType = out.type;
  a.n = out.count;
  a.kind = op.kind;
  a.code = op.code;
  unsigned blocks = gridFor(out.gpu, out.count, 32);
  switch (domainOf(op, operands, out)) {
  case Domain::Float:
    genericKernel<float><<<blocks, kThreads, 0, stream>>>(a);
    break;
  case Domain::Double:
    genericKernel<double><<<blocks, kThreads, 0, stream>>>(a);
    break;
  case Domain::Int64:
    genericKernel<int64_t><<<blocks, kThreads, 0, stream>>>(a);
    break;
  }
  SC_LAUNCHED("genericKernel");
}

} // namespace

bool isVectorizedElementwise(const ElementwiseOp &op,
                             const std::vector<ElementwiseOperand> &operands,
                             const DeviceArray &out) {
  if (!isFloatType(out.type) || out.count == 0 || domainOf(op, operands, out) == Domain::Int64)
    return false;
  for (const ElementwiseOperand &operand : operands)
    if (operand.array && (operand.gather || operand.array->type != out.type))
      return false;
  return true;
}

void launchElementwise(const ElementwiseOp &op, const std::vector<ElementwiseOperand> &operands,
                       const DeviceArray &out, Stream stream) {
  checkElementwise(op, operands, out);
  if (out.count == 0)
    return;
  DeviceGuard guard(out.gpu);
  cudaStream_t s = cudaStreamOf(stream);
  if (!isVectorizedElementwise(op, operands, out))
    return runGeneric(op, operands, out, s);
  switch (out.type) {
  case ElementType::F32:
    return runFast<float>(op, operands, out, s);
  case ElementType::F16:
    return runFast<__half>(op, operands, out, s);
  default:
    return runFast<__nv_bfloat16>(op, operands, out, s);
  }
}

} // namespace shardcheck::gpu
