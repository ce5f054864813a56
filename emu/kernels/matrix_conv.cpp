// CONV2D on an HWC tile with OHWI weights. Three algorithms, all exact for integers:
//  - depthwise (groups == in_c == out_c): direct loop over taps, vectorized across channels;
//  - otherwise im2col per block of output pixels + packed GEMM (gemm.h), per group; 1x1
//    stride-1 convolutions are a plain GEMM over the input rows;
//  - integer parameters outside the GEMM's exactness bounds (zero points far outside the
//    dtype range, huge K): a direct loop in wrapping 64-bit arithmetic.
#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <optional>
#include <vector>

#include "cancel.h"
#include "gemm.h"
#include "gemm_q8.h"
#include "matrix_common.h"
#include "npu/isa/dtype.h"
#include "ops.h"
#include "packed_cache.h"
#include "quant_out.h"
#include "scratch.h"
#include "sram_versions.h"

namespace npu::emu::kern {
namespace {

struct Geo {
  int64_t ih, iw, ic, oh, ow, oc, kh, kw, groups, cin_g, cout_g, sh, sw, dh, dw, pt, pl;
  size_t k() const { return static_cast<size_t>(kh * kw * cin_g); }
  size_t m() const { return static_cast<size_t>(oh * ow); }
  bool depthwise() const { return groups == ic && groups == oc; }
  bool pointwise() const {
    return kh == 1 && kw == 1 && sh == 1 && sw == 1 && pt == 0 && pl == 0 && oh == ih && ow == iw;
  }
};

/// Whether one group's GEMM may be shared with the worker (parallel.h): large enough, and the
/// output does not overlap the input (an in-place convolution keeps its serial order).
bool splittable(const npu_cmd_conv2d& c, const Geo& g, size_t in_esize, size_t out_esize) {
  const auto in_bytes = static_cast<uint64_t>(g.ih * g.iw * g.ic) * in_esize;
  const auto out_bytes = static_cast<uint64_t>(g.m()) * static_cast<uint64_t>(g.oc) * out_esize;
  return worth_splitting(g.m(), static_cast<uint64_t>(g.cout_g), g.k()) &&
         !ranges_overlap(c.in_addr, in_bytes, c.out_addr, out_bytes);
}

/// Input channels per group from which an fp32 convolution reads its taps in place: below
/// it, a tap's few multiply-adds per row tile do not pay for the tile's set-up, and im2col
/// (whose rows run over whole kernel rows) is faster.
constexpr size_t kTapMinChannels = 16;

Geo geometry(const npu_cmd_conv2d& c) {
  Geo g{};
  g.ih = c.in_h, g.iw = c.in_w, g.ic = c.in_c;
  g.oh = c.out_h, g.ow = c.out_w, g.oc = c.out_c;
  g.kh = c.k_h, g.kw = c.k_w;
  g.groups = std::max<int64_t>(1, c.groups);
  g.cin_g = g.ic / g.groups, g.cout_g = g.oc / g.groups;
  g.sh = std::max<int64_t>(1, c.stride_h), g.sw = std::max<int64_t>(1, c.stride_w);
  g.dh = std::max<int64_t>(1, c.dil_h), g.dw = std::max<int64_t>(1, c.dil_w);
  g.pt = c.pad_top, g.pl = c.pad_left;
  return g;
}

/// im2col of output pixels [m0, m0 + rows) for group `grp`: row r gets K = kh*kw*cin_g
/// values in (ky, kx, ci) order (the OHWI weight row order). copy(dst, src, n) moves n
/// in-bounds elements; pad(dst, n) fills n padded ones.
template <class T, class Src, class Copy, class Pad>
void im2col(const Geo& g, int64_t grp, const Src* in, size_t m0, size_t rows, T* dst, size_t lda,
            Copy&& copy, Pad&& pad) {
  const int64_t cg = g.cin_g;
  // Without groups and dilation along x, a row's taps kx = 0..kw-1 are consecutive input
  // pixels: one copy of kw * ic elements when all of them are inside the input.
  const bool runs = g.groups == 1 && g.dw == 1;
  for (size_t r = 0; r < rows; ++r) {
    const int64_t m = static_cast<int64_t>(m0 + r);
    const int64_t oy = m / g.ow, ox = m % g.ow;
    const int64_t ix0 = ox * g.sw - g.pl;
    const bool row_inside = runs && ix0 >= 0 && ix0 + g.kw <= g.iw;
    T* d = dst + r * lda;
    for (int64_t ky = 0; ky < g.kh; ++ky) {
      const int64_t iy = oy * g.sh - g.pt + ky * g.dh;
      if (iy < 0 || iy >= g.ih) {
        pad(d, static_cast<size_t>(g.kw * cg));
        d += g.kw * cg;
        continue;
      }
      if (row_inside) {
        copy(d, in + (iy * g.iw + ix0) * g.ic, static_cast<size_t>(g.kw * cg));
        d += g.kw * cg;
        continue;
      }
      for (int64_t kx = 0; kx < g.kw; ++kx, d += cg) {
        const int64_t ix = ox * g.sw - g.pl + kx * g.dw;
        if (ix < 0 || ix >= g.iw)
          pad(d, static_cast<size_t>(cg));
        else
          copy(d, in + ((iy * g.iw + ix) * g.ic + grp * cg), static_cast<size_t>(cg));
      }
    }
  }
}

// ------------------------------------------------------------------------------------ fp32

/// The float modes: fp32, and (ISA 1.1) fp16/bf16, whose input tile and weights are widened
/// once into fp32 scratch (exact) so both run the same fp32 loops; the output stage rounds a
/// half output at the end.
void conv_f32(const npu_cmd_conv2d& c, std::span<std::byte> sram, const Geo& g) {
  const std::byte* in = sram.data() + c.in_addr;
  const bool half_in = c.in_dtype != NPU_DTYPE_FP32;
  const auto in_count = static_cast<size_t>(g.ih * g.iw * g.ic);
  const Scratch<float> in_wide(half_in ? in_count : 0);  // every element written below
  if (half_in) {
    widen_half(in, c.in_dtype, in_count, in_wide.get());
    in = reinterpret_cast<const std::byte*>(in_wide.get());
  }
  std::byte* out = sram.data() + c.out_addr;
  const uint8_t odt = c.out_dtype;
  const size_t oes = isa::dtype_size(odt);
  const size_t k = g.k();
  std::vector<float> bias;
  if ((c.hdr.flags & NPU_MM_FLAG_BIAS) != 0)
    bias = read_array<float>(sram, c.chan_addr, static_cast<size_t>(g.oc));
  const float lo = c.fclamp_min, hi = c.fclamp_max;

  if (g.depthwise() && g.cin_g == 1) {
    // wt[tap][c] so that the channel loop is unit-stride.
    const size_t taps = static_cast<size_t>(g.kh * g.kw), ch = static_cast<size_t>(g.oc);
    const std::vector<float> w = read_float_array(sram, c.w_dtype, c.w_addr, ch * taps);
    std::vector<float> wt(taps * ch), acc(ch);
    for (size_t ci = 0; ci < ch; ++ci)
      for (size_t t = 0; t < taps; ++t) wt[t * ch + ci] = w[ci * taps + t];
    for (int64_t oy = 0; oy < g.oh && !cancelled(); ++oy)
      for (int64_t ox = 0; ox < g.ow; ++ox) {
        std::fill(acc.begin(), acc.end(), 0.0f);
        for (int64_t ky = 0; ky < g.kh; ++ky) {
          const int64_t iy = oy * g.sh - g.pt + ky * g.dh;
          if (iy < 0 || iy >= g.ih) continue;
          for (int64_t kx = 0; kx < g.kw; ++kx) {
            const int64_t ix = ox * g.sw - g.pl + kx * g.dw;
            if (ix < 0 || ix >= g.iw) continue;
            const std::byte* x = in + (iy * g.iw + ix) * g.ic * 4;
            const float* wk = wt.data() + static_cast<size_t>(ky * g.kw + kx) * ch;
            for (size_t ci = 0; ci < ch; ++ci) acc[ci] += ldi<float>(x, ci) * wk[ci];
          }
        }
        store_float_row(out + static_cast<size_t>(oy * g.ow + ox) * ch * oes, odt, acc.data(),
                        bias.empty() ? nullptr : bias.data(), lo, hi, ch);
      }
    return;
  }

  // Weights (fp32, or half widened as they are packed) are packed straight from SRAM, unless
  // a later group's weights could be overwritten by an earlier group's output.
  std::vector<float> w_wide;
  const std::byte* w = sram.data() + c.w_addr;
  uint8_t w_dtype = c.w_dtype;
  const uint64_t w_bytes = static_cast<uint64_t>(g.oc) * k * isa::dtype_size(w_dtype);
  const uint64_t out_bytes = static_cast<uint64_t>(g.m()) * static_cast<uint64_t>(g.oc) * oes;
  if (g.groups > 1 && ranges_overlap(c.w_addr, w_bytes, c.out_addr, out_bytes)) {
    w_wide = read_float_array(sram, c.w_dtype, c.w_addr, static_cast<size_t>(g.oc) * k);
    w = reinterpret_cast<const std::byte*>(w_wide.data());
    w_dtype = NPU_DTYPE_FP32;
  }
  const size_t w_es = isa::dtype_size(w_dtype);
  const bool direct_rows = g.pointwise() && g.groups == 1;
  const bool split = splittable(c, g, isa::dtype_size(c.in_dtype), oes);
  // Enough input channels per tap: the tile kernel reads each tap's channels where they lie
  // (gemm_f32_taps) instead of an im2col copy of kh * kw times the input. Needs the input
  // 4-byte aligned (fp32 loads; the widened copy of a half input always is).
  const bool in_place_taps =
      !direct_rows && static_cast<size_t>(g.cin_g) >= kTapMinChannels && aligned4(in);
  static thread_local PackedCache<PackedF32> cache;
  std::optional<PackedF32> own;  // a group's panels, or weights not read from SRAM
  for (int64_t grp = 0; grp < g.groups; ++grp) {
    const std::byte* wg = w + static_cast<size_t>(grp * g.cout_g) * k * w_es;
    const auto n = static_cast<size_t>(g.cout_g);
    const PackedF32& packed =
        g.groups == 1
            ? cache.get(wg, c.w_addr, uint64_t{n} * k * w_es,
                        {n, k, reinterpret_cast<uintptr_t>(&f32_kernel(n)), w_dtype},
                        [&](std::optional<PackedF32>& p) { p.emplace(wg, w_dtype, k, n, k); })
            : own.emplace(wg, w_dtype, k, n, k);
    const float* gbias = bias.empty() ? nullptr : bias.data() + grp * g.cout_g;
    auto store = [&](size_t m0, size_t rows, const float* acc, size_t ldc) {
      for (size_t r = 0; r < rows; ++r)
        store_float_row(out + ((m0 + r) * g.oc + grp * g.cout_g) * oes, odt, acc + r * ldc, gbias,
                        lo, hi, static_cast<size_t>(g.cout_g));
    };
    if (in_place_taps) {
      const auto* xin = reinterpret_cast<const float*>(in) + grp * g.cin_g;
      gemm_f32_taps(
          packed, g.m(), static_cast<size_t>(g.kh * g.kw), static_cast<size_t>(g.cin_g),
          [&](size_t m, const float** runs) {
            const int64_t oy = static_cast<int64_t>(m) / g.ow, ox = static_cast<int64_t>(m) % g.ow;
            for (int64_t ky = 0; ky < g.kh; ++ky) {
              const int64_t iy = oy * g.sh - g.pt + ky * g.dh;
              const bool row_in = iy >= 0 && iy < g.ih;
              for (int64_t kx = 0, ix = ox * g.sw - g.pl; kx < g.kw; ++kx, ix += g.dw)
                *runs++ = row_in && ix >= 0 && ix < g.iw ? xin + (iy * g.iw + ix) * g.ic : nullptr;
            }
          },
          store, split);
      continue;
    }
    auto fill = [&](size_t m0, size_t rows, float* dst, size_t lda) {
      if (direct_rows) {  // lda == k == in_c: the input rows are the GEMM rows
        std::memcpy(dst, in + m0 * k * 4, rows * k * 4);
        return;
      }
      const int64_t cg = g.cin_g;
      // Without groups and dilation along x, a row's taps kx = 0..kw-1 are consecutive input
      // pixels: one copy of kw * ic floats when all of them are inside the input.
      const bool runs = g.groups == 1 && g.dw == 1;
      for (size_t r = 0; r < rows; ++r) {
        const int64_t m = static_cast<int64_t>(m0 + r);
        const int64_t oy = m / g.ow, ox = m % g.ow;
        float* d = dst + r * lda;
        const int64_t ix0 = ox * g.sw - g.pl;
        const bool row_inside = runs && ix0 >= 0 && ix0 + g.kw <= g.iw;
        for (int64_t ky = 0; ky < g.kh; ++ky) {
          const int64_t iy = oy * g.sh - g.pt + ky * g.dh;
          if (row_inside && iy >= 0 && iy < g.ih) {
            std::memcpy(d, in + (iy * g.iw + ix0) * g.ic * 4, static_cast<size_t>(g.kw * cg) * 4);
            d += g.kw * cg;
            continue;
          }
          for (int64_t kx = 0; kx < g.kw; ++kx, d += cg) {
            const int64_t ix = ox * g.sw - g.pl + kx * g.dw;
            if (iy < 0 || iy >= g.ih || ix < 0 || ix >= g.iw)
              std::fill(d, d + cg, 0.0f);
            else
              std::memcpy(d, in + ((iy * g.iw + ix) * g.ic + grp * cg) * 4,
                          static_cast<size_t>(cg) * 4);
          }
        }
      }
    };
    gemm_f32(packed, g.m(), fill, store, split,
             direct_rows && aligned4(in) ? reinterpret_cast<const float*>(in) : nullptr);
  }
}

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
/// 255, so taps * 255^2 < 2^31 keeps an int32 accumulator exact.
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
  std::vector<int16_t> wt(taps * ch);
  for (size_t ci = 0; ci < ch; ++ci)
    for (size_t t = 0; t < taps; ++t)
      wt[t * ch + ci] = static_cast<int16_t>(ld_int(w, ci * taps + t, c.w_dtype) - q[ci].w_zp);
  std::vector<int32_t> acc(ch);
  std::vector<int64_t> acc64(ch);
  const size_t out_esize = isa::dtype_size(qo.dtype);
  const bool in_signed = c.in_dtype == NPU_DTYPE_INT8;
  for (int64_t oy = 0; oy < g.oh && !cancelled(); ++oy)
    for (int64_t ox = 0; ox < g.ow; ++ox) {
      std::fill(acc.begin(), acc.end(), 0);
      for (int64_t ky = 0; ky < g.kh; ++ky) {
        const int64_t iy = oy * g.sh - g.pt + ky * g.dh;
        if (iy < 0 || iy >= g.ih) continue;
        for (int64_t kx = 0; kx < g.kw; ++kx) {
          const int64_t ix = ox * g.sw - g.pl + kx * g.dw;
          if (ix < 0 || ix >= g.iw) continue;
          const int16_t* wk = wt.data() + static_cast<size_t>(ky * g.kw + kx) * ch;
          if (in_signed) {
            const auto* x = reinterpret_cast<const int8_t*>(in + (iy * g.iw + ix) * g.ic);
            for (size_t ci = 0; ci < ch; ++ci)
              acc[ci] += static_cast<int32_t>(static_cast<int16_t>(x[ci] - in_zp) * wk[ci]);
          } else {
            const auto* x = reinterpret_cast<const uint8_t*>(in + (iy * g.iw + ix) * g.ic);
            for (size_t ci = 0; ci < ch; ++ci)
              acc[ci] += static_cast<int32_t>(x[ci] - in_zp) * wk[ci];
          }
        }
      }
      for (size_t ci = 0; ci < ch; ++ci) acc64[ci] = acc[ci];
      qo.store_row(out + static_cast<size_t>(oy * g.ow + ox) * ch * out_esize, acc64.data(),
                   q.data(), ch);
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
        int32_t s = 0;
        for (size_t ci = 0; ci < cg; ++ci) s += p[ci];
        sums_[static_cast<size_t>(y * pw_ + x)] = s;
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

void conv_q(const npu_cmd_conv2d& c, std::span<std::byte> sram, const Geo& g) {
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
            int64_t oy = static_cast<int64_t>(m0) / g.ow, ox = static_cast<int64_t>(m0) % g.ow;
            for (size_t r = 0; r < rows; ++r) {
              const uint8_t** row = table + r;  // tap t at row[t * ld]
              const int64_t ix0 = ox * g.sw - g.pl;
              const bool cols_in = ix0 >= 0 && ix0 + (g.kw - 1) * g.dw < g.iw;
              for (int64_t ky = 0, iy = oy * g.sh - g.pt; ky < g.kh; ++ky, iy += g.dh) {
                if (iy < 0 || iy >= g.ih) {
                  for (int64_t kx = 0; kx < g.kw; ++kx, row += ld) *row = pad;
                } else if (cols_in) {  // every tap of the kernel row inside: no checks
                  const uint8_t* p = xin + (iy * g.iw + ix0) * g.ic;
                  for (int64_t kx = 0; kx < g.kw; ++kx, row += ld) *row = p + kx * g.dw * g.ic;
                } else {
                  for (int64_t kx = 0, ix = ix0; kx < g.kw; ++kx, ix += g.dw, row += ld)
                    *row = ix >= 0 && ix < g.iw ? xin + (iy * g.iw + ix) * g.ic : pad;
                }
              }
              if (++ox == g.ow) ox = 0, ++oy;
            }
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

}  // namespace

void conv2d(const npu_cmd_conv2d& c, std::span<std::byte> sram, std::byte* /*dram*/) {
  const Geo g = geometry(c);
  if (g.m() == 0 || g.oc == 0) return;
  if (isa::dtype_is_float(c.in_dtype))
    conv_f32(c, sram, g);
  else
    conv_q(c, sram, g);
}

}  // namespace npu::emu::kern
