// The quantized output stage (quant_out.h): the scalar rule, and the AVX-512 one in 64-bit
// lanes (vpmuldq for the exact product, vpsravq for the shift, round half to even by adding
// half minus one plus the quotient's parity).
#include "quant_out.h"

#include <cstdlib>
#include <cstring>
#include <utility>

#include "npu/ref/scalar.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define NPU_KERN_X86 1
#include <immintrin.h>
#endif

namespace npu::emu::kern {
namespace {

constexpr int64_t kI32Min = INT32_MIN, kI32Max = INT32_MAX;

#ifdef NPU_KERN_X86
#define NPU_QOUT512 "avx512f,avx512bw,avx512vl"

/// Per-channel constants of the vector rule for 8 channels, in 64-bit lanes.
struct Lanes8 {
  __m512i bz, add, mult, shift, round;  // round: 2^(shift - 1) - 1
};

/// The outputs of 8 channels of one row from sums s (sign-extended to int64) in the command's
/// variant (QuantOut::Variant), in 64-bit lanes into `q`:
/// acc = s - bz * R + add, then round_half_even(acc * mult / 2^shift) + zp, clamped. The
/// rounding is floor((p + 2^(shift-1) - 1 + odd) / 2^shift) with odd the parity of
/// floor(p / 2^shift): above half rounds up, below down, a tie to even. False when kCheck finds
/// an acc of lanes `m` outside int32.
template <bool kRowSum, bool kCheck, bool kOrdered>
[[gnu::target(NPU_QOUT512), gnu::always_inline]] inline bool requant8(__m512i& q, __m512i s,
                                                                      __m512i r, const Lanes8& c,
                                                                      __m512i zp, __m512i lo,
                                                                      __m512i hi, __mmask8 m) {
  __m512i v = _mm512_add_epi64(s, c.add);
  if constexpr (kRowSum) v = _mm512_sub_epi64(v, _mm512_mul_epi32(c.bz, r));
  if constexpr (kCheck) {
    const __mmask8 in = _mm512_cmpge_epi64_mask(v, _mm512_set1_epi64(kI32Min)) &
                        _mm512_cmple_epi64_mask(v, _mm512_set1_epi64(kI32Max));
    if ((in & m) != m) return false;
  }
  const __m512i p = _mm512_mul_epi32(v, c.mult);  // exact: both factors in int32
  const __m512i odd = _mm512_and_si512(_mm512_srav_epi64(p, c.shift), _mm512_set1_epi64(1));
  q = _mm512_srav_epi64(_mm512_add_epi64(_mm512_add_epi64(p, c.round), odd), c.shift);
  q = _mm512_add_epi64(q, zp);
  if constexpr (kOrdered) {
    q = _mm512_min_epi64(_mm512_max_epi64(q, lo), hi);
  } else {  // the scalar rule's order: above hi gives hi, else below lo gives lo
    const __mmask8 above = _mm512_cmpgt_epi64_mask(q, hi), below = _mm512_cmplt_epi64_mask(q, lo);
    q = _mm512_mask_mov_epi64(_mm512_mask_mov_epi64(q, below, lo), above, hi);
  }
  return true;
}

/// Per-channel constants of the vector rule (QuantOut::lanes_), each n rounded up to 8.
struct ChannelLanes {
  const int64_t *bz, *add, *mult, *shift, *round;
};

[[gnu::target(NPU_QOUT512), gnu::always_inline]] inline Lanes8 load_lanes(const ChannelLanes& cl,
                                                                          size_t j0) {
  return {_mm512_loadu_si512(cl.bz + j0), _mm512_loadu_si512(cl.add + j0),
          _mm512_loadu_si512(cl.mult + j0), _mm512_loadu_si512(cl.shift + j0),
          _mm512_loadu_si512(cl.round + j0)};
}

/// QuantOut::rows for int32 sums and 8-bit outputs: per group of 16 channels (then of 8) the
/// constants are loaded once and every row is done with them; 16 outputs of a row are stored as
/// one 16-byte vector (a masked down-converting store of 8 bytes costs about as much as the
/// arithmetic before it); a lane group whose acc leaves int32 takes scalar(r, j, s).
template <bool kRowSum, bool kCheck, bool kOrdered, class Scalar>
[[gnu::target(NPU_QOUT512)]] void rows_avx512(std::byte* out, size_t out_stride, const int32_t* s,
                                              size_t ld, size_t rows, const int64_t* rowsums,
                                              size_t n, const ChannelLanes& cl, const QOutput& qo,
                                              Scalar&& scalar) {
  const __m512i zp = _mm512_set1_epi64(qo.out_zp), lo = _mm512_set1_epi64(qo.lo),
                hi = _mm512_set1_epi64(qo.hi);
  size_t j0 = 0;
  for (; j0 + 16 <= n; j0 += 16) {
    const Lanes8 c0 = load_lanes(cl, j0), c1 = load_lanes(cl, j0 + 8);
    for (size_t r = 0; r < rows; ++r) {
      const int32_t* sr = s + r * ld;
      const __m512i rv = kRowSum ? _mm512_set1_epi64(rowsums[r]) : _mm512_setzero_si512();
      __m512i q0, q1;
      const bool ok0 = requant8<kRowSum, kCheck, kOrdered>(
          q0, _mm512_cvtepi32_epi64(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(sr + j0))),
          rv, c0, zp, lo, hi, 0xff);
      const bool ok1 = requant8<kRowSum, kCheck, kOrdered>(
          q1,
          _mm512_cvtepi32_epi64(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(sr + j0 + 8))),
          rv, c1, zp, lo, hi, 0xff);
      std::byte* o = out + r * out_stride + j0;
      if (ok0 && ok1) {
        _mm_storeu_si128(reinterpret_cast<__m128i*>(o),
                         _mm_unpacklo_epi64(_mm512_cvtepi64_epi8(q0), _mm512_cvtepi64_epi8(q1)));
        continue;
      }
      if (ok0) {
        _mm512_mask_cvtepi64_storeu_epi8(o, 0xff, q0);
      } else {
        for (size_t j = j0; j < j0 + 8; ++j) scalar(r, j, int64_t{sr[j]});
      }
      if (ok1) {
        _mm512_mask_cvtepi64_storeu_epi8(o + 8, 0xff, q1);
      } else {
        for (size_t j = j0 + 8; j < j0 + 16; ++j) scalar(r, j, int64_t{sr[j]});
      }
    }
  }
  for (; j0 < n; j0 += 8) {
    const size_t count = std::min<size_t>(8, n - j0);
    const auto m = static_cast<__mmask8>((1u << count) - 1);
    const Lanes8 c = load_lanes(cl, j0);
    for (size_t r = 0; r < rows; ++r) {
      const int32_t* sr = s + r * ld;
      const __m512i sv = _mm512_cvtepi32_epi64(_mm256_maskz_loadu_epi32(m, sr + j0));
      const __m512i rv = kRowSum ? _mm512_set1_epi64(rowsums[r]) : _mm512_setzero_si512();
      __m512i q;
      if (requant8<kRowSum, kCheck, kOrdered>(q, sv, rv, c, zp, lo, hi, m)) {
        _mm512_mask_cvtepi64_storeu_epi8(out + r * out_stride + j0, m, q);
      } else {
        for (size_t j = j0; j < j0 + count; ++j) scalar(r, j, int64_t{sr[j]});
      }
    }
  }
}

/// The same for int32 outputs: acc wrapped to 32 bits (the ISA's rule).
[[gnu::target(NPU_QOUT512)]] void rows_int32_avx512(std::byte* out, size_t out_stride,
                                                    const int32_t* s, size_t ld, size_t rows,
                                                    const int64_t* rowsums, size_t n,
                                                    const ChannelLanes& cl) {
  for (size_t j0 = 0; j0 < n; j0 += 8) {
    const size_t count = std::min<size_t>(8, n - j0);
    const auto m = static_cast<__mmask8>((1u << count) - 1);
    const __m512i bz = _mm512_loadu_si512(cl.bz + j0), add = _mm512_loadu_si512(cl.add + j0);
    for (size_t r = 0; r < rows; ++r) {
      __m512i v = _mm512_add_epi64(
          _mm512_cvtepi32_epi64(_mm256_maskz_loadu_epi32(m, s + r * ld + j0)), add);
      if (rowsums != nullptr)
        v = _mm512_sub_epi64(v, _mm512_mul_epi32(bz, _mm512_set1_epi64(rowsums[r])));
      _mm512_mask_cvtepi64_storeu_epi32(out + r * out_stride + j0 * 4, m, v);
    }
  }
}

template <bool kRowSum, bool kCheck, bool kOrdered, class Scalar>
[[gnu::target(NPU_QOUT512)]] void rows_variant(std::byte* out, size_t out_stride, const int32_t* s,
                                               size_t ld, size_t rows, const int64_t* rowsums,
                                               size_t n, const ChannelLanes& cl, const QOutput& qo,
                                               Scalar&& scalar) {
  rows_avx512<kRowSum, kCheck, kOrdered>(out, out_stride, s, ld, rows, rowsums, n, cl, qo, scalar);
}

/// Picks the instantiation of the command's variant (QuantOut::Variant).
template <class Scalar>
void rows_dispatch(const QuantOut::Variant& v, std::byte* out, size_t out_stride, const int32_t* s,
                   size_t ld, size_t rows, const int64_t* rowsums, size_t n, const ChannelLanes& cl,
                   const QOutput& qo, Scalar&& scalar) {
  using Fn = void (*)(std::byte*, size_t, const int32_t*, size_t, size_t, const int64_t*, size_t,
                      const ChannelLanes&, const QOutput&, Scalar&);
  static constexpr Fn kFns[2][2][2] = {
      {{rows_variant<false, false, false, Scalar&>, rows_variant<false, false, true, Scalar&>},
       {rows_variant<false, true, false, Scalar&>, rows_variant<false, true, true, Scalar&>}},
      {{rows_variant<true, false, false, Scalar&>, rows_variant<true, false, true, Scalar&>},
       {rows_variant<true, true, false, Scalar&>, rows_variant<true, true, true, Scalar&>}}};
  kFns[v.row_sum][v.check][v.ordered](out, out_stride, s, ld, rows, rowsums, n, cl, qo, scalar);
}
#undef NPU_QOUT512
#endif

}  // namespace

QuantOut::QuantOut(const QOutput& qo, const npu_chan_qparams* q, const PackedQ8& b, int64_t a_zp)
    : qo_(qo), q_(q), n_(b.n()), zero_zps_(b.zero_zps()), vec_(false) {
  init(static_cast<int64_t>(b.k()), [&](size_t j) -> std::pair<int64_t, int64_t> {
    const int64_t bz = b.zp(j);
    return {bz, static_cast<int64_t>(k_ * a_zp * bz - a_zp * b.colsum(j))};
  });
}

QuantOut::QuantOut(const QOutput& qo, const npu_chan_qparams* q, size_t n, uint64_t k)
    : qo_(qo), q_(q), n_(n), zero_zps_(true), vec_(false) {
  init(static_cast<int64_t>(k), [](size_t) { return std::pair<int64_t, int64_t>{0, 0}; });
}

template <class Terms>
void QuantOut::init(int64_t k, Terms&& terms) {
  k_ = k;
  const size_t n8 = (n_ + 7) / 8 * 8;  // whole vectors: the lanes past n are never stored
  lanes_.assign(5 * n8, 0);
  int64_t* bz = lanes_.data();
  int64_t* add = bz + n8;
  bool shifts_ok = true;
  int64_t max_bias = 0, max_zp = 0;
  for (size_t j = 0; j < n_; ++j) {
    const auto [zp, constant] = terms(j);
    bz[j] = zp;
    // Wrapping, as QOutput::add: exact whenever the accumulator is.
    add[j] = static_cast<int64_t>(static_cast<uint64_t>(constant) +
                                  static_cast<uint64_t>(int64_t{q_[j].bias}));
    shifts_ok = shifts_ok && q_[j].shift >= 1 && q_[j].shift <= 62;
    max_bias = std::max(max_bias, std::abs(int64_t{q_[j].bias}));
    max_zp = std::max(max_zp, std::abs(int64_t{q_[j].w_zp}));
  }
#ifdef NPU_KERN_X86
  // The row sum enters a 32 x 32-bit product: |R| <= K * 255 < 2^31, and |b'_zp| < 2^31.
  vec_ = isa_at_least(Isa::Avx512) && k < (int64_t{1} << 23) &&
         (qo_.dtype == NPU_DTYPE_INT32 || shifts_ok);
  // |a - a_zp| <= 255 and |b - w_zp| <= 255 + 128 + |w_zp|: below 2^31, every acc fits int32.
  const int64_t bound = k * 255 * (383 + max_zp) + max_bias;
  variant_ = {!zero_zps_, bound >= (int64_t{1} << 31), qo_.lo <= qo_.hi};
  if (vec_ && qo_.dtype != NPU_DTYPE_INT32) {
    int64_t *mult = add + n8, *shift = mult + n8, *round = shift + n8;
    for (size_t j = 0; j < n_; ++j) {
      mult[j] = q_[j].multiplier, shift[j] = q_[j].shift;
      round[j] = (int64_t{1} << (shift[j] - 1)) - 1;
    }
  }
#endif
}

void QuantOut::scalar(std::byte* out, size_t j, int64_t a) const {
  if (qo_.dtype == NPU_DTYPE_INT32) {
    const auto v = static_cast<int32_t>(a);  // wraps (C++20)
    std::memcpy(out + j * 4, &v, 4);
  } else {
    out[j] = static_cast<std::byte>(
        ref::requantize(a, q_[j].multiplier, q_[j].shift, qo_.out_zp, qo_.lo, qo_.hi));
  }
}

void QuantOut::rows(std::byte* out, size_t out_stride, const QSums& s, size_t rows,
                    const int64_t* rowsums) const {
  const auto rowsum = [rowsums](size_t r) { return rowsums != nullptr ? rowsums[r] : 0; };
#ifdef NPU_KERN_X86
  if (vec_ && s.s32 != nullptr) {
    const size_t n8 = lanes_.size() / 5;
    const int64_t* l = lanes_.data();
    const ChannelLanes cl{l, l + n8, l + 2 * n8, l + 3 * n8, l + 4 * n8};
    if (qo_.dtype == NPU_DTYPE_INT32)
      return rows_int32_avx512(out, out_stride, s.s32, s.ld, rows, rowsums, n_, cl);
    auto scalar_acc = [&](size_t r, size_t j, int64_t v) {
      scalar(out + r * out_stride, j, acc(v, j, rowsum(r)));
    };
    return rows_dispatch(variant_, out, out_stride, s.s32, s.ld, rows, rowsums, n_, cl, qo_,
                         scalar_acc);
  }
#endif
  for (size_t r = 0; r < rows; ++r)
    for (size_t j = 0; j < n_; ++j) {
      const int64_t v = s.s32 != nullptr ? int64_t{s.s32[r * s.ld + j]} : s.s64[r * s.ld + j];
      scalar(out + r * out_stride, j, acc(v, j, rowsum(r)));
    }
}

}  // namespace npu::emu::kern
