// Quantized GEMM tile kernels (gemm_q8.h): exact int32 dot products of 8-bit A runs and 8-bit
// B panels [k/4][nr][4], and the packing of B.
//  - Avx512: vpdpbusd on 512-bit registers, 6 rows x 32 columns, or 12 x 16 for B of 16 or
//    fewer columns past a multiple of 32 (a compiler's output-channel slices of 16, 48, ...);
//  - AvxVnni: vpdpbusd on 256-bit registers (AVX-VNNI), 6 x 16;
//  - Avx2: bytes widened to int16, vpmaddwd, 4 x 8, any pairing of signs;
//  - Portable: plain C++ loops for any pairing of signs;
//  - Amx: tile products (gemm_q8_amx.cpp).
// vpdpbusd multiplies unsigned bytes of its first source by signed bytes of its second: the
// broadcast A group is the unsigned operand for uint8 A, the panel for int8 A (B then packed
// as uint8, gemm_q8.h). Integer sums are exact, so every level gives the same bits.
#include <cstring>

#include "gemm_q8.h"
#include "transpose16.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define NPU_KERN_X86 1
#include <immintrin.h>
#endif

namespace npu::emu::kern {

#ifdef NPU_KERN_X86
const Q8Kernel& q8_amx_kernel();  // gemm_q8_amx.cpp
#endif

namespace {

// ---------------------------------------------------------------------- portable kernel

constexpr size_t kPortMR = 4;
constexpr size_t kPortNR = 16;

template <bool AS, bool BS>
[[gnu::always_inline]] inline void taps_portable_impl(const uint8_t* const* runs, size_t ld,
                                                      size_t t0, size_t tc, size_t koff, size_t kc,
                                                      const std::byte* panel, size_t tap_bytes,
                                                      int32_t* c, size_t ldc) {
  using A = std::conditional_t<AS, int8_t, uint8_t>;
  using B = std::conditional_t<BS, int8_t, uint8_t>;
  int32_t acc[kPortMR][kPortNR] = {};
  for (size_t t = t0; t < t0 + tc; ++t) {
    const auto* bp = reinterpret_cast<const B*>(panel + t * tap_bytes) + koff * kPortNR;
    const A* a[kPortMR];
    for (size_t i = 0; i < kPortMR; ++i) a[i] = reinterpret_cast<const A*>(runs[t * ld + i] + koff);
    for (size_t g = 0; g < kc / 4; ++g) {
      // The group's panel as [step][column] so that the column loop is unit-stride.
      int32_t bt[4][kPortNR];
      for (size_t j = 0; j < kPortNR; ++j)
        for (size_t s = 0; s < 4; ++s) bt[s][j] = bp[(g * kPortNR + j) * 4 + s];
      for (size_t i = 0; i < kPortMR; ++i) {
        const int32_t a0 = a[i][g * 4], a1 = a[i][g * 4 + 1], a2 = a[i][g * 4 + 2],
                      a3 = a[i][g * 4 + 3];
        for (size_t j = 0; j < kPortNR; ++j)
          acc[i][j] += a0 * bt[0][j] + a1 * bt[1][j] + a2 * bt[2][j] + a3 * bt[3][j];
      }
    }
  }
  for (size_t i = 0; i < kPortMR; ++i) std::memcpy(c + i * ldc, acc[i], sizeof(acc[i]));
}

template <bool AS, bool BS>
void taps_portable(const uint8_t* const* runs, size_t ld, size_t t0, size_t tc, size_t koff,
                   size_t kc, const std::byte* panel, size_t tap_bytes, int32_t* c, size_t ldc) {
  taps_portable_impl<AS, BS>(runs, ld, t0, tc, koff, kc, panel, tap_bytes, c, ldc);
}

constexpr Q8Kernel kPortable{kPortMR,
                             kPortNR,
                             true,
                             {{taps_portable<false, false>, taps_portable<false, true>},
                              {taps_portable<true, false>, taps_portable<true, true>}},
                             nullptr,
                             nullptr,
                             nullptr};

#ifdef NPU_KERN_X86
// ------------------------------------------------------------------------- AVX2 kernel

/// AVX2 without VNNI: bytes widened to int16 and multiplied in pairs by vpmaddwd (exact: each
/// pair sum is at most 2 * 255 * 128), 4 rows x 8 columns. A panel group (4 k steps of 8
/// columns, 32 bytes) becomes two registers of 4 columns x 4 int16; a row's 4 bytes become 4
/// int16 repeated; each madd leaves two partial sums per column, added pairwise at the end.
template <bool AS, bool BS>
[[gnu::target("avx2,fma")]] void taps_avx2(const uint8_t* const* runs, size_t ld, size_t t0,
                                           size_t tc, size_t koff, size_t kc,
                                           const std::byte* panel, size_t tap_bytes, int32_t* c,
                                           size_t ldc) {
  constexpr size_t MR = 4, NR = 8;
  __m256i acc[MR][2];
  for (size_t i = 0; i < MR; ++i) acc[i][0] = acc[i][1] = _mm256_setzero_si256();
  for (size_t t = t0; t < t0 + tc; ++t) {
    const uint8_t* r[MR];
    for (size_t i = 0; i < MR; ++i) r[i] = runs[t * ld + i] + koff;
    const std::byte* bp = panel + t * tap_bytes + koff * NR;
    for (size_t g = 0; g < kc / 4; ++g) {
      const __m128i p0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(bp + g * 32));
      const __m128i p1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(bp + g * 32 + 16));
      const __m256i b0 = BS ? _mm256_cvtepi8_epi16(p0) : _mm256_cvtepu8_epi16(p0);
      const __m256i b1 = BS ? _mm256_cvtepi8_epi16(p1) : _mm256_cvtepu8_epi16(p1);
      for (size_t i = 0; i < MR; ++i) {
        int32_t a4;
        std::memcpy(&a4, r[i] + g * 4, 4);
        const __m128i a8 = _mm_cvtsi32_si128(a4);
        const __m128i a16 = AS ? _mm_cvtepi8_epi16(a8) : _mm_cvtepu8_epi16(a8);
        const __m256i av = _mm256_broadcastq_epi64(a16);
        acc[i][0] = _mm256_add_epi32(acc[i][0], _mm256_madd_epi16(av, b0));
        acc[i][1] = _mm256_add_epi32(acc[i][1], _mm256_madd_epi16(av, b1));
      }
    }
  }
  for (size_t i = 0; i < MR; ++i) {
    // (c0 c0 c1 c1 | c2 c2 c3 c3), (c4 .. c7) -> c0 c1 c4 c5 | c2 c3 c6 c7 -> c0 .. c7
    const __m256i h = _mm256_hadd_epi32(acc[i][0], acc[i][1]);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(c + i * ldc), _mm256_permute4x64_epi64(h, 0xD8));
  }
}

constexpr Q8Kernel kAvx2{4,
                         8,
                         true,
                         {{taps_avx2<false, false>, taps_avx2<false, true>},
                          {taps_avx2<true, false>, taps_avx2<true, true>}},
                         nullptr,
                         nullptr,
                         nullptr};

// ----------------------------------------------------------------------- VNNI kernels

/// One row tile of MR rows x NV vectors of V (16 or 8 int32 columns each) over the taps:
/// per group of 4 k steps, the panel's vectors and each row's 4 bytes broadcast, vpdpbusd.
/// AS: A is int8 (the panel is the unsigned operand), else uint8 (A is). Written once for
/// both register widths; GCC inlines intrinsics only into functions of the same target, so
/// the body is a macro instantiated per target.
#define NPU_VNNI_TAPS(NAME, TARGET, V, ZERO, LOAD, SET1, DPBUSD, STORE)                          \
  template <size_t MR, size_t NV, bool AS>                                                       \
  [[gnu::target(TARGET)]] void NAME(const uint8_t* const* runs, size_t ld, size_t t0, size_t tc, \
                                    size_t koff, size_t kc, const std::byte* panel,              \
                                    size_t tap_bytes, int32_t* c, size_t ldc) {                  \
    constexpr size_t L = sizeof(V) / 4; /* int32 lanes per vector */                             \
    constexpr size_t NR = NV * L;                                                                \
    V acc[MR][NV];                                                                               \
    _Pragma("GCC unroll 12") for (size_t i = 0; i < MR; ++i)                                     \
        _Pragma("GCC unroll 2") for (size_t v = 0; v < NV; ++v) acc[i][v] = ZERO();              \
    const size_t groups = kc / 4;                                                                \
    for (size_t t = t0; t < t0 + tc; ++t) {                                                      \
      const uint8_t* r[MR];                                                                      \
      _Pragma("GCC unroll 12") for (size_t i = 0; i < MR; ++i) r[i] = runs[t * ld + i] + koff;   \
      const std::byte* bp = panel + t * tap_bytes + koff * NR;                                   \
      for (size_t g = 0; g < groups; ++g) {                                                      \
        V b[NV];                                                                                 \
        _Pragma("GCC unroll 2") for (size_t v = 0; v < NV; ++v) b[v] =                           \
            LOAD(reinterpret_cast<const V*>(bp + (g * NR + v * L) * 4));                         \
        _Pragma("GCC unroll 12") for (size_t i = 0; i < MR; ++i) {                               \
          int32_t a4;                                                                            \
          std::memcpy(&a4, r[i] + g * 4, 4);                                                     \
          const V av = SET1(a4);                                                                 \
          _Pragma("GCC unroll 2") for (size_t v = 0; v < NV; ++v) acc[i][v] =                    \
              AS ? DPBUSD(acc[i][v], b[v], av) : DPBUSD(acc[i][v], av, b[v]);                    \
        }                                                                                        \
      }                                                                                          \
    }                                                                                            \
    _Pragma("GCC unroll 12") for (size_t i = 0; i < MR; ++i)                                     \
        _Pragma("GCC unroll 2") for (size_t v = 0; v < NV; ++v)                                  \
            STORE(reinterpret_cast<V*>(c + i * ldc + v * L), acc[i][v]);                         \
  }

NPU_VNNI_TAPS(taps_vnni512, "avx512f,avx512bw,avx512vl,avx512vnni", __m512i, _mm512_setzero_si512,
              _mm512_loadu_si512, _mm512_set1_epi32, _mm512_dpbusd_epi32, _mm512_storeu_si512)
NPU_VNNI_TAPS(taps_avxvnni, "avx2,fma,avxvnni", __m256i, _mm256_setzero_si256, _mm256_loadu_si256,
              _mm256_set1_epi32, _mm256_dpbusd_avx_epi32, _mm256_storeu_si256)
#undef NPU_VNNI_TAPS

// [a_signed][b_signed]: uint8 A takes an int8 panel, int8 A a uint8 one.
/// bf16 pairs into fp32 sums by vdpbf16ps (AVX512-BF16), MR rows x NV vectors of 16 columns:
/// the VNNI tiles' structure with a bf16 dot product of two pairs per lane and step.
template <size_t MR, size_t NV>
[[gnu::target("avx512f,avx512bw,avx512vl,avx512bf16")]] void taps_dpbf16(
    const uint8_t* const* runs, size_t ld, size_t t0, size_t tc, size_t koff, size_t kc,
    const std::byte* panel, size_t tap_bytes, int32_t* c, size_t ldc) {
  constexpr size_t NR = NV * 16;
  __m512 acc[MR][NV];
#pragma GCC unroll 12
  for (size_t i = 0; i < MR; ++i)
#pragma GCC unroll 2
    for (size_t v = 0; v < NV; ++v) acc[i][v] = _mm512_setzero_ps();
  for (size_t t = t0; t < t0 + tc; ++t) {
    const uint8_t* r[MR];
#pragma GCC unroll 12
    for (size_t i = 0; i < MR; ++i) r[i] = runs[t * ld + i] + koff;
    const std::byte* bp = panel + t * tap_bytes + koff * NR;
    for (size_t g = 0; g < kc / 4; ++g) {
      __m512bh b[NV];
#pragma GCC unroll 2
      for (size_t v = 0; v < NV; ++v)
        b[v] = reinterpret_cast<__m512bh>(_mm512_loadu_si512(bp + (g * NR + v * 16) * 4));
#pragma GCC unroll 12
      for (size_t i = 0; i < MR; ++i) {
        int32_t a2;
        std::memcpy(&a2, r[i] + g * 4, 4);
        const auto av = reinterpret_cast<__m512bh>(_mm512_set1_epi32(a2));
#pragma GCC unroll 2
        for (size_t v = 0; v < NV; ++v) acc[i][v] = _mm512_dpbf16_ps(acc[i][v], av, b[v]);
      }
    }
  }
  auto* cf = reinterpret_cast<float*>(c);
#pragma GCC unroll 12
  for (size_t i = 0; i < MR; ++i)
#pragma GCC unroll 2
    for (size_t v = 0; v < NV; ++v) _mm512_storeu_ps(cf + i * ldc + v * 16, acc[i][v]);
}

constexpr Q8Kernel kVnni{
    6,
    32,
    false,
    {{nullptr, taps_vnni512<6, 2, false>}, {taps_vnni512<6, 2, true>, nullptr}},
    taps_dpbf16<6, 2>,
    nullptr,
    nullptr};
constexpr Q8Kernel kVnniN16{
    12,
    16,
    false,
    {{nullptr, taps_vnni512<12, 1, false>}, {taps_vnni512<12, 1, true>, nullptr}},
    taps_dpbf16<12, 1>,
    nullptr,
    nullptr};
constexpr Q8Kernel kAvxVnni{
    6,       16,
    false,   {{nullptr, taps_avxvnni<6, 2, false>}, {taps_avxvnni<6, 2, true>, nullptr}},
    nullptr, nullptr,
    nullptr};
#endif

}  // namespace

const Q8Kernel& q8_kernel(size_t n) {
  switch (selected_isa()) {
#ifdef NPU_KERN_X86
    case Isa::Amx:
      return q8_amx_kernel();
    case Isa::Avx512:
      return n % 32 != 0 && n % 32 <= 16 ? kVnniN16 : kVnni;
    case Isa::AvxVnni:
      return kAvxVnni;
    case Isa::Avx2:
      return kAvx2;
#endif
    default:
      return kPortable;
  }
}

const Q8Kernel* bf16_kernel(size_t n) {
#ifdef NPU_KERN_X86
  if (selected_isa() == Isa::Amx) return &q8_amx_kernel();
  if (selected_isa() == Isa::Avx512 && cpu_has_avx512_bf16()) return &q8_kernel(n);
#endif
  (void)n;
  return nullptr;
}

// ----------------------------------------------------------------------------- row sums

namespace {

#ifdef NPU_KERN_X86
/// vpsadbw against zero sums 8 unsigned bytes per 64-bit lane; int8 bytes are moved to uint8
/// by flipping their top bit (x + 128), and the 128 of every lane taken off at the end. The
/// tail is a zero-masked load: its missing lanes read 0 (flipped: 128), counted like the rest.
[[gnu::target("avx512f,avx512bw")]] int64_t row_sum_avx512(const uint8_t* a, size_t n,
                                                           bool a_signed) {
  const __m512i flip = _mm512_set1_epi8(a_signed ? static_cast<char>(0x80) : 0);
  const __m512i zero = _mm512_setzero_si512();
  __m512i acc = zero;
  size_t i = 0;
  for (; i + 64 <= n; i += 64)
    acc = _mm512_add_epi64(
        acc, _mm512_sad_epu8(_mm512_xor_si512(_mm512_loadu_si512(a + i), flip), zero));
  size_t vectors = i / 64;
  if (i < n) {
    const __mmask64 tail = (uint64_t{1} << (n - i)) - 1;
    acc = _mm512_add_epi64(
        acc, _mm512_sad_epu8(_mm512_xor_si512(_mm512_maskz_loadu_epi8(tail, a + i), flip), zero));
    ++vectors;
  }
  const auto total = static_cast<int64_t>(_mm512_reduce_add_epi64(acc));
  return a_signed ? total - static_cast<int64_t>(128 * 64 * vectors) : total;
}
#endif

}  // namespace

int64_t q8_row_sum(const uint8_t* a, size_t n, bool a_signed) {
#ifdef NPU_KERN_X86
  if (isa_at_least(Isa::Avx512)) return row_sum_avx512(a, n, a_signed);
#endif
  int64_t s = 0;
  if (a_signed)
    for (size_t i = 0; i < n; ++i) s += static_cast<int8_t>(a[i]);
  else
    for (size_t i = 0; i < n; ++i) s += a[i];
  return s;
}

// ------------------------------------------------------------------------------ packing

PackedQ8::PackedQ8(const Q8Kernel& kern, const Layout& l, std::span<const int32_t> w_zp)
    : kern_(&kern),
      l_(l),
      kcp_((l.kc + 3) / 4 * 4),
      panels_((l.n + kern.nr - 1) / kern.nr),
      packed_signed_(kern.raw_b || l.raw ? l.b_signed : !l.a_signed),
      zero_zps_(true),
      flip_(packed_signed_ == l.b_signed ? 0 : 0x80),
      data_(panels_ * l.taps * kcp_ * kern.nr),
      colsum_(l.n),
      zp_(l.n) {
  // Stored -> packed: int8 -> uint8 adds 128, uint8 -> int8 subtracts it.
  const int32_t shift = flip_ == 0 ? 0 : (l.b_signed ? 128 : -128);
  for (size_t j = 0; j < l.n && !l.raw; ++j) {
    const int64_t z = int64_t{w_zp[j]} + shift;
    zp_[j] = static_cast<int32_t>(std::clamp<int64_t>(z, INT32_MIN, INT32_MAX));
    zero_zps_ = zero_zps_ && zp_[j] == 0;
  }
}

template <class At>
void PackedQ8::pack(At&& at) {
  const size_t nr = kern_->nr, k = l_.taps * l_.kc;
  for (size_t j = 0; j < l_.n && !l_.raw; ++j) {
    int64_t s = 0;
    for (size_t kk = 0; kk < k; ++kk) {
      const uint8_t v = at(j, kk) ^ flip_;
      s += packed_signed_ ? int64_t{static_cast<int8_t>(v)} : int64_t{v};
    }
    colsum_[j] = s;
  }
  for (size_t p = 0; p < panels_; ++p) {
    auto* out = reinterpret_cast<uint8_t*>(data_.get() + p * l_.taps * tap_bytes());
    for (size_t t = 0; t < l_.taps; ++t)
      for (size_t g = 0; g < kcp_ / 4; ++g, out += nr * 4)
        for (size_t jj = 0; jj < nr; ++jj) {
          const size_t j = p * nr + jj;
          for (size_t s = 0; s < 4; ++s) {
            const size_t kk = g * 4 + s;
            out[jj * 4 + s] = j < l_.n && kk < l_.kc ? at(j, t * l_.kc + kk) ^ flip_ : 0;
          }
        }
  }
}

namespace {

#ifdef NPU_KERN_X86
#define NPU_PACK512 "avx512f,avx512bw,avx512vl,avx2,fma"

/// Panels [panels][taps][kcp / 4][nr][4] from rows (element (j, t * kc + kk) at b[j * ldb + t *
/// kc + kk]), each byte XORed with `flip`, zero past n and kc: per tap, 16 rows x 16 groups
/// of 4 bytes are loaded, transposed as 32-bit elements in registers and stored. With
/// `colsum`, also each column's sum of its packed values (as int8 when `packed_signed`), from
/// the same loads (vpsadbw).
[[gnu::target(NPU_PACK512)]] void pack_rows_avx512(const uint8_t* b, size_t ldb, size_t n,
                                                   size_t taps, size_t kc, size_t kcp, size_t nr,
                                                   size_t panels, uint8_t flip, std::byte* data,
                                                   bool packed_signed, int64_t* colsum) {
  const __m512i fv = _mm512_set1_epi8(static_cast<char>(flip));
  // vpsadbw sums unsigned bytes: int8 values are summed as x + 128, and 128 per byte removed.
  const __m512i sv = _mm512_set1_epi8(static_cast<char>(packed_signed ? 0x80 : 0));
  const size_t groups = kcp / 4;
  for (size_t p = 0; p < panels; ++p)
    for (size_t h = 0; h < nr; h += 16) {
      const size_t j0 = p * nr + h;
      const size_t valid = j0 < n ? std::min<size_t>(16, n - j0) : 0;
      __m512i sums[16];
      for (__m512i& v : sums) v = _mm512_setzero_si512();
      for (size_t t = 0; t < taps; ++t) {
        auto* out = reinterpret_cast<uint8_t*>(data) + ((p * taps + t) * groups * nr + h) * 4;
        for (size_t g0 = 0; g0 < groups; g0 += 16) {
          const size_t bytes = std::min<size_t>(64, kc - g0 * 4);
          const __mmask64 m = bytes == 64 ? ~__mmask64{0} : (__mmask64{1} << bytes) - 1;
          __m512 r[16];
          for (size_t i = 0; i < 16; ++i) {
            const __m512i x =
                i < valid
                    ? _mm512_maskz_mov_epi8(
                          m,
                          _mm512_xor_si512(
                              _mm512_maskz_loadu_epi8(m, b + (j0 + i) * ldb + t * kc + g0 * 4), fv))
                    : _mm512_setzero_si512();
            if (colsum != nullptr)
              sums[i] = _mm512_add_epi64(
                  sums[i], _mm512_sad_epu8(_mm512_maskz_mov_epi8(m, _mm512_xor_si512(x, sv)),
                                           _mm512_setzero_si512()));
            r[i] = _mm512_castsi512_ps(x);
          }
          transpose16(r);
          const size_t steps = std::min<size_t>(16, groups - g0);
          for (size_t gi = 0; gi < steps; ++gi) _mm512_storeu_ps(out + (g0 + gi) * nr * 4, r[gi]);
        }
      }
      const auto k = static_cast<int64_t>(taps * kc);
      for (size_t i = 0; i < valid && colsum != nullptr; ++i)
        colsum[j0 + i] =
            static_cast<int64_t>(_mm512_reduce_add_epi64(sums[i])) - (packed_signed ? 128 * k : 0);
    }
}
#undef NPU_PACK512
#endif

}  // namespace

PackedQ8::PackedQ8(const Q8Kernel& kern, const Layout& l, const uint8_t* b, size_t ldb,
                   std::span<const int32_t> w_zp)
    : PackedQ8(kern, l, w_zp) {
#ifdef NPU_KERN_X86
  if (isa_at_least(Isa::Avx512)) {
    pack_rows_avx512(b, ldb, l.n, l.taps, l.kc, kcp_, kern.nr, panels_, flip_, data_.get(),
                     packed_signed_, l.raw ? nullptr : colsum_.data());
    return;
  }
#endif
  pack([b, ldb](size_t j, size_t kk) { return b[j * ldb + kk]; });
}

PackedQ8::PackedQ8(KMajor, const Q8Kernel& kern, const Layout& l, const uint8_t* b, size_t ldk,
                   std::span<const int32_t> w_zp)
    : PackedQ8(kern, l, w_zp) {
  // One tap (a MATMUL); rows of B's k-major storage are columns here: sums and panels are
  // built a k step at a time, along the stored rows.
  const size_t k = l.taps * l.kc, nr = kern.nr;
  std::vector<int32_t> part(l.n);  // int32 partial sums of up to 2^23 rows: no overflow
  std::fill(colsum_.begin(), colsum_.end(), 0);
  for (size_t k0 = 0; k0 < k && !l.raw; k0 += size_t{1} << 23) {
    std::fill(part.begin(), part.end(), 0);
    for (size_t kk = k0; kk < std::min(k, k0 + (size_t{1} << 23)); ++kk) {
      const uint8_t* row = b + kk * ldk;
      if (packed_signed_)
        for (size_t j = 0; j < l.n; ++j) part[j] += static_cast<int8_t>(row[j] ^ flip_);
      else
        for (size_t j = 0; j < l.n; ++j) part[j] += static_cast<uint8_t>(row[j] ^ flip_);
    }
    for (size_t j = 0; j < l.n; ++j) colsum_[j] += part[j];
  }
#ifdef NPU_KERN_X86
  if (nr % 16 != 0) {
    pack([b, ldk](size_t j, size_t kk) { return b[kk * ldk + j]; });
    return;
  }
  // Panels: 4 stored rows (k steps) of 16 columns interleave into 16 groups of 4 bytes.
  const __m128i flip = _mm_set1_epi8(static_cast<char>(flip_));
  for (size_t p = 0; p < panels_; ++p) {
    auto* out = reinterpret_cast<uint8_t*>(data_.get() + p * l.taps * tap_bytes());
    for (size_t g = 0; g < kcp_ / 4; ++g)
      for (size_t h = 0; h < nr; h += 16) {
        const size_t j0 = p * nr + h;
        const size_t valid = j0 < l.n ? std::min<size_t>(16, l.n - j0) : 0;
        __m128i r[4];
        for (size_t s = 0; s < 4; ++s) {
          const size_t kk = g * 4 + s;
          if (kk < k && valid == 16) {  // the common case: 16 stored bytes
            r[s] = _mm_xor_si128(
                _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + kk * ldk + j0)), flip);
            continue;
          }
          alignas(16) uint8_t row[16] = {};
          if (kk < k && valid > 0) std::memcpy(row, b + kk * ldk + j0, valid);
          const __m128i x =
              _mm_xor_si128(_mm_load_si128(reinterpret_cast<const __m128i*>(row)), flip);
          // Padding (past n or k) stays zero in the packed domain.
          alignas(16) uint8_t keep[16] = {};
          if (kk < k) std::memset(keep, 0xff, valid);
          r[s] = _mm_and_si128(x, _mm_load_si128(reinterpret_cast<const __m128i*>(keep)));
        }
        const __m128i t0 = _mm_unpacklo_epi8(r[0], r[1]), t1 = _mm_unpackhi_epi8(r[0], r[1]);
        const __m128i t2 = _mm_unpacklo_epi8(r[2], r[3]), t3 = _mm_unpackhi_epi8(r[2], r[3]);
        auto* o = reinterpret_cast<__m128i*>(out + (g * nr + h) * 4);
        _mm_storeu_si128(o, _mm_unpacklo_epi16(t0, t2));
        _mm_storeu_si128(o + 1, _mm_unpackhi_epi16(t0, t2));
        _mm_storeu_si128(o + 2, _mm_unpacklo_epi16(t1, t3));
        _mm_storeu_si128(o + 3, _mm_unpackhi_epi16(t1, t3));
      }
  }
#else
  pack([b, ldk](size_t j, size_t kk) { return b[kk * ldk + j]; });
#endif
}

bool q8_gemm_ok(bool a_signed, int64_t a_zp, std::span<const int32_t> w_zp, uint64_t k) {
  if (a_zp < (a_signed ? -128 : 0) || a_zp > (a_signed ? 127 : 255) || k > (uint64_t{1} << 28))
    return false;
  return std::all_of(w_zp.begin(), w_zp.end(),
                     [](int32_t z) { return z >= -(1 << 24) + 128 && z <= (1 << 24) - 128; });
}

}  // namespace npu::emu::kern
