// Reference convolution: geometry checks and the fp32 loop nest.
#include "npu/ref/conv.h"

#include <string>

#include "npu/cancel.h"

namespace npu::ref {

uint32_t conv_out_dim(uint32_t in, uint32_t k, uint32_t stride, uint32_t dil, uint32_t pad_before,
                      uint32_t pad_after) {
  if (stride == 0 || dil == 0 || k == 0 || in == 0) return 0;
  const uint64_t total = uint64_t{in} + pad_before + pad_after;
  const uint64_t eff_k = uint64_t{dil} * (k - 1) + 1;
  if (total < eff_k) return 0;
  return static_cast<uint32_t>((total - eff_k) / stride + 1);
}

namespace {
Expected<void> field_error(const char* field, uint64_t expected, uint64_t got) {
  return make_error(EINVAL, std::string("conv2d: field ") + field + ": expected " +
                                std::to_string(expected) + ", got " + std::to_string(got));
}
}  // namespace

Expected<void> check_conv2d_shape(const Conv2dShape& s) {
  if (s.batch == 0 || s.in_h == 0 || s.in_w == 0 || s.in_c == 0 || s.out_c == 0 || s.k_h == 0 ||
      s.k_w == 0) {
    return make_error(EINVAL, "conv2d: zero dimension");
  }
  if (s.stride_h == 0 || s.stride_w == 0 || s.dil_h == 0 || s.dil_w == 0) {
    return make_error(EINVAL, "conv2d: stride and dilation must be >= 1");
  }
  if (s.groups == 0 || s.in_c % s.groups != 0 || s.out_c % s.groups != 0) {
    return make_error(EINVAL, "conv2d: groups " + std::to_string(s.groups) + " must divide in_c " +
                                  std::to_string(s.in_c) + " and out_c " + std::to_string(s.out_c));
  }
  const uint32_t oh = conv_out_dim(s.in_h, s.k_h, s.stride_h, s.dil_h, s.pad_top, s.pad_bottom);
  const uint32_t ow = conv_out_dim(s.in_w, s.k_w, s.stride_w, s.dil_w, s.pad_left, s.pad_right);
  if (oh == 0 || ow == 0) return make_error(EINVAL, "conv2d: kernel larger than padded input");
  if (s.out_h != oh) return field_error("out_h", oh, s.out_h);
  if (s.out_w != ow) return field_error("out_w", ow, s.out_w);
  return ok();
}

Expected<void> conv2d_f32(const Conv2dShape& s, std::span<const float> in, std::span<const float> w,
                          std::span<const float> bias, float fclamp_min, float fclamp_max,
                          std::span<float> out) {
  if (auto r = check_conv2d_shape(s); !r) return r;
  const uint64_t icg = s.in_c / s.groups;
  const uint64_t ocg = s.out_c / s.groups;
  if (auto r = check_size("conv2d: input", in.size(), uint64_t{s.batch} * s.in_h * s.in_w * s.in_c);
      !r) {
    return r;
  }
  if (auto r = check_size("conv2d: weights", w.size(), uint64_t{s.out_c} * s.k_h * s.k_w * icg);
      !r) {
    return r;
  }
  if (!bias.empty()) {
    if (auto r = check_size("conv2d: bias", bias.size(), s.out_c); !r) return r;
  }
  if (auto r =
          check_size("conv2d: output", out.size(), uint64_t{s.batch} * s.out_h * s.out_w * s.out_c);
      !r) {
    return r;
  }

  for (uint64_t n = 0; n < s.batch; ++n) {
    for (uint64_t oy = 0; oy < s.out_h; ++oy) {
      if (cancelled()) return make_error(ECANCELED, "conv2d: cancelled");
      for (uint64_t ox = 0; ox < s.out_w; ++ox) {
        for (uint64_t oc = 0; oc < s.out_c; ++oc) {
          const uint64_t g = oc / ocg;
          float acc = 0.0f;
          for (uint64_t ky = 0; ky < s.k_h; ++ky) {
            for (uint64_t kx = 0; kx < s.k_w; ++kx) {
              const int64_t iy = static_cast<int64_t>(oy * s.stride_h + ky * s.dil_h) - s.pad_top;
              const int64_t ix = static_cast<int64_t>(ox * s.stride_w + kx * s.dil_w) - s.pad_left;
              if (iy < 0 || iy >= s.in_h || ix < 0 || ix >= s.in_w) continue;  // zero padding
              for (uint64_t ic = 0; ic < icg; ++ic) {
                const uint64_t in_idx = ((n * s.in_h + static_cast<uint64_t>(iy)) * s.in_w +
                                         static_cast<uint64_t>(ix)) *
                                            s.in_c +
                                        g * icg + ic;
                const uint64_t w_idx = ((oc * s.k_h + ky) * s.k_w + kx) * icg + ic;
                acc += in[in_idx] * w[w_idx];
              }
            }
          }
          if (!bias.empty()) acc += bias[oc];
          acc = acc < fclamp_min ? fclamp_min : acc;
          acc = acc > fclamp_max ? fclamp_max : acc;
          out[((n * s.out_h + oy) * s.out_w + ox) * s.out_c + oc] = acc;
        }
      }
    }
  }
  return ok();
}

}  // namespace npu::ref
