// Private: conversions between the IR and ONNX protobufs, shared by the importer and the
// shape-inference pass (which round-trips the graph through ONNX's own shape inference).
#pragma once

#include <onnx/onnx_pb.h>

#include <optional>
#include <span>
#include <string>

#include "npu/compiler/graph.h"
#include "npu/expected.h"

namespace npu::compiler::detail {

/// The element type of an ONNX TensorProto.DataType value, or nullopt when the compiler does
/// not accept it. This table is the one rule for the IR's element types: float32 (FLOAT),
/// float16 (FLOAT16), float64 (DOUBLE), int8, uint8, int16, uint16, int32, uint32, int64,
/// uint64 and bool (the device computes on float32, float16, int8, uint8 and int32; the others
/// stay on the host); bfloat16, string, complex, ... are refused at import ("unsupported
/// element type BFLOAT16").
std::optional<DType> dtype_from_onnx(int onnx_type);
/// The TensorProto.DataType of `t`, or 0 (UNDEFINED) when the compiler does not accept it.
int dtype_to_onnx(DType t);
/// True for the element types the IR holds (dtype_to_onnx(t) != 0).
inline bool accepted_dtype(DType t) {
  return dtype_to_onnx(t) != 0;
}

/// An initializer or tensor attribute as an NpyArray; `what` names it in errors. `raw_data`,
/// when given, stands for the tensor's raw_data field (bytes that split_weights() cut out of
/// the proto; they are copied, not kept).
Expected<NpyArray> tensor_from_proto(
    const onnx::TensorProto& t, const std::string& what,
    std::optional<std::span<const std::byte>> raw_data = std::nullopt);
/// An array of an accepted dtype as a TensorProto (raw_data) named `name`.
onnx::TensorProto tensor_to_proto(const NpyArray& t, const std::string& name);
/// Element type and shape of a TypeProto (tensor types only; `what` names it in errors).
Expected<void> type_from_proto(const onnx::TypeProto& type, const std::string& what, Value& v);
/// A tensor TypeProto of v (shape left out when unknown).
onnx::TypeProto type_to_proto(const Value& v);
/// The graph as a ModelProto (constants as initializers, known types as value_info). Fused
/// activations and placements are not represented. A constant of more than
/// `max_constant_bytes` that is not int64 becomes a typed graph input without data: for shape
/// inference, which reads the values of shape operands (small int64 tensors, scales) only,
/// and would otherwise copy every weight (ResNet-50: 100 MB).
onnx::ModelProto export_onnx(const Graph& g, size_t max_constant_bytes = SIZE_MAX);
/// One line: newlines and runs of spaces collapsed, trailing period dropped.
std::string one_line(std::string s);
/// `e` prefixed with "SOURCE: ", control characters (from names in the model file) made '?'
/// so the message stays one line. Both importers' errors end here.
Error source_error(const std::string& source, const Error& e);

}  // namespace npu::compiler::detail
