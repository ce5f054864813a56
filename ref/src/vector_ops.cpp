// Reference vector-engine operators: eltwise, activation, scale-shift, pooling, softmax and
// reduce, as plain loops over the scalar rules.
#include <cmath>
#include <string>

#include "npu/ref/elementwise.h"
#include "npu/ref/pool.h"
#include "npu/ref/reduce.h"
#include "npu/ref/softmax.h"

namespace npu::ref {

Expected<void> eltwise_f32(uint8_t op, const Dims4& shape, const View4<const float>& a,
                           const View4<const float>& b, const View4<float>& out) {
  if (auto r = check_view("eltwise: a", a, shape); !r) return r;
  if (auto r = check_view("eltwise: b", b, shape); !r) return r;
  if (auto r = check_out_view("eltwise: out", out, shape); !r) return r;
  map4(
      shape, out, [&](float x, float y) { return eltwise(op, x, y); }, a, b);
  return ok();
}

Expected<void> activation_f32(uint8_t func, float alpha, float beta, const Dims4& shape,
                              const View4<const float>& in, const View4<float>& out) {
  if (auto r = check_view("activation: in", in, shape); !r) return r;
  if (auto r = check_out_view("activation: out", out, shape); !r) return r;
  map4(
      shape, out, [&](float x) { return activation(func, x, alpha, beta); }, in);
  return ok();
}

Expected<void> scale_shift_f32(uint32_t outer, uint32_t channels, std::span<const float> in,
                               std::span<const float> scale, std::span<const float> shift,
                               std::span<float> out) {
  const uint64_t count = uint64_t{outer} * channels;
  if (auto r = check_size("scale_shift: in", in.size(), count); !r) return r;
  if (auto r = check_size("scale_shift: out", out.size(), count); !r) return r;
  if (auto r = check_size("scale_shift: scale", scale.size(), channels); !r) return r;
  if (auto r = check_size("scale_shift: shift", shift.size(), channels); !r) return r;
  for (uint64_t o = 0; o < outer; ++o) {
    for (uint64_t c = 0; c < channels; ++c) {
      const uint64_t i = o * channels + c;
      const float scaled = in[i] * scale[c];
      out[i] = scaled + shift[c];
    }
  }
  return ok();
}

Expected<void> check_pool2d(const Pool2dShape& s, size_t in_size, size_t out_size) {
  if (s.in_h == 0 || s.in_w == 0 || s.channels == 0 || s.out_h == 0 || s.out_w == 0 || s.k_h == 0 ||
      s.k_w == 0) {
    return make_error(EINVAL, "pool: zero dimension");
  }
  if (s.stride_h == 0 || s.stride_w == 0) return make_error(EINVAL, "pool: stride must be >= 1");
  if (auto r = check_size("pool: in", in_size, uint64_t{s.in_h} * s.in_w * s.channels); !r) {
    return r;
  }
  return check_size("pool: out", out_size, uint64_t{s.out_h} * s.out_w * s.channels);
}

PoolWindow pool_window(const Pool2dShape& s, uint32_t oy, uint32_t ox) {
  // Window start in input coordinates (may be negative inside the top/left padding).
  const int64_t ys = int64_t{oy} * s.stride_h - s.pad_top;
  const int64_t xs = int64_t{ox} * s.stride_w - s.pad_left;
  const int64_t ye = ys + s.k_h;
  const int64_t xe = xs + s.k_w;
  // Positions inside the padded input [-pad_top, in_h + pad_bottom).
  const int64_t pye = ye < int64_t{s.in_h} + s.pad_bottom ? ye : int64_t{s.in_h} + s.pad_bottom;
  const int64_t pxe = xe < int64_t{s.in_w} + s.pad_right ? xe : int64_t{s.in_w} + s.pad_right;
  const int64_t ph = pye > ys ? pye - ys : 0;
  const int64_t pw = pxe > xs ? pxe - xs : 0;
  PoolWindow w{};
  w.y0 = ys < 0 ? 0 : ys;
  w.x0 = xs < 0 ? 0 : xs;
  w.y1 = ye > int64_t{s.in_h} ? int64_t{s.in_h} : ye;
  w.x1 = xe > int64_t{s.in_w} ? int64_t{s.in_w} : xe;
  if (w.y1 < w.y0) w.y1 = w.y0;
  if (w.x1 < w.x0) w.x1 = w.x0;
  w.padded_count = ph * pw;
  return w;
}

Expected<void> pool2d_f32(uint8_t kind, const Pool2dShape& s, std::span<const float> in,
                          std::span<float> out) {
  if (auto r = check_pool2d(s, in.size(), out.size()); !r) return r;
  if (kind != NPU_POOL_MAX && kind != NPU_POOL_AVG) {
    return make_error(EINVAL, "pool: unknown kind " + std::to_string(kind));
  }
  for (uint32_t oy = 0; oy < s.out_h; ++oy) {
    for (uint32_t ox = 0; ox < s.out_w; ++ox) {
      const PoolWindow win = pool_window(s, oy, ox);
      const int64_t valid = (win.y1 - win.y0) * (win.x1 - win.x0);
      for (uint64_t c = 0; c < s.channels; ++c) {
        float result = 0.0f;
        if (valid > 0) {
          float best = -INFINITY;
          float sum = 0.0f;
          for (int64_t y = win.y0; y < win.y1; ++y) {
            for (int64_t x = win.x0; x < win.x1; ++x) {
              const float v =
                  in[(static_cast<uint64_t>(y) * s.in_w + static_cast<uint64_t>(x)) * s.channels +
                     c];
              best = eltwise(NPU_ELTWISE_MAX, best, v);
              sum += v;
            }
          }
          const int64_t count = s.count_include_pad ? win.padded_count : valid;
          result = kind == NPU_POOL_MAX ? best : sum / static_cast<float>(count);
        }
        out[(uint64_t{oy} * s.out_w + ox) * s.channels + c] = result;
      }
    }
  }
  return ok();
}

Expected<void> softmax_f32(uint32_t rows, uint32_t len, std::span<const float> in,
                           std::span<float> out, bool log) {
  const uint64_t count = uint64_t{rows} * len;
  if (auto r = check_size("softmax: in", in.size(), count); !r) return r;
  if (auto r = check_size("softmax: out", out.size(), count); !r) return r;
  for (uint64_t r = 0; r < rows; ++r) {
    const uint64_t base = r * len;
    float m = -INFINITY;
    for (uint64_t i = 0; i < len; ++i) m = eltwise(NPU_ELTWISE_MAX, m, in[base + i]);
    float sum = 0.0f;
    for (uint64_t i = 0; i < len; ++i) sum += std::exp(in[base + i] - m);
    const float log_sum = std::log(sum);
    for (uint64_t i = 0; i < len; ++i) {
      const float shifted = in[base + i] - m;
      out[base + i] = log ? shifted - log_sum : std::exp(shifted) / sum;
    }
  }
  return ok();
}

Expected<void> reduce_f32(uint8_t kind, uint32_t outer, uint32_t len, uint32_t inner,
                          std::span<const float> in, std::span<float> out) {
  if (kind < NPU_REDUCE_SUM || kind > NPU_REDUCE_MIN) {
    return make_error(EINVAL, "reduce: unknown kind " + std::to_string(kind));
  }
  if (len == 0) return make_error(EINVAL, "reduce: len must be >= 1");
  if (auto r = check_size("reduce: in", in.size(), uint64_t{outer} * len * inner); !r) return r;
  if (auto r = check_size("reduce: out", out.size(), uint64_t{outer} * inner); !r) return r;
  for (uint64_t o = 0; o < outer; ++o) {
    for (uint64_t i = 0; i < inner; ++i) {
      float acc = in[o * len * inner + i];  // l = 0
      for (uint64_t l = 1; l < len; ++l) {
        const float v = in[(o * len + l) * inner + i];
        switch (kind) {
          case NPU_REDUCE_MAX:
            acc = eltwise(NPU_ELTWISE_MAX, acc, v);
            break;
          case NPU_REDUCE_MIN:
            acc = eltwise(NPU_ELTWISE_MIN, acc, v);
            break;
          default:
            acc += v;
            break;
        }
      }
      if (kind == NPU_REDUCE_MEAN) acc /= static_cast<float>(len);
      out[o * inner + i] = acc;
    }
  }
  return ok();
}

Expected<void> moments_f32(uint32_t outer, uint32_t len, uint32_t inner, std::span<const float> in,
                           std::span<float> mean, std::span<float> sq) {
  if (len == 0) return make_error(EINVAL, "moments: len must be >= 1");
  if (auto r = check_size("moments: in", in.size(), uint64_t{outer} * len * inner); !r) return r;
  if (auto r = check_size("moments: mean", mean.size(), uint64_t{outer} * inner); !r) return r;
  if (auto r = check_size("moments: sq", sq.size(), uint64_t{outer} * inner); !r) return r;
  const float n = static_cast<float>(len);
  for (uint64_t o = 0; o < outer; ++o) {
    for (uint64_t i = 0; i < inner; ++i) {
      const float x0 = in[o * len * inner + i];
      float sum = x0, sum_sq = eltwise(NPU_ELTWISE_MUL, x0, x0);
      for (uint64_t l = 1; l < len; ++l) {
        const float x = in[(o * len + l) * inner + i];
        sum += x;
        sum_sq += eltwise(NPU_ELTWISE_MUL, x, x);
      }
      mean[o * inner + i] = sum / n;
      sq[o * inner + i] = sum_sq / n;
    }
  }
  return ok();
}

}  // namespace npu::ref
