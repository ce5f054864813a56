// Private to CONV2D's kernels (matrix_conv.cpp: the float modes, matrix_conv_int.cpp: the
// integer ones): the geometry of one command, when its GEMM may be shared with the worker,
// im2col rows and the table of taps read in place. Pure functions of their arguments.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>

#include "npu_isa.h"
#include "parallel.h"

namespace npu::emu::kern {

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
inline bool splittable(const npu_cmd_conv2d& c, const Geo& g, size_t in_esize, size_t out_esize) {
  const auto in_bytes = static_cast<uint64_t>(g.ih * g.iw * g.ic) * in_esize;
  const auto out_bytes = static_cast<uint64_t>(g.m()) * static_cast<uint64_t>(g.oc) * out_esize;
  return worth_splitting(g.m(), static_cast<uint64_t>(g.cout_g), g.k()) &&
         !ranges_overlap(c.in_addr, in_bytes, c.out_addr, out_bytes);
}

/// Input channels per group from which an fp32 convolution reads its taps in place: below
/// it, a tap's few multiply-adds per row tile do not pay for the tile's set-up, and im2col
/// (whose rows run over whole kernel rows) is faster.
inline constexpr size_t kTapMinChannels = 16;

inline Geo geometry(const npu_cmd_conv2d& c) {
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

/// The run addresses of output pixels [m0, m0 + rows) for a GEMM that reads a convolution's
/// taps in place (gemm.h, gemm_q8.h): table[t * ld + r] is where tap t = ky * kw + kx of row r
/// starts, `pad` for a tap in the padding. xin: the input tile at group `grp`'s first channel;
/// pixel: the distance between input pixels in T. Incremental over the pixels (no division
/// per row).
template <class T>
void tap_table(const Geo& g, const T* xin, int64_t pixel, size_t m0, size_t rows, const T** table,
               size_t ld, const T* pad) {
  int64_t oy = static_cast<int64_t>(m0) / g.ow, ox = static_cast<int64_t>(m0) % g.ow;
  for (size_t r = 0; r < rows; ++r) {
    const T** row = table + r;  // tap t at row[t * ld]
    const int64_t ix0 = ox * g.sw - g.pl;
    const bool cols_in = ix0 >= 0 && ix0 + (g.kw - 1) * g.dw < g.iw;
    for (int64_t ky = 0, iy = oy * g.sh - g.pt; ky < g.kh; ++ky, iy += g.dh) {
      if (iy < 0 || iy >= g.ih) {
        for (int64_t kx = 0; kx < g.kw; ++kx, row += ld) *row = pad;
      } else if (cols_in) {  // every tap of the kernel row inside: no checks
        const T* p = xin + (iy * g.iw + ix0) * pixel;
        for (int64_t kx = 0; kx < g.kw; ++kx, row += ld) *row = p + kx * g.dw * pixel;
      } else {
        for (int64_t kx = 0, ix = ix0; kx < g.kw; ++kx, ix += g.dw, row += ld)
          *row = ix >= 0 && ix < g.iw ? xin + (iy * g.iw + ix) * pixel : pad;
      }
    }
    if (++ox == g.ow) ox = 0, ++oy;
  }
}

/// The two halves of CONV2D (conv2d() in matrix_conv.cpp picks one).
void conv_float(const npu_cmd_conv2d& c, std::span<std::byte> sram, const Geo& g);
void conv_int(const npu_cmd_conv2d& c, std::span<std::byte> sram, const Geo& g);

}  // namespace npu::emu::kern
