// The CUDA compute layer of the GPU backend; see DeviceOps.h.
//
// Layout of this file:
// 1. error checks, host-side element conversion, device guard;
// 2. arrays and streams;
// 3. device element loads/stores and the op codes' math (OpCodes.h);
// 4. pointwise kernels: a generic one (any types, gathers, scalars) and a
//    vectorized fast one (same-type float arrays, 16-byte accesses);
// 5. gather, segment reductions and pair dots;
// 6. cuBLAS matrix products and the handle cache.
#include "executor/gpu/DeviceOps.h"
#include "executor/gpu/OpCodes.h"

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>
#include <type_traits>
#include <utility>

namespace shardcheck::gpu {

// ---------------------------------------------------------------------------
// 1. Errors, host conversion, device guard
// ---------------------------------------------------------------------------

namespace {

[[noreturn]] void throwGpuError(const char *call, const char *file, int line, const char *name,
                                const char *what) {
  throw GpuError(std::string(file) + ":" + std::to_string(line) + ": " + call + ": " + name + ": " +
                 what);
}

void checkCuda(cudaError_t e, const char *call, const char *file, int line) {
  if (e == cudaSuccess)
    return;
  cudaGetLastError(); // reported here: clear it so later launch checks don't see it again
  throwGpuError(call, file, line, cudaGetErrorName(e), cudaGetErrorString(e));
}

void checkCublas(cublasStatus_t s, const char *call, const char *file, int line) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throwGpuError(call, file, line, "cuBLAS", cublasGetStatusString(s));
}

} // namespace

#define SC_CUDA(call) checkCuda((call), #call, __FILE__, __LINE__)
#define SC_CUBLAS(call) checkCublas((call), #call, __FILE__, __LINE__)
/// After a kernel launch: the launch's own error (bad configuration, no
/// kernel image for the device, ...).
#define SC_LAUNCHED(kernel) checkCuda(cudaGetLastError(), "launch of " kernel, __FILE__, __LINE__)

namespace {

[[noreturn]] void badArgument(const std::string &what) {
  throw std::invalid_argument("shardcheck::gpu: " + what);
}

/// An already rounded double as an int64 (2^63 saturates to INT64_MAX).
int64_t toInt64Bits(double r) {
  if (r >= 9223372036854775808.0)
    return INT64_MAX;
  return static_cast<int64_t>(r);
}

/// The binary16 bits of `r`, a value F16 represents exactly (or inf/NaN).
uint16_t halfBits(double r) {
  uint16_t sign = std::signbit(r) ? 0x8000 : 0;
  double a = std::fabs(r);
  if (std::isnan(r))
    return sign | 0x7E00;
  if (std::isinf(r))
    return sign | 0x7C00;
  if (a == 0.0)
    return sign;
  int e = 0;
  std::frexp(a, &e); // a in [2^(e-1), 2^e)
  if (e - 1 < -14)   // subnormal: a multiple of 2^-24
    return sign | static_cast<uint16_t>(std::ldexp(a, 24));
  auto mantissa = static_cast<uint16_t>(std::ldexp(a, -(e - 1)) * 1024.0 - 1024.0);
  return sign | static_cast<uint16_t>((e - 1 + 15) << 10) | mantissa;
}

double halfValue(uint16_t bits) {
  int exponent = (bits >> 10) & 0x1F;
  int mantissa = bits & 0x3FF;
  double magnitude;
  if (exponent == 0)
    magnitude = std::ldexp(mantissa, -24);
  else if (exponent == 31)
    magnitude = mantissa ? std::numeric_limits<double>::quiet_NaN()
                         : std::numeric_limits<double>::infinity();
  else
    magnitude = std::ldexp(1024 + mantissa, exponent - 25);
  return (bits & 0x8000) ? -magnitude : magnitude;
}

/// The bfloat16 bits of `r`, a value BF16 represents exactly (or inf/NaN).
uint16_t bfloatBits(double r) {
  if (std::isnan(r))
    return std::signbit(r) ? 0xFFC0 : 0x7FC0;
  float f = static_cast<float>(r); // exact
  uint32_t u = 0;
  std::memcpy(&u, &f, 4);
  return static_cast<uint16_t>(u >> 16);
}

double bfloatValue(uint16_t bits) {
  uint32_t u = static_cast<uint32_t>(bits) << 16;
  float f = 0;
  std::memcpy(&f, &u, 4);
  return f;
}

/// Writes roundToElementType(v, t) at `dst` in t's encoding.
void encodeElement(double v, ElementType t, unsigned char *dst) {
  double r = roundToElementType(v, t);
  auto put = [dst](auto x) { std::memcpy(dst, &x, sizeof(x)); };
  switch (t) {
  case ElementType::F64:
    put(r);
    break;
  case ElementType::F32:
    put(static_cast<float>(r));
    break;
  case ElementType::F16:
    put(halfBits(r));
    break;
  case ElementType::BF16:
    put(bfloatBits(r));
    break;
  case ElementType::I64:
    put(toInt64Bits(r));
    break;
  case ElementType::I32:
    put(static_cast<int32_t>(r));
    break;
  case ElementType::I8:
    put(static_cast<int8_t>(r));
    break;
  case ElementType::U8:
    put(static_cast<uint8_t>(r));
    break;
  }
}

/// The value of the element encoded at `src`.
double decodeElement(ElementType t, const unsigned char *src) {
  auto get = [src](auto x) {
    std::memcpy(&x, src, sizeof(x));
    return x;
  };
  switch (t) {
  case ElementType::F64:
    return get(double{});
  case ElementType::F32:
    return get(float{});
  case ElementType::F16:
    return halfValue(get(uint16_t{}));
  case ElementType::BF16:
    return bfloatValue(get(uint16_t{}));
  case ElementType::I64:
    return static_cast<double>(get(int64_t{}));
  case ElementType::I32:
    return get(int32_t{});
  case ElementType::I8:
    return get(int8_t{});
  case ElementType::U8:
    return get(uint8_t{});
  }
  return 0;
}

/// Makes `gpu` current for its lifetime, restoring the previous device.
class DeviceGuard {
public:
  explicit DeviceGuard(int gpu) {
    SC_CUDA(cudaGetDevice(&previous_));
    if (previous_ != gpu)
      SC_CUDA(cudaSetDevice(gpu));
  }
  ~DeviceGuard() { cudaSetDevice(previous_); }
  DeviceGuard(const DeviceGuard &) = delete;
  DeviceGuard &operator=(const DeviceGuard &) = delete;

private:
  int previous_ = 0;
};

/// Multiprocessors of `gpu` (cached).
int multiprocessors(int gpu) {
  static std::mutex mutex;
  static std::map<int, int> cache;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = cache.find(gpu);
  if (it != cache.end())
    return it->second;
  int count = 0;
  SC_CUDA(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, gpu));
  cache[gpu] = std::max(count, 1);
  return cache[gpu];
}

cudaStream_t cudaStreamOf(Stream s) {
  return static_cast<cudaStream_t>(s);
}

bool isFloatType(ElementType t) {
  return t == ElementType::F32 || t == ElementType::F16 || t == ElementType::BF16;
}

bool isIntType(ElementType t) {
  return t == ElementType::I64 || t == ElementType::I32 || t == ElementType::I8;
}

void requireIndices(const DeviceArray &a, int gpu, int64_t atLeast, const char *what) {
  if (a.type != ElementType::I64)
    badArgument(std::string(what) + " must be an I64 array");
  if (a.gpu != gpu)
    badArgument(std::string(what) + " is on another GPU than the output");
  if (a.count < atLeast)
    badArgument(std::string(what) + " has " + std::to_string(a.count) + " elements, needs " +
                std::to_string(atLeast));
}

} // namespace

int deviceCount() noexcept {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError(); // clear the (non-sticky) error
    return 0;
  }
  return count;
}

// ---------------------------------------------------------------------------
// 2. Arrays and streams
// ---------------------------------------------------------------------------

DeviceArray allocateArray(int gpu, ElementType type, int64_t count) {
  if (count < 0)
    badArgument("negative element count " + std::to_string(count));
  DeviceArray array{gpu, type, count, nullptr};
  if (count == 0)
    return array;
  DeviceGuard guard(gpu);
  void *p = nullptr;
  SC_CUDA(cudaMalloc(&p, array.bytes()));
  // Owned from here on: the deleter frees it on its GPU whatever happens next.
  array.data = std::shared_ptr<void>(p, [gpu](void *q) {
    int previous = 0;
    cudaGetDevice(&previous);
    cudaSetDevice(gpu);
    cudaFree(q);
    cudaSetDevice(previous);
  });
  SC_CUDA(cudaMemsetAsync(p, 0, array.bytes(), nullptr));
  SC_CUDA(cudaStreamSynchronize(nullptr));
  return array;
}

void uploadArray(const DeviceArray &array, const std::vector<double> &values, Stream stream) {
  if (static_cast<int64_t>(values.size()) != array.count)
    badArgument("uploadArray: " + std::to_string(values.size()) + " values for " +
                std::to_string(array.count) + " elements");
  if (array.count == 0)
    return;
  size_t size = elementSize(array.type);
  std::vector<unsigned char> bytes(array.bytes());
  for (size_t i = 0; i < values.size(); ++i)
    encodeElement(values[i], array.type, bytes.data() + i * size);
  DeviceGuard guard(array.gpu);
  SC_CUDA(cudaMemcpyAsync(array.ptr(), bytes.data(), bytes.size(), cudaMemcpyHostToDevice,
                          cudaStreamOf(stream)));
  SC_CUDA(cudaStreamSynchronize(cudaStreamOf(stream)));
}

std::vector<double> downloadArray(const DeviceArray &array, Stream stream) {
  std::vector<double> values(static_cast<size_t>(array.count));
  if (array.count == 0)
    return values;
  std::vector<unsigned char> bytes(array.bytes());
  DeviceGuard guard(array.gpu);
  SC_CUDA(cudaMemcpyAsync(bytes.data(), array.ptr(), bytes.size(), cudaMemcpyDeviceToHost,
                          cudaStreamOf(stream)));
  SC_CUDA(cudaStreamSynchronize(cudaStreamOf(stream)));
  size_t size = elementSize(array.type);
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = decodeElement(array.type, bytes.data() + i * size);
  return values;
}

DeviceArray uploadIndices(int gpu, const std::vector<int64_t> &indices) {
  DeviceArray array = allocateArray(gpu, ElementType::I64, static_cast<int64_t>(indices.size()));
  if (indices.empty())
    return array;
  DeviceGuard guard(gpu);
  SC_CUDA(cudaMemcpy(array.ptr(), indices.data(), array.bytes(), cudaMemcpyHostToDevice));
  return array;
}

Stream createStream(int gpu) {
  DeviceGuard guard(gpu);
  cudaStream_t s = nullptr;
  SC_CUDA(cudaStreamCreate(&s));
  return s;
}

void synchronize(int gpu, Stream stream) {
  DeviceGuard guard(gpu);
  SC_CUDA(cudaStreamSynchronize(cudaStreamOf(stream)));
}

namespace {
void releaseHandle(int gpu, Stream stream); // section 6
} // namespace

void destroyStream(int gpu, Stream stream) {
  releaseHandle(gpu, stream);
  if (!stream)
    return;
  DeviceGuard guard(gpu);
  SC_CUDA(cudaStreamDestroy(cudaStreamOf(stream)));
}

// ---------------------------------------------------------------------------
// 3. Device loads, stores and op math
// ---------------------------------------------------------------------------

namespace {

template <class T> __device__ __forceinline__ T quietNaN() {
  if constexpr (std::is_same_v<T, float>)
    return __int_as_float(0x7fc00000);
  else
    return __longlong_as_double(0x7ff8000000000000LL);
}

template <class T> __device__ __forceinline__ T infinity() {
  if constexpr (std::is_same_v<T, float>)
    return __int_as_float(0x7f800000);
  else
    return __longlong_as_double(0x7ff0000000000000LL);
}

/// The range of the integer element types, usable in device code.
template <class I> struct IntRange;
template <> struct IntRange<int64_t> {
  static constexpr int64_t kMin = INT64_MIN, kMax = INT64_MAX;
};
template <> struct IntRange<int32_t> {
  static constexpr int64_t kMin = INT32_MIN, kMax = INT32_MAX;
};
template <> struct IntRange<int8_t> { static constexpr int64_t kMin = INT8_MIN, kMax = INT8_MAX; };

/// Truncation toward zero saturated to I's range; NaN gives 0.
template <class I> __device__ __forceinline__ I saturateFloating(double v) {
  if (v != v)
    return 0;
  // The exact bounds: I's max + 1 and I's min are powers of two.
  const double lower = static_cast<double>(IntRange<I>::kMin);
  if (v >= -lower)
    return static_cast<I>(IntRange<I>::kMax);
  if (v <= lower)
    return static_cast<I>(IntRange<I>::kMin);
  return static_cast<I>(v);
}

template <class I> __device__ __forceinline__ I saturateInt(int64_t v) {
  return static_cast<I>(v > IntRange<I>::kMax ? IntRange<I>::kMax
                                              : (v < IntRange<I>::kMin ? IntRange<I>::kMin : v));
}

/// A stored value as compute type D (float, double or int64_t).
template <class D, class S> __device__ __forceinline__ D convertTo(S x) {
  if constexpr (std::is_same_v<D, int64_t> && std::is_floating_point_v<S>)
    return saturateFloating<int64_t>(static_cast<double>(x));
  else
    return static_cast<D>(x);
}

template <class D>
__device__ __forceinline__ D loadElement(const void *p, ElementType t, int64_t i) {
  switch (t) {
  case ElementType::F64:
    return convertTo<D>(static_cast<const double *>(p)[i]);
  case ElementType::F32:
    return convertTo<D>(static_cast<const float *>(p)[i]);
  case ElementType::F16:
    return convertTo<D>(__half2float(static_cast<const __half *>(p)[i]));
  case ElementType::BF16:
    return convertTo<D>(__bfloat162float(static_cast<const __nv_bfloat16 *>(p)[i]));
  case ElementType::I64:
    return convertTo<D>(static_cast<const int64_t *>(p)[i]);
  case ElementType::I32:
    return convertTo<D>(static_cast<const int32_t *>(p)[i]);
  case ElementType::I8:
    return convertTo<D>(static_cast<const int8_t *>(p)[i]);
  case ElementType::U8:
    return convertTo<D>(static_cast<const uint8_t *>(p)[i]);
  }
  return D(0);
}

template <class D> __device__ __forceinline__ __half toHalf(D v) {
  if constexpr (std::is_same_v<D, float>)
    return __float2half_rn(v);
  else
    return __double2half(static_cast<double>(v));
}

template <class D> __device__ __forceinline__ __nv_bfloat16 toBfloat(D v) {
  if constexpr (std::is_same_v<D, float>)
    return __float2bfloat16_rn(v);
  else
    return __double2bfloat16(static_cast<double>(v));
}

template <class I, class D> __device__ __forceinline__ I toInt(D v) {
  if constexpr (std::is_same_v<D, int64_t>)
    return saturateInt<I>(v);
  else
    return saturateFloating<I>(static_cast<double>(v));
}

/// Stores v rounded to t: nearest even for floats, saturating truncation for
/// integers, v != 0 for U8 (bool).
template <class D>
__device__ __forceinline__ void storeElement(void *p, ElementType t, int64_t i, D v) {
  switch (t) {
  case ElementType::F64:
    static_cast<double *>(p)[i] = static_cast<double>(v);
    break;
  case ElementType::F32:
    static_cast<float *>(p)[i] = static_cast<float>(v);
    break;
  case ElementType::F16:
    static_cast<__half *>(p)[i] = toHalf(v);
    break;
  case ElementType::BF16:
    static_cast<__nv_bfloat16 *>(p)[i] = toBfloat(v);
    break;
  case ElementType::I64:
    static_cast<int64_t *>(p)[i] = toInt<int64_t>(v);
    break;
  case ElementType::I32:
    static_cast<int32_t *>(p)[i] = toInt<int32_t>(v);
    break;
  case ElementType::I8:
    static_cast<int8_t *>(p)[i] = toInt<int8_t>(v);
    break;
  case ElementType::U8:
    static_cast<uint8_t *>(p)[i] = v != D(0) ? 1 : 0;
    break;
  }
}

// Float and double overloads of the math functions (m_exp(float) is expf).
#define SC_MATH1(name)                                                                             \
  __device__ __forceinline__ float m_##name(float x) {                                             \
    return ::name##f(x);                                                                           \
  }                                                                                                \
  __device__ __forceinline__ double m_##name(double x) {                                           \
    return ::name(x);                                                                              \
  }
#define SC_MATH2(name)                                                                             \
  __device__ __forceinline__ float m_##name(float x, float y) {                                    \
    return ::name##f(x, y);                                                                        \
  }                                                                                                \
  __device__ __forceinline__ double m_##name(double x, double y) {                                 \
    return ::name(x, y);                                                                           \
  }
SC_MATH1(fabs)
SC_MATH1(exp)
SC_MATH1(exp2)
SC_MATH1(expm1)
SC_MATH1(log)
SC_MATH1(log2)
SC_MATH1(log10)
SC_MATH1(log1p)
SC_MATH1(sqrt)
SC_MATH1(sin)
SC_MATH1(cos)
SC_MATH1(tan)
SC_MATH1(asin)
SC_MATH1(acos)
SC_MATH1(atan)
SC_MATH1(sinh)
SC_MATH1(cosh)
SC_MATH1(tanh)
SC_MATH1(asinh)
SC_MATH1(acosh)
SC_MATH1(atanh)
SC_MATH1(erf)
SC_MATH1(erfc)
SC_MATH1(lgamma)
SC_MATH1(ceil)
SC_MATH1(floor)
SC_MATH1(trunc)
SC_MATH1(rint)
SC_MATH2(fmax)
SC_MATH2(fmin)
SC_MATH2(pow)
SC_MATH2(atan2)
SC_MATH2(fmod)
#undef SC_MATH1
#undef SC_MATH2

template <class T> __device__ __forceinline__ bool isNaN(T x) {
  return x != x;
}

template <class T> __device__ __forceinline__ bool signBit(T x) {
  if constexpr (std::is_same_v<T, float>)
    return __float_as_int(x) < 0;
  else
    return __double_as_longlong(x) < 0;
}

template <class T> __device__ __forceinline__ T truth(bool b) {
  return b ? T(1) : T(0);
}

template <class T> __device__ __forceinline__ T sigmoidOf(T x) {
  return T(1) / (T(1) + m_exp(-x));
}

__device__ __forceinline__ int64_t gcdOf(int64_t a, int64_t b) {
  uint64_t x = a < 0 ? 0 - static_cast<uint64_t>(a) : static_cast<uint64_t>(a);
  uint64_t y = b < 0 ? 0 - static_cast<uint64_t>(b) : static_cast<uint64_t>(b);
  while (y != 0) {
    uint64_t r = x % y;
    x = y;
    y = r;
  }
  return static_cast<int64_t>(x);
}

/// The int64 ops (OpCodes.h's isIntegerBinary). A zero divisor gives 0 (the
/// reference refuses it before any device runs).
__device__ __forceinline__ int64_t intBinary(int code, int64_t a, int64_t b) {
  switch (code) {
  case kBinaryDiv:
    if (b == 0)
      return 0;
    return b == -1 ? static_cast<int64_t>(0 - static_cast<uint64_t>(a)) : a / b;
  case kBinaryMod:
    return b == 0 || b == -1 ? 0 : a % b;
  case kBinaryCeilDiv: {
    if (b == 0)
      return 0;
    int64_t q = b == -1 ? static_cast<int64_t>(0 - static_cast<uint64_t>(a)) : a / b;
    bool inexact = b != -1 && a % b != 0;
    return inexact && (a < 0) == (b < 0) ? q + 1 : q;
  }
  case kBinaryBitAnd:
    return a & b;
  case kBinaryBitOr:
    return a | b;
  case kBinaryBitXor:
    return a ^ b;
  case kBinaryShl:
    return static_cast<int64_t>(static_cast<uint64_t>(a) << (b & 63));
  case kBinaryShr:
    return a >> (b & 63);
  case kBinaryGcd:
    return gcdOf(a, b);
  default:
    return 0;
  }
}

/// UnaryCode `code` of x, computed in T (float or double).
template <class T> __device__ __forceinline__ T unaryMath(int code, T x) {
  switch (code) {
  case kUnaryNeg:
    return -x;
  case kUnaryLogicalNot:
    return truth<T>(x == T(0));
  case kUnaryBitwiseNot:
    return static_cast<T>(~saturateFloating<int64_t>(x));
  case kUnaryAbs:
    return m_fabs(x);
  case kUnaryRelu:
    return x > T(0) || isNaN(x) ? x : T(0);
  case kUnaryExp:
    return m_exp(x);
  case kUnaryExp2:
    return m_exp2(x);
  case kUnaryExpm1:
    return m_expm1(x);
  case kUnaryLog:
    return m_log(x);
  case kUnaryLog2:
    return m_log2(x);
  case kUnaryLog10:
    return m_log10(x);
  case kUnaryLog1p:
    return m_log1p(x);
  case kUnarySqrt:
    return m_sqrt(x);
  case kUnaryRsqrt:
    return T(1) / m_sqrt(x);
  case kUnaryReciprocal:
    return T(1) / x;
  case kUnarySigmoid:
    return sigmoidOf(x);
  case kUnarySilu:
    return x * sigmoidOf(x);
  case kUnaryGelu:
    // x / sqrt(2) as a product with the constant: one multiply instead of a
    // division and a square root per element (the GeLU step of a Megatron
    // MLP is bound by this arithmetic, not by memory).
    return T(0.5) * x * (T(1) + m_erf(x * T(0.70710678118654752440)));
  case kUnarySin:
    return m_sin(x);
  case kUnaryCos:
    return m_cos(x);
  case kUnaryTan:
    return m_tan(x);
  case kUnaryAsin:
    return m_asin(x);
  case kUnaryAcos:
    return m_acos(x);
  case kUnaryAtan:
    return m_atan(x);
  case kUnarySinh:
    return m_sinh(x);
  case kUnaryCosh:
    return m_cosh(x);
  case kUnaryTanh:
    return m_tanh(x);
  case kUnaryAsinh:
    return m_asinh(x);
  case kUnaryAcosh:
    return m_acosh(x);
  case kUnaryAtanh:
    return m_atanh(x);
  case kUnaryErf:
    return m_erf(x);
  case kUnaryErfc:
    return m_erfc(x);
  case kUnaryLgamma:
    return m_lgamma(x);
  case kUnaryCeil:
    return m_ceil(x);
  case kUnaryFloor:
    return m_floor(x);
  case kUnaryTrunc:
    return m_trunc(x);
  case kUnaryFrac:
    return x - m_trunc(x);
  case kUnaryNearbyint:
    return m_rint(x);
  case kUnaryIsnan:
    return truth<T>(isNaN(x));
  case kUnaryIsinf:
    return truth<T>(m_fabs(x) == infinity<T>());
  case kUnaryIsfinite:
    return truth<T>(!isNaN(x) && m_fabs(x) != infinity<T>());
  case kUnarySignbit:
    return truth<T>(signBit(x));
  default:
    return quietNaN<T>();
  }
}

/// BinaryCode `code` of (a, b) in T (float or double), with floating
/// semantics for `/`, `%`, `ceilDiv` (the integral ones run intBinary).
template <class T> __device__ __forceinline__ T binaryMath(int code, T a, T b) {
  switch (code) {
  case kBinaryAdd:
    return a + b;
  case kBinarySub:
    return a - b;
  case kBinaryMul:
    return a * b;
  case kBinaryTrueDiv:
  case kBinaryDiv:
    return a / b;
  case kBinaryMod:
    return m_fmod(a, b);
  case kBinaryCeilDiv:
    return m_ceil(a / b);
  case kBinaryMax:
    return isNaN(a) || isNaN(b) ? quietNaN<T>() : (a < b ? b : a);
  case kBinaryMin:
    return isNaN(a) || isNaN(b) ? quietNaN<T>() : (b < a ? b : a);
  case kBinaryFmax:
    return m_fmax(a, b);
  case kBinaryFmin:
    return m_fmin(a, b);
  case kBinaryPow:
    return m_pow(a, b);
  case kBinaryAtan2:
    return m_atan2(a, b);
  case kBinaryRemainder: {
    T r = m_fmod(a, b);
    return r != T(0) && (r < T(0)) != (b < T(0)) ? r + b : r;
  }
  case kBinaryNextafter: // in double, as the reference: nextafterf(inf, 0) would be FLT_MAX
    return static_cast<T>(::nextafter(static_cast<double>(a), static_cast<double>(b)));
  case kBinaryEq:
    return truth<T>(a == b);
  case kBinaryNe:
    return truth<T>(a != b);
  case kBinaryLt:
    return truth<T>(a < b);
  case kBinaryLe:
    return truth<T>(a <= b);
  case kBinaryGt:
    return truth<T>(a > b);
  case kBinaryGe:
    return truth<T>(a >= b);
  case kBinaryLogicalAnd:
    return truth<T>(a != T(0) && b != T(0));
  case kBinaryLogicalOr:
    return truth<T>(a != T(0) || b != T(0));
  default: // the bitwise ops, on int64(a), int64(b)
    return static_cast<T>(
        intBinary(code, saturateFloating<int64_t>(a), saturateFloating<int64_t>(b)));
  }
}

/// TernaryCode `code` of (x, y, z) in T, as std::min/std::max order them.
template <class T> __device__ __forceinline__ T ternaryMath(int code, T x, T y, T z) {
  switch (code) {
  case kTernaryClamp: {
    T lower = x < y ? y : x; // std::max(x, lo)
    return z < lower ? z : lower;
  }
  case kTernaryLerp:
    return x + z * (y - x);
  case kTernaryThreshold:
    return x <= y ? z : x;
  default:
    return quietNaN<T>();
  }
}

// ---------------------------------------------------------------------------
// 4. Pointwise kernels
// ---------------------------------------------------------------------------

constexpr int kThreads = 256;

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

/// Blocks for a grid-stride loop over `work` thread-items, at most
/// `blocksPerSm` per multiprocessor.
unsigned gridFor(int gpu, int64_t work, int blocksPerSm) {
  int64_t needed = (work + kThreads - 1) / kThreads;
  int64_t cap = static_cast<int64_t>(multiprocessors(gpu)) * blocksPerSm;
  return static_cast<unsigned>(std::clamp<int64_t>(needed, 1, cap));
}

// The fast path: same-type F32/F16/BF16 arrays (or scalars), 16-byte
// accesses, float math, the op a compile-time constant.

template <class S> __device__ __forceinline__ float toFloat(S x) {
  if constexpr (std::is_same_v<S, float>)
    return x;
  else if constexpr (std::is_same_v<S, __half>)
    return __half2float(x);
  else
    return __bfloat162float(x);
}

template <class S> __device__ __forceinline__ S fromFloat(float x) {
  if constexpr (std::is_same_v<S, float>)
    return x;
  else if constexpr (std::is_same_v<S, __half>)
    return __float2half_rn(x);
  else
    return __float2bfloat16_rn(x);
}

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
    return __half_as_ushort(__float2half_rn(x));
  else
    return __bfloat16_as_ushort(__float2bfloat16_rn(x));
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

} // namespace

void launchSegmentReduce(ReduceOp kind, double init, const DeviceArray &in,
                         const DeviceArray &offsets, const DeviceArray &indices,
                         const DeviceArray &out, Stream stream) {
  checkSource(in, out, "launchSegmentReduce: the input");
  requireIndices(offsets, out.gpu, out.count + 1, "launchSegmentReduce: offsets");
  requireIndices(indices, out.gpu, 0, "launchSegmentReduce: indices");
  if (out.count == 0)
    return;
  SegmentArgs a;
  a.offsets = static_cast<const int64_t *>(offsets.ptr());
  a.count = out.count;
  a.positions = in.count > 0 ? indices.count : 0; // an empty input contributes nothing
  a.a = in.ptr();
  a.aType = in.type;
  a.aCount = in.count;
  a.indexA = static_cast<const int64_t *>(indices.ptr());
  a.out = out.ptr();
  a.outType = out.type;
  a.init = init;
  DeviceGuard guard(out.gpu);
  if (isFloatType(out.type) && in.type != ElementType::F64)
    launchSegmentsOf<float, false>(kind, a, out.gpu, cudaStreamOf(stream));
  else
    launchSegmentsOf<double, false>(kind, a, out.gpu, cudaStreamOf(stream));
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
  SegmentArgs s;
  s.offsets = static_cast<const int64_t *>(offsets.ptr());
  s.count = out.count;
  s.positions = a.count > 0 && b.count > 0 ? pairA.count : 0;
  s.a = a.ptr();
  s.aType = a.type;
  s.aCount = a.count;
  s.indexA = static_cast<const int64_t *>(pairA.ptr());
  s.b = b.ptr();
  s.bType = b.type;
  s.bCount = b.count;
  s.indexB = static_cast<const int64_t *>(pairB.ptr());
  s.out = out.ptr();
  s.outType = out.type;
  s.init = init;
  DeviceGuard guard(out.gpu);
  bool single = isFloatType(out.type) && a.type != ElementType::F64 && b.type != ElementType::F64;
  if (single)
    launchSegmentsOf<float, true>(ReduceOp::Sum, s, out.gpu, cudaStreamOf(stream));
  else
    launchSegmentsOf<double, true>(ReduceOp::Sum, s, out.gpu, cudaStreamOf(stream));
}

// ---------------------------------------------------------------------------
// 6. cuBLAS
// ---------------------------------------------------------------------------

namespace {

std::mutex &handleMutex() {
  static std::mutex mutex;
  return mutex;
}

std::map<std::pair<int, Stream>, cublasHandle_t> &handles() {
  static std::map<std::pair<int, Stream>, cublasHandle_t> map;
  return map;
}

/// Each handle's workspace (device memory, freed with the handle).
std::map<cublasHandle_t, void *> &workspaces() {
  static std::map<cublasHandle_t, void *> map;
  return map;
}

/// cuBLAS's recommended workspace (cublasSetWorkspace): 32 MiB from Hopper
/// on, 4 MiB before. Without one, cuBLAS may pass over kernels that need it.
size_t workspaceBytes(int gpu) {
  int major = 0;
  SC_CUDA(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, gpu));
  return (major >= 9 ? 32u : 4u) << 20;
}

void destroyHandle(cublasHandle_t handle) {
  cublasDestroy(handle);
  if (auto it = workspaces().find(handle); it != workspaces().end()) {
    cudaFree(it->second);
    workspaces().erase(it);
  }
}

/// The cached handle of (gpu, stream), made on first use.
cublasHandle_t handleFor(int gpu, Stream stream) {
  std::lock_guard<std::mutex> lock(handleMutex());
  auto key = std::make_pair(gpu, stream);
  if (auto it = handles().find(key); it != handles().end())
    return it->second;
  DeviceGuard guard(gpu);
  cublasHandle_t handle = nullptr;
  SC_CUBLAS(cublasCreate(&handle));
  size_t bytes = workspaceBytes(gpu);
  void *workspace = nullptr;
  cudaError_t allocated = cudaMalloc(&workspace, bytes);
  if (allocated != cudaSuccess) {
    cublasDestroy(handle);
    SC_CUDA(allocated);
  }
  workspaces()[handle] = workspace;
  cublasStatus_t set = cublasSetStream(handle, cudaStreamOf(stream));
  if (set == CUBLAS_STATUS_SUCCESS)
    set = cublasSetWorkspace(handle, workspace, bytes);
  if (set != CUBLAS_STATUS_SUCCESS) {
    destroyHandle(handle);
    SC_CUBLAS(set);
  }
  handles()[key] = handle;
  return handle;
}

void releaseHandle(int gpu, Stream stream) {
  std::lock_guard<std::mutex> lock(handleMutex());
  auto it = handles().find(std::make_pair(gpu, stream));
  if (it == handles().end())
    return;
  cublasHandle_t handle = it->second;
  handles().erase(it);
  DeviceGuard guard(gpu);
  destroyHandle(handle);
}

cudaDataType_t cublasTypeOf(ElementType t) {
  switch (t) {
  case ElementType::F64:
    return CUDA_R_64F;
  case ElementType::F32:
    return CUDA_R_32F;
  case ElementType::F16:
    return CUDA_R_16F;
  case ElementType::BF16:
    return CUDA_R_16BF;
  default:
    badArgument(std::string("gemmRowMajor: no matrix product for ") + elementTypeName(t));
  }
}

/// Elements a batched operand spans: (batch - 1) * stride + rows * cols.
int64_t spanOf(int64_t batch, int64_t stride, int64_t rows, int64_t cols) {
  if (batch == 0 || rows * cols == 0)
    return 0;
  return (batch - 1) * stride + rows * cols;
}

void checkGemm(int gpu, const DeviceArray &a, const DeviceArray &b, const DeviceArray &c,
               int64_t batch, int64_t m, int64_t n, int64_t k, int64_t strideA, int64_t strideB,
               int64_t strideC) {
  if (a.type != b.type || a.type != c.type)
    badArgument("gemmRowMajor: a, b and c must have one element type");
  cublasTypeOf(a.type);
  if (a.gpu != gpu || b.gpu != gpu || c.gpu != gpu)
    badArgument("gemmRowMajor: a, b and c must be on GPU " + std::to_string(gpu));
  for (int64_t v : {batch, m, n, k, strideA, strideB, strideC})
    if (v < 0)
      badArgument("gemmRowMajor: negative size or stride");
  for (int64_t v : {batch, m, n, k})
    if (v > INT_MAX)
      badArgument("gemmRowMajor: a size exceeds cuBLAS's int range");
  if (batch > 1 && m * n > 0 && strideC < m * n)
    badArgument("gemmRowMajor: batches of C overlap (strideC < m * n)");
  if (a.count < spanOf(batch, strideA, m, k) || b.count < spanOf(batch, strideB, k, n) ||
      c.count < spanOf(batch, strideC, m, n))
    badArgument("gemmRowMajor: an operand is smaller than its batches span");
}

} // namespace

void gemmRowMajor(int gpu, Stream stream, const DeviceArray &a, const DeviceArray &b,
                  const DeviceArray &c, int64_t batch, int64_t m, int64_t n, int64_t k,
                  bool transposeB, int64_t strideA, int64_t strideB, int64_t strideC) {
  checkGemm(gpu, a, b, c, batch, m, n, k, strideA, strideB, strideC);
  if (batch == 0 || m == 0 || n == 0)
    return;
  DeviceGuard guard(gpu);
  size_t size = elementSize(c.type);
  if (k == 0) { // an empty sum: C = 0
    for (int64_t i = 0; i < batch; ++i)
      SC_CUDA(cudaMemsetAsync(static_cast<char *>(c.ptr()) + i * strideC * size, 0, m * n * size,
                              cudaStreamOf(stream)));
    return;
  }
  // Row-major C = A x op(B) is column-major C^T = op(B)^T x A^T: B's
  // row-major storage read column-major is B^T, A's is A^T.
  cublasHandle_t handle = handleFor(gpu, stream);
  cudaDataType_t type = cublasTypeOf(c.type);
  bool f64 = c.type == ElementType::F64;
  float alphaF = 1, betaF = 0;
  double alphaD = 1, betaD = 0;
  const void *alpha = f64 ? static_cast<const void *>(&alphaD) : &alphaF;
  const void *beta = f64 ? static_cast<const void *>(&betaD) : &betaF;
  cublasComputeType_t compute = f64 ? CUBLAS_COMPUTE_64F : CUBLAS_COMPUTE_32F;
  if (batch == 1) { // cublasGemmEx: the call PyTorch's linear and matmul make.
    SC_CUBLAS(cublasGemmEx(handle, transposeB ? CUBLAS_OP_T : CUBLAS_OP_N, CUBLAS_OP_N,
                           static_cast<int>(n), static_cast<int>(m), static_cast<int>(k), alpha,
                           b.ptr(), type, static_cast<int>(transposeB ? k : n), a.ptr(), type,
                           static_cast<int>(k), beta, c.ptr(), type, static_cast<int>(n), compute,
                           CUBLAS_GEMM_DEFAULT));
    return;
  }
  SC_CUBLAS(cublasGemmStridedBatchedEx(
      handle, transposeB ? CUBLAS_OP_T : CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(n),
      static_cast<int>(m), static_cast<int>(k), alpha, b.ptr(), type,
      static_cast<int>(transposeB ? k : n), strideB, a.ptr(), type, static_cast<int>(k), strideA,
      beta, c.ptr(), type, static_cast<int>(n), strideC, static_cast<int>(batch), compute,
      CUBLAS_GEMM_DEFAULT));
}

void releaseGpuResources() {
  std::lock_guard<std::mutex> lock(handleMutex());
  for (auto &[key, handle] : handles()) {
    int previous = 0;
    cudaGetDevice(&previous);
    cudaSetDevice(key.first);
    destroyHandle(handle);
    cudaSetDevice(previous);
  }
  handles().clear();
}

} // namespace shardcheck::gpu
