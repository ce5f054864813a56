// fp32 exp and sigmoid over arrays (exp_f32.h): glibc's expf replayed 8 lanes at a time in
// double precision (four such groups in flight), checked against the C library once before it
// is used.
#include "exp_f32.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "cpu_isa.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define NPU_KERN_X86 1
#include <immintrin.h>
#endif

namespace npu::emu::kern {
namespace {

float scalar_exp(float x) {
  return std::exp(x);
}
float scalar_sigmoid(float x) {
  return 1.0f / (1.0f + std::exp(-x));
}

#ifdef NPU_KERN_X86
// glibc's __exp2f_data for expf (N = 32): 2^(i/32) with the low bits of the exponent cleared
// for the shift trick, N/ln2, the cubic's coefficients and the rounding shift 1.5 * 2^52.
constexpr uint64_t kTable[32] = {
    0x3ff0000000000000, 0x3fefd9b0d3158574, 0x3fefb5586cf9890f, 0x3fef9301d0125b51,
    0x3fef72b83c7d517b, 0x3fef54873168b9aa, 0x3fef387a6e756238, 0x3fef1e9df51fdee1,
    0x3fef06fe0a31b715, 0x3feef1a7373aa9cb, 0x3feedea64c123422, 0x3feece086061892d,
    0x3feebfdad5362a27, 0x3feeb42b569d4f82, 0x3feeab07dd485429, 0x3feea47eb03a5585,
    0x3feea09e667f3bcd, 0x3fee9f75e8ec5f74, 0x3feea11473eb0187, 0x3feea589994cce13,
    0x3feeace5422aa0db, 0x3feeb737b0cdc5e5, 0x3feec49182a3f090, 0x3feed503b23e255d,
    0x3feee89f995ad3ad, 0x3feeff76f2fb5e47, 0x3fef199bdd85529c, 0x3fef3720dcef9069,
    0x3fef5818dcfba487, 0x3fef7c97337b9b5f, 0x3fefa4afa2a490da, 0x3fefd0765b6e4540};
constexpr uint64_t kInvLn2N = 0x40471547652b82fe, kC0 = 0x3ebc6af84b912394,
                   kC1 = 0x3f2ebfce50fac4f3, kC2 = 0x3f962e42ff0c52d6, kShift = 0x4338000000000000;
/// top12(88.0f): from here on (and for infinities and NaN) glibc takes its special paths.
constexpr uint32_t kSpecialTop = 0x42a;

#define NPU_EXP512 "avx512f,avx512bw,avx512vl,avx512dq,avx2,fma"

/// expf of 8 floats (none special): as glibc's FMA build computes it.
[[gnu::target(NPU_EXP512), gnu::always_inline]] inline __m256 exp8(__m256 x) {
  const __m512d xd = _mm512_cvtps_pd(x);
  const __m512d inv = _mm512_set1_pd(std::bit_cast<double>(kInvLn2N));
  const __m512d shift = _mm512_set1_pd(std::bit_cast<double>(kShift));
  __m512d kd = _mm512_fmadd_pd(inv, xd, shift);  // k in the low bits of kd
  const __m512i ki = _mm512_castpd_si512(kd);
  kd = _mm512_sub_pd(kd, shift);
  const __m512d r = _mm512_fmsub_pd(inv, xd, kd);  // x * 32 / ln2 - k
  // s = 2^(k/32): T[k % 32] with k / 32 added to its exponent.
  const auto* tab = reinterpret_cast<const long long*>(kTable);
  const __m512i lo =
      _mm512_permutex2var_epi64(_mm512_loadu_si512(tab), ki, _mm512_loadu_si512(tab + 8));
  const __m512i hi =
      _mm512_permutex2var_epi64(_mm512_loadu_si512(tab + 16), ki, _mm512_loadu_si512(tab + 24));
  __m512i t = _mm512_mask_blend_epi64(_mm512_test_epi64_mask(ki, _mm512_set1_epi64(16)), lo, hi);
  t = _mm512_add_epi64(t, _mm512_slli_epi64(ki, 47));
  const __m512d s = _mm512_castsi512_pd(t);
  const __m512d z = _mm512_fmadd_pd(_mm512_set1_pd(std::bit_cast<double>(kC0)), r,
                                    _mm512_set1_pd(std::bit_cast<double>(kC1)));
  const __m512d r2 = _mm512_mul_pd(r, r);
  __m512d y = _mm512_fmadd_pd(r, _mm512_set1_pd(std::bit_cast<double>(kC2)), _mm512_set1_pd(1.0));
  y = _mm512_fmadd_pd(z, r2, y);
  return _mm512_cvtpd_ps(_mm512_mul_pd(y, s));
}

/// Lanes of x (up to `valid`) that glibc handles on its special paths.
[[gnu::target(NPU_EXP512), gnu::always_inline]] inline __mmask8 special8(__m256 x) {
  const __m256i top =
      _mm256_and_si256(_mm256_srli_epi32(_mm256_castps_si256(x), 20), _mm256_set1_epi32(0x7ff));
  return _mm256_cmpgt_epi32_mask(top, _mm256_set1_epi32(static_cast<int>(kSpecialTop)));
}

/// f over n floats, 8 at a time: the vector rule, then the scalar one for special lanes.
template <bool kSigmoid>
[[gnu::target(NPU_EXP512)]] void run8(const std::byte* x, std::byte* y, size_t n) {
  const __m256 one = _mm256_set1_ps(1.0f);
  for (size_t i = 0; i < n; i += 8) {
    const size_t len = std::min<size_t>(8, n - i);
    const auto m = static_cast<__mmask8>((1u << len) - 1);
    const __m256 xv = _mm256_maskz_loadu_ps(m, x + i * 4);
    const __m256 arg = kSigmoid ? _mm256_xor_ps(xv, _mm256_set1_ps(-0.0f)) : xv;  // -x
    const __m256 e = exp8(arg);
    const __m256 r = kSigmoid ? _mm256_div_ps(one, _mm256_add_ps(one, e)) : e;
    const __mmask8 special = special8(arg) & m;
    if (special == 0) {
      _mm256_mask_storeu_ps(y + i * 4, m, r);
      continue;
    }
    alignas(32) float in[8], out[8];
    _mm256_store_ps(in, xv);
    _mm256_store_ps(out, r);
    for (size_t l = 0; l < len; ++l)
      if ((special >> l) & 1) out[l] = kSigmoid ? scalar_sigmoid(in[l]) : scalar_exp(in[l]);
    _mm256_mask_storeu_ps(y + i * 4, m, _mm256_load_ps(out));
  }
}
/// f over n floats as run8 computes it, 32 at a time: four independent exp8 chains keep both
/// vector ports busy (one chain left them waiting on each other's latency: 0.95 ns per sigmoid
/// against 0.71-0.80 in a microbenchmark of EfficientNet-B0's 401,408-element swish), and
/// a block with a special lane, and the tail, go through run8 (the same bits either way).
template <bool kSigmoid>
[[gnu::target(NPU_EXP512)]] void run32(const std::byte* x, std::byte* y, size_t n) {
  constexpr size_t kChains = 4;
  const __m256 one = _mm256_set1_ps(1.0f);
  size_t i = 0;
  for (; i + 8 * kChains <= n; i += 8 * kChains) {
    __m256 r[kChains];
    __mmask8 special = 0;
#pragma GCC unroll 4
    for (size_t k = 0; k < kChains; ++k) {
      const __m256 xv = _mm256_loadu_ps(reinterpret_cast<const float*>(x + (i + 8 * k) * 4));
      const __m256 arg = kSigmoid ? _mm256_xor_ps(xv, _mm256_set1_ps(-0.0f)) : xv;
      const __m256 e = exp8(arg);
      r[k] = kSigmoid ? _mm256_div_ps(one, _mm256_add_ps(one, e)) : e;
      special |= special8(arg);
    }
    if (special != 0) {
      run8<kSigmoid>(x + i * 4, y + i * 4, 8 * kChains);
      continue;
    }
#pragma GCC unroll 4
    for (size_t k = 0; k < kChains; ++k)
      _mm256_storeu_ps(reinterpret_cast<float*>(y + (i + 8 * k) * 4), r[k]);
  }
  if (i < n) run8<kSigmoid>(x + i * 4, y + i * 4, n - i);
}
#undef NPU_EXP512

/// Whether the vector loop gives std::exp's bits on 4096 + 256 inputs: every 1048577th float
/// bit pattern (all exponents, both signs, NaN and infinity included) and the neighbourhoods
/// of the special thresholds (a first inference pays for it: about 0.1 ms).
bool agrees_with_libm() {
  std::vector<float> xs(4096 + 4 * 64), got(xs.size());
  size_t n = 0;
  for (uint32_t i = 0; i < 4096; ++i) xs[n++] = std::bit_cast<float>(i * 1048577u);
  for (const float edge : {88.0f, 88.72283f, -103.27893f, -103.97208f})
    for (int d = -32; d < 32; ++d)
      xs[n++] = std::bit_cast<float>(
          static_cast<uint32_t>(static_cast<int64_t>(std::bit_cast<uint32_t>(edge)) + d));
  run32<false>(reinterpret_cast<const std::byte*>(xs.data()),
               reinterpret_cast<std::byte*>(got.data()), n);
  for (size_t i = 0; i < n; ++i) {
    const float want = scalar_exp(xs[i]);
    if (std::bit_cast<uint32_t>(want) != std::bit_cast<uint32_t>(got[i])) return false;
  }
  return true;
}
#endif

template <bool kSigmoid>
void apply(const std::byte* x, std::byte* y, size_t n) {
#ifdef NPU_KERN_X86
  if (exp_f32_vectorized()) return run32<kSigmoid>(x, y, n);
#endif
  for (size_t i = 0; i < n; ++i) {
    float v;
    std::memcpy(&v, x + i * 4, 4);
    v = kSigmoid ? scalar_sigmoid(v) : scalar_exp(v);
    std::memcpy(y + i * 4, &v, 4);
  }
}

}  // namespace

bool exp_f32_vectorized() {
#ifdef NPU_KERN_X86
  if (!isa_at_least(Isa::Avx512)) return false;
  static const bool agrees = agrees_with_libm();
  return agrees;
#else
  return false;
#endif
}

void exp_f32(const std::byte* x, std::byte* y, size_t n) {
  apply<false>(x, y, n);
}

void sigmoid_f32(const std::byte* x, std::byte* y, size_t n) {
  apply<true>(x, y, n);
}

}  // namespace npu::emu::kern
