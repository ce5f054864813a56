// widen_half / narrow_half (half_convert.h): F16C and AVX-512 loops, the scalar ones of
// npu/isa/half.h as the fallback and for the tails.
//
// Why the vector paths give the scalar bits: VCVTPH2PS widens exactly (subnormals included)
// except that it quiets a signaling NaN, so a block holding one is left to the scalar loop;
// VCVTPS2PH with imm 0 rounds to nearest even, overflows to infinity and turns a NaN into
// sign | 0x7e00 | its top ten mantissa bits, which is fp32_to_fp16's rule. bf16 has no such
// instruction that keeps subnormals (VCVTNEPS2BF16 flushes them), so it is fp32_to_bf16's
// integer rounding written with AVX-512 integer operations. HalfConvert.* checks every fp16
// pattern and a sweep of fp32 patterns against the scalar functions.
#include "half_convert.h"

// GCC 12 warns that the _mm512_undefined_* placeholders inside its own intrinsics headers
// "may be used uninitialized" (a false positive of the masked conversions used here).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <cpuid.h>
#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <cstring>

#include "npu/isa/half.h"
#include "npu_isa.h"

namespace npu::emu::kern {
namespace {

enum class HalfIsa { kScalar, kF16c, kAvx512 };

/// CPUID.1:ECX bit 29 (clang's __builtin_cpu_supports does not know "f16c").
bool has_f16c() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  return __get_cpuid(1, &a, &b, &c, &d) != 0 && (c & (1u << 29)) != 0;
}

HalfIsa detect_half_isa() {
  if (!has_f16c()) return HalfIsa::kScalar;
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl"))
    return HalfIsa::kAvx512;
  if (__builtin_cpu_supports("avx2")) return HalfIsa::kF16c;
  return HalfIsa::kScalar;
}

std::atomic<bool> g_force_scalar{false};

HalfIsa half_isa() {
  static const HalfIsa detected = detect_half_isa();
  return g_force_scalar.load(std::memory_order_relaxed) ? HalfIsa::kScalar : detected;
}

uint16_t ld16(const std::byte* p, size_t i) {
  uint16_t v;
  std::memcpy(&v, p + 2 * i, 2);
  return v;
}
void st16(std::byte* p, size_t i, uint16_t v) {
  std::memcpy(p + 2 * i, &v, 2);
}

void widen_scalar(const std::byte* src, uint8_t dtype, size_t from, size_t n, std::byte* dst) {
  for (size_t i = from; i < n; ++i) {
    const float f = isa::half_to_fp32(dtype, ld16(src, i));
    std::memcpy(dst + 4 * i, &f, 4);
  }
}
void narrow_scalar(const std::byte* src, uint8_t dtype, size_t from, size_t n, std::byte* dst) {
  for (size_t i = from; i < n; ++i) {
    float f;
    std::memcpy(&f, src + 4 * i, 4);
    st16(dst, i, isa::fp32_to_half(dtype, f));
  }
}

// ---------------------------------------------------------------------------------- F16C

[[gnu::target("avx2,f16c")]] size_t widen_fp16_f16c(const std::byte* src, size_t n,
                                                    std::byte* dst) {
  const __m256i quiet_exp = _mm256_set1_epi32(0x7e00), snan_exp = _mm256_set1_epi32(0x7c00);
  const __m256i man = _mm256_set1_epi32(0x3ff), zero = _mm256_setzero_si256();
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 2 * i));
    const __m256i x = _mm256_cvtepu16_epi32(h);
    const __m256i snan =
        _mm256_andnot_si256(_mm256_cmpeq_epi32(_mm256_and_si256(x, man), zero),
                            _mm256_cmpeq_epi32(_mm256_and_si256(x, quiet_exp), snan_exp));
    if (!_mm256_testz_si256(snan, snan)) break;  // signaling NaNs: see widen_avx512
    _mm256_storeu_ps(reinterpret_cast<float*>(dst + 4 * i), _mm256_cvtph_ps(h));
  }
  return i;
}

[[gnu::target("avx2,f16c")]] size_t narrow_fp16_f16c(const std::byte* src, size_t n,
                                                     std::byte* dst) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(reinterpret_cast<const float*>(src + 4 * i)),
                                      _MM_FROUND_TO_NEAREST_INT);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + 2 * i), h);
  }
  return i;
}

// ------------------------------------------------------------------------------- AVX-512
/// Lanes past `left` masked off.
inline __mmask16 mask16(size_t left) {
  return static_cast<__mmask16>(left >= 16 ? 0xffff : (1u << left) - 1);
}

// Whole arrays, the last partial vector masked (a compiler's 16- and 24-channel slices narrowed
// 8 of every 24 outputs in the scalar loop).
[[gnu::target("avx512f,avx512bw,avx512vl,f16c")]] size_t widen_avx512(const std::byte* src,
                                                                      uint8_t dtype, size_t n,
                                                                      std::byte* dst) {
  size_t i = 0;
  if (dtype == NPU_DTYPE_BF16) {
    for (; i + 16 <= n; i += 16) {  // unmasked: masked stores cost more on some CPUs
      const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + 2 * i));
      _mm512_storeu_si512(dst + 4 * i, _mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
    }
    for (; i < n; i += 16) {
      const __mmask16 m = mask16(n - i);
      const __m256i h = _mm256_maskz_loadu_epi16(m, src + 2 * i);
      const __m512i w = _mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16);
      _mm512_mask_storeu_ps(dst + 4 * i, m, _mm512_castsi512_ps(w));
    }
    return n;
  }
  // VCVTPH2PS quiets a signaling NaN; fp16_to_fp32 keeps its bits. Whole blocks of 32 first,
  // unmasked, tested as 16-bit lanes; a block that holds a signaling NaN, and the tail, go to
  // the masked loop, whose first such block ends it and leaves the rest to the scalar loop
  // (NaNs are rare).
  const __m512i quiet_exp16 = _mm512_set1_epi16(0x7e00), snan_exp16 = _mm512_set1_epi16(0x7c00);
  const __m512i man16 = _mm512_set1_epi16(0x3ff);
  for (; i + 32 <= n; i += 32) {
    const __m512i h = _mm512_loadu_si512(src + 2 * i);
    if (_mm512_mask_cmpeq_epi16_mask(_mm512_test_epi16_mask(h, man16),
                                     _mm512_and_si512(h, quiet_exp16), snan_exp16) != 0)
      break;  // the loop below finds it
    _mm512_storeu_ps(dst + 4 * i, _mm512_cvtph_ps(_mm512_castsi512_si256(h)));
    _mm512_storeu_ps(dst + 4 * i + 64, _mm512_cvtph_ps(_mm512_extracti64x4_epi64(h, 1)));
  }
  const __m512i quiet_exp = _mm512_set1_epi32(0x7e00), snan_exp = _mm512_set1_epi32(0x7c00);
  const __m512i man = _mm512_set1_epi32(0x3ff);
  for (; i < n; i += 16) {
    const __mmask16 m = mask16(n - i);
    const __m256i h = _mm256_maskz_loadu_epi16(m, src + 2 * i);
    const __m512i x = _mm512_cvtepu16_epi32(h);
    if (_mm512_mask_cmpeq_epi32_mask(_mm512_test_epi32_mask(x, man), _mm512_and_si512(x, quiet_exp),
                                     snan_exp) != 0)
      return i;
    _mm512_mask_storeu_ps(dst + 4 * i, m, _mm512_cvtph_ps(h));
  }
  return n;
}

/// 16 floats as half elements of `dtype`: VCVTPS2PH for fp16; for bf16 fp32_to_bf16's integer
/// rounding (to nearest even on the top half, a NaN keeps its top bits and is made quiet).
[[gnu::target("avx512f,avx512bw,avx512vl,f16c"), gnu::always_inline]] inline __m256i to_half16(
    __m512 v, uint8_t dtype) {
  if (dtype != NPU_DTYPE_BF16)
    return _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  const __m512i x = _mm512_castps_si512(v);
  const __m512i hi = _mm512_srli_epi32(x, 16);
  // Round to nearest even: x + 0x7fff + (bit 16 of x), then the top half.
  const __m512i rounded =
      _mm512_srli_epi32(_mm512_add_epi32(_mm512_add_epi32(x, _mm512_set1_epi32(0x7fff)),
                                         _mm512_and_si512(hi, _mm512_set1_epi32(1))),
                        16);
  const __mmask16 nan = _mm512_cmpgt_epu32_mask(_mm512_and_si512(x, _mm512_set1_epi32(0x7fffffff)),
                                                _mm512_set1_epi32(0x7f800000));
  return _mm512_cvtepi32_epi16(_mm512_mask_or_epi32(rounded, nan, hi, _mm512_set1_epi32(0x40)));
}

[[gnu::target("avx512f,avx512bw,avx512vl,f16c")]] size_t narrow_avx512(const std::byte* src,
                                                                       uint8_t dtype, size_t n,
                                                                       std::byte* dst) {
  size_t i = 0;
  for (; i + 16 <= n; i += 16)  // unmasked: masked stores cost more on some CPUs
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + 2 * i),
                        to_half16(_mm512_loadu_ps(src + 4 * i), dtype));
  if (i < n) {
    const __mmask16 m = mask16(n - i);
    _mm256_mask_storeu_epi16(dst + 2 * i, m,
                             to_half16(_mm512_maskz_loadu_ps(m, src + 4 * i), dtype));
  }
  return n;
}

/// Bias, clamp and rounding of the `m` lanes of 16 accumulators at i.
[[gnu::target("avx512f,avx512bw,avx512vl,f16c"), gnu::always_inline]] inline __m256i clamped16(
    const float* acc, const float* bias, __m512 vlo, __m512 vhi, uint8_t dtype, size_t i,
    __mmask16 m) {
  __m512 y = _mm512_maskz_loadu_ps(m, acc + i);
  if (bias != nullptr) y = _mm512_add_ps(y, _mm512_maskz_loadu_ps(m, bias + i));
  // y < lo ? lo : y, then y > hi ? hi : y: ordered compares, so a NaN stays.
  y = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(y, vlo, _CMP_LT_OQ), y, vlo);
  y = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(y, vhi, _CMP_GT_OQ), y, vhi);
  return to_half16(y, dtype);
}

/// narrow_half_clamped in one pass: bias, clamp and rounding in registers.
[[gnu::target("avx512f,avx512bw,avx512vl,f16c")]] void narrow_clamped_avx512(
    const float* acc, const float* bias, float lo, float hi, uint8_t dtype, size_t n,
    std::byte* dst) {
  const __m512 vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
  size_t i = 0;
  for (; i + 16 <= n; i += 16)  // unmasked stores (an all-ones load mask costs nothing)
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + 2 * i),
                        clamped16(acc, bias, vlo, vhi, dtype, i, 0xffff));
  if (i < n) {
    const __mmask16 m = mask16(n - i);
    _mm256_mask_storeu_epi16(dst + 2 * i, m, clamped16(acc, bias, vlo, vhi, dtype, i, m));
  }
}

}  // namespace

void widen_half(const std::byte* src, uint8_t dtype, size_t n, std::byte* dst) {
  size_t done = 0;
  switch (half_isa()) {
    case HalfIsa::kAvx512:
      done = widen_avx512(src, dtype, n, dst);
      break;
    case HalfIsa::kF16c:
      if (dtype != NPU_DTYPE_BF16) done = widen_fp16_f16c(src, n, dst);
      break;
    case HalfIsa::kScalar:
      break;
  }
  widen_scalar(src, dtype, done, n, dst);
}

void narrow_half(const std::byte* src, uint8_t dtype, size_t n, std::byte* dst) {
  size_t done = 0;
  switch (half_isa()) {
    case HalfIsa::kAvx512:
      done = narrow_avx512(src, dtype, n, dst);
      break;
    case HalfIsa::kF16c:
      if (dtype != NPU_DTYPE_BF16) done = narrow_fp16_f16c(src, n, dst);
      break;
    case HalfIsa::kScalar:
      break;
  }
  narrow_scalar(src, dtype, done, n, dst);
}

void narrow_half_clamped(const float* acc, const float* bias, float lo, float hi, uint8_t dtype,
                         size_t n, std::byte* dst) {
  if (half_isa() == HalfIsa::kAvx512)
    return narrow_clamped_avx512(acc, bias, lo, hi, dtype, n, dst);
  constexpr size_t kChunk = 256;
  float y[kChunk];
  for (size_t j0 = 0; j0 < n; j0 += kChunk) {
    const size_t c = std::min(kChunk, n - j0);
    for (size_t j = 0; j < c; ++j) {
      float v = bias != nullptr ? acc[j0 + j] + bias[j0 + j] : acc[j0 + j];
      v = v < lo ? lo : v;
      y[j] = v > hi ? hi : v;
    }
    narrow_half(y, dtype, c, dst + 2 * j0);
  }
}

const char* half_convert_isa() {
  switch (half_isa()) {
    case HalfIsa::kAvx512:
      return "avx512";
    case HalfIsa::kF16c:
      return "f16c";
    case HalfIsa::kScalar:
      break;
  }
  return "scalar";
}

void set_half_convert_scalar(bool force_scalar) {
  g_force_scalar.store(force_scalar, std::memory_order_relaxed);
}

}  // namespace npu::emu::kern
