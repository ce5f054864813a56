// TensorProto files as NpyArrays. The decoding of a TensorProto is the importer's
// (detail::tensor_from_proto), so an input file and an initializer are read by the same code.
#include "npu/compiler/onnx_tensor.h"

#include <onnx/onnx_pb.h>

#include <fstream>
#include <iterator>

#include "onnx_proto.h"

namespace npu::compiler {

Expected<format::NpyArray> read_tensor_pb(const std::string& path) {
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

}  // namespace npu::compiler
