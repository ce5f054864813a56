// Private: the shapes of an ONNX MatMul (MatMul, MatMulInteger, QLinearMatMul): 1-D operands
// promoted, batch dims broadcast, the work checked against the call's limit. Pure.
#pragma once

#include <cstdint>
#include <vector>

#include "op_call.h"

namespace npu::ops::detail {

/// ONNX MatMul shapes: 1-D operands promoted (and their unit dim dropped from the output),
/// batch dims broadcast.
struct MatmulGeometry {
  int64_t m = 0, k = 0, n = 0;
  Shape batch;                     // broadcast batch dims
  std::vector<int64_t> a_strides;  // batch strides of A / B seen as `batch` (in matrices)
  std::vector<int64_t> b_strides;
  Shape out_shape;
};
Expected<MatmulGeometry> matmul_geometry(const OpCall& c, const Shape& a, const Shape& b);

}  // namespace npu::ops::detail
