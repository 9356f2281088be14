// The CUDA compute layer of the GPU backend (executor/gpu/DeviceOps.h,
// executor/gpu/OpCodes.h), checked against the reference's element rules
// (executor/Pointwise.h) and dtype rounding (executor/Tensor.h).
//
// The op-code tables and the host-side rounding are checked everywhere; every
// test that needs a device skips (GTEST_SKIP) when CUDA reports none, so the
// binary passes on machines without a GPU.
#include "executor/Pointwise.h"
#include "executor/Tensor.h"
#include "executor/gpu/DeviceOps.h"
#include "executor/gpu/OpCodes.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <sstream>

using namespace shardcheck;
namespace g = shardcheck::gpu;
using shardcheck::ElementType;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

/// Every element type with the dtype whose rounding it follows.
const std::vector<std::pair<ElementType, DataType>> kTypes = {
    {ElementType::F64, DataType::Double}, {ElementType::F32, DataType::Float},
    {ElementType::F16, DataType::Half},   {ElementType::BF16, DataType::BFloat16},
    {ElementType::I64, DataType::Int64},  {ElementType::I32, DataType::Int32},
    {ElementType::I8, DataType::Int8},    {ElementType::U8, DataType::Bool},
};

const std::vector<std::pair<ElementType, DataType>> kFloatTypes = {
    {ElementType::F64, DataType::Double},
    {ElementType::F32, DataType::Float},
    {ElementType::F16, DataType::Half},
    {ElementType::BF16, DataType::BFloat16},
};

DataType dtypeOf(ElementType t) {
  for (const auto &[type, dtype] : kTypes)
    if (type == t)
      return dtype;
  return DataType::Unknown;
}

/// Values that exercise rounding: ties, subnormals, overflow, saturation.
std::vector<double> roundingProbes() {
  std::vector<double> v = {
      0.0,  -0.0,  1.0,   -1.0,         0.1,           -2.7,    2.5,     -2.5,
      3.5,  127.5, 128.0, -129.0,       255.0,         65504.0, 65520.0, 70000.0,
      1e10, -1e10, 3e38,  4e38,         1e-8,          6e-8,    1e-40,   1e-46,
      kInf, -kInf, kNaN,  2147483647.5, -2147483649.0, 9.3e18,  -9.3e18, std::ldexp(1.0, 63)};
  // Halfway cases and near-halfway cases of F16, BF16 and F32 (a single
  // rounding from double differs from rounding through float here).
  for (int bits : {8, 11, 24}) {
    double tie = 1.0 + std::ldexp(1.0, -bits);
    for (double x : {tie, tie + std::ldexp(1.0, -40), tie - std::ldexp(1.0, -40),
                     1.0 + 3 * std::ldexp(1.0, -bits)})
      for (double s : {1.0, -1.0, 1024.0, std::ldexp(1.0, -20)})
        v.push_back(x * s);
  }
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> mantissa(-1.0, 1.0);
  for (int i = 0; i < 200; ++i)
    v.push_back(std::ldexp(mantissa(rng), static_cast<int>(rng() % 80) - 40));
  return v;
}

bool sameValue(double a, double b) {
  return (std::isnan(a) && std::isnan(b)) || a == b;
}

/// Tolerance of a computed result (float math, then rounding to the type).
bool closeEnough(double got, double want, ElementType t) {
  if (std::isnan(want) || std::isnan(got) || std::isinf(want) || std::isinf(got))
    return sameValue(got, want);
  double rtol = 0, atol = 0;
  switch (t) {
  case ElementType::F64:
    rtol = 1e-12, atol = 1e-13;
    break;
  case ElementType::F32:
    rtol = 1e-5, atol = 1e-6;
    break;
  case ElementType::F16:
    rtol = 2e-3, atol = 1e-5;
    break;
  case ElementType::BF16:
    rtol = 1e-2, atol = 1e-5;
    break;
  default:
    break; // integers and bool: exact
  }
  return std::fabs(got - want) <= atol + rtol * std::fabs(want);
}

std::string describeValues(const std::vector<double> &inputs) {
  std::ostringstream os;
  os.precision(17);
  for (size_t i = 0; i < inputs.size(); ++i)
    os << (i ? ", " : "") << inputs[i];
  return os.str();
}

/// Host values of `values` rounded to `t`.
std::vector<double> rounded(const std::vector<double> &values, ElementType t) {
  std::vector<double> r;
  for (double v : values)
    r.push_back(roundToDtype(v, dtypeOf(t)));
  return r;
}

// ---------------------------------------------------------------------------
// Host-only tests: op-code tables and rounding (run without a GPU too).
// ---------------------------------------------------------------------------

TEST(GpuOpCodes, EveryReferenceSpellingHasACode) {
  const std::vector<std::string> unary = {
      "-",     "neg",    "!",        "logical_not", "~",          "bitwise_not", "abs",
      "fabs",  "relu",   "exp",      "exp2",        "expm1",      "log",         "log2",
      "log10", "log1p",  "sqrt",     "rsqrt",       "reciprocal", "sigmoid",     "silu",
      "gelu",  "sin",    "cos",      "tan",         "asin",       "acos",        "atan",
      "sinh",  "cosh",   "tanh",     "asinh",       "acosh",      "atanh",       "erf",
      "erfc",  "lgamma", "ceil",     "floor",       "trunc",      "frac",        "nearbyint",
      "isnan", "isinf",  "isfinite", "signbit"};
  const std::vector<std::string> binary = {
      "+",           "add", "-",          "sub",       "*",           "mul", "truediv",    "/",
      "div",         "%",   "fmod",       "mod",       "ceilDiv",     "max", "min",        "fmax",
      "fmin",        "pow", "atan2",      "remainder", "nextafter",   "==",  "!=",         "<",
      "<=",          ">",   ">=",         "&&",        "logical_and", "||",  "logical_or", "&",
      "bitwise_and", "|",   "bitwise_or", "^",         "bitwise_xor", "<<",  "lshift",     ">>",
      "rshift",      "gcd"};
  const std::vector<std::string> ternary = {"clamp", "lerp", "threshold"};
  for (const std::string &s : unary)
    for (const std::string &spelling : {s, s + "f"}) {
      EXPECT_TRUE(unaryRule(spelling).has_value()) << spelling;
      EXPECT_TRUE(g::unaryCode(spelling).has_value()) << spelling;
    }
  for (const std::string &s : binary)
    for (const std::string &spelling : {s, s + "f"})
      for (bool integral : {false, true}) {
        EXPECT_TRUE(binaryRule(spelling, integral).has_value()) << spelling;
        EXPECT_TRUE(g::binaryCode(spelling).has_value()) << spelling;
      }
  for (const std::string &s : ternary)
    for (const std::string &spelling : {s, s + "f"}) {
      EXPECT_TRUE(ternaryRule(spelling).has_value()) << spelling;
      EXPECT_TRUE(g::ternaryCode(spelling).has_value()) << spelling;
    }
  EXPECT_EQ(g::unarySpellings().size(), unary.size());
  EXPECT_EQ(g::binarySpellings().size(), binary.size());
  EXPECT_EQ(g::ternarySpellings().size(), ternary.size());
}

TEST(GpuOpCodes, UnknownSpellingsHaveNoCode) {
  for (const std::string s : {"", "f", "ff", "expff", "reluu", "where", "clamp2", "//", "absf f",
                              "gelu_tanh", "round", "cast"}) {
    EXPECT_EQ(unaryRule(s).has_value(), g::unaryCode(s).has_value()) << s;
    EXPECT_EQ(binaryRule(s, false).has_value(), g::binaryCode(s).has_value()) << s;
    EXPECT_EQ(ternaryRule(s).has_value(), g::ternaryCode(s).has_value()) << s;
    EXPECT_FALSE(g::unaryCode(s).has_value()) << s;
  }
  EXPECT_EQ(*g::unaryCode("expf"), g::kUnaryExp);
  EXPECT_EQ(*g::binaryCode("fmodf"), g::kBinaryMod);
  EXPECT_EQ(*g::binaryCode("ceilDivf"), g::kBinaryCeilDiv);
  EXPECT_EQ(*g::binaryCode("-"), g::kBinarySub);
  EXPECT_EQ(*g::unaryCode("-"), g::kUnaryNeg);
}

TEST(GpuOpCodes, IntegerOpsAreTheReferencesIntegralOnes) {
  EXPECT_TRUE(g::isIntegerUnary(g::kUnaryBitwiseNot));
  EXPECT_FALSE(g::isIntegerUnary(g::kUnaryNeg));
  EXPECT_TRUE(g::isIntegerBinary(g::kBinaryDiv, true));
  EXPECT_FALSE(g::isIntegerBinary(g::kBinaryDiv, false));
  EXPECT_FALSE(g::isIntegerBinary(g::kBinaryTrueDiv, true));
  EXPECT_TRUE(g::isIntegerBinary(g::kBinaryShl, false));
}

TEST(GpuElementTypes, MapDtypes) {
  EXPECT_EQ(shardcheck::elementTypeOf(DataType::Double), ElementType::F64);
  EXPECT_EQ(shardcheck::elementTypeOf(DataType::Float), ElementType::F32);
  EXPECT_EQ(shardcheck::elementTypeOf(DataType::Unknown), ElementType::F32);
  EXPECT_EQ(shardcheck::elementTypeOf(DataType::Half), ElementType::F16);
  EXPECT_EQ(shardcheck::elementTypeOf(DataType::BFloat16), ElementType::BF16);
  EXPECT_EQ(shardcheck::elementTypeOf(DataType::Int64), ElementType::I64);
  EXPECT_EQ(shardcheck::elementTypeOf(DataType::Index), ElementType::I64);
  EXPECT_EQ(shardcheck::elementTypeOf(DataType::Int32), ElementType::I32);
  EXPECT_EQ(shardcheck::elementTypeOf(DataType::Int8), ElementType::I8);
  EXPECT_EQ(shardcheck::elementTypeOf(DataType::Bool), ElementType::U8);
  EXPECT_FALSE(shardcheck::elementTypeOf(DataType::ComplexFloat).has_value());
  EXPECT_FALSE(shardcheck::elementTypeOf(DataType::Float8_e4m3).has_value());
  for (const auto &[type, dtype] : kTypes)
    EXPECT_EQ(static_cast<int>(shardcheck::elementSize(type)), dataTypeSize(dtype))
        << shardcheck::elementTypeName(type);
}

TEST(GpuElementTypes, HostRoundingIsRoundToDtype) {
  for (const auto &[type, dtype] : kTypes)
    for (double v : roundingProbes())
      EXPECT_TRUE(sameValue(shardcheck::roundToElementType(v, type), roundToDtype(v, dtype)))
          << shardcheck::elementTypeName(type) << " of " << v;
}

// ---------------------------------------------------------------------------
// Device tests
// ---------------------------------------------------------------------------

class GpuKernels : public ::testing::Test {
protected:
  void SetUp() override {
    if (g::deviceCount() == 0)
      GTEST_SKIP() << "no CUDA device";
    stream_ = g::createStream(0);
  }
  void TearDown() override {
    if (stream_)
      g::destroyStream(0, stream_);
  }
  static void TearDownTestSuite() {
    if (g::deviceCount() > 0)
      g::releaseGpuResources();
  }

  /// A new array of `t` holding `values` (rounded to t).
  g::DeviceArray upload(ElementType t, const std::vector<double> &values) {
    g::DeviceArray a = g::allocateArray(0, t, static_cast<int64_t>(values.size()));
    g::uploadArray(a, values, stream_);
    return a;
  }

  std::vector<double> download(const g::DeviceArray &a) { return g::downloadArray(a, stream_); }

  /// Runs `op` over `operands` into a new array of `outType` of `n` elements.
  std::vector<double> run(const g::ElementwiseOp &op,
                          const std::vector<g::ElementwiseOperand> &operands, ElementType outType,
                          int64_t n) {
    g::DeviceArray out = g::allocateArray(0, outType, n);
    g::launchElementwise(op, operands, out, stream_);
    return download(out);
  }

  g::Stream stream_ = nullptr;
};

/// Compares element by element, reporting the first mismatches with inputs.
void expectResults(const std::vector<double> &got, const std::vector<double> &want, ElementType t,
                   const std::string &what, const std::function<std::string(size_t)> &inputsOf) {
  ASSERT_EQ(got.size(), want.size()) << what;
  int reported = 0;
  for (size_t i = 0; i < got.size() && reported < 5; ++i)
    if (!closeEnough(got[i], want[i], t)) {
      ADD_FAILURE() << what << " (" << shardcheck::elementTypeName(t) << ") at " << i << " of ("
                    << inputsOf(i) << "): got " << got[i] << ", want " << want[i];
      ++reported;
    }
}

TEST_F(GpuKernels, UploadDownloadRoundTripsRoundLikeRoundToDtype) {
  std::vector<double> probes = roundingProbes();
  for (const auto &[type, dtype] : kTypes) {
    std::vector<double> got = download(upload(type, probes));
    for (size_t i = 0; i < probes.size(); ++i)
      EXPECT_TRUE(sameValue(got[i], roundToDtype(probes[i], dtype)))
          << shardcheck::elementTypeName(type) << " of " << probes[i] << ": got " << got[i];
  }
  g::DeviceArray zeros = g::allocateArray(0, ElementType::BF16, 5);
  EXPECT_EQ(download(zeros), std::vector<double>(5, 0.0));
  g::DeviceArray indices = g::uploadIndices(0, {5, -1, int64_t(1) << 60});
  EXPECT_EQ(download(indices), (std::vector<double>{5, -1, std::ldexp(1.0, 60)}));
  EXPECT_THROW(g::uploadArray(zeros, {1.0}, stream_), std::invalid_argument);
}

/// Inputs for unary ops: signs, zeros, fractions, domain edges, inf, NaN.
const std::vector<double> kUnaryInputs = {-10, -3.7, -2.5, -1,   -0.75, -0.5, -0.1, -0.0,
                                          0,   0.1,  0.3,  0.5,  0.75,  1,    1.5,  2,
                                          2.5, 3.3,  10,   kInf, -kInf, kNaN};

/// Runs every unary code on `type` through the vectorized path (plain
/// arrays) and the generic one (an identity gather).
TEST_F(GpuKernels, UnaryCodesMatchTheReferenceRules) {
  for (const auto &[type, dtype] : kFloatTypes) {
    std::vector<double> x = rounded(kUnaryInputs, type);
    g::DeviceArray in = upload(type, x);
    std::vector<int64_t> identity(x.size());
    for (size_t i = 0; i < x.size(); ++i)
      identity[i] = static_cast<int64_t>(i);
    g::DeviceArray gather = g::uploadIndices(0, identity);
    for (const std::string &spelling : g::unarySpellings()) {
      int code = *g::unaryCode(spelling);
      if (g::isIntegerUnary(code))
        continue;
      UnaryRule rule = *unaryRule(spelling);
      std::vector<double> want;
      for (double v : x)
        want.push_back(roundToDtype(rule(v), dtype));
      g::ElementwiseOp op{g::ElementwiseOp::Kind::Unary, code, false};
      auto inputs = [&](size_t i) { return describeValues({x[i]}); };
      int64_t n = static_cast<int64_t>(x.size());
      expectResults(run(op, {{&in, nullptr, 0}}, type, n), want, type, spelling, inputs);
      expectResults(run(op, {{&in, &gather, 0}}, type, n), want, type, spelling + " gathered",
                    inputs);
    }
  }
}

TEST_F(GpuKernels, PredicatesStoreBoolsAndBitwiseNotIsInteger) {
  std::vector<double> x = kUnaryInputs;
  g::DeviceArray in = upload(ElementType::F32, x);
  int64_t n = static_cast<int64_t>(x.size());
  for (const std::string spelling : {"isnan", "isinf", "isfinite", "signbit", "!"}) {
    UnaryRule rule = *unaryRule(spelling);
    std::vector<double> want;
    for (double v : rounded(x, ElementType::F32))
      want.push_back(roundToDtype(rule(v), DataType::Bool));
    g::ElementwiseOp op{g::ElementwiseOp::Kind::Unary, *g::unaryCode(spelling), true};
    expectResults(run(op, {{&in, nullptr, 0}}, ElementType::U8, n), want, ElementType::U8, spelling,
                  [&](size_t i) { return describeValues({x[i]}); });
  }
  std::vector<double> ints = {0, 1, -1, 5, -128, 127, 1e6, -3e9};
  for (ElementType t : {ElementType::I64, ElementType::I32, ElementType::I8}) {
    std::vector<double> xi = rounded(ints, t);
    g::DeviceArray a = upload(t, xi);
    std::vector<double> want;
    for (double v : xi)
      want.push_back(roundToDtype((*unaryRule("~"))(v), dtypeOf(t)));
    g::ElementwiseOp op{g::ElementwiseOp::Kind::Unary, g::kUnaryBitwiseNot, true};
    expectResults(run(op, {{&a, nullptr, 0}}, t, static_cast<int64_t>(xi.size())), want, t, "~",
                  [&](size_t i) { return describeValues({xi[i]}); });
  }
}

/// Every pair of `values`: a[i] and b[i].
void pairsOf(const std::vector<double> &values, std::vector<double> &a, std::vector<double> &b) {
  for (double x : values)
    for (double y : values) {
      a.push_back(x);
      b.push_back(y);
    }
}

/// The reference of a binary spelling over (a[i], b[i]), rounded to `out`;
/// nullopt where the reference refuses (integer division by zero).
std::vector<std::optional<double>> binaryReference(const std::string &spelling, bool integral,
                                                   const std::vector<double> &a,
                                                   const std::vector<double> &b, DataType out) {
  BinaryRule rule = *binaryRule(spelling, integral);
  std::vector<std::optional<double>> want;
  for (size_t i = 0; i < a.size(); ++i) {
    try {
      want.push_back(roundToDtype(rule(a[i], b[i]), out));
    } catch (const IntegerDivisionByZero &) {
      want.push_back(std::nullopt);
    }
  }
  return want;
}

/// Checks `got` where the reference has a value; where it refuses (a zero
/// integer divisor) the device gives 0.
void expectBinary(const std::vector<double> &got, const std::vector<std::optional<double>> &want,
                  ElementType t, const std::string &what, const std::vector<double> &a,
                  const std::vector<double> &b) {
  std::vector<double> expected;
  for (const auto &w : want)
    expected.push_back(w ? *w : 0.0);
  expectResults(got, expected, t, what, [&](size_t i) { return describeValues({a[i], b[i]}); });
}

TEST_F(GpuKernels, BinaryCodesMatchTheReferenceRulesOnFloats) {
  std::vector<double> values = {-3.7, -2, -1, -0.5, -0.0, 0, 0.5, 1, 2, 3.3, 10, kInf, -kInf, kNaN};
  std::vector<double> a0, b0;
  pairsOf(values, a0, b0);
  for (const auto &[type, dtype] : kFloatTypes) {
    std::vector<double> a = rounded(a0, type), b = rounded(b0, type);
    g::DeviceArray da = upload(type, a), db = upload(type, b);
    int64_t n = static_cast<int64_t>(a.size());
    for (const std::string &spelling : g::binarySpellings()) {
      int code = *g::binaryCode(spelling);
      if (g::isIntegerBinary(code, false))
        continue; // bitwise ops: the integer test below
      g::ElementwiseOp op{g::ElementwiseOp::Kind::Binary, code, false};
      auto want = binaryReference(spelling, false, a, b, dtype);
      expectBinary(run(op, {{&da, nullptr, 0}, {&db, nullptr, 0}}, type, n), want, type, spelling,
                   a, b);
    }
  }
}

TEST_F(GpuKernels, BinaryCodesWithAScalarAndBoolOutputs) {
  std::vector<double> a = rounded({-3.7, -1, -0.0, 0, 0.5, 1, 2.5, kInf, kNaN}, ElementType::F32);
  g::DeviceArray da = upload(ElementType::F32, a);
  int64_t n = static_cast<int64_t>(a.size());
  for (const std::string spelling : {"+", "*", "/", "max", "pow", "remainder", "<"}) {
    for (double scalar : {2.5, -0.0, kNaN}) {
      std::vector<double> b(a.size(), scalar);
      g::ElementwiseOp op{g::ElementwiseOp::Kind::Binary, *g::binaryCode(spelling), false};
      // The scalar first and second, into F32; and a comparison into bool.
      expectBinary(run(op, {{&da, nullptr, 0}, {nullptr, nullptr, scalar}}, ElementType::F32, n),
                   binaryReference(spelling, false, a, b, DataType::Float), ElementType::F32,
                   spelling + " scalar", a, b);
      expectBinary(run(op, {{nullptr, nullptr, scalar}, {&da, nullptr, 0}}, ElementType::F32, n),
                   binaryReference(spelling, false, b, a, DataType::Float), ElementType::F32,
                   "scalar " + spelling, b, a);
    }
  }
  std::vector<double> b = rounded({1, -1, 0, 0, 0.25, 2, 2.5, kInf, 1}, ElementType::F32);
  g::DeviceArray db = upload(ElementType::F32, b);
  for (const std::string spelling : {"==", "!=", "<", "<=", ">", ">=", "&&", "||"}) {
    g::ElementwiseOp op{g::ElementwiseOp::Kind::Binary, *g::binaryCode(spelling), true};
    expectBinary(run(op, {{&da, nullptr, 0}, {&db, nullptr, 0}}, ElementType::U8, n),
                 binaryReference(spelling, true, a, b, DataType::Bool), ElementType::U8,
                 spelling + " into bool", a, b);
  }
}

TEST_F(GpuKernels, IntegerBinaryCodesMatchTheReferenceRules) {
  std::vector<double> values = {-128, -7, -3, -1, 0, 1, 2, 3, 7, 100, 1000};
  std::vector<double> a0, b0;
  pairsOf(values, a0, b0);
  for (ElementType t : {ElementType::I64, ElementType::I32, ElementType::I8}) {
    std::vector<double> a = rounded(a0, t), b = rounded(b0, t);
    g::DeviceArray da = upload(t, a), db = upload(t, b);
    int64_t n = static_cast<int64_t>(a.size());
    for (const std::string &spelling : g::binarySpellings()) {
      int code = *g::binaryCode(spelling);
      if (code == g::kBinaryPow || code == g::kBinaryNextafter || code == g::kBinaryShl ||
          code == g::kBinaryShr)
        continue; // pow overflows int64; nextafter is not an integer op; shifts below
      g::ElementwiseOp op{g::ElementwiseOp::Kind::Binary, code, true};
      auto want = binaryReference(spelling, true, a, b, dtypeOf(t));
      expectBinary(run(op, {{&da, nullptr, 0}, {&db, nullptr, 0}}, t, n), want, t, spelling, a, b);
    }
  }
  // Shifts by 0..7, and the non-integral division ops on integer inputs.
  std::vector<double> a = {-7, -1, 0, 1, 3, 100, -128, 5}, b = {0, 1, 2, 3, 4, 5, 6, 7};
  g::DeviceArray da = upload(ElementType::I64, a), db = upload(ElementType::I64, b);
  for (const std::string spelling : {"<<", ">>", "lshift", "rshift"}) {
    g::ElementwiseOp op{g::ElementwiseOp::Kind::Binary, *g::binaryCode(spelling), true};
    expectBinary(run(op, {{&da, nullptr, 0}, {&db, nullptr, 0}}, ElementType::I64, 8),
                 binaryReference(spelling, true, a, b, DataType::Int64), ElementType::I64, spelling,
                 a, b);
  }
  for (const std::string spelling : {"/", "%", "ceilDiv"}) {
    g::ElementwiseOp op{g::ElementwiseOp::Kind::Binary, *g::binaryCode(spelling), false};
    expectBinary(run(op, {{&da, nullptr, 0}, {&db, nullptr, 0}}, ElementType::F64, 8),
                 binaryReference(spelling, false, a, b, DataType::Double), ElementType::F64,
                 spelling + " floating", a, b);
  }
}

TEST_F(GpuKernels, TernaryCodesMatchTheReferenceRules) {
  std::vector<double> values = {-2.5, -1, 0, 0.25, 1, 3.3, kInf, kNaN};
  for (const auto &[type, dtype] : kFloatTypes) {
    std::vector<double> x, y, z;
    for (double u : values)
      for (double v : values)
        for (double w : values) {
          x.push_back(u);
          y.push_back(v);
          z.push_back(w);
        }
    x = rounded(x, type), y = rounded(y, type), z = rounded(z, type);
    g::DeviceArray dx = upload(type, x), dy = upload(type, y), dz = upload(type, z);
    for (const std::string &spelling : g::ternarySpellings()) {
      TernaryRule rule = *ternaryRule(spelling);
      std::vector<double> want;
      for (size_t i = 0; i < x.size(); ++i)
        want.push_back(roundToDtype(rule(x[i], y[i], z[i]), dtype));
      g::ElementwiseOp op{g::ElementwiseOp::Kind::Ternary, *g::ternaryCode(spelling), false};
      expectResults(run(op, {{&dx, nullptr, 0}, {&dy, nullptr, 0}, {&dz, nullptr, 0}}, type,
                        static_cast<int64_t>(x.size())),
                    want, type, spelling, [&](size_t i) {
                      return describeValues({x[i], y[i], z[i]});
                    });
    }
  }
}

TEST_F(GpuKernels, WhereSelectsPerElement) {
  std::vector<double> cond = {1, 0, 1, 0, 1, 0, 1};
  std::vector<double> a = {1.5, 2.5, -3, kNaN, 5, 6, 1e10};
  std::vector<double> b = {-1, -2, -3, -4, kInf, -6, -7};
  g::DeviceArray dc = upload(ElementType::U8, cond), da = upload(ElementType::F32, a);
  g::DeviceArray db = upload(ElementType::BF16, b),
                 dcf = upload(ElementType::F32, {0.5, 0, -0.0, kNaN, 2, 0, 1});
  g::ElementwiseOp where{g::ElementwiseOp::Kind::Where, 0, false};
  std::vector<double> want;
  for (size_t i = 0; i < cond.size(); ++i)
    want.push_back(roundToDtype(cond[i] != 0 ? roundToDtype(a[i], DataType::Float)
                                             : roundToDtype(b[i], DataType::BFloat16),
                                DataType::Half));
  expectResults(
      run(where, {{&dc, nullptr, 0}, {&da, nullptr, 0}, {&db, nullptr, 0}}, ElementType::F16, 7),
      want, ElementType::F16, "where", [](size_t) { return std::string("-"); });
  // A float condition (NaN counts as true) and a scalar branch.
  std::vector<double> wantScalar = {roundToDtype(1.5, DataType::Float), 7, 7, kNaN, 5, 7, 1e10};
  for (size_t i = 0; i < wantScalar.size(); ++i)
    wantScalar[i] = roundToDtype(wantScalar[i], DataType::Float);
  expectResults(run(where, {{&dcf, nullptr, 0}, {&da, nullptr, 0}, {nullptr, nullptr, 7}},
                    ElementType::F32, 7),
                wantScalar, ElementType::F32, "where scalar",
                [](size_t) { return std::string("-"); });
  // Integer where keeps int64 values exactly.
  g::DeviceArray big = upload(ElementType::I64, {std::ldexp(1.0, 60) + 4096, 3});
  g::DeviceArray c2 = upload(ElementType::U8, {1, 0});
  std::vector<double> got = run(
      where, {{&c2, nullptr, 0}, {&big, nullptr, 0}, {nullptr, nullptr, -1}}, ElementType::I64, 2);
  EXPECT_EQ(got, (std::vector<double>{std::ldexp(1.0, 60) + 4096, -1}));
}

TEST_F(GpuKernels, CastRoundsLikeRoundToDtype) {
  std::vector<double> probes = roundingProbes();
  for (const auto &[from, fromDtype] : kTypes) {
    std::vector<double> x = rounded(probes, from);
    g::DeviceArray in = upload(from, x);
    for (const auto &[to, toDtype] : kTypes) {
      std::vector<double> want;
      for (double v : x)
        want.push_back(roundToDtype(v, toDtype));
      g::ElementwiseOp cast{g::ElementwiseOp::Kind::Cast, 0, false};
      std::vector<double> got = run(cast, {{&in, nullptr, 0}}, to, static_cast<int64_t>(x.size()));
      for (size_t i = 0; i < x.size(); ++i) {
        // int64 values beyond 2^53 go through double: allow that rounding.
        bool exact = sameValue(got[i], want[i]) ||
                     (from == ElementType::I64 && std::fabs(x[i]) > std::ldexp(1.0, 53) &&
                      std::fabs(got[i] - want[i]) <= std::fabs(want[i]) * 1e-2);
        EXPECT_TRUE(exact) << shardcheck::elementTypeName(from) << " -> "
                           << shardcheck::elementTypeName(to) << " of " << x[i] << ": got "
                           << got[i] << ", want " << want[i];
      }
    }
  }
}

TEST_F(GpuKernels, GatherWithNegativeAndOutOfRangeIndices) {
  std::vector<double> values = {10, 11, 12.5, 13, -14, 15, 16, 17, 18, 19.75};
  g::DeviceArray in = upload(ElementType::F32, values);
  g::DeviceArray indices = g::uploadIndices(0, {3, -1, 0, 9, 10, 3, -100, 2});
  std::vector<double> want = {13, 0, 10, 19.75, 0, 13, 0, 12.5};
  for (ElementType t : {ElementType::F32, ElementType::F64, ElementType::BF16, ElementType::I32}) {
    g::DeviceArray out = g::allocateArray(0, t, 8);
    g::launchGather(in, indices, out, stream_);
    EXPECT_EQ(download(out), rounded(want, t)) << shardcheck::elementTypeName(t);
  }
  // A gathered operand of a binary op.
  g::DeviceArray ones = upload(ElementType::F32, std::vector<double>(8, 1.0));
  g::ElementwiseOp add{g::ElementwiseOp::Kind::Binary, g::kBinaryAdd, false};
  std::vector<double> got =
      run(add, {{&in, &indices, 0}, {&ones, nullptr, 0}}, ElementType::F32, 8);
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_EQ(got[i], want[i] + 1) << i;
}

/// The reference of a segment reduction in double.
std::vector<double> segmentReference(shardcheck::ReduceOp kind, double init,
                                     const std::vector<double> &in,
                                     const std::vector<int64_t> &offsets,
                                     const std::vector<int64_t> &indices) {
  auto combine = [kind](double a, double b) {
    switch (kind) {
    case shardcheck::ReduceOp::Sum:
      return a + b;
    case shardcheck::ReduceOp::Prod:
      return a * b;
    case shardcheck::ReduceOp::Max:
      return std::isnan(a) || std::isnan(b) ? kNaN : std::max(a, b);
    case shardcheck::ReduceOp::Min:
      return std::isnan(a) || std::isnan(b) ? kNaN : std::min(a, b);
    }
    return a;
  };
  std::vector<double> out;
  for (size_t o = 0; o + 1 < offsets.size(); ++o) {
    double acc = init;
    for (int64_t p = offsets[o]; p < offsets[o + 1]; ++p)
      if (indices[p] >= 0 && indices[p] < static_cast<int64_t>(in.size()))
        acc = combine(acc, in[indices[p]]);
    out.push_back(acc);
  }
  return out;
}

/// Segments of the given lengths over a shuffled index array with some
/// skipped (negative) indices.
void makeSegments(const std::vector<int64_t> &lengths, int64_t inCount, std::mt19937 &rng,
                  std::vector<int64_t> &offsets, std::vector<int64_t> &indices) {
  offsets = {0};
  for (int64_t len : lengths) {
    for (int64_t i = 0; i < len; ++i)
      indices.push_back(rng() % 17 == 0 ? -1 : static_cast<int64_t>(rng() % inCount));
    offsets.push_back(static_cast<int64_t>(indices.size()));
  }
}

TEST_F(GpuKernels, SegmentReduceWithEmptySegmentsAndNaN) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<double> in(3000);
  for (double &v : in)
    v = dist(rng);
  std::vector<double> withNaN = in;
  withNaN[17] = kNaN;
  // Short (one thread), medium (a warp) and long (a block) segments.
  const std::vector<std::vector<int64_t>> layouts = {
      {0, 1, 3, 0, 2, 5, 0, 1}, {0, 40, 17, 0, 64, 33}, {0, 1000, 2048, 0, 700}};
  for (const auto &lengths : layouts)
    for (ElementType t : {ElementType::F32, ElementType::F64, ElementType::BF16}) {
      std::vector<int64_t> offsets, indices;
      makeSegments(lengths, static_cast<int64_t>(in.size()), rng, offsets, indices);
      indices.push_back(17); // a last segment holding the NaN (or its value)
      offsets.push_back(static_cast<int64_t>(indices.size()));
      g::DeviceArray dOffsets = g::uploadIndices(0, offsets),
                     dIndices = g::uploadIndices(0, indices);
      for (bool nan : {false, true}) {
        std::vector<double> x = rounded(nan ? withNaN : in, t);
        g::DeviceArray dIn = upload(t, x);
        for (auto [kind, init] : {std::pair{shardcheck::ReduceOp::Sum, 0.5},
                                  {shardcheck::ReduceOp::Prod, 1.0},
                                  {shardcheck::ReduceOp::Max, -kInf},
                                  {shardcheck::ReduceOp::Min, 2.0}}) {
          g::DeviceArray out = g::allocateArray(0, t, static_cast<int64_t>(offsets.size()) - 1);
          g::launchSegmentReduce(kind, init, dIn, dOffsets, dIndices, out, stream_);
          std::vector<double> want = rounded(segmentReference(kind, init, x, offsets, indices), t);
          std::vector<double> got = download(out);
          for (size_t o = 0; o < want.size(); ++o) {
            double tol = t == ElementType::F64 ? 1e-12 : t == ElementType::F32 ? 1e-4 : 2e-2;
            bool ok = sameValue(got[o], want[o]) ||
                      std::fabs(got[o] - want[o]) <= tol * (1 + std::fabs(want[o]));
            EXPECT_TRUE(ok) << "reduce " << static_cast<int>(kind) << " "
                            << shardcheck::elementTypeName(t) << " segment " << o << " ("
                            << offsets[o + 1] - offsets[o] << " positions): got " << got[o]
                            << ", want " << want[o];
          }
        }
      }
    }
}

TEST_F(GpuKernels, PairDotSumsProductsOverSegments) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<double> a(50), b(60);
  for (double &v : a)
    v = dist(rng);
  for (double &v : b)
    v = dist(rng);
  for (const std::vector<int64_t> &lengths :
       {std::vector<int64_t>{0, 3, 7, 0, 1}, std::vector<int64_t>{50, 0, 33},
        std::vector<int64_t>{1500, 0, 600}}) {
    std::vector<int64_t> offsets = {0}, pairA, pairB;
    for (int64_t len : lengths) {
      for (int64_t i = 0; i < len; ++i) {
        pairA.push_back(rng() % 23 == 0 ? -1 : static_cast<int64_t>(rng() % a.size()));
        pairB.push_back(static_cast<int64_t>(rng() % b.size()));
      }
      offsets.push_back(static_cast<int64_t>(pairA.size()));
    }
    for (ElementType t : {ElementType::F32, ElementType::F64, ElementType::BF16}) {
      std::vector<double> x = rounded(a, t), y = rounded(b, t);
      g::DeviceArray da = upload(t, x), db = upload(t, y);
      g::DeviceArray out = g::allocateArray(0, t, static_cast<int64_t>(lengths.size()));
      g::launchPairDot(da, db, g::uploadIndices(0, offsets), g::uploadIndices(0, pairA),
                       g::uploadIndices(0, pairB), 0.25, out, stream_);
      std::vector<double> got = download(out);
      for (size_t o = 0; o < lengths.size(); ++o) {
        double want = 0.25;
        for (int64_t p = offsets[o]; p < offsets[o + 1]; ++p)
          if (pairA[p] >= 0)
            want += x[pairA[p]] * y[pairB[p]];
        want = roundToDtype(want, dtypeOf(t));
        double tol = t == ElementType::F64 ? 1e-12 : t == ElementType::F32 ? 1e-4 : 2e-2;
        EXPECT_NEAR(got[o], want, tol * (1 + std::fabs(want)))
            << shardcheck::elementTypeName(t) << " segment " << o;
      }
    }
  }
}

/// Row-major C[i] = A[i] x op(B[i]) on the host in double.
std::vector<double> gemmReference(const std::vector<double> &a, const std::vector<double> &b,
                                  int64_t batch, int64_t m, int64_t n, int64_t k, bool transposeB,
                                  int64_t strideA, int64_t strideB) {
  std::vector<double> c(static_cast<size_t>(batch * m * n), 0.0);
  for (int64_t i = 0; i < batch; ++i)
    for (int64_t r = 0; r < m; ++r)
      for (int64_t col = 0; col < n; ++col) {
        double sum = 0;
        for (int64_t p = 0; p < k; ++p) {
          double bv = transposeB ? b[i * strideB + col * k + p] : b[i * strideB + p * n + col];
          sum += a[i * strideA + r * k + p] * bv;
        }
        c[(i * m + r) * n + col] = sum;
      }
  return c;
}

TEST_F(GpuKernels, GemmMatchesACpuLoop) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  const int64_t batch = 3, m = 5, n = 7, k = 13;
  for (ElementType t : {ElementType::F32, ElementType::F64, ElementType::BF16, ElementType::F16})
    for (bool transposeB : {false, true})
      for (auto [broadcastA, broadcastB] :
           {std::pair{false, false}, {true, false}, {false, true}}) {
        int64_t strideA = broadcastA ? 0 : m * k, strideB = broadcastB ? 0 : k * n;
        std::vector<double> a(static_cast<size_t>(broadcastA ? m * k : batch * m * k));
        std::vector<double> b(static_cast<size_t>(broadcastB ? k * n : batch * k * n));
        for (double &v : a)
          v = dist(rng);
        for (double &v : b)
          v = dist(rng);
        a = rounded(a, t), b = rounded(b, t);
        g::DeviceArray da = upload(t, a), db = upload(t, b);
        g::DeviceArray dc = upload(t, std::vector<double>(batch * m * n, 99.0));
        g::gemmRowMajor(0, stream_, da, db, dc, batch, m, n, k, transposeB, strideA, strideB,
                        m * n);
        std::vector<double> want =
            rounded(gemmReference(a, b, batch, m, n, k, transposeB, strideA, strideB), t);
        std::vector<double> got = download(dc);
        double tol = t == ElementType::F64 ? 1e-12 : t == ElementType::F32 ? 1e-5 : 2e-2;
        for (size_t i = 0; i < want.size(); ++i)
          ASSERT_NEAR(got[i], want[i], tol * (1 + std::fabs(want[i])))
              << shardcheck::elementTypeName(t) << " transposeB " << transposeB << " broadcast "
              << broadcastA << broadcastB << " element " << i;
      }
  // k = 0: an empty sum.
  g::DeviceArray none = g::allocateArray(0, ElementType::F32, 0);
  g::DeviceArray dc = upload(ElementType::F32, std::vector<double>(6, 5.0));
  g::gemmRowMajor(0, stream_, none, none, dc, 1, 2, 3, 0, false, 0, 0, 6);
  EXPECT_EQ(download(dc), std::vector<double>(6, 0.0));
  EXPECT_THROW(g::gemmRowMajor(0, stream_, dc, dc, dc, 1, 4, 4, 4, false, 0, 0, 16),
               std::invalid_argument);
}

/// A view of `count` elements of `base` from element `offset` on.
g::DeviceArray viewOf(const g::DeviceArray &base, int64_t offset, int64_t count) {
  char *p = static_cast<char *>(base.ptr()) + offset * shardcheck::elementSize(base.type);
  return g::DeviceArray{base.gpu, base.type, count, std::shared_ptr<void>(base.data, p)};
}

TEST_F(GpuKernels, VectorizedPathOnOddSizesAndMisalignedViews) {
  std::mt19937 rng(13);
  std::uniform_real_distribution<double> dist(-4.0, 4.0);
  struct Shape {
    int64_t n, offsetIn, offsetOut; // element offsets of the views
  };
  const std::vector<Shape> shapes = {{1, 0, 0},
                                     {3, 0, 0},
                                     {7, 0, 0},
                                     {8, 0, 0},
                                     {9, 0, 0},
                                     {1000, 1, 1},
                                     {4097, 3, 3},
                                     {4097, 1, 2},
                                     {65539, 5, 5},
                                     {65539, 0, 1},
                                     {(3 << 21) + 1, 2, 2}};
  for (ElementType t : {ElementType::F32, ElementType::F16, ElementType::BF16})
    for (const Shape &s : shapes) {
      std::vector<double> x(static_cast<size_t>(s.n)), y(static_cast<size_t>(s.n));
      for (size_t i = 0; i < x.size(); ++i)
        x[i] = dist(rng), y[i] = dist(rng);
      x = rounded(x, t), y = rounded(y, t);
      // Base arrays with room for the offsets; views start mid-vector.
      std::vector<double> xPadded(s.offsetIn, 0.0), yPadded(s.offsetIn, 0.0);
      xPadded.insert(xPadded.end(), x.begin(), x.end());
      yPadded.insert(yPadded.end(), y.begin(), y.end());
      g::DeviceArray xBase = upload(t, xPadded), yBase = upload(t, yPadded);
      g::DeviceArray outBase = g::allocateArray(0, t, s.n + s.offsetOut);
      g::DeviceArray vx = viewOf(xBase, s.offsetIn, s.n), vy = viewOf(yBase, s.offsetIn, s.n);
      g::DeviceArray out = viewOf(outBase, s.offsetOut, s.n);
      struct Case {
        std::string name;
        g::ElementwiseOp op;
        std::vector<g::ElementwiseOperand> operands;
        std::function<double(size_t)> want;
      };
      const std::vector<Case> cases = {
          {"relu",
           {g::ElementwiseOp::Kind::Unary, g::kUnaryRelu, false},
           {{&vx, nullptr, 0}},
           [&](size_t i) { return (*unaryRule("relu"))(x[i]); }},
          {"x * y",
           {g::ElementwiseOp::Kind::Binary, g::kBinaryMul, false},
           {{&vx, nullptr, 0}, {&vy, nullptr, 0}},
           [&](size_t i) { return x[i] * y[i]; }},
          {"x + 0.5",
           {g::ElementwiseOp::Kind::Binary, g::kBinaryAdd, false},
           {{&vx, nullptr, 0}, {nullptr, nullptr, 0.5}},
           [&](size_t i) { return x[i] + 0.5; }},
          {"lerp",
           {g::ElementwiseOp::Kind::Ternary, g::kTernaryLerp, false},
           {{&vx, nullptr, 0}, {&vy, nullptr, 0}, {nullptr, nullptr, 0.25}},
           [&](size_t i) { return x[i] + 0.25 * (y[i] - x[i]); }},
          {"where",
           {g::ElementwiseOp::Kind::Where, 0, false},
           {{&vx, nullptr, 0}, {&vy, nullptr, 0}, {nullptr, nullptr, -1}},
           [&](size_t i) { return x[i] != 0 ? y[i] : -1.0; }},
          {"copy",
           {g::ElementwiseOp::Kind::Copy, 0, false},
           {{&vy, nullptr, 0}},
           [&](size_t i) { return y[i]; }},
      };
      for (const Case &c : cases) {
        ASSERT_TRUE(g::isVectorizedElementwise(c.op, c.operands, out)) << c.name;
        g::launchElementwise(c.op, c.operands, out, stream_);
        std::vector<double> got = download(out);
        std::vector<double> want(got.size());
        for (size_t i = 0; i < want.size(); ++i)
          want[i] = roundToDtype(c.want(i), dtypeOf(t));
        expectResults(got, want, t,
                      c.name + " n=" + std::to_string(s.n) + " offsets " +
                          std::to_string(s.offsetIn) + "/" + std::to_string(s.offsetOut),
                      [&](size_t i) {
                        return describeValues({x[i], y[i]});
                      });
      }
      // Elements before and after the view are untouched.
      std::vector<double> whole = download(outBase);
      for (int64_t i = 0; i < s.offsetOut; ++i)
        EXPECT_EQ(whole[i], 0.0) << "before the view";
    }
}

TEST_F(GpuKernels, BadArgumentsAreRefused) {
  g::DeviceArray a = g::allocateArray(0, ElementType::F32, 4);
  g::DeviceArray small = g::allocateArray(0, ElementType::F32, 2);
  g::DeviceArray badIndices = g::allocateArray(0, ElementType::I32, 4);
  g::ElementwiseOp relu{g::ElementwiseOp::Kind::Unary, g::kUnaryRelu, false};
  EXPECT_THROW(g::launchElementwise(relu, {{&small, nullptr, 0}}, a, stream_),
               std::invalid_argument);
  EXPECT_THROW(g::launchElementwise(relu, {{&a, nullptr, 0}, {&a, nullptr, 0}}, a, stream_),
               std::invalid_argument);
  EXPECT_THROW(g::launchElementwise(relu, {{&a, &badIndices, 0}}, a, stream_),
               std::invalid_argument);
  g::ElementwiseOp bad{g::ElementwiseOp::Kind::Unary, g::kUnaryCount, false};
  EXPECT_THROW(g::launchElementwise(bad, {{&a, nullptr, 0}}, a, stream_), std::invalid_argument);
  EXPECT_THROW(g::launchGather(a, badIndices, a, stream_), std::invalid_argument);
  EXPECT_THROW(g::allocateArray(0, ElementType::F32, -1), std::invalid_argument);
  EXPECT_THROW(g::allocateArray(g::deviceCount() + 5, ElementType::F32, 4), g::GpuError);
}

} // namespace
