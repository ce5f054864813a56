// Private: the window of a convolution or a pooling — the attributes kernel_shape, strides,
// dilations, pads and auto_pad read and checked against the spatial rank, and each spatial
// dim's output size and pads resolved (npu/ops/spatial.h: resolve_pads). Errors name the op
// and the attribute. Pure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "npu/ops/spatial.h"
#include "op_call.h"

namespace npu::ops::detail {

/// The "auto_pad" attribute (npu/ops/spatial.h), or "<op>: attribute auto_pad: unknown value".
Expected<AutoPad> auto_pad_attr(const OpCall& c);

/// Spatial attributes (strides, dilations, pads, kernel_shape) checked against `rank`
/// (absent: 1s / 0s; pads 2 * rank, begins then ends).
struct SpatialAttrs {
  std::vector<int64_t> kernel, strides, dilations, pads;
};
Expected<SpatialAttrs> spatial_attrs(const OpCall& c, size_t rank,
                                     const std::vector<int64_t>& kernel_from_weights);

/// The output size and pads of every spatial dim of input `x` ([N, C, spatial...]) under
/// `a` and auto_pad `mode` (resolve_pads). Errors name the op: a window that does not fit,
/// or attributes whose arithmetic leaves int64.
Expected<std::vector<PadResult>> resolve_windows(const OpCall& c, AutoPad mode,
                                                 const std::vector<int64_t>& x,
                                                 const SpatialAttrs& a, bool ceil_mode);

}  // namespace npu::ops::detail
