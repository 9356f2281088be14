// Gathers, segment reductions and pair dots of the CUDA compute layer; see
// DeviceOps.h.
//
// This file does not run pointwise ops (DevicePointwise.cu) or gemms.
#include "executor/gpu/DeviceSupport.cuh"

namespace shardcheck::gpu {

// ---------------------------------------------------------------------------
// 5. Gather, segment reductions, pair dots
// ---------------------------------------------------------------------------

void launchGather(const DeviceArray &in, const DeviceArray &indices, const DeviceArray &out,
                  Stream stream) {
  ElementwiseOp copy{ElementwiseOp::Kind::Copy, 0, false};
  launchElementwise(copy, {ElementwiseOperand{&in, &indices, 0}}, out, stream);
}

namespace {

struct SegmentArgs {
  const int64_t *offsets = nullptr;
  int64_t count = 0;     ///< segments (outputs)
  int64_t positions = 0; ///< entries of the index arrays
  // Segment reductions read a[indexA[p]]; pair dots a[indexA[p]] * b[indexB[p]].
  const void *a = nullptr;
  ElementType aType = ElementType::F32;
  int64_t aCount = 0;
  const int64_t *indexA = nullptr;
  const void *b = nullptr;
  ElementType bType = ElementType::F32;
  int64_t bCount = 0;
  const int64_t *indexB = nullptr;
  void *out = nullptr;
  ElementType outType = ElementType::F32;
  double init = 0;
};

template <class Acc, ReduceOp K> struct Combine {
  __device__ __forceinline__ static Acc identity() {
    if constexpr (K == ReduceOp::Sum)
      return Acc(0);
    else if constexpr (K == ReduceOp::Prod)
      return Acc(1);
    else if constexpr (K == ReduceOp::Max)
      return -infinity<Acc>();
    else
      return infinity<Acc>();
  }
  __device__ __forceinline__ static Acc apply(Acc x, Acc y) {
    if constexpr (K == ReduceOp::Sum)
      return x + y;
    else if constexpr (K == ReduceOp::Prod)
      return x * y;
    else if constexpr (K == ReduceOp::Max)
      return isNaN(x) || isNaN(y) ? quietNaN<Acc>() : (x < y ? y : x);
    else
      return isNaN(x) || isNaN(y) ? quietNaN<Acc>() : (y < x ? y : x);
  }
};

/// The value at position p, or false when an index is out of range.
template <class Acc, bool Pair>
__device__ __forceinline__ bool positionValue(const SegmentArgs &a, int64_t p, Acc &value) {
  int64_t i = a.indexA[p];
  if (i < 0 || i >= a.aCount)
    return false;
  value = loadElement<Acc>(a.a, a.aType, i);
  if constexpr (Pair) {
    int64_t j = a.indexB[p];
    if (j < 0 || j >= a.bCount)
      return false;
    value *= loadElement<Acc>(a.b, a.bType, j);
  }
  return true;
}

/// Combines the G lanes' values (G = 1, 32 or the block of kThreads).
template <class Acc, ReduceOp K, int G> __device__ __forceinline__ Acc groupCombine(Acc v) {
  using C = Combine<Acc, K>;
  if constexpr (G >= 32) {
#pragma unroll
    for (int delta = 16; delta > 0; delta /= 2)
      v = C::apply(v, __shfl_xor_sync(0xffffffffu, v, delta));
  }
  if constexpr (G == kThreads) {
    __shared__ Acc partial[kThreads / 32];
    int warp = threadIdx.x / 32;
    if (threadIdx.x % 32 == 0)
      partial[warp] = v;
    __syncthreads();
    v = C::identity();
    for (int w = 0; w < kThreads / 32; ++w)
      v = C::apply(v, partial[w]);
    __syncthreads(); // partial is reused by the next segment
  }
  return v;
}

/// One group of G threads per segment, grid-stride over segments.
template <class Acc, ReduceOp K, int G, bool Pair>
__global__ void __launch_bounds__(kThreads) segmentKernel(SegmentArgs a) {
  using C = Combine<Acc, K>;
  const int lane = threadIdx.x % G;
  const int64_t group = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / G;
  const int64_t groups = static_cast<int64_t>(gridDim.x) * blockDim.x / G;
  for (int64_t o = group; o < a.count; o += groups) {
    int64_t begin = a.offsets[o] > 0 ? a.offsets[o] : 0;
    int64_t end = a.offsets[o + 1] < a.positions ? a.offsets[o + 1] : a.positions;
    Acc acc = C::identity();
    for (int64_t p = begin + lane; p < end; p += G) {
      Acc value;
      if (positionValue<Acc, Pair>(a, p, value))
        acc = C::apply(acc, value);
    }
    acc = groupCombine<Acc, K, G>(acc);
    if (lane == 0)
      storeElement<Acc>(a.out, a.outType, o, C::apply(static_cast<Acc>(a.init), acc));
  }
}

template <class Acc, ReduceOp K, bool Pair>
void launchSegments(const SegmentArgs &a, int gpu, cudaStream_t stream) {
  // Threads per segment from the mean segment length.
  int64_t mean = a.positions / std::max<int64_t>(a.count, 1);
  if (mean >= 512) {
    segmentKernel<Acc, K, kThreads, Pair>
        <<<gridFor(gpu, a.count * kThreads, 8), kThreads, 0, stream>>>(a);
  } else if (mean >= 16) {
    segmentKernel<Acc, K, 32, Pair><<<gridFor(gpu, a.count * 32, 8), kThreads, 0, stream>>>(a);
  } else {
    segmentKernel<Acc, K, 1, Pair><<<gridFor(gpu, a.count, 8), kThreads, 0, stream>>>(a);
  }
  SC_LAUNCHED("segmentKernel");
}

template <class Acc, bool Pair>
void launchSegmentsOf(ReduceOp kind, const SegmentArgs &a, int gpu, cudaStream_t stream) {
  switch (kind) {
  case ReduceOp::Sum:
    return launchSegments<Acc, ReduceOp::Sum, Pair>(a, gpu, stream);
  case ReduceOp::Prod:
    return launchSegments<Acc, ReduceOp::Prod, Pair>(a, gpu, stream);
  case ReduceOp::Max:
    return launchSegments<Acc, ReduceOp::Max, Pair>(a, gpu, stream);
  case ReduceOp::Min:
    return launchSegments<Acc, ReduceOp::Min, Pair>(a, gpu, stream);
  }
}

void checkSource(const DeviceArray &source, const DeviceArray &out, const char *what) {
  if (source.gpu != out.gpu)
    badArgument(std::string(what) + " is on another GPU than the output");
}

/// The arguments of segments writing `out` from `offsets`, reading `a` at
/// `indexA` over `positions` entries (a pair dot adds its b side).
SegmentArgs segmentArgs(const DeviceArray &offsets, int64_t positions, const DeviceArray &a,
                        const DeviceArray &indexA, double init, const DeviceArray &out) {
  SegmentArgs s;
  s.offsets = static_cast<const int64_t *>(offsets.ptr());
  s.count = out.count;
  s.positions = positions;
  s.a = a.ptr();
  s.aType = a.type;
  s.aCount = a.count;
  s.indexA = static_cast<const int64_t *>(indexA.ptr());
  s.out = out.ptr();
  s.outType = out.type;
  s.init = init;
  return s;
}

/// Runs the segments on `gpu` in float when the output is a float type and
/// no input is F64, else in double.
template <bool Pair>
void launchSegmentsOn(ReduceOp kind, const SegmentArgs &s, bool anyF64, int gpu, Stream stream) {
  DeviceGuard guard(gpu);
  if (isFloatType(s.outType) && !anyF64)
    launchSegmentsOf<float, Pair>(kind, s, gpu, cudaStreamOf(stream));
  else
    launchSegmentsOf<double, Pair>(kind, s, gpu, cudaStreamOf(stream));
}

} // namespace

void launchSegmentReduce(ReduceOp kind, double init, const DeviceArray &in,
                         const DeviceArray &offsets, const DeviceArray &indices,
                         const DeviceArray &out, Stream stream) {
  checkSource(in, out, "launchSegmentReduce: the input");
  requireIndices(offsets, out.gpu, out.count + 1, "launchSegmentReduce: offsets");
  requireIndices(indices, out.gpu, 0, "launchSegmentReduce: indices");
  if (out.count == 0)
    return;
  // An empty input contributes nothing.
  SegmentArgs s = segmentArgs(offsets, in.count > 0 ? indices.count : 0, in, indices, init, out);
  launchSegmentsOn<false>(kind, s, in.type == ElementType::F64, out.gpu, stream);
}

void launchPairDot(const DeviceArray &a, const DeviceArray &b, const DeviceArray &offsets,
                   const DeviceArray &pairA, const DeviceArray &pairB, double init,
                   const DeviceArray &out, Stream stream) {
  checkSource(a, out, "launchPairDot: a");
  checkSource(b, out, "launchPairDot: b");
  requireIndices(offsets, out.gpu, out.count + 1, "launchPairDot: offsets");
  requireIndices(pairA, out.gpu, 0, "launchPairDot: pairA");
  requireIndices(pairB, out.gpu, pairA.count, "launchPairDot: pairB");
  if (out.count == 0)
    return;
  SegmentArgs s =
      segmentArgs(offsets, a.count > 0 && b.count > 0 ? pairA.count : 0, a, pairA, init, out);
  s.b = b.ptr();
  s.bType = b.type;
  s.bCount = b.count;
  s.indexB = static_cast<const int64_t *>(pairB.ptr());
  bool anyF64 = a.type == ElementType::F64 || b.type == ElementType::F64;
  launchSegmentsOn<true>(ReduceOp::Sum, s, anyF64, out.gpu, stream);
}

} // namespace shardcheck::gpu
