// Half-precision element types (NPU_DTYPE_FP16, NPU_DTYPE_BF16) as bit patterns: conversion to
// and from fp32, defined once for the reference arithmetic, the emulator's kernels, the
// compiler (weights converted once) and the host operators. Widening is exact; narrowing
// rounds to nearest, ties to even, overflows to +-inf and keeps a NaN a (quiet) NaN. Pure
// functions, no state.
#pragma once

#include <bit>
#include <cstdint>

#include "npu_isa.h"

namespace npu::isa {

/// fp16 bits -> fp32 (exact; subnormals included).
constexpr float fp16_to_fp32(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t man = h & 0x3ffu;
  if (exp == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (man << 13));  // inf, NaN
  if (exp != 0) return std::bit_cast<float>(sign | ((exp + 112) << 23) | (man << 13));
  if (man == 0) return std::bit_cast<float>(sign);  // +-0
  // Subnormal: normalize the mantissa.
  uint32_t e = 113;
  while ((man & 0x400u) == 0) man <<= 1, --e;
  return std::bit_cast<float>(sign | (e << 23) | ((man & 0x3ffu) << 13));
}

/// fp32 -> fp16 bits, round to nearest even.
constexpr uint16_t fp32_to_fp16(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  const uint16_t sign = uint16_t((x >> 16) & 0x8000u);
  const uint32_t abs = x & 0x7fffffffu;
  if (abs > 0x7f800000u) return uint16_t(sign | 0x7e00u | ((abs >> 13) & 0x3ffu));  // NaN
  if (abs >= 0x477ff000u) return uint16_t(sign | 0x7c00u);  // rounds to >= 65520: inf
  if (abs < 0x38800000u) {               // below the smallest normal (2^-14): subnormal or zero
    if (abs < 0x33000000u) return sign;  // below half the smallest subnormal (2^-25)
    const uint32_t e = abs >> 23, man = (abs & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126 - e;  // 14..24: value = man * 2^(e-150), unit 2^-24
    uint32_t q = man >> shift;
    const uint32_t rem = man & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (q & 1u))) ++q;
    return uint16_t(sign | q);
  }
  uint32_t r = abs - 0x38000000u;  // rebias the exponent (127 -> 15)
  const uint32_t rem = r & 0x1fffu;
  r >>= 13;
  if (rem > 0x1000u || (rem == 0x1000u && (r & 1u))) ++r;  // carry may bump the exponent
  return uint16_t(sign | r);
}

/// bf16 bits -> fp32 (exact).
constexpr float bf16_to_fp32(uint16_t h) {
  return std::bit_cast<float>(uint32_t(h) << 16);
}

/// fp32 -> bf16 bits, round to nearest even.
constexpr uint16_t fp32_to_bf16(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return uint16_t((x >> 16) | 0x40u);  // quiet NaN
  const uint32_t r = x + 0x7fffu + ((x >> 16) & 1u);
  return uint16_t(r >> 16);
}

/// Widens a half element of `dtype` (NPU_DTYPE_FP16 or NPU_DTYPE_BF16) to fp32.
constexpr float half_to_fp32(uint8_t dtype, uint16_t h) {
  return dtype == NPU_DTYPE_BF16 ? bf16_to_fp32(h) : fp16_to_fp32(h);
}
/// Narrows fp32 to a half element of `dtype` (NPU_DTYPE_FP16 or NPU_DTYPE_BF16).
constexpr uint16_t fp32_to_half(uint8_t dtype, float f) {
  return dtype == NPU_DTYPE_BF16 ? fp32_to_bf16(f) : fp32_to_fp16(f);
}

}  // namespace npu::isa
