// Private: the data-movement, shape and comparison host ops (Concat, Pad, Squeeze, Unsqueeze,
// Gather, Slice, Split, Cast, Shape, Size, Range, ConstantOfShape, Expand, Where, Equal,
// Less, Greater, Not, Floor, Ceil, ...), kept apart from the arithmetic ones in
// host_ops.cpp. run_host_op() (npu/host_ops.h) looks an op type up in both tables.
#pragma once

#include <nlohmann/json.hpp>

#include <functional>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "npu/expected.h"
#include "npu/format/npy.h"

namespace npu::detail {

/// One host op: ONNX attributes as a JSON object, inputs in ONNX order (nullptr = omitted
/// optional input), the number of outputs the node has. Errors start with the op type.
using HostOpFn = std::function<Expected<std::vector<format::NpyArray>>(
    std::string_view op_type, const nlohmann::json& attrs,
    std::span<const format::NpyArray* const> inputs, size_t num_outputs)>;

/// The table of tensor/shape host ops, by ONNX op type.
const std::map<std::string, HostOpFn, std::less<>>& tensor_host_ops();

}  // namespace npu::detail
