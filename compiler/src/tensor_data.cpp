// Element access and conversions of TensorData, the constant payload of the IR.
#include "npu/compiler/tensor_data.h"

#include <cmath>

namespace npu::compiler {

size_t dtype_size(DType t) {
  switch (t) {
    case DType::kFloat32:
    case DType::kInt32:
      return 4;
    case DType::kInt8:
    case DType::kUInt8:
    case DType::kBool:
      return 1;
    case DType::kInt64:
    case DType::kFloat64:
      return 8;
    case DType::kUndefined:
      break;
  }
  return 0;
}

const char* dtype_name(DType t) {
  switch (t) {
    case DType::kFloat32:
      return "float32";
    case DType::kUInt8:
      return "uint8";
    case DType::kInt8:
      return "int8";
    case DType::kInt32:
      return "int32";
    case DType::kInt64:
      return "int64";
    case DType::kBool:
      return "bool";
    case DType::kFloat64:
      return "float64";
    case DType::kUndefined:
      break;
  }
  return "undefined";
}

DType dtype_from_onnx(int onnx_type) {
  switch (onnx_type) {
    case 1:
      return DType::kFloat32;
    case 2:
      return DType::kUInt8;
    case 3:
      return DType::kInt8;
    case 6:
      return DType::kInt32;
    case 7:
      return DType::kInt64;
    case 9:
      return DType::kBool;
    case 11:
      return DType::kFloat64;
    default:
      return DType::kUndefined;
  }
}

int dtype_to_onnx(DType t) {
  switch (t) {
    case DType::kFloat32:
      return 1;
    case DType::kUInt8:
      return 2;
    case DType::kInt8:
      return 3;
    case DType::kInt32:
      return 6;
    case DType::kInt64:
      return 7;
    case DType::kBool:
      return 9;
    case DType::kFloat64:
      return 11;
    case DType::kUndefined:
      break;
  }
  return 0;
}

int64_t element_count(std::span<const int64_t> dims) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0 || (d != 0 && n > INT64_MAX / d)) return -1;
    n *= d;
  }
  return n;
}

int64_t TensorData::element_count() const {
  return compiler::element_count(dims);
}

namespace {
template <typename T>
T load(const std::vector<uint8_t>& b, int64_t i) {
  T v;
  std::memcpy(&v, b.data() + static_cast<size_t>(i) * sizeof(T), sizeof(T));
  return v;
}
template <typename T>
void store(std::vector<uint8_t>& b, int64_t i, T v) {
  std::memcpy(b.data() + static_cast<size_t>(i) * sizeof(T), &v, sizeof(T));
}
// double -> int64 without UB: NaN gives 0, out-of-range saturates.
int64_t double_to_int(double v) {
  if (std::isnan(v)) return 0;
  if (v >= 9.2233720368547758e18) return INT64_MAX;
  if (v <= -9.2233720368547758e18) return INT64_MIN;
  return static_cast<int64_t>(v);
}
}  // namespace

int64_t TensorData::as_int(int64_t i) const {
  switch (dtype) {
    case DType::kFloat32:
      return double_to_int(load<float>(bytes, i));
    case DType::kFloat64:
      return double_to_int(load<double>(bytes, i));
    case DType::kUInt8:
      return load<uint8_t>(bytes, i);
    case DType::kInt8:
      return load<int8_t>(bytes, i);
    case DType::kBool:
      return load<uint8_t>(bytes, i) != 0;
    case DType::kInt32:
      return load<int32_t>(bytes, i);
    case DType::kInt64:
      return load<int64_t>(bytes, i);
    case DType::kUndefined:
      break;
  }
  return 0;
}

double TensorData::as_double(int64_t i) const {
  switch (dtype) {
    case DType::kFloat32:
      return load<float>(bytes, i);
    case DType::kFloat64:
      return load<double>(bytes, i);
    default:
      return static_cast<double>(as_int(i));
  }
}

std::vector<int64_t> TensorData::to_ints() const {
  std::vector<int64_t> out(static_cast<size_t>(std::max<int64_t>(element_count(), 0)));
  for (size_t i = 0; i < out.size(); ++i) out[i] = as_int(static_cast<int64_t>(i));
  return out;
}

std::vector<float> TensorData::to_floats() const {
  std::vector<float> out(static_cast<size_t>(std::max<int64_t>(element_count(), 0)));
  for (size_t i = 0; i < out.size(); ++i) {
    out[i] = static_cast<float>(as_double(static_cast<int64_t>(i)));
  }
  return out;
}

void TensorData::set_int(int64_t i, int64_t v) {
  switch (dtype) {
    case DType::kFloat32:
      return store<float>(bytes, i, static_cast<float>(v));
    case DType::kFloat64:
      return store<double>(bytes, i, static_cast<double>(v));
    case DType::kUInt8:  // ONNX casts between integer types wrap (two's complement)
      return store<uint8_t>(bytes, i, static_cast<uint8_t>(static_cast<uint64_t>(v)));
    case DType::kInt8:
      return store<int8_t>(bytes, i, static_cast<int8_t>(static_cast<uint64_t>(v)));
    case DType::kBool:
      return store<uint8_t>(bytes, i, v != 0 ? 1 : 0);
    case DType::kInt32:
      return store<int32_t>(bytes, i, static_cast<int32_t>(static_cast<uint64_t>(v)));
    case DType::kInt64:
      return store<int64_t>(bytes, i, v);
    case DType::kUndefined:
      break;
  }
}

void TensorData::set_double(int64_t i, double v) {
  switch (dtype) {
    case DType::kFloat32:
      return store<float>(bytes, i, static_cast<float>(v));
    case DType::kFloat64:
      return store<double>(bytes, i, v);
    case DType::kBool:
      return store<uint8_t>(bytes, i, v != 0.0 ? 1 : 0);
    default:
      return set_int(i, double_to_int(v));
  }
}

TensorData TensorData::zeros(DType dtype, std::vector<int64_t> dims) {
  TensorData t;
  t.dtype = dtype;
  t.dims = std::move(dims);
  t.bytes.assign(static_cast<size_t>(std::max<int64_t>(t.element_count(), 0)) * dtype_size(dtype),
                 0);
  return t;
}

TensorData TensorData::from_floats(std::vector<int64_t> dims, std::span<const float> values) {
  TensorData t = zeros(DType::kFloat32, std::move(dims));
  const size_t n = std::min(t.bytes.size(), values.size_bytes());
  if (n > 0) std::memcpy(t.bytes.data(), values.data(), n);
  return t;
}

TensorData TensorData::from_ints(DType dtype, std::vector<int64_t> dims,
                                 std::span<const int64_t> values) {
  TensorData t = zeros(dtype, std::move(dims));
  const int64_t n = std::min<int64_t>(t.element_count(), static_cast<int64_t>(values.size()));
  for (int64_t i = 0; i < n; ++i) t.set_int(i, values[static_cast<size_t>(i)]);
  return t;
}

}  // namespace npu::compiler
