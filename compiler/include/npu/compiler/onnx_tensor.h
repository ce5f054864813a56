// onnx_tensor: serialized ONNX TensorProto files (the input_N.pb / output_N.pb of ONNX backend
// tests) read as the stack's tensor type, format::NpyArray (what npu::Model and .npy files
// hold). The element types are the ones ONNX import accepts: float32, float64, int8, uint8,
// int32, int64, bool; anything else is an error that names the file and the type. Plain
// functions, no shared state.
#pragma once

#include <string>

#include "npu/expected.h"
#include "npu/format/npy.h"

namespace npu::compiler {

/// Reads a serialized onnx::TensorProto (raw_data or typed fields); errors name the file
/// ("x.pb: unsupported element type FLOAT16", "x.pb: not an onnx tensor (protobuf parse
/// failed)").
[[nodiscard]] Expected<format::NpyArray> read_tensor_pb(const std::string& path);

}  // namespace npu::compiler
