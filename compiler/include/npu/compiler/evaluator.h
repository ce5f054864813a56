// Host evaluation of single nodes on constant tensors, used by constant folding (and usable
// by a host fallback for shape arithmetic): elementwise math with NumPy broadcasting (fp32
// through the reference scalar rules of npu/ref/scalar.h), Cast, Where, comparisons, and the
// data-movement ops (Reshape, Flatten, Squeeze, Unsqueeze, Concat, Gather, Slice, Split,
// Transpose, Expand, ConstantOfShape, Range). Stateless and thread-safe.
#pragma once

#include <span>
#include <vector>

#include "npu/compiler/graph.h"
#include "npu/compiler/tensor_data.h"
#include "npu/expected.h"

namespace npu::compiler {

/// True if evaluate_node() implements `n`'s op type.
bool can_evaluate(const Node& n);

/// Evaluates `n` on `inputs` (one per node input; nullptr for an omitted optional input).
/// Returns one tensor per node output, or an error naming the node (ENOTSUP if the op is not
/// implemented, EINVAL for invalid operands).
Expected<std::vector<TensorData>> evaluate_node(const Node& n,
                                                std::span<const TensorData* const> inputs);

/// NumPy broadcast of two static shapes, or an error if they do not broadcast.
Expected<std::vector<int64_t>> broadcast_dims(const std::vector<int64_t>& a,
                                              const std::vector<int64_t>& b);

}  // namespace npu::compiler
