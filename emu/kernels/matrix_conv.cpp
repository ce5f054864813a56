// CONV2D's float modes on an HWC tile with OHWI weights: fp32, and (ISA 1.1) fp16/bf16
// computed in fp32. Depthwise convolutions run a direct loop over the taps, vectorized across
// channels; the others a packed GEMM per group (gemm.h) whose A rows are read in place tap by
// tap (16 or more channels per group), built as im2col rows, or (1x1 stride 1) the input rows
// themselves. bf16 convolutions whose taps can be read in place multiply bf16 pairs into fp32
// sums where the CPU can (gemm_q8.h: AMX-BF16, AVX512-BF16). conv2d() dispatches here or to the
// integer modes (matrix_conv_int.cpp).
#include <algorithm>
#include <array>
#include <cstring>
#include <optional>
#include <vector>

#include "cancel.h"
#include "conv_geometry.h"
#include "gemm.h"
#include "gemm_q8.h"
#include "matrix_common.h"
#include "npu/isa/dtype.h"
#include "ops.h"
#include "packed_cache.h"
#include "scratch.h"

namespace npu::emu::kern {
namespace {

/// A half input tile widened to fp32 (exact), kept per thread while its SRAM is unchanged.
struct WideTile {
  WideTile(const std::byte* in, uint8_t dtype, size_t count) : data(count) {
    widen_half(in, dtype, count, data.get());
  }
  Scratch<float> data;
};

/// A bf16 convolution whose taps are read in place as bf16 pairs (gemm_q8.h): an even number
/// of input channels per group, at least kTapMinChannels (or a 1x1 stride-1 convolution), and
/// a CPU with a bf16 dot product at the selected ISA. False (nothing done) otherwise.
bool conv_bf16_pairs(const npu_cmd_conv2d& c, std::span<std::byte> sram, const Geo& g) {
  const auto cg = static_cast<size_t>(g.cin_g), og = static_cast<size_t>(g.cout_g);
  if (c.in_dtype != NPU_DTYPE_BF16 || c.w_dtype != NPU_DTYPE_BF16 || g.depthwise() || cg % 2 != 0 ||
      (cg < kTapMinChannels && !g.pointwise()))
    return false;
  const Q8Kernel* kr = bf16_kernel(og);
  if (kr == nullptr) return false;
  const size_t k = g.k(), taps = static_cast<size_t>(g.kh * g.kw);
  // A group's weights must not be overwritten by an earlier group's output.
  const uint64_t out_bytes =
      static_cast<uint64_t>(g.m()) * static_cast<uint64_t>(g.oc) * isa::dtype_size(c.out_dtype);
  if (g.groups > 1 && ranges_overlap(c.w_addr, uint64_t{k} * g.oc * 2, c.out_addr, out_bytes))
    return false;

  std::vector<float> bias;
  if ((c.hdr.flags & NPU_MM_FLAG_BIAS) != 0)
    bias = read_array<float>(sram, c.chan_addr, static_cast<size_t>(g.oc));
  const auto* in = reinterpret_cast<const uint8_t*>(sram.data() + c.in_addr);
  const auto* w = reinterpret_cast<const uint8_t*>(sram.data() + c.w_addr);
  std::byte* out = sram.data() + c.out_addr;
  const size_t oes = isa::dtype_size(c.out_dtype);
  const bool split = splittable(c, g, 2, oes);
  const PackedQ8::Layout layout{og, taps, 2 * cg, false, false, true};  // kc in bytes
  static thread_local PackedCache<PackedQ8> cache;
  std::optional<PackedQ8> own;
  for (int64_t grp = 0; grp < g.groups; ++grp) {
    const size_t n0 = static_cast<size_t>(grp) * og;
    const auto make = [&](std::optional<PackedQ8>& p) {
      p.emplace(*kr, layout, w + n0 * k * 2, k * 2, std::span<const int32_t>());
    };
    const PackedQ8& packed = g.groups == 1
                                 ? cache.get(sram.data() + c.w_addr, c.w_addr, uint64_t{og} * k * 2,
                                             {og, k, reinterpret_cast<uintptr_t>(kr), 0}, make)
                                 : (make(own), *own);
    const float* gbias = bias.empty() ? nullptr : bias.data() + n0;
    const uint8_t* xin = in + static_cast<size_t>(grp) * cg * 2;
    gemm_q8_taps(
        packed, g.m(), 0,  // padding: bf16 +0.0
        [&](size_t m0, size_t rows, const uint8_t** table, size_t ld, const uint8_t* pad) {
          tap_table(g, xin, 2 * g.ic, m0, rows, table, ld, pad);
        },
        [&](size_t m0, size_t rows, QSums s) {
          for (size_t r = 0; r < rows; ++r)
            store_float_row(out + ((m0 + r) * static_cast<size_t>(g.oc) + n0) * oes, c.out_dtype,
                            s.f32 + r * s.ld, gbias, c.fclamp_min, c.fclamp_max, og);
        },
        split);
  }
  return true;
}

}  // namespace

/// The float modes: fp32, and (ISA 1.1) fp16/bf16, whose input tile and weights are widened
/// into fp32 (exact) so both run the same fp32 loops, unless conv_bf16_pairs takes a bf16 one;
/// the output stage rounds a half output at the end.
void conv_float(const npu_cmd_conv2d& c, std::span<std::byte> sram, const Geo& g) {
  if (conv_bf16_pairs(c, sram, g)) return;
  const std::byte* in = sram.data() + c.in_addr;
  if (c.in_dtype != NPU_DTYPE_FP32) {
    // The output-channel slices of one layer read the same input tile: widened once.
    static thread_local PackedCache<WideTile> wide;
    const auto count = static_cast<size_t>(g.ih * g.iw * g.ic);
    in = reinterpret_cast<const std::byte*>(
        wide.get(in, c.in_addr, uint64_t{count} * 2, {count, c.in_dtype, 0, 0},
                 [&](std::optional<WideTile>& t) { t.emplace(in, c.in_dtype, count); })
            .data.get());
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
          [&](size_t m0, size_t rows, const float** table, size_t ld, const float* pad) {
            tap_table(g, xin, g.ic, m0, rows, table, ld, pad);
          },
          store, split);
      continue;
    }
    auto fill = [&](size_t m0, size_t rows, float* dst, size_t lda) {
      if (direct_rows) {  // k == in_c: the input rows are the GEMM rows
        rows_as_f32(dst, lda, in + m0 * k * 4, NPU_DTYPE_FP32, k, rows);
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

void conv2d(const npu_cmd_conv2d& c, std::span<std::byte> sram, std::byte* /*dram*/) {
  const Geo g = geometry(c);
  if (g.m() == 0 || g.oc == 0) return;
  if (isa::dtype_is_float(c.in_dtype))
    conv_float(c, sram, g);
  else
    conv_int(c, sram, g);
}

}  // namespace npu::emu::kern
