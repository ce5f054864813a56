// POOL on an HWC tile: for every output pixel the valid taps of the window are combined
// channel-vectorized (max, or a sum then one division). MAX ignores padding; AVG divides by
// the valid taps, or by the taps inside the padded extent with NPU_POOL_FLAG_COUNT_PAD;
// integer AVG rounds half to even (ref::div_round_half_even).
#include <algorithm>
#include <limits>
#include <vector>

#include "cancel.h"
#include "npu/ref/scalar.h"
#include "ops.h"
#include "sram.h"

namespace npu::emu::kern {
namespace {

struct Window {
  int64_t y0, y1, x0, x1;  // valid input range [y0, y1) x [x0, x1)
  int64_t padded_count;    // taps inside the padded input extent
};

template <class T, bool kMax>
void pool_typed(const npu_cmd_pool& c, std::span<std::byte> sram) {
  const std::byte* in = sram.data() + c.in_addr;
  std::byte* out = sram.data() + c.out_addr;
  const int64_t ih = c.in_h, iw = c.in_w, oh = c.out_h, ow = c.out_w;
  const int64_t kh = c.k_h, kw = c.k_w;
  const int64_t sh = std::max<int64_t>(1, c.stride_h), sw = std::max<int64_t>(1, c.stride_w);
  const int64_t pt = c.pad_top, pl = c.pad_left;
  const int64_t ph_end = ih + c.pad_bottom, pw_end = iw + c.pad_right;
  const size_t ch = c.channels;
  const bool count_pad = (c.hdr.flags & NPU_POOL_FLAG_COUNT_PAD) != 0;
  // Integer MAX keeps the element type (exact, and 64 lanes per AVX-512 register, not 8).
  using Acc =
      std::conditional_t<std::is_same_v<T, float>, float, std::conditional_t<kMax, T, int64_t>>;
  std::vector<Acc> acc(ch);

  for (int64_t oy = 0; oy < oh && !cancelled(); ++oy)
    for (int64_t ox = 0; ox < ow; ++ox) {
      const int64_t wy = oy * sh - pt, wx = ox * sw - pl;  // window origin (input coordinates)
      Window w{std::max<int64_t>(wy, 0), std::min(wy + kh, ih), std::max<int64_t>(wx, 0),
               std::min(wx + kw, iw), 0};
      w.padded_count = std::max<int64_t>(0, std::min(wy + kh, ph_end) - std::max(wy, -pt)) *
                       std::max<int64_t>(0, std::min(wx + kw, pw_end) - std::max(wx, -pl));
      const int64_t valid = std::max<int64_t>(0, w.y1 - w.y0) * std::max<int64_t>(0, w.x1 - w.x0);
      std::byte* o = out + static_cast<size_t>(oy * ow + ox) * ch * sizeof(T);
      if constexpr (kMax) {
        if (valid == 0) {  // the window covers padding only
          const T fill = std::is_same_v<T, float> ? -std::numeric_limits<float>::infinity()
                                                  : std::numeric_limits<T>::lowest();
          for (size_t ci = 0; ci < ch; ++ci) sti<T>(o, ci, fill);
          continue;
        }
        const std::byte* first = in + static_cast<size_t>(w.y0 * iw + w.x0) * ch * sizeof(T);
        for (size_t ci = 0; ci < ch; ++ci) acc[ci] = ldi<T>(first, ci);
        for (int64_t y = w.y0; y < w.y1; ++y)
          for (int64_t x = w.x0; x < w.x1; ++x) {
            const std::byte* p = in + static_cast<size_t>(y * iw + x) * ch * sizeof(T);
            if constexpr (std::is_same_v<T, float>) {
              for (size_t ci = 0; ci < ch; ++ci)
                acc[ci] = ref::eltwise(NPU_ELTWISE_MAX, acc[ci], ldi<float>(p, ci));
            } else {
              for (size_t ci = 0; ci < ch; ++ci) acc[ci] = std::max<Acc>(acc[ci], ldi<T>(p, ci));
            }
          }
        for (size_t ci = 0; ci < ch; ++ci) sti<T>(o, ci, static_cast<T>(acc[ci]));
      } else {
        std::fill(acc.begin(), acc.end(), Acc{0});
        for (int64_t y = w.y0; y < w.y1; ++y)
          for (int64_t x = w.x0; x < w.x1; ++x) {
            const std::byte* p = in + static_cast<size_t>(y * iw + x) * ch * sizeof(T);
            for (size_t ci = 0; ci < ch; ++ci) acc[ci] += ldi<T>(p, ci);
          }
        const int64_t count = count_pad ? w.padded_count : valid;
        if constexpr (std::is_same_v<T, float>) {
          const float d = static_cast<float>(count);
          for (size_t ci = 0; ci < ch; ++ci) sti<float>(o, ci, count == 0 ? 0.0f : acc[ci] / d);
        } else {
          for (size_t ci = 0; ci < ch; ++ci)
            sti<T>(o, ci, static_cast<T>(ref::div_round_half_even(acc[ci], count)));
        }
      }
    }
}

}  // namespace

void pool(const npu_cmd_pool& c, std::span<std::byte> sram, std::byte* /*dram*/) {
  const bool is_max = c.kind == NPU_POOL_MAX;
  switch (c.dtype) {
    case NPU_DTYPE_FP32:
      return is_max ? pool_typed<float, true>(c, sram) : pool_typed<float, false>(c, sram);
    case NPU_DTYPE_INT8:
      return is_max ? pool_typed<int8_t, true>(c, sram) : pool_typed<int8_t, false>(c, sram);
    case NPU_DTYPE_UINT8:
      return is_max ? pool_typed<uint8_t, true>(c, sram) : pool_typed<uint8_t, false>(c, sram);
    default:
      break;
  }
}

}  // namespace npu::emu::kern
