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
  const int64_t eff = dilation * (kernel - 1) + 1;
  PadResult r;
  if (mode == AutoPad::kSameUpper || mode == AutoPad::kSameLower) {
    r.out = (in + stride - 1) / stride;
    const int64_t total = std::max<int64_t>(0, (r.out - 1) * stride + eff - in);
    const int64_t small = total / 2;
    r.begin = mode == AutoPad::kSameUpper ? small : total - small;
    r.end = total - r.begin;
    return r;
  }
  if (mode == AutoPad::kValid) begin = end = 0;
  r.begin = begin;
  r.end = end;
  const int64_t span = in + begin + end - eff;
  if (span < 0) return r;  // out = 0: the window does not fit
  r.out = span / stride + 1;
  if (ceil_mode && span % stride != 0) {
    r.out += 1;
    // A window may not start in the end padding (ONNX's reference and PyTorch).
    if ((r.out - 1) * stride >= in + begin) r.out -= 1;
  }
  return r;
}

}  // namespace npu::ops
