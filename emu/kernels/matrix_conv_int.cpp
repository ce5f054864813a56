// CONV2D's integer mode on an HWC tile with OHWI weights, exact: depthwise convolutions (zero
// points inside their dtypes) run a direct loop over the taps in int32, vectorized across
// channels (with AVX-512 over input rows widened once to int32, vpmaddwd per tap); the others
// the quantized GEMM of gemm_q8.h per group, their taps read where they lie (channels per group
// a multiple of 4, at least kQ8TapMinChannels or a 1x1 stride-1 convolution) or built as im2col
// rows, then quant_out.h's output stage; parameters outside the GEMM's exactness bounds (zero
// points far outside the dtype range, huge K) a direct loop in wrapping 64-bit arithmetic.
#include <algorithm>
#include <array>
#include <cstring>
#include <optional>
#include <span>
#include <type_traits>
#include <vector>

#include "cancel.h"
#include "conv_geometry.h"
#include "gemm_q8.h"
#include "matrix_common.h"
#include "npu/isa/dtype.h"
#include "ops.h"
#include "packed_cache.h"
#include "quant_out.h"
#include "scratch.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#endif

namespace npu::emu::kern {
namespace {

// --------------------------------------------------------------------------------- integer

/// Direct loop in wrapping 64-bit arithmetic: any zero points, any K.
void conv_q_direct(const npu_cmd_conv2d& c, std::span<std::byte> sram, const Geo& g,
                   const std::vector<npu_chan_qparams>& q, const QOutput& qo) {
  const std::byte* in = sram.data() + c.in_addr;
  const std::byte* w = sram.data() + c.w_addr;
  std::byte* out = sram.data() + c.out_addr;
  const size_t k = g.k();
  std::vector<int64_t> acc(static_cast<size_t>(g.oc));
  for (int64_t oy = 0; oy < g.oh && !cancelled(); ++oy)
    for (int64_t ox = 0; ox < g.ow; ++ox) {
      for (int64_t o = 0; o < g.oc; ++o) {
        const int64_t grp = o / g.cout_g;
        const int64_t wzp = q[static_cast<size_t>(o)].w_zp;
        uint64_t s = 0;
        for (int64_t ky = 0; ky < g.kh; ++ky)
          for (int64_t kx = 0; kx < g.kw; ++kx) {
            const int64_t iy = oy * g.sh - g.pt + ky * g.dh;
            const int64_t ix = ox * g.sw - g.pl + kx * g.dw;
            if (iy < 0 || iy >= g.ih || ix < 0 || ix >= g.iw) continue;
            const size_t xi = static_cast<size_t>((iy * g.iw + ix) * g.ic + grp * g.cin_g);
            const size_t wi =
                static_cast<size_t>(o) * k + static_cast<size_t>((ky * g.kw + kx) * g.cin_g);
            for (int64_t ci = 0; ci < g.cin_g; ++ci) {
              const int64_t xv =
                  ld_int(in, xi + static_cast<size_t>(ci), c.in_dtype) - int64_t{c.in_zp};
              const int64_t wv = ld_int(w, wi + static_cast<size_t>(ci), c.w_dtype) - wzp;
              s += static_cast<uint64_t>(xv) * static_cast<uint64_t>(wv);
            }
          }
        acc[static_cast<size_t>(o)] = static_cast<int64_t>(s);
      }
      qo.store_row(out + static_cast<size_t>((oy * g.ow + ox) * g.oc) * isa::dtype_size(qo.dtype),
                   acc.data(), q.data(), static_cast<size_t>(g.oc));
    }
}

/// Depthwise, channel multiplier 1, zero points inside their dtypes: |x - zp|, |w - zp| <=
/// 255, so taps * 255^2 < 2^31 keeps an int32 accumulator exact. An output row at a time: per
/// tap, the pixels whose input is inside (no padding checks in the loop), vectorized across
/// channels; then quant_out.h's output stage for the row.
/// The accumulation of one tap into a run of channels: a[ci] += (x[ci] - zp) * w[ci], left
/// to the auto-vectorizer (the library's baseline SSE2, or AVX2).
template <class T>
[[gnu::always_inline]] inline void tap_accumulate(int32_t* a, const T* x, const int16_t* w,
                                                  int32_t zp, size_t ch) {
  for (size_t ci = 0; ci < ch; ++ci)
    a[ci] += static_cast<int32_t>(static_cast<int16_t>(x[ci] - zp)) * w[ci];
}

/// One output row of a depthwise convolution into acc[ow][ch]: per tap, the pixels whose input
/// is inside (no padding checks in the loop). A macro instantiated per ISA (GCC inlines
/// target-specific code only into functions of that target).
#define NPU_DEPTHWISE_ROW(NAME, ATTR)                                                              \
  template <class T>                                                                               \
  ATTR void NAME(const Geo& g, const std::byte* in, int32_t in_zp, const int16_t* wt, int64_t oy,  \
                 int32_t* acc) {                                                                   \
    const auto ch = static_cast<size_t>(g.oc);                                                     \
    std::fill(acc, acc + static_cast<size_t>(g.ow) * ch, 0);                                       \
    for (int64_t ky = 0; ky < g.kh; ++ky) {                                                        \
      const int64_t iy = oy * g.sh - g.pt + ky * g.dh;                                             \
      if (iy < 0 || iy >= g.ih) continue;                                                          \
      for (int64_t kx = 0; kx < g.kw; ++kx) {                                                      \
        const int16_t* wk = wt + static_cast<size_t>(ky * g.kw + kx) * ch;                         \
        /* Output pixels whose input column ix = ox * sw - pl + kx * dw is inside [0, iw). */      \
        const int64_t off = kx * g.dw - g.pl;                                                      \
        const int64_t ox0 = off >= 0 ? 0 : (-off + g.sw - 1) / g.sw;                               \
        const int64_t ox1 = std::min(g.ow, g.iw - off <= 0 ? 0 : (g.iw - off + g.sw - 1) / g.sw);  \
        for (int64_t ox = ox0; ox < ox1; ++ox)                                                     \
          tap_accumulate<T>(acc + static_cast<size_t>(ox) * ch,                                    \
                            reinterpret_cast<const T*>(in) + (iy * g.iw + ox * g.sw + off) * g.ic, \
                            wk, in_zp, ch);                                                        \
      }                                                                                            \
    }                                                                                              \
  }

NPU_DEPTHWISE_ROW(depthwise_row_portable, )
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
NPU_DEPTHWISE_ROW(depthwise_row_avx2, [[gnu::target("avx2,fma")]])
#endif
#undef NPU_DEPTHWISE_ROW

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
/// Widened rows depthwise_avx512 keeps: as many as an output row reads inside the input.
size_t depthwise_slots(const Geo& g) {
  return static_cast<size_t>(std::min(g.kh, g.ih));
}

/// One input row of `iw` pixels (pixel stride ic) widened to x - zp in int32 lanes, `groups`
/// vectors of 16 channels per pixel (the last masked by `tail`, its padding lanes zero).
template <class T>
[[gnu::target("avx512f,avx512bw,avx512vl,avx2,fma")]] void widen_row_avx512(
    const T* x, size_t iw, size_t ic, size_t groups, __mmask16 tail, int32_t zp, int32_t* row) {
  const __m512i zv = _mm512_set1_epi32(zp);
  for (size_t ix = 0; ix < iw; ++ix)
    for (size_t v = 0; v < groups; ++v) {
      const __mmask16 m = v + 1 == groups ? tail : 0xffff;
      const __m128i xb = _mm_maskz_loadu_epi8(m, x + ix * ic + v * 16);
      const __m512i xv = std::is_signed_v<T> ? _mm512_cvtepi8_epi32(xb) : _mm512_cvtepu8_epi32(xb);
      _mm512_storeu_si512(row + (ix * groups + v) * 16, _mm512_maskz_sub_epi32(m, xv, zv));
    }
}

/// One output pixel's 16 channels (vector v) of depthwise_avx512, every tap's column checked:
/// acc[ox][v * 16, + 16) (row stride g.oc) = the sum over the taps inside the input.
[[gnu::target("avx512f,avx512bw,avx512vl,avx2,fma")]] void depthwise_pixel(
    const Geo& g, std::span<const int32_t* const> rows, const int32_t* w32, size_t cp, size_t v,
    __mmask16 store, int64_t ox, int32_t* acc) {
  __m512i a = _mm512_setzero_si512();
  for (int64_t ky = 0; ky < g.kh; ++ky) {
    const int32_t* row = rows[static_cast<size_t>(ky)];
    if (row == nullptr) continue;
    const int32_t* wk = w32 + static_cast<size_t>(ky * g.kw) * cp + v * 16;
    for (int64_t kx = 0, ix = ox * g.sw - g.pl; kx < g.kw; ++kx, ix += g.dw) {
      if (ix < 0 || ix >= g.iw) continue;
      const __m512i xv = _mm512_loadu_si512(row + static_cast<size_t>(ix) * cp + v * 16);
      const __m512i wv = _mm512_loadu_si512(wk + static_cast<size_t>(kx) * cp);
      a = _mm512_add_epi32(a, _mm512_madd_epi16(xv, wv));
    }
  }
  _mm512_mask_storeu_epi32(acc + static_cast<size_t>(ox) * static_cast<size_t>(g.oc) + v * 16,
                           store, a);
}

/// The whole depthwise convolution with AVX-512: each input row the taps reach is widened once
/// to int32 lanes holding x - zp (depthwise_slots() of them, a row kept while the next output rows
/// read it: a 3 x 3 kernel reads each row three times, each pixel nine times), the weights are
/// int16 in the low half of int32 lanes with a zero high half, so one vpmaddwd is the product of a
/// lane (x - zp fits 16 bits: |x - zp| <= 255), and per output pixel and 16 channels the taps
/// accumulate in a register. An output row at a time, then quant_out.h's output stage (as the other
/// ISAs). Integer sums in int32 are exact in any order (conv_q_depthwise's bound), so the results
/// are the portable loop's.
template <class T>
[[gnu::target("avx512f,avx512bw,avx512vl,avx2,fma")]] void depthwise_avx512(
    const Geo& g, const std::byte* in, int32_t in_zp, const int16_t* wt, const QuantOut& qout,
    std::byte* out, size_t row_bytes) {
  const auto ch = static_cast<size_t>(g.oc);
  const size_t taps = static_cast<size_t>(g.kh * g.kw);
  const size_t groups = (ch + 15) / 16, cp = groups * 16;  // channels padded to whole vectors
  const auto tail = static_cast<__mmask16>(ch % 16 == 0 ? 0xffff : (1u << (ch % 16)) - 1);
  // Weights [tap][cp]: int16 zero-extended into int32 lanes (zero in the padding channels).
  const Scratch<int32_t> w32(taps * cp);
  for (size_t t = 0; t < taps; ++t)
    for (size_t ci = 0; ci < cp; ++ci)
      w32.get()[t * cp + ci] = ci < ch ? static_cast<uint16_t>(wt[t * ch + ci]) : 0;
  // The widened input rows: depthwise_slots() slots, each holding row held[s] (x - zp, [iw][cp]
  // int32) or none. An output row reads at most that many distinct rows inside the input (iy =
  // oy * sh - pt + ky * dh); the slots holding one of them stay, the others take those not held
  // yet. (Slot iy % kh would not do: with dh = kh every row of an output row has the same
  // remainder.)
  const auto kh = static_cast<size_t>(g.kh), iw = static_cast<size_t>(g.iw);
  const size_t slots = depthwise_slots(g);
  const Scratch<int32_t> ring(slots * iw * cp);
  std::vector<int64_t> held(slots, -1);
  std::vector<uint8_t> kept(slots);
  const auto* x0 = reinterpret_cast<const T*>(in);
  const auto slot = [&](size_t s) { return ring.get() + s * iw * cp; };
  const Scratch<int32_t> acc(static_cast<size_t>(g.ow) * ch);
  std::vector<const int32_t*> rows(kh);
  // The output pixels whose every tap column lies inside the input: ix = ox * sw - pl + kx * dw
  // in [0, iw) for kx = 0 and kx = kw - 1.
  const int64_t reach = (g.kw - 1) * g.dw;
  const int64_t ox_in = (g.pl + g.sw - 1) / g.sw;
  const int64_t ox_end =
      g.iw - 1 - reach + g.pl < 0 ? ox_in : std::min(g.ow, (g.iw - 1 - reach + g.pl) / g.sw + 1);
  for (int64_t oy = 0; oy < g.oh && !cancelled(); ++oy) {
    std::fill(kept.begin(), kept.end(), 0);
    std::fill(rows.begin(), rows.end(), nullptr);
    for (size_t s = 0; s < slots; ++s)  // rows held from earlier output rows (-1: none)
      for (size_t ky = 0; ky < kh && held[s] >= 0; ++ky)
        if (held[s] == oy * g.sh - g.pt + static_cast<int64_t>(ky) * g.dh)
          rows[ky] = slot(s), kept[s] = 1;
    for (size_t ky = 0, s = 0; ky < kh; ++ky) {  // the others, into free slots
      const int64_t iy = oy * g.sh - g.pt + static_cast<int64_t>(ky) * g.dh;
      if (iy < 0 || iy >= g.ih || rows[ky] != nullptr) continue;
      while (kept[s] != 0) ++s;  // there is one: no more rows wanted than slots
      kept[s] = 1, held[s] = iy;
      widen_row_avx512(x0 + static_cast<size_t>(iy) * iw * static_cast<size_t>(g.ic), iw,
                       static_cast<size_t>(g.ic), groups, tail, in_zp, slot(s));
      rows[ky] = slot(s);
    }
    // Per 16 channels: the output pixels whose taps all lie inside the row ([ox_in, ox_end))
    // four at a time, each weight vector loaded once for the four; the others one at a time
    // with the bounds checked per tap.
    for (size_t v = 0; v < groups; ++v) {
      const __mmask16 store = v + 1 == groups ? tail : 0xffff;
      int64_t ox = 0;
      for (; ox < std::min(ox_in, g.ow); ++ox)
        depthwise_pixel(g, rows, w32.get(), cp, v, store, ox, acc.get());
      for (; ox + 4 <= ox_end; ox += 4) {
        __m512i a[4] = {_mm512_setzero_si512(), _mm512_setzero_si512(), _mm512_setzero_si512(),
                        _mm512_setzero_si512()};
        // From one output pixel's taps to the next's.
        const size_t step = static_cast<size_t>(g.sw) * cp;
        for (int64_t ky = 0; ky < g.kh; ++ky) {
          const int32_t* row = rows[static_cast<size_t>(ky)];
          if (row == nullptr) continue;
          const int32_t* wk = w32.get() + static_cast<size_t>(ky * g.kw) * cp + v * 16;
          const int32_t* xk = row + static_cast<size_t>(ox * g.sw - g.pl) * cp + v * 16;
          for (int64_t kx = 0; kx < g.kw; ++kx, xk += static_cast<size_t>(g.dw) * cp) {
            const __m512i wv = _mm512_loadu_si512(wk + static_cast<size_t>(kx) * cp);
            for (size_t p = 0; p < 4; ++p)
              a[p] =
                  _mm512_add_epi32(a[p], _mm512_madd_epi16(_mm512_loadu_si512(xk + p * step), wv));
          }
        }
        for (size_t p = 0; p < 4; ++p)
          _mm512_mask_storeu_epi32(
              acc.get() + static_cast<size_t>(ox + static_cast<int64_t>(p)) * ch + v * 16, store,
              a[p]);
      }
      for (; ox < g.ow; ++ox) depthwise_pixel(g, rows, w32.get(), cp, v, store, ox, acc.get());
    }
    qout.rows(out + static_cast<size_t>(oy * g.ow) * row_bytes, row_bytes,
              QSums{acc.get(), nullptr, ch}, static_cast<size_t>(g.ow), nullptr);
  }
}
#endif

template <class T>
auto depthwise_row_fn() {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  if (isa_at_least(Isa::Avx2)) return depthwise_row_avx2<T>;
#endif
  return depthwise_row_portable<T>;
}

bool conv_q_depthwise(const npu_cmd_conv2d& c, std::span<std::byte> sram, const Geo& g,
                      const std::vector<npu_chan_qparams>& q, const QOutput& qo) {
  const size_t taps = static_cast<size_t>(g.kh * g.kw), ch = static_cast<size_t>(g.oc);
  if (!g.depthwise() || g.cin_g != 1 || taps > 33000) return false;
  const int32_t in_zp = c.in_zp;
  if (in_zp < ref::dtype_min(c.in_dtype) || in_zp > ref::dtype_max(c.in_dtype)) return false;
  for (const auto& p : q)
    if (p.w_zp < ref::dtype_min(c.w_dtype) || p.w_zp > ref::dtype_max(c.w_dtype)) return false;

  const std::byte* in = sram.data() + c.in_addr;
  const std::byte* w = sram.data() + c.w_addr;
  std::byte* out = sram.data() + c.out_addr;
  // Weights [tap][channel] less their zero points (stored [channel][tap]; 8-bit weights read
  // as bytes, a tap's channels written in a row).
  std::vector<int16_t> wt(taps * ch);
  const auto weights = [&](auto at) {  // at(i): stored element i as int32
    for (size_t t = 0; t < taps; ++t)
      for (size_t ci = 0; ci < ch; ++ci)
        wt[t * ch + ci] = static_cast<int16_t>(at(ci * taps + t) - q[ci].w_zp);
  };
  if (c.w_dtype == NPU_DTYPE_INT8)
    weights([w8 = reinterpret_cast<const int8_t*>(w)](size_t i) { return int32_t{w8[i]}; });
  else if (c.w_dtype == NPU_DTYPE_UINT8)
    weights([w8 = reinterpret_cast<const uint8_t*>(w)](size_t i) { return int32_t{w8[i]}; });
  else
    weights([&](size_t i) { return ld_int(w, i, c.w_dtype); });
  const QuantOut qout(qo, q.data(), ch, taps);
  const size_t row_bytes = ch * isa::dtype_size(qo.dtype);
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  // The widened rows are read after earlier output rows are written: an output over the
  // input takes the row loop below, which reads the input as it is then (as before).
  // Also the row loop when the widened rows would take more than 16 MiB (kh and iw * ic of an
  // SRAM tile can both be large; a model's tile needs a few hundred KiB).
  const uint64_t in_bytes = static_cast<uint64_t>(g.ih) * g.iw * g.ic;
  const uint64_t out_bytes = static_cast<uint64_t>(g.oh) * g.ow * row_bytes;
  const uint64_t ring_bytes = uint64_t{depthwise_slots(g)} * g.iw * ((ch + 15) / 16 * 16) * 4;
  if (isa_at_least(Isa::Avx512) && !ranges_overlap(c.in_addr, in_bytes, c.out_addr, out_bytes) &&
      ring_bytes <= (uint64_t{16} << 20)) {
    if (c.in_dtype == NPU_DTYPE_INT8)
      depthwise_avx512<int8_t>(g, in, in_zp, wt.data(), qout, out, row_bytes);
    else
      depthwise_avx512<uint8_t>(g, in, in_zp, wt.data(), qout, out, row_bytes);
    return true;
  }
#endif
  const Scratch<int32_t> acc(static_cast<size_t>(g.ow) * ch);
  const auto row =
      c.in_dtype == NPU_DTYPE_INT8 ? depthwise_row_fn<int8_t>() : depthwise_row_fn<uint8_t>();
  for (int64_t oy = 0; oy < g.oh && !cancelled(); ++oy) {
    row(g, in, in_zp, wt.data(), oy, acc.get());
    qout.rows(out + static_cast<size_t>(oy * g.ow) * row_bytes, row_bytes,
              QSums{acc.get(), nullptr, ch}, static_cast<size_t>(g.ow), nullptr);
  }
  return true;
}

/// Input channels per group from which an integer convolution reads its taps in place (in
/// groups of 4 bytes, the dot product's step); below it, or for a channel count that is not a
/// multiple of 4, im2col rows.
constexpr size_t kQ8TapMinChannels = 16;

/// A's row sums of an integer convolution (gemm_q8.h: R, the sum of a row's taps): each input
/// pixel's sum over the group's channels, laid out over the padded extent the taps reach
/// (padding holds cin_g zero points), so that a row's sum is kh * kw loads without bounds
/// checks. Built once per command and group; read by any thread.
class TapSums {
 public:
  template <class T>
  TapSums(const Geo& g, const T* in, int64_t grp, int64_t a_zp)
      : g_(g),
        pw_((g.ow - 1) * g.sw + (g.kw - 1) * g.dw + 1),
        sums_(static_cast<size_t>(((g.oh - 1) * g.sh + (g.kh - 1) * g.dh + 1) * pw_),
              static_cast<int32_t>(g.cin_g * a_zp)) {
    const auto cg = static_cast<size_t>(g.cin_g);
    const int64_t ph = static_cast<int64_t>(sums_.size()) / pw_;
    for (int64_t y = 0; y < ph; ++y) {
      const int64_t iy = y - g.pt;
      if (iy < 0 || iy >= g.ih) continue;
      for (int64_t x = std::max<int64_t>(0, g.pl); x < pw_ && x - g.pl < g.iw; ++x) {
        const T* p = in + ((iy * g.iw + x - g.pl) * g.ic + grp * g.cin_g);
        sums_[static_cast<size_t>(y * pw_ + x)] = static_cast<int32_t>(
            q8_row_sum(reinterpret_cast<const uint8_t*>(p), cg, std::is_signed_v<T>));
      }
    }
  }

  /// Row sums of output pixels [m0, m0 + rows).
  void rows(size_t m0, size_t rows, int64_t* out) const {
    int64_t oy = static_cast<int64_t>(m0) / g_.ow, ox = static_cast<int64_t>(m0) % g_.ow;
    for (size_t r = 0; r < rows; ++r) {
      const int32_t* base = sums_.data() + (oy * g_.sh * pw_ + ox * g_.sw);
      int64_t s = 0;
      for (int64_t ky = 0; ky < g_.kh; ++ky, base += g_.dh * pw_)
        for (int64_t kx = 0; kx < g_.kw; ++kx) s += base[kx * g_.dw];
      out[r] = s;
      if (++ox == g_.ow) ox = 0, ++oy;
    }
  }

 private:
  const Geo& g_;
  int64_t pw_;  // padded width the taps reach
  std::vector<int32_t> sums_;
};

}  // namespace

void conv_int(const npu_cmd_conv2d& c, std::span<std::byte> sram, const Geo& g) {
  const std::vector<npu_chan_qparams> q =
      read_qparams(sram, c.chan_addr, static_cast<size_t>(g.oc));
  const QOutput qo(c.out_dtype, c.out_zp, c.clamp_min, c.clamp_max);
  if (conv_q_depthwise(c, sram, g, q, qo)) return;

  const size_t k = g.k();
  const int64_t azp = c.in_zp;  // in the input's own domain (int8 or uint8)
  const bool a_signed = c.in_dtype == NPU_DTYPE_INT8;
  std::vector<int32_t> wzp(q.size());
  for (size_t o = 0; o < q.size(); ++o) wzp[o] = q[o].w_zp;
  if (!q8_gemm_ok(a_signed, azp, wzp, k)) return conv_q_direct(c, sram, g, q, qo);

  const std::byte* in = sram.data() + c.in_addr;
  const auto* w = reinterpret_cast<const uint8_t*>(sram.data() + c.w_addr);
  std::byte* out = sram.data() + c.out_addr;
  const size_t out_esize = isa::dtype_size(qo.dtype);
  const bool split = splittable(c, g, 1, out_esize);
  const auto cg = static_cast<size_t>(g.cin_g), og = static_cast<size_t>(g.cout_g);
  // Taps read where they lie (a pointwise convolution's rows are one tap), else im2col rows
  // padded to 4 bytes.
  const bool in_place = cg % 4 == 0 && (cg >= kQ8TapMinChannels || g.pointwise());
  const PackedQ8::Layout layout{og, in_place ? static_cast<size_t>(g.kh * g.kw) : 1,
                                in_place ? cg : k, c.w_dtype == NPU_DTYPE_INT8, a_signed};
  const Q8Kernel& kr = q8_kernel(og);
  const auto apad = static_cast<uint8_t>(azp);  // (x - zp) == 0 at padded positions
  static thread_local PackedCache<PackedQ8> cache;
  std::optional<PackedQ8> own;

  for (int64_t grp = 0; grp < g.groups; ++grp) {
    const size_t n0 = static_cast<size_t>(grp) * og;
    const std::span<const int32_t> gzp = std::span<const int32_t>(wzp).subspan(n0, og);
    const auto make = [&](std::optional<PackedQ8>& p) {
      p.emplace(kr, layout, w + n0 * k, k, gzp);
    };
    const PackedQ8& packed = g.groups == 1
                                 ? cache.get(sram.data() + c.w_addr, c.w_addr, uint64_t{og} * k,
                                             {og, (uint64_t{layout.taps} << 32) | layout.kc,
                                              (uint64_t{layout.b_signed} << 1) | uint64_t{a_signed},
                                              reinterpret_cast<uintptr_t>(&kr)},
                                             make)
                                 : (make(own), *own);
    const QuantOut qout(qo, q.data() + n0, packed, azp);
    std::optional<TapSums> sums;
    if (qout.needs_rowsum()) {
      if (a_signed)
        sums.emplace(g, reinterpret_cast<const int8_t*>(in), grp, azp);
      else
        sums.emplace(g, reinterpret_cast<const uint8_t*>(in), grp, azp);
    }
    const auto store = [&](size_t m0, size_t rows, QSums s) {
      std::array<int64_t, kGemmMB> rowsums;  // a block has at most kGemmMB rows
      if (sums) sums->rows(m0, rows, rowsums.data());
      qout.rows(out + (m0 * static_cast<size_t>(g.oc) + n0) * out_esize,
                static_cast<size_t>(g.oc) * out_esize, s, rows, sums ? rowsums.data() : nullptr);
    };
    if (in_place) {
      const auto* xin = reinterpret_cast<const uint8_t*>(in) + static_cast<size_t>(grp) * cg;
      gemm_q8_taps(
          packed, g.m(), apad,
          [&](size_t m0, size_t rows, const uint8_t** table, size_t ld, const uint8_t* pad) {
            tap_table(g, xin, g.ic, m0, rows, table, ld, pad);
          },
          store, split);
      continue;
    }
    const auto* xin = reinterpret_cast<const uint8_t*>(in);
    gemm_q8_rows(
        packed, g.m(), k,
        [&](size_t m0, size_t rows, uint8_t* dst, size_t lda) {
          im2col(
              g, grp, xin, m0, rows, dst, lda,
              [](uint8_t* d, const uint8_t* src, size_t n) { std::memcpy(d, src, n); },
              [apad](uint8_t* d, size_t n) { std::memset(d, apad, n); });
        },
        store, split);
  }
}

}  // namespace npu::emu::kern
