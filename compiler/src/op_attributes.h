// Private: a node's attributes in the operator library's form (a JSON object text with the
// ONNX attribute names, natural JSON types, TENSOR attributes as {"dtype", "dims", "values"}
// and "_opset": the node's opset; npu/ops/ops.h). Host segments of a package carry this text
// and constant folding passes it to npu::ops::run(), so both see the same attributes.
#pragma once

#include <string>

#include "npu/compiler/graph.h"

namespace npu::compiler::detail {

/// The attributes of `n` as the operator library reads them.
std::string op_attributes(const Node& n);

}  // namespace npu::compiler::detail
