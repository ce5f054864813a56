// Private fp32 GEMM engine of the matrix kernels: C[m][n] = sum_k A[m][k] * B[n][k] with both
// operands K-contiguous (im2col rows x OHWI weight rows). B is packed once into panels of
// `nr` columns; A is produced block by block (MB rows) by a caller-supplied fill function
// (im2col, or a row copy) or read in place, and each finished block of C goes to a
// caller-supplied epilogue. The inner tile kernels are chosen at run time by CPU features
// (cpu_isa.h; gemm_f32.cpp). With `split`, the blocks of rows are shared with the process's
// worker thread (parallel.h); each block is computed the same either way, so the result does
// not depend on which thread ran it. The quantized GEMM is gemm_q8.h.
#pragma once

#include "cancel.h"
#include "cpu_isa.h"
#include "half_convert.h"
#include "npu_isa.h"
#include "parallel.h"
#include "scratch.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <vector>

namespace npu::emu::kern {

// ------------------------------------------------------------------------------------ fp32

/// One register tile of a panel width: mr rows x nr columns.
struct F32Tile {
  size_t mr;
  /// C[rows][nr] (row stride ldc) = (accumulate ? C : 0) + A[rows][0..kc) (row stride lda)
  /// x panel[kc][nr]. rows is a multiple of mr.
  void (*block)(const float* a, size_t lda, size_t rows, const float* panel, size_t kc, float* c,
                size_t ldc, bool accumulate);
  /// One row tile from rows given by address, tap by tap: C[mr][nr] (ldc) = (accumulate ? C :
  /// 0) + sum over t < taps of A_t[mr][0..kc) x panel steps [t * kc, (t + 1) * kc), where row
  /// i of A_t starts at runs[t * ld + i]. The same FMA chain as block() over the concatenated
  /// k, so a convolution read in place gives im2col's bits.
  void (*taps)(const float* const* runs, size_t ld, size_t taps, size_t kc, const float* panel,
               float* c, size_t ldc, bool accumulate);
};

/// The tile kernels of one panel width (nr columns): row tiles of several heights, so that a
/// GEMM of m rows pads few rows (a compiler's 7 x 7 slices have m = 49: 8-row tiles compute 56
/// rows, 7-row tiles 49). Every tile computes each output as the same FMA chain over k, so the
/// choice does not change a bit.
struct F32Kernel {
  size_t nr;
  std::span<const F32Tile> tiles;  // by preference: the first of those padding least is taken
  /// The row tile for m rows: the fewest rows computed in blocks of gemm_block_rows(m, mr).
  const F32Tile& tile(size_t m) const;
};
/// The widest tile of the selected ISA.
const F32Kernel& f32_kernel();
/// The panel width for B of n columns: the one that pads fewest columns (the widest of those).
const F32Kernel& f32_kernel(size_t n);

/// B rows (n x k floats, row stride ldb) packed into zero-padded panels [n/nr][k][nr].
class PackedF32 {
 public:
  PackedF32(const float* b, size_t ldb, size_t n, size_t k)
      : PackedF32(reinterpret_cast<const std::byte*>(b), ldb, n, k) {}
  /// B as fp32 at any byte address (an SRAM tile: no alignment needed).
  PackedF32(const std::byte* b, size_t ldb, size_t n, size_t k);
  /// B of float `dtype` (fp32, fp16 or bf16; ISA 1.1), row stride ldb elements, at any byte
  /// address; half elements are widened exactly (npu/isa/half.h) as they are packed.
  PackedF32(const std::byte* b, uint8_t dtype, size_t ldb, size_t n, size_t k);
  /// B stored k-major, as a MATMUL's B operand: element (row j, step kk) at
  /// b + (kk * ldk + j) * 4. A panel's k step is then nr consecutive floats: a row copy.
  struct KMajor {};
  PackedF32(KMajor, const std::byte* b, size_t ldk, size_t n, size_t k)
      : PackedF32(KMajor{}, b, NPU_DTYPE_FP32, ldk, n, k) {}
  /// The same for B of float `dtype` (half elements widened exactly as they are copied).
  PackedF32(KMajor, const std::byte* b, uint8_t dtype, size_t ldk, size_t n, size_t k);
  size_t n() const { return n_; }
  size_t k() const { return k_; }
  size_t panels() const { return panels_; }
  const float* panel(size_t p) const { return data_.get() + p * k_ * kern_->nr; }
  const F32Kernel& kernel() const { return *kern_; }

 private:
  /// Takes the tile for n columns and allocates the panels (every element written after).
  PackedF32(size_t n, size_t k);
  const F32Kernel* kern_;
  size_t n_, k_, panels_;
  Scratch<float> data_;
};

inline constexpr size_t kGemmMB = 96;   // rows of A per block at most
inline constexpr size_t kGemmKC = 384;  // K chunk kept hot in cache (fp32)

/// Rows per block of an m-row GEMM with row tile mr: the most whole tiles within kGemmMB (at
/// most m rounded up to mr), or, for a shared GEMM, fewer so that there are about four blocks to
/// hand out (the late layers of a CNN have m = 49 or 196 rows). A row's result does not depend
/// on its block.
inline size_t gemm_block_rows(size_t m, size_t mr, bool split) {
  const size_t mb = std::min(kGemmMB / mr * mr, (m + mr - 1) / mr * mr);
  if (!split || m == 0) return mb;
  const size_t quarter = ((m + 3) / 4 + mr - 1) / mr * mr;
  return std::clamp(quarter, mr, mb);
}

/// Calls f(m0, rows) for each block of mb rows of an m-row GEMM that this thread claims.
template <class F>
void for_claimed_blocks(Claims& claims, size_t mb, size_t m, F&& f) {
  for (size_t first = 0, last = 0; claims.next(first, last);)
    for (size_t blk = first; blk < last; ++blk) f(blk * mb, std::min(mb, m - blk * mb));
}

/// The row stride of A's blocks for k floats per row and a row tile of mr rows: k, except that
/// a multiple of 1024 floats (4 KiB: ResNet-50's 1024- and 2048-channel 1x1 convolutions) gets
/// 16 more under a tile of more than 8 rows, whose rows 4 KiB apart fall in one set of the L1
/// data cache and evict one another (a 16 x 16 tile on k = 1024: 46 against 78 GMAC/s on one
/// core here). The 8-row tiles of the wider panels keep k: there the copy to the wider stride
/// cost more than it gave (ResNet-50's 1024-channel 1x1 slices of 48 columns: 174 -> 156
/// GFLOP/s).
inline size_t gemm_lda(size_t k, size_t mr) {
  return k % 1024 == 0 && k != 0 && mr > 8 ? k + 16 : k;
}

/// `rows` rows of k values of float `dtype` (fp32, or fp16/bf16 widened exactly), consecutive
/// at src (any byte address), as fp32 at dst (row stride lda floats): one call when lda == k.
inline void rows_as_f32(float* dst, size_t lda, const std::byte* src, uint8_t dtype, size_t k,
                        size_t rows) {
  const size_t es = dtype == NPU_DTYPE_FP32 ? sizeof(float) : 2;
  const size_t runs = lda == k ? 1 : rows, n = lda == k ? rows * k : k;
  for (size_t r = 0; r < runs; ++r) {
    const std::byte* s = src + r * k * es;
    if (dtype == NPU_DTYPE_FP32)
      std::memcpy(dst + r * lda, s, n * sizeof(float));
    else
      widen_half(s, dtype, n, dst + r * lda);
  }
}

/// fill(m0, rows, float* dst, size_t lda) writes rows x k floats of A (row stride lda);
/// epi(m0, rows, const float* c, size_t ldc) consumes rows x n results.
/// `split`: fill and epi may run concurrently on two threads for different blocks (no block
/// writes what another reads), and the GEMM is large enough to share (worth_splitting).
/// `a_in_place`: A already stored as m rows of k floats (row stride k); the tile kernel then
/// reads every whole block where it lies and fill only builds a last block of fewer than a
/// row tile's rows (it is padded). Same arithmetic, same bits; one copy of A less. Not where
/// gemm_lda() is wider than k: those rows are copied to the wider stride.
template <class Fill, class Epi>
void gemm_f32(const PackedF32& b, size_t m, Fill&& fill, Epi&& epi, bool split = false,
              const float* a_in_place = nullptr) {
  const F32Kernel& kr = b.kernel();
  const F32Tile& tile = kr.tile(m);
  const size_t k = b.k();
  const size_t ldc = b.panels() * kr.nr;
  const size_t mb = gemm_block_rows(m, tile.mr, split);
  const size_t blocks = mb == 0 ? 0 : (m + mb - 1) / mb;
  const size_t lda = gemm_lda(k, tile.mr);
  if (lda != k) a_in_place = nullptr;
  parallel_for(blocks, split, [&](Claims& claims) {
    // Scratch of this thread; every element read is written first (fill, padding, kernel).
    const Scratch<float> a(mb * lda);
    const Scratch<float> c(mb * ldc);
    for_claimed_blocks(claims, mb, m, [&](size_t m0, size_t rows) {
      const size_t rows_pad = (rows + tile.mr - 1) / tile.mr * tile.mr;
      const float* ablk = a.get();
      if (a_in_place != nullptr && rows_pad == rows) {
        ablk = a_in_place + m0 * k;
      } else {
        fill(m0, rows, a.get(), lda);
        for (size_t r = rows; r < rows_pad; ++r) std::fill_n(a.get() + r * lda, k, 0.0f);
      }
      if (k == 0) std::fill(c.get(), c.get() + mb * ldc, 0.0f);
      for (size_t k0 = 0; k0 < k; k0 += kGemmKC) {
        const size_t kc = std::min(kGemmKC, k - k0);
        for (size_t p = 0; p < b.panels(); ++p)
          tile.block(ablk + k0, lda, rows_pad, b.panel(p) + k0 * kr.nr, kc, c.get() + p * kr.nr,
                     ldc, k0 != 0);
      }
      epi(m0, rows, static_cast<const float*>(c.get()), ldc);
    });
  });
}

/// One block's table of run addresses for a GEMM that reads its A rows in place, tap-major
/// (table[t * ld + r]): runs(m0, rows, table, ld, pad) writes rows [m0, m0 + rows), and the
/// rows up to rows_pad (those that fill the last row tile) read `pad`. Shared by the fp32 and
/// quantized tap GEMMs (gemm_q8.h).
template <class T, class Runs>
void block_runs(Runs& runs, size_t m0, size_t rows, size_t rows_pad, size_t taps, const T** table,
                size_t ld, const T* pad) {
  runs(m0, rows, table, ld, pad);
  for (size_t t = 0; t < taps; ++t)
    std::fill(table + t * ld + rows, table + t * ld + rows_pad, pad);
}

/// A GEMM whose A rows are made of `taps` runs of kc floats each, read where they lie (a
/// convolution's taps: one run per kernel position, cin floats of one input pixel), so no
/// im2col copy is made. runs(m0, rows, const float** table, size_t ld, const float* zeros)
/// writes the run addresses of rows [m0, m0 + rows) to table[t * ld + r], `zeros` for a run of
/// padding; b has taps * kc rows of k. epi and `split` as for gemm_f32. Every output is the
/// same FMA chain as gemm_f32 over the im2col rows, so both give the same bits.
template <class Runs, class Epi>
void gemm_f32_taps(const PackedF32& b, size_t m, size_t taps, size_t kc, Runs&& runs, Epi&& epi,
                   bool split = false) {
  const F32Kernel& kr = b.kernel();
  const F32Tile& tile = kr.tile(m);
  const size_t mr = tile.mr;
  const size_t ldc = b.panels() * kr.nr;
  const size_t mb = gemm_block_rows(m, mr, split);
  const size_t blocks = mb == 0 ? 0 : (m + mb - 1) / mb;
  const size_t kz = std::max<size_t>(kc, 1);
  // Taps per K chunk: about kGemmKC steps of each panel stay hot across a block's row tiles.
  const size_t chunk = std::max<size_t>(1, kGemmKC / kz);
  parallel_for(blocks, split, [&](Claims& claims) {
    const Scratch<float> c(mb * ldc);
    const Scratch<float> zeros(kz);  // padding runs, and the rows that pad the last tile
    std::fill(zeros.get(), zeros.get() + kz, 0.0f);
    const Scratch<const float*> table(mb * taps);  // [tap][row]
    for_claimed_blocks(claims, mb, m, [&](size_t m0, size_t rows) {
      const size_t tiles = (rows + mr - 1) / mr;
      block_runs(runs, m0, rows, tiles * mr, taps, table.get(), mb,
                 static_cast<const float*>(zeros.get()));
      if (taps == 0 || kc == 0) std::fill(c.get(), c.get() + mb * ldc, 0.0f);
      for (size_t t0 = 0; t0 < taps && kc != 0; t0 += chunk) {
        const size_t tc = std::min(chunk, taps - t0);
        for (size_t p = 0; p < b.panels(); ++p)
          for (size_t i = 0; i < tiles; ++i)
            tile.taps(table.get() + t0 * mb + i * mr, mb, tc, kc, b.panel(p) + t0 * kc * kr.nr,
                      c.get() + i * mr * ldc + p * kr.nr, ldc, t0 != 0);
      }
      epi(m0, rows, static_cast<const float*>(c.get()), ldc);
    });
  });
}

}  // namespace npu::emu::kern
