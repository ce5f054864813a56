// Private quantized GEMM of the matrix kernels: S[m][n] = sum_k A[m][k] * B'[n][k], exact in
// integers, with A read where it lies (a convolution's taps in the SRAM tile: one run of kc
// bytes per kernel position, or rows built by the caller) and B' the weights packed once
// into panels. The caller turns S into the convolution's sum((a - a_zp) * (b - b_zp)) with
// the row and column sums (QSumTerms) and requantizes it (quant_out.h).
//
// Domains. A keeps its stored bytes (int8 or uint8). The CPU's dot product instructions
// multiply an unsigned byte by a signed one (vpdpbusd), so on the VNNI levels B is packed in
// the opposite domain to A's: int8 A with B + 128 as uint8, uint8 A with B as int8 (uint8 B
// - 128). AMX tiles and the portable loops multiply any pairing and keep B as stored. The
// shift moves B's zero point along (PackedQ8::zp), so every level gives the same integers:
//   sum((a - a_zp) * (b' - b'_zp)) = S - b'_zp * R - a_zp * C' + K * a_zp * b'_zp
// with R the sum of A's row and C' the sum of B's packed column (order-free integer sums).
//
// Exactness: one kernel call accumulates at most kQ8MaxKC steps in int32 (|a * b'| <=
// 255 * 128); longer sums are cut into chunks added in int64.
//
// bf16 pairs. The same machinery multiplies groups of two bf16 values (4 bytes, ISA 1.1's bf16
// matrix mode) into fp32 where the CPU has a bf16 dot product (AMX-BF16's TDPBF16PS, AVX512's
// vdpbf16ps): a Layout with `raw` packs the bytes as they are, and the kernel's bf16 function
// accumulates fp32 sums of exact products in its own order (docs/isa.md section 9: the order is
// unspecified; these instructions also treat bf16 denormals as zero and flush denormal sums).
//
// Threading: a PackedQ8 is immutable after construction (the worker thread reads it); the
// tile kernels use only their arguments. With `split` the blocks of rows are shared with the
// worker (parallel.h); a block is computed the same on either thread.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "cancel.h"
#include "cpu_isa.h"
#include "gemm.h"
#include "parallel.h"
#include "scratch.h"

namespace npu::emu::kern {

/// |a * b'| <= 255 * 128 per product: 2^16 products stay inside int32.
inline constexpr size_t kQ8MaxKC = size_t{1} << 16;

struct Q8Kernel {
  size_t mr, nr;
  /// B packed as stored (any pairing of signs); otherwise in the domain opposite A's.
  bool raw_b;
  /// One row tile: C[mr][nr] (ldc) = sum over taps t in [t0, t0 + tc) of A_t[mr][koff, koff
  /// + kc) x panel steps [koff, koff + kc) of tap t, where row i of A_t starts at runs[t * ld
  /// + i] and tap t's steps start at panel + t * tap_bytes (kcp / 4 groups of nr x 4 bytes).
  /// kc and koff are multiples of 4 (koff of 64), tc * kc <= kQ8MaxKC. Index
  /// [a_signed][b_signed]; nullptr for a pairing the kernel does not take.
  using TapsFn = void (*)(const uint8_t* const* runs, size_t ld, size_t t0, size_t tc, size_t koff,
                          size_t kc, const std::byte* panel, size_t tap_bytes, int32_t* c,
                          size_t ldc);
  TapsFn taps[2][2];
  /// The same over bf16 pairs with fp32 sums (c holds floats, any kc); nullptr without one.
  TapsFn bf16;
  /// Called by each thread before its first and after its last tile call of one GEMM chunk
  /// of kc steps per tap (AMX: the tile configuration, and its release); may be nullptr.
  void (*begin)(size_t kc);
  void (*end)();
};

/// The tile kernel of the selected ISA for B of n columns (wide panels, or 16-wide ones when
/// wide panels would pad more columns).
const Q8Kernel& q8_kernel(size_t n);
/// The kernel with a bf16 function at the selected ISA (Amx; Avx512 on a CPU with
/// AVX512-BF16), or nullptr.
const Q8Kernel* bf16_kernel(size_t n);

/// B (n rows of taps * kc values of one 8-bit type, row stride ldb, or k-major) packed for
/// one kernel and one signedness of A: panels [n / nr][taps][kcp / 4][nr][4] (kcp: kc
/// rounded up to 4, padding zero), with the column sums and zero points of the packed
/// domain. Immutable once built.
class PackedQ8 {
 public:
  struct Layout {
    size_t n, taps, kc;
    bool b_signed, a_signed;
    /// Bytes packed as they are, without domains or sums (bf16 pairs; kc in bytes).
    bool raw = false;
  };
  /// Rows: element (j, kk) at b[j * ldb + kk]; w_zp[j] in B's stored domain.
  PackedQ8(const Q8Kernel& kern, const Layout& l, const uint8_t* b, size_t ldb,
           std::span<const int32_t> w_zp);
  /// k-major (a MATMUL's B without TRANSPOSE_B): element (j, kk) at b[kk * ldk + j].
  struct KMajor {};
  PackedQ8(KMajor, const Q8Kernel& kern, const Layout& l, const uint8_t* b, size_t ldk,
           std::span<const int32_t> w_zp);

  const Q8Kernel& kernel() const { return *kern_; }
  const Layout& layout() const { return l_; }
  size_t n() const { return l_.n; }
  size_t k() const { return l_.taps * l_.kc; }
  size_t kcp() const { return kcp_; }
  size_t panels() const { return panels_; }
  size_t tap_bytes() const { return kcp_ * kern_->nr; }
  const std::byte* panel(size_t p) const { return data_.get() + p * l_.taps * tap_bytes(); }
  /// Whether the panels hold int8 (else uint8) values.
  bool packed_signed() const { return packed_signed_; }
  /// Sum of column j's packed values, and its zero point in the packed domain.
  int64_t colsum(size_t j) const { return colsum_[j]; }
  int32_t zp(size_t j) const { return zp_[j]; }
  /// Whether every packed zero point is 0 (then the row sums R are not needed).
  bool zero_zps() const { return zero_zps_; }

 private:
  PackedQ8(const Q8Kernel& kern, const Layout& l, std::span<const int32_t> w_zp);
  /// Packs from element(j, kk) -> stored byte, flipping to the packed domain.
  template <class At>
  void pack(At&& at);

  const Q8Kernel* kern_;
  Layout l_;
  size_t kcp_, panels_;
  bool packed_signed_, zero_zps_;
  uint8_t flip_;
  Scratch<std::byte> data_;  // every byte written by the packing
  std::vector<int64_t> colsum_;
  std::vector<int32_t> zp_;
};

/// Whether the GEMM's exactness bounds hold: A's zero point inside A's dtype, every weight
/// zero point within 2^24 - 128 (packing moves it by 128 at most), K <= 2^28; then every
/// int64 term of the sums is below 2^61. Otherwise the callers' direct loops run.
bool q8_gemm_ok(bool a_signed, int64_t a_zp, std::span<const int32_t> w_zp, uint64_t k);

/// The sum of n bytes of A in its stored domain (int8 when a_signed, else uint8): a row's R,
/// or an input pixel's sum over a convolution's channels. Exact on every level (AVX-512: sums
/// of absolute differences, 64 bytes per step).
int64_t q8_row_sum(const uint8_t* a, size_t n, bool a_signed);

/// The sums of one block of rows as the GEMM hands them over: int32 when the whole K fitted
/// one kernel chunk (s32), int64 when it was cut (s64), fp32 for bf16 pairs (f32); row
/// stride ld.
struct QSums {
  const int32_t* s32;
  const int64_t* s64;
  size_t ld;
  const float* f32 = nullptr;
};

namespace detail {
/// Runs the row tiles of blocks [first, last) of one GEMM (gemm_q8_taps below).
struct Q8Block {
  const PackedQ8& b;
  size_t m, taps, kc, mb;
  bool a_signed;
};
}  // namespace detail

/// A GEMM whose A rows are `taps` runs of kc bytes (b's layout; kc a multiple of 4), read
/// where they lie: runs(m0, rows, const uint8_t** table, size_t ld, const uint8_t* pad) writes
/// the run addresses of rows [m0, m0 + rows) to table[t * ld + r], `pad` for a run of padding
/// (kc bytes whose difference to A's zero point is 0: the byte `pad_byte`). epi(m0, rows,
/// QSums) consumes the sums of rows [m0, m0 + rows).
template <class Runs, class Epi>
void gemm_q8_taps(const PackedQ8& b, size_t m, uint8_t pad_byte, Runs&& runs, Epi&& epi,
                  bool split = false) {
  const Q8Kernel& kr = b.kernel();
  const size_t taps = b.layout().taps, kc = b.kcp();
  const size_t ldc = b.panels() * kr.nr;
  const size_t mb = gemm_block_rows(m, kr.mr, split);
  const size_t blocks = mb == 0 ? 0 : (m + mb - 1) / mb;
  const bool as = b.layout().a_signed, raw = b.layout().raw;
  const Q8Kernel::TapsFn fn = raw ? kr.bf16 : kr.taps[as ? 1 : 0][b.packed_signed() ? 1 : 0];
  // Chunks of at most kQ8MaxKC steps: whole taps, or (a tap longer than that) parts of one;
  // fp32 sums need none.
  const size_t taps_per = kc == 0 || raw ? taps : std::max<size_t>(1, kQ8MaxKC / kc);
  const size_t kstep = kc <= kQ8MaxKC || raw ? kc : kQ8MaxKC;
  const bool chunked = taps > taps_per || kc > kstep;
  parallel_for(blocks, split, [&](Claims& claims) {
    const Scratch<int32_t> c(mb * ldc);
    const Scratch<int64_t> c64(chunked ? mb * ldc : 0);
    const size_t pad_bytes = std::max<size_t>(kc, 64);
    const Scratch<uint8_t> pads(pad_bytes);
    std::memset(pads.get(), pad_byte, pad_bytes);
    const Scratch<const uint8_t*> table(mb * std::max<size_t>(taps, 1));  // [tap][row]
    bool begun = false;
    size_t begun_kc = 0;
    const auto begin = [&](size_t kcc) {
      if (kr.begin == nullptr || (begun && begun_kc == kcc)) return;
      kr.begin(kcc);
      begun = true, begun_kc = kcc;
    };
    for_claimed_blocks(claims, mb, m, [&](size_t m0, size_t rows) {
      const size_t tiles = (rows + kr.mr - 1) / kr.mr;
      block_runs(runs, m0, rows, tiles * kr.mr, taps, table.get(), mb,
                 static_cast<const uint8_t*>(pads.get()));
      if (taps == 0 || kc == 0) std::fill(c.get(), c.get() + mb * ldc, 0);
      bool first_chunk = true;
      for (size_t t0 = 0; t0 < taps && kc != 0; t0 += taps_per) {
        const size_t tc = std::min(taps_per, taps - t0);
        for (size_t k0 = 0; k0 < kc; k0 += kstep) {
          const size_t kcc = std::min(kstep, kc - k0);
          begin(kcc);
          for (size_t p = 0; p < b.panels(); ++p)
            for (size_t tile = 0; tile < tiles; ++tile)
              fn(table.get() + tile * kr.mr, mb, t0, tc, k0, kcc, b.panel(p), b.tap_bytes(),
                 c.get() + tile * kr.mr * ldc + p * kr.nr, ldc);
          if (chunked) {
            for (size_t i = 0; i < rows * ldc; ++i) c64[i] = (first_chunk ? 0 : c64[i]) + c[i];
            first_chunk = false;
          }
        }
      }
      if (raw)
        epi(m0, rows, QSums{nullptr, nullptr, ldc, reinterpret_cast<const float*>(c.get())});
      else
        epi(m0, rows, QSums{chunked ? nullptr : c.get(), chunked ? c64.get() : nullptr, ldc});
    });
    if (begun && kr.end != nullptr) kr.end();
  });
}

/// The same GEMM over rows the caller builds: fill(m0, rows, uint8_t* dst, size_t lda) writes
/// rows x k bytes of A (lda: k rounded up to 4; the bytes after k are zeroed here). b was
/// packed with taps = 1 and kc = k (its padding steps are zero).
template <class Fill, class Epi>
void gemm_q8_rows(const PackedQ8& b, size_t m, size_t k, Fill&& fill, Epi&& epi,
                  bool split = false) {
  const size_t kc = b.kcp();  // k rounded up to 4
  const size_t mb = gemm_block_rows(m, b.kernel().mr, split);
  const size_t blocks = mb == 0 ? 0 : (m + mb - 1) / mb;
  // Each block is built into this thread's scratch, then read as one run per row.
  parallel_for(blocks, split, [&](Claims& claims) {
    const Scratch<uint8_t> a(mb * std::max<size_t>(kc, 1));
    for_claimed_blocks(claims, mb, m, [&](size_t m0, size_t rows) {
      fill(m0, rows, a.get(), kc);
      for (size_t r = 0; r < rows; ++r) std::memset(a.get() + r * kc + k, 0, kc - k);
      gemm_q8_taps(
          b, rows, 0,
          [&](size_t r0, size_t n, const uint8_t** table, size_t, const uint8_t*) {
            for (size_t i = 0; i < n; ++i) table[i] = a.get() + (r0 + i) * kc;
          },
          [&](size_t r0, size_t n, QSums s) { epi(m0 + r0, n, s); }, false);
    });
  });
}

}  // namespace npu::emu::kern
