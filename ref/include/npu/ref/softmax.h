// Reference softmax and log-softmax (NPU_OP_SOFTMAX semantics) over the innermost axis of
// contiguous fp32 rows, max-subtracted for stability.
#pragma once

#include <cstdint>
#include <span>

#include "npu/expected.h"

namespace npu::ref {

/// For each of `rows` rows of `len` values: m = max(row); e[i] = exp(x[i] - m);
/// softmax y[i] = e[i] / sum(e) or, with `log`, y[i] = (x[i] - m) - log(sum(e)).
/// Sums are fp32 in index order. in and out may be the same span.
Expected<void> softmax_f32(uint32_t rows, uint32_t len, std::span<const float> in,
                           std::span<float> out, bool log = false);

}  // namespace npu::ref
