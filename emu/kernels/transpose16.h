// transpose16: a 16 x 16 matrix of 32-bit elements (16 AVX-512 registers) transposed in
// registers, for packing GEMM panels (fp32 weights, and int8 weights in groups of 4 bytes).
// Pure function; only for code compiled with the AVX-512 target it names (cpu_isa.h).
#pragma once

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

namespace npu::emu::kern {

/// Transposes 16 rows of 16 floats in registers: r[i][c] -> r[c][i] (unpack, then 128-bit
/// shuffles within lanes, then lane shuffles twice).
[[gnu::target("avx512f,avx512vl,avx2,fma"), gnu::always_inline]] inline void transpose16(
    __m512 r[16]) {
  __m512 t[16], u[16];
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);      // per lane: a0 b0 a1 b1
    t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);  // a2 b2 a3 b3
  }
  for (int i = 0; i < 16; i += 4) {  // per lane: element c of rows i..i+3
    u[i] = _mm512_shuffle_ps(t[i], t[i + 2], 0x44);
    u[i + 1] = _mm512_shuffle_ps(t[i], t[i + 2], 0xEE);
    u[i + 2] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0x44);
    u[i + 3] = _mm512_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
  }
  // u[4q + c] holds, in lane L, column 4L + c of rows 4q..4q+3.
  for (int c = 0; c < 4; ++c) {
    const __m512 v0 = _mm512_shuffle_f32x4(u[c], u[4 + c], 0x88);       // cols c, c+8; rows 0-7
    const __m512 v1 = _mm512_shuffle_f32x4(u[c], u[4 + c], 0xDD);       // cols c+4, c+12
    const __m512 v2 = _mm512_shuffle_f32x4(u[8 + c], u[12 + c], 0x88);  // rows 8-15
    const __m512 v3 = _mm512_shuffle_f32x4(u[8 + c], u[12 + c], 0xDD);
    r[c] = _mm512_shuffle_f32x4(v0, v2, 0x88);
    r[c + 8] = _mm512_shuffle_f32x4(v0, v2, 0xDD);
    r[c + 4] = _mm512_shuffle_f32x4(v1, v3, 0x88);
    r[c + 12] = _mm512_shuffle_f32x4(v1, v3, 0xDD);
  }
}

}  // namespace npu::emu::kern
#endif
