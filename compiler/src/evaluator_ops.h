// Private: the data-movement half of the evaluator (evaluator_shape_ops.cpp); each returns
// the node's outputs or an error message (without the node label, which the caller adds).
#pragma once

#include <span>
#include <vector>

#include "npu/compiler/graph.h"

namespace npu::compiler::detail {

using Inputs = std::span<const TensorData* const>;

/// True if `op` is one of the data-movement ops below.
bool is_shape_op(const std::string& op);
Expected<std::vector<TensorData>> eval_shape_op(const Node& n, Inputs in);

/// Output index -> input offset for broadcasting `in_dims` to `out_dims` (right-aligned).
std::vector<int64_t> broadcast_offsets(const std::vector<int64_t>& in_dims,
                                       const std::vector<int64_t>& out_dims);

}  // namespace npu::compiler::detail
