// TensorProto files and TensorData <-> NpyArray. The decoding of a TensorProto is the
// importer's (detail::tensor_from_proto), so an input file and an initializer are read by the
// same code.
#include "npu/compiler/onnx_tensor.h"

#include <onnx/onnx_pb.h>

#include <cstring>
#include <fstream>
#include <iterator>

#include "onnx_proto.h"

namespace npu::compiler {

std::optional<format::DType> to_format_dtype(DType t) {
  switch (t) {
    case DType::kFloat32:
      return format::DType::kFloat32;
    case DType::kUInt8:
      return format::DType::kUint8;
    case DType::kInt8:
      return format::DType::kInt8;
    case DType::kInt32:
      return format::DType::kInt32;
    case DType::kInt64:
      return format::DType::kInt64;
    case DType::kBool:
      return format::DType::kBool;
    case DType::kFloat64:
      return format::DType::kFloat64;
    case DType::kUndefined:
      break;
  }
  return std::nullopt;
}

DType from_format_dtype(format::DType t) {
  switch (t) {
    case format::DType::kFloat32:
      return DType::kFloat32;
    case format::DType::kUint8:
      return DType::kUInt8;
    case format::DType::kInt8:
      return DType::kInt8;
    case format::DType::kInt32:
      return DType::kInt32;
    case format::DType::kInt64:
      return DType::kInt64;
    case format::DType::kBool:
      return DType::kBool;
    case format::DType::kFloat64:
      return DType::kFloat64;
    default:
      break;
  }
  return DType::kUndefined;
}

format::NpyArray to_npy(const TensorData& t) {
  format::NpyArray a;
  a.dtype = to_format_dtype(t.dtype).value_or(format::DType::kUint8);
  a.shape = t.dims;
  a.data.resize(t.bytes.size());
  if (!t.bytes.empty()) std::memcpy(a.data.data(), t.bytes.data(), t.bytes.size());
  return a;
}

Expected<TensorData> from_npy(const format::NpyArray& a, std::string_view name) {
  TensorData t;
  t.dtype = from_format_dtype(a.dtype);
  if (t.dtype == DType::kUndefined) {
    return make_error(
        ENOTSUP, std::string(name) + ": unsupported element type " + format::dtype_name(a.dtype));
  }
  t.dims = a.shape;
  const int64_t count = t.element_count();
  if (count < 0 || a.data.size() != static_cast<size_t>(count) * dtype_size(t.dtype)) {
    return make_error(EINVAL, std::string(name) + ": " + std::to_string(a.data.size()) +
                                  " data bytes do not match the shape");
  }
  t.bytes.resize(a.data.size());
  if (!a.data.empty()) std::memcpy(t.bytes.data(), a.data.data(), a.data.size());
  return t;
}

Expected<TensorData> read_tensor_pb_data(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return make_error(ENOENT, path + ": cannot open file");
  const std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (f.bad()) return make_error(EIO, path + ": read failed");
  onnx::TensorProto p;
  if (!p.ParseFromString(bytes)) {
    return make_error(EINVAL, path + ": not an onnx tensor (protobuf parse failed)");
  }
  if (p.data_type() == onnx::TensorProto::UNDEFINED) {
    return make_error(EINVAL, path + ": not an onnx tensor (no element type)");
  }
  return detail::tensor_from_proto(p, path);
}

Expected<format::NpyArray> read_tensor_pb(const std::string& path) {
  auto t = read_tensor_pb_data(path);
  if (!t) return t.error();
  return to_npy(*t);
}

}  // namespace npu::compiler
