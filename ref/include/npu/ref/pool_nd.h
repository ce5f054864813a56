// Reference N-D pooling in ONNX layout (MaxPool, AveragePool, GlobalMaxPool,
// GlobalAveragePool): planes of [in_0][in_1]...[in_{r-1}] elements, any spatial rank, with
// strides, dilations, asymmetric padding and the max's argmax. The device's POOL (pool.h) is
// the 2-D HWC special case without dilation; the window rules here are the same: positions
// outside the input are skipped, and with count_include_pad the average divides by the number
// of positions inside the padded input (as PyTorch and ONNX's reference).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "npu/expected.h"
#include "npu_isa.h"

namespace npu::ref {

/// Geometry: input [planes][in...], output [planes][out...], both contiguous; every vector
/// has the spatial rank. The window of output index o along dim d reads input positions
/// o * stride[d] - pad_begin[d] + k * dilation[d] for k < kernel[d].
struct PoolNdShape {
  uint64_t planes = 1;
  std::vector<int64_t> in, out, kernel, stride, dilation, pad_begin, pad_end;
  bool count_include_pad = false;    // AVG: padded positions count in the divisor
  bool column_major_argmax = false;  // argmax spatial offsets column-major (storage_order 1)
};

/// Checks equal ranks >= 1, positive dims, kernels, strides and dilations, non-negative pads,
/// and that the spans hold planes * prod(in) / planes * prod(out) elements.
Expected<void> check_pool_nd(const PoolNdShape& s, size_t in_size, size_t out_size);

/// kind NPU_POOL_MAX: the largest value of the window (the first one in row-major window
/// order; NaN propagates) and, when `argmax` is non-empty (same size as out), its index
/// plane * prod(in) + spatial offset. kind NPU_POOL_AVG: fp32 sum in window order divided by
/// the count (float), or for int8/uint8 div_round_half_even of the exact sum. A window with no
/// input position gives 0 (argmax -1). T: float, int8_t or uint8_t.
template <typename T>
Expected<void> pool_nd(uint8_t kind, const PoolNdShape& s, std::span<const T> in, std::span<T> out,
                       std::span<int64_t> argmax = {});

extern template Expected<void> pool_nd<float>(uint8_t, const PoolNdShape&, std::span<const float>,
                                              std::span<float>, std::span<int64_t>);
extern template Expected<void> pool_nd<int8_t>(uint8_t, const PoolNdShape&, std::span<const int8_t>,
                                               std::span<int8_t>, std::span<int64_t>);
extern template Expected<void> pool_nd<uint8_t>(uint8_t, const PoolNdShape&,
                                                std::span<const uint8_t>, std::span<uint8_t>,
                                                std::span<int64_t>);

}  // namespace npu::ref
