// Tests of the per-element rules in npu/ref/scalar.h: rounding, requantization, multipliers,
// (de)quantization, activations and elementwise ops, including edge values.
#include "npu/ref/scalar.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>

namespace npu::ref {
namespace {

constexpr int32_t kI32Min = std::numeric_limits<int32_t>::min();
constexpr int32_t kI32Max = std::numeric_limits<int32_t>::max();
constexpr int64_t kI64Min = std::numeric_limits<int64_t>::min();
constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();

TEST(ScaleRound, TiesGoToEvenBothSigns) {
  EXPECT_EQ(scale_round_half_even(1, 1, 1), 0);    // 0.5
  EXPECT_EQ(scale_round_half_even(3, 1, 1), 2);    // 1.5
  EXPECT_EQ(scale_round_half_even(5, 1, 1), 2);    // 2.5
  EXPECT_EQ(scale_round_half_even(7, 1, 1), 4);    // 3.5
  EXPECT_EQ(scale_round_half_even(-1, 1, 1), 0);   // -0.5
  EXPECT_EQ(scale_round_half_even(-3, 1, 1), -2);  // -1.5
  EXPECT_EQ(scale_round_half_even(-5, 1, 1), -2);  // -2.5
  EXPECT_EQ(scale_round_half_even(-7, 1, 1), -4);  // -3.5
}

TEST(ScaleRound, NonTiesRoundToNearest) {
  EXPECT_EQ(scale_round_half_even(5, 1, 2), 1);    // 1.25
  EXPECT_EQ(scale_round_half_even(7, 1, 2), 2);    // 1.75
  EXPECT_EQ(scale_round_half_even(-5, 1, 2), -1);  // -1.25
  EXPECT_EQ(scale_round_half_even(-7, 1, 2), -2);  // -1.75
  EXPECT_EQ(scale_round_half_even(100, 3, 0), 300);
  EXPECT_EQ(scale_round_half_even(0, kI32Max, 62), 0);
}

TEST(ScaleRound, ExtremesAreExactOrSaturate) {
  // INT64_MIN * 2^30 / 2^62 = -2^31 exactly.
  EXPECT_EQ(scale_round_half_even(kI64Min, 1 << 30, 62), -(int64_t{1} << 31));
  EXPECT_EQ(scale_round_half_even(kI64Max, kI32Max, 0), kI64Max);
  EXPECT_EQ(scale_round_half_even(kI64Min, kI32Max, 0), kI64Min);
  EXPECT_EQ(scale_round_half_even(-1, 1, 62), 0);
}

TEST(ScaleRound, MatchesLongDoubleOnRandomValues) {
  std::mt19937_64 rng(1234);
  std::uniform_int_distribution<int64_t> val(-(int64_t{1} << 31), int64_t{1} << 31);
  std::uniform_int_distribution<int32_t> mul(0, kI32Max);
  std::uniform_int_distribution<int32_t> sh(0, 62);
  for (int i = 0; i < 20000; ++i) {
    const int64_t v = val(rng);
    const int32_t m = mul(rng);
    const int32_t s = sh(rng);
    // |v * m| < 2^62 is exact in long double (64-bit mantissa), and so is the division by 2^s.
    const long double exact = std::ldexp(static_cast<long double>(v) * m, -s);
    const long double want = std::nearbyint(exact);
    ASSERT_EQ(scale_round_half_even(v, m, s), static_cast<int64_t>(want))
        << v << " * " << m << " >> " << s;
  }
}

TEST(Requantize, AddsZeroPointAndSaturates) {
  EXPECT_EQ(requantize(5, 1 << 30, 31, 3, -128, 127), 5);  // 2.5 -> 2, + 3
  EXPECT_EQ(requantize(1000000, 1 << 30, 30, 0, -128, 127), 127);
  EXPECT_EQ(requantize(-1000000, 1 << 30, 30, 0, -128, 127), -128);
  EXPECT_EQ(requantize(kI64Max, kI32Max, 0, kI32Max, kI32Min, kI32Max), kI32Max);
  EXPECT_EQ(requantize(kI64Min, kI32Max, 0, kI32Min, kI32Min, kI32Max), kI32Min);
  EXPECT_EQ(requantize(10, 1 << 30, 30, -20, 0, 255), 0);    // uint8 clamp
  EXPECT_EQ(requantize(-3, 1 << 30, 31, 0, -128, 127), -2);  // -1.5 -> -2
}

TEST(QuantizeMultiplier, ExactForRandomFloat32Scales) {
  std::mt19937 rng(42);
  std::uniform_int_distribution<uint32_t> mant(0, (1u << 23) - 1);
  std::uniform_int_distribution<int> ex(-31, 30);  // 2^-31 .. 2^30: the exact range
  for (int i = 0; i < 20000; ++i) {
    const float scale = std::ldexp(1.0f + static_cast<float>(mant(rng)) / (1 << 23), ex(rng));
    const QuantMultiplier q = quantize_multiplier(scale);
    ASSERT_GE(q.multiplier, 1 << 30) << scale;
    ASSERT_LE(q.shift, 62) << scale;
    ASSERT_GE(q.shift, 0) << scale;
    const long double back = std::ldexp(static_cast<long double>(q.multiplier), -q.shift);
    ASSERT_EQ(back, static_cast<long double>(scale)) << scale;
  }
}

TEST(QuantizeMultiplier, EdgeCases) {
  EXPECT_EQ(quantize_multiplier(0.0).multiplier, 0);
  EXPECT_EQ(quantize_multiplier(0.0).shift, 0);
  EXPECT_EQ(quantize_multiplier(-1.0).multiplier, 0);
  EXPECT_EQ(quantize_multiplier(std::nan("")).multiplier, 0);
  const QuantMultiplier one = quantize_multiplier(1.0);
  EXPECT_EQ(one.multiplier, 1 << 30);
  EXPECT_EQ(one.shift, 30);
  const QuantMultiplier half = quantize_multiplier(0.5);
  EXPECT_EQ(half.multiplier, 1 << 30);
  EXPECT_EQ(half.shift, 31);
  // Tiny: shift capped at 62, multiplier degrades gracefully.
  const QuantMultiplier tiny = quantize_multiplier(std::ldexp(1.5, -40));
  EXPECT_EQ(tiny.shift, 62);
  EXPECT_EQ(tiny.multiplier, 3 << 21);  // 1.5 * 2^22
  EXPECT_EQ(quantize_multiplier(1e-30).multiplier, 0);
  // Huge: saturates.
  EXPECT_EQ(quantize_multiplier(1e12).multiplier, kI32Max);
  EXPECT_EQ(quantize_multiplier(1e12).shift, 0);
  EXPECT_EQ(quantize_multiplier(INFINITY).multiplier, kI32Max);
  // A double that rounds up to 2^31 renormalizes.
  const QuantMultiplier up = quantize_multiplier(1.0 - 1e-15);
  EXPECT_EQ(up.multiplier, 1 << 30);
  EXPECT_EQ(up.shift, 30);
}

TEST(Dtype, Ranges) {
  EXPECT_EQ(dtype_min(NPU_DTYPE_INT8), -128);
  EXPECT_EQ(dtype_max(NPU_DTYPE_INT8), 127);
  EXPECT_EQ(dtype_min(NPU_DTYPE_UINT8), 0);
  EXPECT_EQ(dtype_max(NPU_DTYPE_UINT8), 255);
  EXPECT_EQ(dtype_min(NPU_DTYPE_INT32), kI32Min);
  EXPECT_EQ(dtype_max(NPU_DTYPE_INT32), kI32Max);
}

TEST(Quantize, TiesToEven) {
  EXPECT_EQ(quantize(2.5f, 1.0f, 0, -128, 127), 2);
  EXPECT_EQ(quantize(3.5f, 1.0f, 0, -128, 127), 4);
  EXPECT_EQ(quantize(-2.5f, 1.0f, 0, -128, 127), -2);
  EXPECT_EQ(quantize(-3.5f, 1.0f, 0, -128, 127), -4);
  EXPECT_EQ(quantize(0.5f, 1.0f, 0, -128, 127), 0);
  EXPECT_EQ(quantize(1.25f, 0.5f, 0, -128, 127), 2);  // 2.5 -> 2
  EXPECT_EQ(quantize(2.5f, 1.0f, 10, -128, 127), 12);
}

TEST(Quantize, SaturatesAndHandlesSpecials) {
  EXPECT_EQ(quantize(1000.0f, 1.0f, 0, -128, 127), 127);
  EXPECT_EQ(quantize(-1000.0f, 1.0f, 0, -128, 127), -128);
  EXPECT_EQ(quantize(-5.0f, 1.0f, 0, 0, 255), 0);
  EXPECT_EQ(quantize(std::nanf(""), 1.0f, 7, -128, 127), 7);
  EXPECT_EQ(quantize(INFINITY, 1.0f, 0, -128, 127), 127);
  EXPECT_EQ(quantize(-INFINITY, 1.0f, 0, -128, 127), -128);
  EXPECT_EQ(quantize(1e30f, 1e-30f, 0, kI32Min, kI32Max), kI32Max);
  EXPECT_EQ(quantize(1.0f, 0.0f, 3, -128, 127), 127);  // +inf
  EXPECT_EQ(quantize(0.0f, 0.0f, 3, -128, 127), 3);    // NaN
}

TEST(Dequantize, SubtractsZeroPoint) {
  EXPECT_FLOAT_EQ(dequantize(10, 0.5f, 4), 3.0f);
  EXPECT_FLOAT_EQ(dequantize(0, 0.25f, 128), -32.0f);
  EXPECT_FLOAT_EQ(dequantize(kI32Min, 1.0f, 1), -2147483649.0f);  // no int32 overflow
}

TEST(Activation, Float) {
  EXPECT_EQ(activation(NPU_ACT_COPY, -1.5f, 0, 0), -1.5f);
  EXPECT_EQ(activation(NPU_ACT_RELU, -1.5f, 0, 0), 0.0f);
  EXPECT_EQ(activation(NPU_ACT_RELU, 2.0f, 0, 0), 2.0f);
  EXPECT_FLOAT_EQ(activation(NPU_ACT_LEAKY_RELU, -2.0f, 0.1f, 0), -0.2f);
  EXPECT_EQ(activation(NPU_ACT_CLIP, 7.0f, 0.0f, 6.0f), 6.0f);
  EXPECT_EQ(activation(NPU_ACT_CLIP, -1.0f, 0.0f, 6.0f), 0.0f);
  EXPECT_FLOAT_EQ(activation(NPU_ACT_SIGMOID, 0.0f, 0, 0), 0.5f);
  EXPECT_EQ(activation(NPU_ACT_SIGMOID, -200.0f, 0, 0), 0.0f);
  EXPECT_FLOAT_EQ(activation(NPU_ACT_TANH, 0.5f, 0, 0), std::tanh(0.5f));
  EXPECT_NEAR(activation(NPU_ACT_GELU, 1.0f, 0, 0), 0.8413447f, 1e-6);
  EXPECT_FLOAT_EQ(activation(NPU_ACT_HARDSWISH, 1.0f, 0, 0), 4.0f / 6.0f);
  EXPECT_EQ(activation(NPU_ACT_HARDSWISH, -4.0f, 0, 0), 0.0f);
  EXPECT_EQ(activation(NPU_ACT_HARDSWISH, 4.0f, 0, 0), 4.0f);
  EXPECT_FLOAT_EQ(activation(NPU_ACT_HARDSIGMOID, 1.0f, 0.2f, 0.5f), 0.7f);
  EXPECT_EQ(activation(NPU_ACT_HARDSIGMOID, 10.0f, 0.2f, 0.5f), 1.0f);
  EXPECT_FLOAT_EQ(activation(NPU_ACT_EXP, 1.0f, 0, 0), std::exp(1.0f));
  EXPECT_FLOAT_EQ(activation(NPU_ACT_LOG, 2.0f, 0, 0), std::log(2.0f));
  EXPECT_FLOAT_EQ(activation(NPU_ACT_SQRT, 9.0f, 0, 0), 3.0f);
  EXPECT_EQ(activation(NPU_ACT_ABS, -3.0f, 0, 0), 3.0f);
  EXPECT_EQ(activation(NPU_ACT_NEG, 3.0f, 0, 0), -3.0f);
  EXPECT_FLOAT_EQ(activation(NPU_ACT_ERF, 0.5f, 0, 0), std::erf(0.5f));
  EXPECT_FLOAT_EQ(activation(NPU_ACT_SOFTPLUS, 0.0f, 0, 0), std::log(2.0f));
  EXPECT_EQ(activation(NPU_ACT_SOFTPLUS, 100.0f, 0, 0), 100.0f);
  EXPECT_EQ(activation(NPU_ACT_SOFTPLUS, 1000.0f, 0, 0), 1000.0f);
  EXPECT_FLOAT_EQ(activation(NPU_ACT_ELU, -1.0f, 2.0f, 0), 2.0f * (std::exp(-1.0f) - 1.0f));
  EXPECT_EQ(activation(NPU_ACT_ELU, 1.0f, 2.0f, 0), 1.0f);
  EXPECT_EQ(activation(NPU_ACT_RECIPROCAL, 4.0f, 0, 0), 0.25f);
  EXPECT_TRUE(std::isnan(activation(0, 1.0f, 0, 0)));
}

TEST(Activation, Integer) {
  EXPECT_EQ(activation_int(NPU_ACT_RELU, -5, 0, 0, NPU_DTYPE_INT8), 0);
  EXPECT_EQ(activation_int(NPU_ACT_RELU, 5, 0, 0, NPU_DTYPE_INT8), 5);
  EXPECT_EQ(activation_int(NPU_ACT_NEG, -128, 0, 0, NPU_DTYPE_INT8), 127);
  EXPECT_EQ(activation_int(NPU_ACT_ABS, -128, 0, 0, NPU_DTYPE_INT8), 127);
  EXPECT_EQ(activation_int(NPU_ACT_NEG, kI32Min, 0, 0, NPU_DTYPE_INT32), kI32Min);
  EXPECT_EQ(activation_int(NPU_ACT_ABS, kI32Min, 0, 0, NPU_DTYPE_INT32), kI32Min);
  EXPECT_EQ(activation_int(NPU_ACT_NEG, 5, 0, 0, NPU_DTYPE_INT32), -5);
  // CLIP bounds round half to even: [2.5, 5.5] -> [2, 6].
  EXPECT_EQ(activation_int(NPU_ACT_CLIP, 0, 2.5f, 5.5f, NPU_DTYPE_INT8), 2);
  EXPECT_EQ(activation_int(NPU_ACT_CLIP, 100, 2.5f, 5.5f, NPU_DTYPE_INT8), 6);
  // Bounds beyond the dtype clamp to it.
  EXPECT_EQ(activation_int(NPU_ACT_CLIP, -100, -1000.0f, 1000.0f, NPU_DTYPE_INT8), -100);
  EXPECT_EQ(activation_int(NPU_ACT_CLIP, kI32Max, -1e20f, 1e20f, NPU_DTYPE_INT32), kI32Max);
  EXPECT_EQ(activation_int(NPU_ACT_CLIP, 5, std::nanf(""), std::nanf(""), NPU_DTYPE_INT8), 5);
  EXPECT_EQ(activation_int(NPU_ACT_COPY, 200, 0, 0, NPU_DTYPE_UINT8), 200);
}

TEST(Eltwise, Float) {
  EXPECT_EQ(eltwise(NPU_ELTWISE_ADD, 1.5f, 2.0f), 3.5f);
  EXPECT_EQ(eltwise(NPU_ELTWISE_SUB, 1.5f, 2.0f), -0.5f);
  EXPECT_EQ(eltwise(NPU_ELTWISE_MUL, 1.5f, 2.0f), 3.0f);
  EXPECT_EQ(eltwise(NPU_ELTWISE_DIV, 1.5f, 2.0f), 0.75f);
  EXPECT_EQ(eltwise(NPU_ELTWISE_MAX, 1.5f, 2.0f), 2.0f);
  EXPECT_EQ(eltwise(NPU_ELTWISE_MIN, 1.5f, 2.0f), 1.5f);
  EXPECT_EQ(eltwise(NPU_ELTWISE_POW, 2.0f, 3.0f), 8.0f);
  EXPECT_EQ(eltwise(NPU_ELTWISE_PRELU, -2.0f, 0.5f), -1.0f);
  EXPECT_EQ(eltwise(NPU_ELTWISE_PRELU, 2.0f, 0.5f), 2.0f);
  EXPECT_TRUE(std::isnan(eltwise(NPU_ELTWISE_MAX, std::nanf(""), 1.0f)));
}

TEST(Eltwise, Integer) {
  EXPECT_EQ(eltwise_int(NPU_ELTWISE_ADD, kI32Max, 1, NPU_DTYPE_INT32), kI32Min);
  EXPECT_EQ(eltwise_int(NPU_ELTWISE_SUB, kI32Min, 1, NPU_DTYPE_INT32), kI32Max);
  EXPECT_EQ(eltwise_int(NPU_ELTWISE_MUL, 65536, 65536, NPU_DTYPE_INT32), 0);
  EXPECT_EQ(eltwise_int(NPU_ELTWISE_DIV, kI32Min, -1, NPU_DTYPE_INT32), kI32Min);
  EXPECT_EQ(eltwise_int(NPU_ELTWISE_DIV, -7, 2, NPU_DTYPE_INT32), -3);
  EXPECT_EQ(eltwise_int(NPU_ELTWISE_DIV, 7, 0, NPU_DTYPE_INT32), 0);
  EXPECT_EQ(eltwise_int(NPU_ELTWISE_ADD, 100, 100, NPU_DTYPE_INT8), 127);
  EXPECT_EQ(eltwise_int(NPU_ELTWISE_SUB, -100, 100, NPU_DTYPE_INT8), -128);
  EXPECT_EQ(eltwise_int(NPU_ELTWISE_MUL, -20, 20, NPU_DTYPE_INT8), -128);
  EXPECT_EQ(eltwise_int(NPU_ELTWISE_DIV, -128, -1, NPU_DTYPE_INT8), 127);
  EXPECT_EQ(eltwise_int(NPU_ELTWISE_DIV, -7, 2, NPU_DTYPE_INT8), -3);
  EXPECT_EQ(eltwise_int(NPU_ELTWISE_MAX, -7, 2, NPU_DTYPE_INT8), 2);
  EXPECT_EQ(eltwise_int(NPU_ELTWISE_MIN, -7, 2, NPU_DTYPE_INT8), -7);
  EXPECT_EQ(eltwise_int(NPU_ELTWISE_ADD, 200, 100, NPU_DTYPE_UINT8), 255);
}

TEST(DivRound, HalfToEven) {
  EXPECT_EQ(div_round_half_even(5, 2), 2);
  EXPECT_EQ(div_round_half_even(7, 2), 4);
  EXPECT_EQ(div_round_half_even(-5, 2), -2);
  EXPECT_EQ(div_round_half_even(-7, 2), -4);
  EXPECT_EQ(div_round_half_even(1, 3), 0);
  EXPECT_EQ(div_round_half_even(2, 3), 1);
  EXPECT_EQ(div_round_half_even(-2, 3), -1);
  EXPECT_EQ(div_round_half_even(kI64Min, 1), kI64Min);
  EXPECT_EQ(div_round_half_even(1, 0), 0);
}

}  // namespace
}  // namespace npu::ref
