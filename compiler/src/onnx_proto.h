// Private: conversions between the IR and ONNX protobufs, shared by the importer and the
// shape-inference pass (which round-trips the graph through ONNX's own shape inference).
#pragma once

#include <onnx/onnx_pb.h>

#include <string>

#include "npu/compiler/graph.h"
#include "npu/expected.h"

namespace npu::compiler::detail {

/// An initializer or tensor attribute as TensorData; `what` names it in errors.
Expected<TensorData> tensor_from_proto(const onnx::TensorProto& t, const std::string& what);
/// TensorData as a TensorProto (raw_data) named `name`.
onnx::TensorProto tensor_to_proto(const TensorData& t, const std::string& name);
/// Element type and shape of a TypeProto (tensor types only; `what` names it in errors).
Expected<void> type_from_proto(const onnx::TypeProto& type, const std::string& what, Value& v);
/// A tensor TypeProto of v (shape left out when unknown).
onnx::TypeProto type_to_proto(const Value& v);
/// The graph as a ModelProto (constants as initializers, known types as value_info). Fused
/// activations and placements are not represented.
onnx::ModelProto export_onnx(const Graph& g);
/// One line: newlines and runs of spaces collapsed, trailing period dropped.
std::string one_line(std::string s);

}  // namespace npu::compiler::detail
