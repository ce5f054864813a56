// Per-element semantics of the ISA: the one rounding rule for requantization, (de)quantize,
// activation functions and elementwise ops on single values. Shared by the reference
// operators, the host fallback and the emulator's engines, so that "what one element means"
// is written once; the loops, tiling, strides and broadcasting around it are not shared.
//
// Rounding rule (docs/isa.md, "Requantization"): y = round_half_even(v * M / 2^S), computed
// exactly with a 128-bit intermediate. A float32 scale has a 24-bit mantissa, so it is exactly
// M / 2^S with M < 2^31; the rule then equals ONNX's float multiply followed by
// round-half-to-even whenever that multiply is exact, without TFLite's double rounding.
#pragma once

#include <cstdint>

namespace npu::ref {

/// round_half_even(value * multiplier / 2^shift), exact. multiplier >= 0, 0 <= shift <= 62.
int64_t scale_round_half_even(int64_t value, int32_t multiplier, int32_t shift);

/// clamp(scale_round_half_even(acc, multiplier, shift) + out_zp, lo, hi).
int32_t requantize(int64_t acc, int32_t multiplier, int32_t shift, int32_t out_zp, int32_t lo,
                   int32_t hi);

/// A positive real scale as multiplier / 2^shift (multiplier in [2^30, 2^31) unless the scale
/// is tiny or huge; exact for any float32 value in range).
struct QuantMultiplier {
  int32_t multiplier;
  int32_t shift;
};
QuantMultiplier quantize_multiplier(double scale);

/// Smallest / largest value of an integer NPU_DTYPE_* (int8, uint8, int32).
int32_t dtype_min(uint8_t dtype);
int32_t dtype_max(uint8_t dtype);

/// ONNX QuantizeLinear on one value: clamp(rint_half_even(x / scale) + zp, lo, hi), fp32
/// division. NaN maps to zp.
int32_t quantize(float x, float scale, int32_t zp, int32_t lo, int32_t hi);

/// ONNX DequantizeLinear on one value: (float)(q - zp) * scale.
float dequantize(int32_t q, float scale, int32_t zp);

/// NPU_ACT_* on an fp32 value (alpha/beta as the ISA defines per function).
float activation(uint8_t func, float x, float alpha, float beta);

/// NPU_ACT_* on an integer value of `dtype` (int8: saturating, int32: wrapping); only the
/// functions the ISA allows on integers (COPY, RELU, CLIP, ABS, NEG).
int32_t activation_int(uint8_t func, int32_t x, float alpha, float beta, uint8_t dtype);

/// NPU_ELTWISE_* on fp32 values.
float eltwise(uint8_t op, float a, float b);

/// NPU_ELTWISE_* on integers of `dtype` (int32 wrapping, int8 saturating; DIV truncates
/// toward zero and x / 0 = 0; POW and PRELU are fp32 only).
int32_t eltwise_int(uint8_t op, int32_t a, int32_t b, uint8_t dtype);

}  // namespace npu::ref
