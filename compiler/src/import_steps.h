// Private: the steps of ONNX import after the protobuf-level checks (onnx_import.cpp runs
// them in order): building the IR, rewriting legacy attribute forms, quantization info.
#pragma once

#include <onnx/onnx_pb.h>

#include <map>
#include <span>
#include <string>
#include <unordered_map>

#include "npu/compiler/graph.h"
#include "npu/expected.h"

namespace npu::compiler::detail {

/// The raw_data that split_weights() cut from initializers, by initializer (valid while the
/// model bytes are; see onnx_weights.h).
using CutWeights = std::unordered_map<const onnx::TensorProto*, std::span<const std::byte>>;

/// The IR of a checked, shape-inferred GraphProto (Constant nodes become constant values).
/// An initializer in `cut` takes its data from there (copied into the IR).
Expected<Graph> build_graph(const onnx::GraphProto& g, const std::map<std::string, int64_t>& opsets,
                            const CutWeights& cut = {});
/// Moves attributes that later opsets turned into inputs (Clip<11 min/max, Pad<11 pads/value,
/// Slice<10 starts/ends/axes, Squeeze/Unsqueeze/Split/ReduceSum<13 axes/split) to constant
/// inputs, so passes and lowering see one form.
Expected<void> upgrade_legacy_forms(Graph& g);
/// Sets Value::quant on the quantized side of QuantizeLinear/DequantizeLinear/QLinear* nodes
/// whose scales and zero points are constants.
void annotate_quantization(Graph& g);

}  // namespace npu::compiler::detail
