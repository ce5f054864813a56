// Reference reduction (NPU_OP_REDUCE semantics): sum, mean, max or min over the middle axis
// of a contiguous fp32 [outer][len][inner] tensor.
#pragma once

#include <cstdint>
#include <span>

#include "npu/expected.h"

namespace npu::ref {

/// out[o][i] = reduce over l of in[o][l][i]; kind is NPU_REDUCE_*. SUM and MEAN accumulate
/// in fp32 in ascending l (MEAN divides the sum by len); MAX and MIN propagate NaN.
Expected<void> reduce_f32(uint8_t kind, uint32_t outer, uint32_t len, uint32_t inner,
                          std::span<const float> in, std::span<float> out);

}  // namespace npu::ref
