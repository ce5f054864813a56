// Per-element semantics of the ISA: the one rounding rule for requantization, (de)quantize,
// activation functions and elementwise ops on single values. Shared by the reference
// operators, the host fallback and the emulator's engines, so that "what one element means"
// is written once; the loops, tiling, strides and broadcasting around it are not shared.
//
// Rounding rule (docs/isa.md, "Requantization"): y = round_half_even(v * M / 2^S), computed
// exactly with a 128-bit intermediate. A float32 scale has a 24-bit mantissa, so it is exactly
// M / 2^S with M < 2^31; the rule then equals ONNX's float multiply followed by
// round-half-to-even whenever that multiply is exact, without TFLite's double rounding.
//
// Everything here is inline (the emulator calls it per element) and free of undefined
// behaviour for every input: out-of-range values saturate, int32 arithmetic wraps through
// unsigned types.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

#include "npu/isa/dtype.h"
#include "npu_isa.h"

namespace npu::ref {

namespace detail {

__extension__ typedef __int128 i128;           // NOLINT: GNU extension, exact products
__extension__ typedef unsigned __int128 u128;  // NOLINT

inline int64_t saturate_i128_to_i64(detail::i128 v) {
  constexpr detail::i128 lo = std::numeric_limits<int64_t>::min();
  constexpr detail::i128 hi = std::numeric_limits<int64_t>::max();
  return static_cast<int64_t>(v < lo ? lo : (v > hi ? hi : v));
}

inline int64_t clamp64(int64_t v, int64_t lo, int64_t hi) {
  return v < lo ? lo : (v > hi ? hi : v);
}

/// Wraps an int64 to int32 (two's complement, through uint32: no UB).
inline int32_t wrap_i32(int64_t v) {
  return static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(v)));
}

/// round_half_even(x) of a double as int64, saturated to [lo, hi]; NaN gives `nan_value`.
inline int64_t round_double_to_range(double x, int64_t lo, int64_t hi, int64_t nan_value) {
  if (std::isnan(x)) return nan_value;
  const double r = std::nearbyint(x);  // default rounding mode: ties to even
  if (r <= static_cast<double>(lo)) return lo;
  if (r >= static_cast<double>(hi)) return hi;
  return static_cast<int64_t>(r);
}

}  // namespace detail

/// round_half_even(value * multiplier / 2^shift), exact. multiplier >= 0, 0 <= shift <= 62.
/// (A shift outside [0, 127] is clamped; a result outside int64 saturates.)
inline int64_t scale_round_half_even(int64_t value, int32_t multiplier, int32_t shift) {
  // Fast path, same result: the product fits 64 bits (always, for 32-bit accumulators).
  if (int64_t p64; shift >= 1 && shift <= 62 && !__builtin_mul_overflow(value, multiplier, &p64)) {
    const int64_t q = p64 >> shift;  // arithmetic shift: floor(p / 2^shift)
    const uint64_t rem = static_cast<uint64_t>(p64) & ((uint64_t{1} << shift) - 1);
    const uint64_t half = uint64_t{1} << (shift - 1);
    return q + ((rem > half || (rem == half && (q & 1) != 0)) ? 1 : 0);
  }
  const detail::i128 p = static_cast<detail::i128>(value) * multiplier;
  if (shift <= 0) return detail::saturate_i128_to_i64(p);
  if (shift > 127) shift = 127;
  const detail::i128 q = p >> shift;  // arithmetic shift: floor(p / 2^shift)
  const detail::u128 mask = (static_cast<detail::u128>(1) << shift) - 1;
  const detail::u128 rem = static_cast<detail::u128>(p) & mask;  // p - q * 2^shift
  const detail::u128 half = static_cast<detail::u128>(1) << (shift - 1);
  detail::i128 r = q;
  if (rem > half || (rem == half && (q & 1) != 0)) r = q + 1;
  return detail::saturate_i128_to_i64(r);
}

/// clamp(scale_round_half_even(acc, multiplier, shift) + out_zp, lo, hi).
inline int32_t requantize(int64_t acc, int32_t multiplier, int32_t shift, int32_t out_zp,
                          int32_t lo, int32_t hi) {
  const int64_t scaled = scale_round_half_even(acc, multiplier, shift);
  int64_t v;
  if (__builtin_add_overflow(scaled, int64_t{out_zp}, &v)) return scaled > 0 ? hi : lo;
  if (v > hi) return hi;
  if (v < lo) return lo;
  return static_cast<int32_t>(v);
}

/// round_half_even(num / den) for den > 0, exact (used by integer average pooling and means).
/// den <= 0 gives 0.
inline int64_t div_round_half_even(int64_t num, int64_t den) {
  if (den <= 0) return 0;
  // floor division and non-negative remainder, in 128 bits so that INT64_MIN is fine.
  const detail::i128 n = num;
  const detail::i128 d = den;
  detail::i128 q = n / d;
  detail::i128 r = n % d;
  if (r < 0) {
    q -= 1;
    r += d;
  }
  const detail::i128 twice = 2 * r;
  if (twice > d || (twice == d && (q & 1) != 0)) q += 1;
  return detail::saturate_i128_to_i64(q);
}

/// A positive real scale as multiplier / 2^shift (multiplier in [2^30, 2^31) unless the scale
/// is tiny or huge; exact for any float32 value in range).
struct QuantMultiplier {
  int32_t multiplier;
  int32_t shift;
};

/// Scale 0, negative or NaN gives {0, 0}. Scales below 2^-32 lose mantissa bits (shift is
/// capped at 62, the multiplier is rounded half to even, down to 0 → {0, 0}); scales of 2^31
/// and above saturate to {INT32_MAX, 0}.
inline QuantMultiplier quantize_multiplier(double scale) {
  if (!(scale > 0.0)) return {0, 0};  // zero, negative, NaN
  constexpr int32_t kMax = std::numeric_limits<int32_t>::max();
  if (std::isinf(scale)) return {kMax, 0};
  int exp = 0;
  const double mant = std::frexp(scale, &exp);  // scale = mant * 2^exp, mant in [0.5, 1)
  int64_t m = static_cast<int64_t>(std::nearbyint(std::ldexp(mant, 31)));  // [2^30, 2^31]
  if (m == (int64_t{1} << 31)) {
    m /= 2;
    exp += 1;
  }
  int64_t shift = 31 - static_cast<int64_t>(exp);
  if (shift < 0) {
    // scale >= 2^31: multiplier * 2^-shift does not fit; saturate.
    return {kMax, 0};
  }
  if (shift > 62) {
    const int64_t drop = shift - 62;
    if (drop > 32) return {0, 0};
    m = div_round_half_even(m, int64_t{1} << drop);
    shift = 62;
    if (m == 0) return {0, 0};
  }
  return {static_cast<int32_t>(m), static_cast<int32_t>(shift)};
}

/// Integer ranges of NPU_DTYPE_* (defined with the ISA).
using isa::dtype_max;
using isa::dtype_min;

/// ONNX QuantizeLinear on one value: clamp(rint_half_even(x / scale) + zp, lo, hi), fp32
/// division. NaN maps to zp (clamped).
inline int32_t quantize(float x, float scale, int32_t zp, int32_t lo, int32_t hi) {
  const float q = x / scale;
  int64_t v = zp;
  if (!std::isnan(q)) {
    constexpr int64_t kBig = int64_t{1} << 40;  // beyond any int32 after adding zp
    v = detail::round_double_to_range(static_cast<double>(std::nearbyint(q)), -kBig, kBig, 0) + zp;
  }
  return static_cast<int32_t>(detail::clamp64(v, lo, hi));
}

/// ONNX DequantizeLinear on one value: (float)(q - zp) * scale (q - zp in 64 bits).
inline float dequantize(int32_t q, float scale, int32_t zp) {
  return static_cast<float>(static_cast<int64_t>(q) - zp) * scale;
}

/// NPU_ACT_* on a floating-point value (fp32 on the device; the host also uses double), with
/// alpha/beta as the ISA defines per function. Unknown functions give NaN.
template <typename F>
F activation_fp(uint8_t func, F x, F alpha, F beta) {
  constexpr F kZero = 0, kOne = 1, kHalf = 0.5, kThree = 3, kSix = 6;
  switch (func) {
    case NPU_ACT_COPY:
      return x;
    case NPU_ACT_RELU:
      return x < kZero ? kZero : x;  // NaN stays NaN
    case NPU_ACT_LEAKY_RELU:
      return x >= kZero ? x : alpha * x;
    case NPU_ACT_CLIP: {
      const F lo = x < alpha ? alpha : x;
      return lo > beta ? beta : lo;
    }
    case NPU_ACT_SIGMOID:
      return kOne / (kOne + std::exp(-x));
    case NPU_ACT_TANH:
      return std::tanh(x);
    case NPU_ACT_GELU:
      return kHalf * x * (kOne + std::erf(x / std::sqrt(F{2})));
    case NPU_ACT_HARDSWISH: {
      F t = x + kThree;
      t = t < kZero ? kZero : t;
      t = t > kSix ? kSix : t;
      return x * t / kSix;
    }
    case NPU_ACT_HARDSIGMOID: {
      F t = alpha * x + beta;
      t = t > kOne ? kOne : t;
      return t < kZero ? kZero : t;
    }
    case NPU_ACT_EXP:
      return std::exp(x);
    case NPU_ACT_LOG:
      return std::log(x);
    case NPU_ACT_SQRT:
      return std::sqrt(x);
    case NPU_ACT_ABS:
      return std::fabs(x);
    case NPU_ACT_NEG:
      return -x;
    case NPU_ACT_ERF:
      return std::erf(x);
    case NPU_ACT_SOFTPLUS:
      // log(1 + exp(x)) == x to the type's precision once exp(-x) is below its epsilon
      // (x > 20 for float, x > 40 for double).
      return x > F{sizeof(F) == 4 ? 20 : 40} ? x : std::log1p(std::exp(x));
    case NPU_ACT_ELU:
      return x >= kZero ? x : alpha * std::expm1(x);
    case NPU_ACT_RECIPROCAL:
      return kOne / x;
    default:
      return std::numeric_limits<F>::quiet_NaN();
  }
}

/// NPU_ACT_* on an fp32 value (activation_fp<float>): what the device computes.
inline float activation(uint8_t func, float x, float alpha, float beta) {
  return activation_fp<float>(func, x, alpha, beta);
}

namespace detail {
/// Brings an exact int64 result into `dtype`: int32 wraps, int8/uint8 saturate.
inline int32_t to_dtype(int64_t v, uint8_t dtype) {
  if (dtype == NPU_DTYPE_INT32) return wrap_i32(v);
  return static_cast<int32_t>(clamp64(v, dtype_min(dtype), dtype_max(dtype)));
}
}  // namespace detail

/// NPU_ACT_* on an integer value of `dtype` (int8: saturating, int32: wrapping); only the
/// functions the ISA allows on integers (COPY, RELU, CLIP, ABS, NEG). CLIP bounds are rounded
/// half to even and clamped to the dtype (NaN bounds mean no bound). Other functions give 0.
inline int32_t activation_int(uint8_t func, int32_t x, float alpha, float beta, uint8_t dtype) {
  const int64_t v = x;
  switch (func) {
    case NPU_ACT_COPY:
      return x;
    case NPU_ACT_RELU:
      return detail::to_dtype(v > 0 ? v : 0, dtype);
    case NPU_ACT_CLIP: {
      const int64_t dmin = dtype_min(dtype);
      const int64_t dmax = dtype_max(dtype);
      const int64_t lo = detail::round_double_to_range(alpha, dmin, dmax, dmin);
      const int64_t hi = detail::round_double_to_range(beta, dmin, dmax, dmax);
      int64_t y = v < lo ? lo : v;
      y = y > hi ? hi : y;
      return detail::to_dtype(y, dtype);
    }
    case NPU_ACT_ABS:
      return detail::to_dtype(v < 0 ? -v : v, dtype);
    case NPU_ACT_NEG:
      return detail::to_dtype(-v, dtype);
    default:
      return 0;
  }
}

/// NPU_ELTWISE_* on floating-point values (fp32 on the device; the host also uses double).
/// MAX/MIN propagate NaN. Unknown ops give NaN.
template <typename F>
F eltwise_fp(uint8_t op, F a, F b) {
  switch (op) {
    case NPU_ELTWISE_ADD:
      return a + b;
    case NPU_ELTWISE_SUB:
      return a - b;
    case NPU_ELTWISE_MUL:
      return a * b;
    case NPU_ELTWISE_DIV:
      return a / b;
    case NPU_ELTWISE_MAX:
      if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<F>::quiet_NaN();
      return a > b ? a : b;
    case NPU_ELTWISE_MIN:
      if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<F>::quiet_NaN();
      return a < b ? a : b;
    case NPU_ELTWISE_POW:
      return std::pow(a, b);
    case NPU_ELTWISE_PRELU:
      return a >= F{0} ? a : a * b;
    default:
      return std::numeric_limits<F>::quiet_NaN();
  }
}

/// NPU_ELTWISE_* on fp32 values (eltwise_fp<float>).
inline float eltwise(uint8_t op, float a, float b) {
  return eltwise_fp<float>(op, a, b);
}

/// NPU_ELTWISE_* on integers of `dtype` (int32 wrapping, int8 saturating; DIV truncates
/// toward zero and x / 0 = 0; POW and PRELU are fp32 only and give 0).
inline int32_t eltwise_int(uint8_t op, int32_t a, int32_t b, uint8_t dtype) {
  const int64_t x = a;
  const int64_t y = b;
  switch (op) {
    case NPU_ELTWISE_ADD:
      return detail::to_dtype(x + y, dtype);
    case NPU_ELTWISE_SUB:
      return detail::to_dtype(x - y, dtype);
    case NPU_ELTWISE_MUL:
      return detail::to_dtype(x * y, dtype);  // |x*y| <= 2^62: exact
    case NPU_ELTWISE_DIV:
      return detail::to_dtype(y == 0 ? 0 : x / y, dtype);  // INT32_MIN/-1
    case NPU_ELTWISE_MAX:
      return detail::to_dtype(x > y ? x : y, dtype);  // wraps back
    case NPU_ELTWISE_MIN:
      return detail::to_dtype(x < y ? x : y, dtype);
    default:
      return 0;
  }
}

}  // namespace npu::ref
