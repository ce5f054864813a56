// Reference 2-D convolution (NPU_OP_CONV2D semantics): NHWC activations, OHWI weights,
// stride, dilation, asymmetric implicit padding and groups (depthwise included), in fp32 or
// in int8/uint8 with zero points and per-output-channel requantization.
#pragma once

#include <cstdint>
#include <span>

#include "npu/cancel.h"
#include "npu/expected.h"
#include "npu/ref/scalar.h"
#include "npu/ref/tensor.h"
#include "npu_isa.h"

namespace npu::ref {

/// Geometry of one convolution. Input [batch][in_h][in_w][in_c], weights
/// [out_c][k_h][k_w][in_c / groups], output [batch][out_h][out_w][out_c], all contiguous.
struct Conv2dShape {
  uint32_t batch = 1;
  uint32_t in_h = 1, in_w = 1, in_c = 1;
  uint32_t out_h = 1, out_w = 1, out_c = 1;
  uint32_t k_h = 1, k_w = 1;
  uint32_t groups = 1;
  uint32_t stride_h = 1, stride_w = 1;
  uint32_t dil_h = 1, dil_w = 1;
  uint32_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
};

/// (in + pad_before + pad_after - dil * (k - 1) - 1) / stride + 1, or 0 when the window
/// does not fit (or stride is 0).
uint32_t conv_out_dim(uint32_t in, uint32_t k, uint32_t stride, uint32_t dil, uint32_t pad_before,
                      uint32_t pad_after);

/// Checks the geometry: non-zero dims/strides/dilations, groups dividing in_c and out_c,
/// out_h/out_w equal to conv_out_dim(...).
Expected<void> check_conv2d_shape(const Conv2dShape& s);

/// Output quantization shared by integer CONV2D and MATMUL.
struct IntOutput {
  int32_t in_zp = 0;   // input (A) zero point, per tensor
  int32_t out_zp = 0;  // output zero point (int8/uint8 outputs)
  int32_t clamp_min = -128;
  int32_t clamp_max = 127;
};

namespace detail {
/// Writes one integer output: int32 outputs get acc (wrapping), int8/uint8 are requantized.
template <typename TOut>
TOut finish_int(int64_t acc, const npu_chan_qparams& q, const IntOutput& o) {
  if constexpr (sizeof(TOut) == 4) {
    return static_cast<TOut>(wrap_i32(acc));
  } else {
    const int32_t y = requantize(acc, q.multiplier, q.shift, o.out_zp, o.clamp_min, o.clamp_max);
    // The clamp should lie within TOut; saturate anyway so a bad clamp cannot wrap.
    return static_cast<TOut>(clamp64(y, dtype_min(dtype_of<TOut>()), dtype_max(dtype_of<TOut>())));
  }
}
}  // namespace detail

/// Integer convolution: acc[oc] = sum((x - in_zp) * (w - chan[oc].w_zp)) + chan[oc].bias over
/// kh, kw, ic (positions in the padding contribute 0); int8/uint8 outputs are
/// clamp(requantize(acc) + out_zp); int32 outputs are acc (wrapped to 32 bits).
/// TIn, TW: int8_t or uint8_t; TOut: int8_t, uint8_t or int32_t. chan has out_c entries.
template <typename TIn, typename TW, typename TOut>
Expected<void> conv2d_int(const Conv2dShape& s, std::span<const TIn> in, std::span<const TW> w,
                          std::span<const npu_chan_qparams> chan, const IntOutput& o,
                          std::span<TOut> out) {
  if (auto r = check_conv2d_shape(s); !r) return r;
  const uint64_t icg = s.in_c / s.groups;   // input channels per group
  const uint64_t ocg = s.out_c / s.groups;  // output channels per group
  if (auto r = check_size("conv2d: input", in.size(), uint64_t{s.batch} * s.in_h * s.in_w * s.in_c);
      !r)
    return r;
  if (auto r = check_size("conv2d: weights", w.size(), uint64_t{s.out_c} * s.k_h * s.k_w * icg); !r)
    return r;
  if (auto r = check_size("conv2d: channel params", chan.size(), s.out_c); !r) return r;
  if (auto r =
          check_size("conv2d: output", out.size(), uint64_t{s.batch} * s.out_h * s.out_w * s.out_c);
      !r)
    return r;

  for (uint64_t n = 0; n < s.batch; ++n) {
    for (uint64_t oy = 0; oy < s.out_h; ++oy) {
      if (cancelled()) return make_error(ECANCELED, "conv2d: cancelled");
      for (uint64_t ox = 0; ox < s.out_w; ++ox) {
        for (uint64_t oc = 0; oc < s.out_c; ++oc) {
          const uint64_t g = oc / ocg;
          const npu_chan_qparams& q = chan[oc];
          int64_t acc = 0;
          for (uint64_t ky = 0; ky < s.k_h; ++ky) {
            for (uint64_t kx = 0; kx < s.k_w; ++kx) {
              // Position in the unpadded input; outside it the (x - in_zp) term is 0.
              const int64_t iy = static_cast<int64_t>(oy * s.stride_h + ky * s.dil_h) - s.pad_top;
              const int64_t ix = static_cast<int64_t>(ox * s.stride_w + kx * s.dil_w) - s.pad_left;
              if (iy < 0 || iy >= s.in_h || ix < 0 || ix >= s.in_w) continue;
              for (uint64_t ic = 0; ic < icg; ++ic) {
                const uint64_t in_idx = ((n * s.in_h + static_cast<uint64_t>(iy)) * s.in_w +
                                         static_cast<uint64_t>(ix)) *
                                            s.in_c +
                                        g * icg + ic;
                const uint64_t w_idx = ((oc * s.k_h + ky) * s.k_w + kx) * icg + ic;
                const int64_t xv = static_cast<int64_t>(in[in_idx]) - o.in_zp;
                const int64_t wv = static_cast<int64_t>(w[w_idx]) - q.w_zp;
                acc += xv * wv;
              }
            }
          }
          acc += q.bias;
          out[((n * s.out_h + oy) * s.out_w + ox) * s.out_c + oc] =
              detail::finish_int<TOut>(acc, q, o);
        }
      }
    }
  }
  return ok();
}

/// fp32 convolution: out = clamp(sum over kh, kw, ic (in that order, fp32 accumulation) of
/// x * w, + bias[oc] if bias is non-empty, fclamp_min, fclamp_max).
Expected<void> conv2d_f32(const Conv2dShape& s, std::span<const float> in, std::span<const float> w,
                          std::span<const float> bias, float fclamp_min, float fclamp_max,
                          std::span<float> out);

}  // namespace npu::ref
