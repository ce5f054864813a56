// onnx_tensor: serialized ONNX TensorProto files (the input_N.pb / output_N.pb of ONNX backend
// tests) and the conversions between the IR's constant payload (TensorData) and the runtime's
// arrays (format::NpyArray, what npu::Model and .npy files hold). The element types are the
// IR's: float32, float64, int8, uint8, int32, int64, bool; anything else is an error that
// names the file or array and the type. Plain functions, no shared state.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "npu/compiler/tensor_data.h"
#include "npu/expected.h"
#include "npu/format/dtype.h"
#include "npu/format/npy.h"

namespace npu::compiler {

/// Reads a serialized onnx::TensorProto (raw_data or typed fields) as TensorData; errors name
/// the file ("x.pb: unsupported element type FLOAT16", "x.pb: not an onnx tensor (protobuf
/// parse failed)").
[[nodiscard]] Expected<TensorData> read_tensor_pb_data(const std::string& path);
/// The same, as an NpyArray (what npu::Model::run takes and returns).
[[nodiscard]] Expected<format::NpyArray> read_tensor_pb(const std::string& path);

/// The runtime dtype of an IR dtype (kUndefined has none).
std::optional<format::DType> to_format_dtype(DType t);
/// The IR dtype of a runtime dtype, or kUndefined (float16, int16, uint16, uint32, uint64).
DType from_format_dtype(format::DType t);

/// A TensorData as an NpyArray (same dims and bytes). Precondition: t.dtype is defined.
format::NpyArray to_npy(const TensorData& t);
/// An NpyArray as TensorData; `name` prefixes the error for dtypes outside the IR or a data
/// size that does not match the shape.
[[nodiscard]] Expected<TensorData> from_npy(const format::NpyArray& a,
                                            std::string_view name = "array");

}  // namespace npu::compiler
