// Bulk conversion between fp32 and the half element types (NPU_DTYPE_FP16, NPU_DTYPE_BF16) for
// the engines' hot loops: the DMA's dtype conversion on load and store, the matrix engine's
// widening of half operands and narrowing of half outputs. Every element comes out bit for bit
// as npu/isa/half.h's scalar functions give it (round to nearest even, overflow to infinity,
// a NaN stays a quiet NaN with its payload's top bits); the arrays are only done faster: F16C
// conversions and AVX-512 integer rounding where the CPU has them (chosen at run time), the
// scalar functions otherwise. Pure functions, no state; any thread.
#pragma once

#include <cstddef>
#include <cstdint>

namespace npu::emu::kern {

/// dst[i] = isa::half_to_fp32(dtype, src[i]) for i < n: n contiguous half elements into n
/// contiguous floats. Neither pointer needs any alignment (SRAM and DRAM bytes).
void widen_half(const std::byte* src, uint8_t dtype, size_t n, std::byte* dst);
inline void widen_half(const std::byte* src, uint8_t dtype, size_t n, float* dst) {
  widen_half(src, dtype, n, reinterpret_cast<std::byte*>(dst));
}

/// dst[i] = isa::fp32_to_half(dtype, src[i]) for i < n: n contiguous floats into n contiguous
/// half elements. Neither pointer needs any alignment.
void narrow_half(const std::byte* src, uint8_t dtype, size_t n, std::byte* dst);
inline void narrow_half(const float* src, uint8_t dtype, size_t n, std::byte* dst) {
  narrow_half(reinterpret_cast<const std::byte*>(src), dtype, n, dst);
}

/// The matrix engine's float output stage for a half output row, in one pass: dst[i] =
/// isa::fp32_to_half(dtype, y) where y = acc[i] (+ bias[i] unless bias is null), then
/// y < lo ? lo : y, then y > hi ? hi : y. Called once per output row of every half-output
/// convolution and matrix product (a compiler's 16- to 48-channel slices: ResNet-50 fp16 made
/// about 400,000 short narrow_half calls per inference through a buffer).
void narrow_half_clamped(const float* acc, const float* bias, float lo, float hi, uint8_t dtype,
                         size_t n, std::byte* dst);

/// Which implementation the functions use on this CPU ("avx512", "f16c" or "scalar"), and
/// a switch for tests that compare them: with `force_scalar` the scalar loops run everywhere.
const char* half_convert_isa();
void set_half_convert_scalar(bool force_scalar);

}  // namespace npu::emu::kern
