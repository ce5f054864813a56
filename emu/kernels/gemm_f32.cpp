// fp32 GEMM tile kernels: broadcast-A x panel-B register tiles written with GCC vector
// extensions, instantiated per ISA (AVX2+FMA: 6x16, baseline SSE2: 4x8; AVX-512: panels of 16,
// 32 or 48 columns, whichever pads B least, each with row tiles of several heights, whichever
// pads the GEMM's rows least: a compiler's slices of 7 x 7 pixels, m = 49, computed 56 rows
// with 8-row tiles; a wider panel shares each broadcast A element among more FMAs). Every tile
// computes each output as the same FMA chain over k, so the choice does not change a bit.
// This file is compiled with -ffp-contract=fast so that c += a * b becomes an FMA.
#include <algorithm>
#include <cstring>
#include <vector>

#include "gemm.h"
#include "half_convert.h"
#include "npu_isa.h"
#include "transpose16.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define NPU_KERN_X86 1
#include <immintrin.h>
#endif

namespace npu::emu::kern {
namespace {

typedef float V4 __attribute__((vector_size(16)));   // NOLINT
typedef float V8 __attribute__((vector_size(32)));   // NOLINT
typedef float V16 __attribute__((vector_size(64)));  // NOLINT

/// The MR x (NV vectors) accumulators of one row tile: loaded from C (or zero), updated one k
/// step at a time as acc[i] += A[i][k] * panel[k] (an FMA: this file contracts), stored back.
template <class V, size_t MR, size_t NV>
struct Tile {
  static constexpr size_t L = sizeof(V) / sizeof(float);
  static constexpr size_t NR = L * NV;
  V acc[MR][NV];

  [[gnu::always_inline]] void load(const float* c, size_t ldc, bool accumulate) {
#pragma GCC unroll 16
    for (size_t i = 0; i < MR; ++i)
#pragma GCC unroll 4
      for (size_t v = 0; v < NV; ++v) {
        if (accumulate)
          std::memcpy(&acc[i][v], c + i * ldc + v * L, sizeof(V));
        else
          acc[i][v] = V{};
      }
  }
  /// One k step: `prow` is the panel's row k, a(i) row i's element k of A.
  template <class A>
  [[gnu::always_inline]] void step(const float* prow, A&& a) {
    V b[NV];
#pragma GCC unroll 4
    for (size_t v = 0; v < NV; ++v) std::memcpy(&b[v], prow + v * L, sizeof(V));
#pragma GCC unroll 16
    for (size_t i = 0; i < MR; ++i) {
      const float x = a(i);
#pragma GCC unroll 4
      for (size_t v = 0; v < NV; ++v) acc[i][v] += b[v] * x;
    }
  }
  [[gnu::always_inline]] void store(float* c, size_t ldc) const {
#pragma GCC unroll 16
    for (size_t i = 0; i < MR; ++i)
#pragma GCC unroll 4
      for (size_t v = 0; v < NV; ++v) std::memcpy(c + i * ldc + v * L, &acc[i][v], sizeof(V));
  }
};

template <class V, size_t MR, size_t NV>
[[gnu::always_inline]] inline void block_impl(const float* a, size_t lda, size_t rows,
                                              const float* panel, size_t kc, float* c, size_t ldc,
                                              bool accumulate) {
  using T = Tile<V, MR, NV>;
  for (size_t r0 = 0; r0 < rows; r0 += MR) {
    T tile;
    tile.load(c + r0 * ldc, ldc, accumulate);
    const float* ar = a + r0 * lda;
#pragma GCC unroll 4  // fewer loop steps per FMA: 4-6% on 16-column tiles (microbenchmark)
    for (size_t k = 0; k < kc; ++k)
      tile.step(panel + k * T::NR, [&](size_t i) { return ar[i * lda + k]; });
    tile.store(c + r0 * ldc, ldc);
  }
}

/// block_impl for one row tile whose rows are read where they lie, tap by tap (F32Kernel::taps).
template <class V, size_t MR, size_t NV>
[[gnu::always_inline]] inline void taps_impl(const float* const* runs, size_t ld, size_t taps,
                                             size_t kc, const float* panel, float* c, size_t ldc,
                                             bool accumulate) {
  using T = Tile<V, MR, NV>;
  T tile;
  tile.load(c, ldc, accumulate);
  for (size_t t = 0; t < taps; ++t) {
    const float* r[MR];
#pragma GCC unroll 16
    for (size_t i = 0; i < MR; ++i) r[i] = runs[t * ld + i];
    const float* pt = panel + t * kc * T::NR;
#pragma GCC unroll 4  // as in block_impl
    for (size_t k = 0; k < kc; ++k) tile.step(pt + k * T::NR, [&](size_t i) { return r[i][k]; });
  }
  tile.store(c, ldc);
}

template <size_t MR, size_t NV>
void block_sse(const float* a, size_t lda, size_t rows, const float* panel, size_t kc, float* c,
               size_t ldc, bool accumulate) {
  block_impl<V4, MR, NV>(a, lda, rows, panel, kc, c, ldc, accumulate);
}
template <size_t MR, size_t NV>
void taps_sse(const float* const* runs, size_t ld, size_t taps, size_t kc, const float* panel,
              float* c, size_t ldc, bool accumulate) {
  taps_impl<V4, MR, NV>(runs, ld, taps, kc, panel, c, ldc, accumulate);
}
constexpr F32Tile kSseTiles[] = {{4, block_sse<4, 2>, taps_sse<4, 2>}};
constexpr F32Kernel kSse{8, kSseTiles};

#ifdef NPU_KERN_X86
template <size_t MR, size_t NV>
[[gnu::target("avx2,fma")]] void block_avx2(const float* a, size_t lda, size_t rows,
                                            const float* panel, size_t kc, float* c, size_t ldc,
                                            bool accumulate) {
  block_impl<V8, MR, NV>(a, lda, rows, panel, kc, c, ldc, accumulate);
}
template <size_t MR, size_t NV>
[[gnu::target("avx2,fma")]] void taps_avx2(const float* const* runs, size_t ld, size_t taps,
                                           size_t kc, const float* panel, float* c, size_t ldc,
                                           bool accumulate) {
  taps_impl<V8, MR, NV>(runs, ld, taps, kc, panel, c, ldc, accumulate);
}
constexpr F32Tile kAvx2Tiles[] = {{6, block_avx2<6, 2>, taps_avx2<6, 2>}};
constexpr F32Kernel kAvx2{16, kAvx2Tiles};

template <size_t MR, size_t NV>
[[gnu::target("avx512f,avx512vl,avx2,fma")]] void block_avx512(const float* a, size_t lda,
                                                               size_t rows, const float* panel,
                                                               size_t kc, float* c, size_t ldc,
                                                               bool accumulate) {
  block_impl<V16, MR, NV>(a, lda, rows, panel, kc, c, ldc, accumulate);
}
template <size_t MR, size_t NV>
[[gnu::target("avx512f,avx512vl,avx2,fma")]] void taps_avx512(const float* const* runs, size_t ld,
                                                              size_t taps, size_t kc,
                                                              const float* panel, float* c,
                                                              size_t ldc, bool accumulate) {
  taps_impl<V16, MR, NV>(runs, ld, taps, kc, panel, c, ldc, accumulate);
}
template <size_t MR, size_t NV>
constexpr F32Tile kAvx512Tile{MR, block_avx512<MR, NV>, taps_avx512<MR, NV>};

// AVX-512 panels of 16, 32 and 48 columns (the compiler slices output channels by 16 and 48).
// A 16-column tile does one multiply-add per broadcast A element, and more rows give its FMA
// chains slack: 16 x 16 ran about 10% faster than 8 x 16 in a microbenchmark of ResNet-18's
// tiles, and 7 x 16 on m = 49 a quarter faster than 8 x 16 (which computes 56 rows). The wider
// panels share each broadcast between two or three vectors (8 x 32 and 8 x 48: about 85 GMAC/s
// on one core here, 16-column tiles 65-75). Up to 24 accumulators: 32 vector registers.
constexpr F32Tile kAvx512N16Tiles[] = {kAvx512Tile<16, 1>, kAvx512Tile<14, 1>, kAvx512Tile<10, 1>,
                                       kAvx512Tile<8, 1>, kAvx512Tile<7, 1>};
constexpr F32Tile kAvx512N32Tiles[] = {kAvx512Tile<8, 2>, kAvx512Tile<7, 2>};
constexpr F32Tile kAvx512N48Tiles[] = {kAvx512Tile<8, 3>, kAvx512Tile<7, 3>};
constexpr F32Kernel kAvx512N16{16, kAvx512N16Tiles};
constexpr F32Kernel kAvx512{32, kAvx512N32Tiles};
constexpr F32Kernel kAvx512N48{48, kAvx512N48Tiles};

/// 16 elements of a B row (fp32, or fp16/bf16 widened exactly as npu/isa/half.h does: F16C's
/// vcvtph2ps, and bf16 as the upper half of an fp32), zero past `mask`.
[[gnu::target("avx512f,avx512vl,avx512bw,avx2,fma"), gnu::always_inline]] inline __m512 load16(
    const std::byte* p, uint8_t dtype, __mmask16 mask) {
  if (dtype == NPU_DTYPE_FP32) return _mm512_maskz_loadu_ps(mask, p);
  const __m256i h = _mm256_maskz_loadu_epi16(mask, p);
  if (dtype == NPU_DTYPE_FP16) return _mm512_cvtph_ps(h);
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}

/// Packs panels of 16 or 32 columns: out[kk][j] = B[j][kk] (B of `dtype`, row stride ldb
/// elements), zero in the padding columns, as 16 x 16 blocks transposed in registers (16 row
/// loads, 16 stores; the scalar transpose below moves one float per load and store).
[[gnu::target("avx512f,avx512vl,avx512bw,avx2,fma")]] void pack_avx512(const std::byte* b,
                                                                       uint8_t dtype, size_t ldb,
                                                                       size_t n, size_t k,
                                                                       size_t nr, size_t panels,
                                                                       float* data) {
  const size_t es = dtype == NPU_DTYPE_FP32 ? 4 : 2;
  for (size_t p = 0; p < panels; ++p) {
    float* out = data + p * k * nr;
    for (size_t h = 0; h < nr; h += 16) {
      const size_t j0 = p * nr + h;
      const size_t valid = j0 < n ? std::min<size_t>(16, n - j0) : 0;
      const std::byte* col = b + j0 * ldb * es;
      for (size_t kk = 0; kk < k; kk += 16) {
        const size_t steps = std::min<size_t>(16, k - kk);
        const auto kmask = static_cast<__mmask16>((uint32_t{1} << steps) - 1);
        __m512 r[16];
        for (size_t i = 0; i < 16; ++i)
          r[i] = i < valid ? load16(col + (i * ldb + kk) * es, dtype, kmask) : _mm512_setzero_ps();
        transpose16(r);
        for (size_t t = 0; t < steps; ++t) _mm512_storeu_ps(out + (kk + t) * nr + h, r[t]);
      }
    }
  }
}
#endif

}  // namespace

const F32Tile& F32Kernel::tile(size_t m) const {
  const F32Tile* best = &tiles.front();
  size_t fewest = SIZE_MAX;
  for (const F32Tile& t : tiles) {
    const size_t mb = gemm_block_rows(m, t.mr, false);
    const size_t whole = mb == 0 ? 0 : m / mb;
    const size_t rows = whole * mb + (m - whole * mb + t.mr - 1) / t.mr * t.mr;
    if (rows < fewest) best = &t, fewest = rows;
  }
  return *best;
}

const F32Kernel& f32_kernel(size_t n) {
#ifdef NPU_KERN_X86
  if (isa_at_least(Isa::Avx512)) {
    const F32Kernel* best = nullptr;
    size_t fewest = SIZE_MAX;
    for (const F32Kernel* k : {&kAvx512N48, &kAvx512, &kAvx512N16}) {
      const size_t cols = (n + k->nr - 1) / k->nr * k->nr;
      if (cols < fewest) best = k, fewest = cols;
    }
    return *best;
  }
#endif
  return f32_kernel();
}

const F32Kernel& f32_kernel() {
#ifdef NPU_KERN_X86
  // The fp32 tiles of the Amx level are AVX-512's, of the AvxVnni level AVX2's.
  if (isa_at_least(Isa::Avx512)) return kAvx512;
  if (isa_at_least(Isa::Avx2)) return kAvx2;
#endif
  return kSse;
}

PackedF32::PackedF32(size_t n, size_t k)
    : kern_(&f32_kernel(n)),
      n_(n),
      k_(k),
      panels_((n + kern_->nr - 1) / kern_->nr),
      data_(panels_ * k * kern_->nr) {}

PackedF32::PackedF32(const std::byte* b, size_t ldb, size_t n, size_t k)
    : PackedF32(b, NPU_DTYPE_FP32, ldb, n, k) {}

PackedF32::PackedF32(const std::byte* b, uint8_t dtype, size_t ldb, size_t n, size_t k)
    : PackedF32(n, k) {
  const size_t nr = kern_->nr;
#ifdef NPU_KERN_X86
  if (kern_ == &kAvx512 || kern_ == &kAvx512N16 || kern_ == &kAvx512N48) {
    pack_avx512(b, dtype, ldb, n, k, nr, panels_, data_.get());
    return;
  }
#endif
  std::vector<float> wide;  // half rows widened first (exact), then packed as fp32
  if (dtype != NPU_DTYPE_FP32) {
    wide.resize(n * k);
    for (size_t j = 0; j < n; ++j) widen_half(b + j * ldb * 2, dtype, k, wide.data() + j * k);
    b = reinterpret_cast<const std::byte*>(wide.data());
    ldb = k;
  }
  // Transposed in tiles of kTile k-steps x nr columns: one cache line of each B row in, a
  // few KiB out, so neither side streams through the cache with a large stride.
  constexpr size_t kTile = 16;
  for (size_t p = 0; p < panels_; ++p) {
    float* out = data_.get() + p * k * nr;
    const size_t nvalid = std::min(nr, n - p * nr);
    if (nvalid < nr) std::fill(out, out + k * nr, 0.0f);  // the padding columns
    for (size_t k0 = 0; k0 < k; k0 += kTile) {
      const size_t kc = std::min(kTile, k - k0);
      for (size_t j = 0; j < nvalid; ++j) {
        const std::byte* row = b + ((p * nr + j) * ldb + k0) * sizeof(float);
        for (size_t t = 0; t < kc; ++t)
          std::memcpy(out + (k0 + t) * nr + j, row + t * sizeof(float), sizeof(float));
      }
    }
  }
}

PackedF32::PackedF32(KMajor, const std::byte* b, uint8_t dtype, size_t ldk, size_t n, size_t k)
    : PackedF32(n, k) {
  const size_t nr = kern_->nr, es = dtype == NPU_DTYPE_FP32 ? 4 : 2;
  for (size_t p = 0; p < panels_; ++p) {
    float* out = data_.get() + p * k * nr;
    const size_t nvalid = std::min(nr, n - p * nr);
    for (size_t kk = 0; kk < k; ++kk) {
      const std::byte* row = b + (kk * ldk + p * nr) * es;
      if (dtype == NPU_DTYPE_FP32)
        std::memcpy(out + kk * nr, row, nvalid * sizeof(float));
      else
        widen_half(row, dtype, nvalid, out + kk * nr);
      if (nvalid < nr) std::fill(out + kk * nr + nvalid, out + (kk + 1) * nr, 0.0f);
    }
  }
}

}  // namespace npu::emu::kern
