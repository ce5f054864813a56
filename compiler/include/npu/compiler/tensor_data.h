// TensorData: the bytes of a constant tensor (an ONNX initializer, a Constant node's value, a
// folded result or a weight rewritten by a pass) with its element type and dims. Values own
// their data through shared_ptr<const TensorData>, so passes that rewrite a weight make a new
// TensorData instead of mutating one that another value may share.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "npu/expected.h"

namespace npu::compiler {

/// Element types the IR represents (ONNX TensorProto.DataType values they come from in
/// brackets). Other ONNX types (float16, string, complex, ...) are rejected at import.
enum class DType : uint8_t {
  kUndefined = 0,
  kFloat32,  // FLOAT (1)
  kUInt8,    // UINT8 (2)
  kInt8,     // INT8 (3)
  kInt32,    // INT32 (6)
  kInt64,    // INT64 (7)
  kBool,     // BOOL (9), one byte per element
  kFloat64,  // DOUBLE (11)
};

/// Bytes per element (0 for kUndefined).
size_t dtype_size(DType t);
/// "float32", "int8", ... ("undefined" for kUndefined).
const char* dtype_name(DType t);
/// The DType of an ONNX TensorProto.DataType value, or kUndefined if the IR does not have it.
DType dtype_from_onnx(int onnx_type);
/// The ONNX TensorProto.DataType value of `t` (0 for kUndefined).
int dtype_to_onnx(DType t);
/// True for the integer types and bool.
inline bool dtype_is_integral(DType t) {
  return t != DType::kFloat32 && t != DType::kFloat64 && t != DType::kUndefined;
}

/// A dense, row-major constant tensor. Dims are static; a scalar has no dims.
struct TensorData {
  DType dtype = DType::kUndefined;
  std::vector<int64_t> dims;
  std::vector<uint8_t> bytes;  // element_count() * dtype_size(dtype) bytes, little-endian

  int64_t element_count() const;
  bool well_formed() const { return bytes.size() == element_count() * dtype_size(dtype); }

  /// Element i converted to int64 / double (floats truncate toward zero in as_int).
  int64_t as_int(int64_t i) const;
  double as_double(int64_t i) const;
  /// All elements converted.
  std::vector<int64_t> to_ints() const;
  std::vector<float> to_floats() const;

  /// Sets element i from an int64 / double (converted to dtype; bool is != 0).
  void set_int(int64_t i, int64_t v);
  void set_double(int64_t i, double v);

  /// Typed read-only view; T must match dtype's size (checked by the caller).
  template <typename T>
  std::span<const T> view() const {
    return {reinterpret_cast<const T*>(bytes.data()), bytes.size() / sizeof(T)};
  }

  /// A zero-filled tensor.
  static TensorData zeros(DType dtype, std::vector<int64_t> dims);
  /// A tensor of the given values.
  static TensorData from_floats(std::vector<int64_t> dims, std::span<const float> values);
  static TensorData from_ints(DType dtype, std::vector<int64_t> dims,
                              std::span<const int64_t> values);
};

/// Elements of a static shape (1 for a scalar); -1 if a dim is negative or the product
/// overflows.
int64_t element_count(std::span<const int64_t> dims);

}  // namespace npu::compiler
