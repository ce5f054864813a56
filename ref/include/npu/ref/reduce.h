// Reference reductions over the middle axis of a contiguous fp32 [outer][len][inner] tensor:
// sum, mean, max or min (NPU_OP_REDUCE semantics), and the first two moments, mean and mean
// of squares (NPU_OP_MOMENTS).
#pragma once

#include <cstdint>
#include <span>

#include "npu/expected.h"

namespace npu::ref {

/// out[o][i] = reduce over l of in[o][l][i]; kind is NPU_REDUCE_*. SUM and MEAN accumulate
/// in fp32 in ascending l (MEAN divides the sum by len); MAX and MIN propagate NaN.
Expected<void> reduce_f32(uint8_t kind, uint32_t outer, uint32_t len, uint32_t inner,
                          std::span<const float> in, std::span<float> out);

/// mean[o][i] = sum over l of in[o][l][i], divided by len; sq[o][i] the same of in * in (each
/// square rounded to fp32). Both accumulate in fp32 in ascending l, so mean is REDUCE MEAN's
/// result and sq that of REDUCE MEAN over ELTWISE MUL (x, x), bit for bit.
Expected<void> moments_f32(uint32_t outer, uint32_t len, uint32_t inner, std::span<const float> in,
                           std::span<float> mean, std::span<float> sq);

}  // namespace npu::ref
