// The CUDA compute layer's own helpers (internal to executor/gpu/, included
// by its .cu files only): error checks that throw GpuError, host-side
// element conversion, the device guard, device element loads and stores and
// the op codes' math (OpCodes.h), and the launch geometry the kernels share.
//
// This file launches nothing; DeviceArrays.cu, DevicePointwise.cu,
// DeviceReductions.cu and DeviceGemm.cu do.
#pragma once

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

/// Destroys the cuBLAS handle cached for (gpu, stream), if any
/// (DeviceGemm.cu).
void releaseHandle(int gpu, Stream stream);

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

/// x (float, __half or __nv_bfloat16) as float, exactly.
template <class S> __device__ __forceinline__ float toFloat(S x) {
  if constexpr (std::is_same_v<S, float>)
    return x;
  else if constexpr (std::is_same_v<S, __half>)
    return __half2float(x);
  else
    return __bfloat162float(x);
}

/// v (float, double or int64_t) rounded to S (float, __half or
/// __nv_bfloat16), nearest even; a float rounds once, never through double.
template <class S, class D> __device__ __forceinline__ S fromFloat(D v) {
  if constexpr (std::is_same_v<S, float>)
    return static_cast<float>(v);
  else if constexpr (std::is_same_v<S, __half> && std::is_same_v<D, float>)
    return __float2half_rn(v);
  else if constexpr (std::is_same_v<S, __half>)
    return __double2half(static_cast<double>(v));
  else if constexpr (std::is_same_v<D, float>)
    return __float2bfloat16_rn(v);
  else
    return __double2bfloat16(static_cast<double>(v));
}

template <class D>
__device__ __forceinline__ D loadElement(const void *p, ElementType t, int64_t i) {
  switch (t) {
  case ElementType::F64:
    return convertTo<D>(static_cast<const double *>(p)[i]);
  case ElementType::F32:
    return convertTo<D>(static_cast<const float *>(p)[i]);
  case ElementType::F16:
    return convertTo<D>(toFloat(static_cast<const __half *>(p)[i]));
  case ElementType::BF16:
    return convertTo<D>(toFloat(static_cast<const __nv_bfloat16 *>(p)[i]));
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
    static_cast<__half *>(p)[i] = fromFloat<__half>(v);
    break;
  case ElementType::BF16:
    static_cast<__nv_bfloat16 *>(p)[i] = fromFloat<__nv_bfloat16>(v);
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

/// The trigonometric and hyperbolic UnaryCodes (kUnarySin to kUnaryAtanh)
/// of x, computed in T.
template <class T> __device__ __forceinline__ T trigonometricMath(int code, T x) {
  switch (code) {
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
  default:
    return quietNaN<T>();
  }
}

/// UnaryCode `code` of x, computed in T (float or double).
template <class T> __device__ __forceinline__ T unaryMath(int code, T x) {
  if (code >= kUnarySin && code <= kUnaryAtanh)
    return trigonometricMath(code, x);
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

constexpr int kThreads = 256;

/// Blocks for a grid-stride loop over `work` thread-items, at most
/// `blocksPerSm` per multiprocessor.
unsigned gridFor(int gpu, int64_t work, int blocksPerSm) {
  int64_t needed = (work + kThreads - 1) / kThreads;
  int64_t cap = static_cast<int64_t>(multiprocessors(gpu)) * blocksPerSm;
  return static_cast<unsigned>(std::clamp<int64_t>(needed, 1, cap));
}

} // namespace

} // namespace shardcheck::gpu
