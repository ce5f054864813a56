// auto_pad and pads resolution (npu/ops/spatial.h).
#include "npu/ops/spatial.h"

#include <algorithm>

namespace npu::ops {

std::optional<AutoPad> parse_auto_pad(std::string_view text) {
  if (text == "NOTSET" || text.empty()) return AutoPad::kNotSet;
  if (text == "VALID") return AutoPad::kValid;
  if (text == "SAME_UPPER") return AutoPad::kSameUpper;
  if (text == "SAME_LOWER") return AutoPad::kSameLower;
  return std::nullopt;
}

PadResult resolve_pads(AutoPad mode, int64_t in, int64_t kernel, int64_t stride, int64_t dilation,
                       int64_t begin, int64_t end, bool ceil_mode) {
  PadResult r;
  const auto overflow = [&r] {
    r = PadResult{};
    r.overflow = true;
    return r;
  };
  int64_t eff = 0;  // dilation * (kernel - 1) + 1
  if (__builtin_mul_overflow(dilation, kernel - 1, &eff) || __builtin_add_overflow(eff, 1, &eff)) {
    return overflow();
  }
  if (mode == AutoPad::kSameUpper || mode == AutoPad::kSameLower) {
    r.out = in / stride + (in % stride != 0 ? 1 : 0);
    int64_t total = 0;  // (out - 1) * stride + eff - in
    if (__builtin_mul_overflow(r.out - 1, stride, &total) ||
        __builtin_add_overflow(total, eff - in, &total)) {
      return overflow();
    }
    total = std::max<int64_t>(0, total);
    const int64_t small = total / 2;
    r.begin = mode == AutoPad::kSameUpper ? small : total - small;
    r.end = total - r.begin;
    return r;
  }
  if (mode == AutoPad::kValid) begin = end = 0;
  r.begin = begin;
  r.end = end;
  int64_t span = 0;  // in + begin + end - eff
  if (__builtin_add_overflow(in, begin, &span) || __builtin_add_overflow(span, end, &span) ||
      __builtin_sub_overflow(span, eff, &span)) {
    return overflow();
  }
  if (span < 0) return r;  // out = 0: the window does not fit
  r.out = span / stride + 1;
  if (ceil_mode && span % stride != 0) {
    r.out += 1;
    // A window may not start in the end padding (ONNX's reference and PyTorch); (out - 1) *
    // stride <= span + stride - 1 stays in range as span + stride would.
    int64_t last = 0;
    if (__builtin_mul_overflow(r.out - 1, stride, &last)) return overflow();
    if (last >= in + begin) r.out -= 1;
  }
  return r;
}

namespace {

/// a / b rounded toward negative infinity (b > 0), as Python's // in ONNX's equations.
int64_t floor_div(int64_t a, int64_t b) {
  const int64_t q = a / b;
  return (a % b != 0 && a < 0) ? q - 1 : q;
}

}  // namespace

PadResult resolve_transpose_pads(AutoPad mode, int64_t in, int64_t kernel, int64_t stride,
                                 int64_t dilation, int64_t output_padding, int64_t begin,
                                 int64_t end, std::optional<int64_t> output_size) {
  constexpr int64_t kLimit = int64_t{1} << 40;  // any real dim; keeps the arithmetic in int64
  PadResult r;
  for (int64_t v :
       {in, kernel, stride, dilation, output_padding, begin, end, output_size.value_or(0)}) {
    if (v < -kLimit || v > kLimit) {
      r.overflow = true;
      return r;
    }
  }
  if ((in > 1 && stride > kLimit / in) || (kernel > 1 && dilation > kLimit / kernel)) {
    r.overflow = true;
    return r;
  }
  const int64_t full =
      stride * (std::max<int64_t>(in, 1) - 1) + output_padding + dilation * (kernel - 1) + 1;
  if (output_size || mode == AutoPad::kSameUpper || mode == AutoPad::kSameLower) {
    r.out = output_size ? *output_size : in * stride;
    const int64_t total = full - r.out;
    r.begin = mode == AutoPad::kSameUpper ? floor_div(total, 2) : total - floor_div(total, 2);
    r.end = total - r.begin;
  } else if (mode == AutoPad::kValid) {
    r.out = full;
  } else {
    r.begin = begin;
    r.end = end;
    r.out = full - begin - end;
  }
  return r;
}

}  // namespace npu::ops
