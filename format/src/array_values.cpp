// Element values of an NpyArray as int64 / double (array_values.h).
#include "npu/format/array_values.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "npu/isa/half.h"

namespace npu::format {

namespace {

template <typename T>
T load(const NpyArray& a, int64_t i) {
  T v;
  std::memcpy(&v, a.data.data() + static_cast<size_t>(i) * sizeof(T), sizeof(T));
  return v;
}

template <typename T>
void store(NpyArray& a, int64_t i, T v) {
  std::memcpy(a.data.data() + static_cast<size_t>(i) * sizeof(T), &v, sizeof(T));
}

// double -> int64 without UB: NaN gives 0, out-of-range saturates.
int64_t double_to_int(double v) {
  if (std::isnan(v)) return 0;
  if (v >= 9.2233720368547758e18) return INT64_MAX;
  if (v <= -9.2233720368547758e18) return INT64_MIN;
  return static_cast<int64_t>(v);
}

// An integer store wraps (two's complement) into the narrower type.
template <typename T>
T wrap(int64_t v) {
  return static_cast<T>(static_cast<uint64_t>(v));
}

}  // namespace

int64_t int_at(const NpyArray& a, int64_t i) {
  switch (a.dtype) {
    case DType::kBool:
      return load<uint8_t>(a, i) != 0;
    case DType::kInt8:
      return load<int8_t>(a, i);
    case DType::kUint8:
      return load<uint8_t>(a, i);
    case DType::kInt16:
      return load<int16_t>(a, i);
    case DType::kUint16:
      return load<uint16_t>(a, i);
    case DType::kInt32:
      return load<int32_t>(a, i);
    case DType::kUint32:
      return load<uint32_t>(a, i);
    case DType::kInt64:
      return load<int64_t>(a, i);
    case DType::kUint64:
      return static_cast<int64_t>(load<uint64_t>(a, i));
    case DType::kFloat32:
      return double_to_int(load<float>(a, i));
    case DType::kFloat64:
      return double_to_int(load<double>(a, i));
    case DType::kFloat16:
      return double_to_int(isa::fp16_to_fp32(load<uint16_t>(a, i)));
  }
  return 0;
}

double number_at(const NpyArray& a, int64_t i) {
  switch (a.dtype) {
    case DType::kFloat32:
      return load<float>(a, i);
    case DType::kFloat64:
      return load<double>(a, i);
    case DType::kFloat16:
      return isa::fp16_to_fp32(load<uint16_t>(a, i));
    case DType::kUint64:
      return static_cast<double>(load<uint64_t>(a, i));
    default:
      return static_cast<double>(int_at(a, i));
  }
}

std::vector<int64_t> to_ints(const NpyArray& a) {
  std::vector<int64_t> out(static_cast<size_t>(a.num_elements()));
  for (size_t i = 0; i < out.size(); ++i) out[i] = int_at(a, static_cast<int64_t>(i));
  return out;
}

std::vector<float> to_floats(const NpyArray& a) {
  std::vector<float> out(static_cast<size_t>(a.num_elements()));
  for (size_t i = 0; i < out.size(); ++i) {
    out[i] = static_cast<float>(number_at(a, static_cast<int64_t>(i)));
  }
  return out;
}

void set_int(NpyArray& a, int64_t i, int64_t v) {
  switch (a.dtype) {
    case DType::kBool:
      return store<uint8_t>(a, i, v != 0 ? 1 : 0);
    case DType::kInt8:
      return store(a, i, wrap<int8_t>(v));
    case DType::kUint8:
      return store(a, i, wrap<uint8_t>(v));
    case DType::kInt16:
      return store(a, i, wrap<int16_t>(v));
    case DType::kUint16:
      return store(a, i, wrap<uint16_t>(v));
    case DType::kInt32:
      return store(a, i, wrap<int32_t>(v));
    case DType::kUint32:
      return store(a, i, wrap<uint32_t>(v));
    case DType::kInt64:
      return store(a, i, v);
    case DType::kUint64:
      return store(a, i, static_cast<uint64_t>(v));
    case DType::kFloat32:
      return store(a, i, static_cast<float>(v));
    case DType::kFloat64:
      return store(a, i, static_cast<double>(v));
    case DType::kFloat16:
      return store(a, i, isa::fp32_to_fp16(static_cast<float>(v)));
  }
}

void set_number(NpyArray& a, int64_t i, double v) {
  switch (a.dtype) {
    case DType::kFloat32:
      return store(a, i, static_cast<float>(v));
    case DType::kFloat64:
      return store(a, i, v);
    case DType::kFloat16:  // via float32 (double rounding differs from direct only in ties)
      return store(a, i, isa::fp32_to_fp16(static_cast<float>(v)));
    case DType::kBool:
      return store<uint8_t>(a, i, v != 0.0 ? 1 : 0);
    default:
      return set_int(a, i, double_to_int(v));
  }
}

NpyArray from_ints(DType t, std::vector<int64_t> shape, std::span<const int64_t> values) {
  NpyArray a = NpyArray::zeros(t, std::move(shape));
  const int64_t n = std::min<int64_t>(a.num_elements(), static_cast<int64_t>(values.size()));
  for (int64_t i = 0; i < n; ++i) set_int(a, i, values[static_cast<size_t>(i)]);
  return a;
}

}  // namespace npu::format
