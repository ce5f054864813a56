// DType: the element types of tensors in .npy files and model packages, with their byte size,
// their package name ("float32") and their NumPy descr ("<f4"). One table shared by the .npy
// reader/writer, the package metadata and the runtime.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace npu::format {

enum class DType : uint8_t {
  kBool,
  kInt8,
  kUint8,
  kInt16,
  kUint16,
  kInt32,
  kUint32,
  kInt64,
  kUint64,
  kFloat16,
  kFloat32,
  kFloat64,
};

/// Bytes of one element.
size_t dtype_size(DType t);
/// Lowercase name used in package metadata: "bool", "int8", ..., "float32", "float64".
const char* dtype_name(DType t);
/// The dtype with that name (exact, lowercase), or nullopt.
std::optional<DType> dtype_from_name(std::string_view name);
/// The little-endian NumPy descr NumPy itself writes: "|b1", "|i1", "|u1", "<i2", ..., "<f8".
const char* npy_descr(DType t);
/// The ISA element type (NPU_DTYPE_*) of a dtype the device computes on, or 0 for none.
uint8_t isa_dtype(DType t);
/// True for the floating-point types (float16, float32, float64); false for bool and the
/// integers.
bool dtype_is_float(DType t);

/// The DType of a C++ element type (bool, int8_t..uint64_t, float, double).
template <typename T>
constexpr DType dtype_of();
template <>
constexpr DType dtype_of<bool>() {
  return DType::kBool;
}
template <>
constexpr DType dtype_of<int8_t>() {
  return DType::kInt8;
}
template <>
constexpr DType dtype_of<uint8_t>() {
  return DType::kUint8;
}
template <>
constexpr DType dtype_of<int16_t>() {
  return DType::kInt16;
}
template <>
constexpr DType dtype_of<uint16_t>() {
  return DType::kUint16;
}
template <>
constexpr DType dtype_of<int32_t>() {
  return DType::kInt32;
}
template <>
constexpr DType dtype_of<uint32_t>() {
  return DType::kUint32;
}
template <>
constexpr DType dtype_of<int64_t>() {
  return DType::kInt64;
}
template <>
constexpr DType dtype_of<uint64_t>() {
  return DType::kUint64;
}
template <>
constexpr DType dtype_of<float>() {
  return DType::kFloat32;
}
template <>
constexpr DType dtype_of<double>() {
  return DType::kFloat64;
}

}  // namespace npu::format
