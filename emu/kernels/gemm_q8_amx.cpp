// The AMX tile kernel of gemm_q8.h: a row tile of 32 rows x 16 columns as two 16 x 16 int32
// accumulator tiles, fed 64 bytes of k at a time by TDPB[SU][SU]D (every pairing of signs, so
// B stays as stored and needs no domain shift), or, for bf16 pairs, two fp32 tiles fed by
// TDPBF16PS. The 16 rows of an A tile are read straight
// from where they lie when they are equally spaced (consecutive output pixels of one row of
// a convolution: one strided tile load), and gathered into a 1 KiB buffer otherwise
// (padding, the ends of output rows). A K that is not a multiple of 64 ends with tail tiles
// configured to exactly its bytes, so no byte outside a run is read.
//
// Tiles: 0, 1 accumulators; 2, 3 A (64 bytes per row); 4 B (16 groups of 4 k steps x 16
// columns); 5, 6 A tails; 7 B tail. begin() loads this configuration on the calling thread
// for one GEMM chunk, end() releases the tiles (the state the kernel then need not save on a
// context switch).
#include <cstring>

#include "gemm_q8.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

namespace npu::emu::kern {
namespace {

#define NPU_AMX "amx-tile,amx-int8,amx-bf16,avx512f,avx512bw,avx512vl,avx512dq"

constexpr size_t kRows = 16;  // rows of an A tile and of an accumulator
constexpr size_t kStep = 64;  // k steps of a full A tile

struct alignas(64) TileConfig {
  uint8_t palette = 1;
  uint8_t start_row = 0;
  uint8_t reserved[14] = {};
  uint16_t colsb[16] = {};
  uint8_t rows[16] = {};
};

[[gnu::target(NPU_AMX)]] void amx_begin(size_t kc) {
  TileConfig cfg;
  const auto tail = static_cast<uint16_t>(kc % kStep);
  for (int t = 0; t < 5; ++t) cfg.colsb[t] = 64, cfg.rows[t] = kRows;
  if (tail != 0) {
    cfg.colsb[5] = cfg.colsb[6] = tail, cfg.rows[5] = cfg.rows[6] = kRows;
    cfg.colsb[7] = 64, cfg.rows[7] = static_cast<uint8_t>(tail / 4);
  }
  // GCC 12's _tile_loadconfig tells the compiler it reads 8 bytes, so the stores to the rest
  // of cfg could be dropped: the operand here is the whole struct.
  __asm__ volatile("ldtilecfg %0" : : "m"(cfg));
}

[[gnu::target(NPU_AMX)]] void amx_end() {
  _tile_release();
}

/// Rows [h * 16, h * 16 + 16) of a row tile at offset `off`: a strided source, or gathered.
struct ASource {
  const uint8_t* base;
  size_t stride;
};

/// Where to load 16 rows (p[i] + off, `bytes` each) from: p[0] with the common spacing when
/// there is one, else a copy in buf (row stride 64).
[[gnu::target(NPU_AMX), gnu::always_inline]] inline ASource a_source(const uint8_t* const* p,
                                                                     size_t off, size_t bytes,
                                                                     bool strided, uint8_t* buf) {
  if (strided) return {p[0] + off, static_cast<size_t>(p[1] - p[0])};
  const __mmask64 m = bytes >= 64 ? ~__mmask64{0} : (__mmask64{1} << bytes) - 1;
  for (size_t i = 0; i < kRows; ++i)
    _mm512_storeu_si512(buf + i * 64, _mm512_maskz_loadu_epi8(m, p[i] + off));
  return {buf, 64};
}

/// Whether the 16 row addresses p[0..16) are equally spaced.
[[gnu::target(NPU_AMX), gnu::always_inline]] inline bool equally_spaced(const uint8_t* const* p) {
  const __m512i lo = _mm512_loadu_si512(p), hi = _mm512_loadu_si512(p + 8);
  const auto p0 = reinterpret_cast<int64_t>(p[0]);
  const __m512i s = _mm512_set1_epi64(reinterpret_cast<int64_t>(p[1]) - p0);
  const __m512i iota = _mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7);
  const __m512i e_lo = _mm512_add_epi64(_mm512_set1_epi64(p0), _mm512_mullo_epi64(iota, s));
  const __m512i e_hi = _mm512_add_epi64(e_lo, _mm512_slli_epi64(s, 3));
  return (_mm512_cmpeq_epi64_mask(lo, e_lo) & _mm512_cmpeq_epi64_mask(hi, e_hi)) == 0xff;
}

/// What a tile product multiplies: int8 of the signs AS (A int8) and BS (B int8), or bf16
/// pairs into fp32 (kBf16).
constexpr int kBf16 = 4;
constexpr int op(bool as, bool bs) {
  return (as ? 2 : 0) + (bs ? 1 : 0);
}

// C += A x B by the instruction of OP. GCC's tile intrinsics take literal register numbers.
#define NPU_TDP(C, A, B)             \
  if constexpr (OP == kBf16)         \
    _tile_dpbf16ps(C, A, B);         \
  else if constexpr (OP == op(1, 1)) \
    _tile_dpbssd(C, A, B);           \
  else if constexpr (OP == op(1, 0)) \
    _tile_dpbsud(C, A, B);           \
  else if constexpr (OP == op(0, 1)) \
    _tile_dpbusd(C, A, B);           \
  else                               \
    _tile_dpbuud(C, A, B)

template <int OP>
[[gnu::target(NPU_AMX)]] void taps_amx(const uint8_t* const* runs, size_t ld, size_t t0, size_t tc,
                                       size_t koff, size_t kc, const std::byte* panel,
                                       size_t tap_bytes, int32_t* c, size_t ldc) {
  alignas(64) uint8_t buf[2][kRows * 64];
  _tile_zero(0);
  _tile_zero(1);
  const size_t full = kc / kStep, tail = kc % kStep;
  for (size_t t = t0; t < t0 + tc; ++t) {
    const uint8_t* const* r0 = runs + t * ld;  // rows 0..15 of tap t
    const uint8_t* const* r1 = r0 + kRows;     // rows 16..31
    const bool s0 = equally_spaced(r0), s1 = equally_spaced(r1);
    const std::byte* bp = panel + t * tap_bytes + koff * 16;
    for (size_t s = 0; s < full; ++s) {
      const size_t off = koff + s * kStep;
      _tile_loadd(4, bp + s * kStep * 16, 64);
      const ASource a0 = a_source(r0, off, kStep, s0, buf[0]);
      _tile_loadd(2, a0.base, a0.stride);
      const ASource a1 = a_source(r1, off, kStep, s1, buf[1]);
      _tile_loadd(3, a1.base, a1.stride);
      NPU_TDP(0, 2, 4);
      NPU_TDP(1, 3, 4);
    }
    if (tail != 0) {  // as a full step, on the tail's tile registers (literals for GCC)
      const size_t off = koff + full * kStep;
      _tile_loadd(7, bp + full * kStep * 16, 64);
      const ASource a0 = a_source(r0, off, tail, s0, buf[0]);
      _tile_loadd(5, a0.base, a0.stride);
      const ASource a1 = a_source(r1, off, tail, s1, buf[1]);
      _tile_loadd(6, a1.base, a1.stride);
      NPU_TDP(0, 5, 7);
      NPU_TDP(1, 6, 7);
    }
  }
  _tile_stored(0, c, ldc * 4);
  _tile_stored(1, c + kRows * ldc, ldc * 4);
}

#undef NPU_TDP

constexpr Q8Kernel kAmx{
    2 * kRows,
    16,
    true,
    {{taps_amx<op(0, 0)>, taps_amx<op(0, 1)>}, {taps_amx<op(1, 0)>, taps_amx<op(1, 1)>}},
    taps_amx<kBf16>,
    amx_begin,
    amx_end};

}  // namespace

const Q8Kernel& q8_amx_kernel() {
  return kAmx;
}

}  // namespace npu::emu::kern
#endif
