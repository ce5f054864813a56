// Reference 2-D pooling (NPU_OP_POOL semantics) of an HWC tile: max (padding ignored) and
// average (padding counted or not), fp32 or int8/uint8 where the average is the exact
// integer mean rounded half to even.
#pragma once

#include <cstdint>
#include <span>

#include "npu/expected.h"
#include "npu/ref/scalar.h"
#include "npu/ref/tensor.h"
#include "npu_isa.h"

namespace npu::ref {

/// Geometry of one pooling: input [in_h][in_w][channels], output [out_h][out_w][channels],
/// contiguous. kind is NPU_POOL_MAX or NPU_POOL_AVG.
struct Pool2dShape {
  uint32_t in_h = 1, in_w = 1, channels = 1;
  uint32_t out_h = 1, out_w = 1;
  uint32_t k_h = 1, k_w = 1;
  uint32_t stride_h = 1, stride_w = 1;
  uint32_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
  bool count_include_pad = false;  // AVG: divisor counts padded positions
};

/// Checks non-zero dims and strides and that the operand spans are large enough.
Expected<void> check_pool2d(const Pool2dShape& s, size_t in_size, size_t out_size);

/// The window of output (oy, ox) in input coordinates, clipped two ways: [y0, y1) x [x0, x1)
/// to the input (the positions read) and the count of positions inside the padded input
/// (the AVG divisor with count_include_pad, as PyTorch).
struct PoolWindow {
  int64_t y0, y1, x0, x1;
  int64_t padded_count;
};
PoolWindow pool_window(const Pool2dShape& s, uint32_t oy, uint32_t ox);

/// fp32 pooling. MAX: largest value in the window (NaN propagates); AVG: fp32 sum in row-major
/// window order divided by the count. A window with no input position gives 0.
Expected<void> pool2d_f32(uint8_t kind, const Pool2dShape& s, std::span<const float> in,
                          std::span<float> out);

/// Integer pooling (T = int8_t or uint8_t). MAX: largest value; AVG:
/// div_round_half_even(sum, count), exact. A window with no input position gives 0.
template <typename T>
Expected<void> pool2d_int(uint8_t kind, const Pool2dShape& s, std::span<const T> in,
                          std::span<T> out) {
  if (auto r = check_pool2d(s, in.size(), out.size()); !r) return r;
  if (kind != NPU_POOL_MAX && kind != NPU_POOL_AVG) {
    return make_error(EINVAL, "pool: unknown kind " + std::to_string(kind));
  }
  for (uint32_t oy = 0; oy < s.out_h; ++oy) {
    for (uint32_t ox = 0; ox < s.out_w; ++ox) {
      const PoolWindow win = pool_window(s, oy, ox);
      const int64_t valid = (win.y1 - win.y0) * (win.x1 - win.x0);
      for (uint64_t c = 0; c < s.channels; ++c) {
        int64_t result = 0;
        if (valid > 0) {
          int64_t best = dtype_min(dtype_of<T>());
          int64_t sum = 0;
          for (int64_t y = win.y0; y < win.y1; ++y) {
            for (int64_t x = win.x0; x < win.x1; ++x) {
              const int64_t v =
                  in[(static_cast<uint64_t>(y) * s.in_w + static_cast<uint64_t>(x)) * s.channels +
                     c];
              best = v > best ? v : best;
              sum += v;
            }
          }
          const int64_t count = s.count_include_pad ? win.padded_count : valid;
          result = kind == NPU_POOL_MAX ? best : div_round_half_even(sum, count);
        }
        out[(uint64_t{oy} * s.out_w + ox) * s.channels + c] = static_cast<T>(result);
      }
    }
  }
  return ok();
}

}  // namespace npu::ref
