// The unsharded reference evaluator (executor/Reference.h), host tensors and
// dtype rounding (executor/Tensor.h) and seeded inputs (executor/Random.h).
//
// Expectations are computed by hand on small tensors; the corpus test only
// checks that real dumps evaluate with the expected shapes (and, where the
// op is a pure data movement, the expected values).
#include "executor/Random.h"
#include "executor/Reference.h"
#include "executor/Tensor.h"
#include "ir/FusionBuilder.h"
#include "ir/reader/DumpReader.h"
#include "tests/TestPaths.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace shardcheck;

namespace {

HostTensor tensorOf(std::vector<int64_t> shape, std::vector<double> data,
                    DataType dtype = DataType::Float) {
  return HostTensor(std::move(shape), dtype, std::move(data));
}

void expectTensor(const HostTensor &t, const std::vector<int64_t> &shape,
                  const std::vector<double> &data, double tolerance = 1e-12) {
  ASSERT_EQ(t.shape(), shape);
  ASSERT_EQ(t.data().size(), data.size());
  for (size_t i = 0; i < data.size(); ++i)
    EXPECT_NEAR(t.data()[i], data[i], tolerance) << "element " << i;
}

/// The InputError code `evaluateReference` throws, or "" when it succeeds.
std::string errorCode(const Fusion &f, const std::map<TensorNum, HostTensor> &inputs,
                      const Bindings &symbols = {}) {
  try {
    evaluateReference(f, inputs, symbols);
  } catch (const InputError &e) {
    return e.diagnostic().code;
  }
  return "";
}

/// out = op(in) over a [4] float tensor.
HostTensor evalUnaryOp(OpKind kind, const std::string &op, const std::vector<double> &in,
                       DataType inType = DataType::Float, DataType outType = DataType::Float) {
  FusionBuilder b;
  int64_t n = static_cast<int64_t>(in.size());
  TensorNum x = b.tensor({b.iter(n)}, std::nullopt, {}, inType);
  TensorNum y = b.tensor({b.iter(n)}, std::nullopt, {}, outType);
  b.expr(kind, op, {x}, y);
  return evaluateReference(b.fusion(), {{x, tensorOf({n}, in, inType)}}, {}).value(y);
}

/// out = a op b over two [n] tensors.
HostTensor evalBinaryOp(const std::string &op, const std::vector<double> &a,
                        const std::vector<double> &bv, DataType inType = DataType::Float,
                        DataType outType = DataType::Float) {
  FusionBuilder b;
  int64_t n = static_cast<int64_t>(a.size());
  TensorNum x = b.tensor({b.iter(n)}, std::nullopt, {}, inType);
  TensorNum y = b.tensor({b.iter(n)}, std::nullopt, {}, inType);
  TensorNum z = b.tensor({b.iter(n)}, std::nullopt, {}, outType);
  b.expr(OpKind::Binary, op, {x, y}, z);
  return evaluateReference(b.fusion(),
                           {{x, tensorOf({n}, a, inType)}, {y, tensorOf({n}, bv, inType)}}, {})
      .value(z);
}

// --- HostTensor and rounding -------------------------------------------------

TEST(ReferenceTensor, RowMajorAccessByMultiIndex) {
  HostTensor t = tensorOf({2, 3}, {0, 1, 2, 3, 4, 5});
  EXPECT_EQ(t.strides(), (std::vector<int64_t>{3, 1}));
  EXPECT_EQ(t.at({1, 2}), 5);
  EXPECT_EQ(t.offsetOf({1, 0}), 3);
  t.at({0, 1}) = 7;
  EXPECT_EQ(t.data()[1], 7);
  HostTensor scalar;
  EXPECT_EQ(scalar.rank(), 0u);
  EXPECT_EQ(scalar.numel(), 1);
  std::vector<int64_t> index{0, 0};
  int steps = 1;
  while (nextIndex(index, {2, 3}))
    ++steps;
  EXPECT_EQ(steps, 6);
}

TEST(ReferenceTensor, RoundsBFloat16ToNearestEven) {
  EXPECT_EQ(roundToDtype(1.0 + std::ldexp(1.0, -8), DataType::BFloat16), 1.0); // tie -> even
  EXPECT_EQ(roundToDtype(1.0 + 3 * std::ldexp(1.0, -8), DataType::BFloat16),
            1.0 + std::ldexp(1.0, -6)); // tie -> even (upwards)
  EXPECT_EQ(roundToDtype(0.1, DataType::BFloat16), 0.10009765625);
  EXPECT_EQ(roundToDtype(-0.1, DataType::BFloat16), -0.10009765625);
  EXPECT_TRUE(std::isinf(roundToDtype(1e39, DataType::BFloat16)));
}

TEST(ReferenceTensor, RoundsHalfWithSubnormalsAndOverflow) {
  EXPECT_EQ(roundToDtype(1.0 + std::ldexp(1.0, -11), DataType::Half), 1.0);
  EXPECT_EQ(roundToDtype(1.0 + 3 * std::ldexp(1.0, -11), DataType::Half),
            1.0 + std::ldexp(1.0, -9));
  EXPECT_EQ(roundToDtype(65519.0, DataType::Half), 65504.0);
  EXPECT_TRUE(std::isinf(roundToDtype(65520.0, DataType::Half)));     // tie rounds to 2^16
  EXPECT_EQ(roundToDtype(std::ldexp(1.0, -25), DataType::Half), 0.0); // half the min subnormal
  EXPECT_EQ(roundToDtype(3 * std::ldexp(1.0, -26), DataType::Half), std::ldexp(1.0, -24));
}

TEST(ReferenceTensor, RoundsFloatIntegersAndBool) {
  EXPECT_EQ(roundToDtype(0.1, DataType::Float), static_cast<double>(0.1f));
  EXPECT_EQ(roundToDtype(1.0 + std::ldexp(1.0, -24), DataType::Float), 1.0);
  EXPECT_EQ(roundToDtype(0.1, DataType::Double), 0.1);
  EXPECT_EQ(roundToDtype(2.7, DataType::Int32), 2.0);
  EXPECT_EQ(roundToDtype(-2.7, DataType::Int64), -2.0);
  EXPECT_EQ(roundToDtype(300.0, DataType::Int8), 127.0);
  EXPECT_EQ(roundToDtype(-5.0, DataType::UInt8), 0.0);
  EXPECT_EQ(roundToDtype(std::nan(""), DataType::Int32), 0.0);
  EXPECT_EQ(roundToDtype(0.5, DataType::Bool), 1.0);
  EXPECT_EQ(roundToDtype(0.0, DataType::Bool), 0.0);
  EXPECT_TRUE(isIntegralDtype(DataType::Bool));
  EXPECT_TRUE(isFloatingDtype(DataType::BFloat16));
  EXPECT_THROW(roundToDtype(1.0, DataType::ComplexFloat), InputError);
}

// --- Random inputs --------------------------------------------------------------

TEST(ReferenceRandom, UsesTheStandardsMersenneSequence) {
  // The C++ standard fixes the 10000th output of a default-seeded
  // mt19937_64, so the doubles are the same with every library.
  std::mt19937_64 rng;
  rng.discard(9999);
  std::mt19937_64 copy = rng;
  EXPECT_EQ(copy(), 9981545732273789042ull);
  EXPECT_EQ(uniformUnit(rng),
            static_cast<double>(9981545732273789042ull >> 11) * std::ldexp(1.0, -53));
}

TEST(ReferenceRandom, SeededValuesAreReproducibleInRangeAndRounded) {
  std::mt19937_64 a(42), b(42), c(43);
  HostTensor x = randomTensor({64}, DataType::BFloat16, a);
  HostTensor y = randomTensor({64}, DataType::BFloat16, b);
  HostTensor z = randomTensor({64}, DataType::BFloat16, c);
  EXPECT_EQ(x.data(), y.data());
  EXPECT_NE(x.data(), z.data());
  for (double v : x.data()) {
    EXPECT_GE(v, -1.0);
    EXPECT_LT(v, 1.0);
    EXPECT_EQ(v, roundToDtype(v, DataType::BFloat16));
  }
  std::mt19937_64 d(7);
  HostTensor flags = randomTensor({64}, DataType::Bool, d);
  for (double v : flags.data())
    EXPECT_TRUE(v == 0.0 || v == 1.0);
  HostTensor ints = randomTensor({64}, DataType::Int32, d);
  for (double v : ints.data()) {
    EXPECT_EQ(v, std::trunc(v));
    EXPECT_GE(v, -8.0);
    EXPECT_LT(v, 8.0);
  }
}

TEST(ReferenceRandom, RandomInputsCoverEveryFusionInput) {
  FusionBuilder b;
  TensorNum x = b.tensor({b.iter("i0"), b.iter(3)}, std::nullopt, {}, DataType::Half);
  TensorNum y = b.tensor({b.iter("i0"), b.iter(3)}, std::nullopt);
  b.expr(OpKind::Cast, "__half2float", {x}, y);
  auto inputs = randomInputs(b.fusion(), {{"i0", 4}}, 1);
  ASSERT_EQ(inputs.size(), 1u);
  EXPECT_EQ(inputs.at(x).shape(), (std::vector<int64_t>{4, 3}));
  EXPECT_EQ(inputs.at(x).dtype(), DataType::Half);
  EXPECT_EQ(inputs.at(x).data(), randomInputs(b.fusion(), {{"i0", 4}}, 1).at(x).data());
}

// --- Pointwise ops ----------------------------------------------------------------

TEST(Reference, SetCopiesAndSymbolicExtentsEvaluate) {
  FusionBuilder b;
  TensorNum x = b.tensor({b.iter("i0")}, std::nullopt);
  TensorNum y = b.tensor({b.iter("i0")}, std::nullopt);
  b.set(x, y);
  auto r = evaluateReference(b.fusion(), {{x, tensorOf({3}, {1, 2, 3})}}, {{"i0", 3}});
  expectTensor(r.value(y), {3}, {1, 2, 3});
  EXPECT_EQ(r.outputs, std::vector<TensorNum>{y});
  EXPECT_EQ(referenceShape(b.fusion(), y, {{"i0", 5}}), std::vector<int64_t>{5});
}

TEST(Reference, UnaryOpsFollowTheirMathDefinitions) {
  std::vector<double> in{-1.0, 0.0, 0.5, 2.0};
  expectTensor(evalUnaryOp(OpKind::Unary, "-", in), {4}, {1.0, 0.0, -0.5, -2.0});
  expectTensor(evalUnaryOp(OpKind::Unary, "relu", in), {4}, {0.0, 0.0, 0.5, 2.0});
  expectTensor(evalUnaryOp(OpKind::Unary, "abs", in), {4}, {1.0, 0.0, 0.5, 2.0});
  expectTensor(evalUnaryOp(OpKind::Unary, "expf", in), {4},
               {std::exp(-1.0), 1.0, std::exp(0.5), std::exp(2.0)});
  expectTensor(evalUnaryOp(OpKind::Unary, "tanhf", in), {4},
               {std::tanh(-1.0), 0.0, std::tanh(0.5), std::tanh(2.0)});
  expectTensor(evalUnaryOp(OpKind::Unary, "sigmoid", in), {4},
               {1 / (1 + std::exp(1.0)), 0.5, 1 / (1 + std::exp(-0.5)), 1 / (1 + std::exp(-2.0))});
  expectTensor(evalUnaryOp(OpKind::Unary, "sinf", in), {4},
               {std::sin(-1.0), 0.0, std::sin(0.5), std::sin(2.0)});
  expectTensor(evalUnaryOp(OpKind::Unary, "cos", in), {4},
               {std::cos(-1.0), 1.0, std::cos(0.5), std::cos(2.0)});
  std::vector<double> positive{0.25, 1.0, 4.0, 16.0};
  expectTensor(evalUnaryOp(OpKind::Unary, "sqrtf", positive), {4}, {0.5, 1.0, 2.0, 4.0});
  expectTensor(evalUnaryOp(OpKind::Unary, "rsqrt", positive), {4}, {2.0, 1.0, 0.5, 0.25});
  expectTensor(evalUnaryOp(OpKind::Unary, "reciprocal", positive), {4}, {4.0, 1.0, 0.25, 0.0625});
  expectTensor(evalUnaryOp(OpKind::Unary, "logf", positive), {4},
               {std::log(0.25), 0.0, std::log(4.0), std::log(16.0)});
}

TEST(Reference, CastsRoundToTheTargetDtype) {
  double tie = 1.0 + std::ldexp(1.0, -8); // halfway between two bfloat16 values
  HostTensor bf = evalUnaryOp(OpKind::Cast, "__float2bfloat", {tie, 0.1, -0.1, 3.0},
                              DataType::Float, DataType::BFloat16);
  EXPECT_EQ(bf.dtype(), DataType::BFloat16);
  expectTensor(bf, {4}, {1.0, 0.10009765625, -0.10009765625, 3.0}, 0.0);
  HostTensor half =
      evalUnaryOp(OpKind::Cast, "__float2half", {65519.0, 1.0 + std::ldexp(1.0, -11), 0.5, 1.0},
                  DataType::Float, DataType::Half);
  expectTensor(half, {4}, {65504.0, 1.0, 0.5, 1.0}, 0.0);
  HostTensor up = evalUnaryOp(OpKind::Cast, "__bfloat2float", {0.10009765625, 1, 2, 3},
                              DataType::BFloat16, DataType::Float);
  expectTensor(up, {4}, {0.10009765625, 1, 2, 3}, 0.0);
  HostTensor toInt =
      evalUnaryOp(OpKind::Cast, "(int)", {2.7, -2.7, 0.2, 5.0}, DataType::Float, DataType::Int32);
  expectTensor(toInt, {4}, {2, -2, 0, 5}, 0.0);
  HostTensor toDouble =
      evalUnaryOp(OpKind::Cast, "__to_double", {0.1, 1, 2, 3}, DataType::Float, DataType::Double);
  EXPECT_EQ(toDouble.data()[0], 0.1);
  HostTensor toFloat =
      evalUnaryOp(OpKind::Cast, "(float)", {0.1, 1, 2, 3}, DataType::Double, DataType::Float);
  EXPECT_EQ(toFloat.data()[0], static_cast<double>(0.1f));
  // Without a printed output dtype the spelling gives the target.
  HostTensor spelled = evalUnaryOp(OpKind::Cast, "__float2bfloat", {0.1, 1, 2, 3}, DataType::Float,
                                   DataType::Unknown);
  EXPECT_EQ(spelled.dtype(), DataType::BFloat16);
  EXPECT_EQ(spelled.data()[0], 0.10009765625);
}

TEST(Reference, BinaryArithmeticAndComparisons) {
  std::vector<double> a{6, -7, 2, 0.5}, b{4, 2, 3, 0.25};
  expectTensor(evalBinaryOp("+", a, b), {4}, {10, -5, 5, 0.75});
  expectTensor(evalBinaryOp("-", a, b), {4}, {2, -9, -1, 0.25});
  expectTensor(evalBinaryOp("*", a, b), {4}, {24, -14, 6, 0.125});
  expectTensor(evalBinaryOp("/", a, b), {4}, {1.5, -3.5, 2.0 / 3.0, 2});
  expectTensor(evalBinaryOp("%", a, b), {4}, {2, -1, 2, 0});
  expectTensor(evalBinaryOp("remainder", a, b), {4}, {2, 1, 2, 0});
  expectTensor(evalBinaryOp("max", a, b), {4}, {6, 2, 3, 0.5});
  expectTensor(evalBinaryOp("fmin", a, b), {4}, {4, -7, 2, 0.25});
  expectTensor(evalBinaryOp("pow", a, b), {4}, {1296, 49, 8, std::pow(0.5, 0.25)});
  expectTensor(evalBinaryOp("atan2", a, b), {4},
               {std::atan2(6, 4), std::atan2(-7, 2), std::atan2(2, 3), std::atan2(0.5, 0.25)});
  expectTensor(evalBinaryOp("<", a, b, DataType::Float, DataType::Bool), {4}, {0, 1, 1, 0});
  expectTensor(evalBinaryOp(">=", a, b, DataType::Float, DataType::Bool), {4}, {1, 0, 0, 1});
  expectTensor(evalBinaryOp("==", a, a, DataType::Float, DataType::Bool), {4}, {1, 1, 1, 1});
  expectTensor(evalBinaryOp("!=", a, b, DataType::Float, DataType::Bool), {4}, {1, 1, 1, 1});
  double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_TRUE(std::isnan(evalBinaryOp("max", {nan}, {1}).data()[0]));
  EXPECT_EQ(evalBinaryOp("fmax", {nan}, {1}).data()[0], 1.0);
}

TEST(Reference, IntegerAndLogicalBinaryOps) {
  std::vector<double> a{7, -7, 6, 0}, b{2, 2, 3, 5};
  auto i32 = DataType::Int32;
  expectTensor(evalBinaryOp("/", a, b, i32, i32), {4}, {3, -3, 2, 0});
  expectTensor(evalBinaryOp("%", a, b, i32, i32), {4}, {1, -1, 0, 0});
  expectTensor(evalBinaryOp("&", a, b, i32, i32), {4}, {2, 0, 2, 0});
  expectTensor(evalBinaryOp("|", a, b, i32, i32), {4}, {7, -5, 7, 5});
  expectTensor(evalBinaryOp("^", a, b, i32, i32), {4}, {5, -5, 5, 5});
  auto bl = DataType::Bool;
  expectTensor(evalBinaryOp("&&", {1, 1, 0, 0}, {1, 0, 1, 0}, bl, bl), {4}, {1, 0, 0, 0});
  expectTensor(evalBinaryOp("||", {1, 1, 0, 0}, {1, 0, 1, 0}, bl, bl), {4}, {1, 1, 1, 0});
  EXPECT_EQ(evalBinaryOp("/", {1}, {0}).data()[0], std::numeric_limits<double>::infinity());
  FusionBuilder fb;
  TensorNum x = fb.tensor({fb.iter(1)}, std::nullopt, {}, i32);
  TensorNum z = fb.tensor({fb.iter(1)}, std::nullopt, {}, i32);
  fb.expr(OpKind::Binary, "/", {x, x}, z);
  EXPECT_EQ(errorCode(fb.fusion(), {{x, tensorOf({1}, {0}, i32)}}), "division-by-zero");
}

TEST(Reference, BinaryBroadcastsSizeOneAxesAndScalars) {
  FusionBuilder b;
  TensorNum x = b.tensor({b.iter(2), b.iter(3)}, std::nullopt);
  TensorNum row = b.tensor({b.broadcast(), b.iter(3)}, std::nullopt);
  TensorNum sum = b.tensor({b.iter(2), b.iter(3)}, std::nullopt);
  TensorNum scaled = b.tensor({b.iter(2), b.iter(3)}, std::nullopt);
  b.expr(OpKind::Binary, "+", {x, row}, sum);
  b.expr(OpKind::Binary, "*", {sum}, scaled);
  b.fusion().exprs.back().inputs.push_back(Operand::ofScalar("float(2)"));
  auto r = evaluateReference(
      b.fusion(),
      {{x, tensorOf({2, 3}, {0, 1, 2, 3, 4, 5})}, {row, tensorOf({1, 3}, {10, 20, 30})}}, {});
  expectTensor(r.value(sum), {2, 3}, {10, 21, 32, 13, 24, 35});
  expectTensor(r.value(scaled), {2, 3}, {20, 42, 64, 26, 48, 70});
}

TEST(Reference, WhereSelectsByCondition) {
  FusionBuilder b;
  TensorNum c = b.tensor({b.iter(4)}, std::nullopt, {}, DataType::Bool);
  TensorNum a = b.tensor({b.iter(4)}, std::nullopt);
  TensorNum out = b.tensor({b.iter(4)}, std::nullopt);
  b.expr(OpKind::Where, "where", {c, a}, out);
  b.fusion().exprs.back().inputs.push_back(Operand::ofScalar("-1.5"));
  auto r = evaluateReference(
      b.fusion(),
      {{c, tensorOf({4}, {1, 0, 0, 1}, DataType::Bool)}, {a, tensorOf({4}, {1, 2, 3, 4})}}, {});
  expectTensor(r.value(out), {4}, {1, -1.5, -1.5, 4});
}

// --- Broadcast, squeeze, expand -------------------------------------------------

TEST(Reference, BroadcastSqueezeAndExpandFollowFlags) {
  FusionBuilder b;
  TensorNum x = b.tensor({b.iter(3)}, std::nullopt);
  TensorNum bc = b.tensor({b.broadcast(), b.iter(3)}, std::nullopt);
  TensorNum ex =
      b.tensor({b.broadcast(ParallelType::Serial, Extent::constant(2)), b.iter(3)}, std::nullopt);
  TensorNum sq = b.tensor({b.iter(3)}, std::nullopt);
  b.expr(OpKind::Broadcast, "broadcast", {x}, bc, {true, false});
  b.expr(OpKind::Expand, "expand", {bc}, ex);
  b.expr(OpKind::Squeeze, "squeeze", {bc}, sq, {true, false});
  auto r = evaluateReference(b.fusion(), {{x, tensorOf({3}, {1, 2, 3})}}, {});
  expectTensor(r.value(bc), {1, 3}, {1, 2, 3});
  expectTensor(r.value(ex), {2, 3}, {1, 2, 3, 1, 2, 3});
  expectTensor(r.value(sq), {3}, {1, 2, 3});
}

TEST(Reference, BroadcastInsertsInnerAxis) {
  FusionBuilder b;
  TensorNum x = b.tensor({b.iter(2)}, std::nullopt);
  TensorNum bc = b.tensor({b.iter(2), b.broadcast()}, std::nullopt);
  TensorNum y = b.tensor({b.iter(2), b.iter(3)}, std::nullopt);
  TensorNum out = b.tensor({b.iter(2), b.iter(3)}, std::nullopt);
  b.expr(OpKind::Broadcast, "broadcast", {x}, bc, {false, true});
  b.expr(OpKind::Binary, "-", {y, bc}, out);
  auto r = evaluateReference(
      b.fusion(), {{x, tensorOf({2}, {1, 10})}, {y, tensorOf({2, 3}, {1, 2, 3, 4, 5, 6})}}, {});
  expectTensor(r.value(out), {2, 3}, {0, 1, 2, -6, -5, -4});
}

// --- Reductions ---------------------------------------------------------------------

HostTensor reduce(const std::string &op, std::vector<bool> reduced) {
  FusionBuilder b;
  TensorNum x = b.tensor({b.iter(2), b.iter(3)}, std::nullopt);
  std::vector<IdNum> outIds{reduced[0] ? b.reduction(2) : b.iter(2),
                            reduced[1] ? b.reduction(3) : b.iter(3)};
  TensorNum y = b.tensor(outIds, std::nullopt);
  b.expr(OpKind::Reduction, "reduction", {x}, y, {}, {{"op", op}});
  return evaluateReference(b.fusion(), {{x, tensorOf({2, 3}, {1, 2, 3, 4, 5, -6})}}, {}).value(y);
}

TEST(Reference, ReductionsOverOneAndTwoAxes) {
  expectTensor(reduce("add", {false, true}), {2}, {6, 3});
  expectTensor(reduce("add", {true, false}), {3}, {5, 7, -3});
  expectTensor(reduce("add", {true, true}), {}, {9});
  expectTensor(reduce("max", {false, true}), {2}, {3, 5});
  expectTensor(reduce("max", {true, true}), {}, {5});
  expectTensor(reduce("min", {true, false}), {3}, {1, 2, -6});
  expectTensor(reduce("mul", {false, true}), {2}, {6, -120});
}

TEST(Reference, ReductionStartsFromItsInitialValue) {
  FusionBuilder b;
  TensorNum x = b.tensor({b.iter(3)}, std::nullopt);
  TensorNum y = b.tensor({b.reduction(3)}, std::nullopt);
  b.expr(OpKind::Reduction, "reduction", {x}, y, {},
         {{"op", "add"}, {"initial value", "float(0)"}, {"allreduce", "false"}});
  auto r = evaluateReference(b.fusion(), {{x, tensorOf({3}, {1, 2, 3})}}, {});
  expectTensor(r.value(y), {}, {6});
  b.fusion().exprs.back().attrs = {{"op", "xor"}};
  EXPECT_EQ(errorCode(b.fusion(), {{x, tensorOf({3}, {1, 2, 3})}}), "unsupported-op");
}

// --- Linear and matmul --------------------------------------------------------------

Fusion linearFusion(bool withBias, TensorNum &a, TensorNum &w, TensorNum &bias, TensorNum &out) {
  FusionBuilder b;
  a = b.tensor({b.iter(2), b.iter(3)}, std::nullopt);
  w = b.tensor({b.iter(2), b.iter(3)}, std::nullopt);
  bias = withBias ? b.tensor({b.iter(2)}, std::nullopt) : -1;
  out = b.tensor({b.iter(2), b.iter(2), b.reduction(3)}, std::nullopt);
  std::vector<TensorNum> ins{a, w};
  if (withBias)
    ins.push_back(bias);
  b.expr(OpKind::Linear, "linear", ins, out);
  return b.take();
}

TEST(Reference, LinearWithAndWithoutBias) {
  TensorNum a, w, bias, out;
  HostTensor av = tensorOf({2, 3}, {1, 2, 3, 4, 5, 6});
  HostTensor wv = tensorOf({2, 3}, {1, 0, -1, 2, 1, 0});
  Fusion plain = linearFusion(false, a, w, bias, out);
  expectTensor(evaluateReference(plain, {{a, av}, {w, wv}}, {}).value(out), {2, 2},
               {-2, 4, -2, 13});
  Fusion biased = linearFusion(true, a, w, bias, out);
  expectTensor(
      evaluateReference(biased, {{a, av}, {w, wv}, {bias, tensorOf({2}, {10, 20})}}, {}).value(out),
      {2, 2}, {8, 24, 8, 33});
}

TEST(Reference, BatchedMatmul) {
  FusionBuilder b;
  TensorNum a = b.tensor({b.iter(2), b.iter(2), b.iter(2)}, std::nullopt);
  TensorNum m = b.tensor({b.iter(2), b.iter(2), b.iter(2)}, std::nullopt);
  TensorNum out = b.tensor({b.iter(2), b.iter(2), b.iter(2), b.reduction(2)}, std::nullopt);
  b.expr(OpKind::Matmul, "matmul", {a, m}, out);
  auto r = evaluateReference(b.fusion(),
                             {{a, tensorOf({2, 2, 2}, {1, 2, 3, 4, 1, 1, 0, 1})},
                              {m, tensorOf({2, 2, 2}, {1, 0, 0, 1, 2, 3, 4, 5})}},
                             {});
  expectTensor(r.value(out), {2, 2, 2}, {1, 2, 3, 4, 6, 8, 4, 5});
}

TEST(Reference, MatmulBroadcastsASizeOneBatch) {
  FusionBuilder b;
  TensorNum a = b.tensor({b.iter(2), b.iter(1), b.iter(2)}, std::nullopt);
  TensorNum m = b.tensor({b.broadcast(), b.iter(2), b.iter(1)}, std::nullopt);
  TensorNum out = b.tensor({b.iter(2), b.iter(1), b.iter(1), b.reduction(2)}, std::nullopt);
  b.expr(OpKind::Matmul, "matmul", {a, m}, out);
  auto r = evaluateReference(
      b.fusion(), {{a, tensorOf({2, 1, 2}, {1, 2, 3, 4})}, {m, tensorOf({1, 2, 1}, {10, 1})}}, {});
  expectTensor(r.value(out), {2, 1, 1}, {12, 34});
}

// --- Permute and reshape ------------------------------------------------------------

TEST(Reference, PermuteFollowsTheRootDomain) {
  FusionBuilder b;
  TensorNum x = b.tensor({b.iter(2), b.iter(3)}, std::nullopt);
  IdNum r0 = b.iter(2), r1 = b.iter(3);
  TensorNum y = b.tensor(FusionBuilder::TensorSpec{{r0, r1}, {r1, r0}, {}, {}, std::nullopt});
  b.expr(OpKind::Permute, "Set.Permute", {x}, y);
  auto r = evaluateReference(b.fusion(), {{x, tensorOf({2, 3}, {0, 1, 2, 3, 4, 5})}}, {});
  expectTensor(r.value(y), {3, 2}, {0, 3, 1, 4, 2, 5});
}

TEST(Reference, PermuteWithoutRootDomainIsAnError) {
  FusionBuilder b;
  TensorNum x = b.tensor({b.iter(2), b.iter(3)}, std::nullopt);
  TensorNum y = b.tensor({b.iter(3), b.iter(2)}, std::nullopt);
  b.expr(OpKind::Permute, "Set.Permute", {x}, y);
  EXPECT_EQ(errorCode(b.fusion(), {{x, tensorOf({2, 3}, {0, 1, 2, 3, 4, 5})}}), "unsupported-op");
}

TEST(Reference, ReshapeSplitsAndMergesRowMajor) {
  FusionBuilder b;
  TensorNum x = b.tensor({b.iter(6)}, std::nullopt);
  IdNum whole = b.iter(6);
  auto parts = b.split(whole, 3, /*innerSplit=*/true);
  TensorNum split = b.tensor(
      FusionBuilder::TensorSpec{{whole}, {parts.outer, parts.inner}, {}, {}, std::nullopt});
  IdNum a = b.iter(2), c = b.iter(3);
  IdNum merged = b.merge(a, c);
  TensorNum flat = b.tensor(FusionBuilder::TensorSpec{{a, c}, {merged}, {}, {}, std::nullopt});
  b.expr(OpKind::Reshape, "reshape", {x}, split);
  b.expr(OpKind::Reshape, "view", {split}, flat);
  auto r = evaluateReference(b.fusion(), {{x, tensorOf({6}, {0, 1, 2, 3, 4, 5})}}, {});
  expectTensor(r.value(split), {2, 3}, {0, 1, 2, 3, 4, 5});
  EXPECT_EQ(r.value(split).at({1, 0}), 3);
  expectTensor(r.value(flat), {6}, {0, 1, 2, 3, 4, 5});
}

// --- Errors ----------------------------------------------------------------------

TEST(ReferenceErrors, MissingMisshapenAndUnexpectedInputs) {
  FusionBuilder b;
  TensorNum x = b.tensor({b.iter(2)}, std::nullopt);
  TensorNum y = b.tensor({b.iter(2)}, std::nullopt);
  b.expr(OpKind::Unary, "relu", {x}, y);
  EXPECT_EQ(errorCode(b.fusion(), {}), "missing-input");
  EXPECT_EQ(errorCode(b.fusion(), {{x, tensorOf({3}, {1, 2, 3})}}), "input-shape");
  EXPECT_EQ(errorCode(b.fusion(), {{x, tensorOf({2}, {1, 2}, DataType::Half)}}), "input-dtype");
  EXPECT_EQ(errorCode(b.fusion(), {{x, tensorOf({2}, {1, 2})}, {y, tensorOf({2}, {1, 2})}}),
            "unexpected-input");
  EXPECT_EQ(errorCode(b.fusion(), {{x, tensorOf({2}, {1, 2})}}), "");
}

TEST(ReferenceErrors, UnknownOpNamesItAndItsLocation) {
  FusionBuilder b;
  TensorNum x = b.tensor({b.iter(2)}, std::nullopt);
  TensorNum y = b.tensor({b.iter(2)}, std::nullopt);
  b.expr(OpKind::Unary, "frobnicate", {x}, y);
  b.fusion().exprs.back().loc = SourceLoc{"dump.txt", 7, 3};
  try {
    evaluateReference(b.fusion(), {{x, tensorOf({2}, {1, 2})}}, {});
    FAIL() << "expected an InputError";
  } catch (const InputError &e) {
    EXPECT_EQ(e.diagnostic().code, "unsupported-op");
    EXPECT_NE(std::string(e.what()).find("frobnicate"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("dump.txt:7:3"), std::string::npos) << e.what();
  }
}

TEST(ReferenceErrors, OtherOpsAreRefused) {
  FusionBuilder b;
  TensorNum x = b.tensor({b.iter(2)}, std::nullopt);
  TensorNum y = b.tensor({b.iter(4)}, std::nullopt);
  b.expr(OpKind::Other, "pad", {x}, y);
  EXPECT_EQ(errorCode(b.fusion(), {{x, tensorOf({2}, {1, 2})}}), "unsupported-op");
}

TEST(ReferenceErrors, UnboundSymbolAndUnboundScalar) {
  FusionBuilder b;
  TensorNum x = b.tensor({b.iter("i0")}, std::nullopt);
  TensorNum y = b.tensor({b.iter("i0")}, std::nullopt);
  b.expr(OpKind::Binary, "*", {x}, y);
  b.fusion().exprs.back().inputs.push_back(Operand::ofScalar("d7"));
  try {
    evaluateReference(b.fusion(), {{x, tensorOf({2}, {1, 2})}}, {});
    FAIL() << "expected an InputError";
  } catch (const InputError &e) {
    EXPECT_EQ(e.diagnostic().code, "unbound-symbol");
    EXPECT_NE(std::string(e.what()).find("i0"), std::string::npos) << e.what();
  }
  EXPECT_EQ(errorCode(b.fusion(), {{x, tensorOf({2}, {1, 2})}}, {{"i0", 2}}), "unbound-symbol");
  auto r = evaluateReference(b.fusion(), {{x, tensorOf({2}, {1, 2})}}, {{"i0", 2}, {"d7", 3}});
  expectTensor(r.value(y), {2}, {3, 6});
}

// --- Corpus dumps -----------------------------------------------------------------

/// Binds every symbol the fusion's extents mention to 8.
Bindings bindAllSymbols(const Fusion &f) {
  Bindings symbols;
  for (const auto &[n, id] : f.ids) {
    for (const auto &s : id.extent.symbols())
      symbols[s] = 8;
    if (id.expandedExtent)
      for (const auto &s : id.expandedExtent->symbols())
        symbols[s] = 8;
  }
  return symbols;
}

ReferenceResult evaluateCorpus(const std::string &name, uint64_t seed = 2026) {
  Document doc = readDocumentFile(std::string(SHARDCHECK_SOURCE_DIR) + "/corpus/" + name);
  EXPECT_EQ(doc.fusions.size(), 1u);
  const Fusion &f = doc.fusions.front();
  Bindings symbols = bindAllSymbols(f);
  return evaluateReference(f, randomInputs(f, symbols, seed), symbols);
}

using Shape = std::vector<int64_t>;

TEST(ReferenceCorpus, MegatronMlpMatchesAHandWrittenLoop) {
  auto r = evaluateCorpus("op_linear_megatron_mlp.txt");
  EXPECT_EQ(r.value(2).shape(), (Shape{8, 32}));
  EXPECT_EQ(r.value(7).shape(), (Shape{8, 16}));
  EXPECT_EQ(r.value(5).dtype(), DataType::BFloat16);
  const HostTensor &x = r.value(0), &w1 = r.value(1), &w2 = r.value(6), &y = r.value(7);
  for (int64_t m = 0; m < 8; ++m)
    for (int64_t h = 0; h < 16; ++h) {
      double sum = 0.0;
      for (int64_t f = 0; f < 32; ++f) {
        double hidden = 0.0;
        for (int64_t k = 0; k < 16; ++k)
          hidden += x.at({m, k}) * w1.at({f, k});
        sum += roundToDtype(std::max(hidden, 0.0), DataType::BFloat16) * w2.at({h, f});
      }
      EXPECT_NEAR(y.at({m, h}), sum, 1e-12);
    }
}

TEST(ReferenceCorpus, WhereCastsDtypes) {
  auto r = evaluateCorpus("op_where_casts_dtypes.txt");
  EXPECT_EQ(r.value(8).shape(), (Shape{2, 8}));
  EXPECT_EQ(r.value(8).dtype(), DataType::Half);
  EXPECT_EQ(r.value(9).shape(), (Shape{1, 1}));
  for (double v : r.value(8).data())
    EXPECT_EQ(v, roundToDtype(v, DataType::Half));
}

TEST(ReferenceCorpus, BroadcastSqueezeExpand) {
  auto r = evaluateCorpus("op_broadcast_squeeze_expand.txt");
  EXPECT_EQ(r.value(2).shape(), (Shape{4, 32, 8}));
  EXPECT_EQ(r.value(3).shape(), (Shape{4, 8}));
  EXPECT_EQ(r.value(6).shape(), (Shape{4, 32, 8}));
  EXPECT_EQ(r.value(3).data(), r.value(0).data());
  EXPECT_EQ(r.value(6).at({3, 17, 5}), r.value(0).at({3, 5}) + r.value(4).at({5}));
}

TEST(ReferenceCorpus, ReshapeMerge) {
  auto r = evaluateCorpus("op_reshape_merge_2026.txt");
  EXPECT_EQ(r.value(2).shape(), (Shape{12}));
  EXPECT_EQ(r.value(2).data(), r.value(0).data());
}

TEST(ReferenceCorpus, PermuteSetPermute) {
  auto r = evaluateCorpus("op_permute_set_permute.txt");
  EXPECT_EQ(r.value(1).shape(), (Shape{6, 4}));
  EXPECT_EQ(r.value(2).shape(), (Shape{6, 4}));
  for (int64_t a = 0; a < 4; ++a)
    for (int64_t b = 0; b < 6; ++b)
      EXPECT_EQ(r.value(2).at({b, a}), r.value(0).at({a, b}));
  EXPECT_EQ(r.value(1).data(), r.value(2).data());
}

TEST(ReferenceCorpus, SeedsGiveDifferentButReproducibleRuns) {
  auto a = evaluateCorpus("op_reshape_merge_2026.txt", 1);
  auto b = evaluateCorpus("op_reshape_merge_2026.txt", 1);
  auto c = evaluateCorpus("op_reshape_merge_2026.txt", 2);
  EXPECT_EQ(a.value(2).data(), b.value(2).data());
  EXPECT_NE(a.value(2).data(), c.value(2).data());
}

} // namespace
