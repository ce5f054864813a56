// Convolution and pooling windows as ONNX defines them: the auto_pad attribute and explicit
// pads resolved per spatial dim, written once for the operator library's host
// implementations (Conv, ConvInteger, QLinearConv, the pools) and the compiler's lowering of
// the same operators to the device. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace npu::ops {

enum class AutoPad { kNotSet, kValid, kSameUpper, kSameLower };

/// "NOTSET" (or empty), "VALID", "SAME_UPPER", "SAME_LOWER"; nullopt for anything else.
std::optional<AutoPad> parse_auto_pad(std::string_view text);

/// One spatial dim: the output size and the pads before/after.
struct PadResult {
  int64_t out = 0, begin = 0, end = 0;
  /// The window arithmetic (dilation * (kernel - 1), input + pads, ...) leaves the int64 range:
  /// out is 0 and the attributes are to be refused as such (not as "does not fit").
  bool overflow = false;
};

/// Floor (or, with ceil_mode, ceil with windows starting in the end padding dropped) of
/// (in + begin + end - dilation * (kernel - 1) - 1) / stride + 1 (0 when the window does not
/// fit); SAME_* give ceil(in / stride) and split the needed padding, the odd one at the end
/// (UPPER) or start (LOWER); VALID drops the explicit pads. Overflow-safe for any int64
/// attributes (see PadResult::overflow). Preconditions: kernel, stride,
/// dilation >= 1 (ONNX's checker and the import enforce them).
PadResult resolve_pads(AutoPad mode, int64_t in, int64_t kernel, int64_t stride, int64_t dilation,
                       int64_t begin, int64_t end, bool ceil_mode);

/// ConvTranspose, one spatial dim: the output size and the pads cropped from the "full"
/// output stride * (in - 1) + output_padding + dilation * (kernel - 1) + 1. NOTSET crops the
/// explicit pads `begin`/`end`; VALID crops nothing; SAME_* give out = in * stride, and
/// `output_size` (the output_shape attribute, overriding pads) gives out. In those two the
/// total = full - out splits as ONNX's equations with floor division: SAME_UPPER begins with
/// floor(total / 2), the others with total - floor(total / 2) (a negative total pads the
/// output with positions nothing reaches). `out` < 0 (pads larger than the full output) is
/// left to the caller to refuse; overflow is set when a value exceeds 2^40 or the arithmetic
/// leaves int64. Preconditions: kernel, stride, dilation >= 1, in >= 0.
PadResult resolve_transpose_pads(AutoPad mode, int64_t in, int64_t kernel, int64_t stride,
                                 int64_t dilation, int64_t output_padding, int64_t begin,
                                 int64_t end, std::optional<int64_t> output_size);

}  // namespace npu::ops
